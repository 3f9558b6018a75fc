//! `run.json`: the one stable, versioned record of a run. Every report, comparison and later
//! analysis reads this and nothing else. Changing a field's meaning bumps [`SCHEMA_VERSION`];
//! `schema/run.schema.json` is generated from these types (see the `record_schema` test).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::series::SecondStats;
use crate::record::error_kind::ErrorKind;

mod config;
mod grouped;
mod histograms;
mod interval;
mod outcome;
mod part;
mod percentiles;
mod quic;
mod streams;
mod warning;
pub use config::*;
pub use grouped::{GroupedBy, GroupedValue, ValueRow, sort_rows};
pub use histograms::Histograms;
pub use interval::{
    Autocorrelation, Bound, BoundFigure, Ci95, GroupBatches, PrecisionGoal, PrecisionOutcome,
};
pub use outcome::*;
pub use part::{GroupKind, Part};
pub use percentiles::Percentiles;
pub use quic::QuicFigures;
pub use streams::{
    Goodput, LlmFigures, SentFigures, StreamDrained, StreamEnds, StreamFigures, StreamHistograms,
    StreamSlo, TokensFrom,
};
pub use warning::{Warning, WarningCode};

/// Version of the record format written by this build.
pub const SCHEMA_VERSION: u32 = 2;

/// One run, as written to `run.json`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunRecord {
    /// Record format version ([`SCHEMA_VERSION`] when written by this build).
    pub schema_version: u32,
    /// The tool that wrote the record.
    pub tool: Tool,
    /// Name of the run.
    pub name: String,
    /// The run's own id (32 hex digits, random), also the `run_id` label of every series it
    /// exported; a merged record has its own. Absent in records of older versions.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_id: String,
    /// The run's tags (`--tag`, a plan's `[tags]`), also labels of every series it exported;
    /// absent when it has none.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tags: std::collections::BTreeMap<String, String>,
    /// The command line that started the run (argv), with secrets redacted: the values of secret
    /// headers given with `-H`, `--set` values a secret header uses, URL passwords.
    pub command: Vec<String>,
    /// The test as configured.
    pub config: RunConfig,
    /// When the run started (RFC 3339, UTC).
    pub started_at: String,
    /// When the run ended (RFC 3339, UTC).
    pub ended_at: String,
    /// The machine that generated the load.
    pub environment: Environment,
    /// Set when a signal or stop request ended the run early (e.g. "SIGINT"); the figures then
    /// cover only the part that ran.
    pub interrupted: Option<String>,
    /// The headline figures.
    pub summary: Summary,
    /// How the load generator itself fared.
    pub generator: Generator,
    /// One entry per second of the measured part.
    pub series: Vec<SecondStats>,
    /// The final histograms, serialised so that runs can be merged exactly.
    pub histograms: Histograms,
    /// Warnings about the run itself (generator saturated, dropped requests, …).
    pub warnings: Vec<Warning>,
    /// Results broken down by scenario, step, phase (plans; empty in quick mode).
    #[serde(default)]
    pub groups: Vec<Group>,
    /// Check outcomes per step (plans).
    #[serde(default)]
    pub checks: Vec<CheckResult>,
    /// Threshold verdicts (plans).
    #[serde(default)]
    pub thresholds: Vec<ThresholdResult>,
    /// `volley find-max`: the search, every step, and the maximum found. The rest of the record
    /// then describes the best step (the highest load that met the SLO).
    #[serde(default)]
    pub find_max: Option<super::find_max::FindMax>,
    /// Checks that the record's figures are consistent (see `docs/measurement.md`,
    /// "Self-checks"); empty in records written before they were added.
    #[serde(default)]
    pub self_checks: Vec<super::selfcheck::SelfCheck>,
    /// The share of a distributed test this record is of (`--segment i/N`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<super::shares::Share>,
    /// A merged record (`volley merge`): the shares it was merged from; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<super::shares::Merged>,
    /// Responses grouped by value, one entry per `--group-by` selector; absent when nothing was
    /// grouped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grouped: Vec<GroupedBy>,
    /// What was watched on the target's side (`--watch`, `[[watch]]`, a suite's target
    /// process): its Prometheus series and process figures, aligned with `series`; absent when
    /// nothing was watched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<super::watch::Watched>,
    /// How the run ended, as the first line of every report and the exit code say it, decided
    /// from the finished record's own figures (`analysis::verdict`); absent in records of older
    /// versions. `volley verify` checks that it agrees with the figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
}

