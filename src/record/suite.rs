//! What a suite did, target by target: `suite.json` in the suite's results folder, beside the
//! targets' own folders (whose `run.json` records hold the measurements).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{RunRecord, write_atomically};
use crate::error::Error;

/// Format version of `suite.json`.
pub const SUITE_SCHEMA_VERSION: u32 = 1;
/// The file name of the suite's own record.
pub const SUITE_FILE: &str = "suite.json";

/// The whole suite.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SuiteOutcome {
    /// Format version ([`SUITE_SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The suite's name.
    pub name: String,
    /// The suite file.
    pub source: PathBuf,
    /// The suite's plan: what the targets without a plan of their own ran (`None`: every target
    /// named its own; see [`TargetOutcome::plan`]).
    #[serde(default)]
    pub plan: Option<PathBuf>,
    /// Measured runs asked per target.
    pub repeats: u32,
    /// With `[find_max]`: the search each target got instead of plan runs ("open model, SLO
    /// p99<50ms"); the targets' `find_max` hold the results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find_max: Option<String>,
    /// The results folder.
    pub folder: PathBuf,
    /// When the suite started (RFC 3339, UTC).
    pub started_at: String,
    /// When it ended.
    pub ended_at: String,
    /// The signal that interrupted the suite, if one did.
    pub interrupted: Option<String>,
    /// What was known before the runs: operations missing on some targets, loads that differ
    /// (allowed by `allow_different_load`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// `repeats = "until-decided"`: what the sequential comparison of each target after the
    /// first with it decided, after how many rounds, and why the rounds stopped (a block of
    /// lines per target).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decided: Vec<String>,
    /// `repeats = "until-decided"`: the same, typed, one per target after the first (absent
    /// in files written before 2026-12-01).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<super::suite_decision::SuiteDecision>,
    /// `repeats = "until-decided"`: the practical threshold it decided at, %
    /// (`[until_decided] threshold`); the comparison in the suite's reports is made at it, as
    /// `volley ab`'s is. Absent otherwise, and then the comparison takes `volley compare`'s
    /// default (2 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_pct: Option<f64>,
    /// Per target, in the order they ran.
    pub targets: Vec<TargetOutcome>,
    /// The exit code of `volley suite` ([`SuiteOutcome::exit_code`]); absent in files of older
    /// versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<u8>,
}

impl SuiteOutcome {
    /// Whether every target ran to its end and met its thresholds.
    pub fn all_ran(&self) -> bool {
        self.targets.iter().all(|t| t.status == Status::Ran)
    }

    /// The exit code the suite's statuses give: 130 interrupted; 1 a target failed a step;
    /// 99 a target's thresholds failed or ended a run; 0 every target ran.
    pub fn exit_code(&self) -> u8 {
        let any = |s: Status| self.targets.iter().any(|t| t.status == s);
        if self.interrupted.is_some() {
            130
        } else if any(Status::Failed) {
            1
        } else if any(Status::Aborted) || any(Status::ThresholdsFailed) {
            99
        } else {
            0
        }
    }

    /// Each target that did not run to its end and meet its thresholds, in a line with its
    /// cause: "api: start failed: program `x` not found" (what `volley suite -q` still says).
    pub fn not_ran(&self) -> impl Iterator<Item = String> {
        self.targets
            .iter()
            .filter(|t| t.status != Status::Ran)
            .map(|t| format!("{}: {}", t.name, t.outcome_words()))
    }

    /// The targets that failed a step.
    pub fn failed(&self) -> impl Iterator<Item = &TargetOutcome> {
        self.targets.iter().filter(|t| t.status == Status::Failed)
    }

    /// Reads the suite record `file` (`suite.json`) with its targets' measured runs. Its
    /// `folder` becomes the file's own folder, where its targets' folders are, wherever the
    /// suite ran from.
    pub fn read(file: &Path) -> Result<Self, Error> {
        let fail = |why: String| Error::Record {
            path: file.to_path_buf(),
            why,
        };
        let text = std::fs::read_to_string(file).map_err(|cause| Error::File {
            action: crate::error::FileAction::Read,
            path: file.to_path_buf(),
            cause,
        })?;
        let mut outcome: Self = serde_json::from_str(&text)
            .map_err(|e| fail(format!("not a volley suite file: {e}")))?;
        if outcome.schema_version != SUITE_SCHEMA_VERSION {
            return Err(fail(format!(
                "suite format version {}; this volley reads version {SUITE_SCHEMA_VERSION}",
                outcome.schema_version
            )));
        }
        outcome.folder = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        for t in &mut outcome.targets {
            t.runs = t
                .record_files(&outcome.folder)
                .iter()
                .map(|f| super::read_record(f))
                .collect::<Result<_, _>>()?;
        }
        Ok(outcome)
    }

    /// Writes `suite.json` into the results folder.
    pub fn write(&self) -> Result<PathBuf, Error> {
        let path = self.folder.join(SUITE_FILE);
        let json = serde_json::to_vec_pretty(self).map_err(|e| Error::Render {
            what: SUITE_FILE.into(),
            why: e.to_string(),
        })?;
        write_atomically(&path, &json)?;
        Ok(path)
    }
}

