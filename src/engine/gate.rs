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
mod tests {
    use super::*;

    fn ticket() -> Ticket {
        Ticket {
            due: Instant::now(),
            measured: true,
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn vus_are_started_as_needed_up_to_the_cap_and_reused() {
        let d = std::rc::Rc::new(OpenDispatch::new(2));
        assert_eq!(d.started(), 0, "nothing up front");
        assert_eq!(d.hand_out(ticket()), HandOut::Start(0));
        // Slot 0 takes its ticket at once, then waits for the next.
        assert!(d.next(0).await.is_some());
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let d0 = d.clone();
                let vu0 = tokio::task::spawn_local(async move { d0.next(0).await });
                tokio::task::yield_now().await;
                // Slot 0 is idle: it gets the next ticket, no new VU.
                assert_eq!(d.hand_out(ticket()), HandOut::Handed);
                assert!(vu0.await.unwrap().is_some());
                // Slot 0 is busy now (it has not asked again): a second VU, then the cap.
                assert_eq!(d.hand_out(ticket()), HandOut::Start(1));
                assert_eq!(d.hand_out(ticket()), HandOut::Dropped);
                assert_eq!(d.started(), 2);
                // Closing releases the waiting VUs.
                assert!(d.next(1).await.is_some(), "slot 1 holds its ticket");
                let d1 = d.clone();
                let vu1 = tokio::task::spawn_local(async move { d1.next(1).await });
                tokio::task::yield_now().await;
                d.close();
                assert!(vu1.await.unwrap().is_none());
            })
            .await;
    }
}