/// The results of one part of a run: a scenario, a step or a phase.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Group {
    /// What this group is.
    pub kind: GroupKind,
    /// Its name (a phase's name, e.g. "phase 3: 100 VUs").
    pub name: String,
    /// The scenario it belongs to (steps and phases).
    pub scenario: Option<String>,
    /// Steps: the operation label the plan gave the step, when other than its name (a suite's
    /// comparison joins steps of different targets on it; see [`Group::operation_label`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// Start of the group's window, seconds since measuring began: a phase's own start; a
    /// scenario's (and its steps') start (absent for those in records of older versions).
    pub start_s: Option<f64>,
    /// End of the group's window, seconds since measuring began: a phase's own end; a
    /// scenario's scheduled end, or its last completion when its iterations were done first.
    pub end_s: Option<f64>,
    /// Phases: the VU count held.
    pub target_vus: Option<u32>,
    /// Phases: the arrival rate held, iterations per second.
    pub target_rps: Option<f64>,
    /// Requests finished (reached the network), the group's drain included.
    pub requests: u64,
    /// Failed attempts (as `summary.errors`).
    pub errors: u64,
    /// Attempts that never reached the network (as `summary.not_sent`).
    #[serde(default)]
    pub not_sent: u64,
    /// Of the requests, those that completed after the group's window (its scenario's drain).
    #[serde(default)]
    pub drained: u64,
    /// The group's own active window, seconds: a scenario's (and its steps') from its start
    /// (or the end of warm-up) to its scheduled end (or its last completion, or the run's
    /// stop); a phase's own span. Clipped to the run's measured window.
    #[serde(default)]
    pub window_s: f64,
    /// Achieved throughput: requests completed inside the group's window over `window_s`,
    /// requests per second.
    pub rps: f64,
    /// Scenario groups: measured iterations started.
    #[serde(default)]
    pub iterations: Option<u64>,
    /// Open-model scenario groups: the schedule asked against what was achieved.
    #[serde(default)]
    pub arrival: Option<Arrival>,
    /// Latency, ms.
    pub latency_ms: Percentiles,
    /// Responses by status code.
    pub status: BTreeMap<String, u64>,
    /// Failures by kind.
    pub errors_by_kind: BTreeMap<ErrorKind, u64>,
    /// The group's latency histogram (HDR V2, base64, µs).
    pub histogram_us: String,
    /// A stage of a ramping profile that ramps: the level at its start (VUs or per second; the
    /// end's is `target_vus` / `target_rps`), its figures mixing the levels between; absent for
    /// ladder phases and stages that hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_from: Option<f64>,
    /// Steps and scenarios: think time drawn after the measured requests, seconds (never part
    /// of a latency); absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub think_s: f64,
    /// Scenarios with a `pace`: time their VUs waited for it after measured iterations,
    /// seconds; absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pacing_s: f64,
    /// The group's streams, when it has streaming steps (docs/measurement.md, "Streams").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<StreamFigures>,
    /// The 95 % intervals of the group's figures, as `summary.ci95` has the run's (`rps` is the
    /// group's); absent when the run's load was not steady or the group does not start with
    /// the measured window (docs/measurement.md, "Uncertainty").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<Ci95>,
    /// What `ci95` was computed from; present exactly when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batches: Option<GroupBatches>,
}

/// Whether a figure is 0 (left out of `run.json`).
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl Group {
    /// A step's operation label: the plan's `operation`, else the step's name.
    pub fn operation_label(&self) -> &str {
        self.operation.as_deref().unwrap_or(&self.name)
    }
}

/// The outcome of one check of one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckResult {
    /// Scenario name.
    pub scenario: String,
    /// Step name.
    pub step: String,
    /// The check as written, e.g. "status in [200, 201]".
    pub check: String,
    /// Responses that passed it.
    pub passed: u64,
    /// Responses that failed it.
    pub failed: u64,
}

/// The unit of a threshold's bound and observed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThresholdUnit {
    /// Milliseconds (latency).
    Ms,
    /// A share from 0 to 1 (error rate, check pass rate); reports show it as a percentage.
    Ratio,
    /// Requests per second.
    PerSecond,
    /// A number of requests.
    Count,
}

