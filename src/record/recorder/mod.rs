//! Per-worker measurement: HDR histograms and counters, touched only by the worker's own thread and
//! merged once at the end. Recording a request allocates nothing and takes no lock.

use hdrhistogram::Histogram;

use crate::record::error_kind::ErrorKind;
use crate::record::group::GroupTable;
use crate::record::grpc_code::GrpcCode;
use crate::record::model::QuicFigures;
use crate::record::timing::Negotiated;
use crate::record::timing::Timing;

mod group;
mod interval;
mod sample;
mod second;
mod sends;
mod streams;
mod tally;
#[cfg(test)]
mod tests;
mod values;

pub use group::{GroupInterval, GroupStats};
pub use interval::Breakdown;
pub use sample::{Counters, RequestSample, Window};
use second::SecondFigures;
pub use sends::{Send, SendGaps, SendSample};
pub use streams::{Ending, StreamCounts, StreamLatencies, StreamSample, StreamStats, TokenCount};
use tally::Reported;
pub use tally::{StreamTally, Tally};
use values::ValuesReported;
pub use values::{ValueInterval, ValueKey};

/// Lowest latency a histogram tracks, microseconds.
pub const HIST_LOW_US: u64 = 1;
/// Highest latency a histogram tracks, microseconds (one hour); longer values are clamped.
pub const HIST_HIGH_US: u64 = 3_600_000_000;
/// Significant decimal digits kept by every histogram.
pub const HIST_SIGFIG: u8 = 3;
/// Status codes tracked individually (0..=999).
const STATUS_SLOTS: usize = 1000;

/// A new empty latency histogram with volley's fixed bounds (µs, 3 significant digits), so any two
/// histograms, from any run, merge exactly.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(HIST_LOW_US, HIST_HIGH_US, HIST_SIGFIG)
        .expect("constant histogram bounds are valid")
}

/// One worker's figures for one interval of the per-second series.
#[derive(Debug, Clone)]
pub struct IntervalSnapshot {
    /// Second index since measuring began.
    pub second: u64,
    /// Length of the interval, seconds (1 except for the last).
    pub span_s: f64,
    /// Counters of the interval.
    pub counters: Counters,
    /// Latencies of responses that finished in the interval, µs.
    pub latency: Histogram<u64>,
    /// Requests in flight when the interval ended.
    pub in_flight: u64,
    /// Per active group (only when live thresholds need them).
    pub groups: Vec<GroupInterval>,
    /// Checks counted in the interval, by check id: [passed, failed].
    pub checks: Vec<[u64; 2]>,
    /// Statuses, error kinds, dropped and completed iterations of the interval.
    pub tally: Tally,
    /// Statuses, failures, send lag and group counters of the interval (for live views).
    pub breakdown: Breakdown,
}

#[cfg(test)]
impl IntervalSnapshot {
    /// A test's second `second`: `requests` responses of `latency_us` µs each, all status 200 and
    /// completed, 2 in flight, no groups or checks.
    pub(crate) fn of_requests(second: u64, requests: u64, latency_us: u64) -> Self {
        let mut latency = new_histogram();
        latency
            .record_n(latency_us, requests)
            .expect("a test latency within the histogram's bounds");
        Self {
            second,
            span_s: 1.0,
            counters: Counters {
                requests,
                ..Counters::default()
            },
            latency,
            in_flight: 2,
            groups: Vec::new(),
            checks: Vec::new(),
            tally: Tally {
                statuses: vec![(200, requests)],
                completed: requests,
                ..Tally::default()
            },
            breakdown: Breakdown::default(),
        }
    }
}

