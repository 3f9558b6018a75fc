//! The verifier names the figure that breaks a rule, with both sides of its equation.

use super::*;
use crate::analysis::selfcheck::testing;
use crate::analysis::verdict::settle;
use crate::record::fixture::record as fixture;
use crate::record::model::{Group, GroupKind, ThresholdResult};

/// A consistent record, its outcome settled.
pub(super) fn consistent() -> RunRecord {
    let mut r = fixture("ok", 4, 250, 2000, 3, 0.0);
    settle(&mut r);
    r
}

/// The (path, rule) of every violation.
pub(super) fn named(r: &RunRecord) -> Vec<(String, Rule)> {
    record(r).into_iter().map(|v| (v.path, v.rule)).collect()
}

#[test]
fn a_consistent_record_verifies() {
    assert_eq!(record(&consistent()), vec![]);
}

#[test]
fn a_rate_not_over_its_window_is_named_with_both_sides() {
    let mut r = consistent();
    r.summary.rps *= 2.0;
    let v = record(&r);
    assert_eq!(
        (v[0].path.as_str(), v[0].rule),
        ("summary.rps", Rule::RateOverWindow)
    );
    let text = v[0].to_string();
    assert!(text.starts_with("summary.rps: 500 ≠ "), "{text}");
    assert!(text.contains("(1000 − 0) / 4 s = 250"), "{text}");
    // The first line quotes the throughput: it no longer agrees either.
    assert_eq!(v[1].path, "outcome.headline", "{v:?}");
}

#[test]
fn counts_that_do_not_add_up_are_named() {
    let mut r = consistent();
    r.summary.attempts += 1;
    assert!(named(&r).contains(&("summary.attempts".into(), Rule::AttemptsAddUp)));
    let mut r = consistent();
    r.summary.errors += 1;
    let n = named(&r);
    assert!(
        n.contains(&("summary.errors".into(), Rule::ErrorsAddUp)),
        "{n:?}"
    );
    let mut r = consistent();
    r.summary.success_rate = 1.0;
    assert!(named(&r).contains(&("summary.success_rate".into(), Rule::SuccessRate)));
}

#[test]
fn the_series_must_add_up_and_cover_the_window() {
    let mut r = consistent();
    r.series[1].requests += 5;
    assert!(named(&r).contains(&("summary.requests".into(), Rule::SeriesAddsUp)));
    let mut r = consistent();
    r.series.pop();
    let n = named(&r);
    assert!(
        n.contains(&("series[].span_s".into(), Rule::SeriesAddsUp)),
        "{n:?}"
    );
}

#[test]
fn groups_must_add_up_and_stay_inside_the_run() {
    let mut r = consistent();
    let mut shop = testing::group(GroupKind::Scenario, "shop", None, 1000);
    shop.window_s = 4.0;
    shop.rps = 250.0;
    shop.status.clear();
    shop.status.insert("200".into(), 988);
    shop.status.insert("500".into(), 12);
    shop.errors = 12;
    shop.errors_by_kind = r.summary.errors_by_kind.clone();
    shop.histogram_us = r.histograms.latency_us.clone();
    shop.latency_ms = r.summary.latency_ms;
    r.groups = vec![shop];
    assert_eq!(record(&r), vec![]);
    r.groups[0].window_s = 5.0;
    let n = named(&r);
    assert!(
        n.contains(&("groups[0].window_s".into(), Rule::WindowInsideRun)),
        "{n:?}"
    );
    assert!(
        n.contains(&("groups[0].rps".into(), Rule::RateOverWindow)),
        "{n:?}"
    );
    r.groups[0].window_s = 4.0;
    // A scenario's think time is its steps'.
    let mut buy = r.groups[0].clone();
    (buy.kind, buy.name, buy.scenario) = (GroupKind::Step, "buy".into(), Some("shop".into()));
    (buy.think_s, r.groups[0].think_s) = (1.5, 1.5);
    r.groups.push(buy);
    assert_eq!(record(&r), vec![]);
    r.groups[0].think_s = 2.0;
    let n = named(&r);
    assert!(
        n.contains(&("groups[0].think_s".into(), Rule::GroupsAddUp)),
        "{n:?}"
    );
    r.groups[0].think_s = 1.5;
    r.groups[0].requests -= 1;
    let n = named(&r);
    assert!(
        n.contains(&("summary.requests".into(), Rule::GroupsAddUp)),
        "{n:?}"
    );
}

