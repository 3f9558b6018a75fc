//! The run's configuration as recorded: what was asked for, in `config` of `run.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The load model of a whole run: every scenario closed, every scenario open, or some of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    /// VUs run iterations back to back: the target's speed sets the rate.
    Closed,
    /// Iterations fall due on a schedule, whatever the responses do.
    Open,
    /// A plan with both closed and open scenarios.
    Mixed,
}

impl Model {
    /// Whether some scenario runs the open model (open or mixed): the run then has a send lag
    /// and a service latency.
    pub fn has_open(self) -> bool {
        self != Self::Closed
    }

    /// The model's name as in `run.json`: `closed`, `open` or `mixed`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::Open => "open",
            Self::Mixed => "mixed",
        }
    }
}

impl std::fmt::Display for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The configuration of the run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunConfig {
    /// Target URL.
    pub url: String,
    /// HTTP method.
    pub method: String,
    /// Request headers as `Name: value`; the value of a secret header (Authorization,
    /// Proxy-Authorization, Cookie, Set-Cookie, and those in `secret_headers`) is `[redacted]`.
    pub headers: Vec<String>,
    /// Headers the user marked secret (`--secret-header`, the plan's `secret_headers`), lower
    /// case; their values are redacted here, in `command` and in every report.
    #[serde(default)]
    pub secret_headers: Vec<String>,
    /// Request body size, bytes.
    pub body_bytes: u64,
    /// The latency buckets asked for (`--buckets`, a plan's `[report] buckets`), upper bounds in
    /// ms, ascending; empty: volley's 1-2-5 buckets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_buckets_ms: Vec<f64>,
    /// Closed, open, or (a plan with both kinds of scenario) mixed.
    pub model: Model,
    /// Closed model, quick mode and one-scenario plans: requests in flight at once (VUs): the
    /// connections (`-c`), times `streams` with HTTP/2. Plans: see `scenarios[].load`.
    pub connections: Option<u32>,
    /// Open model: arrival rate, requests per second.
    pub rate_per_sec: Option<f64>,
    /// Open model: most requests in flight at once.
    pub max_in_flight: Option<u32>,
    /// Measured duration asked for, seconds (duration limit).
    pub duration_s: Option<f64>,
    /// Request count asked for (count limit).
    pub requests: Option<u64>,
    /// Warm-up, seconds.
    pub warmup_s: f64,
    /// Request timeout, seconds.
    pub timeout_s: f64,
    /// Whether connections were reused.
    pub keepalive: bool,
    /// Protocol of HTTP requests: `http/1.1`, `h2c` (HTTP/2 without TLS) or `h2` (over TLS).
    #[serde(default)]
    pub protocol: WireProtocol,
    /// Whether connections used TLS.
    #[serde(default)]
    pub tls: bool,
    /// HTTP/2 streams per connection (VUs sharing one connection); 1 for HTTP/1.1.
    #[serde(default = "one")]
    pub streams: u32,
    /// HTTP/3: whether a connection that resumed a TLS session sent its first requests as
    /// 0-RTT early data (`--zero-rtt`; what came of it: `summary.quic`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub zero_rtt: bool,
    /// Local source addresses connections were spread over (0: the kernel chose).
    #[serde(default)]
    pub source_addrs: usize,
    /// Worker threads.
    pub threads: usize,
    /// The plan file, for runs of a plan.
    #[serde(default)]
    pub plan: Option<String>,
    /// The scenarios (one, named "default", in quick mode).
    #[serde(default)]
    pub scenarios: Vec<ScenarioConfig>,
    /// Largest response head accepted, bytes (absent in records of older versions).
    #[serde(default)]
    pub max_header_bytes: Option<u64>,
    /// Largest response body accepted, bytes; absent: no limit.
    #[serde(default)]
    pub max_body_bytes: Option<u64>,
}

/// One scenario as configured.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ScenarioConfig {
    /// Name.
    pub name: String,
    /// The load profile in words, e.g. "up to 500 VUs over 3m30s (3 stages)".
    pub profile: String,
    /// Start after the run's start, seconds.
    pub start_after_s: f64,
    /// Step names, in order.
    pub steps: Vec<String>,
    /// The load profile as figures (absent in records of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<ScenarioLoad>,
}

