//! `volley verify`'s checks of the figures beside the latency: the send lag's and the other
//! ladders against their histograms, and the self-checks a record keeps.

use super::Rule;
use super::tests::{consistent, named, steady_with_intervals};
use crate::analysis::verdict::settle;

#[test]
fn a_send_lag_or_service_ladder_that_is_not_its_histogram_is_named() {
    let mut h = crate::record::recorder::new_histogram();
    for us in 1..=2_000u64 {
        h.record(us * 3).unwrap();
    }
    let mut r = consistent();
    r.histograms.lag_us = Some(crate::record::encode_histogram(&h));
    r.generator.lag_ms = Some(crate::record::figures::percentiles(&h));
    assert_eq!(named(&r), vec![]);
    let lag = r.generator.lag_ms.as_mut().unwrap();
    lag.p99 = lag.p99.map(|v| v + 0.001);
    assert_eq!(
        named(&r),
        vec![(
            "generator.lag_ms.p99".to_string(),
            Rule::LadderFromHistogram
        )]
    );
    // A rung the record leaves out claims nothing.
    r.generator.lag_ms.as_mut().unwrap().p99 = None;
    assert_eq!(named(&r), vec![]);
}

#[test]
fn a_schedule_check_that_its_own_figures_contradict_is_named() {
    use crate::analysis::selfcheck::critical;
    use crate::record::selfcheck::{SelfCheck, SelfCheckCode, SelfCheckOutcome};
    let check = |outcome, d: f64| SelfCheck {
        code: SelfCheckCode::ScheduleKept,
        outcome,
        figures: [
            ("gaps_planned", 500.0),
            ("gaps_sent", 500.0),
            ("ks_distance", d),
            ("ks_critical", critical(500, 500)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
        message: "the sends followed the schedule".into(),
    };
    let mut r = consistent();
    r.self_checks = vec![check(SelfCheckOutcome::Passed, 0.01)];
    assert_eq!(named(&r), vec![]);
    // Passed, with a distance above its critical value.
    r.self_checks = vec![check(SelfCheckOutcome::Passed, 0.5)];
    let at = |name: &str| (format!("self_checks[0].{name}"), Rule::SelfChecksAgree);
    assert_eq!(named(&r), vec![at("figures.ks_distance")]);
    // A critical value that is not its gap counts'.
    r.self_checks[0].figures.insert("ks_critical".into(), 0.9);
    assert_eq!(named(&r), vec![at("figures.ks_critical")]);
    // Failed, and no warning says so.
    r.self_checks = vec![check(SelfCheckOutcome::Failed, 0.5)];
    assert_eq!(named(&r), vec![at("outcome")]);
    r.warnings = crate::analysis::warnings::diagnose(&r);
    settle(&mut r);
    assert_eq!(named(&r), vec![]);
}

/// Scenarios that run apart — an iteration count per VU on several VUs, a count beside another
/// scenario, spans that differ, a window that begins before any load — measure a load that
/// changed: a record with intervals must say so (`summary.ci95.unsteady`), as the plan's own
/// check says before the run. Before, only ramps and ladders (phases) were held to it.
#[test]
fn scenarios_apart_must_say_their_load_changed() {
    use crate::record::model::{LoadModel, ProfileKind, ScenarioConfig, ScenarioLoad};
    let scenario = |name: &str, start_after_s: f64| ScenarioConfig {
        name: name.into(),
        profile: "4 VUs for 12s".into(),
        start_after_s,
        steps: vec!["get".into()],
        load: Some(ScenarioLoad {
            model: LoadModel::Closed,
            profile: ProfileKind::ConstantVus,
            peak_vus: Some(4),
            peak_rate_per_sec: None,
            max_vus: None,
            duration_s: Some(12.0),
            iterations: None,
            stages: 1,
            connections: None,
            arrivals: None,
            seed: None,
        }),
    };
    let unsteady = ("summary.ci95.unsteady".to_string(), Rule::IntervalsAgree);
    let says = |scenarios: Vec<ScenarioConfig>| {
        let mut r = steady_with_intervals();
        r.config.scenarios = scenarios;
        named(&r).contains(&unsteady)
    };
    let counted = |vus: u32, profile: ProfileKind| {
        let mut s = scenario("counted", 0.0);
        let load = s.load.as_mut().unwrap();
        (load.profile, load.peak_vus) = (profile, Some(vus));
        (load.iterations, load.duration_s) = (Some(100), None);
        s
    };
    // One scenario, or two over one span: steady.
    assert!(!says(vec![scenario("a", 0.0)]));
    assert!(!says(vec![scenario("a", 0.0), scenario("b", 0.0)]));
    // One VU's own count ends all at once; a lone count is steady too.
    assert!(!says(vec![counted(1, ProfileKind::PerVuIterations)]));
    assert!(!says(vec![counted(4, ProfileKind::Iterations)]));
    // Changed loads.
    assert!(says(vec![scenario("a", 0.0), scenario("late", 2.0)]));
    assert!(says(vec![counted(4, ProfileKind::PerVuIterations)]));
    assert!(says(vec![
        scenario("a", 0.0),
        counted(4, ProfileKind::Iterations)
    ]));
    assert!(says(vec![scenario("idle first", 3.0)]));
    // Said: nothing to find.
    let mut r = steady_with_intervals();
    r.config.scenarios = vec![scenario("a", 0.0), scenario("late", 2.0)];
    r.summary.ci95 = Some(crate::record::model::Ci95::unsteady("apart".into()));
    assert!(!named(&r).contains(&unsteady), "{:?}", named(&r));
}
