//! The find-max outcome as the record keeps it (`volley find-max`, suite searches).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::model::LoadModel;

/// One probed level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FindMaxStep {
    /// The load: requests per second (open model) or VUs (closed).
    pub level: f64,
    /// Achieved throughput, requests per second.
    pub rps: f64,
    /// Median latency, ms.
    pub p50_ms: Option<f64>,
    /// 99th percentile latency, ms.
    pub p99_ms: Option<f64>,
    /// Failed share of requests, 0–1.
    pub error_rate: f64,
    /// Whether the SLO held in a steady state.
    pub held: bool,
    /// Why not (empty when it held).
    pub reason: String,
    /// The generator was the limit in this step.
    pub generator_limited: bool,
    /// This step broke the SLO but the same level held when run again: a one-off (a pause of
    /// the machine, say), not the target's limit, so it is not counted as breaking.
    #[serde(default)]
    pub noise: bool,
    /// This step ran the level of the step before it again, to confirm a break that may have
    /// been a one-off (see `noise`): the same level twice is on purpose.
    #[serde(default)]
    pub rerun: bool,
    /// The validation run at the level found (`SearchConfig::validation_steps` steps long):
    /// when it held, its figures are the maximum reported.
    #[serde(default)]
    pub validation: bool,
    /// The step was stopped before its end (Ctrl-C, or a run that failed): its figures cover
    /// only part of it, it neither held nor broke the SLO, and the search ended with it.
    #[serde(default)]
    pub interrupted: bool,
    /// The step's measured window, s (its record's `summary.duration_s`): `--step` (the
    /// validation: its whole length) unless `--precision` ended it early (`precise`) or it was
    /// interrupted. Absent for a run that failed, and in records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_s: Option<f64>,
    /// The step's precision goals (`--precision`) were met before its end and it stopped
    /// then, after `measured_s` (a step that met them only at its end ran its course).
    #[serde(default)]
    pub precise: bool,
    /// The break may be a one-off pause of the machine: only the latency tail broke (rate
    /// achieved, no errors, median within bounds), or the generator fell behind. Such a step is
    /// run again before it is believed.
    #[serde(skip)]
    pub doubtful: bool,
    /// How long the step took, start-up and warm-up included, when known: the search's budget
    /// charges this rather than the nominal step length. Not recorded.
    #[serde(skip)]
    pub took: Option<Duration>,
}

/// The search's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOutcome {
    /// Every step, in the order run.
    pub steps: Vec<FindMaxStep>,
    /// Why the search stopped.
    pub stopped: String,
}

/// The headline figures of an outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FindMax {
    /// `open` (the search varies the arrival rate) or `closed` (it varies the VUs).
    pub model: LoadModel,
    /// The SLO as given.
    pub slo: String,
    /// Highest throughput achieved by a step that met the SLO, requests per second (null when no
    /// step held). Only a lower bound when `lower_bound` says why.
    pub max_sustainable_rps: Option<f64>,
    /// Why `max_sustainable_rps` is only a lower bound ("no break found within the budget", "the
    /// load generator saturated before the target", "not validated: the budget ended the
    /// bisection before it converged"); null when a step that broke the SLO bounds it from
    /// above and the bisection converged. Reports write such a maximum "≥ 797.4 req/s (no break found within the
    /// budget)".
    #[serde(default)]
    pub lower_bound: Option<String>,
    /// The load of that step.
    pub max_sustainable_load: Option<f64>,
    /// Highest throughput achieved by any step, requests per second.
    pub peak_rps: f64,
    /// The load at which throughput peaked ("optimal parallelism" in the closed model).
    pub peak_load: f64,
    /// Lowest load that broke the SLO (null when none did).
    pub breaking_load: Option<f64>,
    /// Why the lowest breaking step broke.
    pub breaking_reason: Option<String>,
    /// True when the generator, not the target, limited the search: the maximum is then only a
    /// lower bound.
    pub generator_limited: bool,
    /// Why the search stopped.
    pub stopped: String,
    /// Every step, in the order run.
    pub steps: Vec<FindMaxStep>,
    /// Time the search took, seconds.
    pub elapsed_s: f64,
    /// Why the search's steps were not judged for a steady state: shorter than the 2.5 s it
    /// is judged on, so a queue that built within one went unseen and a level could pass that
    /// the target does not sustain (the validation run is judged when its steps together are
    /// long enough). Absent when the steps were long enough.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_unjudged: Option<String>,
}

impl FindMax {
    /// Summarises an outcome.
    pub fn from_outcome(
        model: LoadModel,
        slo: &str,
        outcome: &SearchOutcome,
        elapsed: Duration,
    ) -> Self {
        let steps = &outcome.steps;
        let best = best_step(steps).map(|i| &steps[i]);
        // Interrupted steps' figures cover part of a step: no peak, no break.
        let whole = steps.iter().filter(|s| !s.interrupted);
        let peak = whole.max_by(|a, b| a.rps.total_cmp(&b.rps));
        // A doubtful break whose run again was interrupted was never confirmed.
        let unconfirmed = |i: usize| {
            let again = steps.get(i + 1);
            again.is_some_and(|n| n.rerun && n.interrupted && n.level == steps[i].level)
        };
        let breaking = (0..steps.len())
            .filter(|&i| {
                let s = &steps[i];
                !(s.held || s.generator_limited || s.noise || s.interrupted || unconfirmed(i))
            })
            .map(|i| &steps[i])
            .min_by(|a, b| a.level.total_cmp(&b.level));
        let generator_limited = steps.iter().any(|s| s.generator_limited && !s.noise);
        let mut found = FindMax {
            model,
            slo: slo.into(),
            max_sustainable_rps: best.map(|s| s.rps),
            lower_bound: None,
            max_sustainable_load: best.map(|s| s.level),
            peak_rps: peak.map_or(0.0, |s| s.rps),
            peak_load: peak.map_or(0.0, |s| s.level),
            breaking_load: breaking.map(|s| s.level),
            breaking_reason: breaking.map(|s| s.reason.clone()),
            generator_limited,
            stopped: outcome.stopped.clone(),
            steps: outcome.steps.clone(),
            elapsed_s: elapsed.as_secs_f64(),
            steady_unjudged: None,
        };
        found.lower_bound = found.why_lower_bound();
        found
    }

