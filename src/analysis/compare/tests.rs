//! Tests of the comparison on constructed records: the verdicts, and the regressions of issue 10
//! (impossible intervals, "no significant difference" without equivalence, no correction across
//! metrics, order confounded with drift).

use std::path::PathBuf;

use super::*;
use crate::record::fixture::{many_responses, record};
use crate::record::model::RunRecord;

pub(crate) fn variant(label: &str, runs: Vec<RunRecord>) -> Variant {
    Variant {
        label: label.into(),
        source: PathBuf::from(label),
        runs,
    }
}

pub(crate) fn repeats(label: &str, rate: u64, latency_us: u64) -> Variant {
    let runs = [0i64, 7, -5, 3, -2]
        .iter()
        .map(|d| {
            record(
                label,
                5,
                (rate as i64 + d) as u64,
                latency_us + d.unsigned_abs(),
                0,
                0.0,
            )
        })
        .map(|mut r| {
            many_responses(&mut r);
            r
        })
        .collect();
    variant(label, runs)
}

/// A run whose figures are set directly: throughput `rps`, latency percentiles proportional to
/// `p50_ms`, started `at_s` seconds after a fixed time.
pub(crate) fn run(rps: f64, p50_ms: f64, at_s: u64) -> RunRecord {
    // Few requests: the figures below are set by hand, and the tests build thousands of runs.
    let mut r = record("run", 2, 10, 5000, 0, 0.0);
    r.summary.rps = rps;
    let l = &mut r.summary.latency_ms;
    l.mean = Some(p50_ms * 1.1);
    l.p50 = Some(p50_ms);
    l.p90 = Some(p50_ms * 1.3);
    l.p95 = Some(p50_ms * 1.5);
    l.p99 = Some(p50_ms * 2.0);
    l.p99_9 = Some(p50_ms * 3.0);
    l.max = Some(p50_ms * 5.0);
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_790_000_000 + at_s);
    r.started_at = humantime::format_rfc3339_millis(t).to_string();
    many_responses(&mut r);
    r
}

/// Runs of [`run`]`(1000.0, 2.0, i)` whose p99s are `p99` (ms), the i-th started i s after the
/// first.
pub(crate) fn runs_with_p99(p99: &[f64]) -> Vec<RunRecord> {
    p99.iter()
        .enumerate()
        .map(|(i, &p)| {
            let mut r = run(1000.0, 2.0, i as u64);
            r.summary.latency_ms.p99 = Some(p);
            r
        })
        .collect()
}

pub(crate) fn row(c: &Comparison, m: Metric) -> &MetricRow {
    c.rows.iter().find(|r| r.metric == m).unwrap()
}

pub(crate) fn change(c: &Comparison, m: Metric) -> Change {
    row(c, m).changes[1].clone().unwrap()
}

#[test]
fn repeated_runs_find_a_real_change_in_the_right_direction() {
    let c = compare(
        &[repeats("5ms", 1000, 5000), repeats("6ms", 830, 6000)],
        CompareOptions::default(),
    );
    let p50 = change(&c, Metric::P50);
    assert_eq!(p50.method, Some(Method::Repeats));
    assert_eq!(p50.verdict, ChangeVerdict::Worse, "{p50:?}");
    assert_eq!(p50.words(Metric::P50), "slower");
    assert!((p50.change.unwrap() - 20.0).abs() < 1.0, "{p50:?}");
    assert!(p50.p_value.unwrap() < 0.01);
    assert!(p50.p_adjusted.unwrap() >= p50.p_value.unwrap());
    let rps = change(&c, Metric::Throughput);
    assert_eq!(rps.verdict, ChangeVerdict::Worse);
    assert!(rps.change.unwrap() < -15.0);
    assert_eq!(c.tests, 8, "every metric but the max tested once");
    // The reverse comparison: the same change is an improvement.
    let c = compare(
        &[repeats("6ms", 830, 6000), repeats("5ms", 1000, 5000)],
        CompareOptions::default(),
    );
    assert_eq!(
        change(&c, Metric::Throughput).verdict,
        ChangeVerdict::Better
    );
    assert_eq!(change(&c, Metric::P99).words(Metric::P99), "faster");
    assert!(c.mismatches.is_empty(), "{:?}", c.mismatches);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let e = &row(&c, Metric::P50).estimates[0];
    assert_eq!(e.values.len(), 5);
    let (lo, hi) = e.ci.unwrap();
    assert!(lo <= e.value.unwrap() && e.value.unwrap() <= hi);
}

