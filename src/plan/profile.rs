//! The load profile of a scenario: how it starts iterations. The one file that knows the
//! profiles' variants (with [`super::read`]'s `profile.rs`, which reads them from a plan): the
//! engine, the record, the reports, the live outputs, find-max and suites ask a [`Profile`]
//! through its methods, and the engine runs it by its [`LoadModel`] — the VU loop for the
//! closed model, the pacer for the open one.

use std::time::Duration;

use super::segment::ShareError;
use crate::record::model::{LoadModel, ProfileKind};
use crate::schedule::{ArrivalProcess, Ramp, Segment};

/// The most arrivals per second an open scenario gives each worker thread before it takes one
/// more. One worker sends them on its send grid, several per wake-up; spread over many workers, a
/// low rate would leave each a request per tick or less, that is a wake-up per request, 1.5–3.5×
/// the CPU per request (bench/README.md, "The send grid"). 10 000 per second is a tenth to a fifth
/// of a core at the 10–20 µs a request costs on the grid, and 60 % at the dearest cost measured per
/// request (~60 µs, a wake-up each).
pub const OPEN_RATE_PER_WORKER: f64 = 10_000.0;

/// How a scenario starts iterations.
#[derive(Debug, Clone)]
pub enum Profile {
    /// Closed model: VU `i` runs iterations back to back while the ramp's level is above `i`.
    Vus {
        /// VU count over time.
        ramp: Ramp,
        /// Iteration limits.
        iterations: Iterations,
        /// Iteration-limited profiles: stop after this long anyway (`None` = the ramp's length,
        /// or unlimited for iteration counts).
        max_duration: Option<Duration>,
    },
    /// Open model: iterations fall due at the ramp's rate (per second), each handed to an idle
    /// VU; with none idle it is dropped and counted.
    Arrival {
        /// Arrival rate over time, iterations per second.
        ramp: Ramp,
        /// VUs available (the in-flight cap).
        max_vus: u32,
        /// Stop after this many iterations have fallen due (quick mode `-n`).
        limit: Option<u64>,
        /// How the arrivals are spaced: evenly, or as a Poisson process.
        process: ArrivalProcess,
    },
}

/// Iteration limits of a VU profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Iterations {
    /// As many as time allows.
    Unlimited,
    /// This many in total, shared by all VUs.
    Shared(u64),
    /// This many per VU.
    PerVu(u64),
}

impl Profile {
    /// A constant load for `length`: `level` VUs (closed) or iterations per second (open, with
    /// at most `max_in_flight` in flight) — a step of find-max.
    pub fn constant(model: LoadModel, level: f64, length: Duration, max_in_flight: u32) -> Self {
        let ramp = Ramp::constant(level, length);
        match model {
            LoadModel::Open => Self::Arrival {
                ramp,
                max_vus: max_in_flight,
                limit: None,
                process: ArrivalProcess::Uniform,
            },
            LoadModel::Closed => Self::Vus {
                ramp,
                iterations: Iterations::Unlimited,
                max_duration: None,
            },
        }
    }

    /// Closed (VUs, the engine's VU loop) or open (arrivals, the engine's pacer).
    pub fn model(&self) -> LoadModel {
        match self {
            Self::Vus { .. } => LoadModel::Closed,
            Self::Arrival { .. } => LoadModel::Open,
        }
    }

    /// How an open profile's arrivals are spaced (`None` for the closed model).
    pub fn arrival_process(&self) -> Option<ArrivalProcess> {
        match self {
            Self::Vus { .. } => None,
            Self::Arrival { process, .. } => Some(*process),
        }
    }

    /// Spaces an open profile's arrivals as `process` (a closed profile is left as it is).
    pub fn set_arrival_process(&mut self, to: ArrivalProcess) {
        if let Self::Arrival { process, .. } = self {
            *process = to;
        }
    }

    /// Whether this is an open-model (arrival-rate) profile.
    pub fn is_open(&self) -> bool {
        self.model() == LoadModel::Open
    }

    /// The level over time since the scenario's start: VUs (closed) or iterations per second
    /// (open).
    pub fn ramp(&self) -> &Ramp {
        match self {
            Self::Vus { ramp, .. } | Self::Arrival { ramp, .. } => ramp,
        }
    }