#[test]
fn percentiles_out_of_order_are_named() {
    let mut r = consistent();
    r.summary.latency_ms.p99 = Some(r.summary.latency_ms.p95.unwrap() - 0.5);
    assert!(named(&r).contains(&("summary.latency_ms.p99".into(), Rule::PercentilesOrdered)));
    let mut r = consistent();
    r.summary.latency_ms.mean = Some(1e6);
    assert!(named(&r).contains(&("summary.latency_ms.mean".into(), Rule::PercentilesOrdered)));
}

#[test]
fn an_outcome_that_contradicts_the_figures_is_named() {
    let mut r = consistent();
    r.thresholds.push(ThresholdResult::judged(
        "errors".into(),
        "rate < 0.1%".into(),
        Some(0.012),
        crate::record::model::ThresholdUnit::Ratio,
        false,
        None,
    ));
    let n = named(&r);
    for path in [
        "outcome.status",
        "outcome.exit_code",
        "outcome.level",
        "outcome.headline",
    ] {
        assert!(
            n.contains(&(path.into(), Rule::OutcomeAgrees)),
            "{path}: {n:?}"
        );
    }
    settle(&mut r);
    assert_eq!(record(&r), vec![]);
    assert_eq!(r.outcome.as_ref().map(|o| o.exit_code), Some(99));
    r.outcome = None;
    assert_eq!(named(&r), vec![("outcome".into(), Rule::OutcomeAgrees)]);
}

#[test]
fn a_threshold_that_ended_the_run_cannot_have_passed() {
    let mut r = consistent();
    let mut t = ThresholdResult::judged(
        "rps".into(),
        "> 10".into(),
        Some(250.0),
        crate::record::model::ThresholdUnit::PerSecond,
        true,
        Some((1.0, Some(5.0))),
    );
    t.passed = true;
    r.thresholds.push(t);
    settle(&mut r);
    assert_eq!(
        named(&r),
        vec![("thresholds[0].passed".into(), Rule::ThresholdsAgree)]
    );
}

#[test]
fn a_merged_record_must_equal_the_sum_of_its_shares() {
    let a = consistent();
    let b = consistent();
    let mut whole = consistent();
    whole.summary.requests = 2 * a.summary.requests;
    let v = merged::shares(&whole, &[a.clone(), b.clone()]);
    // Only the requests were doubled: every other count, and the histograms, are off.
    assert!(v.iter().any(|v| v.path == "histograms.latency_us"), "{v:?}");
    assert!(v.iter().any(|v| v.path == "summary.errors"), "{v:?}");
    assert!(!v.iter().any(|v| v.path == "summary.requests"), "{v:?}");
}

#[test]
fn quic_figures_that_cannot_be_are_named() {
    let mut r = consistent();
    r.summary.quic = Some(crate::record::model::QuicFigures {
        connections: 2,
        datagrams_sent: 90,
        send_calls: 90,
        packets_sent: 100,
        packets_lost: 3,
        zero_rtt_sent: 2,
        zero_rtt_accepted: 1,
        zero_rtt_rejected: 1,
        ..Default::default()
    });
    assert_eq!(record(&r), vec![]);
    let q = r.summary.quic.as_mut().unwrap();
    q.packets_lost = 101;
    q.send_calls = 91;
    q.zero_rtt_sent = 3;
    assert_eq!(
        named(&r),
        [
            ("summary.quic.packets_lost".to_string(), Rule::QuicAddsUp),
            ("summary.quic.send_calls".to_string(), Rule::QuicAddsUp),
            ("summary.quic.zero_rtt_sent".to_string(), Rule::QuicAddsUp)
        ]
    );
    let q = r.summary.quic.as_mut().unwrap();
    (q.packets_lost, q.send_calls, q.zero_rtt_sent) = (3, 90, 1);
    assert_eq!(
        named(&r),
        [(
            "summary.quic.zero_rtt_accepted + zero_rtt_rejected".to_string(),
            Rule::QuicAddsUp
        )]
    );
}

