//! Running a search against a real target: each level becomes a one-step plan run by the
//! caller (so `volley find-max` and `volley suite` each run it their way, with their own signal
//! handling), judged against the SLO, and the best step's record is kept with the whole search
//! under `find_max`.

use std::time::{Duration, Instant};

use super::slo::{self, Judgement};
use super::{FindMax, FindMaxStep, SearchConfig, search};
use crate::analysis::interval::MIN_BATCHES;
use crate::error::Error;
use crate::plan::{Plan, Profile, Threshold};
use crate::record::RunRecord;
use crate::record::find_max::best_step;
use crate::record::model::{GroupKind, LoadModel};

/// Time a step costs beyond its warm-up and measured part (start, drain, record), estimated.
const STEP_OVERHEAD: Duration = Duration::from_millis(400);

/// Why search settings are unusable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    /// A step of no length.
    #[error("a step must last longer than 0")]
    ZeroStep,
    /// `start` or `max` is not a positive number.
    #[error("{what} {value} must be a positive number")]
    NotPositive {
        /// `start` or `max`.
        what: &'static str,
        /// The level given.
        value: f64,
    },
    /// `start` or `max` is above volley's limit for the model.
    #[error("{what} {value} {unit} is more than volley allows ({limit})")]
    AboveLimit {
        /// `start` or `max`.
        what: &'static str,
        /// The level given.
        value: f64,
        /// `req/s` or `VUs`.
        unit: &'static str,
        /// volley's limit, in `unit`.
        limit: f64,
    },
    /// `start` above `max`.
    #[error("start {start} is above max {max}")]
    StartAboveMax {
        /// The first level.
        start: f64,
        /// The highest level.
        max: f64,
    },
    /// A budget that does not hold one step.
    #[error(
        "a budget of {} is shorter than one step ({}: warm-up, step, and {} to start and \
         record it)",
        humantime::format_duration(*budget),
        humantime::format_duration(*step),
        humantime::format_duration(STEP_OVERHEAD)
    )]
    BudgetShort {
        /// The budget given.
        budget: Duration,
        /// What one step takes.
        step: Duration,
    },
    /// The open model's in-flight cap is out of range.
    #[error("max in flight {value} must be in 1..={max}")]
    InFlight {
        /// The cap given.
        value: u32,
        /// The largest allowed.
        max: u32,
    },
    /// A bracket share outside (0, [`MAX_RESOLUTION`]].
    #[error(
        "a resolution of {}% is not above 0% and up to {}%",
        crate::units::number(100.0 * .0),
        crate::units::number(100.0 * MAX_RESOLUTION)
    )]
    Resolution(f64),
    /// A validation run longer than volley allows.
    #[error("a validation of {0} steps is more than {MAX_VALIDATION_STEPS}")]
    ValidationSteps(u32),
}

/// How a search is run: what `volley find-max` takes from its flags, a suite from `[find_max]`.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The SLO as written, e.g. `p99<50ms,errors<1%`.
    pub slo_text: String,
    /// The SLO, parsed ([`slo::parse`]).
    pub slo: Vec<Threshold>,
    /// What the search varies: the arrival rate (open) or the VUs (closed).
    pub model: LoadModel,
    /// Stop searching after this long.
    pub budget: Duration,
    /// Measured length of each step.
    pub step: Duration,
    /// Warm-up of each step, discarded.
    pub warmup: Duration,
    /// First level (default 50 req/s, or 1 VU).
    pub start: Option<f64>,
    /// Highest level tried (default 1 000 000 req/s, or 10 000 VUs).
    pub max: Option<f64>,
    /// Open model: most requests in flight.
    pub max_in_flight: u32,
    /// The bisection stops once the bracket is within this share of the level that held, above
    /// 0 and up to [`MAX_RESOLUTION`] (default [`RESOLUTION`]); a validation that fails steps
    /// down by it, then twice as far each time.
    pub resolution: f64,
    /// Length of the validation run at the level found, in steps (default
    /// [`VALIDATION_STEPS`]; 0: none, the bisection's step is the answer).
    pub validation_steps: u32,
    /// Worker threads (default: one per core, at most one per VU).
    pub threads: Option<usize>,
}