    /// The level due `t` after the scenario's start: VUs or iterations per second.
    pub fn level_at(&self, t: Duration) -> f64 {
        self.ramp().level_at(t)
    }

    /// Most VUs at once: the ramp's peak (closed), the in-flight cap (open).
    pub fn max_vus(&self) -> u32 {
        match self {
            Self::Vus { ramp, .. } => ramp.peak().ceil() as u32,
            Self::Arrival { max_vus, .. } => *max_vus,
        }
    }

    /// The worker threads that run this profile out of `threads` (workers `0..n`): no more than
    /// it has VUs, and for the open model no more than one per [`OPEN_RATE_PER_WORKER`] of its
    /// peak rate; at least one.
    pub fn workers(&self, threads: usize) -> usize {
        let by_rate = match self.model() {
            LoadModel::Open => (self.ramp().peak() / OPEN_RATE_PER_WORKER).ceil() as usize,
            LoadModel::Closed => usize::MAX,
        };
        threads.min(self.max_vus() as usize).min(by_rate).max(1)
    }

    /// The open model's cap on iterations in flight; `None` for the closed model.
    pub fn in_flight_cap(&self) -> Option<u32> {
        match self {
            Self::Vus { .. } => None,
            Self::Arrival { max_vus, .. } => Some(*max_vus),
        }
    }

    /// The closed model's iteration limits (`Unlimited` for the open model, see
    /// [`Profile::arrival_limit`]).
    pub fn iterations(&self) -> Iterations {
        match self {
            Self::Vus { iterations, .. } => *iterations,
            Self::Arrival { .. } => Iterations::Unlimited,
        }
    }

    /// Iterations shared by all the VUs of a closed-model profile, in all.
    pub fn shared_iterations(&self) -> Option<u64> {
        match self.iterations() {
            Iterations::Shared(n) => Some(n),
            _ => None,
        }
    }

    /// Iterations each VU of a closed-model profile runs at most.
    pub fn per_vu_iterations(&self) -> Option<u64> {
        match self.iterations() {
            Iterations::PerVu(n) => Some(n),
            _ => None,
        }
    }

    /// The open model's limit on the iterations that fall due (quick mode `-n`).
    pub fn arrival_limit(&self) -> Option<u64> {
        match self {
            Self::Vus { .. } => None,
            Self::Arrival { limit, .. } => *limit,
        }
    }

    /// Whether the profile can end by a count of iterations (shared, per VU, or falling due)
    /// rather than only when its time is up.
    pub fn ends_by_count(&self) -> bool {
        self.iterations() != Iterations::Unlimited || self.arrival_limit().is_some()
    }

    /// The iterations asked for in all, when counted: shared by the VUs (closed) or falling
    /// due (open).
    pub fn iteration_count(&self) -> Option<u64> {
        self.shared_iterations().or(self.arrival_limit())
    }

    /// An iteration-limited closed profile's time limit.
    pub fn max_duration(&self) -> Option<Duration> {
        match self {
            Self::Vus { max_duration, .. } => *max_duration,
            Self::Arrival { .. } => None,
        }
    }

    /// How long the profile sends load at most (from the scenario's start); `None` = until its
    /// iterations are done.
    pub fn duration(&self) -> Option<Duration> {
        match self {
            Self::Vus {
                ramp,
                iterations,
                max_duration,
            } => match (iterations, max_duration) {
                (_, Some(d)) => Some((*d).min(ramp.total())),
                (Iterations::Unlimited, None) => Some(ramp.total()),
                _ => None,
            },
            Self::Arrival { ramp, limit, .. } => match limit {
                Some(_) => None,
                None => Some(ramp.total()),
            },
        }
    }

    /// The profile as the record names it; `ladder`: the scenario holds ladder phases.
    pub fn kind(&self, ladder: bool) -> ProfileKind {
        let ramp = self.ramp();
        let constant =
            ramp.stages().len() == 1 && ramp.stages()[0].target == ramp.level_at(Duration::ZERO);
        match self {
            _ if ladder => ProfileKind::Ladder,
            Self::Vus { iterations, .. } => match iterations {
                Iterations::Shared(_) => ProfileKind::Iterations,
                Iterations::PerVu(_) => ProfileKind::PerVuIterations,
                Iterations::Unlimited if constant => ProfileKind::ConstantVus,
                Iterations::Unlimited => ProfileKind::RampingVus,
            },
            Self::Arrival { .. } if constant => ProfileKind::ConstantArrivalRate,
            Self::Arrival { .. } => ProfileKind::RampingArrivalRate,
        }
    }

