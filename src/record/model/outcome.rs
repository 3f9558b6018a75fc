//! How a run ended (its status, first line and exit code, as the record keeps them) and the
//! one definition of an error rate (docs/measurement.md, "Error rate").

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::record::error_kind::ErrorKind;

/// How a run ended, most important first: the first that applies is the run's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    /// A signal or a stop request ended the run early.
    Interrupted,
    /// A distributed test lost one or more generators: their share of the load was not
    /// delivered, and no figure covers it (`merged.missing`).
    Incomplete,
    /// `volley find-max` found no maximum: no step met the SLO, or the generator, not the
    /// target, limited the search.
    NoMaximum,
    /// Thresholds with `abort_on_fail` failed during the run and ended it early.
    Aborted,
    /// Thresholds failed at the end of a run that ran its course.
    ThresholdsFailed,
    /// No connection to the target worked: every attempt failed to connect (refused,
    /// unreachable, timed out, TLS) or met a broken protocol, and no response came back.
    NoConnection,
    /// No attempt was made or finished: there are no figures.
    NoRequests,
    /// Every request failed.
    AllFailed,
    /// The run completed, with warnings about the run itself.
    Warnings,
    /// The run completed.
    Completed,
}

/// How a report's first line is styled, and the word that leads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Everything went as asked.
    Ok,
    /// Done, with something to look at.
    Warn,
    /// Failed.
    Fail,
}

impl Level {
    /// The level as a word: "OK", "WARNING" or "FAILED".
    pub fn mark(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::Warn => "WARNING",
            Self::Fail => "FAILED",
        }
    }
}

/// The verdict a record carries: its status, the first line of its reports and the exit code
/// of the command that wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    /// How the run ended.
    pub status: OutcomeStatus,
    /// How its first line is styled (`ok`, `warn`, `fail`).
    pub level: Level,
    /// The first line of the terminal summary, `report.md` and `report.html`.
    pub headline: String,
    /// The exit code of `volley` for this record (0, 1, 99, 130; see `volley --help`).
    pub exit_code: u8,
}

/// Of failures by kind, those the generator itself could not make (no port, no file
/// descriptor, a request it could not build).
pub fn generator_limited(errors_by_kind: &BTreeMap<ErrorKind, u64>) -> u64 {
    errors_by_kind
        .iter()
        .filter(|(k, _)| k.is_generator_limit())
        .map(|(_, n)| n)
        .sum()
}

/// The error rate of a place with `attempts`, `errors` and these failures by kind
/// (docs/measurement.md, "Error rate"): failed attempts over attempts, both without those the
/// generator itself could not make; `None` when no attempt is left.
pub fn error_rate(
    attempts: u64,
    errors: u64,
    errors_by_kind: &BTreeMap<ErrorKind, u64>,
) -> Option<f64> {
    let (charged, failed) = error_counts(attempts, errors, errors_by_kind);
    error_share(charged, failed)
}

/// The counts an error rate is made of: (attempts charged, failed of them), both without the
/// attempts the generator itself could not make.
pub fn error_counts(
    attempts: u64,
    errors: u64,
    errors_by_kind: &BTreeMap<ErrorKind, u64>,
) -> (u64, u64) {
    let limited = generator_limited(errors_by_kind);
    (
        attempts.saturating_sub(limited),
        errors.saturating_sub(limited),
    )
}

/// `failed` over `charged`, 0–1; `None` when `charged` is 0.
pub fn error_share(charged: u64, failed: u64) -> Option<f64> {
    (charged > 0).then(|| failed as f64 / charged as f64)
}
