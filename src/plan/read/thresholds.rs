//! The plan's thresholds: `[thresholds]` → [`Threshold`]s, each metric's filter checked against
//! the scenarios, steps and phases the plan has.

use std::time::Duration;

use super::{Ctx, parse_duration};
use crate::error::Error;
use crate::plan::Scenario;
use crate::plan::file::{PlanFile, ThresholdEntry};
use crate::plan::threshold::{self, Threshold};

impl Ctx<'_> {
    pub(super) fn thresholds(
        &self,
        f: &PlanFile,
        scenarios: &[Scenario],
    ) -> Result<Vec<Threshold>, Error> {
        let mut out = Vec::new();
        for (key, entries) in &f.thresholds {
            let (metric, filter) = threshold::parse_metric(key).map_err(|why| {
                self.at(
                    entries,
                    why,
                    Some("e.g. \"latency{step=get_task}\" = [\"p95 < 5ms\"]"),
                )
            })?;
            if let Some(filter) = &filter {
                let exists = match filter {
                    threshold::Filter::Scenario(s) => scenarios.iter().any(|sc| &sc.name == s),
                    threshold::Filter::Step(s) => scenarios
                        .iter()
                        .any(|sc| sc.steps.iter().any(|st| &st.name == s)),
                    threshold::Filter::Phase(p) => scenarios.iter().any(|sc| {
                        sc.phases
                            .iter()
                            .enumerate()
                            .any(|(i, ph)| &ph.name == p || (i + 1).to_string() == *p)
                    }),
                };
                if !exists {
                    return Err(self.at(
                        entries,
                        format!("`{key}` filters on something the plan does not have"),
                        Some("use the name of a scenario, step or phase of this plan"),
                    ));
                }
            }
            for entry in entries.get_ref() {
                let (condition, abort_on_fail, grace) = match entry.get_ref() {
                    ThresholdEntry::Condition(c) => (c.clone(), false, Duration::ZERO),
                    ThresholdEntry::Full {
                        condition,
                        abort_on_fail,
                        grace,
                    } => {
                        let grace = match grace {
                            Some(g) => {
                                parse_duration(g).map_err(|why| self.at(entry, why, None))?
                            }
                            None => Duration::ZERO,
                        };
                        (condition.clone(), *abort_on_fail, grace)
                    }
                };
                if abort_on_fail && metric.of_streams() {
                    return Err(self.at(
                        entry,
                        format!("`{key}` is judged when the run ends, so it cannot abort it"),
                        Some("drop abort_on_fail, or abort on latency or errors"),
                    ));
                }
                let (stat, op, bound) =
                    threshold::parse_condition(metric, &condition).map_err(|why| {
                        self.at(
                            entry,
                            why,
                            Some("e.g. \"p95 < 5ms\", \"rate < 1%\", \"> 100\""),
                        )
                    })?;
                out.push(Threshold {
                    metric_text: key.clone(),
                    condition_text: condition,
                    metric,
                    filter: filter.clone(),
                    stat,
                    op,
                    bound,
                    abort_on_fail,
                    grace,
                });
            }
        }
        Ok(out)
    }
}