    /// Makes this profile share `seg` of the whole's (`--segment i/N`); `warmup_in` is how much
    /// of the warm-up falls inside it. Errors: the share would get nothing.
    pub fn share(&mut self, seg: Segment, warmup_in: Duration) -> Result<(), ShareError> {
        let shares = seg.count();
        match self {
            Self::Vus {
                ramp, iterations, ..
            } => {
                let own = seg.vu_ramp(ramp);
                if own.peak() < 1.0 {
                    return Err(ShareError::Vus {
                        seg,
                        peak: ramp.peak(),
                    });
                }
                *ramp = own;
                if let Iterations::Shared(n) = iterations {
                    let total = *n;
                    *n = seg.share_of(total);
                    if *n == 0 {
                        return Err(ShareError::Iterations { total, seg });
                    }
                }
            }
            Self::Arrival {
                ramp,
                max_vus,
                limit,
                ..
            } => {
                // The measured arrivals are the whole's, after those due in the warm-up.
                let first = ramp.count_before(warmup_in);
                if let Some(n) = limit {
                    let total = *n;
                    *n = seg.share_of_range(first, total);
                    if *n == 0 {
                        return Err(ShareError::Requests { total, seg });
                    }
                }
                let cap = *max_vus;
                *max_vus = seg.vus(cap);
                if *max_vus == 0 {
                    return Err(ShareError::InFlightCap { cap, shares });
                }
                *ramp = seg.arrival_ramp(ramp);
                if ramp.due(0).is_none() {
                    return Err(ShareError::Arrivals(seg));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_profile_answers_by_its_model() {
        let d = Duration::from_secs(3);
        let open = Profile::constant(LoadModel::Open, 50.0, d, 8);
        assert_eq!(open.model(), LoadModel::Open);
        assert_eq!((open.max_vus(), open.in_flight_cap()), (8, Some(8)));
        assert_eq!(open.kind(false), ProfileKind::ConstantArrivalRate);
        assert_eq!(open.duration(), Some(d));
        let closed = Profile::constant(LoadModel::Closed, 4.0, d, 8);
        assert_eq!(closed.model(), LoadModel::Closed);
        assert_eq!((closed.max_vus(), closed.in_flight_cap()), (4, None));
        assert_eq!(closed.kind(true), ProfileKind::Ladder);
        assert_eq!(closed.level_at(Duration::from_secs(1)), 4.0);
        assert_eq!(closed.iteration_count(), None);
    }

    fn open(rate: f64, cap: u32) -> Profile {
        Profile::constant(LoadModel::Open, rate, Duration::from_secs(1), cap)
    }

    #[test]
    fn an_open_profile_takes_a_worker_per_ten_thousand_arrivals_a_second() {
        assert_eq!(open(2_000.0, 1_000).workers(4), 1);
        assert_eq!(open(10_000.0, 1_000).workers(4), 1);
        assert_eq!(open(10_001.0, 1_000).workers(4), 2);
        assert_eq!(open(20_000.0, 1_000).workers(4), 2);
        assert_eq!(open(35_000.0, 1_000).workers(4), 4);
        assert_eq!(open(100_000.0, 1_000).workers(4), 4, "at most --threads");
        assert_eq!(open(100_000.0, 2).workers(4), 2, "at most its VUs");
        assert_eq!(open(0.0, 1_000).workers(4), 1, "at least one");
    }

    #[test]
    fn a_closed_profile_takes_every_worker_it_has_vus_for() {
        let closed = |vus| Profile::constant(LoadModel::Closed, vus, Duration::from_secs(1), 0);
        assert_eq!(closed(64.0).workers(4), 4);
        assert_eq!(closed(3.0).workers(4), 3);
        assert_eq!(closed(1.0).workers(4), 1);
    }
}
