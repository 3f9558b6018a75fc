//! Single runs and thin runs: a merged record whose shares measured apart has no per-second
//! rate test, and a percentile few responses hold has no interval over runs.

use super::tests::{change, repeats, row, variant};
use super::*;
use crate::record::fixture::record;

#[test]
fn merged_shares_that_measured_apart_give_no_per_second_rate() {
    use crate::record::shares::{Merged, ShareFigures};
    let a = variant("a", vec![record("a", 10, 1000, 5000, 0, 0.05)]);
    let mut r = record("b", 10, 800, 6000, 0, 0.05);
    // Two shares 0.5 s apart: under a second (latencies keep their intervals), but the edge
    // seconds hold one share's load, so no rate from the seconds.
    let share = |index, offset_s: f64| ShareFigures {
        index,
        source: None,
        offset_s,
        duration_s: 9.5,
        requests: 4000,
        errors: 0,
        rps: 421.0,
        interrupted: None,
        environment: r.environment.clone(),
        generator: r.generator.clone(),
        warnings: Vec::new(),
        watch: None,
    };
    let shares = vec![share(0, 0.0), share(1, 0.5)];
    r.merged = Some(Merged {
        count: 2,
        plan_hash: String::new(),
        measure_started_at: r.started_at.clone(),
        shares,
        missing: Vec::new(),
        lost: Vec::new(),
    });
    let c = compare(&[a, variant("b", vec![r])], CompareOptions::default());
    let rps = change(&c, Metric::Throughput);
    assert_eq!(
        (rps.method, rps.verdict),
        (None, ChangeVerdict::NotEnoughData)
    );
    assert_eq!(change(&c, Metric::P50).method, Some(Method::PerSecond));
}

#[test]
fn a_percentile_few_responses_hold_has_no_interval_over_runs() {
    // Three runs of 500 responses: p50 has its interval over the runs, p99 (1,000 needed) none.
    let runs = (0..3)
        .map(|i| record("a", 5, 100 + i, 5000, 0, 0.0))
        .collect();
    let c = compare(
        &[variant("a", runs), repeats("b", 1000, 5000)],
        CompareOptions::default(),
    );
    assert!(row(&c, Metric::P50).estimates[0].ci.is_some());
    assert_eq!(row(&c, Metric::P99).estimates[0].ci, None);
    assert!(row(&c, Metric::P99).estimates[1].ci.is_some());
}
