//! Group checks: scenarios add up to the run, steps to their scenario, phases to their scenario.

use super::counts::group_place;
use super::{failed, not_applicable, passed};
use crate::record::model::{Group, GroupKind, RunRecord};
use crate::record::selfcheck::{SelfCheck, SelfCheckCode};

/// Requests and errors of a set of groups, or of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Totals {
    requests: u64,
    errors: u64,
}

fn sum<'a>(groups: impl Iterator<Item = &'a Group>) -> Totals {
    groups.fold(
        Totals {
            requests: 0,
            errors: 0,
        },
        |t, g| Totals {
            requests: t.requests + g.requests,
            errors: t.errors + g.errors,
        },
    )
}

fn of_kind(r: &RunRecord, kind: GroupKind) -> impl Iterator<Item = &Group> {
    r.groups.iter().filter(move |g| g.kind == kind)
}

/// The scenarios named by steps or phases, in first-seen order.
fn scenarios_of(r: &RunRecord, kind: GroupKind) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for g in of_kind(r, kind) {
        if let Some(sc) = g.scenario.as_deref()
            && !names.contains(&sc)
        {
            names.push(sc);
        }
    }
    names
}

/// A scenario's totals: its group, or the run's when the run has only that scenario and no
/// scenario group (a plan of one scenario that measured nothing leaves its group out).
fn scenario_totals(r: &RunRecord, name: &str) -> Option<Totals> {
    let mut groups = of_kind(r, GroupKind::Scenario).peekable();
    if groups.peek().is_none() && r.config.scenarios.len() <= 1 {
        return Some(Totals {
            requests: r.summary.requests,
            errors: r.summary.errors,
        });
    }
    groups
        .find(|g| g.name == name)
        .map(|g| sum([g].into_iter()))
}

/// Whether a scenario's phases cover its whole time: they follow one another from 0 s without
/// a gap (a ladder's do), so every request of the scenario falls in one of them.
fn phases_cover(phases: &[&Group]) -> bool {
    let mut spans: Vec<(f64, f64)> = Vec::with_capacity(phases.len());
    for p in phases {
        let (Some(start), Some(end)) = (p.start_s, p.end_s) else {
            return false;
        };
        spans.push((start, end));
    }
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut at = 0.0;
    for (start, end) in spans {
        if (start - at).abs() > 1e-6 {
            return false;
        }
        at = end;
    }
    true
}

/// Scenarios add up to the run; steps to their scenario; phases to their scenario (equal when
/// they cover it, never more).
pub(super) fn groups_add_up(r: &RunRecord) -> SelfCheck {
    let code = SelfCheckCode::GroupsAddUp;
    if r.groups.is_empty() {
        return not_applicable(
            code,
            "no scenario, step or phase results (quick mode): nothing to add up".into(),
        );
    }
    let run = Totals {
        requests: r.summary.requests,
        errors: r.summary.errors,
    };
    let fail = |what: String, parts: Totals, whole: Totals| {
        failed(
            code,
            &[
                ("parts_requests", parts.requests as f64),
                ("whole_requests", whole.requests as f64),
                ("parts_errors", parts.errors as f64),
                ("whole_errors", whole.errors as f64),
            ],
            format!(
                "the groups do not add up: {what} hold {} requests and {} errors, the whole {} \
                 and {}",
                parts.requests, parts.errors, whole.requests, whole.errors
            ),
        )
    };
    let scenarios = of_kind(r, GroupKind::Scenario).count();
    if scenarios > 0 {
        let parts = sum(of_kind(r, GroupKind::Scenario));
        if parts != run {
            return fail("the scenarios".into(), parts, run);
        }
    }
    let mut steps = 0;
    for sc in scenarios_of(r, GroupKind::Step) {
        let mine: Vec<&Group> = of_kind(r, GroupKind::Step)
            .filter(|g| g.scenario.as_deref() == Some(sc))
            .collect();
        steps += mine.len();
        let parts = sum(mine.into_iter());
        match scenario_totals(r, sc) {
            Some(whole) if whole == parts => {}
            Some(whole) => return fail(format!("the steps of scenario {sc}"), parts, whole),
            None => return missing(sc),
        }
    }
    let mut phases = 0;
    for sc in scenarios_of(r, GroupKind::Phase) {
        let mine: Vec<&Group> = of_kind(r, GroupKind::Phase)
            .filter(|g| g.scenario.as_deref() == Some(sc))
            .collect();
        phases += mine.len();
        let parts = sum(mine.iter().copied());
        let Some(whole) = scenario_totals(r, sc) else {
            return missing(sc);
        };
        let more = parts.requests > whole.requests || parts.errors > whole.errors;
        if more || (phases_cover(&mine) && parts != whole) {
            return fail(format!("the phases of scenario {sc}"), parts, whole);
        }
    }
    passed(
        code,
        &[
            ("scenarios", scenarios as f64),
            ("steps", steps as f64),
            ("phases", phases as f64),
        ],
        format!(
            "{scenarios} scenario(s) add up to the run, {steps} step(s) and {phases} phase(s) \
             to their scenarios"
        ),
    )
}