#[test]
fn identical_configurations_are_shown_equivalent() {
    let c = compare(
        &[repeats("a", 1000, 5000), repeats("b", 1001, 5001)],
        CompareOptions::default(),
    );
    for r in c.rows.iter().filter(|r| r.metric.judged()) {
        let ch = r.changes[1].as_ref().unwrap();
        assert_eq!(
            ch.verdict,
            ChangeVerdict::Equivalent,
            "{:?}: {ch:?}",
            r.metric
        );
        assert_eq!(ch.words(r.metric), "no significant difference");
        let (lo, hi) = ch.ci.unwrap();
        assert!(lo >= -c.threshold(r.metric) && hi <= c.threshold(r.metric));
    }
}

#[test]
fn single_runs_of_a_load_that_changes_give_no_per_second_verdict() {
    let ramp = |label: &str, rate: u64, p50: u64| {
        let mut r = record(label, 10, rate, p50, 0, 0.05);
        r.summary.ci95 = Some(crate::record::model::Ci95 {
            unsteady: Some("scenario `up` changes its load over time (a ramp or a ladder)".into()),
            ..Default::default()
        });
        variant(label, vec![r])
    };
    let c = compare(
        &[ramp("a", 1000, 5000), ramp("b", 800, 6000)],
        CompareOptions::default(),
    );
    let rps = change(&c, Metric::Throughput);
    assert_eq!(
        (rps.method, rps.verdict),
        (None, ChangeVerdict::NotEnoughData)
    );
    assert!(rps.change.unwrap() < -15.0, "{rps:?}");
    assert!(
        c.notes.iter().any(|n| n.starts_with("a load that changes")),
        "{:?}",
        c.notes
    );
}

#[test]
fn single_runs_give_weak_verdicts_from_the_series() {
    let a = variant("a", vec![record("a", 10, 1000, 5000, 0, 0.05)]);
    let b = variant("b", vec![record("b", 10, 800, 6000, 0, 0.05)]);
    let c = compare(&[a.clone(), b], CompareOptions::default());
    let rps = change(&c, Metric::Throughput);
    assert_eq!(rps.method, Some(Method::PerSecond));
    assert_eq!(rps.words(Metric::Throughput), "slower (weak)");
    let (lo, hi) = rps.ci.unwrap();
    assert!(
        lo < rps.change.unwrap() && rps.change.unwrap() < hi,
        "{rps:?}"
    );
    // No interval and no series for p95: no verdict from single runs.
    let p95 = change(&c, Metric::P95);
    assert_eq!(p95.verdict, ChangeVerdict::NotEnoughData);
    assert!(p95.change.unwrap() > 15.0);
    assert!(c.notes.iter().any(|n| n.contains("weak")), "{:?}", c.notes);
    // A noisy single run against one 1 % faster: the interval crosses +2 %, so it cannot say.
    let b = variant("b", vec![record("b", 10, 1010, 5000, 0, 0.05)]);
    let c = compare(&[a, b], CompareOptions::default());
    let rps = change(&c, Metric::Throughput);
    assert_eq!(
        rps.verdict,
        ChangeVerdict::Inconclusive {
            runs_needed: None,
            tail_guard: None
        },
        "{rps:?}"
    );
    assert_eq!(rps.words(Metric::Throughput), "inconclusive (weak)");
}

#[test]
fn short_runs_and_failed_runs_do_not_break_the_comparison() {
    let a = variant("a", vec![record("a", 2, 100, 1000, 0, 0.0)]);
    let failed = variant("b", vec![record("b", 2, 100, 1000, 100, 0.0)]);
    let mut empty = record("c", 0, 0, 0, 0, 0.0);
    empty.interrupted = Some("SIGINT".into());
    let c = compare(
        &[a, failed, variant("c", vec![empty])],
        CompareOptions::default(),
    );
    let errors = row(&c, Metric::ErrorRate);
    assert_eq!(errors.estimates[1].value, Some(100.0));
    assert_eq!(errors.changes[1].as_ref().unwrap().change, Some(100.0));
    assert_eq!(row(&c, Metric::P50).estimates[2].value, None);
    assert_eq!(
        row(&c, Metric::P50).changes[2].as_ref().unwrap().verdict,
        ChangeVerdict::NotEnoughData
    );
    assert!(
        c.notes.iter().any(|n| n.contains("c was interrupted")),
        "{:?}",
        c.notes
    );
    assert!(
        c.notes.iter().any(|n| n.contains("every request failed")),
        "{:?}",
        c.notes
    );
    // Two-second runs: no verdict, and the notes say why and what would give one.
    assert!(
        c.notes
            .iter()
            .any(|n| n.starts_with("no verdict from these runs")),
        "{:?}",
        c.notes
    );
    assert!(
        c.mismatches.iter().any(|m| m.starts_with("duration asked")),
        "{:?}",
        c.mismatches
    );
}

