//! The parts of a plan's run: what a [`Group`] is ([`GroupKind`]), and a part named by a filter: `{scenario=NAME}`, `{step=NAME}` or `{phase=NAME}`,
//! as in `p99{step=pay}`. `--fail-on`, `volley ab --metric` and precision goals name one the
//! same way, and a record keeps a precision goal's part in this form.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Group, RunRecord};

/// What a [`Group`] breaks the results down by.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum GroupKind {
    /// One scenario of a plan.
    Scenario,
    /// One step (request) of a scenario.
    Step,
    /// One phase of a ladder profile (a fixed load held for a while).
    Phase,
}

impl GroupKind {
    /// Its word for people: "scenario", "step", "phase".
    pub fn word(self) -> &'static str {
        match self {
            Self::Scenario => "scenario",
            Self::Step => "step",
            Self::Phase => "phase",
        }
    }

    /// A group's name in tables: "scenario / step" for a step of `scenario`, else `name`.
    pub fn path(self, scenario: Option<&str>, name: &str) -> String {
        match (self, scenario) {
            (Self::Step, Some(sc)) => format!("{sc} / {name}"),
            _ => name.to_string(),
        }
    }
}

/// Which scenario, step or phase of a plan a figure is of. In a record: `{"step": "pay"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// `{scenario=NAME}`.
    Scenario(String),
    /// `{step=NAME}`: a step's name, its operation label, or `scenario / step`.
    Step(String),
    /// `{phase=NAME}`: a phase's name, or its 1-based number among the phases.
    Phase(String),
}

impl Part {
    /// Splits `p99{step=pay}` into the figure's name and its part (none without braces).
    pub fn split(text: &str) -> Result<(&str, Option<Self>), String> {
        let Some((head, rest)) = text.split_once('{') else {
            return Ok((text, None));
        };
        match rest.trim_end().strip_suffix('}') {
            Some(inner) => Ok((head.trim(), Some(Self::parse(inner)?))),
            None if rest.contains('}') => Err(format!(
                "`{text}` goes on after its `}}`: write e.g. p99{{step=pay}}"
            )),
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

    /// The first group of run `r` it names.
    pub fn group_in<'a>(&self, r: &'a RunRecord) -> Option<&'a Group> {
        self.groups_in(r).into_iter().next()
    }

    /// Every group of run `r` it names, in the record's order.
    pub fn groups_in<'a>(&self, r: &'a RunRecord) -> Vec<&'a Group> {
        let mut phase = 0;
        r.groups
            .iter()
            .filter(|g| {
                let path = g.path();
                self.names(g.kind, [&g.name, g.operation_label(), &path], &mut phase)
            })
            .collect()
    }

    /// The same kind of part, naming `name`.
    pub fn renamed(&self, name: &str) -> Self {
        match self {
            Self::Scenario(_) => Self::Scenario(name.into()),
            Self::Step(_) => Self::Step(name.into()),
            Self::Phase(_) => Self::Phase(name.into()),
        }
    }

    /// As written after a figure's name: `{step=pay}`.
    pub fn filter(&self) -> String {
        let (key, name) = match self {
            Self::Scenario(n) => ("scenario", n),
            Self::Step(n) => ("step", n),
            Self::Phase(n) => ("phase", n),
        };
        format!("{{{key}={name}}}")
    }
}

impl fmt::Display for Part {
    /// For sentences: "step `pay`".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scenario(n) => write!(f, "scenario `{n}`"),
            Self::Step(n) => write!(f, "step `{n}`"),
            Self::Phase(n) => write!(f, "phase `{n}`"),
        }
    }
}
