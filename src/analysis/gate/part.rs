//! A `--fail-on` rule's part: `p99{step=pay} > +5%` judges the step `pay` of the plan's runs
//! instead of the run's pooled figure, with the filters a plan's thresholds take
//! (`{scenario=…}`, `{step=…}`, `{phase=…}`).

use std::fmt;

use crate::analysis::compare::{Comparison, GroupRows};
use crate::record::model::GroupKind;

/// Which scenario, step or phase of a plan a rule judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// `{scenario=NAME}`.
    Scenario(String),
    /// `{step=NAME}`: a step's name, its operation label, or `scenario / step`.
    Step(String),
    /// `{phase=NAME}`: a phase's name, or its 1-based number among the phases compared.
    Phase(String),
}

impl Part {
    /// Reads `key=value`, the braces taken off.
    pub(super) fn parse(inner: &str) -> Result<Self, String> {
        let Some((key, value)) = inner.split_once('=') else {
            return Err(format!(
                "`{{{inner}}}` is not a filter; write {{scenario=NAME}}, {{step=NAME}} or \
                 {{phase=NAME}}"
            ));
        };
        let value = value.trim().trim_matches('"').to_string();
        if value.is_empty() {
            return Err(format!("`{{{inner}}}` names nothing"));
        }
        Ok(match key.trim() {
            "scenario" => Self::Scenario(value),
            "step" => Self::Step(value),
            "phase" => Self::Phase(value),
            other => {
                return Err(format!(
                    "unknown filter `{other}`; use scenario=, step= or phase="
                ));
            }
        })
    }

    /// The comparison's scenarios, steps or phases this part names, in its order.
    pub(super) fn find<'a>(&self, c: &'a Comparison) -> Vec<&'a GroupRows> {
        let mut phase = 0;
        c.groups
            .iter()
            .filter(|g| {
                let k = &g.key;
                match self {
                    Self::Scenario(n) => k.kind == GroupKind::Scenario && k.name == *n,
                    Self::Step(n) => {
                        let own = k.path.rsplit(" / ").next();
                        k.kind == GroupKind::Step
                            && (k.name == *n || k.path == *n || own == Some(n.as_str()))
                    }
                    Self::Phase(n) if k.kind == GroupKind::Phase => {
                        phase += 1;
                        k.name == *n || n.parse() == Ok(phase)
                    }
                    Self::Phase(_) => false,
                }
            })
            .collect()
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

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scenario(n) => write!(f, "scenario `{n}`"),
            Self::Step(n) => write!(f, "step `{n}`"),
            Self::Phase(n) => write!(f, "phase `{n}`"),
        }
    }
}
