//! Plans: what the user asked for, validated and typed before any load is sent.
//!
//! A [`Plan`] is the engine's whole input: the target, one or more scenarios (each a load profile
//! and steps), thresholds. One reader ([`read`]) builds it from the plan file's model
//! ([`file::PlanFile`]): plan files are parsed into that model, and quick mode's flags
//! ([`quick::RunInput`]) desugar into it (one scenario, one step). Every user error that can be
//! known without the network is found while reading, with the file, line and column where there
//! is a file, into a [`read::Draft`]; [`read::Draft::prepare`] — run preparation — is the one
//! place the target is contacted before the run (gRPC schemas by server reflection).

pub mod check;
pub mod connect;
pub mod cookies;
pub mod data;
pub mod file;
mod file_stream;
pub mod flags;
pub mod group_by;
pub mod header;
pub mod import;
pub mod peer_flags;
pub mod presets;
pub mod profile;
pub mod quick;
pub mod read;
pub mod render;
pub mod segment;
pub mod set_key;
pub mod steady;
pub mod stream;
pub mod tags;
pub mod template;
pub mod think;
pub mod threshold;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::proto::client::PreparedRequest;
use crate::proto::grpc::GrpcMethod;
use crate::proto::message::Request;
use crate::record::model::{GroupKind, Part};
use crate::redact::Secrets;
pub use check::{Check, Extract};
pub use connect::{Connect, ConnectOptions};
pub use profile::{Iterations, Profile};
pub use quick::RunInput;
pub use template::{JsonTemplate, Templates, Text};
pub use threshold::Threshold;

/// Errors whose messages still travel as text: into a location's `why`, a `--flag`'s
/// [`Error::Invalid`](crate::Error::Invalid), or a caller that returns messages.
macro_rules! message_into_string {
    ($($error:ty),* $(,)?) => {$(
        impl From<$error> for String {
            fn from(e: $error) -> String {
                e.to_string()
            }
        }
    )*};
}

message_into_string!(
    check::JsonPathError,
    group_by::GroupByError,
    connect::ConnectOptionsError,
    data::DataError,
    read::DurationError,
    read::ResolveError,
    read::BaseUrlError,
    render::RenderError,
    threshold::ThresholdError,
);

/// Most VUs one scenario may have (closed-model connections, open-model requests in flight):
/// each is a task made when the run starts, so an absurd count would exhaust the memory before
/// the first request.
pub const MAX_VUS: u32 = 1_000_000;

/// Highest arrival rate a plan or flag may ask for, per second: far beyond what one generator
/// can send, and low enough that the schedule's arithmetic stays exact.
pub const MAX_RATE_PER_SEC: f64 = 100_000_000.0;

/// Lowest arrival rate `--rate` may ask for, per second: one a day. Less is a mistake (`1e-300`
/// once ran a test that would send its first request in 10^292 years).
pub const MIN_RATE_PER_SEC: f64 = 1.0 / 86_400.0;

/// A validated test: everything the engine needs for one run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Name of the run (results folder, report titles).
    pub name: String,
    /// The plan file, when there is one.
    pub source: Option<PathBuf>,
    /// Where requests go.
    pub target: Target,
    /// The scenarios, run at the same time (each from its `start_after`).
    pub scenarios: Vec<Scenario>,
    /// Pass/fail conditions over the results.
    pub thresholds: Vec<Threshold>,
    /// Load sent before measuring; its results are discarded.
    pub warmup: Duration,
    /// Worker threads, each with its own runtime.
    pub threads: usize,
    /// Templates compiled once, with the data files they read.
    pub templates: Arc<Templates>,
    /// The result groups (scenario, step, phase), indexed by the ids held by scenarios and steps.
    pub groups: Vec<GroupDef>,
    /// Quick mode: the single request, for the record's configuration.
    pub quick: Option<QuickRequest>,
    /// Which headers (and `--set` variables) are secret: redacted in everything written out.
    pub secrets: Secrets,
    /// The share of a distributed test this plan is (`--segment i/N`); `None`: the whole.
    pub share: Option<segment::PlanShare>,
    /// What to watch on the target's side during the run (`[[watch]]`, `--watch`).
    pub watch: Vec<crate::watch::spec::Spec>,
    /// `[distributed]`: how a coordinated test treats lost generators.
    pub distributed: segment::Distributed,
    /// The run's tags (`[tags]`, `--tag`): in the record, the reports and every exported
    /// series' labels.
    pub tags: tags::Tags,
    /// The latency buckets' upper bounds (`--buckets`, `[report] buckets`), ascending; empty:
    /// volley's 1-2-5 buckets.
    pub latency_buckets: Vec<Duration>,
    /// Run until each goal's figure is this precise (`[precision]`, `--precision`), the plan's
    /// length being the most it runs; empty: run the whole length.
    pub precision: Vec<crate::record::model::PrecisionGoal>,
}

