//! The comparison's judgement of figures that their runs' counts limit: a percentile with too
//! few responses above it, an error rate whose runs agree exactly from few attempts.

use super::tests::{change, repeats, row, variant};
use super::*;
use crate::record::fixture::record;

#[test]
fn a_percentile_with_too_few_responses_above_it_is_not_judged_over_runs() {
    // 500 responses a run: 5 above p99 and none to speak of above p99.9 — each is the run's
    // slowest few, judged no more than the max; p90 has 50 above and is judged.
    let runs = |label: &str, latency_us: u64| {
        let runs = (0..5)
            .map(|i| record(label, 5, 100, latency_us + i, 0, 0.0))
            .collect();
        variant(label, runs)
    };
    let c = compare(
        &[runs("a", 5000), runs("b", 5000)],
        CompareOptions::default(),
    );
    for m in [Metric::P99, Metric::P99_9] {
        assert_eq!(change(&c, m).verdict, ChangeVerdict::NotEnoughData, "{m:?}");
    }
    assert_eq!(change(&c, Metric::P90).method, Some(Method::Repeats));
}

#[test]
fn no_errors_in_few_requests_is_no_equivalence() {
    // 5 runs of 50 requests a side, none failed: the runs' rates agree exactly, but 0 of 250
    // cannot show a difference within 0.1 pp.
    let c = compare(
        &[repeats("a", 10, 5000), repeats("b", 10, 5000)],
        CompareOptions::default(),
    );
    let ch = row(&c, Metric::ErrorRate).changes[1].clone().unwrap();
    assert_eq!(
        ch.verdict,
        ChangeVerdict::Inconclusive {
            runs_needed: None,
            tail_guard: None
        },
        "{ch:?}"
    );
    let (lo, hi) = ch.ci.unwrap();
    assert!(lo < -1.0 && hi > 1.0, "{ch:?}");
    // 1 error in every run of 500 against none in 1,000: the runs say +0.2 pp exactly, the
    // counts (5 of 2,500 against 0 of 5,000) cannot put it beyond 0.1 pp: no call.
    let runs = |label: &str, seconds, per_second, errors| {
        let runs = (0..5)
            .map(|_| record(label, seconds, per_second, 5000, errors, 0.0))
            .collect();
        variant(label, runs)
    };
    let c = compare(
        &[runs("a", 5, 200, 0), runs("b", 1, 500, 1)],
        CompareOptions::default(),
    );
    let ch = row(&c, Metric::ErrorRate).changes[1].clone().unwrap();
    assert!((ch.change.unwrap() - 0.2).abs() < 1e-9, "{ch:?}");
    assert!(
        matches!(ch.verdict, ChangeVerdict::Inconclusive { .. }),
        "{ch:?}"
    );
}
