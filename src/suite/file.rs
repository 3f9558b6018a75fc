//! The suite file as written (TOML), before validation. Unknown keys are errors; values checked
//! after parsing keep their location (`Spanned`) so every error can say file:line:col.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

pub use crate::plan::file::WatchFile;

/// A whole suite file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    /// Name of the suite (default: the file's stem); names the results folder.
    pub name: Option<Spanned<String>>,
    /// The test every target gets unless it names its own (`plan` in `[[target]]`): a plan file,
    /// relative to the suite file, run with `target.base_url` set to each target's `base_url`
    /// (with `[find_max]`: the request shape of the search, one scenario).
    pub plan: Option<Spanned<String>>,
    /// Compare targets whose plans send different loads (VUs, rates, durations, stages,
    /// phases); by default such a suite is refused, as its comparison would not be like for
    /// like.
    pub allow_different_load: Option<Spanned<bool>>,
    /// Instead of running the plan: search each target's maximum sustainable throughput, as
    /// `volley find-max` does, with the plan (one scenario) as the request shape.
    pub find_max: Option<Spanned<FindMaxFile>>,
    /// Measured runs per target (default 1), in the `order` given; with 2 or more each target's folder
    /// holds `repeat-1/` … `repeat-N/` as `--repeat` writes them. Not with `[find_max]`.
    /// `"until-decided"`: rounds (interleaved) until every target is decided against the first
    /// on the metrics of `[until_decided]`, as `volley ab` decides. Also spelt `repeat`.
    #[serde(alias = "repeat")]
    pub repeats: Option<Spanned<RepeatsFile>>,
    /// With `repeats = "until-decided"`: what to decide and the budget.
    pub until_decided: Option<Spanned<UntilDecidedFile>>,
    /// With repeats: `"interleaved"` (the default: one run of each target per round, A B C A B C
    /// …) or `"sequential"` (every run of a target before the next, A A A B B B …).
    pub order: Option<Spanned<String>>,
    /// The smoke gate: a short run first; a target that fails it is skipped.
    pub smoke: Option<SmokeFile>,
    /// The targets (`[[target]]`), run one after the other in this order; the first that runs
    /// is the comparison's baseline.
    #[serde(rename = "target", default)]
    pub targets: Vec<Spanned<SuiteTargetFile>>,
    /// Watched during every target's runs (`[[watch]]`, as in plans), besides the process each
    /// target's `command` starts, which is always watched.
    #[serde(default)]
    pub watch: Vec<Spanned<WatchFile>>,
    /// `[tags]`: added to every run's tags (replacing a plan's own of the same key), as a
    /// plan's `[tags]` (see there).
    #[serde(default)]
    pub tags: std::collections::BTreeMap<String, String>,
}

/// `repeats`: a count, or a rule (`"until-decided"`).
#[derive(Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a number of runs (5) or \"until-decided\""
)]
pub enum RepeatsFile {
    /// Runs per target.
    Count(i64),
    /// `"until-decided"`.
    Rule(String),
}

/// `[until_decided]`: `volley ab`'s flags.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UntilDecidedFile {
    /// The metrics to decide (default: throughput in the closed model, p50 in the open); a
    /// metric may name one part of the plan, as `volley ab --metric` does (`p50{step=pay}`).
    pub metrics: Option<Vec<String>>,
    /// The practical threshold, % (default 2): a number (`2`) or a percentage (`"2%"`).
    pub threshold: Option<Spanned<toml::Value>>,
    /// Most runs per target (default 20).
    pub max_runs: Option<i64>,
}

/// `[find_max]`: the flags of `volley find-max`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindMaxFile {
    /// The service-level objective, e.g. `"p99<50ms,errors<1%"`.
    pub slo: Spanned<String>,
    /// `open` (vary the arrival rate; the default) or `closed` (vary the VUs).
    pub model: Option<Spanned<String>>,
    /// Time the search may take per target (default 3m).
    pub budget: Option<Spanned<String>>,
    /// Measured length of each step (default 5s).
    pub step: Option<Spanned<String>>,
    /// Warm-up of each step, discarded (default 1s).
    pub warmup: Option<Spanned<String>>,
    /// First level (default 50 req/s, or 1 VU).
    pub start: Option<Spanned<f64>>,
    /// Highest level tried (default 1 000 000 req/s, or 10 000 VUs).
    pub max: Option<Spanned<f64>>,
    /// Open model: most requests in flight (default 1000).
    pub max_in_flight: Option<Spanned<u32>>,
    /// Bisect until the bracket is within this share of the level that held (default `"1%"`).
    pub resolution: Option<Spanned<String>>,
    /// Length of the validation run at the level found, in steps (default 3; 0: none).
    pub validation_steps: Option<Spanned<u32>>,
}

/// `[smoke]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmokeFile {
    /// A plan of its own for the smoke run (default: the suite's plan).
    pub plan: Option<Spanned<String>>,
    /// Multiplies the smoke plan's durations, e.g. 0.05 (default 1, or 0.1 for the suite's own
    /// plan).
    pub time_scale: Option<Spanned<f64>>,
    /// The smoke run fails when this share of requests or more failed: `"1%"` (the default) or a
    /// fraction like 0.01.
    pub max_error_rate: Option<Spanned<toml::Value>>,
}

/// `[[target]]`: one implementation under test.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteTargetFile {
    /// Unique name: letters, digits, `-` and `_` (it names the target's results folder).
    pub name: Spanned<String>,
    /// Where the plan's requests go, e.g. `http://127.0.0.1:8081`.
    pub base_url: Spanned<String>,
    /// This target's own plan, relative to the suite file (default: the suite's `plan`), e.g. a
    /// gRPC plan for a gRPC implementation; its steps' `operation` labels say which step of
    /// another target's plan each compares with.
    pub plan: Option<Spanned<String>>,
    /// Plan variables for this target (`{{ vars.NAME }}`), as `--set NAME=VALUE` would set them;
    /// `volley suite --set` overrides them.
    pub vars: Option<Spanned<BTreeMap<String, toml::Value>>>,
    /// The protocol this target is spoken to in (`http1`, `http2`, `http3`), over the plan's
    /// `[target] protocol`, as `--set target.protocol=NAME` would: one plan, several protocols.
    pub protocol: Option<Spanned<String>>,
    /// Start this process before the target's tests (argv; no shell unless you write one, e.g.
    /// `["sh", "-c", "…"]`). An argv\[0\] of exactly `"volley"` runs the volley executable that
    /// runs the suite. Without it, the target must already be running.
    pub command: Option<Spanned<Vec<String>>>,
    /// Working directory of `command` and `reset`, relative to the suite file (default: the
    /// suite file's folder).
    pub cwd: Option<Spanned<String>>,
    /// Environment variables added for `command` and `reset`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Polled with GET until it answers 2xx or 3xx (default: `base_url`).
    pub health_url: Option<Spanned<String>>,
    /// How long the health check may take (default 30s).
    pub health_timeout: Option<Spanned<String>>,
    /// Run before each of this target's runs (smoke included), e.g. to clear a database (argv).
    pub reset: Option<Spanned<Vec<String>>>,
    /// How long `reset` may take (default 60s).
    pub reset_timeout: Option<Spanned<String>>,
    /// After SIGTERM, how long the started process has to exit before SIGKILL (default 5s).
    pub stop_grace: Option<Spanned<String>>,
    /// Watched during this target's runs only (`[[target.watch]]`), e.g. its own `/metrics`.
    #[serde(default)]
    pub watch: Vec<Spanned<WatchFile>>,
}