/// The request of a quick-mode run, as the user gave it.
#[derive(Debug, Clone)]
pub struct QuickRequest {
    /// The URL as written.
    pub url: String,
    /// Method, upper case.
    pub method: String,
    /// Headers in order.
    pub headers: Vec<(String, String)>,
    /// Body size, bytes.
    pub body_bytes: u64,
}

/// The server under test.
#[derive(Debug, Clone)]
pub struct Target {
    /// The base URL as written.
    pub base_url: String,
    /// Resolved address.
    pub addr: SocketAddr,
    /// `Host` header value.
    pub host_header: String,
    /// Path prefix of the base URL (no trailing `/`), prepended to step paths.
    pub base_path: String,
    /// Headers sent with every request (before the step's own).
    pub headers: Vec<(String, String)>,
    /// Per-request timeout, connect included.
    pub timeout: Duration,
    /// Protocol, TLS, keep-alive, streams, source addresses, and the clients built from them.
    pub connect: Connect,
    /// Response size limits (head, body).
    pub limits: crate::proto::conn::Limits,
    /// What responses are grouped by (`--group-by`, `group_by` under `[target]` or on steps):
    /// one table each in the record, in this order; empty when nothing is grouped.
    pub group_by: Vec<group_by::GroupBy>,
}

/// One scenario: a load profile driving a flow of steps.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Unique name.
    pub name: String,
    /// Delay after the run's start before this scenario begins.
    pub start_after: Duration,
    /// How iterations are started.
    pub profile: Profile,
    /// What one iteration does.
    pub flow: Flow,
    /// The requests.
    pub steps: Vec<Step>,
    /// Ladder phases (empty for other profiles), in time order, relative to the scenario start.
    pub phases: Vec<Phase>,
    /// The scenario's result group (none in quick mode, where it would equal the totals).
    pub group: Option<usize>,
    /// Closed model: each VU starts an iteration no sooner than this after its last one
    /// started (Gatling's `pace`); `None`: at once.
    pub pace: Option<Duration>,
    /// Whether its VUs keep the cookies the target sets, and for how long.
    pub cookies: cookies::CookieJar,
}

impl Plan {
    /// The latency buckets' upper bounds in ms, as the record writes them.
    pub fn latency_buckets_ms(&self) -> Vec<f64> {
        let ms = |d: &Duration| d.as_secs_f64() * 1000.0;
        self.latency_buckets.iter().map(ms).collect()
    }

    /// The run's load model: every scenario closed, every one open, or some of each.
    pub fn model(&self) -> crate::record::model::Model {
        use crate::record::model::Model;
        match (
            self.scenarios.iter().any(Scenario::is_open),
            self.scenarios.iter().all(Scenario::is_open),
        ) {
            (true, true) => Model::Open,
            (true, false) => Model::Mixed,
            (false, _) => Model::Closed,
        }
    }

    /// Whether some scenario runs the open model (so the run reports service latency and send
    /// lag).
    pub fn has_open_scenario(&self) -> bool {
        self.model().has_open()
    }

    /// Whether some step is a streaming step.
    pub fn has_streams(&self) -> bool {
        self.scenarios
            .iter()
            .any(|sc| sc.steps.iter().any(|st| st.stream.is_some()))
    }

    /// Whether the plan mixes the load models: an open-model scenario beside a closed one.
    pub fn mixes_models(&self) -> bool {
        self.model() == crate::record::model::Model::Mixed
    }

    /// Sets [`Plan::threads`] to the worker threads a run uses out of `asked`: the most that any
    /// scenario takes part with ([`Profile::workers`]), since every scenario's share starts at
    /// worker 0. A thread that no scenario needs is not started, so that none reports the CPU use
    /// of a thread that had nothing to do.
    pub fn fit_threads(&mut self, asked: usize) {
        self.threads = self
            .scenarios
            .iter()
            .map(|s| s.profile.workers(asked))
            .max()
            .unwrap_or(1);
    }
}

impl Scenario {
    /// How long the scenario sends load at most (from its start); `None` = until its iterations
    /// are done.
    pub fn duration(&self) -> Option<Duration> {
        self.profile.duration()
    }

