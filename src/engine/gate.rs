//! Gates: what lets a VU start its next iteration. The closed and open models differ only here;
//! the loop that runs iterations is the same.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Poll, Waker};
use std::time::Instant;

use super::RunShared;
use super::clock::{SystemClock, TimeSource};
use crate::schedule::Ramp;

/// Permission to run one iteration.
#[derive(Debug, Clone, Copy)]
pub struct Ticket {
    /// Open model: when the iteration was due, the point of the worker's send grid at or after
    /// `arrival`; its first request's latency and send lag are measured from here. `None` in the
    /// closed model: latency runs from the send, and there is no send lag.
    pub due: Option<Instant>,
    /// When the schedule put the iteration (open model: its arrival; closed: its start): which
    /// ladder phase it belongs to.
    pub arrival: Instant,
    /// False for warm-up iterations, which are sent but not measured.
    pub measured: bool,
}

/// The gate of one scenario on one worker.
pub(super) enum Gate {
    /// Closed model: the VU ramp and iteration limits.
    Closed(ClosedGate),
    /// Open model: the pacer's hand-outs.
    Open(OpenDispatch),
}

impl Gate {
    /// The next ticket of VU `vu` (global number), dispatcher slot `slot`, after `done`
    /// iterations; `None` when it is finished.
    #[inline]
    pub(super) async fn next(&self, vu: u32, slot: usize, done: u64) -> Option<Ticket> {
        match self {
            Gate::Closed(g) => g.next(vu, done).await,
            Gate::Open(d) => d.next(slot).await,
        }
    }
}

/// Closed model: VU `i` may start an iteration while the scenario's VU ramp is above `i` and its
/// iteration limits allow; an inactive VU sleeps until the ramp reaches it.
pub struct ClosedGate {
    run: Arc<RunShared>,
    scenario: usize,
}

impl ClosedGate {
    /// A gate for one scenario.
    pub fn new(run: Arc<RunShared>, scenario: usize) -> Self {
        Self { run, scenario }
    }

    /// The next ticket for VU `vu` (0-based) that has done `done` iterations, or `None` when it
    /// is finished.
    #[inline]
    pub async fn next(&self, vu: u32, done: u64) -> Option<Ticket> {
        let run = &*self.run;
        let shared = &run.scenarios[self.scenario];
        let profile = &run.plan.scenarios[self.scenario].profile;
        let rule = ClosedRule {
            ramp: profile.ramp(),
            per_vu: profile.per_vu_iterations(),
            start: shared.start,
            end: shared.end,
            measure_start: run.measure_start,
            remaining: shared.remaining.as_ref(),
        };
        closed_ticket(&rule, &SystemClock, || run.stop.is_aborted(), vu, done).await
    }
}

/// The closed model's rule for one scenario: which VU may start an iteration when. Pure: the
/// time is an argument.
pub(super) struct ClosedRule<'a> {
    /// The VU count over time since `start`.
    pub ramp: &'a Ramp,
    /// Iterations each VU runs at most.
    pub per_vu: Option<u64>,
    /// When the scenario starts.
    pub start: Instant,
    /// No iteration starts at or after this.
    pub end: Option<Instant>,
    /// Results count from here: earlier iterations are warm-up.
    pub measure_start: Instant,
    /// Measured iterations left over all VUs and workers (a shared iteration count).
    pub remaining: Option<&'a AtomicU64>,
}

/// What [`ClosedRule::admit`] says.
#[derive(Debug, Clone, Copy)]
pub(super) enum Admit {
    /// Start an iteration now.
    Go(Ticket),
    /// Ask again at this instant (the ramp has not reached the VU yet).
    WaitUntil(Instant),
    /// The VU is done.
    Finished,
}

impl ClosedRule<'_> {
    /// Whether VU `vu`, which has done `done` iterations, may start one at `now`. A measured
    /// ticket takes one of the shared iterations left.
    pub(super) fn admit(&self, vu: u32, done: u64, now: Instant) -> Admit {
        if self.per_vu.is_some_and(|n| done >= n) || self.end.is_some_and(|end| now >= end) {
            return Admit::Finished;
        }
        if now < self.start {
            return Admit::WaitUntil(self.start);
        }
        let t = now - self.start;
        if !self.ramp.vu_active(vu, t) {
            return match self.ramp.vu_next_active(vu, t) {
                Some(at) => Admit::WaitUntil(self.start + at),
                None => Admit::Finished,
            };
        }
        let measured = now >= self.measure_start;
        if measured
            && let Some(remaining) = self.remaining
            && remaining
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| r.checked_sub(1))
                .is_err()
        {
            return Admit::Finished;
        }
        Admit::Go(Ticket {
            due: None,
            arrival: now,
            measured,
        })
    }
}