impl Settings {
    /// Whether the search varies the arrival rate (open model).
    pub fn is_open(&self) -> bool {
        self.model == LoadModel::Open
    }

    /// Why these settings cannot be searched with, in words: a step of 0, a start or maximum
    /// that is not a positive number within volley's limits, a start above the maximum, a
    /// budget shorter than a step, an in-flight cap, resolution or validation length out of
    /// range.
    pub fn check(&self) -> Result<(), SettingsError> {
        if self.step.is_zero() {
            return Err(SettingsError::ZeroStep);
        }
        let (limit, unit) = if self.is_open() {
            (crate::plan::MAX_RATE_PER_SEC, "req/s")
        } else {
            (f64::from(crate::plan::MAX_VUS), "VUs")
        };
        for (what, v) in [("start", self.start), ("max", self.max)] {
            match v {
                Some(value) if !(value.is_finite() && value > 0.0) => {
                    return Err(SettingsError::NotPositive { what, value });
                }
                Some(value) if value > limit => {
                    return Err(SettingsError::AboveLimit {
                        what,
                        value,
                        unit,
                        limit,
                    });
                }
                _ => {}
            }
        }
        if let (Some(start), Some(max)) = (self.start, self.max)
            && start > max
        {
            return Err(SettingsError::StartAboveMax { start, max });
        }
        let step = self.config().step_time;
        if self.budget < step {
            let budget = self.budget;
            return Err(SettingsError::BudgetShort { budget, step });
        }
        Self::resolution(self.resolution)?;
        Self::validation_steps(self.validation_steps)?;
        if self.max_in_flight == 0 || self.max_in_flight > crate::plan::MAX_VUS {
            return Err(SettingsError::InFlight {
                value: self.max_in_flight,
                max: crate::plan::MAX_VUS,
            });
        }
        Ok(())
    }

    /// `share` if it can be a resolution (above 0, up to [`MAX_RESOLUTION`]), else why not.
    pub fn resolution(share: f64) -> Result<f64, SettingsError> {
        let fits = share > 0.0 && share <= MAX_RESOLUTION;
        fits.then_some(share)
            .ok_or(SettingsError::Resolution(share))
    }

    /// `n` if it can be a validation's length (at most [`MAX_VALIDATION_STEPS`]), else why not.
    pub fn validation_steps(n: u32) -> Result<u32, SettingsError> {
        let fits = n <= MAX_VALIDATION_STEPS;
        fits.then_some(n).ok_or(SettingsError::ValidationSteps(n))
    }

    /// These settings, once [`Settings::check`] finds nothing wrong with them; else an input
    /// error naming them.
    pub fn checked(self) -> Result<Self, Error> {
        self.check().map_err(|why| Error::Invalid {
            what: "find-max settings".into(),
            why: why.to_string(),
        })?;
        Ok(self)
    }

    /// The search's settings.
    pub fn config(&self) -> SearchConfig {
        SearchConfig {
            start: self
                .start
                .unwrap_or(if self.is_open() { 50.0 } else { 1.0 }),
            growth: 2.0,
            resolution: self.resolution,
            integer: !self.is_open(),
            budget: self.budget,
            step_time: self.warmup + self.step + STEP_OVERHEAD,
            validation_steps: self.validation_steps,
            max_level: self
                .max
                .unwrap_or(if self.is_open() { 1e6 } else { 10_000.0 }),
        }
    }

    /// What the search is about to do, for `plan`: `http://h/ — open model, SLO p99<50ms,
    /// steps of 5s + 1s warm-up, budget 3m, to 1%, validation 3 steps`.
    pub fn banner(&self, plan: &Plan) -> String {
        let target = plan
            .quick
            .as_ref()
            .map_or(plan.target.base_url.as_str(), |q| q.url.as_str());
        let note = self.steady_unjudged();
        format!(
            "{} — {} model, SLO {}, steps of {} + {} warm-up, budget {}, to {}%, {}{}",
            crate::redact::redact_url_userinfo(target),
            self.model,
            self.slo_text,
            humantime::format_duration(self.step),
            humantime::format_duration(self.warmup),
            humantime::format_duration(self.budget),
            crate::units::number(100.0 * self.resolution),
            match self.validation_steps {
                0 => "no validation".to_string(),
                n => format!("validation {}", super::validation::steps_words(n)),
            },
            note.map_or_else(String::new, |n| format!("\n  WARNING: {n}"))
        )
    }

