//! The figures of one result group (a scenario, a step, a phase), kept beside the run's.

use hdrhistogram::Histogram;

use super::HIST_LOW_US;
use super::tally::{Reported, Tally};
use super::{
    Counters, RequestSample, STATUS_SLOTS, Window, new_histogram, seen_errors, seen_statuses,
};
use crate::record::error_kind::ErrorKind;

/// The figures of one result group.
#[derive(Debug, Clone)]
pub struct GroupStats {
    /// Latency of the group's responses, µs.
    pub latency: Histogram<u64>,
    /// Totals.
    pub counters: Counters,
    /// Responses by status code.
    pub status: Box<[u64]>,
    /// Failures by kind.
    pub errors: [u64; ErrorKind::COUNT],
    /// The latest measured completion, µs since measuring began (0: none).
    pub last_done_us: u64,
    /// The group's streams, when it has streaming steps (made at the first stream).
    pub streams: Option<Box<super::StreamStats>>,
    /// Since the last interval (kept only for live observers: thresholds, exporters).
    pub(super) interval: Option<(Histogram<u64>, Counters)>,
    /// The cumulative counts the last interval reported (live observers only).
    reported: Option<Box<Reported>>,
}

impl GroupStats {
    pub(super) fn new(live: bool) -> Self {
        Self {
            latency: new_histogram(),
            counters: Counters::default(),
            status: vec![0; STATUS_SLOTS].into_boxed_slice(),
            errors: [0; ErrorKind::COUNT],
            last_done_us: 0,
            streams: None,
            interval: live.then(|| (new_histogram(), Counters::default())),
            reported: live.then(|| Box::new(Reported::new(STATUS_SLOTS))),
        }
    }

    /// What the counts gained since the last interval (live observers only).
    pub(super) fn take_tally(&mut self) -> Option<Tally> {
        let reported = self.reported.as_mut()?;
        let streams = self.streams.as_deref().map(|s| &s.counts);
        Some(reported.take(&self.status, &self.errors, &self.counters, streams))
    }

    #[inline]
    pub(super) fn record(&mut self, s: &RequestSample) {
        self.counters.add(s, s.window != Window::Inside);
        self.last_done_us = self.last_done_us.max(s.done_us);
        if let Some(status) = s.status {
            self.latency
                .saturating_record(s.latency_us.max(HIST_LOW_US));
            if let Some(slot) = self.status.get_mut(status as usize) {
                *slot += 1;
            }
        }
        if let Some(kind) = s.error {
            self.errors[kind.index()] += 1;
        }
        if let Some((h, c)) = &mut self.interval {
            c.add(s, false);
            if s.status.is_some() {
                h.saturating_record(s.latency_us.max(HIST_LOW_US));
            }
        }
    }

    /// Adds another group's figures.
    pub fn merge(&mut self, o: &GroupStats) {
        let _ = self.latency.add(&o.latency);
        self.counters.merge(&o.counters);
        self.last_done_us = self.last_done_us.max(o.last_done_us);
        super::streams::merge_optional(&mut self.streams, &o.streams);
        for (a, b) in self.status.iter_mut().zip(o.status.iter()) {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(o.errors.iter()) {
            *a += b;
        }
    }

    /// Status codes seen, with counts.
    pub fn statuses(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        seen_statuses(&self.status)
    }

    /// Error kinds seen, with counts.
    pub fn error_kinds(&self) -> impl Iterator<Item = (ErrorKind, u64)> + '_ {
        seen_errors(&self.errors)
    }
}

/// One group's figures for one interval (live thresholds).
#[derive(Debug, Clone)]
pub struct GroupInterval {
    /// Group id.
    pub group: usize,
    /// Counters of the interval.
    pub counters: Counters,
    /// Latencies of the interval, µs.
    pub latency: Histogram<u64>,
    /// Statuses, error kinds, dropped and completed iterations of the interval.
    pub tally: Tally,
}
