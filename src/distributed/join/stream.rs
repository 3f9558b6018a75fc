//! A generator's live link to its coordinator: an [`Observer`] that sums its threads' snapshots
//! per second and hands each finished second to a sender thread, which posts it (a heartbeat
//! when there is nothing to send) and keeps the coordinator's stop order. The control thread
//! only pushes onto a channel: a slow or dead coordinator never holds the run up.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::record::recorder::IntervalSnapshot;
use crate::record::series::SecondStats;
use crate::run::{Abort, Observer, StopHandle};

use super::super::wire::{Poll, Reply, Snapshot, StopOrder, add_snapshot, path};
use super::client::CoordinatorClient;

/// How often a generator with nothing to send says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

/// The sender thread: posts what it is handed, heartbeats otherwise, keeps the stop order.
pub(super) struct Sender {
    tx: Option<mpsc::Sender<Snapshot>>,
    thread: Option<JoinHandle<()>>,
    /// The coordinator's stop order, once given.
    pub(super) order: Arc<OnceLock<StopOrder>>,
    /// The run to interrupt when told to (set when it starts).
    stop: Arc<OnceLock<StopHandle>>,
}

impl Sender {
    /// Starts the thread for share `share`; `warn` gets one line when the coordinator stops
    /// answering, and one when it answers again.
    pub(super) fn start(
        client: CoordinatorClient,
        share: u32,
        warn: fn(&str),
    ) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<Snapshot>();
        let order: Arc<OnceLock<StopOrder>> = Arc::default();
        let stop: Arc<OnceLock<StopHandle>> = Arc::default();
        let (o, s) = (order.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("volley-join".into())
            .spawn(move || {
                let mut unreachable = false;
                loop {
                    let sent = match rx.recv_timeout(HEARTBEAT) {
                        Ok(snapshot) => client.post::<_, Reply>(path::SNAPSHOT, &snapshot),
                        Err(RecvTimeoutError::Timeout) => {
                            client.post::<_, Reply>(path::HEARTBEAT, &Poll { share })
                        }
                        Err(RecvTimeoutError::Disconnected) => return,
                    };
                    match sent {
                        Ok(reply) => {
                            if unreachable {
                                warn("the coordinator answers again");
                                unreachable = false;
                            }
                            if let Some(order) = reply.stop {
                                obey(&o, &s, order);
                            }
                        }
                        Err(e) if !unreachable => {
                            warn(&format!("{e}; the run goes on and keeps its own record"));
                            unreachable = true;
                        }
                        Err(_) => {}
                    }
                }
            })?;
        Ok(Self {
            tx: Some(tx),
            thread: Some(thread),
            order,
            stop,
        })
    }

    /// The observer of the run, streaming share `share`'s seconds through this sender, with
    /// each result group's figures when `groups`.
    pub(super) fn observer(&self, share: u32, groups: bool, stop: StopHandle) -> Streamer {
        let _ = self.stop.set(stop);
        if let Some(order) = self.order.get() {
            obey(&self.order, &self.stop, order.clone());
        }
        Streamer {
            share,
            groups,
            tx: self.tx.clone().expect("open until finished"),
            pending: BTreeMap::new(),
            order: self.order.clone(),
        }
    }

    /// Sends what is queued, then ends the thread.
    pub(super) fn finish(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Keeps the first order; an interruption stops the run at once (an abort is returned by the
/// observer's [`Observer::stop`], so the record names the thresholds).
fn obey(order: &OnceLock<StopOrder>, stop: &OnceLock<StopHandle>, o: StopOrder) {
    let _ = order.set(o);
    if let (Some(StopOrder::Interrupt { .. }), Some(handle)) = (order.get(), stop.get()) {
        handle.interrupt_by("coordinator");
    }
}

/// The observer: one snapshot per second of the share, all threads summed.
pub(super) struct Streamer {
    share: u32,
    /// Whether the coordinator needs each result group's figures.
    groups: bool,
    tx: mpsc::Sender<Snapshot>,
    /// Seconds not every thread has reported yet.
    pending: BTreeMap<u64, IntervalSnapshot>,
    order: Arc<OnceLock<StopOrder>>,
}

impl Streamer {
    fn send(&self, s: &IntervalSnapshot) {
        // A closed channel means the sender has finished: nothing left to tell.
        let _ = self.tx.send(Snapshot::of(self.share, s));
    }
}

impl Observer for Streamer {
    fn wants_groups(&self) -> bool {
        self.groups
    }

    fn interval(&mut self, s: &IntervalSnapshot) {
        match self.pending.get_mut(&s.second) {
            Some(into) => add_snapshot(into, s),
            None => {
                self.pending.insert(s.second, s.clone());
            }
        }
    }

    fn second(&mut self, second: &SecondStats) {
        // Every thread has reported this second (and so every earlier one).
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() > second.t_s {
                break;
            }
            let s = entry.remove();
            self.send(&s);
        }
    }

    fn stop(&mut self, elapsed: Duration) -> Option<Abort> {
        match self.order.get() {
            Some(StopOrder::Abort { thresholds, .. }) => Some(Abort {
                at: elapsed,
                thresholds: thresholds.clone(),
            }),
            _ => None,
        }
    }

    fn finish(&mut self) {
        for (_, s) in std::mem::take(&mut self.pending) {
            self.send(&s);
        }
    }
}