/// The verdict of one threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThresholdResult {
    /// The metric with its filter as written, e.g. "latency{step=get_task}".
    pub metric: String,
    /// The condition as written, e.g. "p95 < 5ms".
    pub condition: String,
    /// The value observed, in the condition's unit (ms, ratio, req/s); null when nothing was
    /// measured for the filter.
    pub observed: Option<f64>,
    /// The unit of `observed` and `observed_at_abort` (absent in records of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<ThresholdUnit>,
    /// Whether the threshold passed: false when its condition failed at the end of the run, and
    /// false when it failed during the run and ended it (`aborted`), whatever the end showed.
    pub passed: bool,
    /// Whether this threshold's failure ended the run early (`abort_on_fail`). Such a threshold
    /// has failed, even where the figures of the shortened run meet the condition.
    pub aborted: bool,
    /// When it ended the run: seconds since measuring began (null when it did not, or in records
    /// of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted_at_s: Option<f64>,
    /// The value it failed with at that moment, in the condition's unit (null as above, or when
    /// nothing was measured yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_at_abort: Option<f64>,
}

impl ThresholdResult {
    /// The verdict of `metric` `condition`: the value `observed` (in `unit`) at the end, whether
    /// the condition `holds` on it, and, when the threshold ended the run, when (seconds since
    /// measuring began) and with what value then. One that ended the run has failed whatever the
    /// end shows.
    pub fn judged(
        metric: String,
        condition: String,
        observed: Option<f64>,
        unit: ThresholdUnit,
        holds: bool,
        abort: Option<(f64, Option<f64>)>,
    ) -> Self {
        Self {
            metric,
            condition,
            observed,
            unit: Some(unit),
            passed: holds && abort.is_none(),
            aborted: abort.is_some(),
            aborted_at_s: abort.map(|(at, _)| at),
            observed_at_abort: abort.and_then(|(_, then)| then),
        }
    }

    /// Whether the threshold failed: its condition failed at the end, or it ended the run.
    pub fn failed(&self) -> bool {
        !self.passed || self.aborted
    }
}

/// The writing tool.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Tool {
    /// Always "volley".
    pub name: String,
    /// The tool's version.
    pub version: String,
}

/// The load generator's machine.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Environment {
    /// Host name.
    pub hostname: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Logical CPUs available to the process.
    pub cores: usize,
    /// Total memory, bytes.
    pub memory_bytes: u64,
    /// Operating system (e.g. "Debian GNU/Linux 12 (bookworm)").
    pub os: String,
    /// Kernel release.
    pub kernel: String,
    /// CPU architecture.
    pub arch: String,
}

/// Connect, TLS handshake and waiting times of a run, milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimingSplit {
    /// TCP connect time of the requests that opened a connection (null when none did).
    pub connect_ms: Option<Percentiles>,
    /// TLS handshake time of the requests that opened a TLS connection (null without TLS).
    pub tls_handshake_ms: Option<Percentiles>,
    /// From the send to the first byte of the response (HTTP/2: to the decoded response
    /// headers): the server's time plus the network (null when no response arrived).
    pub waiting_ms: Option<Percentiles>,
    /// Connections opened with a measured connect time.
    pub connects: u64,
    /// TLS handshakes measured.
    pub tls_handshakes: u64,
}

/// What the TLS handshakes of a run settled on, and how many connections settled on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TlsNegotiated {
    /// The protocol version: `TLSv1.2` or `TLSv1.3`.
    pub version: String,
    /// The application protocol agreed by ALPN (`h2`, `http/1.1`), or null when the server
    /// chose none.
    pub alpn: Option<String>,
    /// Connections whose handshake ended so, warm-up included.
    pub connections: u64,
}

/// One bar of the latency histogram: responses with latency in (previous `le_ms`, `le_ms`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bucket {
    /// Upper bound of the bucket, ms; `null` for the bucket above the last of the run's own
    /// bounds (`config.latency_buckets_ms`), which has none.
    pub le_ms: Option<f64>,
    /// Responses in the bucket.
    pub count: u64,
}

/// The drain: after the measured window, requests still in flight finish (or time out).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Drain {
    /// From the window's end to the last completion, seconds.
    pub duration_s: f64,
    /// Requests that completed in the drain (counted in `requests`, not in any rate).
    pub requests: u64,
}

