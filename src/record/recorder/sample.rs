//! What the recorder is told about one finished request, and the counters it keeps.

use crate::record::error_kind::ErrorKind;
use crate::record::grpc_code::GrpcCode;
use crate::record::timing::Timing;

/// What one finished request looked like, as the recorder needs it.
#[derive(Debug, Clone, Copy)]
pub struct RequestSample {
    /// Latency from when the request was due (open model) or started (closed model), µs.
    pub latency_us: u64,
    /// Latency from when the request was actually sent, µs.
    pub service_us: u64,
    /// How late the request went out against when it was due, µs (open model; `None` for a
    /// closed-model request, which has no due time).
    pub lag_us: Option<u64>,
    /// Request bytes written.
    pub bytes_sent: u64,
    /// Response bytes read (also for failed exchanges).
    pub bytes_received: u64,
    /// TCP connections the request opened.
    pub connections_opened: u32,
    /// The status, when a response arrived.
    pub status: Option<u16>,
    /// The error, when the request failed (a transport error, or a 4xx/5xx status).
    pub error: Option<ErrorKind>,
    /// The gRPC status of a gRPC call that got one.
    pub grpc: Option<GrpcCode>,
    /// Where the time went (zeros when unknown, e.g. nothing was opened or no byte arrived).
    pub timing: Timing,
    /// Whether it completed inside the measured window or in a drain after it.
    pub window: Window,
    /// When it completed, µs since measuring began (for groups' own windows).
    pub done_us: u64,
}

/// Where a request's completion falls against the windows it is measured in
/// (docs/measurement.md, "Windows").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Window {
    /// Before the scheduled end of its scenario (and so of the run).
    #[default]
    Inside,
    /// After its scenario's scheduled end, but before the run's.
    ScenarioDrain,
    /// After the run's scheduled end: in the run's drain.
    RunDrain,
}

/// Counters of one recorder (serialised in the distributed coordinator's snapshots).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    /// Measured requests finished (successful or not) that reached the network.
    pub requests: u64,
    /// Measured attempts that never reached the network (see [`ErrorKind::never_sent`]); each is
    /// also an error.
    pub not_sent: u64,
    /// Failed attempts: transport errors, 4xx/5xx, and every attempt not sent.
    pub errors: u64,
    /// Of the attempts not sent, those the generator itself could not make (see
    /// [`ErrorKind::is_generator_limit`]): in no error rate.
    pub generator_limited: u64,
    /// Of the requests, those that completed in a drain (after the window's scheduled end).
    pub drained: u64,
    /// Measured iterations started (tickets handed to VUs); scenario groups and totals only.
    pub iterations: u64,
    /// Of those, the iterations that ended (every step done, failed or not) inside their
    /// scenario's window; scenario groups and totals only.
    pub completed: u64,
    /// Open model: iterations that fell due while the in-flight cap was reached (scenario groups
    /// and totals).
    pub dropped: u64,
    /// Request bytes written by drained requests (also in `bytes_sent`).
    pub drained_bytes_sent: u64,
    /// Response bytes read by drained requests (also in `bytes_received`).
    pub drained_bytes_received: u64,
    /// Request bytes written.
    pub bytes_sent: u64,
    /// Response bytes read.
    pub bytes_received: u64,
    /// TCP connections opened.
    pub connections_opened: u64,
    /// Think time drawn after measured requests, µs (steps, their scenario, the totals).
    pub think_us: u64,
    /// Time VUs waited for their `pace` after measured iterations, µs (scenario groups and
    /// totals).
    pub pacing_us: u64,
}

impl Counters {
    /// Attempts: requests plus attempts that never reached the network.
    pub fn attempts(&self) -> u64 {
        self.requests + self.not_sent
    }

    /// The error rate of these counts (docs/measurement.md, "Error rate"), 0–1; `None` when no
    /// attempt was charged to the target.
    pub fn error_rate(&self) -> Option<f64> {
        crate::record::model::error_share(
            self.attempts() - self.generator_limited,
            self.errors - self.generator_limited,
        )
    }

    #[inline]
    pub(super) fn add(&mut self, s: &RequestSample, drained: bool) {
        if s.error.is_some_and(ErrorKind::never_sent) {
            self.not_sent += 1;
            self.generator_limited += u64::from(s.error.is_some_and(ErrorKind::is_generator_limit));
        } else {
            self.requests += 1;
            if drained {
                self.drained += 1;
                self.drained_bytes_sent += s.bytes_sent;
                self.drained_bytes_received += s.bytes_received;
            }
        }
        self.connections_opened += u64::from(s.connections_opened);
        self.errors += u64::from(s.error.is_some());
        self.bytes_sent += s.bytes_sent;
        self.bytes_received += s.bytes_received;
    }

    /// The counts added since `earlier`, a copy of these counters taken before.
    pub fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            requests: self.requests.saturating_sub(earlier.requests),
            not_sent: self.not_sent.saturating_sub(earlier.not_sent),
            errors: self.errors.saturating_sub(earlier.errors),
            generator_limited: self
                .generator_limited
                .saturating_sub(earlier.generator_limited),
            drained: self.drained.saturating_sub(earlier.drained),
            iterations: self.iterations.saturating_sub(earlier.iterations),
            completed: self.completed.saturating_sub(earlier.completed),
            dropped: self.dropped.saturating_sub(earlier.dropped),
            drained_bytes_sent: self
                .drained_bytes_sent
                .saturating_sub(earlier.drained_bytes_sent),
            drained_bytes_received: self
                .drained_bytes_received
                .saturating_sub(earlier.drained_bytes_received),
            bytes_sent: self.bytes_sent.saturating_sub(earlier.bytes_sent),
            bytes_received: self.bytes_received.saturating_sub(earlier.bytes_received),
            connections_opened: self
                .connections_opened
                .saturating_sub(earlier.connections_opened),
            think_us: self.think_us.saturating_sub(earlier.think_us),
            pacing_us: self.pacing_us.saturating_sub(earlier.pacing_us),
        }
    }

    /// Adds another recorder's counters.
    pub fn merge(&mut self, o: &Counters) {
        self.requests += o.requests;
        self.not_sent += o.not_sent;
        self.errors += o.errors;
        self.generator_limited += o.generator_limited;
        self.drained += o.drained;
        self.iterations += o.iterations;
        self.completed += o.completed;
        self.dropped += o.dropped;
        self.drained_bytes_sent += o.drained_bytes_sent;
        self.drained_bytes_received += o.drained_bytes_received;
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        self.connections_opened += o.connections_opened;
        self.think_us += o.think_us;
        self.pacing_us += o.pacing_us;
    }
}