    /// Why the maximum found is only a lower bound, from the other figures (so records written
    /// before `lower_bound` existed read the same): the generator saturated first, the budget
    /// ended the bisection with its bracket open, or no step broke the SLO before the search
    /// stopped. `None` when there is no maximum, or a break bounds it.
    pub fn why_lower_bound(&self) -> Option<String> {
        self.max_sustainable_rps?;
        if let Some(why) = &self.lower_bound {
            return Some(why.clone());
        }
        if self.generator_limited {
            return Some("the load generator saturated before the target".into());
        }
        if self.stopped.contains(UNCONVERGED) {
            return Some(format!("not validated: {UNCONVERGED_WHY}"));
        }
        if self.breaking_load.is_some() {
            return None;
        }
        Some(if self.stopped == STOPPED_BUDGET {
            "no break found within the budget".into()
        } else if self.stopped.starts_with(STOPPED_INTERRUPTED) {
            "no break found before the search was interrupted".into()
        } else if self.stopped.starts_with(STOPPED_LEVEL_LIMIT) {
            "no break found up to the level limit".into()
        } else {
            format!("no break found: {}", self.stopped)
        })
    }

    /// Whether a validation run held: the maximum is then its figures.
    pub fn validated(&self) -> bool {
        self.steps
            .iter()
            .any(|s| s.validation && s.held && !s.interrupted)
    }

    /// Why the maximum is a search step's that no validation run confirmed, where one was due:
    /// the search was interrupted while validating, every validation tried failed, no time was
    /// left for one, or the budget ended the bisection with its bracket open. `None` when a
    /// validation held, or none was due (no break bounded the search, or `--validation-steps
    /// 0`).
    pub fn unvalidated(&self) -> Option<&'static str> {
        self.max_sustainable_rps?;
        let tried = |interrupted: bool| {
            self.steps
                .iter()
                .any(|s| s.validation && s.interrupted == interrupted)
        };
        if self.validated() {
            None
        } else if tried(true) {
            Some("the search was interrupted while validating")
        } else if tried(false) {
            Some("the validation failed")
        } else if self.stopped.contains(NOT_VALIDATED) {
            Some("no time was left")
        } else if self.stopped.contains(UNCONVERGED) {
            Some(UNCONVERGED_WHY)
        } else {
            None
        }
    }
}

/// The step whose figures are the maximum (its index in `steps`): the validation that held;
/// else the highest level that held below every validation that failed (one that failed rules
/// its level and above out); `None` when no step qualifies.
pub fn best_step(steps: &[FindMaxStep]) -> Option<usize> {
    let failed = steps
        .iter()
        .filter(|s| s.validation && !s.held && !s.interrupted)
        .map(|s| s.level)
        .min_by(f64::total_cmp);
    let held = |s: &FindMaxStep| s.held && !s.interrupted;
    steps
        .iter()
        .position(|s| s.validation && held(s))
        .or_else(|| {
            (0..steps.len())
                .filter(|&i| held(&steps[i]) && failed.is_none_or(|f| steps[i].level < f))
                .max_by(|&a, &b| steps[a].level.total_cmp(&steps[b].level))
        })
}

/// The start of `stopped` when the search was interrupted (Ctrl-C) or a step's run failed.
pub const STOPPED_INTERRUPTED: &str = "the search was interrupted";
/// `stopped` when the budget ran out.
pub const STOPPED_BUDGET: &str = "the time budget was spent";
/// The start of [`SearchOutcome::stopped`] when the level limit was reached.
pub const STOPPED_LEVEL_LIMIT: &str = "the level limit";
/// Part of why a search stopped when its budget ran out with the bracket still open (a level
/// that held, one that broke): its maximum is then only known to lie between them.
pub const UNCONVERGED: &str = "before the bisection converged";
/// Why a search whose budget ended the bisection with its bracket open has a maximum that is
/// only a lower bound, and unvalidated (its `lower_bound` is this after "not validated: ").
pub const UNCONVERGED_WHY: &str = "the budget ended the bisection before it converged";
/// Part of why a search stopped when it converged but had no time left to validate the level
/// found: its maximum is then a search step's, not a validation run's.
pub const NOT_VALIDATED: &str = "no time was left to validate";

#[cfg(test)]
impl FindMaxStep {
    /// A step for tests: `level`, `rps`, p50 1 ms, p99 2 ms, no errors, `held` (else broken,
    /// "p99 broke"), nothing else marked.
    pub(crate) fn test(level: f64, rps: f64, held: bool) -> Self {
        Self {
            level,
            rps,
            p50_ms: Some(1.0),
            p99_ms: Some(2.0),
            error_rate: 0.0,
            held,
            reason: if held {
                String::new()
            } else {
                "p99 broke".into()
            },
            generator_limited: false,
            noise: false,
            rerun: false,
            validation: false,
            interrupted: false,
            measured_s: Some(5.0),
            precise: false,
            doubtful: false,
            took: None,
        }
    }
}