/// All measurements of one worker (or, after merging, of a whole run).
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Latency of every response, µs: from the due time in the open model (free of coordinated
    /// omission), from the send in the closed model.
    pub latency: Histogram<u64>,
    /// Open model: latency from the actual send, µs (uncorrected), of every response when some
    /// scenario is open; empty when none is (it would equal `latency`).
    pub service: Histogram<u64>,
    /// Open model: send lag against the schedule, µs, of the requests that had a due time.
    pub lag: Histogram<u64>,
    /// Responses by status code.
    pub status: Box<[u64]>,
    /// Failures by [`ErrorKind`] index.
    pub errors: [u64; ErrorKind::COUNT],
    /// Totals.
    pub counters: Counters,
    /// Open model: requests that fell due while the in-flight cap was reached.
    pub dropped: u64,
    /// Requests sent during warm-up (not measured).
    pub warmup_requests: u64,
    /// Connections opened during warm-up (measured requests may reuse them).
    pub warmup_connections: u64,
    /// Per result group (scenario, step, phase), by group id.
    pub groups: Vec<GroupStats>,
    /// The run's streams, when it has streaming steps.
    pub streams: Option<Box<StreamStats>>,
    /// Per check id: [passed, failed].
    pub checks: Vec<[u64; 2]>,
    /// TCP connect time of the requests that opened a connection, µs.
    pub connect: Histogram<u64>,
    /// TLS handshake time of the requests that opened a TLS connection, µs.
    pub tls: Histogram<u64>,
    /// Waiting time of every response: from the send to the first byte of its head, µs.
    pub wait: Histogram<u64>,
    /// gRPC calls by status code.
    pub grpc: [u64; GrpcCode::COUNT],
    /// TLS connections by what their handshake settled on ([`Negotiated::index`]), warm-up
    /// included.
    pub tls_negotiated: [u64; Negotiated::COUNT],
    /// HTTP/3: what the QUIC connections the VUs opened carried (added as each VU ends).
    pub quic: QuicFigures,
    /// Responses grouped by value, one table per `--group-by` selector (empty when none).
    pub grouped: Vec<GroupTable>,
    /// Open model: a sample of measured iterations' due and send instants, per scenario.
    pub sends: SendSample,
    /// Whether `service` is recorded (some scenario is open).
    keeps_service: bool,
    /// The current interval's figures.
    interval: SecondFigures,
    /// The second the current interval is for (seconds since measuring began).
    interval_second: u64,
    /// Responses that finished after the current interval's second ended, before its
    /// snapshot was taken (the timer that takes it woke late): they belong to the next one.
    ahead: SecondFigures,
    /// Checks counted since the last interval.
    interval_checks: Vec<[u64; 2]>,
    /// The cumulative counts the last interval's [`Tally`] reported.
    reported: Reported,
    /// The totals of the last interval taken, for its [`Breakdown`].
    broken_down: interval::Reported,
    /// What the group-by tables' rows last reported, when a live view shows them per value
    /// ([`Breakdown::grouped`]).
    values_reported: Option<Box<ValuesReported>>,
    /// The latencies of the streams ended in the current interval, when a live view shows them
    /// ([`Breakdown::streams`]).
    live_streams: Option<Box<StreamLatencies>>,
}

/// Status codes with a non-zero count, ascending.
fn seen_statuses(status: &[u64]) -> impl Iterator<Item = (u16, u64)> + '_ {
    status
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(code, n)| (code as u16, *n))
}

