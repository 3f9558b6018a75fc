//! The open model's pacer: hands each due iteration of this worker's share of the schedule to an
//! idle VU, starts a VU for it (up to the cap), or counts it dropped.
//!
//! The arrivals come from `schedule` ([`Interleave::due`] on the scenario's [`Ramp`]) and are due
//! at the points of the worker's send [`Grid`]; what to do at each one is decided by [`Arrivals`]
//! from the time the [`TimeSource`] reads, so the loop ([`pace`]) runs the same under tokio's
//! paused time in tests as on the timerfd in a run.
//!
//! A pacer behind its schedule sends every iteration due, late, with its due time: latency and
//! send lag are measured from it (no coordinated omission), and nothing is skipped. Nothing is
//! handed out once the scenario's end is [`LATE_LIMIT`] past: iterations still owed then (the
//! generator fell far behind) are not sent that late, which would stretch a 1 s run asked for
//! 10⁸ req/s into many seconds; the shortfall shows in the achieved rate, the send lag and their
//! warnings.

use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::RunShared;
use super::clock::{PreciseClock, TimeSource};
use super::connections::VuConnections;
use super::gate::{Gate, HandOut, Ticket};
use super::vu::{Vu, vu_loop};
use super::worker::WorkerState;
use crate::record::recorder::Send;
use crate::schedule::{ArrivalProcess, Grid, Interleave, PoissonStream, Ramp, stream_id};

/// How long after a scenario's end the open model still sends iterations that fell due before it.
pub(super) const LATE_LIMIT: Duration = Duration::from_secs(1);

/// The default tick of the send grid ([`Grid`]): a worker wakes at most once per tick and sends
/// every arrival of the tick at once, so above 1 000 requests per second per worker one timer
/// wake-up (and, as their responses come back together, one more) serves several requests. What
/// it costs is the offered load's shape within a millisecond (a tick's requests leave in a
/// burst), not a wait: each request is due at its grid point, and measured from it.
pub const DEFAULT_GRID_TICK: Duration = Duration::from_millis(1);

/// One worker's share of an open scenario's arrivals: when each falls due and whether it is
/// still handed out. Pure: it reads no clock.
pub(super) struct Arrivals<'a> {
    ramp: &'a Ramp,
    share: Interleave,
    /// Where this share's arrivals fall due.
    grid: Grid,
    /// The schedule's origin: event `n` arrives at `start + ramp.due(n)`, due at the grid point
    /// at or after that.
    start: Instant,
    /// Results count from here: earlier iterations are warm-up.
    measure_start: Instant,
    /// Nothing is handed out at or after this (the scenario's end + [`LATE_LIMIT`]).
    cutoff: Option<Instant>,
    /// Global indices at or above this never fall due (a count limit).
    bound: Option<u64>,
    /// This share's next item.
    k: u64,
    /// When item `k` arrives and is due (none: the share is done).
    next: Option<Due>,
    /// Poisson arrivals: this share's own stream, and how many of its arrivals fell in the
    /// warm-up (the count limit counts those after it).
    poisson: Option<(PoissonStream, u64)>,
    /// The count limit of Poisson arrivals: measured arrivals over all workers.
    limit: Option<u64>,
}

/// When an arrival falls and when it is due.
#[derive(Debug, Clone, Copy)]
struct Due {
    arrival: Instant,
    due: Instant,
}

impl<'a> Arrivals<'a> {
    /// The share `share` of `ramp` started at `start`, sent on `grid`, measured from
    /// `measure_start` (by arrival), ending at `end` (if it ends by time) or after `limit`
    /// measured iterations over all workers (quick mode `-n`: exactly that many fall due, sent or
    /// dropped, after the warm-up's).
    pub(super) fn new(
        ramp: &'a Ramp,
        share: Interleave,
        grid: Grid,
        start: Instant,
        measure_start: Instant,
        end: Option<Instant>,
        limit: Option<u64>,
    ) -> Self {
        let warmup_count = ramp.count_before(measure_start.saturating_duration_since(start));
        let mut arrivals = Self {
            poisson: None,
            limit,
            ramp,
            share,
            grid,
            start,
            measure_start,
            cutoff: end.map(|end| end + LATE_LIMIT),
            bound: limit.map(|n| warmup_count + n),
            k: 0,
            next: None,
        };
        arrivals.next = arrivals.due(0);
        arrivals
    }

    /// Spaces the arrivals as `process`: a Poisson process takes its own stream, number
    /// `stream` (unique to the scenario, the share of the test and the worker).
    pub(super) fn with_process(mut self, process: ArrivalProcess, stream: u64) -> Self {
        if let ArrivalProcess::Poisson { seed } = process {
            let s = PoissonStream::new(seed, stream, self.share.workers);
            self.poisson = Some((s, 0));
            self.bound = None;
            self.next = self.due(0);
        }
        self
    }

    fn due(&mut self, k: u64) -> Option<Due> {
        if let Some((stream, warm)) = &mut self.poisson {
            let offset = self.ramp.due_area(stream.next_area())?;
            let arrival = self.start + offset;
            if arrival < self.measure_start {
                *warm += 1;
            } else if self.limit.is_some_and(|n| self.share.index(k - *warm) >= n) {
                return None;
            }
            let due = self.start + self.grid.due(offset);
            return Some(Due { arrival, due });
        }
        let n = self.share.index(k);
        if self.bound.is_some_and(|b| n >= b) {
            return None;
        }
        self.share.due(self.ramp, k).map(|offset| Due {
            arrival: self.start + offset,
            due: self.start + self.grid.due(offset),
        })
    }

