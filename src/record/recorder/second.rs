//! The counts and latencies of one second of the per-second series, as a worker gathers them.

use hdrhistogram::Histogram;

use super::{Counters, HIST_LOW_US, RequestSample, new_histogram};

/// The requests that finished in one second: their counters, and the latencies of those that
/// got a response, µs.
#[derive(Debug, Clone)]
pub(super) struct SecondFigures {
    pub(super) counters: Counters,
    pub(super) latency: Histogram<u64>,
}

impl SecondFigures {
    pub(super) fn new() -> Self {
        Self {
            counters: Counters::default(),
            latency: new_histogram(),
        }
    }

    /// Counts one measured request.
    #[inline]
    pub(super) fn add(&mut self, s: &RequestSample) {
        self.counters.add(s, false);
        if s.status.is_some() {
            self.latency
                .saturating_record(s.latency_us.max(HIST_LOW_US));
        }
    }

    /// Takes in everything `other` holds, leaving it empty.
    pub(super) fn absorb(&mut self, other: &mut SecondFigures) {
        // Same bounds everywhere, so adding cannot fail.
        let _ = self.latency.add(&other.latency);
        self.counters.merge(&other.counters);
        other.reset();
    }

    /// Empties it.
    pub(super) fn reset(&mut self) {
        self.latency.reset();
        self.counters = Counters::default();
    }
}
