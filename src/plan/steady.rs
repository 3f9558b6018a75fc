//! Whether a plan's load holds one level over its whole measured window — what a run asked to
//! last until precise (`--precision`, `[precision]`) needs: stopping it once its figures are
//! precise must not cut a ramp, a ladder or a later scenario short, and its intervals assume
//! every second measures the same load (docs/measurement.md, "Uncertainty").

use std::fmt;
use std::time::Duration;

use super::Plan;
use crate::analysis::interval::MIN_BATCHES;

/// Why a plan's load does not hold one level, or cannot be precise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsteady {
    /// A scenario's level changes over time (a ramp, a ladder's phases).
    Ramps {
        /// The scenario.
        scenario: String,
    },
    /// Two scenarios start or end at different times.
    Staggered {
        /// The scenario that starts or ends apart from the first.
        scenario: String,
        /// The first scenario.
        first: String,
    },
    /// The only scenario ends by a count of iterations (`-n`, `iterations`), not at a set time:
    /// its load is steady, but a run asked to be precise would have no length to stop within.
    Counted {
        /// The scenario; `None` in a run of one URL (quick mode, `-n`), which has none of the
        /// user's (the plan reader says so).
        scenario: Option<String>,
    },
    /// Each VU of a scenario stops after its own count of iterations (`per-vu-iterations`):
    /// the load falls as they finish, one VU after another.
    PerVu {
        /// The scenario.
        scenario: String,
    },
    /// A scenario beside others ends by a count of iterations, so it may end apart from them.
    CountedBeside {
        /// The scenario that ends by a count.
        scenario: String,
        /// Another scenario of the plan.
        other: String,
    },
    /// Every scenario starts after the warm-up ends: the measured window opens with seconds
    /// of no load.
    Idle {
        /// The first scenario.
        scenario: String,
        /// The seconds of the window before it starts.
        idle: Duration,
    },
    /// The measured window is shorter than the fewest batches an interval needs.
    TooShort {
        /// The measured window.
        window: Duration,
    },
}

impl Unsteady {
    /// What is not steady, in words: "scenario `up` changes its load over time (a ramp or a
    /// ladder)" — what a run's record says of intervals it leaves out.
    pub fn cause(&self) -> String {
        match self {
            Self::Ramps { scenario } => {
                format!("scenario `{scenario}` changes its load over time (a ramp or a ladder)")
            }
            Self::Staggered { scenario, first } => {
                format!("scenario `{scenario}` starts or ends apart from `{first}`")
            }
            Self::Counted {
                scenario: Some(scenario),
            } => format!(
                "scenario `{scenario}` ends after a number of iterations, not at a set time"
            ),
            Self::Counted { scenario: None } => {
                "the run ends after a number of requests (-n), not at a set time".into()
            }
            Self::PerVu { scenario } => format!(
                "each VU of scenario `{scenario}` stops after its own iterations, so the load \
                 falls as they finish"
            ),
            Self::CountedBeside { scenario, other } => format!(
                "scenario `{scenario}` ends after a number of iterations, so it may end apart \
                 from `{other}`"
            ),
            Self::Idle { scenario, idle } => format!(
                "the measured window's first {} carry no load: every scenario, `{scenario}` \
                 included, starts after them",
                humantime::format_duration(*idle)
            ),
            Self::TooShort { window } => format!(
                "the run measures for {}, and an interval needs at least {MIN_BATCHES} \
                 one-second batches",
                humantime::format_duration(*window)
            ),
        }
    }

    /// Whether the run's seconds measure different loads (a ramp, scenarios apart), so that
    /// batch means over them are no interval at all; a short window only lacks batches, and a
    /// lone scenario that ends by a count only lacks a set length.
    pub fn mixes_loads(&self) -> bool {
        !matches!(self, Self::TooShort { .. } | Self::Counted { .. })
    }
}

impl fmt::Display for Unsteady {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let then = match self {
            Self::Ramps { .. } | Self::PerVu { .. } => {
                "a run stopped once precise would cut it short, and its figures mix the levels"
            }
            Self::Staggered { .. } | Self::CountedBeside { .. } => {
                "a run stopped once precise would stop both, cutting one short"
            }
            Self::Counted { .. } => {
                "a run asked to be precise needs a set length as its longest (-d, or the \
                 profile's duration, without an iteration count)"
            }
            Self::Idle { .. } => "its seconds mix no load with load (start one scenario at once)",
            Self::TooShort { .. } => "so it could never be precise",
        };
        match self {
            Self::TooShort { .. } => write!(f, "{}, {then}", self.cause()),
            _ => write!(f, "{}: {then}", self.cause()),
        }
    }
}

impl Plan {
    /// Why this plan cannot be run until precise, if it cannot: a scenario whose level
    /// changes, scenarios that start or end at different times (or may: one beside others that
    /// ends by an iteration count), a scenario that ends by a count, scenarios that all start
    /// after the warm-up, or a measured window shorter than [`MIN_BATCHES`] seconds.
    pub fn unsteady(&self) -> Option<Unsteady> {
        let first = self.scenarios.first()?;
        for sc in &self.scenarios {
            if !sc.profile.ramp().is_constant() {
                return Some(Unsteady::Ramps {
                    scenario: sc.name.clone(),
                });
            }
            // One VU alone ends all at once: its load holds to the end.
            if sc.profile.per_vu_iterations().is_some() && sc.max_vus() > 1 {
                return Some(Unsteady::PerVu {
                    scenario: sc.name.clone(),
                });
            }
            let other = self.scenarios.iter().find(|o| o.name != sc.name);
            if let Some(other) = other.filter(|_| sc.profile.ends_by_count()) {
                return Some(Unsteady::CountedBeside {
                    scenario: sc.name.clone(),
                    other: other.name.clone(),
                });
            }
            if sc.start_after != first.start_after
                || sc.profile.duration() != first.profile.duration()
            {
                return Some(Unsteady::Staggered {
                    scenario: sc.name.clone(),
                    first: first.name.clone(),
                });
            }
        }
        if first.start_after > self.warmup {
            return Some(Unsteady::Idle {
                scenario: first.name.clone(),
                idle: first.start_after - self.warmup,
            });
        }
        if first.profile.ends_by_count() {
            return Some(Unsteady::Counted {
                scenario: Some(first.name.clone()),
            });
        }
        let end = first.start_after + first.profile.duration()?;
        let window = end.saturating_sub(self.warmup);
        (window < Duration::from_secs(MIN_BATCHES as u64)).then_some(Unsteady::TooShort { window })
    }
}