    /// Why the steps cannot be judged for a steady state, when they are too short for it.
    pub fn steady_unjudged(&self) -> Option<String> {
        // The judge counts a last second of half a second or more.
        let least = slo::STEADY_SECONDS as f64 - 0.5;
        let n = self.validation_steps;
        let words = super::validation::steps_words(n);
        let validated = match n {
            0 => "and no validation run is asked".to_string(),
            _ if self.step.as_secs_f64() * f64::from(n) < least => {
                format!("nor is the validation run, {words}, long enough for it")
            }
            _ => format!("only the validation run, {words}, is judged for it"),
        };
        (self.step.as_secs_f64() < least).then(|| {
            format!(
                "search steps of {} are too short to judge a steady state ({least} s are \
                 needed): a queue that builds within a step goes unseen, so a level may pass \
                 that the target does not sustain ({validated})",
                humantime::format_duration(self.step),
            )
        })
    }

    /// One judged step: `✓   400.0/s →      398.2 req/s, p50     1.20 ms, p99     3.40 ms,
    /// errors 0.00%`, with the reason when it did not hold; a level run again to confirm a break
    /// says `(again)`, the validation run `(validation, 3 steps)`; a step that `--precision`
    /// ended says `, precise after 2.0 s`.
    pub fn step_line(&self, step: &FindMaxStep) -> String {
        let level = self.level_text(step.level);
        format!(
            "{} {:>10} → {:>10.1} req/s, p50 {:>8} ms, p99 {:>8} ms, errors {:.2}%{}{}",
            match (step.interrupted, step.held) {
                (true, _) => "–",
                (_, true) => "✓",
                _ => "✗",
            },
            match (step.rerun, step.validation) {
                (true, _) => format!("{level} (again)"),
                (_, true) => format!(
                    "{level} (validation, {})",
                    super::validation::steps_words(self.validation_steps)
                ),
                _ => level,
            },
            step.rps,
            crate::units::ms(step.p50_ms),
            crate::units::ms(step.p99_ms),
            step.error_rate * 100.0,
            match step.measured_s {
                Some(m) if step.precise => format!(", precise after {m:.1} s"),
                _ => String::new(),
            },
            if step.reason.is_empty() {
                String::new()
            } else {
                format!("  ({})", step.reason)
            }
        )
    }

    /// A level in words: `400.0/s` or `32 VUs`.
    pub fn level_text(&self, level: f64) -> String {
        if self.is_open() {
            format!("{level:.1}/s")
        } else {
            crate::units::vus(level)
        }
    }
}

/// Why a plan cannot be searched.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unsearchable {
    /// The search varies one scenario's load.
    #[error("find-max needs a plan with one scenario; this one has {0}")]
    Scenarios(usize),
    /// No step is long enough for an interval, so no step could be precise.
    #[error(
        "each step measures for {} (--step; in a suite, [find_max] step), and a precision goal \
         needs at least {MIN_BATCHES} one-second batches: give --step {MIN_BATCHES}s or more (a \
         step ends early only when longer), or no goal",
        humantime::format_duration(*.0)
    )]
    TooShortForPrecision(Duration),
}

impl Unsearchable {
    /// What the refusal names: the plan, or the precision goals.
    pub fn what(&self) -> &'static str {
        match self {
            Self::Scenarios(_) => "plan",
            Self::TooShortForPrecision(_) => "--precision",
        }
    }
}