/// Open model: iterations the arrival schedule asked for against those started.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Arrival {
    /// Iterations due in the window by the schedule: the integral of the asked rate over it.
    pub due: u64,
    /// `due` over the window, iterations per second (a ramp's mean, not its peak).
    pub asked_per_sec: f64,
    /// Iterations started (handed to a VU) of those due.
    pub started: u64,
    /// Iterations that ended (every step done, failed or not) inside the window.
    #[serde(default)]
    pub completed: u64,
    /// `completed` over the window, iterations per second: what the target sustained.
    pub achieved_per_sec: f64,
    /// Due while every VU was busy and the cap was reached: not started.
    pub dropped: u64,
    /// Due but neither started nor dropped: the run stopped first, or the generator fell more
    /// than 1 s behind its schedule.
    pub unsent: u64,
    /// Requests one iteration sends when that is fixed (1 in quick mode): the iteration rates
    /// are then request rates times this. Absent for flows of several steps.
    pub requests_per_iteration: Option<u32>,
}

/// The headline figures of a run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Measured requests finished, successful or not, that reached the network (the drain's
    /// included). Attempts that never left the machine are in `not_sent`, not here.
    pub requests: u64,
    /// Failed attempts: transport errors, 4xx/5xx statuses, and every attempt not sent.
    pub errors: u64,
    /// Measured attempts: `requests` + `not_sent`.
    #[serde(default)]
    pub attempts: u64,
    /// Attempts that never reached the network: the generator had no ephemeral port
    /// (`address_not_available`) or file descriptor (`too_many_open_files`), or could not build
    /// the request (`template_error`). Errors, never part of throughput.
    #[serde(default)]
    pub not_sent: u64,
    /// 1 − the error rate (docs/measurement.md, "Error rate"): the successful share of the
    /// attempts charged to the target, leaving out those the generator itself could not make
    /// (no port, no file descriptor, a request it could not build); 0 when there were none.
    pub success_rate: f64,
    /// The measured window, seconds: from the end of warm-up to the scheduled end of the load
    /// (or the stop; count-limited runs: the last completion). The drain is not in it.
    pub duration_s: f64,
    /// Achieved throughput: requests completed inside the window over `duration_s`, per second.
    pub rps: f64,
    /// Open model, when each iteration is one request: the asked rate, requests per second
    /// (`arrival.asked_per_sec`). Absent otherwise.
    pub target_rps: Option<f64>,
    /// The drain after the window.
    #[serde(default)]
    pub drain: Drain,
    /// Measured iterations started (one pass through a scenario's flow; quick mode: one
    /// request each).
    #[serde(default)]
    pub iterations: u64,
    /// Open model: the arrival schedule asked against what was achieved, in iterations.
    #[serde(default)]
    pub arrival: Option<Arrival>,
    /// Latency, ms. Open model: from when each request was due (includes queueing in the
    /// generator, free of coordinated omission). Closed model: from when it was sent.
    pub latency_ms: Percentiles,
    /// The 95 % confidence intervals of the headline figures (throughput, mean, p50 … p99.9),
    /// by batch means over the run's seconds (docs/measurement.md, "Uncertainty"); absent in
    /// records of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<Ci95>,
    /// Open model: latency from when each request was actually sent, ms (uncorrected).
    pub service_latency_ms: Option<Percentiles>,
    /// Open model: iterations that fell due while the in-flight cap was reached, not started.
    pub dropped: Option<u64>,
    /// Responses by status code.
    pub status: BTreeMap<String, u64>,
    /// Failures by kind (see the README for each kind's meaning).
    pub errors_by_kind: BTreeMap<ErrorKind, u64>,
    /// Request bytes written.
    pub bytes_sent: u64,
    /// Response bytes read.
    pub bytes_received: u64,
    /// TCP connections opened by measured requests.
    pub connections_opened: u64,
    /// Bytes written by requests completed inside the window, over the window, per second.
    pub sent_bytes_per_sec: f64,
    /// Bytes read by requests completed inside the window, over the window, per second.
    pub received_bytes_per_sec: f64,
    /// Latency histogram, ms: in 1-2-5 buckets spanning the latencies, or in the run's own
    /// (`config.latency_buckets_ms`) with one more above the last bound.
    pub latency_buckets: Vec<Bucket>,
    /// Requests sent during warm-up (not measured).
    pub warmup_requests: u64,
    /// Connections opened during warm-up (not in `connections_opened`; measured requests may
    /// reuse them); absent in records of older versions.
    #[serde(default)]
    pub warmup_connections: u64,
    /// gRPC calls by status name (`OK`, `UNAVAILABLE`, …); empty without gRPC steps.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub grpc_status: BTreeMap<String, u64>,
    /// Where each request's time went, like k6's http_req_connecting, tls_handshaking and
    /// waiting.
    #[serde(default)]
    pub timing: TimingSplit,
    /// TLS: what the handshakes negotiated (version, ALPN), with their connection counts; empty
    /// without TLS and in records of older versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tls_negotiated: Vec<TlsNegotiated>,
    /// HTTP/3: what the run's QUIC connections carried over UDP and lost (docs/measurement.md,
    /// "HTTP/3"); absent without HTTP/3 and in records of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicFigures>,
    /// The run's streams, when it has streaming steps (docs/measurement.md, "Streams").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<StreamFigures>,
}