/// The suite record `path` stands for, if it is one: a file named `suite.json`, or a folder
/// holding one.
pub fn suite_file(path: &Path) -> Option<PathBuf> {
    let file = if path.is_dir() {
        path.join(SUITE_FILE)
    } else {
        path.to_path_buf()
    };
    (file.file_name().is_some_and(|n| n == SUITE_FILE) && file.is_file()).then_some(file)
}

/// Where a target ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every step passed and every run was measured.
    Ran,
    /// Every run was measured, and thresholds failed in one or more of them; the figures are
    /// whole, so the target is compared and ranked, and the suite exits 99.
    ThresholdsFailed,
    /// An `abort_on_fail` threshold ended a run early ([`TargetOutcome::cause`] says which and
    /// when); the target took no more runs, its figures cover only the part that ran, so it is
    /// out of the ranking, and the suite exits 99.
    Aborted,
    /// A step failed ([`TargetOutcome::failed_step`], [`TargetOutcome::cause`]); the suite went on
    /// with the next target.
    Failed,
    /// A signal stopped the suite while this target was being tested; what was measured is kept.
    Interrupted,
    /// The suite was interrupted before this target's turn.
    NotRun,
}

/// The step a target failed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuiteStep {
    /// Its process could not be started, or exited before it was healthy.
    Start,
    /// No healthy answer within the time limit.
    Health,
    /// Its reset command failed.
    Reset,
    /// The smoke run failed its pass condition.
    Smoke,
    /// A measured run could not be carried out, every request failed, or the process died.
    Run,
}

impl SuiteStep {
    /// "start failed", "health check failed", …
    pub fn failed_words(self) -> &'static str {
        match self {
            Self::Start => "start failed",
            Self::Health => "health check failed",
            Self::Reset => "reset failed",
            Self::Smoke => "smoke failed",
            Self::Run => "run failed",
        }
    }
}

/// The smoke run's figures and verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmokeOutcome {
    /// Requests measured.
    pub requests: u64,
    /// Of those, failed.
    pub errors: u64,
    /// errors / requests (0 when there were none).
    pub error_rate: f64,
    /// The limit it was held to.
    pub max_error_rate: f64,
    /// Whether it passed.
    pub passed: bool,
    /// Its record, relative to the suite folder.
    pub record: PathBuf,
}

/// One target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetOutcome {
    /// Its name.
    pub name: String,
    /// Where its requests went.
    pub base_url: String,
    /// The plan file it ran (its own, or the suite's).
    #[serde(default)]
    pub plan: Option<PathBuf>,
    /// Where it ended up.
    pub status: Status,
    /// The step it failed at, when it failed.
    pub failed_step: Option<SuiteStep>,
    /// Why it failed or was interrupted, in words.
    pub cause: Option<String>,
    /// Its results folder, relative to the suite folder.
    pub folder: PathBuf,
    /// The PID of the process the suite started for it (with repeats taking turns a process is
    /// started for each turn: the last one).
    pub pid: Option<u32>,
    /// How that process ended ("stopped by SIGTERM (exit status 0)", …).
    pub stopped: Option<String>,
    /// How long the health check took to pass (the last turn's), seconds.
    pub ready_after_s: Option<f64>,
    /// The smoke run, when there was one.
    pub smoke: Option<SmokeOutcome>,
    /// The measured runs' records, relative to the suite folder, in run order (with
    /// `[find_max]`: the search's record, its best step).
    pub records: Vec<PathBuf>,
    /// With `[find_max]`: what the search found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find_max: Option<super::find_max::FindMax>,
    /// The measured runs (not in `suite.json`: they are in their own `run.json`).
    #[serde(skip)]
    pub runs: Vec<RunRecord>,
}

impl TargetOutcome {
    /// A target about to be tested, results in `folder` (relative to the suite folder).
    pub fn new(name: &str, base_url: &str, folder: &Path) -> Self {
        Self {
            name: name.to_string(),
            base_url: base_url.to_string(),
            plan: None,
            status: Status::Ran,
            failed_step: None,
            cause: None,
            folder: folder.to_path_buf(),
            pid: None,
            stopped: None,
            ready_after_s: None,
            smoke: None,
            records: Vec::new(),
            find_max: None,
            runs: Vec::new(),
        }
    }

    /// The files of its measured runs' records (`run.json`), its suite's folder being `folder`.
    pub fn record_files(&self, folder: &Path) -> Vec<PathBuf> {
        self.records
            .iter()
            .map(|rel| {
                let path = folder.join(rel);
                if path.is_dir() {
                    path.join(super::set::RECORD_FILE)
                } else {
                    path
                }
            })
            .collect()
    }

    /// Its result and why: "start failed: program `x` not found" ("… no cause recorded" when
    /// none was).
    pub fn outcome_words(&self) -> String {
        let cause = self.cause.as_deref().unwrap_or("no cause recorded");
        format!("{}: {cause}", self.result_words())
    }

    /// Its result in a few words: "ran", "smoke failed", "interrupted", "not run".
    pub fn result_words(&self) -> &'static str {
        match (self.status, self.failed_step) {
            (Status::Ran, _) => "ran",
            (Status::ThresholdsFailed, _) => "thresholds failed",
            (Status::Aborted, _) => "aborted",
            (Status::Failed, Some(step)) => step.failed_words(),
            (Status::Failed, None) => "failed",
            (Status::Interrupted, _) => "interrupted",
            (Status::NotRun, _) => "not run",
        }
    }
}