/// Why a plan cannot be searched in steps of `step` (measured, after the warm-up), if it cannot:
/// more than one scenario, or precision goals that no step is long enough to reach.
pub fn unsearchable(plan: &Plan, step: Duration) -> Option<Unsearchable> {
    if plan.scenarios.len() != 1 {
        return Some(Unsearchable::Scenarios(plan.scenarios.len()));
    }
    let least = Duration::from_secs(MIN_BATCHES as u64);
    (!plan.precision.is_empty() && step < least).then_some(Unsearchable::TooShortForPrecision(step))
}

/// The search stops bisecting once the gap between the highest level that held and the lowest
/// that broke is within this share of the former.
pub const RESOLUTION: f64 = 0.01;

/// The coarsest bracket a search may stop at (`--resolution`): a failed validation steps down
/// by the resolution, then twice and four times as far: 7 % below the level found at most at
/// 1 %, 57 % at 10 %.
pub const MAX_RESOLUTION: f64 = 0.1;

/// The validation run at the level found lasts this many steps.
pub const VALIDATION_STEPS: u32 = 3;

/// The longest validation run, in steps (`--validation-steps`).
pub const MAX_VALIDATION_STEPS: u32 = 10;

/// The base plan at one load level: a constant rate (open) or VU count (closed) for one step,
/// or for [`Settings::validation_steps`] steps when it is the `validation`.
pub fn at_level(base: &Plan, level: f64, s: &Settings, validation: bool) -> Plan {
    let mut plan = base.clone();
    plan.warmup = s.warmup;
    let sc = &mut plan.scenarios[0];
    sc.start_after = Duration::ZERO;
    sc.phases.clear();
    // Nor groups for the phases: a one-scenario plan's are its last (after its steps), so no
    // index of another group moves.
    while plan
        .groups
        .last()
        .is_some_and(|g| g.kind == GroupKind::Phase)
    {
        plan.groups.pop();
    }
    let steps = if validation { s.validation_steps } else { 1 };
    let length = s.warmup + s.step * steps;
    sc.profile = Profile::constant(s.model, level, length, s.max_in_flight);
    if validation {
        // The validation runs its whole length: a long run at the level found is what catches
        // a drift near the knee, which a run stopped as soon as it is precise would not.
        plan.precision.clear();
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    plan.fit_threads(s.threads.unwrap_or(cores));
    plan
}

/// What a search found.
#[derive(Debug, Clone)]
pub struct SearchResult {
    /// The headline figures and every step.
    pub summary: FindMax,
    /// The record to keep: the step whose figures are the maximum ([`best_step`]: the validation
    /// that held, else the highest level that held below every failed validation), else the
    /// first step's, named
    /// `<name>-find-max` for a plan and `find-max` for a URL, with `summary` under `find_max`.
    pub record: RunRecord,
    /// A step was interrupted (the record says by what), which ended the search.
    pub interrupted: bool,
}

/// Searches `base` (one scenario) with `s`. `run_step` runs one step's plan (through
/// [`crate::run::execute`]) and returns its record; `on_step` hears of
/// each judged step. `None` when no step fits in the budget. An error from `run_step` ends the
/// search and is returned.
pub fn run(
    base: &Plan,
    s: &Settings,
    mut run_step: impl FnMut(&Plan) -> Result<RunRecord, Error>,
    mut on_step: impl FnMut(&FindMaxStep),
) -> Result<Option<SearchResult>, Error> {
    let started = Instant::now();
    // One entry per step, in the order run: the record of a step that held, and the first's.
    let mut kept: Vec<Option<RunRecord>> = Vec::new();
    // The signal that stopped a step, and the step before (its level, and whether it is to be
    // run again: a doubtful break).
    let mut interrupted: Option<String> = None;
    let mut before: Option<(f64, bool)> = None;
    let mut failure: Option<Error> = None;
    // The highest level that held so far and its median (ms): a tail break whose median moved
    // well above it is a queue, not a pause (`slo::tail_only`).
    let mut held: Option<(f64, f64)> = None;
    let outcome = search(&s.config(), |level, validation| {
        let plan = at_level(base, level, s, validation);
        let began = Instant::now();
        let record = match run_step(&plan) {
            Ok(record) => record,
            Err(e) => {
                failure = Some(e);
                kept.push(None);
                return stopped_step(level, validation);
            }
        };
        let held_p50 = held.map(|(_, p50)| p50);
        let mut step = judged(&record, level, validation, s, began.elapsed(), held_p50);
        if step.held && !validation && held.is_none_or(|(l, _)| level >= l) {
            held = step.p50_ms.map(|p50| (level, p50));
        }
        // The search marks a run again itself once it returns; the line shown now says it too.
        step.rerun = before.is_some_and(|(l, again)| again && l == level) && !validation;
        before = Some((level, step.doubtful && !step.held));
        if step.interrupted {
            interrupted = record.interrupted.clone();
        }
        on_step(&step);
        let keep = step.held || kept.is_empty();
        kept.push(keep.then_some(record));
        step
    });
    if let Some(e) = failure {
        return Err(e);
    }
    debug_assert_eq!(kept.len(), outcome.steps.len());
    let mut summary = FindMax::from_outcome(s.model, &s.slo_text, &outcome, started.elapsed());
    summary.steady_unjudged = s.steady_unjudged();
    let best = best_step(&outcome.steps).and_then(|i| kept.get_mut(i)?.take());
    let Some(mut record) = best.or_else(|| kept.first_mut()?.take()) else {
        return Ok(None);
    };
    record.name = record_name(base);
    record.find_max = Some(summary.clone());
    if let Some(by) = &interrupted {
        record.interrupted.get_or_insert_with(|| by.clone());
    }
    crate::analysis::verdict::settle(&mut record);
    Ok(Some(SearchResult {
        summary,
        record,
        interrupted: interrupted.is_some(),
    }))
}

/// One step's figures and judgement from its run's `record` at `level` (`held_p50`: the median
/// of the highest level that held before it, ms). A run stopped before its end (Ctrl-C) is
/// [`FindMaxStep::interrupted`]: neither held nor broken.
fn judged(
    record: &RunRecord,
    level: f64,
    validation: bool,
    s: &Settings,
    took: Duration,
    held_p50: Option<f64>,
) -> FindMaxStep {
    let open_level = s.is_open().then_some(level);
    let cut = record.interrupted.is_some();
    let judgement = slo::judge(record, &s.slo, open_level);
    let r = &record.summary;
    FindMaxStep {
        level,
        rps: r.rps,
        p50_ms: r.latency_ms.p50,
        p99_ms: r.latency_ms.p99,
        error_rate: r.error_rate().unwrap_or(0.0),
        held: !cut && judgement == Judgement::Held,
        reason: if cut && r.requests == 0 {
            "interrupted before it sent a request".into()
        } else if cut {
            "interrupted: the figures cover part of the step".into()
        } else {
            slo::reason(record, &judgement)
        },
        generator_limited: !cut && matches!(judgement, Judgement::GeneratorLimited(_)),
        noise: false,
        rerun: false,
        validation,
        interrupted: cut,
        measured_s: Some(r.duration_s),
        // Ended early by its goals (a step that met them only at its end ran its course).
        precise: r.duration_s + 0.5 < s.step.as_secs_f64()
            && r.ci95
                .as_ref()
                .and_then(|c| c.precision.as_ref())
                .is_some_and(|p| p.reached),
        doubtful: !cut && slo::doubtful(record, &judgement, &s.slo, open_level, held_p50),
        took: Some(took),
    }
}

/// The name of a search's record (and so of its results folder): `find-max` for a URL,
/// `<plan name>-find-max` for a plan.
pub fn record_name(base: &Plan) -> String {
    if base.quick.is_some() {
        "find-max".into()
    } else {
        format!("{}-find-max", base.name)
    }
}

/// The step of a run that failed: it ends the search, whose error is returned.
fn stopped_step(level: f64, validation: bool) -> FindMaxStep {
    FindMaxStep {
        level,
        rps: 0.0,
        p50_ms: None,
        p99_ms: None,
        error_rate: 0.0,
        held: false,
        reason: "the run failed".into(),
        generator_limited: false,
        noise: false,
        rerun: false,
        validation,
        interrupted: true,
        measured_s: None,
        precise: false,
        doubtful: false,
        took: None,
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
