//! `volley find-max`: the highest load whose steady state meets an SLO.
//!
//! The search grows the load geometrically until a step breaks the SLO, then bisects between the
//! last level that held and the first that broke, until the gap is within the resolution or the
//! time budget is spent. Each step is a short run (warm-up discarded, steady state checked on the
//! per-second series). A step where the *generator* was the bottleneck ends the search with that
//! verdict instead of a false maximum. [`search`] is a pure function of a probe (one step → its
//! judgement), tested against simulated targets; [`run::run`] probes a real target with a plan.

pub mod run;
pub mod slo;
mod validation;

use std::time::Duration;

pub use crate::record::find_max::{
    FindMax, FindMaxStep, NOT_VALIDATED, STOPPED_BUDGET, STOPPED_INTERRUPTED, STOPPED_LEVEL_LIMIT,
    SearchOutcome,
};
pub use slo::Judgement;
use validation::Validation;

/// How the search proceeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchConfig {
    /// First level (requests per second, or VUs).
    pub start: f64,
    /// Growth factor while every step holds (> 1).
    pub growth: f64,
    /// Stop bisecting when the gap is below this share of the level (e.g. 0.03).
    pub resolution: f64,
    /// Levels are whole numbers (VUs).
    pub integer: bool,
    /// Total time the search may take.
    pub budget: Duration,
    /// Time one step takes (warm-up + measured + overhead).
    pub step_time: Duration,
    /// Highest level ever tried.
    pub max_level: f64,
    /// Length of the validation run at the level found, in steps (0: none).
    pub validation_steps: u32,
}

/// Why the search ended when even its lowest level broke the SLO (it goes down to a sixteenth
/// of its start, at least one VU).
pub const STOPPED_FLOOR: &str = "the lowest level broke the SLO";

/// How far below `start` a search whose first level broke goes down: a sixteenth of it.
const FLOOR_SHARE: f64 = 1.0 / 16.0;

/// Why the search ended when the bisection brackets the maximum within the resolution.
pub const STOPPED_CONVERGED: &str = "the bisection converged";

/// Why the search ended when a step's generator, not the target, was the limit.
pub const STOPPED_GENERATOR: &str = "the load generator saturated before the target did";

/// Why the search's loop of steps ended, before any validation: matched on to decide how the
/// search ends ([`validation::Validation::end`]), and said in [`SearchOutcome::stopped`]'s words.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LoopEnd {
    /// No further step fitted in the budget.
    Budget,
    /// A step was interrupted (Ctrl-C, or a run that failed).
    Interrupted,
    /// A step's generator, not the target, was the limit.
    GeneratorLimited,
    /// The level limit (requests per second, or VUs) was reached while the SLO held.
    LevelLimit(f64),
    /// Even the lowest level the search goes down to broke the SLO.
    Floor,
    /// The bracket is within the resolution.
    Converged,
}

impl LoopEnd {
    /// The words of [`SearchOutcome::stopped`] for this end.
    fn words(self) -> String {
        match self {
            Self::Budget => STOPPED_BUDGET.into(),
            Self::Interrupted => STOPPED_INTERRUPTED.into(),
            Self::GeneratorLimited => STOPPED_GENERATOR.into(),
            Self::LevelLimit(max) => {
                format!("{STOPPED_LEVEL_LIMIT} ({max}) was reached while the SLO held")
            }
            Self::Floor => STOPPED_FLOOR.into(),
            Self::Converged => STOPPED_CONVERGED.into(),
        }
    }
}

/// The most validation runs: the level found, and as many steps down when one fails (the first a
/// resolution lower, each next twice as far: 1 %, 2 %, 4 %).
pub const MAX_VALIDATIONS: u32 = 4;

/// What a probe reports for one level.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// The figures.
    pub step: FindMaxStep,
}

/// Runs the search, calling `probe(level, validation)` for each step (`validation`: the run
/// that validates the level found, [`SearchConfig::validation_steps`] steps long). A step the
/// probe reports [`FindMaxStep::interrupted`] ends the search: every step is pushed to the
/// outcome in the order probed.
pub fn search(
    config: &SearchConfig,
    mut probe: impl FnMut(f64, bool) -> FindMaxStep,
) -> SearchOutcome {
    let mut budget = Budget::new(config.budget, config.step_time);
    let mut steps: Vec<FindMaxStep> = Vec::new();
    let round = |l: f64| {
        if config.integer {
            l.round().max(1.0)
        } else {
            l
        }
    };
    let mut good: Option<f64> = None;
    let mut bad: Option<f64> = None;
    let mut level = round(config.start);
    let end = loop {
        if !budget.allows(1) {
            break LoopEnd::Budget;
        }
        let step = probed(level, &mut probe, &mut budget, &mut steps);
        let (held, limited, interrupted) = (step.held, step.generator_limited, step.interrupted);
        steps.push(step);
        if interrupted {
            break LoopEnd::Interrupted;
        }
        if limited {
            break LoopEnd::GeneratorLimited;
        }
        if held {
            good = Some(good.map_or(level, |g: f64| g.max(level)));
        } else {
            bad = Some(bad.map_or(level, |b: f64| b.min(level)));
        }
        match config.next_level(good, bad, round) {
            Ok(next) => level = next,
            Err(stop) => break stop,
        }
    };
    let stopped = Validation {
        config,
        budget: &mut budget,
        steps: &mut steps,
    }
    .end(end, good, bad, &mut probe, round);
    SearchOutcome { steps, stopped }
}