/// Error kinds with a non-zero count, in kind order.
fn seen_errors(errors: &[u64; ErrorKind::COUNT]) -> impl Iterator<Item = (ErrorKind, u64)> + '_ {
    ErrorKind::ALL
        .into_iter()
        .map(|k| (k, errors[k.index()]))
        .filter(|(_, n)| *n > 0)
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    /// An empty recorder without groups or checks (quick mode).
    pub fn new() -> Self {
        Self::with_groups(0, 0, false)
    }

    /// An empty recorder for `groups` result groups and `checks` checks; `live` keeps per-group
    /// interval figures for thresholds judged during the run.
    pub fn with_groups(groups: usize, checks: usize, live: bool) -> Self {
        Self {
            groups: (0..groups).map(|_| GroupStats::new(live)).collect(),
            checks: vec![[0, 0]; checks],
            interval_checks: vec![[0, 0]; checks],
            latency: new_histogram(),
            service: new_histogram(),
            lag: new_histogram(),
            connect: new_histogram(),
            tls: new_histogram(),
            wait: new_histogram(),
            grpc: [0; GrpcCode::COUNT],
            tls_negotiated: [0; Negotiated::COUNT],
            quic: QuicFigures::default(),
            status: vec![0; STATUS_SLOTS].into_boxed_slice(),
            errors: [0; ErrorKind::COUNT],
            counters: Counters::default(),
            dropped: 0,
            warmup_requests: 0,
            warmup_connections: 0,
            grouped: Vec::new(),
            sends: SendSample::default(),
            streams: None,
            keeps_service: true,
            interval: SecondFigures::new(),
            interval_second: 0,
            ahead: SecondFigures::new(),
            reported: Reported::new(STATUS_SLOTS),
            broken_down: interval::Reported::new(groups),
            values_reported: None,
            live_streams: None,
        }
    }

    /// The same recorder with `tables` empty group-by tables (`--group-by`).
    pub fn with_group_tables(mut self, tables: usize) -> Self {
        self.grouped = (0..tables).map(|_| GroupTable::new()).collect();
        self
    }

    /// The same recorder, giving each interval's [`Breakdown::grouped`] (the group-by tables'
    /// figures per value) when `live`. Recording costs nothing more; taking an interval walks
    /// the rows that gained exchanges.
    pub fn with_live_values(mut self, live: bool) -> Self {
        self.values_reported = live.then(Box::default);
        self
    }

    /// The same recorder, giving each interval's [`Breakdown::streams`] (the latencies of the
    /// streams it ended) when `live`; each stream's latencies are then recorded twice.
    pub fn with_live_streams(mut self, live: bool) -> Self {
        self.live_streams = live.then(Box::default);
        self
    }

    /// The same recorder, keeping the service latency only when some scenario of the run is
    /// open (`model`): in a closed-model run it equals the latency and is not reported.
    pub fn with_service(mut self, model: crate::record::model::Model) -> Self {
        self.keeps_service = model.has_open();
        self
    }

    /// Records one measured exchange in group-by table `table` under `value` (`None`: the
    /// response had none, or there was no response).
    #[inline]
    pub fn record_grouped(&mut self, table: usize, value: Option<&[u8]>, s: &RequestSample) {
        if let Some(t) = self.grouped.get_mut(table) {
            t.record(value, s.latency_us, s.status, s.error);
        }
    }

    /// Records one measured request.
    #[inline]
    pub fn record(&mut self, s: &RequestSample) {
        self.counters.add(s, s.window == Window::RunDrain);
        // The per-second series goes by completion time, not by when the snapshot was taken.
        if s.done_us < (self.interval_second + 1).saturating_mul(1_000_000) {
            self.interval.add(s);
        } else {
            self.ahead.add(s);
        }
        if let Some(status) = s.status {
            self.latency
                .saturating_record(s.latency_us.max(HIST_LOW_US));
            if self.keeps_service {
                self.service
                    .saturating_record(s.service_us.max(HIST_LOW_US));
            }
            if let Some(slot) = self.status.get_mut(status as usize) {
                *slot += 1;
            }
        }
        if let Some(lag_us) = s.lag_us {
            self.lag.saturating_record(lag_us.max(HIST_LOW_US));
        }
        if let Some(kind) = s.error {
            self.errors[kind.index()] += 1;
        }
        let t = &s.timing;
        if t.connect_us > 0 {
            self.connect
                .saturating_record(t.connect_us.max(HIST_LOW_US));
        }
        if t.tls_us > 0 {
            self.tls.saturating_record(t.tls_us.max(HIST_LOW_US));
        }
        self.count_tls(t);
        if t.wait_us > 0 {
            self.wait.saturating_record(t.wait_us.max(HIST_LOW_US));
        }
        if let Some(code) = s.grpc {
            self.grpc[code as usize] += 1;
        }
    }

    /// Records one measured request that also belongs to `groups` (ids).
    #[inline]
    pub fn record_in(&mut self, s: &RequestSample, groups: &[Option<usize>]) {
        self.record(s);
        for g in groups.iter().flatten() {
            self.groups[*g].record(s);
        }
    }

    /// Records one measured stream, in the run's stream figures and those of `groups` (ids).
    pub fn record_stream(&mut self, s: &StreamSample<'_>, groups: &[Option<usize>]) {
        self.streams.get_or_insert_with(Box::default).record(s);
        if let Some(live) = &mut self.live_streams {
            live.record(s);
        }
        for g in groups.iter().flatten() {
            self.groups[*g]
                .streams
                .get_or_insert_with(Box::default)
                .record(s);
        }
    }

    /// Counts one check outcome.
    #[inline]
    pub fn record_check(&mut self, check: usize, passed: bool) {
        let i = usize::from(!passed);
        self.checks[check][i] += 1;
        self.interval_checks[check][i] += 1;
    }

    /// Counts one measured iteration started, in the totals and its scenario's group.
    #[inline]
    pub fn record_iteration(&mut self, scenario_group: Option<usize>) {
        self.counters.iterations += 1;
        if let Some(g) = scenario_group {
            self.groups[g].counters.iterations += 1;
        }
    }

    /// Counts the think time drawn after a measured request of `step_group` (of
    /// `scenario_group`), µs.
    #[inline]
    pub fn record_think(&mut self, groups: [Option<usize>; 2], us: u64) {
        self.counters.think_us += us;
        for g in groups.into_iter().flatten() {
            self.groups[g].counters.think_us += us;
        }
    }

    /// Counts a VU's wait for its `pace` after a measured iteration, µs.
    #[inline]
    pub fn record_pacing(&mut self, scenario_group: Option<usize>, us: u64) {
        self.counters.pacing_us += us;
        if let Some(g) = scenario_group {
            self.groups[g].counters.pacing_us += us;
        }
    }

    /// Counts one measured iteration that ended inside its scenario's window, in the totals
    /// and its scenario's group.
    #[inline]
    pub fn record_completed(&mut self, scenario_group: Option<usize>) {
        self.counters.completed += 1;
        if let Some(g) = scenario_group {
            self.groups[g].counters.completed += 1;
        }
    }

    /// Counts a request sent during warm-up (and what the TLS handshake of a connection it
    /// opened settled on: the warm-up is where a closed-model run opens its connections).
    #[inline]
    pub fn record_warmup(&mut self, timing: &Timing, connections_opened: u32) {
        self.warmup_requests += 1;
        self.warmup_connections += u64::from(connections_opened);
        self.count_tls(timing);
    }

    /// Adds what a VU's QUIC connections carried, when it ends (off the hot path: once per VU).
    pub fn record_quic(&mut self, figures: &QuicFigures) {
        self.quic.add(figures);
    }

    /// Counts a new TLS connection's negotiated version and ALPN protocol; nothing for a request
    /// that opened none.
    #[inline]
    fn count_tls(&mut self, timing: &Timing) {
        if let Some(n) = timing.tls {
            self.tls_negotiated[n.index()] += 1;
        }
    }

    /// Open model: records when a measured iteration of scenario `scenario` (index in the plan)
    /// was due and when it went out (see [`SendSample`]).
    #[inline]
    pub fn record_send(&mut self, scenario: usize, send: Send) {
        self.sends.record(scenario, send);
    }

    /// Counts an iteration dropped because the in-flight cap was reached, in the totals and its
    /// scenario's group.
    #[inline]
    pub fn record_dropped(&mut self, scenario_group: Option<usize>) {
        self.dropped += 1;
        self.counters.dropped += 1;
        if let Some(g) = scenario_group {
            self.groups[g].counters.dropped += 1;
        }
    }

    /// Takes the figures of interval `second` (the responses that finished in it; the span, s,
    /// and what was in flight at its end) and starts the next one with what already finished
    /// after it.
    pub fn take_interval(&mut self, second: u64, span_s: f64, in_flight: u64) -> IntervalSnapshot {
        let streams = self.streams.as_deref().map(|s| &s.counts);
        let tally = self
            .reported
            .take(&self.status, &self.errors, &self.counters, streams);
        let mut breakdown =
            self.broken_down
                .take(&self.status, &self.errors, &self.lag, &self.groups);
        if let Some(values) = &mut self.values_reported {
            breakdown.grouped = values.take(&self.grouped);
        }
        breakdown.streams = self.live_streams.as_mut().and_then(|l| l.take());
        let snapshot = IntervalSnapshot {
            second,
            span_s,
            counters: self.interval.counters,
            latency: self.interval.latency.clone(),
            in_flight,
            groups: self
                .groups
                .iter_mut()
                .enumerate()
                .filter_map(|(group, g)| {
                    let tally = g.take_tally()?;
                    let (h, c) = g.interval.as_mut()?;
                    if c.attempts() == 0 && tally.dropped == 0 && tally.completed == 0 {
                        return None;
                    }
                    let out = GroupInterval {
                        group,
                        counters: *c,
                        latency: h.clone(),
                        tally,
                    };
                    h.reset();
                    *c = Counters::default();
                    Some(out)
                })
                .collect(),
            checks: std::mem::replace(&mut self.interval_checks, vec![[0, 0]; self.checks.len()]),
            tally,
            breakdown,
        };
        self.interval.reset();
        std::mem::swap(&mut self.interval, &mut self.ahead);
        self.interval_second = second + 1;
        snapshot
    }

    /// Takes the last interval, `second`, of a worker that finished: everything not yet taken,
    /// a response that finished after the second's end included (nothing comes after it).
    pub fn take_last_interval(
        &mut self,
        second: u64,
        span_s: f64,
        in_flight: u64,
    ) -> IntervalSnapshot {
        self.interval.absorb(&mut self.ahead);
        self.take_interval(second, span_s, in_flight)
    }

    /// Adds another recorder's figures to this one (exact: histograms add bucket by bucket).
    pub fn merge(&mut self, other: &Recorder) {
        // Same bounds everywhere, so adding cannot fail.
        let _ = self.latency.add(&other.latency);
        let _ = self.service.add(&other.service);
        let _ = self.lag.add(&other.lag);
        let _ = self.connect.add(&other.connect);
        let _ = self.tls.add(&other.tls);
        let _ = self.wait.add(&other.wait);
        for (a, b) in self.grpc.iter_mut().zip(other.grpc.iter()) {
            *a += b;
        }
        for (a, b) in self.status.iter_mut().zip(other.status.iter()) {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(other.errors.iter()) {
            *a += b;
        }
        self.counters.merge(&other.counters);
        self.sends.merge(&other.sends);
        streams::merge_optional(&mut self.streams, &other.streams);
        for (a, b) in self.groups.iter_mut().zip(other.groups.iter()) {
            a.merge(b);
        }
        for (a, b) in self.checks.iter_mut().zip(other.checks.iter()) {
            a[0] += b[0];
            a[1] += b[1];
        }
        if self.grouped.len() < other.grouped.len() {
            self.grouped
                .resize_with(other.grouped.len(), GroupTable::new);
        }
        for (a, b) in self.grouped.iter_mut().zip(&other.grouped) {
            a.merge(b);
        }
        self.dropped += other.dropped;
        self.warmup_requests += other.warmup_requests;
        self.warmup_connections += other.warmup_connections;
        for (a, b) in self.tls_negotiated.iter_mut().zip(other.tls_negotiated) {
            *a += b;
        }
        self.quic.add(&other.quic);
    }

    /// Status codes seen, with counts, in ascending order.
    pub fn statuses(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        seen_statuses(&self.status)
    }

    /// Error kinds seen, with counts.
    pub fn error_kinds(&self) -> impl Iterator<Item = (ErrorKind, u64)> + '_ {
        seen_errors(&self.errors)
    }

    /// gRPC status codes seen, with counts, in code order.
    pub fn grpc_statuses(&self) -> impl Iterator<Item = (GrpcCode, u64)> + '_ {
        GrpcCode::ALL
            .into_iter()
            .map(|c| (c, self.grpc[c as usize]))
            .filter(|(_, n)| *n > 0)
    }

    /// What TLS handshakes settled on, with their connection counts.
    pub fn tls_sessions(&self) -> impl Iterator<Item = (Negotiated, u64)> + '_ {
        self.tls_negotiated
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .filter_map(|(i, n)| Some((Negotiated::from_index(i)?, *n)))
    }
}