/// Steps or phases of a scenario the record has no results for.
fn missing(scenario: &str) -> SelfCheck {
    failed(
        SelfCheckCode::GroupsAddUp,
        &[],
        format!(
            "the groups do not add up: {} has steps or phases but no results of its own",
            group_place(GroupKind::Scenario, scenario, None)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::super::testing::{group, phase};
    use super::*;
    use crate::record::fixture::record;
    use crate::record::selfcheck::SelfCheckOutcome::{Failed, NotApplicable, Passed};

    /// A run of 300 requests: scenario "shop" (200: steps 150 + 50, two phases covering it)
    /// and scenario "admin" (100, one step).
    fn plan_record() -> RunRecord {
        let mut r = record("plan", 3, 100, 2000, 0, 0.0);
        r.groups = vec![
            group(GroupKind::Scenario, "shop", None, 200),
            group(GroupKind::Scenario, "admin", None, 100),
            group(GroupKind::Step, "list", Some("shop"), 150),
            group(GroupKind::Step, "get", Some("shop"), 50),
            group(GroupKind::Step, "edit", Some("admin"), 100),
            phase("shop", 0.0, 1.5, 120),
            phase("shop", 1.5, 3.0, 80),
        ];
        r
    }

    #[test]
    fn groups_that_add_up_pass_and_quick_mode_is_not_applicable() {
        let c = groups_add_up(&plan_record());
        assert_eq!(c.outcome, Passed, "{c:?}");
        assert_eq!(c.figures["steps"], 3.0);
        assert_eq!(c.figures["phases"], 2.0);
        let quick = record("quick", 3, 100, 2000, 0, 0.0);
        assert_eq!(groups_add_up(&quick).outcome, NotApplicable);
    }

    #[test]
    fn scenarios_must_add_up_to_the_run() {
        let mut r = plan_record();
        r.groups[1].requests = 99;
        let c = groups_add_up(&r);
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!(
            c.message.contains("the scenarios hold 299 requests"),
            "{}",
            c.message
        );
    }

    #[test]
    fn steps_must_add_up_to_their_scenario() {
        let mut r = plan_record();
        r.groups[3].errors = 1;
        let c = groups_add_up(&r);
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!(
            c.message.contains("steps of scenario shop"),
            "{}",
            c.message
        );
    }

    #[test]
    fn phases_add_up_when_they_cover_the_scenario_and_never_exceed_it() {
        let mut r = plan_record();
        r.groups[6].requests = 79;
        let c = groups_add_up(&r);
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!(
            c.message.contains("phases of scenario shop"),
            "{}",
            c.message
        );
        // With a gap between the phases, fewer requests than the scenario's are fine…
        r.groups[6].start_s = Some(2.0);
        assert_eq!(groups_add_up(&r).outcome, Passed);
        // …more never are.
        r.groups[6].requests = 81;
        assert_eq!(groups_add_up(&r).outcome, Failed);
    }

    #[test]
    fn a_single_scenario_without_its_group_uses_the_run() {
        let mut r = record("one", 3, 100, 2000, 0, 0.0);
        r.groups = vec![group(GroupKind::Step, "only", Some("default"), 300)];
        assert_eq!(groups_add_up(&r).outcome, Passed);
        r.groups[0].requests = 299;
        assert_eq!(groups_add_up(&r).outcome, Failed);
    }
}
