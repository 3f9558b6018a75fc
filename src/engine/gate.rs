//! Gates: what lets a VU start its next iteration. The closed and open models differ only here;
//! the loop that runs iterations is the same.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Poll, Waker};
use std::time::Instant;

use super::RunShared;
use crate::plan::{Iterations, Profile};

/// Permission to run one iteration.
#[derive(Debug, Clone, Copy)]
pub struct Ticket {
    /// When the iteration was due: its first request's latency is measured from here.
    pub due: Instant,
    /// False for warm-up iterations, which are sent but not measured.
    pub measured: bool,
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
        let Profile::Vus {
            ramp, iterations, ..
        } = &run.plan.scenarios[self.scenario].profile
        else {
            return None;
        };
        if let Iterations::PerVu(n) = iterations
            && done >= *n
        {
            return None;
        }
        loop {
            if run.stop.is_aborted() {
                return None;
            }
            let now = Instant::now();
            if shared.end.is_some_and(|end| now >= end) {
                return None;
            }
            if now < shared.start {
                tokio::time::sleep_until(shared.start.into()).await;
                continue;
            }
            let t = now - shared.start;
            if ramp.vu_active(vu, t) {
                let measured = now >= run.measure_start;
                if measured && let Some(remaining) = &shared.remaining {
                    // Exactly N measured iterations over all VUs and workers.
                    remaining
                        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| r.checked_sub(1))
                        .ok()?;
                }
                return Some(Ticket { due: now, measured });
            }
            let at = ramp.vu_next_active(vu, t)?;
            tokio::time::sleep_until((shared.start + at).into()).await;
        }
    }
}

/// Open model: a pacer hands due times to idle VUs; when none is idle, the iteration is dropped
/// (counted), never delayed.
pub struct OpenDispatch {
    /// Per VU slot: the ticket handed to it, if any.
    handed: Vec<Cell<Option<Ticket>>>,
    /// Per VU slot: its waker while it waits.
    wakers: Vec<Cell<Option<Waker>>>,
    /// Slots waiting for work, most recently idle last (reused first, so few connections open).
    idle: RefCell<Vec<usize>>,
    /// Per slot: whether it is in `idle`.
    is_idle: Vec<Cell<bool>>,
    closed: Cell<bool>,
}

impl OpenDispatch {
    /// A dispatcher for `slots` VUs.
    pub fn new(slots: usize) -> Self {
        Self {
            handed: (0..slots).map(|_| Cell::new(None)).collect(),
            wakers: (0..slots).map(|_| Cell::new(None)).collect(),
            idle: RefCell::new(Vec::with_capacity(slots)),
            is_idle: (0..slots).map(|_| Cell::new(false)).collect(),
            closed: Cell::new(false),
        }
    }

    /// Waits for a ticket for VU slot `slot`; `None` once the dispatcher is closed.
    pub async fn next(&self, slot: usize) -> Option<Ticket> {
        poll_fn(|cx| {
            if let Some(ticket) = self.handed[slot].take() {
                return Poll::Ready(Some(ticket));
            }
            if self.closed.get() {
                return Poll::Ready(None);
            }
            self.wakers[slot].set(Some(cx.waker().clone()));
            if !self.is_idle[slot].replace(true) {
                self.idle.borrow_mut().push(slot);
            }
            Poll::Pending
        })
        .await
    }

    /// Hands `ticket` to an idle VU; false when every VU is busy.
    pub fn hand_out(&self, ticket: Ticket) -> bool {
        let Some(slot) = self.idle.borrow_mut().pop() else {
            return false;
        };
        self.is_idle[slot].set(false);
        self.handed[slot].set(Some(ticket));
        if let Some(waker) = self.wakers[slot].take() {
            waker.wake();
        }
        true
    }

    /// Ends dispatching: every waiting VU gets `None`.
    pub fn close(&self) {
        self.closed.set(true);
        for waker in &self.wakers {
            if let Some(w) = waker.take() {
                w.wake();
            }
        }
    }
}
