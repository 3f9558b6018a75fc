//! Figures of a histogram as the record writes them: the percentile ladder and the latency
//! buckets (1-2-5, or the run's own bounds).

use hdrhistogram::Histogram;

use super::HistogramError;
use super::model::{Bucket, Percentiles, RunRecord};
use super::series::us_to_ms;

/// Percentile figures of a histogram of microseconds, in milliseconds (see docs/measurement.md,
/// "Latency"): all `None` for an empty histogram.
pub fn percentiles(h: &Histogram<u64>) -> Percentiles {
    if h.is_empty() {
        return Percentiles::default();
    }
    let q = |q: f64| Some(us_to_ms(h.value_at_quantile(q)));
    Percentiles {
        min: Some(us_to_ms(h.min())),
        mean: Some(h.mean() / 1000.0),
        stdev: Some(h.stdev() / 1000.0),
        p10: q(0.10),
        p25: q(0.25),
        p50: q(0.50),
        p75: q(0.75),
        p90: q(0.90),
        p95: q(0.95),
        p99: q(0.99),
        p99_9: q(0.999),
        p99_99: q(0.9999),
        max: Some(us_to_ms(h.max())),
    }
}

/// The 1-2-5 latency buckets spanning the histogram's range, µs upper bounds.
fn bucket_bounds_us(min_us: u64, max_us: u64) -> Vec<u64> {
    let mut bounds = Vec::new();
    let mut decade = 1u64;
    'outer: loop {
        for m in [1, 2, 5] {
            let b = decade * m;
            if b >= min_us {
                bounds.push(b);
            }
            if b >= max_us {
                break 'outer;
            }
        }
        decade = decade.saturating_mul(10);
    }
    bounds
}

/// The latency histogram in buckets (ms bounds), covering every recorded value: 1-2-5 buckets
/// spanning the latencies when `bounds_ms` is empty, else one bucket per bound (ascending)
/// and one above the last (`le_ms: None`), each shown even when empty.
pub fn latency_buckets(h: &Histogram<u64>, bounds_ms: &[f64]) -> Vec<Bucket> {
    if bounds_ms.is_empty() && h.is_empty() {
        return Vec::new();
    }
    let bounds: Vec<u64> = if bounds_ms.is_empty() {
        bucket_bounds_us(h.min(), h.lowest_equivalent(h.max()))
    } else {
        bounds_ms
            .iter()
            .map(|ms| (ms * 1000.0).round() as u64)
            .collect()
    };
    let open = !bounds_ms.is_empty();
    let mut counts = vec![0u64; bounds.len() + usize::from(open)];
    for v in h.iter_recorded() {
        // The bin's lowest value: a recorded 10 000 µs belongs in "≤ 10 ms".
        let value = h.lowest_equivalent(v.value_iterated_to());
        let i = bounds
            .iter()
            .position(|&b| value <= b)
            .unwrap_or(counts.len() - 1);
        counts[i] += v.count_since_last_iteration();
    }
    let les = bounds.into_iter().map(|b| Some(us_to_ms(b)));
    les.chain(open.then_some(None))
        .zip(counts)
        .map(|(le_ms, count)| Bucket { le_ms, count })
        .collect()
}

/// Cuts the record's latency buckets again at `bounds_ms` (ascending; empty: 1-2-5) from its
/// latency histogram, as if the run had asked for them (`volley report --buckets`).
pub fn rebucket(r: &mut RunRecord, bounds_ms: &[f64]) -> Result<(), HistogramError> {
    let h = super::decode_histogram(&r.histograms.latency_us)?;
    r.summary.latency_buckets = latency_buckets(&h, bounds_ms);
    r.config.latency_buckets_ms = bounds_ms.to_vec();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::recorder::new_histogram;

    #[test]
    fn bucket_bounds_cover_the_range() {
        assert_eq!(bucket_bounds_us(150, 900), vec![200, 500, 1000]);
        assert_eq!(bucket_bounds_us(1, 1), vec![1]);
        assert_eq!(bucket_bounds_us(3, 20), vec![5, 10, 20]);
    }

    #[test]
    fn buckets_count_every_value() {
        let mut h = new_histogram();
        for v in [150, 180, 400, 950, 10_000] {
            h.record(v).unwrap();
        }
        let b = latency_buckets(&h, &[]);
        assert_eq!(b.iter().map(|b| b.count).sum::<u64>(), 5);
        assert_eq!(
            b[0],
            Bucket {
                le_ms: Some(0.2),
                count: 2
            }
        );
        assert_eq!(b.last().unwrap().le_ms, Some(10.0));
    }

    #[test]
    fn own_bounds_have_a_bucket_above_the_last() {
        let mut h = new_histogram();
        for v in [10_000, 25_000, 30_000, 600_000] {
            h.record(v).unwrap();
        }
        let b = latency_buckets(&h, &[25.0, 50.0, 100.0, 500.0]);
        let counts: Vec<u64> = b.iter().map(|b| b.count).collect();
        assert_eq!(counts, [2, 1, 0, 0, 1]);
        assert_eq!(b[4].le_ms, None);
        // Asked-for buckets are there even with nothing measured.
        assert_eq!(latency_buckets(&new_histogram(), &[25.0]).len(), 2);
    }

    #[test]
    fn percentiles_of_empty_are_null() {
        let p = percentiles(&new_histogram());
        assert_eq!(p.p50, None);
        let mut h = new_histogram();
        for v in 1..=100u64 {
            h.record(v * 1000).unwrap();
        }
        let p = percentiles(&h);
        // HDR reports a bin's highest equivalent value (3 significant digits).
        assert!((p.p50.unwrap() - 50.0).abs() < 0.05, "{p:?}");
        assert!((p.max.unwrap() - 100.0).abs() < 0.1, "{p:?}");
    }
}