#[test]
fn single_runs_with_intervals_are_tested_by_them() {
    use crate::record::model::{Bound, Ci95};
    // p50 5 ms ± 1 % against 6 ms ± 1 %, p95 likewise; no interval of the error rate.
    let with = |label: &str, ms: f64| {
        let mut r = record(label, 10, 1000, (ms * 1000.0) as u64, 0, 0.05);
        let bound = |value: f64| Bound {
            value,
            half_width: 0.01 * value,
            batches: 10,
            batch_s: 1,
            effective: 10.0,
        };
        r.summary.latency_ms.p95 = Some(ms * 1.2);
        r.summary.latency_ms.p99 = Some(ms * 1.5);
        r.summary.ci95 = Some(Ci95 {
            p50_ms: Some(bound(ms)),
            p95_ms: Some(bound(ms * 1.2)),
            p99_ms: Some(bound(ms * 1.5)),
            ..Ci95::default()
        });
        variant(label, vec![r])
    };
    let c = compare(&[with("a", 5.0), with("b", 6.0)], CompareOptions::default());
    for m in [Metric::P50, Metric::P95] {
        let ch = change(&c, m);
        assert_eq!(ch.method, Some(Method::RunIntervals), "{m:?}");
        assert_eq!(ch.verdict, ChangeVerdict::Worse, "{m:?}");
    }
    // A tail's call from one run a side is withheld, as over too few repeats.
    let p99 = change(&c, Metric::P99);
    assert_eq!(p99.method, Some(Method::RunIntervals));
    assert_eq!(
        p99.verdict,
        ChangeVerdict::Inconclusive {
            runs_needed: None,
            tail_guard: Some(TailGuard::TooFewRuns)
        }
    );
    // A figure without an interval keeps the per-second test.
    assert_eq!(
        change(&c, Metric::Throughput).method,
        Some(Method::PerSecond)
    );
    assert!(c.notes.iter().any(|n| n.contains("own 95 % intervals")));
}

#[test]
fn two_repeats_fall_back_to_seconds_and_say_so() {
    let two = |label: &str, latency| {
        variant(
            label,
            (0..2)
                .map(|i| record(label, 6, 1000 + i, latency, 0, 0.02))
                .collect(),
        )
    };
    let c = compare(&[two("a", 5000), two("b", 6000)], CompareOptions::default());
    let p50 = change(&c, Metric::P50);
    assert_eq!(p50.method, Some(Method::PerSecond));
    assert_eq!(p50.verdict, ChangeVerdict::Worse);
    assert!(
        c.notes.iter().any(|n| n.contains("too few")),
        "{:?}",
        c.notes
    );
}

#[test]
fn mismatched_runs_are_flagged() {
    let a = record("a", 10, 1000, 5000, 0, 0.0);
    let mut b = record("b", 10, 1000, 5000, 0, 0.0);
    b.config.connections = Some(64);
    b.config.url = "http://127.0.0.1:9090/".into();
    b.tool.version = "0.2.0".into();
    b.summary.duration_s = 13.5 * 60.0;
    let c = compare(
        &[variant("A", vec![a]), variant("B", vec![b])],
        CompareOptions::default(),
    );
    let m = c.mismatches.join("\n");
    for expected in [
        "connections differs: A = 8; B = 64",
        "target URL differs",
        "tool version differs: A = 0.1.0; B = 0.2.0",
        "measured duration differs by more than 10%: A = 10.0s; B = 13m30s",
    ] {
        assert!(m.contains(expected), "{expected} not in\n{m}");
    }
    assert!(!m.contains("until precise"), "{m}");
    // A run that stopped once precise says why its length differs.
    let mut short = record("c", 10, 1000, 5000, 0, 0.0);
    short.summary.duration_s = 6.0;
    short.summary.ci95 = Some(crate::record::model::Ci95 {
        precision: Some(crate::record::model::PrecisionOutcome {
            goals: Vec::new(),
            reached: true,
            at_s: Some(6.0),
        }),
        ..Default::default()
    });
    let a = record("a", 10, 1000, 5000, 0, 0.0);
    let c = compare(
        &[variant("A", vec![a]), variant("C", vec![short])],
        CompareOptions::default(),
    );
    let m = c.mismatches.join("\n");
    assert!(
        m.contains("A = 10.0s; C = 6.0s (runs asked to last until precise stop when they are)"),
        "{m}"
    );
}

