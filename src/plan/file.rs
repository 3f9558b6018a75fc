//! The plan file as written (TOML), before validation. Unknown keys are errors; values that need
//! checking after parsing keep their location (`Spanned`) so every error can say file:line:col.
//! `schema/plan.schema.json` is generated from these types for editors.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

pub use super::file_stream::{GrpcStreamFile, SloFile, SseFile, WsFile};
use crate::proto::client::Protocol;

/// A duration as written: `30s`, `1m30s`, `500ms`.
pub type DurationText = Spanned<String>;

/// A whole plan file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// Name of the run (default: the file's stem).
    pub name: Option<String>,
    /// The server under test.
    pub target: TargetFile,
    /// Worker threads (default: one per core).
    pub threads: Option<usize>,
    /// Variables for templates (`{{ vars.NAME }}`), overridable with `--set NAME=value`.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub vars: BTreeMap<String, toml::Value>,
    /// CSV data files for templates (`{{ data.NAME.COLUMN }}`).
    #[serde(default)]
    pub data: BTreeMap<String, DataFile>,
    /// The scenarios (`[[scenario]]`), run at the same time.
    #[serde(rename = "scenario")]
    pub scenarios: Vec<ScenarioFile>,
    /// Thresholds: metric (with an optional `{scenario=…}`, `{step=…}` or `{phase=…}` filter) →
    /// conditions, e.g. `"latency{step=get_task}" = ["p95 < 5ms"]`.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Vec<ThresholdEntry>>")]
    pub thresholds: BTreeMap<String, Spanned<Vec<Spanned<ThresholdEntry>>>>,
    /// What to watch on the target's side during the run (`[[watch]]`): a Prometheus metrics
    /// page or a process, sampled every second off the hot path.
    #[serde(default)]
    #[schemars(with = "Vec<WatchFile>")]
    pub watch: Vec<Spanned<WatchFile>>,
    /// `[distributed]`: how a coordinated test (`volley coordinate`) treats its generators.
    pub distributed: Option<DistributedFile>,
    /// `[report]`: how the results are cut (latency buckets).
    pub report: Option<ReportFile>,
    /// `[precision]`: run until each named figure's 95 % interval is this narrow, as a share
    /// of the figure (`p99 = "2%"`; figures: rps, mean, p50, p90, p95, p99, p99.9), the plan's length
    /// being the most it runs. A figure of one scenario or step takes its filter in a quoted key
    /// (`"p99{step=pay}" = "2%"`). `--precision` replaces it.
    #[schemars(with = "Option<BTreeMap<String, String>>")]
    pub precision: Option<Spanned<BTreeMap<String, Spanned<String>>>>,
    /// The seed of the Poisson arrivals (`arrivals = "poisson"`): the same seed gives the same
    /// arrivals (with the same threads and segment); drawn at random and recorded when absent.
    /// `--seed` replaces it.
    pub seed: Option<u64>,
    /// `[tags]`: `KEY = "VALUE"` pairs naming the run (e.g. `testid = "pr-123"`), kept in the
    /// record and attached to every exported series; `--tag KEY=VALUE` adds or replaces one.
    /// At most 16; keys are label names (`[A-Za-z_][A-Za-z0-9_]*`) other than volley's own.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Quick mode's `--warmup`: the first part of the run, whose requests are sent but not
    /// recorded (the profile's length includes it). Not a key of plan files.
    #[serde(skip)]
    #[schemars(skip)]
    pub warmup: Duration,
}

/// `[report]`: how the run's results are cut.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportFile {
    /// The latency buckets' upper bounds, ascending, e.g. `["25ms", "50ms", "100ms", "500ms"]`:
    /// one bucket up to each and one above the last (default: 1-2-5 buckets spanning the
    /// latencies). `--buckets` replaces them.
    #[schemars(with = "Option<Vec<String>>")]
    pub buckets: Option<Spanned<Vec<DurationText>>>,
}

/// `[distributed]`: a coordinated test's handling of generators that die or go silent.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DistributedFile {
    /// A generator silent for this long (no snapshot, no heartbeat) is lost, e.g. `10s`
    /// (default 10s, at least 2s).
    #[schemars(with = "Option<String>")]
    pub lost_after: Option<DurationText>,
    /// What the test does when a generator is lost: `continue` (the default; the merged record
    /// names the missing share) or `stop` (every generator is stopped).
    pub on_lost: Option<crate::plan::segment::OnLost>,
}

