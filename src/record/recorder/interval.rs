//! What an interval snapshot says beyond its counters and latency: responses by status, failures
//! by kind, the send lag, each group's counters and (when asked) each `--group-by` value's
//! figures over the interval. Taken once a second by
//! each worker as the difference between its running totals and those it last reported, so
//! recording a request does no extra work for them.

use hdrhistogram::Histogram;

use super::{Counters, GroupStats, HIST_LOW_US, STATUS_SLOTS, new_histogram};
use crate::record::error_kind::ErrorKind;

/// The breakdown of one worker's interval (see [`super::IntervalSnapshot`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Breakdown {
    /// Responses of the interval by status code, ascending; only codes seen.
    pub statuses: Vec<(u16, u64)>,
    /// Failures of the interval by kind, in kind order; only kinds seen.
    pub errors: Vec<(ErrorKind, u64)>,
    /// The 99th percentile of the interval's send lag, µs (0 when no request with a due time was
    /// sent: always in the closed model, which has none).
    pub lag_p99_us: u64,
    /// Each result group's counters of the interval, by group id (empty without groups).
    pub groups: Vec<Counters>,
    /// Per `--group-by` table, the rows that recorded exchanges in the interval, with what they
    /// gained (only when a live view asks: [`super::Recorder::with_live_values`]; else empty).
    pub grouped: Vec<Vec<super::ValueInterval>>,
    /// The latencies of the streams that ended in the interval (only when a live view asks:
    /// [`super::Recorder::with_live_streams`], and streams ended; else none).
    pub streams: Option<Box<super::StreamLatencies>>,
}

/// The totals a worker last reported, to take the next interval's breakdown as a difference.
#[derive(Debug, Clone)]
pub(super) struct Reported {
    status: Box<[u64]>,
    errors: [u64; ErrorKind::COUNT],
    lag: Histogram<u64>,
    groups: Vec<Counters>,
}

impl Reported {
    pub(super) fn new(groups: usize) -> Self {
        Self {
            status: vec![0; STATUS_SLOTS].into_boxed_slice(),
            errors: [0; ErrorKind::COUNT],
            lag: new_histogram(),
            groups: vec![Counters::default(); groups],
        }
    }

    /// The breakdown since the last call, given the running totals now.
    pub(super) fn take(
        &mut self,
        status: &[u64],
        errors: &[u64; ErrorKind::COUNT],
        lag: &Histogram<u64>,
        groups: &[GroupStats],
    ) -> Breakdown {
        let mut out = Breakdown::default();
        for (code, (now, before)) in status.iter().zip(self.status.iter_mut()).enumerate() {
            if *now > *before {
                out.statuses.push((code as u16, *now - *before));
                *before = *now;
            }
        }
        for kind in ErrorKind::ALL {
            let (now, before) = (errors[kind.index()], &mut self.errors[kind.index()]);
            if now > *before {
                out.errors.push((kind, now - *before));
                *before = now;
            }
        }
        if lag.len() > self.lag.len() {
            let mut interval = lag.clone();
            // The reported histogram is, bucket by bucket, at most the running one.
            if interval.subtract(&self.lag).is_ok() {
                out.lag_p99_us = interval.value_at_quantile(0.99).max(HIST_LOW_US);
                let _ = self.lag.add(&interval);
            }
        }
        out.groups = groups
            .iter()
            .zip(self.groups.iter_mut())
            .map(|(g, before)| {
                let d = g.counters.since(before);
                *before = g.counters;
                d
            })
            .collect();
        out
    }
}