/// Probes `level` once, and once more when the step is a doubtful break (a tail-only break, or
/// a generator that fell behind, may be a one-off pause of the machine: it is believed only if
/// it happens again) and the budget allows. The first of two runs goes to `steps`; the one
/// returned is the one that counts.
fn probed(
    level: f64,
    probe: &mut impl FnMut(f64, bool) -> FindMaxStep,
    budget: &mut Budget,
    steps: &mut Vec<FindMaxStep>,
) -> FindMaxStep {
    let mut step = probe(level, false);
    budget.charge(&step, 1);
    if step.held || !step.doubtful || step.interrupted {
        return step;
    }
    if !budget.allows(1) {
        step.reason = format!("{} — not run again: no time was left", step.reason);
        return step;
    }
    let mut again = probe(level, false);
    again.rerun = true;
    budget.charge(&again, 1);
    if again.held {
        step.noise = true;
        step.reason = format!("{} — held when run again: noise", step.reason);
    } else if again.interrupted {
        step.reason = format!(
            "{} — not confirmed: the run again was interrupted",
            step.reason
        );
    }
    steps.push(step);
    again
}

/// What is left of the search's time: each step is charged what it took
/// ([`FindMaxStep::took`]; a step that `--precision` ended early leaves the rest to later
/// steps), or its nominal length when that is not known.
pub(crate) struct Budget {
    budget: Duration,
    step: Duration,
    spent: Duration,
}

impl Budget {
    fn new(budget: Duration, step: Duration) -> Self {
        Self {
            budget,
            step,
            spent: Duration::ZERO,
        }
    }

    /// Whether `steps` more steps of the nominal length fit in what is left.
    pub(crate) fn allows(&self, steps: u32) -> bool {
        self.spent + self.step * steps <= self.budget
    }

    /// Charges a step `nominal` steps long (the validation: several).
    pub(crate) fn charge(&mut self, step: &FindMaxStep, nominal: u32) {
        self.spent += step.took.unwrap_or(self.step * nominal);
    }
}

impl SearchConfig {
    /// The level after a step, from the highest level that held and the lowest that broke so
    /// far: grow, go down, or bisect; `Err` with why the search's loop ends instead.
    fn next_level(
        &self,
        good: Option<f64>,
        bad: Option<f64>,
        round: impl Fn(f64) -> f64,
    ) -> Result<f64, LoopEnd> {
        match (good, bad) {
            (Some(g), None) => {
                let cap = self.cap();
                if g >= cap {
                    return Err(LoopEnd::LevelLimit(self.max_level));
                }
                Ok(round(g * self.growth).min(cap))
            }
            (None, Some(b)) => {
                // Even the first level broke: go down, to a sixteenth of it at most (at least
                // one VU): a target that breaks lower than that is broken, not slow.
                let next = round(b / self.growth);
                if next >= b || next < self.floor() {
                    return Err(LoopEnd::Floor);
                }
                Ok(next)
            }
            (Some(g), Some(b)) => {
                let mid = round((g + b) / 2.0);
                let close = (b - g) <= self.resolution * g || (self.integer && b - g <= 1.0);
                if close || mid <= g || mid >= b {
                    return Err(LoopEnd::Converged);
                }
                Ok(mid)
            }
            (None, None) => unreachable!("a step was just judged"),
        }
    }

    /// The highest level the search tries: the level limit itself (whole VUs: the whole VUs
    /// at or below it).
    fn cap(&self) -> f64 {
        match self.integer {
            true => self.max_level.floor().max(1.0),
            false => self.max_level,
        }
    }

    /// The lowest level a search whose first level broke goes down to: a sixteenth of
    /// `start` (at least one VU; at least 0.001/s).
    fn floor(&self) -> f64 {
        let floor = (self.start * FLOOR_SHARE).max(1e-3);
        match self.integer {
            true => floor.max(1.0),
            false => floor,
        }
    }
}

#[cfg(test)]
mod tests;