    /// Most VUs the scenario can have at once.
    pub fn max_vus(&self) -> u32 {
        self.profile.max_vus()
    }

    /// Whether this is an open-model (arrival-rate) scenario.
    pub fn is_open(&self) -> bool {
        self.profile.is_open()
    }

    /// Whether the scenario is a ladder (its phases are a ladder's, not a ramp's stages).
    pub fn is_ladder(&self) -> bool {
        self.phases.iter().any(|p| p.origin == PhaseOrigin::Ladder)
    }
}

/// A ladder phase: a load held for a while, with its own results.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// Display name, e.g. "phase 3: 100 VUs".
    pub name: String,
    /// Start, relative to the scenario's start.
    pub start: Duration,
    /// End, relative to the scenario's start.
    pub end: Duration,
    /// VUs held (VU phases).
    pub vus: Option<u32>,
    /// Rate held, per second (rate phases).
    pub rate: Option<f64>,
    /// The phase's result group.
    pub group: usize,
    /// A ladder's phase, or a stage of a ramping profile.
    pub origin: PhaseOrigin,
}

/// Where a [`Phase`] comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PhaseOrigin {
    /// A phase of a ladder: it holds one level.
    Ladder,
    /// A stage of `ramping-vus` or `ramping-arrival-rate`: it holds its target, or ramps to it
    /// from `ramp_from` (the level at its start; its figures then mix levels).
    Stage {
        /// The level at the stage's start when it ramps (VUs or per second); `None`: it holds.
        ramp_from: Option<f64>,
    },
}

/// What one iteration does.
#[derive(Debug, Clone, PartialEq)]
pub enum Flow {
    /// Every step, in order.
    Sequential,
    /// One step, picked by weight; holds the cumulative weights.
    Weighted(Vec<u64>),
}

/// One request of a scenario.
#[derive(Debug, Clone)]
pub struct Step {
    /// Name, unique within the scenario.
    pub name: String,
    /// The request, static or templated.
    pub request: StepRequest,
    /// A gRPC call: the method (the request's body is its JSON message). `None`: HTTP.
    pub grpc: Option<Arc<GrpcMethod>>,
    /// Pause after the request, before the next step (drawn per request).
    pub think: think::Think,
    /// Values taken from the response into variables.
    pub extract: Vec<Extract>,
    /// Conditions on the response, counted pass/fail.
    pub checks: Vec<Check>,
    /// Whether the response body and head must be kept for checks or extraction.
    pub capture: bool,
    /// Statuses that count as success even if ≥ 400 (from `checks.status`; k6's expected
    /// statuses). Empty: 4xx/5xx are errors.
    pub expected_status: Vec<u16>,
    /// The step's result group (none in quick mode).
    pub group: Option<usize>,
    /// Index of the step's first check in the run-wide check list.
    pub first_check: usize,
    /// The tables of [`Target::group_by`] its responses are recorded in (indices).
    pub group_by: Vec<usize>,
    /// The URL its requests match the VU's cookies against; `None` when the jar is not used
    /// (its scenario has none, a gRPC call, or a step that sends its own `Cookie` header).
    pub cookies: Option<cookies::CookieUrl>,
    /// A streaming step: its response read as a stream of messages (`sse = { … }`).
    pub stream: Option<stream::StreamStep>,
}

/// A step's request.
#[derive(Debug, Clone)]
pub enum StepRequest {
    /// No templates: prepared once in the wire form of the step's client.
    Static(Box<StaticRequest>),
    /// Rendered per request.
    Dynamic(DynamicRequest),
}

/// A request without templates.
#[derive(Debug, Clone)]
pub struct StaticRequest {
    /// What it is (for display).
    pub request: Request,
    /// Its wire form, sent as is.
    pub prepared: PreparedRequest,
}

/// A templated request.
#[derive(Debug, Clone)]
pub struct DynamicRequest {
    /// Method, upper case.
    pub method: String,
    /// Path and query (after the base path), or a full URL's path.
    pub path: Text,
    /// Headers (the target's defaults are included).
    pub headers: Vec<(String, Text)>,
    /// Body (gRPC: the JSON message, encoded per request).
    pub body: Body,
}

/// A request body.
#[derive(Debug, Clone)]
pub enum Body {
    /// No body.
    Empty,
    /// Raw text, possibly templated.
    Text(Text),
    /// JSON with templated string leaves.
    Json(JsonTemplate),
    /// Bytes sent as they are (a body file that is not UTF-8 text, or given by a flag).
    Bytes(bytes::Bytes),
}

