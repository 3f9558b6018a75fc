//! `repeats`: a count, or `"until-decided"` with its `[until_decided]` design.

use super::Ctx;
use crate::analysis::sequential::Design;
use crate::error::Error;
use crate::suite::SuiteTarget;
use crate::suite::file::{RepeatsFile, SuiteFile};
use crate::suite::order::Order;

/// Most repeats per target.
const MAX_REPEATS: i64 = 1000;
/// `max_runs` of `[until_decided]` by default, as `volley ab --max-runs`.
const UNTIL_DECIDED_MAX_RUNS: i64 = 20;

impl Ctx<'_> {
    /// `repeats`: 1 to [`MAX_REPEATS`], and 1 with `[find_max]`; `"until-decided"`: the
    /// `max_runs` of `[until_decided]`.
    pub(super) fn repeats(&self, f: &SuiteFile, searched: bool) -> Result<u32, Error> {
        let Some(r) = &f.repeats else {
            if let Some(u) = &f.until_decided {
                return Err(self.at(
                    u,
                    "[until_decided] without repeats = \"until-decided\"",
                    None,
                ));
            }
            return Ok(1);
        };
        let (key, count) = match r.get_ref() {
            RepeatsFile::Count(_) if f.until_decided.is_some() => {
                let u = f.until_decided.as_ref().map_or(r.span(), |u| u.span());
                let why = "[until_decided] with a count of repeats: its rule would be ignored";
                let hint = Some("repeats = \"until-decided\" (max_runs then bounds the runs)");
                return Err(self.err(Some(u), why, hint));
            }
            RepeatsFile::Count(n) => ("repeats", *n),
            RepeatsFile::Rule(rule) if rule == "until-decided" => {
                let max = f.until_decided.as_ref().and_then(|u| u.get_ref().max_runs);
                ("max_runs", max.unwrap_or(UNTIL_DECIDED_MAX_RUNS))
            }
            RepeatsFile::Rule(rule) => {
                let why = format!("repeats = \"{rule}\" is neither a count nor a rule");
                return Err(self.at(r, why, Some("a count, e.g. 5, or \"until-decided\"")));
            }
        };
        if searched && count != 1 {
            let why = "repeats applies to plan runs; with [find_max] each target gets one search";
            return Err(self.at(r, why, None));
        }
        if !(1..=MAX_REPEATS).contains(&count) {
            let hint = match key {
                "max_runs" => "3 to 1000 runs per target (default 20)",
                _ => "1 (the default) to 1000 measured runs per target",
            };
            return Err(self.err(
                Some(self.place_of(f, key).unwrap_or(r.span())),
                format!("{key} = {count} is out of range"),
                Some(hint),
            ));
        }
        Ok(count as u32)
    }

    /// `repeats = "until-decided"`: the design its rounds follow (the comparisons are every
    /// target after the first against it), or none.
    pub(super) fn until_decided(
        &self,
        f: &SuiteFile,
        targets: &[SuiteTarget],
        order: &Order,
    ) -> Result<Option<Design>, Error> {
        let Some(r) = f.repeats.as_ref() else {
            return Ok(None);
        };
        if !matches!(r.get_ref(), RepeatsFile::Rule(_)) {
            return Ok(None);
        }
        if *order != Order::Interleaved {
            let why =
                "repeats = \"until-decided\" takes the targets by turns: order = \"interleaved\"";
            return Err(self.at(r, why, None));
        }
        let max_runs = self.repeats(f, false)?;
        if max_runs < 3 || targets.len() < 2 {
            let why = "until-decided compares two targets or more, over at least 3 runs each";
            let at = self.place_of(f, "max_runs").filter(|_| max_runs < 3);
            let hint = Some("max_runs = 3 or more, and two [[target]]s");
            return Err(self.err(Some(at.unwrap_or(r.span())), why, hint));
        }
        let u = f.until_decided.as_ref().map(|u| u.get_ref());
        let metrics = u.and_then(|u| u.metrics.clone()).unwrap_or_default();
        let threshold = match u.and_then(|u| u.threshold.as_ref()) {
            None => 2.0,
            Some(t) => percent(t.get_ref())
                .filter(|p| crate::suite::ab::threshold_ok(*p))
                .ok_or_else(|| {
                    let why =
                        "threshold must be a percentage above 0: a number (2) or a string (\"2%\")";
                    self.at(t, why, Some("threshold = 2 decides changes beyond ±2 %"))
                })?,
        };
        let open = targets[0].plan.model().has_open();
        let design = crate::suite::ab::design(&metrics, threshold, max_runs, open);
        let at = f.until_decided.as_ref().map(|u| u.span());
        let mut design = design.map_err(|e| self.err(at.clone(), metrics_key(e), None))?;
        for t in targets {
            crate::suite::ab::measures(&t.plan, &design.metrics).map_err(|e| {
                let (name, plan) = (&t.name, t.plan_path.display());
                let why = format!("target `{name}` (plan {plan}): {}", metrics_key(e));
                self.err(at.clone(), why, None)
            })?;
        }
        design.comparisons = targets.len() as u32 - 1;
        Ok(Some(design))
    }

    /// Where `[until_decided]` sets `key` (`max_runs`): the table's span, if it sets it.
    fn place_of(&self, f: &SuiteFile, key: &str) -> Option<std::ops::Range<usize>> {
        let u = f.until_decided.as_ref()?;
        (key == "max_runs" && u.get_ref().max_runs.is_some()).then(|| u.span())
    }
}

/// `2`, `2.5` or `"2%"`: the percentage (a string without its `%` is none).
fn percent(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Integer(n) => Some(*n as f64),
        toml::Value::Float(x) => Some(*x),
        toml::Value::String(s) => super::percent_of(s),
        _ => None,
    }
}

/// An error about one of `volley ab`'s flags said of the suite's key: "metrics: …",
/// "threshold: …".
fn metrics_key(e: Error) -> String {
    match e {
        Error::Invalid { what, why } => {
            let key = what.trim_start_matches("--");
            let key = if key == "metric" { "metrics" } else { key };
            format!("{key}: {why}")
        }
        e => e.to_string(),
    }
}
