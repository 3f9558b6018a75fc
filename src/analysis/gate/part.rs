//! A `--fail-on` rule's part: `p99{step=pay} > +5%` judges the step `pay` of the plan's runs
//! instead of the run's pooled figure, with the filters a plan's thresholds take
//! (`{scenario=…}`, `{step=…}`, `{phase=…}`).

use std::fmt;

use crate::analysis::compare::{Comparison, GroupRows};
use crate::record::model::{Group, GroupKind, RunRecord};

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
    /// Splits `p99{step=pay}` into the metric's name and its part (none without braces).
    pub fn split(text: &str) -> Result<(&str, Option<Self>), String> {
        let Some((head, rest)) = text.split_once('{') else {
            return Ok((text, None));
        };
        match rest.trim_end().strip_suffix('}') {
            Some(inner) => Ok((head.trim(), Some(Self::parse(inner)?))),
            None => Err("a `{` without its `}`: write e.g. p99{step=pay}".into()),
        }
    }

    /// Reads `key=value`, the braces taken off.
    fn parse(inner: &str) -> Result<Self, String> {
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

    /// Whether it names a group of `kind` called `names` (its name, its operation label, its
    /// path "scenario / step"); `phase` counts the phases met so far, this one included when it
    /// is one (start at 0 and pass the groups in order).
    pub fn names(&self, kind: GroupKind, names: [&str; 3], phase: &mut usize) -> bool {
        match self {
            Self::Scenario(n) => kind == GroupKind::Scenario && names[0] == n,
            Self::Step(n) => kind == GroupKind::Step && names.contains(&n.as_str()),
            Self::Phase(n) if kind == GroupKind::Phase => {
                *phase += 1;
                names[0] == n || n.parse() == Ok(*phase)
            }
            Self::Phase(_) => false,
        }
    }

    /// The comparison's scenarios, steps or phases this part names, in its order.
    pub(super) fn find<'a>(&self, c: &'a Comparison) -> Vec<&'a GroupRows> {
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

    /// The first group of run `r` it names.
    pub fn group_in<'a>(&self, r: &'a RunRecord) -> Option<&'a Group> {
        let mut phase = 0;
        r.groups.iter().find(|g| {
            let path = g.path();
            self.names(g.kind, [&g.name, g.operation_label(), &path], &mut phase)
        })
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