/// One result group of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupDef {
    /// Scenario, step or phase.
    pub kind: GroupKind,
    /// Its name.
    pub name: String,
    /// The scenario it belongs to (steps, phases).
    pub scenario: Option<String>,
    /// Steps: the operation label when the plan gives one other than the step's name.
    pub operation: Option<String>,
}

impl GroupDef {
    /// Its name in tables and errors: "scenario / step" for a step, else its name.
    pub fn path(&self) -> String {
        self.kind.path(self.scenario.as_deref(), &self.name)
    }
}

impl Plan {
    /// The indices in [`Plan::groups`] of the groups `part` names: by name, operation label or
    /// path; a phase also by its 1-based number.
    fn groups_named(&self, part: &Part) -> Vec<usize> {
        let mut phase = 0;
        (0..self.groups.len())
            .filter(|&i| {
                let g = &self.groups[i];
                let label = g.operation.as_deref().unwrap_or(&g.name);
                part.names(g.kind, [&g.name, label, &g.path()], &mut phase)
            })
            .collect()
    }

    /// The index in [`Plan::groups`] of the first group `part` names ([`Plan::part_problem`]
    /// refuses a part that names several before a run).
    pub fn group_of(&self, part: &Part) -> Option<usize> {
        self.groups_named(part).first().copied()
    }

    /// Refuses the first of `parts` the plan has no group for, or names several groups of
    /// (`what`: the flag or key that named it), saying which it has.
    pub fn has_parts<'a>(
        &self,
        what: &str,
        mut parts: impl Iterator<Item = &'a Part>,
    ) -> Result<(), crate::error::Error> {
        match parts.find_map(|p| self.part_problem(p)) {
            Some(why) => Err(crate::error::Error::Invalid {
                what: what.into(),
                why,
            }),
            None => Ok(()),
        }
    }

    /// Refuses `--repeat-until` goals this plan's repeats cannot meet: too few runs
    /// ([`crate::analysis::repeat_precision::check`]), or a part it has no group for.
    pub fn repeat_until_fits(
        &self,
        repeat: u32,
        goals: &[crate::record::model::PrecisionGoal],
    ) -> Result<(), crate::error::Error> {
        crate::analysis::repeat_precision::check(repeat, goals)?;
        read::once_each(goals, "--repeat-until")?;
        if !goals.is_empty() && self.share.is_some() {
            return Err(crate::error::Error::Invalid {
                what: "--repeat-until".into(),
                why: "a test shared among generators (--segment) cannot repeat until precise: \
                      each share would stop after its own number of runs, on half the test's \
                      figures, and leave repeats with no partner to merge; give --repeat N alone"
                    .into(),
            });
        }
        self.has_parts(
            "--repeat-until",
            goals.iter().filter_map(|g| g.part.as_ref()),
        )
    }

    /// What is wrong with naming `part` in this plan: no group of it (saying which there are,
    /// or that a one-URL run has none), or several (a step's name in two scenarios), none when
    /// it names exactly one.
    pub fn part_problem(&self, part: &Part) -> Option<String> {
        let paths: Vec<String> = self.groups.iter().map(GroupDef::path).collect();
        if paths.is_empty() {
            return Some(one_url_has_no(part));
        }
        let named: Vec<&str> = self
            .groups_named(part)
            .into_iter()
            .map(|i| paths[i].as_str())
            .collect();
        match named.as_slice() {
            [_] => None,
            [] => Some(format!(
                "the plan has no {part}; it has {}",
                paths.join(", ")
            )),
            several => Some(format!(
                "{part} is {}: name one, e.g. {}",
                several.join(" and "),
                part.renamed(several[0]).filter()
            )),
        }
    }
}

/// Why `part` names nothing in a run of one URL (quick mode): it has no scenarios or steps.
pub fn one_url_has_no(part: &Part) -> String {
    format!(
        "{part}: a run of one URL has no scenarios or steps of its own; a part needs a plan of \
         several"
    )
}

/// Checks of the whole plan, in the order of their ids (`Step::first_check`…).
pub fn check_list(plan: &Plan) -> Vec<(&str, &str, &Check)> {
    plan.scenarios
        .iter()
        .flat_map(|sc| {
            sc.steps.iter().flat_map(move |st| {
                st.checks
                    .iter()
                    .map(move |c| (sc.name.as_str(), st.name.as_str(), c))
            })
        })
        .collect()
}