/// Waits on `clock` until `rule` admits VU `vu` (after `done` iterations) or finishes it, or
/// `stopped` says the run is over.
#[inline]
pub(super) async fn closed_ticket<C: TimeSource>(
    rule: &ClosedRule<'_>,
    clock: &C,
    stopped: impl Fn() -> bool,
    vu: u32,
    done: u64,
) -> Option<Ticket> {
    loop {
        if stopped() {
            return None;
        }
        match rule.admit(vu, done, clock.now()) {
            Admit::Go(ticket) => return Some(ticket),
            Admit::Finished => return None,
            Admit::WaitUntil(at) => clock.sleep_until(at).await,
        }
    }
}

/// Open model: a pacer hands due times to idle VUs; when none is idle, a new VU is started if
/// the scenario's VU cap allows (as k6's `maxVUs`: VUs are made as the load needs them, not all
/// up front), else the iteration is dropped (counted), never delayed.
pub struct OpenDispatch {
    /// Most VU slots this dispatcher may start.
    capacity: usize,
    /// The slots started so far, by slot number.
    slots: RefCell<Vec<Slot>>,
    /// Slots waiting for work, most recently idle last (reused first, so few connections open).
    idle: RefCell<Vec<usize>>,
    closed: Cell<bool>,
}

/// One VU's place in the dispatcher.
#[derive(Default)]
struct Slot {
    /// The ticket handed to it, if any.
    handed: Option<Ticket>,
    /// Its waker while it waits.
    waker: Option<Waker>,
    /// Whether it is in `idle`.
    idle: bool,
}

/// What [`OpenDispatch::hand_out`] did with a ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandOut {
    /// An idle VU has it.
    Handed,
    /// No VU was idle: slot `.0` was made, holding the ticket; the caller starts its VU.
    Start(usize),
    /// Every VU is busy and the cap is reached: the iteration is dropped.
    Dropped,
}

impl OpenDispatch {
    /// A dispatcher that may start up to `capacity` VUs (none is started yet).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            slots: RefCell::new(Vec::new()),
            idle: RefCell::new(Vec::new()),
            closed: Cell::new(false),
        }
    }

    /// Waits for a ticket for VU slot `slot`; `None` once the dispatcher is closed.
    pub async fn next(&self, slot: usize) -> Option<Ticket> {
        poll_fn(|cx| {
            let mut slots = self.slots.borrow_mut();
            let me = &mut slots[slot];
            if let Some(ticket) = me.handed.take() {
                return Poll::Ready(Some(ticket));
            }
            if self.closed.get() {
                return Poll::Ready(None);
            }
            me.waker = Some(cx.waker().clone());
            if !std::mem::replace(&mut me.idle, true) {
                self.idle.borrow_mut().push(slot);
            }
            Poll::Pending
        })
        .await
    }

    /// Hands `ticket` to an idle VU, or to a new slot while the cap allows.
    pub fn hand_out(&self, ticket: Ticket) -> HandOut {
        let mut slots = self.slots.borrow_mut();
        let popped = self.idle.borrow_mut().pop();
        let Some(slot) = popped else {
            if slots.len() >= self.capacity {
                return HandOut::Dropped;
            }
            slots.push(Slot {
                handed: Some(ticket),
                ..Slot::default()
            });
            return HandOut::Start(slots.len() - 1);
        };
        let me = &mut slots[slot];
        me.idle = false;
        me.handed = Some(ticket);
        if let Some(waker) = me.waker.take() {
            waker.wake();
        }
        HandOut::Handed
    }

    /// VU slots started so far.
    #[cfg(test)]
    pub fn started(&self) -> usize {
        self.slots.borrow().len()
    }

    /// Ends dispatching: every waiting VU gets `None`.
    pub fn close(&self) {
        self.closed.set(true);
        for slot in self.slots.borrow_mut().iter_mut() {
            if let Some(w) = slot.waker.take() {
                w.wake();
            }
        }
    }
}

#[cfg(test)]
mod tests;
