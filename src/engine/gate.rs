//! Gates: what lets a connection loop start its next request. The closed and open models differ
//! only here; the loop that sends requests is the same.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Poll, Waker};
use std::time::Instant;

use super::RunShared;

/// Permission to send one request.
#[derive(Debug, Clone, Copy)]
pub struct Ticket {
    /// When the request was due: its latency is measured from here.
    pub due: Instant,
    /// False for warm-up requests, which are sent but not measured.
    pub measured: bool,
}

/// Closed model: a request may start whenever the previous one finished, until the limit.
pub struct ClosedGate {
    run: Arc<RunShared>,
}

impl ClosedGate {
    /// A gate over the run's shared limit.
    pub fn new(run: Arc<RunShared>) -> Self {
        Self { run }
    }

    /// The next ticket, or `None` when the run is over.
    #[inline]
    pub fn next(&self) -> Option<Ticket> {
        let run = &*self.run;
        if run.stop.is_aborted() {
            return None;
        }
        let now = Instant::now();
        if run.end.is_some_and(|end| now >= end) {
            return None;
        }
        let measured = now >= run.measure_start;
        if measured && let Some(remaining) = &run.remaining {
            // Exactly N measured requests over all workers.
            remaining
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| r.checked_sub(1))
                .ok()?;
        }
        Some(Ticket { due: now, measured })
    }
}

/// Open model: a pacer hands due times to idle connection loops; when none is idle, the request is
/// dropped (counted), never delayed.
pub struct OpenDispatch {
    /// Per connection slot: the ticket handed to it, if any.
    handed: Vec<Cell<Option<Ticket>>>,
    /// Per connection slot: its waker while it waits.
    wakers: Vec<Cell<Option<Waker>>>,
    /// Slots waiting for work, most recently idle last (reused first, so few connections open).
    idle: RefCell<Vec<usize>>,
    /// Per slot: whether it is in `idle`.
    is_idle: Vec<Cell<bool>>,
    closed: Cell<bool>,
}

impl OpenDispatch {
    /// A dispatcher for `slots` connection loops.
    pub fn new(slots: usize) -> Self {
        Self {
            handed: (0..slots).map(|_| Cell::new(None)).collect(),
            wakers: (0..slots).map(|_| Cell::new(None)).collect(),
            idle: RefCell::new(Vec::with_capacity(slots)),
            is_idle: (0..slots).map(|_| Cell::new(false)).collect(),
            closed: Cell::new(false),
        }
    }

    /// Waits for a ticket for connection `slot`; `None` once the dispatcher is closed.
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

    /// Hands `ticket` to an idle connection; false when every connection is busy.
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

    /// Ends dispatching: every waiting connection loop gets `None`.
    pub fn close(&self) {
        self.closed.set(true);
        for waker in &self.wakers {
            if let Some(w) = waker.take() {
                w.wake();
            }
        }
    }
}
