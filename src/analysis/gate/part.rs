//! A `--fail-on` rule's part: `p99{step=pay} > +5%` judges the step `pay` of the plan's runs
//! instead of the run's pooled figure, with the filters a plan's thresholds take
//! (`{scenario=…}`, `{step=…}`, `{phase=…}`).

use crate::analysis::compare::{Comparison, GroupRows, MetricRow};
pub use crate::record::model::Part;
use crate::record::model::{Group, GroupKind, RunRecord};

impl Part {
    /// The comparison's scenarios, steps or phases this part names, in its order.
    pub(crate) fn find<'a>(&self, c: &'a Comparison) -> Vec<&'a GroupRows> {
        let mut phase = 0;
        c.groups
            .iter()
            .filter(|g| {
                let k = &g.key;
                let own = k.path.rsplit(" / ").next().unwrap_or(&k.path);
                self.names(k.kind, [own, &k.name, &k.path], &mut phase)
            })
            .collect()
    }

    /// The comparison's rows that judge the first group this part names in runs like `run`
    /// ([`judged_in`](Self::judged_in)).
    pub(crate) fn rows_in<'a>(
        &self,
        c: &'a Comparison,
        run: &RunRecord,
    ) -> Option<&'a [MetricRow]> {
        let first = self.judged_in(c, Some(run)).into_iter().next();
        first.map(|(_, rows)| rows)
    }

    /// Every group this part names, each with its path and the comparison's rows that judge
    /// it: its own parts' rows first; then, from `run` (when given), the groups the comparison
    /// judged as what they stand for (a scenario's only step as its scenario, a plan's only
    /// scenario as the run).
    pub(crate) fn judged_in<'a>(
        &self,
        c: &'a Comparison,
        run: Option<&RunRecord>,
    ) -> Vec<(String, &'a [MetricRow])> {
        let mut judged: Vec<(String, &[MetricRow])> = self
            .find(c)
            .into_iter()
            .map(|g| (g.key.path.clone(), g.rows.as_slice()))
            .collect();
        let Some(run) = run else {
            return judged;
        };
        for g in self.groups_in(run) {
            let path = g.path();
            if judged.iter().any(|(p, _)| *p == path) {
                continue;
            }
            if let Some(rows) = stand_in(c, run, g) {
                judged.push((path, rows));
            }
        }
        judged
    }

    /// Why no part was found: the parts the runs have (those of `run`, a run of the baseline,
    /// else those the comparison judged).
    pub(super) fn missing(&self, c: &Comparison, run: Option<&RunRecord>) -> String {
        let parts: Vec<String> = match run {
            Some(r) => r.groups.iter().map(Group::path).collect(),
            None => c.groups.iter().map(|g| g.key.path.clone()).collect(),
        };
        if parts.is_empty() {
            return format!(
                "the runs have no {self}: they have no scenarios, steps or phases (a run of one \
                 URL)"
            );
        }
        format!("the runs have no {self}; they have {}", parts.join(", "))
    }
}

/// The comparison's rows that judge group `g` of runs like `run` when it has none of its own:
/// a scenario's only step's are its scenario's, a plan's only scenario's the run's; `None` for
/// a step among others, or a phase.
fn stand_in<'a>(c: &'a Comparison, run: &RunRecord, g: &Group) -> Option<&'a [MetricRow]> {
    let scenario = match g.kind {
        GroupKind::Step => g.scenario.as_deref()?,
        GroupKind::Scenario => &g.name,
        GroupKind::Phase => return None,
    };
    let lone = |kind: GroupKind, of: &str| {
        run.groups
            .iter()
            .filter(|o| o.kind == kind && o.scenario.as_deref().unwrap_or(&o.name) == of)
            .count()
            == 1
    };
    if g.kind == GroupKind::Step && !lone(GroupKind::Step, scenario) {
        return None;
    }
    let judged = c
        .groups
        .iter()
        .find(|k| k.key.kind == GroupKind::Scenario && k.key.name == scenario);
    match judged {
        Some(k) => Some(&k.rows),
        None => {
            let scenarios = run.groups.iter().filter(|o| o.kind == GroupKind::Scenario);
            (scenarios.count() == 1).then_some(c.rows.as_slice())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::{CompareOptions, Variant, compare};
    use crate::analysis::selfcheck::testing::group;
    use crate::record::fixture::record;

    /// A comparison of two single runs with these groups, and the baseline's run.
    fn judged(groups: &[(GroupKind, &str, Option<&str>)]) -> (Comparison, RunRecord) {
        let mut r = record("a", 6, 1000, 2000, 0, 0.0);
        r.groups = groups
            .iter()
            .map(|&(kind, name, scenario)| group(kind, name, scenario, 100))
            .collect();
        let variant = |label: &str| Variant {
            label: label.into(),
            source: label.into(),
            runs: vec![r.clone()],
        };
        let c = compare(&[variant("a"), variant("b")], CompareOptions::with_parts());
        (c, r)
    }

    #[test]
    fn every_group_a_part_names_is_judged_by_what_stands_for_it() {
        use GroupKind::{Scenario, Step};
        // `pay` is the only step of two scenarios: each is judged as its scenario.
        let (c, run) = judged(&[
            (Scenario, "fast", None),
            (Step, "pay", Some("fast")),
            (Scenario, "slow", None),
            (Step, "pay", Some("slow")),
        ]);
        let pay = Part::Step("pay".into());
        assert!(
            pay.find(&c).is_empty(),
            "lone steps have no rows of their own"
        );
        let found = pay.judged_in(&c, Some(&run));
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["fast / pay", "slow / pay"]);
        assert!(
            std::ptr::eq(found[1].1, c.groups[1].rows.as_slice()),
            "slow's rows"
        );
        assert!(
            pay.judged_in(&c, None).is_empty(),
            "without a run, nothing stands in"
        );
        // A plan's only scenario is judged as the run.
        let (c, run) = judged(&[
            (Scenario, "mix", None),
            (Step, "a", Some("mix")),
            (Step, "b", Some("mix")),
        ]);
        let found = Part::Scenario("mix".into()).judged_in(&c, Some(&run));
        assert_eq!(found.len(), 1);
        assert!(
            std::ptr::eq(found[0].1, c.rows.as_slice()),
            "the run's rows"
        );
        let nope = Part::Step("nope".into());
        assert!(nope.judged_in(&c, Some(&run)).is_empty());
        assert_eq!(
            nope.missing(&c, Some(&run)),
            "the runs have no step `nope`; they have mix, mix / a, mix / b"
        );
    }
}
