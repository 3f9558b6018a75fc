//! The end of a search: the validation run at the level found (stepping down when it breaks
//! the SLO), and how a search that did not converge says so.

use super::{
    Budget, FindMaxStep, LoopEnd, MAX_VALIDATIONS, NOT_VALIDATED, STOPPED_BUDGET,
    STOPPED_CONVERGED, STOPPED_GENERATOR, STOPPED_INTERRUPTED, SearchConfig,
};
use crate::record::find_max::UNCONVERGED;

/// The validation of the level found: a run [`SearchConfig::validation_steps`] steps long at
/// it, whose figures are the ones reported; when it breaks the SLO, a lower level is validated
/// (a resolution lower, then twice as far each time), at most [`MAX_VALIDATIONS`] in all.
pub(super) struct Validation<'a> {
    pub(super) config: &'a SearchConfig,
    pub(super) budget: &'a mut Budget,
    pub(super) steps: &'a mut Vec<FindMaxStep>,
}

impl Validation<'_> {
    /// How the search ends after its loop ended (`end`), with `good` the highest level that
    /// held and `bad` the lowest that broke: a bisection that converged validates `good`; a
    /// budget spent with the bracket open gives it; any other end is said as it is.
    pub(super) fn end(
        &mut self,
        end: LoopEnd,
        good: Option<f64>,
        bad: Option<f64>,
        probe: &mut impl FnMut(f64, bool) -> FindMaxStep,
        round: impl Fn(f64) -> f64,
    ) -> String {
        match (end, good, bad) {
            (LoopEnd::Converged, Some(g), _) if self.config.validation_steps > 0 => {
                self.run(g, probe, round)
            }
            (LoopEnd::Budget, Some(held), Some(broke)) => unconverged(held, broke),
            _ => end.words(),
        }
    }

    /// Validates `found` (and steps down); says how the search ended.
    fn run(
        &mut self,
        found: f64,
        probe: &mut impl FnMut(f64, bool) -> FindMaxStep,
        round: impl Fn(f64) -> f64,
    ) -> String {
        let n = self.config.validation_steps;
        let mut level = found;
        for tried in 0..MAX_VALIDATIONS {
            if !self.budget.allows(n) {
                let failed = match tried {
                    0 => String::new(),
                    _ => format!("the validation at {} failed; ", level_words(found)),
                };
                return format!(
                    "{STOPPED_CONVERGED}; {failed}{NOT_VALIDATED} {}",
                    level_words(level)
                );
            }
            let mut step = probe(level, true);
            step.validation = true;
            self.budget.charge(&step, n);
            let (held, limited, interrupted) =
                (step.held, step.generator_limited, step.interrupted);
            self.steps.push(step);
            if interrupted {
                return format!(
                    "{STOPPED_INTERRUPTED} while validating {}",
                    level_words(level)
                );
            }
            if held && level == found {
                return format!(
                    "{STOPPED_CONVERGED}; validated at {} over {}",
                    level_words(level),
                    steps_words(n)
                );
            }
            if held {
                return format!(
                    "{STOPPED_CONVERGED}; the validation at {} failed, stepped down to {}, which \
                     held over {}",
                    level_words(found),
                    level_words(level),
                    steps_words(n)
                );
            }
            if limited {
                return STOPPED_GENERATOR.to_string();
            }
            // Near the knee a longer run drifts where a short step held: each step down twice
            // as far as the one before, so that the last is clear of it (1 %, 2 %, 4 %: 7 % in
            // all at the default resolution); whole VUs go down by one at least.
            let down = self.config.resolution * f64::from(1u32 << tried);
            let mut lower = round(level * (1.0 - down).max(0.0));
            if self.config.integer && lower >= level {
                lower = level - 1.0;
            }
            if lower >= level || lower < 1e-3 {
                return format!(
                    "{STOPPED_CONVERGED}; the validation failed at {}, the lowest level",
                    level_words(level)
                );
            }
            level = lower;
        }
        format!(
            "{STOPPED_CONVERGED}; the validation failed at {} and each step down",
            level_words(found)
        )
    }
}

/// A length in steps, in words: `1 step`, `3 steps`.
pub(super) fn steps_words(n: u32) -> String {
    format!("{n} step{}", if n == 1 { "" } else { "s" })
}

/// A level in the words of the stop reason: `400.0`, `32`.
fn level_words(level: f64) -> String {
    if level.fract() == 0.0 {
        format!("{level:.0}")
    } else {
        format!("{level:.1}")
    }
}

/// How a search whose budget was spent with its bracket still open ended: the bracket (`held`,
/// the highest level that held; `broke`, the lowest that broke), and that nothing validated its
/// floor.
fn unconverged(held: f64, broke: f64) -> String {
    format!(
        "{STOPPED_BUDGET} {UNCONVERGED}: the maximum lies between {} and {}, not validated",
        level_words(held),
        level_words(broke)
    )
}
