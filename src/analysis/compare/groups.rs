//! The scenarios, steps and phases of plan runs, compared one by one.
//!
//! A plan's run figures pool its parts: with a 1 ms step and a 5 ms step the run's p50 is
//! neither's, and a step that got 20 % slower moves it by what that step's share of the requests
//! makes of 20 %. So `volley compare` (and a suite's comparison of its targets) also judges each
//! part on its own, by the same tests as the run (over repeats; single runs by their own
//! intervals, weak) and in the same Holm family.
//!
//! Which parts: those of the baseline's first run that has any, and of them
//! - the scenarios, when there are two or more (one scenario is the run itself);
//! - the steps of each scenario that has two or more (a lone step is its scenario);
//! - every phase (a phase is never the run: a ladder's run figures pool its levels);
//!
//! each only if every variant has it in some run, matched on kind, scenario and name — a step's
//! name being its operation label (`groups[].operation`, else its name), on which a suite's
//! targets with plans of their own join their steps too.

use super::Variant;
use crate::record::model::{Group, GroupKind, RunRecord};

/// One scenario, step or phase, as the records name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupKey {
    /// What it is.
    pub kind: GroupKind,
    /// The scenario it belongs to (steps and phases).
    pub scenario: Option<String>,
    /// Its name; a step's operation label ([`Group::operation_label`]).
    pub name: String,
    /// Its name in tables ("scenario / step" for a step).
    pub path: String,
}

impl GroupKey {
    fn of(g: &Group) -> Self {
        Self {
            kind: g.kind,
            scenario: g.scenario.clone(),
            name: label(g).to_string(),
            path: g.path(),
        }
    }

    /// This group in run `r`, if the run has it.
    pub fn find<'a>(&self, r: &'a RunRecord) -> Option<&'a Group> {
        r.groups
            .iter()
            .find(|g| g.kind == self.kind && g.scenario == self.scenario && label(g) == self.name)
    }
}

/// What a group is matched on besides kind and scenario: a step's operation label, else the
/// name.
fn label(g: &Group) -> &str {
    match g.kind {
        GroupKind::Step => g.operation_label(),
        _ => &g.name,
    }
}

