//! Observers: what watches a run while it goes — the progress line, live thresholds, the
//! Prometheus exporter (`export::live`), and (later) the distributed coordinator, a live terminal
//! view. They are called on the control thread only, never on the hot path: the workers send
//! per-second snapshots over a channel, and the control loop hands each to every observer.

use std::time::{Duration, Instant};

use crate::record::model::Ci95;
use crate::record::recorder::IntervalSnapshot;
use crate::record::series::SecondStats;

use super::Abort;

/// How often [`Observer::tick`] is called.
pub const TICK: Duration = Duration::from_millis(250);

/// The run's clock, given to observers when it starts.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// Origin of the schedule: the warm-up starts here.
    pub start: Instant,
    /// End of the warm-up: measuring starts here.
    pub measure_start: Instant,
    /// The planned measured window, when every scenario has a planned end.
    pub measured: Option<Duration>,
}

/// The whole run's running totals, summed over the workers at a tick.
#[derive(Debug, Clone, Copy)]
pub struct Live {
    /// When the totals were read.
    pub now: Instant,
    /// Requests finished so far (warm-up included).
    pub requests: u64,
    /// Of which failed.
    pub errors: u64,
}

/// Watches a run. Every method has a default that does nothing, so an observer implements only
/// what it needs. Calls come in this order: [`start`](Self::start) once, then
/// [`interval`](Self::interval), [`second`](Self::second), [`worker_done`](Self::worker_done)
/// and [`tick`](Self::tick) as they happen, then [`finish`](Self::finish) once.
pub trait Observer {
    /// Whether this observer needs each result group's figures in every interval snapshot
    /// ([`IntervalSnapshot::groups`]); asked once, before the workers start. Keeping them costs
    /// each request one more histogram record per group it belongs to.
    fn wants_groups(&self) -> bool {
        false
    }
    /// Whether this observer needs the `--group-by` tables' figures per value in every interval
    /// snapshot ([`Breakdown::grouped`](crate::record::recorder::Breakdown::grouped)); asked
    /// once, before the workers start. Recording a request costs nothing more: each worker
    /// takes them once a second as a difference, and keeps what it last reported (a histogram
    /// per value).
    fn wants_group_values(&self) -> bool {
        false
    }
    /// Whether this observer needs the latencies of the streams each interval ended
    /// ([`Breakdown::streams`](crate::record::recorder::Breakdown::streams)); asked once,
    /// before the run.
    fn wants_stream_latencies(&self) -> bool {
        false
    }
    /// The workers are about to start.
    fn start(&mut self, _clock: &Clock) {}
    /// One worker's snapshot of one second (its last, partial one when it ends). Each worker's
    /// seconds arrive in order; different workers' seconds interleave.
    fn interval(&mut self, _snapshot: &IntervalSnapshot) {}
    /// A second every worker has reported, merged: the row the record's series gets.
    fn second(&mut self, _second: &SecondStats) {}
    /// Whether this observer follows the run's 95 % intervals as they narrow
    /// ([`ci95`](Self::ci95)); asked once, before the workers start.
    fn wants_ci95(&self) -> bool {
        false
    }
    /// The 95 % intervals of the run's figures over the seconds every worker has reported so
    /// far, after each such second (only when [`wants_ci95`](Self::wants_ci95)); and each
    /// result group's, by group id (empty when the run keeps no group intervals: a load that
    /// changes, or no groups).
    fn ci95(&mut self, _ci: &Ci95, _groups: &[Ci95]) {}
    /// A worker ended.
    fn worker_done(&mut self) {}
    /// Every [`TICK`], with the running totals.
    fn tick(&mut self, _live: &Live) {}
    /// Asked after every snapshot and worker end: `Some` stops the run now (the first such
    /// answer is kept). `elapsed` is the time since measuring began.
    fn stop(&mut self, _elapsed: Duration) -> Option<Abort> {
        None
    }
    /// The run ended: every worker is done.
    fn finish(&mut self) {}
}

/// What the observers of a run need in the interval snapshots beyond the run's own figures.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Wants {
    /// Each result group's interval figures ([`Observer::wants_groups`]).
    pub(super) groups: bool,
    /// The `--group-by` tables' figures per value ([`Observer::wants_group_values`]).
    pub(super) values: bool,
    /// The latencies of the streams each interval ended
    /// ([`Observer::wants_stream_latencies`]).
    pub(super) streams: bool,
}

impl Wants {
    /// What any of `observers` needs.
    pub(super) fn of(observers: &[&mut dyn Observer]) -> Self {
        Self {
            groups: observers.iter().any(|o| o.wants_groups()),
            values: observers.iter().any(|o| o.wants_group_values()),
            streams: observers.iter().any(|o| o.wants_stream_latencies()),
        }
    }
}

/// The observers of one run, called in order.
pub(super) struct Observers<'a>(pub(super) Vec<&'a mut (dyn Observer + 'a)>);

impl Observers<'_> {
    pub(super) fn each(&mut self, mut f: impl FnMut(&mut dyn Observer)) {
        for o in &mut self.0 {
            f(&mut **o);
        }
    }

    /// Whether any observer follows the intervals.
    pub(super) fn wants_ci95(&self) -> bool {
        self.0.iter().any(|o| o.wants_ci95())
    }

    /// The first observer's reason to stop, if any.
    pub(super) fn stop(&mut self, elapsed: Duration) -> Option<Abort> {
        self.0.iter_mut().find_map(|o| o.stop(elapsed))
    }
}
