//! `volley verify`'s checks of the figures beside the latency: the send lag's and the other
//! ladders against their histograms, and the self-checks a record keeps.

use super::Rule;
use super::tests::{consistent, named};
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