/// The groups a comparison of `variants` judges, in the baseline's order.
pub(super) fn keys(variants: &[Variant]) -> Vec<GroupKey> {
    let Some(first) = variants.first().and_then(Variant::parts_run) else {
        return Vec::new();
    };
    let groups = &first.groups;
    let count = |kind: GroupKind, scenario: Option<&String>| {
        groups
            .iter()
            .filter(|g| {
                g.kind == kind && (kind == GroupKind::Scenario || g.scenario.as_ref() == scenario)
            })
            .count()
    };
    groups
        .iter()
        .filter(|g| match g.kind {
            GroupKind::Scenario => count(GroupKind::Scenario, None) >= 2,
            GroupKind::Step => count(GroupKind::Step, g.scenario.as_ref()) >= 2,
            GroupKind::Phase => true,
        })
        .map(GroupKey::of)
        .filter(|key| {
            variants
                .iter()
                .all(|v| v.runs.iter().any(|r| key.find(r).is_some()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{run, variant};
    use super::super::{ChangeVerdict, CompareOptions, Method, Metric, compare};
    use super::*;
    use crate::analysis::selfcheck::testing::group;
    use crate::record::model::{Bound, Ci95};

    /// A group with throughput `rps` and p50 `p50_ms` (± `half` %, over 6 effective batches).
    fn part(kind: GroupKind, name: &str, scenario: Option<&str>, rps: f64, p50_ms: f64) -> Group {
        let mut g = group(kind, name, scenario, 1000);
        g.rps = rps;
        g.latency_ms.p50 = Some(p50_ms);
        let bound = |value: f64| Bound {
            value,
            half_width: 0.01 * value,
            batches: 6,
            batch_s: 1,
            effective: 6.0,
        };
        g.ci95 = Some(Ci95 {
            rps: Some(bound(rps)),
            p50_ms: Some(bound(p50_ms)),
            ..Ci95::default()
        });
        g
    }

    /// A run of one scenario `mix` with steps `fast` (1 ms) and `slow` (`slow_ms`), a scenario
    /// `other` with one step `mid`, and a phase.
    fn plan_run(slow_ms: f64, at_s: u64) -> RunRecord {
        let mut r = run(1000.0, 2.0, at_s);
        r.groups = vec![
            part(GroupKind::Scenario, "mix", None, 600.0, 1.5),
            part(GroupKind::Step, "fast", Some("mix"), 300.0, 1.0),
            part(GroupKind::Step, "slow", Some("mix"), 300.0, slow_ms),
            part(GroupKind::Scenario, "other", None, 400.0, 3.0),
            part(GroupKind::Step, "mid", Some("other"), 400.0, 3.0),
            part(GroupKind::Phase, "phase 1", Some("mix"), 600.0, 1.5),
        ];
        r
    }

    fn judged() -> CompareOptions {
        CompareOptions::with_parts()
    }

    fn verdict(c: &super::super::Comparison, path: &str, metric: Metric) -> ChangeVerdict {
        let g = c.groups.iter().find(|g| g.key.path == path).unwrap();
        let row = g.rows.iter().find(|r| r.metric == metric).unwrap();
        row.changes[1].as_ref().unwrap().verdict
    }

    #[test]
    fn the_parts_judged_are_those_that_are_not_the_run_itself() {
        let v = [
            variant("a", vec![plan_run(5.0, 0)]),
            variant("b", vec![plan_run(5.0, 9)]),
        ];
        let paths: Vec<String> = keys(&v).into_iter().map(|k| k.path).collect();
        // `other / mid` is its scenario; both scenarios are judged, being two.
        assert_eq!(
            paths,
            ["mix", "mix / fast", "mix / slow", "other", "phase 1"]
        );
        // One scenario alone is the run: not judged, nor its only step.
        let mut lone = plan_run(5.0, 0);
        lone.groups.retain(|g| g.name == "other" || g.name == "mid");
        let v = [variant("a", vec![lone.clone()]), variant("b", vec![lone])];
        assert!(keys(&v).is_empty());
        // A part that a variant lacks is not judged.
        let mut without = plan_run(5.0, 9);
        without.groups.retain(|g| g.name != "slow");
        let v = [
            variant("a", vec![plan_run(5.0, 0)]),
            variant("b", vec![without]),
        ];
        assert!(!keys(&v).iter().any(|k| k.name == "slow"));
    }

    #[test]
    fn steps_are_matched_on_their_operation_label() {
        // A suite's targets with plans of their own: B's step `slow` is `post` in its plan, and
        // both carry the label `pay`.
        let labelled = |name: &str, at_s: u64| {
            let mut r = plan_run(5.0, at_s);
            for g in r.groups.iter_mut().filter(|g| g.name == "slow") {
                g.name = name.into();
                g.operation = Some("pay".into());
            }
            r
        };
        let v = [
            variant("a", vec![labelled("slow", 0)]),
            variant("b", vec![labelled("post", 9)]),
        ];
        let keys = keys(&v);
        let pay = keys
            .iter()
            .find(|k| k.name == "pay")
            .expect("joined on the label");
        assert_eq!(pay.path, "mix / slow", "named as the baseline names it");
        assert_eq!(pay.find(&v[1].runs[0]).unwrap().name, "post");
    }

    #[test]
    fn single_runs_judge_each_part_by_its_own_intervals() {
        let v = [
            variant("a", vec![plan_run(5.0, 0)]),
            variant("b", vec![plan_run(6.0, 9)]),
        ];
        let c = compare(&v, judged());
        assert_eq!(verdict(&c, "mix / slow", Metric::P50), ChangeVerdict::Worse);
        assert_eq!(
            verdict(&c, "mix / fast", Metric::P50),
            ChangeVerdict::Equivalent
        );
        assert_eq!(
            verdict(&c, "other", Metric::Throughput),
            ChangeVerdict::Equivalent
        );
        let slow = &c.groups[2]
            .rows
            .iter()
            .find(|r| r.metric == Metric::P50)
            .unwrap();
        let change = slow.changes[1].as_ref().unwrap();
        assert_eq!(change.method, Some(Method::RunIntervals));
        assert!((change.change.unwrap() - 20.0).abs() < 1e-9, "{change:?}");
        // Figures without an interval of their own get no verdict from single runs.
        assert_eq!(
            verdict(&c, "mix / slow", Metric::P90),
            ChangeVerdict::NotEnoughData
        );
        // Every part's tests are in the comparison's one Holm family.
        let run_tests = compare(&v, CompareOptions::default()).tests;
        assert_eq!(c.tests, run_tests + 5 * 2, "5 parts × (throughput, p50)");
    }

    #[test]
    fn repeats_judge_each_part_by_the_t_test_over_runs() {
        let side = |slow: &[f64], from: u64| -> Vec<RunRecord> {
            slow.iter()
                .enumerate()
                .map(|(i, &ms)| plan_run(ms, from + i as u64))
                .collect()
        };
        let a = variant("a", side(&[5.0, 5.05, 4.95, 5.02], 0));
        let b = variant("b", side(&[6.0, 6.04, 5.97, 6.01], 10));
        let c = compare(&[a, b], judged());
        assert_eq!(verdict(&c, "mix / slow", Metric::P50), ChangeVerdict::Worse);
        let g = &c.groups[2];
        assert_eq!(g.rows[0].estimates[0].values.len(), 4);
        let p50 = g.rows.iter().find(|r| r.metric == Metric::P50).unwrap();
        assert_eq!(
            p50.changes[1].as_ref().unwrap().method,
            Some(Method::Repeats)
        );
        // One folder of repeats alone: each part's spread, nothing to judge.
        let alone = compare(&[variant("a", side(&[5.0, 5.1, 4.9], 0))], judged());
        let slow = &alone.groups[2].rows;
        assert!(
            slow.iter()
                .all(|r| r.changes == [None] && r.estimates[0].values.len() == 3)
        );
        assert!(slow[0].estimates[0].ci.is_some(), "{:?}", slow[0]);
        // Without `groups` nothing of the parts is judged.
        let plain = compare(
            &[
                variant("a", side(&[5.0; 3], 0)),
                variant("b", side(&[6.0; 3], 9)),
            ],
            CompareOptions::default(),
        );
        assert!(plain.groups.is_empty());
    }

    #[test]
    fn a_part_that_drifts_while_the_runs_came_in_blocks_is_named_in_the_warning() {
        // The slow step's p50 climbs 0.05 ms a minute through A's runs and then B's, and its
        // scenario's with it; the run's own figures do not move.
        let side = |from: u64| -> Vec<RunRecord> {
            (0..4)
                .map(|i| {
                    let at = from + 60 * i;
                    let noise = if i % 2 == 0 { 0.002 } else { -0.002 };
                    let drift = 0.05 * at as f64 / 60.0 + noise;
                    let mut r = plan_run(5.0 + drift, at);
                    r.groups[0].latency_ms.p50 = Some(1.5 + drift);
                    r
                })
                .collect()
        };
        let c = compare(&[variant("a", side(0)), variant("b", side(240))], judged());
        let g = c
            .groups
            .iter()
            .find(|g| g.key.path == "mix / slow")
            .unwrap();
        let p50 = g.rows.iter().find(|r| r.metric == Metric::P50).unwrap();
        assert!(p50.changes[1].as_ref().unwrap().confounded, "{p50:?}");
        assert_eq!(c.warnings.len(), 1, "one per variant: {:?}", c.warnings);
        let w = &c.warnings[0];
        assert!(w.starts_with("order and drift confounded (b vs a)"), "{w}");
        assert!(w.contains(" — in mix: latency p50 +"), "{w}");
        assert!(w.contains("; in mix / slow: latency p50 +"), "{w}");
    }
}
