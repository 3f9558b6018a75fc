//! The plan's thresholds: `[thresholds]` → [`Threshold`]s, each metric's filter checked against
//! the scenarios, steps and phases the plan has.

use std::time::Duration;

use super::{Ctx, parse_duration};
use crate::error::Error;
use crate::plan::Scenario;
use crate::plan::file::{PlanFile, ThresholdEntry};
use crate::plan::threshold::{self, Threshold};

impl Ctx<'_> {
    /// The thresholds of `f` over `scenarios`; `later`: some gRPC step waits for its schema
    /// (whether it streams is not known yet).
    pub(super) fn thresholds(
        &self,
        f: &PlanFile,
        scenarios: &[Scenario],
        later: bool,
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
            if !later && let Some(what) = unmeasured(metric, scenarios) {
                return Err(self.at(
                    entries,
                    format!("`{key}` is a figure of {what}, and no step of this plan has one"),
                    Some("drop the threshold, or judge latency instead"),
                ));
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

/// What a stream threshold's `metric` needs when no step of `scenarios` measures it: a
/// streaming step (TTFT, gaps), one in LLM mode (TPOT), one whose replies are round trips
/// (bidirectional gRPC streams, WebSocket), or one with objectives (goodput).
fn unmeasured(metric: threshold::ThresholdMetric, scenarios: &[Scenario]) -> Option<&'static str> {
    use threshold::ThresholdMetric as M;
    let streams = || {
        scenarios
            .iter()
            .flat_map(|s| &s.steps)
            .filter_map(|st| st.stream.as_ref())
    };
    let (what, measured): (_, fn(&crate::plan::stream::StreamStep) -> bool) = match metric {
        M::Ttft | M::MessageGap => ("streams", |_| true),
        M::Tpot => ("LLM streams (sse = { llm = \"openai\" })", |s| {
            s.spec.is_llm()
        }),
        M::RoundTrip => ("round trips (bidirectional gRPC streams, WebSocket)", |s| {
            s.spec.round_trips()
        }),
        M::Goodput => ("streams with objectives (slo)", |s| {
            s.objectives().is_some()
        }),
        _ => return None,
    };
    (!streams().any(measured)).then_some(what)
}
