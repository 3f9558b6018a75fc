//! Per-target plans: which plan a target runs (its own or the suite's) with which variables,
//! which targets `--only` keeps, and whether the targets' tests are like for like (the same
//! load; the same operations, or a note saying which are missing where).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::super::file::{SuiteFile, SuiteTargetFile};
use super::super::load::{difference, missing_operations, operations};
use super::super::{Smoke, SuiteTarget};
use super::{Ctx, SMOKE_TIME_SCALE};
use crate::error::Error;
use crate::plan::Plan;
use crate::plan::set_key::SetKey;

/// A target's plan file, its plan, and its smoke plan.
type Plans = (PathBuf, Plan, Option<Plan>);

impl Ctx<'_> {
    /// `--set target.base_url` would send every target's requests to one place.
    pub(super) fn check_sets(&self) -> Result<(), Error> {
        match self
            .options
            .sets
            .iter()
            .find(|(k, _)| *k == SetKey::BaseUrl)
        {
            Some(_) => Err(Error::Invalid {
                what: "--set".into(),
                why: format!(
                    "target.base_url is each target's own in a suite (its `base_url`); --set \
                     takes plan variables (NAME=VALUE or vars.NAME=VALUE) and the target's other \
                     keys ({})",
                    SetKey::TARGET
                        .iter()
                        .filter(|k| **k != SetKey::BaseUrl)
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
            None => Ok(()),
        }
    }

    /// The names of the targets to run: `--only`'s (each must be a target), else all.
    pub(super) fn selected(&self, f: &SuiteFile) -> Result<BTreeSet<String>, Error> {
        let all: Vec<&str> = f
            .targets
            .iter()
            .map(|t| t.get_ref().name.get_ref().as_str())
            .collect();
        if self.options.only.is_empty() {
            return Ok(all.iter().map(|n| n.to_string()).collect());
        }
        let unknown: Vec<&str> = self
            .options
            .only
            .iter()
            .map(String::as_str)
            .filter(|n| !all.contains(n))
            .collect();
        if !unknown.is_empty() {
            return Err(Error::Invalid {
                what: "--only".into(),
                why: format!(
                    "{} {} not a target of {}; its targets are {}",
                    unknown
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if unknown.len() == 1 { "is" } else { "are" },
                    self.path.display(),
                    all.join(", ")
                ),
            });
        }
        Ok(self.options.only.iter().cloned().collect())
    }

    /// The plan a target runs (its own, else the suite's) and its smoke plan, read with the
    /// target's `vars`, then the suite's `--set`, then its `base_url`.
    pub(super) fn target_plans(
        &self,
        t: &SuiteTargetFile,
        suite_plan: Option<&Path>,
        smoke: Option<&Smoke>,
        base_url: &str,
    ) -> Result<Plans, Error> {
        let name = t.name.get_ref();
        let own = t
            .plan
            .as_ref()
            .map(|p| self.existing_file(p, "plan"))
            .transpose()?;
        let path = match (own.clone(), suite_plan) {
            (Some(p), _) => p,
            (None, Some(p)) => p.to_path_buf(),
            // The suite checked that every target without a plan has the suite's.
            (None, None) => unreachable!("a target without a plan runs the suite's"),
        };
        let mut sets = self.vars(t)?;
        if let Some(protocol) = &t.protocol {
            sets.push((SetKey::Protocol, protocol.get_ref().clone()));
        }
        sets.extend(self.options.sets.iter().cloned());
        sets.push((SetKey::BaseUrl, base_url.into()));
        let plan = self.plan(&path, &sets, self.options.time_scale, name, self.searched)?;
        let smoke_plan = smoke
            .map(|s| {
                // The smoke gate's own plan is a test of the suite's plan; a target with a plan
                // of its own smokes with it, shortened.
                let (smoke_path, default) = match (&s.plan_path, &own) {
                    (Some(p), None) => (p.clone(), 1.0),
                    _ => (path.clone(), SMOKE_TIME_SCALE),
                };
                let scale = s.time_scale.unwrap_or(default) * self.options.time_scale;
                self.plan(&smoke_path, &sets, scale, &format!("{name}-smoke"), false)
            })
            .transpose()?;
        Ok((path, plan, smoke_plan))
    }

    /// The target's `vars` as `--set vars.NAME=VALUE` pairs.
    fn vars(&self, t: &SuiteTargetFile) -> Result<Vec<(SetKey, String)>, Error> {
        let Some(vars) = &t.vars else {
            return Ok(Vec::new());
        };
        let mut sets = Vec::new();
        for (k, v) in vars.get_ref() {
            if k.is_empty() || k.contains('.') {
                return Err(self.at(
                    vars,
                    format!("`{k}` cannot name a variable"),
                    Some("vars = { NAME = value }, used in the plan as {{ vars.NAME }}"),
                ));
            }
            let value = match v {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            sets.push((SetKey::Var(k.clone()), value));
        }
        Ok(sets)
    }

    /// Refuses targets whose plans send different loads (unless `allow_different_load`) or
    /// whose plans give one operation label to two steps; returns the notes: operations
    /// missing on some targets, loads that differ but are allowed to.
    pub(super) fn like_for_like(
        &self,
        f: &SuiteFile,
        targets: &[(&Spanned<SuiteTargetFile>, SuiteTarget)],
    ) -> Result<Vec<String>, Error> {
        let allow = f
            .allow_different_load
            .as_ref()
            .is_some_and(|a| *a.get_ref());
        let mut notes = Vec::new();
        let mut ops = Vec::new();
        let Some((_, first)) = targets.first() else {
            return Ok(notes);
        };
        for (spanned, t) in targets {
            let at = spanned
                .get_ref()
                .plan
                .as_ref()
                .map_or(spanned.span(), Spanned::span);
            let labels = operations(&t.plan).map_err(|(label, a, b)| {
                self.err(
                    Some(at.clone()),
                    format!(
                        "the plan {} of target `{}` has two steps with operation `{label}` ({a} \
                         and {b}): the comparison could not tell them apart",
                        t.plan_path.display(),
                        t.name
                    ),
                    Some("give one of them an operation = \"…\" of its own"),
                )
            })?;
            ops.push((t.name.as_str(), labels));
            let Some(what) = difference(&first.plan, &t.plan) else {
                continue;
            };
            let why = format!(
                "targets `{}` (plan {}) and `{}` (plan {}) do not get the same load: {what}",
                first.name,
                first.plan_path.display(),
                t.name,
                t.plan_path.display()
            );
            if !allow {
                return Err(self.err(
                    Some(at),
                    why,
                    Some(
                        "a comparison is like for like only under the same VUs, rates, durations \
                         and phases; align the plans, or set allow_different_load = true at the \
                         top of the suite to compare them anyway",
                    ),
                ));
            }
            notes.push(format!("{why} (allow_different_load = true)"));
        }
        notes.extend(missing_operations(&ops));
        Ok(notes)
    }
}