impl Summary {
    /// The errors the target is charged with: every failed attempt but those the generator
    /// itself could not make (the numerator of [`error_rate`](Self::error_rate)).
    pub fn charged_errors(&self) -> u64 {
        self.errors
            .saturating_sub(generator_limited(&self.errors_by_kind))
    }

    /// The error rate (docs/measurement.md, "Error rate"), 0–1; `None` when no attempt was
    /// charged to the target.
    pub fn error_rate(&self) -> Option<f64> {
        error_rate(
            self.requests + self.not_sent,
            self.errors,
            &self.errors_by_kind,
        )
    }

    /// The counts of [`Self::error_rate`]: (attempts charged, failed of them).
    pub fn error_counts(&self) -> (u64, u64) {
        outcome::error_counts(
            self.requests + self.not_sent,
            self.errors,
            &self.errors_by_kind,
        )
    }
}

impl Group {
    /// Its name in tables: "scenario / step" for a step, its own name otherwise.
    pub fn path(&self) -> String {
        self.kind.path(self.scenario.as_deref(), &self.name)
    }

    /// The group's error rate, as [`Summary::error_rate`].
    pub fn error_rate(&self) -> Option<f64> {
        error_rate(
            self.requests + self.not_sent,
            self.errors,
            &self.errors_by_kind,
        )
    }

    /// The counts of [`Self::error_rate`]: (attempts charged, failed of them).
    pub fn error_counts(&self) -> (u64, u64) {
        outcome::error_counts(
            self.requests + self.not_sent,
            self.errors,
            &self.errors_by_kind,
        )
    }
}

/// Self-diagnosis of the load generator.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Generator {
    /// Per worker thread.
    pub threads: Vec<ThreadStats>,
    /// CPU time of the whole process during the run, seconds: every thread (workers, the control
    /// thread, and whatever else runs in the process, such as `volley demo`'s built-in target).
    pub cpu_s: f64,
    /// The worker threads' CPU time (`threads[].cpu_s`, summed) per request they finished,
    /// warm-up included, microseconds: the generator's own cost, without the rest of the process.
    /// Records of older versions divided the process CPU by the measured requests.
    pub cpu_us_per_request: Option<f64>,
    /// Peak resident set size of the process, bytes.
    pub peak_rss_bytes: u64,
    /// Open model: how late requests were sent against their due time, ms.
    pub lag_ms: Option<Percentiles>,
    /// Open model: the tick of the workers' send grid, ms (0: none). Each request was due at
    /// the first point of its worker's grid at or after its arrival, and is measured from there.
    #[serde(default)]
    pub send_grid_ms: Option<f64>,
    /// The share of the machine's CPU time that the hypervisor gave to someone else during the
    /// run (CPU steal, from `/proc/stat`, all CPUs, warm-up and drain included), 0–1. `None`
    /// where it cannot be read, and in records before it. A merged record: the largest of its
    /// shares'.
    #[serde(default)]
    pub steal_share: Option<f64>,
}

/// One worker thread's CPU use.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub struct ThreadStats {
    /// CPU time (user + system), seconds.
    pub cpu_s: f64,
    /// Wall time, seconds.
    pub wall_s: f64,
    /// CPU time over wall time, 0–1.
    pub utilization: f64,
}
