//! The heavy-tail explanation: a mean latency above the p95 means a few very slow responses carry
//! most of the total time. From the run's latency histogram: the share of responses slower than
//! the p95, and the share of the total latency they carry.

use hdrhistogram::Histogram;

use super::{finding, not_applicable};
use crate::record::decode_histogram;
use crate::record::model::RunRecord;
use crate::record::selfcheck::{SelfCheck, SelfCheckCode, SelfCheckOutcome};

/// The tail above the p95 of a histogram (µs): (p95 µs, share of responses above it, share of
/// the total latency they carry), shares 0–1. "Above" means in a histogram bin above the p95's;
/// each bin's responses count at the bin's middle value, as the histogram's mean does.
fn tail_above_p95(h: &Histogram<u64>) -> (u64, f64, f64) {
    let p95 = h.value_at_quantile(0.95);
    let (mut count, mut time, mut total) = (0u64, 0.0, 0.0);
    for v in h.iter_recorded() {
        let value = v.value_iterated_to();
        let n = v.count_since_last_iteration();
        let t = h.median_equivalent(value) as f64 * n as f64;
        total += t;
        if h.lowest_equivalent(value) > p95 {
            count += n;
            time += t;
        }
    }
    let share = |part: f64, whole: f64| if whole > 0.0 { part / whole } else { 0.0 };
    (p95, share(count as f64, h.len() as f64), share(time, total))
}

/// The mean against the p95; when the mean is above, the tail that explains it.
pub(super) fn heavy_tail(r: &RunRecord) -> SelfCheck {
    let code = SelfCheckCode::HeavyTail;
    let h = match decode_histogram(&r.histograms.latency_us) {
        Ok(h) if !h.is_empty() => h,
        Ok(_) => return not_applicable(code, "no response was measured".into()),
        Err(why) => return not_applicable(code, format!("the latency histogram: {why}")),
    };
    let (p95_us, count_share, time_share) = tail_above_p95(&h);
    let (mean_ms, p95_ms) = (h.mean() / 1e3, p95_us as f64 / 1e3);
    let figures = [
        ("mean_ms", mean_ms),
        ("p95_ms", p95_ms),
        ("above_p95_pct", count_share * 100.0),
        ("time_above_p95_pct", time_share * 100.0),
    ];
    let tail = format!(
        "{:.1} % of requests above the p95 carry {:.1} % of the total time",
        count_share * 100.0,
        time_share * 100.0
    );
    if mean_ms <= p95_ms {
        return finding(
            code,
            SelfCheckOutcome::Passed,
            &figures,
            format!("mean {mean_ms:.3} ms ≤ p95 {p95_ms:.3} ms; {tail}"),
        );
    }
    finding(
        code,
        SelfCheckOutcome::Explained,
        &figures,
        format!(
            "heavy tail: the mean latency ({mean_ms:.3} ms) is above the p95 ({p95_ms:.3} ms): \
             {tail}; the mean describes those few slow requests, not a typical one (read the \
             percentiles)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::encode_histogram;
    use crate::record::fixture::record;
    use crate::record::recorder::new_histogram;
    use crate::record::selfcheck::SelfCheckOutcome::{Explained, NotApplicable, Passed};

    /// 980 responses of 1 ms and 20 of 500 ms.
    fn slow_few() -> RunRecord {
        let mut r = record("tail", 1, 1000, 1000, 0, 0.0);
        let mut h = new_histogram();
        h.record_n(1000, 980).unwrap();
        h.record_n(500_000, 20).unwrap();
        r.histograms.latency_us = encode_histogram(&h);
        r
    }

    #[test]
    fn a_mean_above_the_p95_is_explained_by_the_tail() {
        let c = heavy_tail(&slow_few());
        assert_eq!(c.outcome, Explained, "{c:?}");
        assert!((c.figures["above_p95_pct"] - 2.0).abs() < 1e-9, "{c:?}");
        // 20 × 500 ms of 20 × 500 + 980 × 1 ms.
        let expected = 100.0 * 10_000.0 / 10_980.0;
        assert!(
            (c.figures["time_above_p95_pct"] - expected).abs() < 0.2,
            "{c:?}"
        );
        assert!(
            c.message
                .contains("2.0 % of requests above the p95 carry 91.1 % of the total time"),
            "{}",
            c.message
        );
        assert!(c.outcome.warns());
    }

    #[test]
    fn a_mean_below_the_p95_passes() {
        let r = record("even", 3, 1000, 2000, 0, 0.0);
        let c = heavy_tail(&r);
        assert_eq!(c.outcome, Passed, "{c:?}");
        assert!(c.figures["mean_ms"] <= c.figures["p95_ms"]);
        // Uniform ±20 %: the top 5 % carry a little more than 5 % of the time.
        let share = c.figures["time_above_p95_pct"];
        assert!((4.0..7.0).contains(&share), "{c:?}");
    }

    #[test]
    fn no_response_is_not_applicable() {
        let mut r = record("none", 1, 0, 1000, 0, 0.0);
        r.histograms.latency_us = encode_histogram(&new_histogram());
        assert_eq!(heavy_tail(&r).outcome, NotApplicable);
    }
}