// ---- Regressions of issue 10, section 3. Each asserts through `words`, `ci` and the text
// ---- report where it can, so that it also builds (and fails) against the code before the fix.

/// Issue 10: "−126.9 % … −68.5 %" for throughput. A relative change and its interval are
/// computed on the log scale, so neither can pass −100 %.
#[test]
fn relative_changes_and_intervals_never_pass_minus_100_percent() {
    let a = variant(
        "a",
        [100.0, 100.0, 100.0, 1000.0, 1000.0]
            .iter()
            .map(|&x| run(x, 1000.0 / x, 0))
            .collect(),
    );
    let b = variant(
        "b",
        (0..5).map(|i| run(10.0 + f64::from(i), 90.0, 0)).collect(),
    );
    let c = compare(&[a, b], CompareOptions::default());
    for r in &c.rows {
        let ch = r.changes[1].as_ref().unwrap();
        if !r.metric.relative() {
            continue;
        }
        let (lo, hi) = ch.ci.expect("tested over runs");
        assert!(lo > -100.0 && lo <= hi, "{:?}: {ch:?}", r.metric);
        assert!(ch.change.unwrap() > -100.0, "{:?}: {ch:?}", r.metric);
        assert!(
            lo <= ch.change.unwrap() && ch.change.unwrap() <= hi,
            "{:?}: {ch:?}",
            r.metric
        );
    }
}

/// Issue 10: "any of 9 metrics, no correction across metrics". A change with p ≈ 0.012 on one
/// metric among nine tested is not called: Holm's correction multiplies it by nine.
#[test]
fn one_metric_among_nine_needs_the_corrected_p() {
    let runs = |p99s: [f64; 5]| -> Vec<RunRecord> {
        p99s.iter()
            .map(|&p| {
                let mut r = run(1000.0, 5.0, 0);
                r.summary.latency_ms.p99 = Some(p);
                r
            })
            .collect()
    };
    // Completely separated (an exact rank test would give p = 2/252 ≈ 0.008), p ≈ 0.012 by the
    // t test on logs: below 0.05, not below 0.05/8.
    let a = variant("a", runs([9.0, 9.8, 10.4, 10.8, 11.0]));
    let b = variant("b", runs([11.3, 11.6, 12.0, 12.5, 15.0]));
    let c = compare(&[a, b], CompareOptions::default());
    let p99 = change(&c, Metric::P99);
    assert_ne!(p99.words(Metric::P99), "slower", "{p99:?}");
    assert_eq!(c.tests, 8);
    let (p, adjusted) = (p99.p_value.unwrap(), p99.p_adjusted.unwrap());
    assert!(p < 0.05 && adjusted > 0.05, "{p99:?}");
    assert!(
        p99.ci.unwrap().0 > 2.0,
        "beyond the threshold, yet not called: {p99:?}"
    );
    // The same data on its own metric set would be called: it is the correction that holds it.
    assert!((adjusted - 8.0 * p).abs() < 1e-12);
}