/// `[target]`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetFile {
    /// Base URL, e.g. `http://127.0.0.1:8080` (may use `{{ env.NAME }}`).
    #[schemars(with = "String")]
    pub base_url: Spanned<String>,
    /// Headers sent with every request.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Headers whose values are secret, besides Authorization, Proxy-Authorization, Cookie and
    /// Set-Cookie: redacted in summaries, records and reports (requests carry the real values).
    #[schemars(with = "Option<Vec<String>>")]
    pub secret_headers: Option<Spanned<Vec<String>>>,
    /// Per-request timeout (default 10s).
    #[schemars(with = "Option<String>")]
    pub timeout: Option<DurationText>,
    /// Reuse connections (default true).
    pub keepalive: Option<bool>,
    /// The protocol HTTP steps speak, by name (default `"http1"`; the schema lists them all):
    /// `"http2"` is prior knowledge (h2c) over `http://`, ALPN `h2` over `https://`. gRPC steps
    /// use one that carries gRPC whatever this says; `grpc://` and `grpcs://` URLs imply it.
    #[schemars(with = "Option<Protocol>")]
    pub protocol: Option<Spanned<Protocol>>,
    /// Deprecated alias: `http2 = true` is `protocol = "http2"` (`false`: the default). Given
    /// with `protocol`, the two must agree.
    #[schemars(with = "Option<bool>", extend("deprecated" = true))]
    pub http2: Option<Spanned<bool>>,
    /// HTTP/2 streams per connection: this many VUs share one connection (default 1).
    #[schemars(with = "Option<u32>")]
    pub streams: Option<Spanned<u32>>,
    /// TLS settings of an `https://` target.
    pub tls: Option<TlsFile>,
    /// Local addresses to spread connections over, e.g. `"127.0.0.2-127.0.0.40"`, so that
    /// loopback tests do not run out of ephemeral ports.
    #[schemars(with = "Option<String>")]
    pub source_addrs: Option<Spanned<String>>,
    /// `.proto` files of the gRPC steps' services, relative to the plan; without them the
    /// services' schemas are fetched from the target by gRPC server reflection.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub proto: Vec<Spanned<String>>,
    /// Folders searched for the `.proto` files' imports, relative to the plan.
    #[serde(default)]
    pub import_paths: Vec<String>,
    /// Largest response head accepted: bytes or a size like `"64KiB"` (1KiB to 16MiB; default
    /// 64KiB). A larger head fails as `header_too_large`.
    #[schemars(with = "Option<SizeText>")]
    pub max_header_size: Option<Spanned<SizeText>>,
    /// Largest response body accepted: bytes or a size like `"10MB"` (default: no limit; bodies
    /// are counted and discarded). A larger body fails as `body_too_large`.
    #[schemars(with = "Option<SizeText>")]
    pub max_body_size: Option<Spanned<SizeText>>,
    /// Group every step's responses by these: `"header:X-Backend"`, `"json:$.path"` (a field
    /// of a JSON body) or `"status"`; figures per value in the record and reports.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub group_by: Vec<Spanned<String>>,
}

/// `[[watch]]`: one Prometheus metrics page (`prom`) or one process (`pid`) watched during the
/// run; failed scrapes are counted and reported, never fatal.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WatchFile {
    /// A Prometheus / OpenMetrics text page, e.g. `http://127.0.0.1:8080/metrics` (`http://` only).
    #[schemars(with = "Option<String>")]
    pub prom: Option<Spanned<String>>,
    /// A process to watch with its descendants: CPU, RSS, threads, open fds (from `/proc`).
    #[schemars(with = "Option<u32>")]
    pub pid: Option<Spanned<u32>>,
    /// `prom`: the series to keep, PromQL-style: `name`, `name{label="v"}`,
    /// `{__name__=~"http_.*"}` (default: every series, up to `max_series`).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub metrics: Vec<Spanned<String>>,
    /// `prom`: series kept at most (default 100; 1 to 10000); the rest are counted.
    #[schemars(with = "Option<usize>")]
    pub max_series: Option<Spanned<usize>>,
    /// Time between two scrapes or samples (default 1s; at least 100ms).
    #[schemars(with = "Option<String>")]
    pub interval: Option<DurationText>,
    /// `prom`: deadline of one scrape, shorter than the interval (default 800ms).
    #[schemars(with = "Option<String>")]
    pub timeout: Option<DurationText>,
}

