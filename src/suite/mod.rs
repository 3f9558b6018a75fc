//! Suites: one test run against several targets (implementations of one service), one after the
//! other, then one comparison — what reports 000 and 002 did by hand.
//!
//! For each target, in order: start its process (if it has a `command`) with stdout and stderr
//! kept in `<target>/server.log`; poll its health URL; run `reset` (if any) before each run; the
//! smoke run (if `[smoke]`) — a target that fails it is skipped with the reason; the measured
//! run(s) — or, with `[find_max]`, a search for its maximum sustainable throughput; stop the
//! process (SIGTERM to its process group, SIGKILL after the grace period). With repeats the
//! targets take turns, one run each per round ([`order`]).
//! Failures of one target (start, health check, reset, smoke, run) are recorded with their cause
//! and the suite goes on with the next. Processes the suite started are stopped on success, on a
//! failed step and on SIGINT/SIGTERM (which also stop the current run cleanly; what was measured
//! is kept and reported).
//!
//! - `file`: the suite file as written; [`read()`]: validated into a [`Suite`], every error
//!   with file:line:col, every target's plan read before anything starts.
//! - [`load`]: like for like across targets with plans of their own: the same load, and which
//!   operations (steps joined on their `operation` label) some targets lack.
//! - [`process`]: starting, watching and stopping processes, and one-shot commands (`reset`).
//! - [`health`]: the health check.
//! - [`signals`]: SIGINT/SIGTERM for the whole suite.
//! - [`run()`]: the orchestration; `outcome`: what happened (`suite.json`); the report is
//!   [`crate::report::suite`].

pub mod ab;
mod decide;
pub mod file;
mod halt;
pub mod health;
pub mod load;
pub mod order;

pub mod process;
mod read;
mod run;
pub mod signals;
mod stamp;
pub mod until_decided;
mod words;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::plan::Plan;

pub use read::{SuiteReadOptions, read, read_str};
pub use run::{Progress, SuiteRunOptions, run, run_with};

/// The argv\[0\] that stands for the volley executable running the suite.
pub const VOLLEY_ARGV0: &str = "volley";
/// Set in the environment of every command a suite starts: the path of the volley executable
/// running the suite (for commands that name it elsewhere than in argv\[0\], e.g. in `sh -c`).
pub const VOLLEY_BIN_ENV: &str = "VOLLEY_BIN";

/// A validated suite.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Its name (results folder, report title).
    pub name: String,
    /// The suite file.
    pub source: PathBuf,
    /// The suite's plan file: what targets without a plan of their own run.
    pub plan_path: Option<PathBuf>,
    /// Measured runs per target (with `until_decided`: at most).
    pub repeats: u32,
    /// `repeats = "until-decided"`: rounds stop once every target is decided against the first.
    pub until_decided: Option<crate::analysis::sequential::Design>,
    /// How the targets' runs are ordered (with repeats).
    pub order: order::Order,
    /// When set, each target gets a find-max search (with the plan as the request shape)
    /// instead of the plan's runs.
    pub find_max: Option<crate::findmax::run::Settings>,
    /// The smoke gate.
    pub smoke: Option<Smoke>,
    /// The targets, in the order they run (with `--only`, those named).
    pub targets: Vec<SuiteTarget>,
    /// What the reader should know before the results: operations missing on some targets,
    /// loads that differ (with `allow_different_load`).
    pub notes: Vec<String>,
}

/// The smoke gate's pass condition (its plan is per target: [`SuiteTarget::smoke_plan`]).
#[derive(Debug, Clone)]
pub struct Smoke {
    /// The smoke gate's own plan file, run by the targets that run the suite's plan; `None`:
    /// each target's smoke run is its own plan, shortened.
    pub plan_path: Option<PathBuf>,
    /// `time_scale` as written (before the suite's `--time-scale`), when given.
    pub time_scale: Option<f64>,
    /// The smoke run fails at this error rate (0–1) or above.
    pub max_error_rate: f64,
}

/// One implementation under test.
#[derive(Debug, Clone)]
pub struct SuiteTarget {
    /// Unique name, safe as a folder name.
    pub name: String,
    /// Where requests go.
    pub base_url: String,
    /// The process to start first, if any.
    pub command: Option<CommandLine>,
    /// The health check.
    pub health: health::HealthCheck,
    /// Run before each run.
    pub reset: Option<CommandLine>,
    /// How long `reset` may take.
    pub reset_timeout: Duration,
    /// SIGTERM → SIGKILL grace period.
    pub stop_grace: Duration,
    /// The plan file it runs (its own, or the suite's).
    pub plan_path: PathBuf,
    /// That plan with `target.base_url` set to [`base_url`](Self::base_url), and the target's
    /// `vars` and the suite's `--set`.
    pub plan: Plan,
    /// The smoke plan, likewise, when the suite has a smoke gate.
    pub smoke_plan: Option<Plan>,
}

impl Suite {
    /// What the suite is about to do, in one line: `volley suite NAME: 2 target(s), plan
    /// p.toml, 3 run(s) each, after a smoke run (at most 1% errors)`.
    pub fn banner(&self) -> String {
        let test = match &self.find_max {
            Some(f) => format!(
                "a find-max search each ({} model, SLO {})",
                f.model, f.slo_text
            ),
            None if self.until_decided.is_some() => {
                format!("runs until decided, at most {} each", self.repeats)
            }
            None => format!("{} run(s) each", self.repeats),
        };
        let mut plans: Vec<String> = Vec::new();
        for t in &self.targets {
            let p = t.plan_path.display().to_string();
            if !plans.contains(&p) {
                plans.push(p);
            }
        }
        let smoke = self.smoke.as_ref().map(|sm| {
            format!(
                ", after a smoke run (at most {}% errors)",
                sm.max_error_rate * 100.0
            )
        });
        format!(
            "volley suite {}: {} target(s), plan {}, {test}{}",
            self.name,
            self.targets.len(),
            plans.join(" and "),
            smoke.unwrap_or_default()
        )
    }
}

/// A command line to run: argv (no shell), working directory, extra environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// Program and arguments, as written (argv\[0\] `"volley"` is resolved when it is run).
    pub argv: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Added environment variables.
    pub env: BTreeMap<String, String>,
}

impl CommandLine {
    /// The command line for people: arguments joined by spaces, quoted where needed.
    pub fn display(&self) -> String {
        self.argv
            .iter()
            .map(|a| {
                if !a.is_empty()
                    && a.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
                {
                    a.clone()
                } else {
                    format!("'{}'", a.replace('\'', r"'\''"))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `plan`, with the process the suite started for the target (`pid`, and its descendants)
/// watched: the suite's efficiency figures read it.
fn watched(plan: &Plan, pid: Option<u32>) -> Cow<'_, Plan> {
    match pid {
        None => Cow::Borrowed(plan),
        Some(pid) => {
            let mut plan = plan.clone();
            plan.watch.push(crate::watch::spec::Spec::suite_target(pid));
            Cow::Owned(plan)
        }
    }
}
