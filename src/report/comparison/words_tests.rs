//! Two comparisons of `analysis::compare`'s tests whose words the text report must carry (kept
//! here so analysis does not import report).

use crate::analysis::compare::tests::{change, run, runs_with_p99, variant};
use crate::analysis::compare::*;
use crate::record::model::RunRecord;
use crate::report::comparison::text;

/// Issue 10: "a p of 0.119 was reported as no significant difference". A wide interval that
/// crosses the threshold is inconclusive, with the runs that would likely settle it.
#[test]
fn an_interval_across_the_threshold_is_inconclusive() {
    let a = variant(
        "a",
        [5.0, 5.5, 4.6, 5.3, 4.8]
            .iter()
            .map(|&l| run(1000.0, l, 0))
            .collect(),
    );
    let b = variant(
        "b",
        [5.4, 5.9, 5.0, 5.2, 5.7]
            .iter()
            .map(|&l| run(1000.0, l, 0))
            .collect(),
    );
    let c = compare(&[a, b], CompareOptions::default());
    let p50 = change(&c, Metric::P50);
    assert!(p50.p_value.unwrap() > 0.05, "{p50:?}");
    assert_eq!(p50.words(Metric::P50), "inconclusive", "{p50:?}");
    let ChangeVerdict::Inconclusive {
        runs_needed: Some(RunsNeeded::About(n)),
        ..
    } = p50.verdict
    else {
        panic!("{p50:?}");
    };
    assert!((6..=100).contains(&n), "{n}");
    // Throughput is the same in every run: shown equivalent.
    assert_eq!(
        change(&c, Metric::Throughput).verdict,
        ChangeVerdict::Equivalent
    );
    let text = text(&[], &c);
    assert!(
        text.contains(
            "inconclusive (change; runs of each that would likely settle it): latency mean (+"
        ),
        "{text}"
    );
    // No error in 100 requests a side bounds nothing: more requests, not runs, would.
    assert!(
        text.contains("error rate (+0.00 pp; too few requests to bound it within ±0.1 pp)"),
        "{text}"
    );
}

/// Issue 10: two sets of 4 repeats of one configuration, taken one after the other on a
/// drifting machine, were called different. The comparison now says that order and drift are
/// confounded; interleaved runs, or runs without a trend, raise no such warning.
#[test]
fn sequential_runs_on_a_drifting_machine_are_flagged() {
    // Throughput falls 1 % per run (runs 10 s apart); the first four are A, the last four B.
    // The jitter has no trend of its own within either block.
    let jitter = [0.2, -0.2, -0.2, 0.2, 0.2, -0.2, -0.2, 0.2];
    let drifting: Vec<RunRecord> = (0..8)
        .map(|i| {
            run(
                1000.0 * (1.0 - 0.01 * i as f64) + jitter[i],
                2.0,
                10 * i as u64,
            )
        })
        .collect();
    let a = variant("a", drifting[..4].to_vec());
    let b = variant("b", drifting[4..].to_vec());
    let c = compare(&[a, b], CompareOptions::default());
    let text = text(&[], &c);
    assert!(text.contains("order and drift confounded"), "{text}");
    assert!(change(&c, Metric::Throughput).confounded);
    assert!(!change(&c, Metric::P50).confounded, "no drift in latency");
    assert!(
        c.warnings[0].contains("every run of a came before every run of b"),
        "{:?}",
        c.warnings
    );

    // The same values with the runs interleaved in time: no warning.
    let mut interleaved = drifting.clone();
    for (i, r) in interleaved.iter_mut().enumerate() {
        let slot = if i < 4 { 2 * i } else { 2 * (i - 4) + 1 };
        r.started_at = run(0.0, 1.0, 10 * slot as u64).started_at;
    }
    let c = compare(
        &[
            variant("a", interleaved[..4].to_vec()),
            variant("b", interleaved[4..].to_vec()),
        ],
        CompareOptions::default(),
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);

    // In blocks, but without a trend within the blocks (a step, not a drift): no warning.
    let step: Vec<RunRecord> = (0..8)
        .map(|i| {
            run(
                if i < 4 { 1000.0 } else { 960.0 } + jitter[i],
                2.0,
                10 * i as u64,
            )
        })
        .collect();
    let c = compare(
        &[
            variant("a", step[..4].to_vec()),
            variant("b", step[4..].to_vec()),
        ],
        CompareOptions::default(),
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(change(&c, Metric::Throughput).verdict, ChangeVerdict::Worse);
}

/// Issue 30: three runs a side never call a tail; the table says why, and the runs it needs.
#[test]
fn a_tail_at_three_runs_a_side_says_it_needs_four() {
    let runs = |p99: [f64; 3]| runs_with_p99(&p99);
    let (a, b) = (
        variant("a", runs([10.0, 10.1, 9.95])),
        variant("b", runs([12.0, 12.1, 11.9])),
    );
    let c = compare(&[a.clone(), b.clone()], CompareOptions::default());
    let md = crate::report::render_comparison(&[a, b], &c, crate::report::Format::Markdown, None)
        .unwrap();
    let row = md
        .lines()
        .rfind(|l| l.starts_with("| latency p99 (ms) | b |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        row.contains("| inconclusive (a tail needs 4 runs a side) | ≥4 |"),
        "{row}"
    );
}