/// `[target.tls]`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TlsFile {
    /// Accept any certificate (still encrypted). Default false.
    pub insecure: Option<bool>,
    /// PEM file of the CA certificates to trust instead of the built-in roots.
    pub cacert: Option<String>,
    /// Client certificate PEM file (mutual TLS); needs `key`.
    pub cert: Option<String>,
    /// Client private key PEM file; needs `cert`.
    pub key: Option<String>,
    /// Server name sent as SNI and verified (default: the URL's host).
    pub sni: Option<String>,
    /// `"1.2"` or `"1.3"` (default: either).
    #[schemars(with = "Option<String>")]
    pub version: Option<Spanned<String>>,
    /// HTTP/3: a connection that resumes a TLS session sends its first requests as 0-RTT
    /// early data, before the handshake completes (replayable: idempotent requests only).
    /// Default false.
    #[schemars(with = "Option<bool>")]
    pub zero_rtt: Option<Spanned<bool>>,
}

/// A size: a number of bytes (`65536`), or text with a unit (`"64KiB"`, `"10MB"`, `"1.5MiB"`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(
    untagged,
    expecting = "expected a number of bytes (65536) or a size with its unit (\"64KiB\")"
)]
pub enum SizeText {
    /// Bytes.
    Bytes(u64),
    /// A number with a unit: KiB, MiB, GiB (or K, M, G) are powers of 1024; kB, MB, GB of 1000.
    Text(String),
}

/// `[data.NAME]`: a CSV file whose first line names the columns.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataFile {
    /// Path, relative to the plan file.
    #[schemars(with = "String")]
    pub file: Spanned<String>,
    /// `sequential` (default), `random`, or `unique` (one row per VU).
    #[schemars(with = "Option<String>")]
    pub mode: Option<Spanned<String>>,
}

/// `[[scenario]]`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Unique name.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// `sequential` (default: every step in order per iteration) or `weighted` (one step per
    /// iteration, picked by `weight`).
    #[schemars(with = "Option<String>")]
    pub flow: Option<Spanned<String>>,
    /// Start this long after the run starts.
    #[schemars(with = "Option<String>")]
    pub start_after: Option<DurationText>,
    /// The load profile.
    #[schemars(with = "LoadFile")]
    pub load: Spanned<LoadFile>,
    /// The steps (`[[scenario.step]]`).
    #[serde(rename = "step")]
    pub steps: Vec<StepFile>,
    /// Closed model: a VU starts an iteration no sooner than this after its last one started
    /// (Gatling's `pace`), e.g. `"1s"`.
    #[schemars(with = "Option<String>")]
    pub pace: Option<DurationText>,
    /// The VUs' cookie jar: `true` or `"iteration"` (the default: `Set-Cookie` is honoured and
    /// the cookies are sent on the VU's later requests, the jar emptied at each iteration's
    /// start), `"vu"` (kept across the VU's iterations), `false` (no jar).
    #[schemars(with = "Option<serde_json::Value>")]
    pub cookies: Option<Spanned<toml::Value>>,
}

/// A step's `think` as written: a duration, or a distribution of them.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a duration (\"100ms\") or a distribution ({ uniform = [\"50ms\", \"150ms\"] })"
)]
pub enum ThinkFile {
    /// `"100ms"`.
    Fixed(String),
    /// `{ uniform = ["50ms", "150ms"] }` and the other distributions.
    Drawn(ThinkDistribution),
}

/// A think-time distribution, one key.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThinkDistribution {
    /// Between two durations.
    pub uniform: Option<[String; 2]>,
    /// Exponential with this mean.
    pub exponential: Option<String>,
    /// Normal: mean and standard deviation.
    pub normal: Option<[String; 2]>,
}

