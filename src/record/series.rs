//! The per-second time series, assembled from the workers' interval snapshots.
//!
//! Workers send one snapshot per second each; the snapshots of one second are merged and reduced to
//! a [`SecondStats`] as soon as all workers have reported it, so memory holds at most a few seconds
//! of histograms, however long the run.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::batches::Batches;
use super::recorder::{Counters, IntervalSnapshot};

/// The figures of one second of a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SecondStats {
    /// Start of the interval, seconds since measuring began.
    pub t_s: u64,
    /// Length of the interval, seconds (1, except the last which may be shorter).
    pub span_s: f64,
    /// Requests finished in the interval (reached the network).
    pub requests: u64,
    /// Attempts in the interval that never reached the network (as `summary.not_sent`).
    #[serde(default)]
    pub not_sent: u64,
    /// Failed attempts in the interval (the not-sent ones included).
    pub errors: u64,
    /// Request bytes written in the interval.
    pub bytes_sent: u64,
    /// Response bytes read in the interval.
    pub bytes_received: u64,
    /// Requests in flight at the end of the interval (all workers).
    pub in_flight: u64,
    /// Median latency of the interval's responses, ms (null when none finished).
    pub p50_ms: Option<f64>,
    /// 90th percentile latency of the interval's responses, ms (absent in records written before
    /// it was added).
    #[serde(default)]
    pub p90_ms: Option<f64>,
    /// 99th percentile latency of the interval's responses, ms.
    pub p99_ms: Option<f64>,
}

impl SecondStats {
    /// A second in which no response finished and nothing failed: its span (s) and the requests
    /// in flight at its end.
    pub fn without_responses(t_s: u64, span_s: f64, in_flight: u64) -> Self {
        Self {
            t_s,
            span_s,
            requests: 0,
            not_sent: 0,
            errors: 0,
            bytes_sent: 0,
            bytes_received: 0,
            in_flight,
            p50_ms: None,
            p90_ms: None,
            p99_ms: None,
        }
    }
}

struct Pending {
    reported: usize,
    span_s: f64,
    counters: Counters,
    in_flight: u64,
    latency: Histogram<u64>,
}

/// Merges interval snapshots from `workers` workers into a series.
pub struct SeriesBuilder {
    workers: usize,
    pending: BTreeMap<u64, Pending>,
    done: Vec<SecondStats>,
    batches: Batches,
}

impl SeriesBuilder {
    /// A builder expecting one snapshot per second from each of `workers` workers.
    pub fn new(workers: usize) -> Self {
        Self {
            workers,
            pending: BTreeMap::new(),
            done: Vec::new(),
            batches: Batches::new(),
        }
    }

    /// Adds one worker's snapshot; returns the second it completes, merged, once every worker
    /// has reported it.
    pub fn add(&mut self, s: IntervalSnapshot) -> Option<&SecondStats> {
        let entry = self.pending.entry(s.second).or_insert_with(|| Pending {
            reported: 0,
            span_s: 0.0,
            counters: Counters::default(),
            in_flight: 0,
            latency: super::recorder::new_histogram(),
        });
        entry.reported += 1;
        entry.span_s = entry.span_s.max(s.span_s);
        entry.counters.merge(&s.counters);
        entry.in_flight += s.in_flight;
        let _ = entry.latency.add(&s.latency);
        if entry.reported >= self.workers {
            let p = self.pending.remove(&s.second).expect("entry exists");
            self.batches.add(s.second, &p.latency);
            self.done.push(reduce(s.second, p));
            return self.done.last();
        }
        None
    }

    /// The seconds every worker has reported, in the order they completed.
    pub fn done(&self) -> &[SecondStats] {
        &self.done
    }

    /// The latency of the seconds every worker has reported, in batches.
    pub fn batches(&self) -> &Batches {
        &self.batches
    }

    /// The series so far, including seconds not every worker reported (a worker that ended early
    /// or was interrupted), in time order, and its latency in batches. Trailing empty partial
    /// intervals are left out.
    pub fn finish(mut self) -> (Vec<SecondStats>, Batches) {
        let rest = std::mem::take(&mut self.pending);
        for (second, p) in rest {
            self.batches.add(second, &p.latency);
            self.done.push(reduce(second, p));
        }
        self.done.sort_by_key(|s| s.t_s);
        while self
            .done
            .last()
            .is_some_and(|s| s.span_s < 1.0 && s.requests == 0 && s.errors == 0)
        {
            self.done.pop();
        }
        (self.done, self.batches)
    }
}