/// The load model of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoadModel {
    /// VUs run iterations back to back: the target's speed sets the rate.
    Closed,
    /// Iterations fall due on a schedule, whatever the responses do.
    Open,
}

impl LoadModel {
    /// The name in `run.json`: `closed` or `open`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::Open => "open",
        }
    }
}

impl std::fmt::Display for LoadModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The kind of load profile, as a plan names it (`[scenario.load] profile = …`); quick mode is
/// `constant-vus` (`-c`) or `constant-arrival-rate` (`--rate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileKind {
    /// A fixed number of VUs for a while.
    ConstantVus,
    /// VUs moving through stages.
    RampingVus,
    /// A number of iterations shared by the VUs.
    Iterations,
    /// A number of iterations per VU.
    PerVuIterations,
    /// A fixed arrival rate for a while.
    ConstantArrivalRate,
    /// An arrival rate moving through stages.
    RampingArrivalRate,
    /// Phases of fixed VUs or rates, each with its own results.
    Ladder,
}

impl ProfileKind {
    /// Every profile, in the order the plan's errors list them.
    pub const ALL: [ProfileKind; 7] = [
        Self::ConstantVus,
        Self::RampingVus,
        Self::ConstantArrivalRate,
        Self::RampingArrivalRate,
        Self::Iterations,
        Self::PerVuIterations,
        Self::Ladder,
    ];

    /// Its name in plan files (`profile = …`) and in `run.json`.
    pub fn name(self) -> &'static str {
        match self {
            Self::ConstantVus => "constant-vus",
            Self::RampingVus => "ramping-vus",
            Self::ConstantArrivalRate => "constant-arrival-rate",
            Self::RampingArrivalRate => "ramping-arrival-rate",
            Self::Iterations => "iterations",
            Self::PerVuIterations => "per-vu-iterations",
            Self::Ladder => "ladder",
        }
    }
}

/// What load a scenario asked for, as figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScenarioLoad {
    /// Closed (VUs) or open (arrival rate).
    pub model: LoadModel,
    /// The profile.
    pub profile: ProfileKind,
    /// Closed model: the most VUs at once (the peak of the stages or phases).
    pub peak_vus: Option<u32>,
    /// Open model: the highest arrival rate, iterations per second.
    pub peak_rate_per_sec: Option<f64>,
    /// Open model: the most VUs, i.e. iterations in flight at once (an iteration due while all
    /// are busy is dropped).
    pub max_vus: Option<u32>,
    /// How long the profile sends load, seconds, warm-up excluded (null: until its iterations
    /// are done).
    pub duration_s: Option<f64>,
    /// Iterations asked for: in all (`iterations`, `-n`) or per VU (`per-vu-iterations`).
    pub iterations: Option<u64>,
    /// Stages of a ramping profile, phases of a ladder (1 for a constant profile).
    pub stages: u32,
    /// Quick mode: the connections (`-c`); with HTTP/2 each carries `streams` VUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u32>,
    /// Open model: how the arrivals were spaced (absent in records of older versions: evenly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<ArrivalSchedule>,
    /// Poisson arrivals: the seed they were drawn from (`--seed` makes the run again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// How an open scenario's arrivals were spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalSchedule {
    /// Evenly, at the rate.
    Uniform,
    /// A Poisson process of the rate: exponential gaps.
    Poisson,
}

/// The protocol HTTP requests were spoken in, as `run.json` names it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum WireProtocol {
    /// HTTP/1.1, plain or over TLS.
    #[default]
    #[serde(rename = "http/1.1")]
    Http1,
    /// HTTP/2 without TLS (prior knowledge).
    #[serde(rename = "h2c")]
    H2c,
    /// HTTP/2 over TLS (ALPN).
    #[serde(rename = "h2")]
    H2,
    /// HTTP/3 over QUIC.
    #[serde(rename = "h3")]
    H3,
}

impl WireProtocol {
    /// The name in `run.json` and every report: `http/1.1`, `h2c`, `h2` or `h3`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Http1 => "http/1.1",
            Self::H2c => "h2c",
            Self::H2 => "h2",
            Self::H3 => "h3",
        }
    }
}

impl std::fmt::Display for WireProtocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

fn one() -> u32 {
    1
}