#[test]
fn a_steal_share_at_the_limit_must_be_warned_about_and_be_a_share() {
    let steal = |share: f64, warned: bool| {
        let mut r = consistent();
        r.generator.steal_share = Some(share);
        if warned {
            r.warnings = crate::analysis::diagnose(&r);
        }
        settle(&mut r);
        named(&r)
    };
    let rule = |path: &str| vec![(path.to_string(), Rule::StealWarned)];
    assert_eq!(steal(0.004, false), vec![]);
    assert_eq!(steal(0.02, true), vec![]);
    assert_eq!(steal(0.02, false), rule("warnings"));
    assert_eq!(steal(1.5, true), rule("generator.steal_share"));
}

#[test]
fn intervals_are_checked_by_the_method_their_record_names() {
    use crate::analysis::interval::{Input, ci95_by};
    use crate::record::model::Autocorrelation;
    let mut r = fixture("ok", 12, 250, 2000, 3, 0.0);
    // A rate that rises and falls (the same 3,000 requests): neighbouring seconds correlated.
    let rates = [200, 220, 240, 260, 280, 300, 300, 280, 260, 240, 220, 200];
    for (s, rate) in r.series.iter_mut().zip(rates) {
        s.requests = rate;
    }
    settle(&mut r);
    let latency = crate::record::decode_histogram(&r.histograms.latency_us).unwrap();
    let input = Input {
        window_s: r.summary.duration_s,
        series: &r.series,
        batch_s: 1,
        batches: &[],
        rps: r.summary.rps,
        latency: &latency,
    };
    let (lag1, ips) = (
        ci95_by(&input, Autocorrelation::Lag1),
        ci95_by(&input, Autocorrelation::InitialPositiveSequence),
    );
    assert_ne!(lag1.rps.unwrap().half_width, ips.rps.unwrap().half_width);
    // A record written before the method was recorded reads as lag-1, and verifies as such.
    let json = serde_json::to_value(&lag1).unwrap();
    assert_eq!(json["autocorrelation"], "lag1");
    let mut old = json;
    old.as_object_mut().unwrap().remove("autocorrelation");
    r.summary.ci95 = Some(serde_json::from_value(old).unwrap());
    assert_eq!(record(&r), vec![]);
    r.summary.ci95 = Some(ips.clone());
    assert_eq!(record(&r), vec![]);
    // Lag-1 figures under the other method's name do not.
    r.summary.ci95 = Some(crate::record::model::Ci95 {
        autocorrelation: Autocorrelation::InitialPositiveSequence,
        ..lag1
    });
    assert_eq!(
        named(&r),
        [("summary.ci95.rps".to_string(), Rule::IntervalsAgree)]
    );
}

/// A steady 12 s record with the intervals its seconds give.
pub(super) fn steady_with_intervals() -> RunRecord {
    with_intervals(0.0)
}

/// A 12 s record whose seconds' counts move by `wobble` of their mean, with its intervals.
fn with_intervals(wobble: f64) -> RunRecord {
    let mut r = fixture("ok", 12, 250, 2000, 3, wobble);
    settle(&mut r);
    let latency = crate::record::decode_histogram(&r.histograms.latency_us).unwrap();
    let ci = crate::analysis::interval::ci95(&crate::analysis::interval::Input {
        window_s: r.summary.duration_s,
        series: &r.series,
        batch_s: 1,
        batches: &[],
        rps: r.summary.rps,
        latency: &latency,
    });
    r.summary.ci95 = Some(ci);
    r
}

#[test]
fn a_precision_outcome_must_fit_the_window() {
    use crate::record::model::{BoundFigure, PrecisionGoal, PrecisionOutcome};
    let mut r = steady_with_intervals();
    let window = r.summary.duration_s;
    let mut with = |reached: bool, at_s: Option<f64>, share: f64| {
        let ci = r.summary.ci95.as_mut().unwrap();
        ci.precision = Some(PrecisionOutcome {
            goals: vec![PrecisionGoal {
                figure: BoundFigure::Rps,
                share,
                part: None,
            }],
            reached,
            at_s,
        });
        named(&r)
    };
    let at = |field: &str| {
        vec![(
            format!("summary.ci95.precision.{field}"),
            Rule::IntervalsAgree,
        )]
    };
    // Goals the run's intervals meet.
    assert_eq!(with(true, Some(window - 0.4), 0.5), vec![]);
    assert_eq!(with(false, None, 0.02), vec![]);
    // Precise before an interval can exist, or long before the run stopped.
    assert_eq!(with(true, Some(2.0), 0.5), at("at_s"));
    assert_eq!(with(true, Some(window - 3.0), 0.5), at("at_s"));
    assert_eq!(with(true, None, 0.5), at("reached"));
    assert_eq!(with(false, Some(window), 0.5), at("reached"));
    assert_eq!(with(false, None, 0.0), at("goals"));
    // A goal on a part the run has no group for.
    let ci = r.summary.ci95.as_mut().unwrap();
    let p = ci.precision.as_mut().unwrap();
    p.goals[0].share = 0.02;
    p.goals[0].part = Some(crate::record::model::Part::Step("pay".into()));
    assert_eq!(named(&r), at("goals[0].part"));
}

