//! The latency percentile spectrum, as HdrHistogram plots it: latency against percentile on a
//! log scale of 1/(1 − p), so that p50, p90, p99, p99.9 … are evenly spaced and the tail is as
//! visible as the median.

use hdrhistogram::Histogram;

use crate::record::series::us_to_ms;

/// Points of the spectrum per decade of 1/(1 − p).
const POINTS_PER_DECADE: u32 = 24;

/// One point of the spectrum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpectrumPoint {
    /// The percentile as a fraction, 0–1.
    pub quantile: f64,
    /// 1/(1 − quantile): the x coordinate (1 = p0, 10 = p90, 100 = p99, …).
    pub x: f64,
    /// Latency at that percentile, ms.
    pub latency_ms: f64,
}

/// The spectrum of a histogram of microseconds, from p0 up to the highest percentile the count
/// supports (1/(1 − p) ≤ number of values, so no point is extrapolated), ending with the maximum.
/// Empty for an empty histogram.
pub fn spectrum(h: &Histogram<u64>) -> Vec<SpectrumPoint> {
    if h.is_empty() {
        return Vec::new();
    }
    let x_max = (h.len() as f64).max(10.0);
    let mut points = Vec::new();
    let mut i = 0u32;
    loop {
        let x = 10f64.powf(f64::from(i) / f64::from(POINTS_PER_DECADE));
        if x >= x_max {
            break;
        }
        let quantile = 1.0 - 1.0 / x;
        points.push(SpectrumPoint {
            quantile,
            x,
            latency_ms: us_to_ms(h.highest_equivalent(h.value_at_quantile(quantile))),
        });
        i += 1;
    }
    points.push(SpectrumPoint {
        quantile: 1.0 - 1.0 / x_max,
        x: x_max,
        latency_ms: us_to_ms(h.max()),
    });
    points
}

/// A percentile label for an x of the spectrum: 2 → "50%", 10 → "90%", 1000 → "99.9%".
pub fn percentile_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 1.0 / x);
    if x < 1.0 + 1e-9 {
        return "0%".into();
    }
    // As many decimals as the number of nines needs, at most 5.
    let decimals = (x.log10().round() as i32 - 2).clamp(0, 5) as usize;
    format!("{p:.decimals$}%")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::recorder::new_histogram;

    #[test]
    fn spectrum_spans_the_count_and_ends_at_the_max() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 10).unwrap();
        }
        let s = spectrum(&h);
        assert_eq!(s[0].x, 1.0);
        let last = s.last().unwrap();
        assert_eq!(last.x, 1000.0);
        assert!((last.latency_ms - 10.0).abs() < 0.01, "{last:?}");
        let p90 = s.iter().find(|p| (p.x - 10.0).abs() < 1e-9).unwrap();
        assert!((p90.latency_ms - 9.0).abs() < 0.02, "{p90:?}");
        assert!(s.windows(2).all(|w| w[0].latency_ms <= w[1].latency_ms));
        assert!(spectrum(&new_histogram()).is_empty());
    }

    #[test]
    fn labels() {
        assert_eq!(percentile_label(1.0), "0%");
        assert_eq!(percentile_label(2.0), "50%");
        assert_eq!(percentile_label(10.0), "90%");
        assert_eq!(percentile_label(100.0), "99%");
        assert_eq!(percentile_label(1000.0), "99.9%");
        assert_eq!(percentile_label(10_000.0), "99.99%");
    }
}