/// `[scenario.load]`: the load profile, chosen by `profile`; each profile takes some of the keys.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadFile {
    /// `constant-vus` (vus, duration), `ramping-vus` (start_vus, stages),
    /// `constant-arrival-rate` (rate, time_unit, duration, max_vus), `ramping-arrival-rate`
    /// (start_rate, time_unit, stages, max_vus), `iterations` (vus, iterations, max_duration;
    /// shared), `per-vu-iterations` (the same, per VU), `ladder` (preset or phases, max_vus).
    #[schemars(with = "String")]
    pub profile: Spanned<String>,
    /// VUs.
    pub vus: Option<u32>,
    /// How long.
    #[schemars(with = "Option<String>")]
    pub duration: Option<DurationText>,
    /// VUs at the start (ramping-vus; default 0).
    pub start_vus: Option<u32>,
    /// Stages `{ duration, target }` (ramping profiles).
    pub stages: Option<Vec<StageFile>>,
    /// Iterations per `time_unit` (constant-arrival-rate).
    pub rate: Option<f64>,
    /// Rate at the start (ramping-arrival-rate; default 0).
    pub start_rate: Option<f64>,
    /// The rate's unit (default 1s; `1m` for per minute).
    #[schemars(with = "Option<String>")]
    pub time_unit: Option<DurationText>,
    /// VUs available to an arrival-rate profile; an iteration due with none idle is dropped.
    pub max_vus: Option<u32>,
    /// Iterations (shared, or per VU); with `constant-arrival-rate`, stop after this many have
    /// fallen due (then `duration` may be left out: the run lasts until they have).
    pub iterations: Option<u64>,
    /// Iteration profiles: stop after this long anyway.
    #[schemars(with = "Option<String>")]
    pub max_duration: Option<DurationText>,
    /// Ladder: `smoke`, `full` or `saturation` (report 002's ladders).
    pub preset: Option<String>,
    /// Ladder: phases `{ vus | rate, duration, name }`.
    pub phases: Option<Vec<PhaseFile>>,
    /// Open model: how arrivals are spaced, `"uniform"` (evenly, the default) or `"poisson"`
    /// (exponential gaps at the rate, from the plan's `seed`).
    #[schemars(with = "Option<String>")]
    pub arrivals: Option<Spanned<String>>,
}

/// One stage of a ramping profile.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageFile {
    /// How long the move takes.
    #[schemars(with = "String")]
    pub duration: DurationText,
    /// VUs or rate at the end of the stage.
    pub target: f64,
}

/// One ladder phase: `vus` or `rate`, held for `duration`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseFile {
    /// Display name (default "phase N: … VUs").
    pub name: Option<String>,
    /// VUs held.
    pub vus: Option<u32>,
    /// Rate held (iterations per second).
    pub rate: Option<f64>,
    /// How long.
    #[schemars(with = "String")]
    pub duration: DurationText,
}

/// `[[scenario.step]]`: one request.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepFile {
    /// Name, unique within the scenario.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// The operation this step performs, as a label shared across plans (default: the step's
    /// `name`): a suite's comparison puts steps of different targets with the same operation
    /// in one row, e.g. `POST /events` and `events.v1.Events/Create` as `create_event`.
    #[schemars(with = "Option<String>")]
    pub operation: Option<Spanned<String>>,
    /// HTTP method (default GET).
    #[schemars(with = "Option<String>")]
    pub method: Option<Spanned<String>>,
    /// Path and query, after the target's base URL (templated). Not for gRPC steps.
    #[schemars(with = "Option<String>")]
    pub path: Option<Spanned<String>>,
    /// A unary gRPC call, `package.Service/Method` (schema from `[target] proto`, or by server
    /// reflection); its message is the step's `json` (templated), its metadata the step's
    /// `headers`.
    #[schemars(with = "Option<String>")]
    pub grpc: Option<Spanned<String>>,
    /// A streaming step: its response is a Server-Sent Events stream, measured per stream and
    /// per message (`sse = {}` for the defaults; see docs/measurement.md, "Streams").
    #[schemars(with = "Option<SseFile>")]
    pub sse: Option<Spanned<SseFile>>,
    /// How a streaming gRPC call (server, client or bidirectional streaming; `grpc` names it)
    /// sends and reads its messages; the defaults when left out.
    #[schemars(with = "Option<GrpcStreamFile>")]
    pub grpc_stream: Option<Spanned<GrpcStreamFile>>,
    /// A WebSocket stream: the step's `GET` of its `path` upgrades the connection, and its
    /// body is the message sent (`websocket = {}` for one message and its reply).
    #[schemars(with = "Option<WsFile>")]
    pub websocket: Option<Spanned<WsFile>>,
    /// Headers (templated values); they replace the target's headers of the same name.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub headers: HeaderList,
    /// Raw body (templated); for a gRPC step, the message as JSON text (instead of `json`).
    #[schemars(with = "Option<String>")]
    pub body: Option<Spanned<String>>,
    /// Body read from a file, relative to the plan (templated).
    #[schemars(with = "Option<String>")]
    pub body_file: Option<Spanned<String>>,
    /// JSON body; string values may be templates (`"{{ rand_int(1, 9) }}"` stays a number).
    #[schemars(with = "Option<serde_json::Value>")]
    pub json: Option<Spanned<toml::Value>>,
    /// Pause after the request: `"100ms"`, `{ uniform = ["50ms", "150ms"] }`,
    /// `{ exponential = "100ms" }` (the mean) or `{ normal = ["100ms", "20ms"] }` (mean,
    /// standard deviation), drawn per request.
    #[schemars(with = "Option<serde_json::Value>")]
    pub think: Option<Spanned<ThinkFile>>,
    /// Weight in a `weighted` flow (default 1).
    pub weight: Option<u32>,
    /// Variables taken from the response: `name = { json = "/id" }`, `{ header = "Location" }`
    /// or `{ regex = "id=(\\d+)" }`.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ExtractFile>")]
    pub extract: BTreeMap<String, Spanned<ExtractFile>>,
    /// Conditions on the response, counted pass/fail.
    pub checks: Option<ChecksFile>,
    /// Group this step's responses by these (besides `[target] group_by`): `"header:NAME"`,
    /// `"json:$.path"` or `"status"`.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub group_by: Vec<Spanned<String>>,
}