#[test]
fn a_precision_outcome_must_agree_with_the_intervals_and_the_length() {
    use crate::record::model::{BoundFigure, PrecisionGoal, PrecisionOutcome};
    let mut r = with_intervals(0.05);
    let window = r.summary.duration_s;
    let ci = r.summary.ci95.as_ref().unwrap();
    let got = ci.get(BoundFigure::Rps).and_then(|b| b.relative()).unwrap();
    let outcome = |figure, share: f64, reached: bool| PrecisionOutcome {
        goals: vec![PrecisionGoal {
            figure,
            share,
            part: None,
        }],
        reached,
        at_s: reached.then_some(window),
    };
    let with = |p: PrecisionOutcome, r: &mut RunRecord| {
        r.summary.ci95.as_mut().unwrap().precision = Some(p);
        named(r)
    };
    let goal = vec![(
        "summary.ci95.precision.goals[0]".to_string(),
        Rule::IntervalsAgree,
    )];
    // Reached: the final interval is within the share, give or take the live judgement's.
    assert_eq!(
        with(outcome(BoundFigure::Rps, got * 1.02, true), &mut r),
        vec![]
    );
    assert_eq!(
        with(outcome(BoundFigure::Rps, got / 2.0, true), &mut r),
        goal
    );
    assert_eq!(with(outcome(BoundFigure::P99, 0.5, true), &mut r), goal);
    // Not reached: the run went on to the length asked, unless something stopped it.
    r.config.duration_s = Some(window + 8.0);
    let short = vec![("summary.duration_s".to_string(), Rule::IntervalsAgree)];
    assert_eq!(with(outcome(BoundFigure::Rps, 0.01, false), &mut r), short);
    r.interrupted = Some("SIGINT".into());
    settle(&mut r);
    assert_eq!(with(outcome(BoundFigure::Rps, 0.01, false), &mut r), vec![]);
    // A run of a count of requests is never run until precise.
    r.config.requests = Some(3_000);
    let counted = vec![("config.requests".to_string(), Rule::IntervalsAgree)];
    assert_eq!(
        with(outcome(BoundFigure::Rps, 0.01, false), &mut r),
        counted
    );
}

#[test]
fn a_load_that_was_not_steady_has_no_intervals() {
    use crate::record::model::{Bound, Ci95};
    let mut r = fixture("ok", 12, 250, 2000, 3, 0.0);
    settle(&mut r);
    let unsteady = Ci95 {
        unsteady: Some("scenario `up` changes its load over time (a ramp or a ladder)".into()),
        ..Ci95::default()
    };
    r.summary.ci95 = Some(unsteady.clone());
    assert_eq!(named(&r), vec![]);
    let bound = Bound {
        value: r.summary.rps,
        half_width: 1.0,
        batches: 12,
        batch_s: 1,
        effective: 12.0,
    };
    r.summary.ci95 = Some(Ci95 {
        rps: Some(bound),
        ..unsteady.clone()
    });
    assert_eq!(
        named(&r),
        [("summary.ci95.rps".to_string(), Rule::IntervalsAgree)]
    );
    // A load that changed is never run until precise.
    r.summary.ci95 = Some(Ci95 {
        precision: Some(crate::record::model::PrecisionOutcome {
            goals: vec![crate::record::model::PrecisionGoal {
                figure: crate::record::model::BoundFigure::P99,
                share: 0.02,
                part: None,
            }],
            reached: false,
            at_s: None,
        }),
        ..unsteady
    });
    assert_eq!(
        named(&r),
        [("summary.ci95.precision".to_string(), Rule::IntervalsAgree)]
    );
}

