//! What an interval adds to the cumulative counts the interval figures do not carry themselves
//! (statuses, error kinds, dropped and completed iterations): found once a second by comparing the
//! cumulative counts with those last reported, so recording a request does no extra work.

use super::Counters;
use crate::record::error_kind::ErrorKind;

/// The counts one interval added: responses by status, failures by kind, iterations dropped and
/// iterations completed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Responses by status code (only codes seen in the interval), ascending.
    pub statuses: Vec<(u16, u64)>,
    /// Failures by kind (only kinds seen in the interval), in kind order.
    pub errors: Vec<(ErrorKind, u64)>,
    /// Open model: iterations dropped in the interval.
    pub dropped: u64,
    /// Iterations that ended inside their scenario's window in the interval.
    pub completed: u64,
    /// Streams recorded in the interval (each when it ended), and their messages.
    pub streams: StreamTally,
}

/// Streams and their messages, counted when each stream is recorded (at its end).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StreamTally {
    /// Streams measured (streaming attempts that reached the network).
    pub streams: u64,
    /// Messages they received.
    pub received: u64,
    /// Messages their streaming request sides sent.
    pub sent: u64,
}

impl StreamTally {
    /// The cumulative counts of `c`.
    fn of(c: &super::StreamCounts) -> Self {
        Self {
            streams: c.streams,
            received: c.messages,
            sent: c.sent,
        }
    }

    /// Adds `other`.
    pub fn add(&mut self, other: &StreamTally) {
        self.streams += other.streams;
        self.received += other.received;
        self.sent += other.sent;
    }

    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.streams == 0
    }
}

impl Tally {
    /// Adds `other` (another worker's or generator's part of the same interval).
    pub fn add(&mut self, other: &Tally) {
        for &(status, n) in &other.statuses {
            match self.statuses.binary_search_by_key(&status, |s| s.0) {
                Ok(i) => self.statuses[i].1 += n,
                Err(i) => self.statuses.insert(i, (status, n)),
            }
        }
        for &(kind, n) in &other.errors {
            match self.errors.binary_search_by_key(&kind, |e| e.0) {
                Ok(i) => self.errors[i].1 += n,
                Err(i) => self.errors.insert(i, (kind, n)),
            }
        }
        self.dropped += other.dropped;
        self.completed += other.completed;
        self.streams.add(&other.streams);
    }
}

/// The cumulative counts as last reported in a [`Tally`].
#[derive(Debug, Clone)]
pub(super) struct Reported {
    status: Box<[u64]>,
    errors: [u64; ErrorKind::COUNT],
    dropped: u64,
    completed: u64,
    streams: StreamTally,
}

impl Reported {
    pub(super) fn new(status_slots: usize) -> Self {
        Self {
            status: vec![0; status_slots].into_boxed_slice(),
            errors: [0; ErrorKind::COUNT],
            dropped: 0,
            completed: 0,
            streams: StreamTally::default(),
        }
    }

    /// What the cumulative counts gained since the last call, which they now are.
    pub(super) fn take(
        &mut self,
        status: &[u64],
        errors: &[u64; ErrorKind::COUNT],
        counters: &Counters,
        streams: Option<&super::StreamCounts>,
    ) -> Tally {
        let mut tally = Tally::default();
        for (code, (now, before)) in status.iter().zip(self.status.iter_mut()).enumerate() {
            if *now > *before {
                tally.statuses.push((code as u16, *now - *before));
                *before = *now;
            }
        }
        for kind in ErrorKind::ALL {
            let (now, before) = (errors[kind.index()], &mut self.errors[kind.index()]);
            if now > *before {
                tally.errors.push((kind, now - *before));
                *before = now;
            }
        }
        tally.dropped = counters.dropped.saturating_sub(self.dropped);
        tally.completed = counters.completed.saturating_sub(self.completed);
        (self.dropped, self.completed) = (counters.dropped, counters.completed);
        if let Some(now) = streams.map(StreamTally::of) {
            tally.streams = StreamTally {
                streams: now.streams.saturating_sub(self.streams.streams),
                received: now.received.saturating_sub(self.streams.received),
                sent: now.sent.saturating_sub(self.streams.sent),
            };
            self.streams = now;
        }
        tally
    }
}