/// Headers in order: a plan file's as its TOML table gives them (by name; a key cannot repeat),
/// quick mode's in the order of its `-H` flags (a name may repeat).
#[derive(Debug, Clone, Default)]
pub struct HeaderList(pub Vec<(String, Spanned<String>)>);

impl<'a> IntoIterator for &'a HeaderList {
    type Item = &'a (String, Spanned<String>);
    type IntoIter = std::slice::Iter<'a, (String, Spanned<String>)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'de> Deserialize<'de> for HeaderList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = HeaderList;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of header names and values")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<HeaderList, A::Error> {
                let mut list = Vec::new();
                while let Some(entry) = map.next_entry::<String, Spanned<String>>()? {
                    list.push(entry);
                }
                Ok(HeaderList(list))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// Where an extracted variable comes from (exactly one).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtractFile {
    /// JSON pointer (`/id`) or path (`$.items[0].id`) into the JSON body.
    pub json: Option<String>,
    /// A response header.
    pub header: Option<String>,
    /// A regex on the body; the first capture group (or the match).
    pub regex: Option<String>,
}

/// One entry of `checks.status`: a code, or a class written `"2xx"`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    untagged,
    expecting = "expected a status code (200) or a class (\"2xx\")"
)]
pub enum StatusEntry {
    /// A status code, 100–599.
    Code(u16),
    /// A class (`"2xx"`: 200–299) or a code written as text (`"422"`).
    Text(String),
}

impl std::fmt::Display for StatusEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Code(c) => write!(f, "{c}"),
            Self::Text(t) => f.write_str(t),
        }
    }
}

/// `[scenario.step.checks]`: each key is one or more checks.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecksFile {
    /// The status is one of these: codes (`201`) and classes (`"2xx"`), as quick mode's
    /// `--expect-status 2xx,422`. Listed statuses are no error.
    #[schemars(with = "Option<Vec<StatusEntry>>")]
    pub status: Option<Spanned<Vec<StatusEntry>>>,
    /// The body contains this text (or each of these).
    pub body_contains: Option<OneOrMany>,
    /// JSON pointer/path → expected value.
    #[schemars(with = "Option<BTreeMap<String, serde_json::Value>>")]
    pub json: Option<BTreeMap<String, toml::Value>>,
    /// These headers are present.
    pub headers: Option<Vec<String>>,
    /// The latency is below this.
    #[schemars(with = "Option<String>")]
    pub latency_under: Option<DurationText>,
}

/// A string or a list of strings.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged, expecting = "expected a string or an array of strings")]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Several.
    Many(Vec<String>),
}

/// A threshold condition: `"p95 < 5ms"`, or a table with options.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(
    untagged,
    expecting = "expected conditions (\"p95 < 5ms\") or tables ({ condition = \"p95 < 5ms\", abort_on_fail = true })"
)]
pub enum ThresholdEntry {
    /// Just the condition.
    Condition(String),
    /// The condition with options.
    Full {
        /// The condition, e.g. `p95 < 5ms`.
        condition: String,
        /// Stop the run as soon as it fails.
        #[serde(default)]
        abort_on_fail: bool,
        /// With `abort_on_fail`: do not judge before this much of the run (e.g. `10s`).
        grace: Option<String>,
    },
}