#[test]
fn a_search_whose_headline_is_not_what_its_steps_give_is_named() {
    use crate::record::find_max::{FindMax, FindMaxStep, SearchOutcome};
    use crate::record::model::LoadModel;
    let step = FindMaxStep::test;
    let mut r = consistent();
    let rps = r.summary.rps;
    let kept = FindMaxStep {
        p50_ms: r.summary.latency_ms.p50,
        p99_ms: r.summary.latency_ms.p99,
        measured_s: Some(r.summary.duration_s),
        ..step(100.0, rps, true)
    };
    let outcome = SearchOutcome {
        steps: vec![kept, step(200.0, rps * 10.0, false)],
        stopped: "the bisection converged".into(),
    };
    let found = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &outcome, Default::default());
    r.find_max = Some(found.clone());
    assert_eq!(named(&r), vec![]);
    let tampered = |edit: &dyn Fn(&mut FindMax)| {
        let mut r = r.clone();
        edit(r.find_max.as_mut().unwrap());
        named(&r)
    };
    let rule = |path: &str| vec![(path.to_string(), Rule::FindMaxAgrees)];
    assert_eq!(
        tampered(&|f| f.max_sustainable_rps = Some(12345.0)),
        rule("find_max.max_sustainable_rps")
    );
    // Without its break, the maximum would also be only a lower bound.
    assert_eq!(
        tampered(&|f| f.breaking_load = None),
        [
            ("find_max.breaking_load".to_string(), Rule::FindMaxAgrees),
            ("find_max.lower_bound".to_string(), Rule::FindMaxAgrees),
        ]
    );
    assert_eq!(
        tampered(&|f| f.lower_bound = Some("no break found within the budget".into())),
        rule("find_max.lower_bound")
    );
    assert_eq!(
        tampered(&|f| f.breaking_reason = Some("errors broke".into())),
        rule("find_max.breaking_reason")
    );
    // The record's figures must be the best step's: here the broken step's rps claims them.
    assert_eq!(
        tampered(&|f| f.steps[0].rps = rps + 1.0),
        [
            (
                "find_max.max_sustainable_rps".to_string(),
                Rule::FindMaxAgrees
            ),
            ("summary.rps".to_string(), Rule::FindMaxAgrees),
        ]
    );
    // Its measured length and precision outcome too; a record before they were kept has none.
    let length = tampered(&|f| f.steps[0].measured_s = Some(1.5));
    assert_eq!(length, rule("summary.duration_s"));
    let precise = tampered(&|f| f.steps[0].precise = true);
    assert_eq!(precise, rule("find_max.steps[0].precise"));
    assert_eq!(tampered(&|f| f.steps[0].measured_s = None), vec![]);
}

#[test]
fn a_ladder_that_is_not_its_histograms_is_named() {
    let mut r = consistent();
    r.summary.latency_ms.p50 = r.summary.latency_ms.p50.map(|v| v + 0.001);
    assert_eq!(
        named(&r),
        vec![(
            "summary.latency_ms.p50".to_string(),
            Rule::LadderFromHistogram
        )]
    );
}

#[test]
fn a_run_with_phases_must_say_its_load_changed() {
    let phase = |name: &str, vus: u32, ramp_from: Option<f64>| {
        let mut g = testing::group(GroupKind::Phase, name, Some("up"), 0);
        (g.target_vus, g.ramp_from) = (Some(vus), ramp_from);
        g
    };
    let unsteady = ("summary.ci95.unsteady".to_string(), Rule::IntervalsAgree);
    let says = |groups: Vec<Group>| {
        let mut r = steady_with_intervals();
        r.groups = groups;
        named(&r).contains(&unsteady)
    };
    // A stage that ramps, and a ladder's levels, change the load.
    assert!(says(vec![phase("stage 1: 0→4 VUs", 4, Some(0.0))]));
    let ladder = vec![phase("phase 1", 4, None), phase("phase 2", 8, None)];
    assert!(says(ladder.clone()));
    // Stages that hold one level do not: a steady load, with intervals.
    assert!(!says(vec![
        phase("stage 1", 4, None),
        phase("stage 2", 4, None)
    ]));
    let mut r = steady_with_intervals();
    r.groups = ladder;
    r.summary.ci95 = Some(crate::record::model::Ci95::unsteady("a ladder".into()));
    assert!(!named(&r).contains(&unsteady), "{:?}", named(&r));
}
