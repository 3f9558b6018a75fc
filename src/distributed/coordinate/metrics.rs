//! The coordinator's live metrics (`volley coordinate --metrics-listen`, `--prometheus-rw`): the
//! generators' per-second snapshots fed into one [`Exporter`], so that the page shows the whole
//! test under the metric names of a single run's page (src/export/mod.rs). Counters and the
//! latency histogram are summed as each snapshot arrives (HDR deltas added, so the buckets are
//! those of the union of the responses); the gauges of a second (in flight, achieved rate) once
//! every generator still running has reported it; the schedule's gauges (active VUs, asked rate)
//! are the whole plan's.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::engine::{Clock, Live, Observer};
use crate::export::Exporter;
use crate::export::live::Shared;
use crate::plan::Plan;
use crate::record::recorder::IntervalSnapshot;
use crate::record::series::SecondStats;

/// The whole test's live figures.
pub(super) struct LiveMetrics {
    exporter: Exporter,
    warmup: Duration,
    /// Seconds not yet settled: (longest span, s; requests in flight at their end, summed).
    pending: BTreeMap<u64, (f64, u64)>,
    /// The last second each share reported.
    last: Vec<Option<u64>>,
}

impl LiveMetrics {
    /// The figures of a test of `count` shares of `plan` (`None`: the whole test only),
    /// published into `shared`.
    pub(super) fn new(plan: Option<&Plan>, shared: Shared, count: u32) -> Self {
        Self {
            exporter: match plan {
                Some(plan) => Exporter::new(plan, shared),
                None => Exporter::whole_run(shared),
            },
            warmup: plan.map_or(Duration::ZERO, |p| p.warmup),
            pending: BTreeMap::new(),
            last: vec![None; count as usize],
        }
    }

    /// Whether the generators' snapshots must carry each result group's figures.
    pub(super) fn wants_groups(&self) -> bool {
        self.exporter.wants_groups()
    }

    /// The test starts at `origin` (the schedules' origin on every generator).
    pub(super) fn start(&mut self, origin: Instant) {
        self.exporter.start(&Clock {
            start: origin,
            measure_start: origin + self.warmup,
            measured: None,
        });
    }

    /// One second of share `share`; `running`: the shares whose later seconds may still come.
    pub(super) fn add(&mut self, share: u32, s: &IntervalSnapshot, running: &[bool]) {
        self.exporter.interval(s);
        let second = self.pending.entry(s.second).or_insert((0.0, 0));
        second.0 = second.0.max(s.span_s);
        second.1 += s.in_flight;
        if let Some(last) = self.last.get_mut(share as usize) {
            *last = Some(s.second);
        }
        self.settle(running);
    }

    /// Settles the seconds every running share has reported (a share done or lost holds none
    /// up), oldest first.
    fn settle(&mut self, running: &[bool]) {
        let through = running
            .iter()
            .zip(&self.last)
            .filter(|(r, _)| **r)
            .map(|(_, last)| *last)
            .min();
        while let Some(entry) = self.pending.first_entry() {
            let t_s = *entry.key();
            // `None` inside: a running share that has reported nothing yet holds every second.
            if through.is_some_and(|t| t.is_none_or(|t| t_s > t)) {
                return;
            }
            let (span_s, in_flight) = entry.remove();
            self.exporter
                .second(&SecondStats::without_responses(t_s, span_s, in_flight));
        }
    }

    /// The clock moved on: the schedule's gauges now, and the page's figures published.
    pub(super) fn tick(&mut self, now: Instant, running: &[bool], totals: (u64, u64)) {
        self.settle(running);
        self.exporter.tick(&Live {
            now,
            requests: totals.0,
            errors: totals.1,
        });
    }

    /// Every share is done or lost: the last seconds settled, nothing runs any more.
    pub(super) fn finish(&mut self) {
        self.settle(&vec![false; self.last.len()]);
        self.exporter.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::live::shared;
    use crate::export::series;
    use crate::record::recorder::IntervalSnapshot;

    fn second(k: u64, requests: u64, latency_us: u64) -> IntervalSnapshot {
        IntervalSnapshot::of_requests(k, requests, latency_us)
    }

    fn value(shared: &Shared, name: &str) -> Option<f64> {
        let snapshot = shared.lock().unwrap().clone();
        series(&snapshot)
            .into_iter()
            .find(|s| s.name == name && s.labels.iter().all(|(_, v)| v.is_empty()))
            .map(|s| s.value)
    }

    #[test]
    fn the_page_shows_the_shares_summed_and_a_second_once_every_running_share_sent_it() {
        let page = shared();
        let mut m = LiveMetrics::new(None, page.clone(), 2);
        m.start(Instant::now());
        let both = [true, true];
        m.add(0, &second(0, 10, 1_000), &both);
        m.add(1, &second(0, 30, 200_000), &both);
        m.add(0, &second(1, 5, 1_000), &both);
        m.tick(Instant::now(), &both, (45, 0));
        assert_eq!(value(&page, "volley_requests_total"), Some(45.0));
        assert_eq!(value(&page, "volley_latency_seconds_count"), Some(45.0));
        // Second 0 is settled (both sent it), second 1 not yet (share 1 has not).
        assert_eq!(value(&page, "volley_in_flight"), Some(4.0));
        assert_eq!(value(&page, "volley_rate_achieved_per_second"), Some(40.0));
        // Share 1 is lost: it holds nothing up any more.
        m.tick(Instant::now(), &[true, false], (45, 0));
        assert_eq!(value(&page, "volley_in_flight"), Some(2.0));
        assert_eq!(value(&page, "volley_rate_achieved_per_second"), Some(5.0));
        m.finish();
        assert_eq!(value(&page, "volley_in_flight"), Some(0.0));
    }
}
