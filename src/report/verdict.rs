//! A run's verdict in words: its first line in every format. It is read from
//! [`crate::analysis::verdict::status`], which the exit code reads too, so the two never disagree.

use serde::Serialize;

use super::figures::{number, pct, share_pct};
use crate::analysis::verdict::{self, RunStatus};
use crate::record::model::{RunRecord, ThresholdResult};
use crate::units::{rate, seconds, thousands};

/// How a report's header is styled: `ok`, `warn` or `fail` (the CSS class of the HTML header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

/// How a run went, in one word for styling and one line for people.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// How to style it.
    pub level: Level,
    /// One line: what happened.
    pub headline: String,
}

impl Verdict {
    /// The level as a word: "OK", "WARNING" or "FAILED".
    pub fn mark(&self) -> &'static str {
        self.level.mark()
    }
}

/// "12,000 requests in 10.0s, 1,200.0 req/s, 0.00% errors", or "no request completed".
fn figures(r: &RunRecord) -> String {
    let s = &r.summary;
    let attempts = s.requests + s.not_sent;
    if attempts == 0 {
        return "no request completed".to_string();
    }
    let unsent = if s.not_sent > 0 {
        format!(
            " ({} more attempts never left the machine)",
            thousands(s.not_sent)
        )
    } else {
        String::new()
    };
    format!(
        "{} requests in {}, {} req/s, {} errors{unsent}",
        thousands(s.requests),
        seconds(s.duration_s),
        rate(s.rps),
        pct(share_pct(attempts, s.errors))
    )
}

/// The verdict of a run, from [`crate::analysis::verdict::status`] (which the exit code reads
/// too): its first line in every format.
pub fn verdict(r: &RunRecord) -> Verdict {
    let s = &r.summary;
    let attempts = s.requests + s.not_sent;
    let all_failed = attempts > 0 && s.errors == attempts;
    let figures = figures(r);
    let cut_short = "the figures cover only the part that ran";
    // A run interrupted or failing its thresholds may also have had no success at all: say so.
    let failures = if all_failed {
        ". Every request failed: the latency describes failures, not the service"
    } else {
        ""
    };
    let (level, headline) = match verdict::status(r) {
        RunStatus::Interrupted(signal) => (
            if s.requests == 0 || all_failed {
                Level::Fail
            } else {
                Level::Warn
            },
            format!(
                "Interrupted ({signal}) after {}: {cut_short}; {figures}{failures}",
                seconds(s.duration_s)
            ),
        ),
        RunStatus::Aborted(by) => {
            let at = by
                .iter()
                .find_map(|t| t.aborted_at_s)
                .map(|at| format!(" at t = {at:.2} s"))
                .unwrap_or_default();
            let which: Vec<String> = by.iter().map(|t| aborted_threshold(t)).collect();
            (
                Level::Fail,
                format!(
                    "Aborted{at}: threshold {} failed during the run (abort_on_fail); \
                     {cut_short}; {figures}{failures}",
                    which.join(", ")
                ),
            )
        }
        RunStatus::ThresholdsFailed { failed, of } => (
            Level::Fail,
            format!("{failed} of {of} thresholds failed; {figures}{failures}"),
        ),
        RunStatus::NoRequests => (
            Level::Fail,
            "No request completed: there are no figures".to_string(),
        ),
        RunStatus::AllFailed => (
            Level::Fail,
            format!(
                "Every request failed: {figures}; the latency describes failures, not the service"
            ),
        ),
        RunStatus::Warnings(n) => (
            Level::Warn,
            format!("Completed with {n} warning(s); {figures}"),
        ),
        RunStatus::Completed => (Level::Ok, format!("Completed: {figures}")),
    };
    Verdict { level, headline }
}

/// "`rps > 100` (93.5 then)": a threshold that ended the run, with the value it failed with.
fn aborted_threshold(t: &ThresholdResult) -> String {
    match t.observed_at_abort {
        Some(v) => format!("`{} {}` ({} then)", t.metric, t.condition, number(v)),
        None => format!("`{} {}`", t.metric, t.condition),
    }
}
