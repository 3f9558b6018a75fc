//! A `--fail-on` rule's part: `p99{step=pay} > +5%` judges the step `pay` of the plan's runs
//! instead of the run's pooled figure, with the filters a plan's thresholds take
//! (`{scenario=…}`, `{step=…}`, `{phase=…}`).

use crate::analysis::compare::{Comparison, GroupRows, MetricRow};
pub use crate::record::model::Part;
use crate::record::model::{GroupKind, RunRecord};

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

    /// The comparison's rows of the figures this part names in runs like `run`: its own, or,
    /// where the comparison judged it as what it stands for (a scenario's only step as its
    /// scenario, a plan's only scenario as the run), those.
    pub(crate) fn rows_in<'a>(
        &self,
        c: &'a Comparison,
        run: &RunRecord,
    ) -> Option<&'a [MetricRow]> {
        if let Some(g) = self.find(c).first() {
            return Some(&g.rows);
        }
        let g = self.group_in(run)?;
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

    /// Why no part was found: what the comparison did judge.
    pub(super) fn missing(&self, c: &Comparison) -> String {
        if c.groups.is_empty() {
            return format!(
                "the comparison judged no {self}: its runs have no scenarios, steps or phases \
                 of their own (a plan's only scenario, and a scenario's only step, are the run \
                 itself: drop the filter)"
            );
        }
        let parts: Vec<&str> = c.groups.iter().map(|g| g.key.path.as_str()).collect();
        format!(
            "the comparison judged no {self}; it judged {} (a plan's only scenario, and a \
             scenario's only step, are judged as the run or their scenario)",
            parts.join(", ")
        )
    }
}