/// A deterministic normal variate (Box–Muller).
fn normal(rng: &mut fastrand::Rng) -> f64 {
    let (u, v) = (1.0 - rng.f64(), rng.f64());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// A run with independent log-normal noise on every figure (CV: throughput 4 %, latency
/// percentiles 2 % to 40 % towards the tail), `shift` times slower.
fn noisy_run(rng: &mut fastrand::Rng, shift: f64) -> RunRecord {
    let mut r = run(1000.0 / shift, 2.0 * shift, 0);
    let mut wobble = |x: &mut Option<f64>, cv: f64| {
        *x = x.map(|v| v * (cv * normal(rng)).exp());
    };
    let l = &mut r.summary.latency_ms;
    for (x, cv) in [
        (&mut l.mean, 0.03),
        (&mut l.p50, 0.02),
        (&mut l.p90, 0.03),
        (&mut l.p95, 0.05),
        (&mut l.p99, 0.12),
        (&mut l.p99_9, 0.25),
        (&mut l.max, 0.40),
    ] {
        wobble(x, cv);
    }
    r.summary.rps *= (0.04 * normal(rng)).exp();
    r
}

/// Issue 10: random 4-vs-4 splits of 16 identical repeats called a difference in 10 % of
/// splits. Over 200 splits of such runs (nine noisy metrics), at most 5 % have any call.
#[test]
fn a_a_splits_call_a_difference_at_most_five_percent_of_the_time() {
    let mut rng = fastrand::Rng::with_seed(10);
    let pool: Vec<RunRecord> = (0..16).map(|_| noisy_run(&mut rng, 1.0)).collect();
    for n in [4, 5] {
        let mut false_calls = 0;
        for _ in 0..200 {
            let mut picked = pool.clone();
            rng.shuffle(&mut picked);
            let c = compare(
                &[
                    variant("x", picked[..n].to_vec()),
                    variant("y", picked[n..2 * n].to_vec()),
                ],
                CompareOptions::default(),
            );
            let called = c.rows.iter().any(|r| {
                let words = r.changes[1].as_ref().unwrap().words(r.metric);
                ["faster", "slower", "fewer errors", "more errors"]
                    .iter()
                    .any(|w| words.starts_with(w))
            });
            false_calls += usize::from(called);
        }
        assert!(
            false_calls <= 10,
            "{n} vs {n}: {false_calls} of 200 splits called a difference"
        );
    }
}

/// The other side of the same coin: a true 10 % latency change at 5 vs 5 is found.
#[test]
fn a_ten_percent_latency_change_is_found_at_five_versus_five() {
    let mut rng = fastrand::Rng::with_seed(11);
    let mut found = 0;
    for _ in 0..100 {
        let a: Vec<RunRecord> = (0..5).map(|_| noisy_run(&mut rng, 1.0)).collect();
        let b: Vec<RunRecord> = (0..5).map(|_| noisy_run(&mut rng, 1.1)).collect();
        let c = compare(
            &[variant("a", a), variant("b", b)],
            CompareOptions::default(),
        );
        found += usize::from(change(&c, Metric::P50).verdict == ChangeVerdict::Worse);
    }
    assert!(found >= 80, "found in {found} of 100");
}

/// Issue 30, item 6: the max is one request per run; it is shown, never called.
#[test]
fn the_max_is_shown_with_its_change_and_never_judged() {
    let runs = |max: f64| {
        (0..5)
            .map(|i| {
                let mut r = run(1000.0, 2.0, i);
                r.summary.latency_ms.max = Some(max + i as f64 * 0.01);
                r
            })
            .collect()
    };
    let c = compare(
        &[variant("a", runs(10.0)), variant("b", runs(20.0))],
        CompareOptions::default(),
    );
    let max = change(&c, Metric::Max);
    assert_eq!(max.verdict, ChangeVerdict::NotJudged, "{max:?}");
    assert!((max.change.unwrap() - 100.0).abs() < 1.0, "{max:?}");
    assert_eq!(max.words(Metric::Max), "not judged (one request per run)");
    assert_eq!(max.p_adjusted, None);
}

/// Issue 30, item 6: a call on p99 or p99.9 stands only if it holds with any one run left out;
/// a shift of every run still is one.
#[test]
fn a_tail_call_must_survive_leaving_out_any_one_run() {
    let runs = |p99: [f64; 5]| runs_with_p99(&p99);
    let a = variant("a", runs([10.0, 10.1, 9.95, 10.05, 10.02]));
    // Past Holm's line and the threshold on all ten runs, not once one of them is left out.
    let b = variant("b", runs([10.41, 10.58, 10.51, 10.15, 10.6]));
    let c = compare(&[a.clone(), b], CompareOptions::default());
    let p99 = change(&c, Metric::P99);
    assert!(
        p99.p_adjusted.unwrap() < ALPHA && p99.ci.unwrap().0 > 2.0,
        "{p99:?}"
    );
    assert_eq!(
        p99.verdict,
        ChangeVerdict::Inconclusive {
            runs_needed: None,
            tail_guard: Some(TailGuard::OneRunCarriesIt)
        },
        "{p99:?}"
    );
    assert_eq!(p99.words(Metric::P99), "inconclusive (one run carries it)");
    let shifted = variant("c", runs([12.0, 12.1, 11.9, 12.2, 12.05]));
    let c = compare(&[a.clone(), shifted.clone()], CompareOptions::default());
    assert_eq!(change(&c, Metric::P99).verdict, ChangeVerdict::Worse);
    // The same shift at three runs a side: past Holm's line, but too few runs to leave one
    // out, and the verdict says so (its table: report::comparison::words_tests).
    let three = |v: &Variant| Variant {
        runs: v.runs[..3].to_vec(),
        ..v.clone()
    };
    let c = compare(&[three(&a), three(&shifted)], CompareOptions::default());
    let p99 = change(&c, Metric::P99);
    assert!(p99.p_adjusted.unwrap() < ALPHA, "{p99:?}");
    assert_eq!(
        p99.words(Metric::P99),
        "inconclusive (a tail needs 4 runs a side)"
    );
}