/// Makes `series` cover the measured window of `window_s` seconds: a second inside it spans
/// exactly the part of it the window holds (a worker's last snapshot, taken as it stopped,
/// may reach past a window a signal ended), and a second in which no worker ran any more (the
/// load's last request finished before the window's scheduled end) is there, empty. Seconds
/// after the window (the drain) are left as they are.
pub fn fit_to_window(series: &mut Vec<SecondStats>, window_s: f64) {
    // A second that the window touches for less than a millisecond is left out.
    let seconds = (window_s - 0.001).max(0.0).ceil() as u64;
    for t in 0..seconds {
        let span_s = (window_s - t as f64).min(1.0);
        match series.iter_mut().find(|s| s.t_s == t) {
            Some(s) => s.span_s = span_s,
            None => series.push(SecondStats::without_responses(t, span_s, 0)),
        }
    }
    series.sort_by_key(|s| s.t_s);
}

fn reduce(second: u64, p: Pending) -> SecondStats {
    let pct = |q: f64| (!p.latency.is_empty()).then(|| us_to_ms(p.latency.value_at_quantile(q)));
    SecondStats {
        t_s: second,
        span_s: p.span_s,
        requests: p.counters.requests,
        not_sent: p.counters.not_sent,
        errors: p.counters.errors,
        bytes_sent: p.counters.bytes_sent,
        bytes_received: p.counters.bytes_received,
        in_flight: p.in_flight,
        p50_ms: pct(0.5),
        p90_ms: pct(0.9),
        p99_ms: pct(0.99),
    }
}

/// Microseconds to milliseconds.
pub fn us_to_ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(second: u64, requests: u64, latency_us: u64) -> IntervalSnapshot {
        IntervalSnapshot::of_requests(second, requests, latency_us)
    }

    #[test]
    fn seconds_merge_across_workers_in_order() {
        let mut b = SeriesBuilder::new(2);
        b.add(snap(1, 10, 2000));
        b.add(snap(0, 5, 1000));
        b.add(snap(0, 5, 3000));
        b.add(snap(1, 10, 2000));
        b.add(snap(2, 1, 500)); // the other worker never reports second 2
        let (s, _) = b.finish();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].t_s, 0);
        assert_eq!(s[0].requests, 10);
        assert_eq!(s[0].in_flight, 4);
        assert_eq!(s[1].p50_ms, Some(2.0));
        assert_eq!(s[1].p90_ms, Some(2.0));
        assert_eq!(s[2].requests, 1);
    }

    #[test]
    fn a_series_covers_its_whole_window() {
        // The last response at 1.5 s of a 3.25 s window: second 1 spans all of it, seconds 2
        // and 3 are there, empty, and the drain's second 4 stays as it was.
        let mut b = SeriesBuilder::new(1);
        b.add(snap(0, 3, 100));
        let mut last = snap(1, 2, 100);
        last.span_s = 0.5;
        b.add(last);
        let mut drain = snap(4, 1, 100);
        drain.span_s = 0.1;
        b.add(drain);
        let (mut s, _) = b.finish();
        fit_to_window(&mut s, 3.25);
        let spans: Vec<(u64, f64, u64)> = s.iter().map(|s| (s.t_s, s.span_s, s.requests)).collect();
        assert_eq!(
            spans,
            vec![
                (0, 1.0, 3),
                (1, 1.0, 2),
                (2, 1.0, 0),
                (3, 0.25, 0),
                (4, 0.1, 1)
            ]
        );
        // A window a hair past a whole second adds no sliver.
        let mut s = vec![SecondStats::without_responses(0, 1.0, 0)];
        fit_to_window(&mut s, 1.000_000_1);
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn empty_trailing_partial_second_is_dropped() {
        let mut b = SeriesBuilder::new(1);
        b.add(snap(0, 3, 100));
        let mut last = snap(1, 0, 0);
        last.span_s = 0.001;
        b.add(last);
        let (s, _) = b.finish();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].p50_ms, Some(0.1));
    }
}