    /// When the next iteration is due; `None` when this share has none left.
    #[inline]
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.next.map(|n| n.due)
    }

    /// The grid's tick.
    #[inline]
    pub(super) fn tick(&self) -> Duration {
        self.grid.tick
    }

    /// Moves on to the next iteration.
    #[inline]
    pub(super) fn advance(&mut self) {
        self.k += 1;
        self.next = self.due(self.k);
    }

    /// Whether an iteration is too late to send at `now` (see [`LATE_LIMIT`]).
    #[inline]
    pub(super) fn too_late(&self, now: Instant) -> bool {
        self.cutoff.is_some_and(|cutoff| now >= cutoff)
    }

    /// When the next iteration is due, and its ticket; `None` when this share has none left.
    #[inline]
    pub(super) fn ticket(&self) -> Option<(Instant, Ticket)> {
        self.next.map(|Due { arrival, due }| {
            let ticket = Ticket {
                due: Some(due),
                arrival,
                measured: arrival >= self.measure_start,
            };
            (due, ticket)
        })
    }
}

/// Runs `arrivals` on `clock`: waits for each due time and calls `hand_out` with its ticket,
/// until the share is done, `stopped` says so, or it is too late.
///
/// Due times are grid points (see [`Grid`]), so one wake-up hands out every iteration of a
/// point in one pass; nothing goes out before its due time. A pacer more than two ticks behind
/// lets the VUs and the reactor run between hand-outs; with no grid (a zero tick) it does so
/// whenever the next iteration is already due.
pub(super) async fn pace<C: TimeSource>(
    arrivals: &mut Arrivals<'_>,
    clock: &C,
    stopped: impl Fn() -> bool,
    mut hand_out: impl FnMut(Ticket),
) {
    // How far behind its due time the next iteration may be before the pacer counts as behind:
    // a point's worth of iterations, plus a tick for the wake-up's latency.
    let behind = 2 * arrivals.tick();
    let mut now = clock.now();
    while let Some((due, ticket)) = arrivals.ticket() {
        if stopped() {
            break;
        }
        while due > now {
            clock.sleep_until(due).await;
            now = clock.now();
        }
        if arrivals.too_late(now) {
            break;
        }
        hand_out(ticket);
        arrivals.advance();
        now = clock.now();
        // Behind schedule: let the VUs run and the reactor deliver finished responses first, so
        // overdue iterations go to VUs that are really free instead of bursting onto new
        // connections.
        if arrivals.next_due().is_some_and(|next| next + behind <= now) {
            tokio::task::yield_now().await;
            now = clock.now();
        }
    }
}

/// The pacer task of open scenario `scenario` on this worker (one of `stride` taking part):
/// paces its share, starting VUs on the worker's thread as the load needs them, then waits for
/// them to finish.
pub(super) async fn pacer(
    state: Rc<WorkerState>,
    gate: Rc<Gate>,
    run: Arc<RunShared>,
    scenario: usize,
    stride: usize,
    mut conns: VuConnections,
) {
    let Gate::Open(dispatch) = &*gate else {
        return;
    };
    let profile = &run.plan.scenarios[scenario].profile;
    let (ramp, limit) = (profile.ramp(), profile.arrival_limit());
    let process = profile.arrival_process().unwrap_or_default();
    let segment = run.plan.share.as_ref().map_or(0, |s| s.segment.index());
    let share = Interleave {
        worker: state.index,
        workers: stride,
    };
    let timing = &run.scenarios[scenario];
    let mut arrivals = Arrivals::new(
        ramp,
        share,
        Grid::for_share(run.send_grid, share),
        timing.start,
        run.measure_start,
        timing.end,
        limit,
    )
    .with_process(process, stream_id(scenario, segment, state.index));
    let group = run.plan.scenarios[scenario].group;
    let mut vus = Vec::new();
    let clock = PreciseClock::new();
    let stopped = || run.stop.is_aborted();
    pace(&mut arrivals, &clock, stopped, |ticket| {
        match dispatch.hand_out(ticket) {
            HandOut::Handed => {}
            HandOut::Start(slot) => vus.push(tokio::task::spawn_local(vu_loop(
                Vu {
                    scenario,
                    // Global VU numbers: the same interleave as the arrivals.
                    vu: share.index(slot as u64) as u32,
                    slot,
                },
                conns.next(),
                state.clone(),
                gate.clone(),
                run.clone(),
            ))),
            HandOut::Dropped if ticket.measured => {
                let mut rec = state.recorder.borrow_mut();
                rec.record_dropped(group);
                if let Some(due) = ticket.due {
                    let due_us =
                        super::vu::micros(due.saturating_duration_since(run.measure_start));
                    rec.record_send(
                        scenario,
                        Send {
                            due_us,
                            sent_us: None,
                        },
                    );
                }
            }
            HandOut::Dropped => {}
        }
    })
    .await;
    dispatch.close();
    for vu in vus {
        let _ = vu.await;
    }
}

#[cfg(test)]
mod tests;
