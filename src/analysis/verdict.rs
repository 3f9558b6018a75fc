//! How a run ended, decided in one place from its record: the status, the first line of the
//! terminal summary, of `report.md` and of `report.html`, and the exit code all come from
//! [`status`], so they can never disagree (they once did: a run cut short by an `abort_on_fail`
//! threshold exited 0 under a table that said "pass"). [`settle`] writes them into the record
//! (`outcome`), where `volley verify` checks them against the figures.

use crate::record::find_max::FindMax;
use crate::record::model::{
    Level, Outcome, OutcomeStatus, RunRecord, ThresholdResult, generator_limited,
};
use crate::units::{number, pct, rate, seconds, share_pct, thousands};

/// Exit code: the run finished and not every request failed.
pub const EXIT_OK: u8 = 0;
/// Exit code: every request failed, none reached the target, a distributed test lost a
/// generator, or the run could not be carried out.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: a threshold failed or ended the run (as k6).
pub const EXIT_THRESHOLDS: u8 = 99;
/// Exit code: interrupted by a signal (the record is still written).
pub const EXIT_INTERRUPTED: u8 = 130;

/// How a run ended, most important first: the first that applies is the run's status.
#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus<'a> {
    /// A signal or a stop request ended the run early (e.g. "SIGINT").
    Interrupted(&'a str),
    /// A distributed test lost generators: the shares (0-based) whose load is in no figure.
    Incomplete(&'a [u32]),
    /// `volley find-max` found no maximum: no step met the SLO, or the generator, not the
    /// target, limited the search (the maximum is then only a lower bound).
    NoMaximum(&'a FindMax),
    /// Thresholds with `abort_on_fail` failed during the run and ended it early.
    Aborted(Vec<&'a ThresholdResult>),
    /// Thresholds failed (at the end of a run that ran its course).
    ThresholdsFailed {
        /// How many failed.
        failed: usize,
        /// Of how many.
        of: usize,
    },
    /// No connection to the target worked: every attempt failed to connect or met a broken
    /// protocol, and no response came back.
    NoConnection,
    /// No request completed: there are no figures.
    NoRequests,
    /// Every request failed.
    AllFailed,
    /// The run completed, with warnings about the run itself.
    Warnings(usize),
    /// The run completed.
    Completed,
}

impl RunStatus<'_> {
    /// Whether the figures are of a run that failed: thresholds failed or ended the run, a
    /// generator was lost, or no request succeeded.
    pub fn is_failure(&self) -> bool {
        !matches!(
            self,
            Self::Interrupted(_) | Self::Warnings(_) | Self::Completed
        )
    }

    /// The status as the record names it.
    pub fn code(&self) -> OutcomeStatus {
        match self {
            Self::Interrupted(_) => OutcomeStatus::Interrupted,
            Self::Incomplete(_) => OutcomeStatus::Incomplete,
            Self::NoMaximum(_) => OutcomeStatus::NoMaximum,
            Self::Aborted(_) => OutcomeStatus::Aborted,
            Self::ThresholdsFailed { .. } => OutcomeStatus::ThresholdsFailed,
            Self::NoConnection => OutcomeStatus::NoConnection,
            Self::NoRequests => OutcomeStatus::NoRequests,
            Self::AllFailed => OutcomeStatus::AllFailed,
            Self::Warnings(_) => OutcomeStatus::Warnings,
            Self::Completed => OutcomeStatus::Completed,
        }
    }

    /// The exit code of `volley` for a run that ended so.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Interrupted(_) => EXIT_INTERRUPTED,
            Self::Aborted(_) | Self::ThresholdsFailed { .. } => EXIT_THRESHOLDS,
            Self::Incomplete(_)
            | Self::NoMaximum(_)
            | Self::NoConnection
            | Self::NoRequests
            | Self::AllFailed => EXIT_FAILED,
            Self::Warnings(_) | Self::Completed => EXIT_OK,
        }
    }
}

/// Whether no connection to the target worked: attempts were made, every one failed, each
/// for a failure of the connection (see `ErrorKind::is_connection_failure`), and no response
/// came back.
pub fn no_connection(s: &crate::record::model::Summary) -> bool {
    let attempts = s.requests + s.not_sent;
    attempts > 0
        && s.errors == attempts
        && s.status.values().sum::<u64>() == 0
        && s.errors_by_kind.keys().all(|k| k.is_connection_failure())
}

/// The status of the run `r` records.
pub fn status(r: &RunRecord) -> RunStatus<'_> {
    let s = &r.summary;
    let aborted: Vec<&ThresholdResult> = r.thresholds.iter().filter(|t| t.aborted).collect();
    let failed = r.thresholds.iter().filter(|t| t.failed()).count();
    let missing = r.merged.as_ref().map_or(&[][..], |m| m.missing.as_slice());
    if let Some(signal) = &r.interrupted {
        RunStatus::Interrupted(signal)
    } else if !missing.is_empty() {
        RunStatus::Incomplete(missing)
    } else if let Some(f) = r
        .find_max
        .as_ref()
        .filter(|f| f.generator_limited || f.max_sustainable_rps.is_none())
    {
        RunStatus::NoMaximum(f)
    } else if !aborted.is_empty() {
        RunStatus::Aborted(aborted)
    } else if failed > 0 {
        RunStatus::ThresholdsFailed {
            failed,
            of: r.thresholds.len(),
        }
    } else if no_connection(s) {
        RunStatus::NoConnection
    } else if s.requests + s.not_sent == 0 {
        RunStatus::NoRequests
    } else if s.errors == s.requests + s.not_sent {
        RunStatus::AllFailed
    } else if !r.warnings.is_empty() {
        RunStatus::Warnings(r.warnings.len())
    } else {
        RunStatus::Completed
    }
}

/// How a run went, in one word for styling and one line for people.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
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
    let limited = generator_limited(&s.errors_by_kind);
    let unsent = match (s.not_sent - limited, limited) {
        (0, 0) => String::new(),
        (0, n) => format!(" ({} more attempts never left the machine)", thousands(n)),
        (n, 0) => format!(" ({} more attempts found no connection)", thousands(n)),
        (n, m) => format!(
            " ({} more attempts found no connection, {} never left the machine)",
            thousands(n),
            thousands(m)
        ),
    };
    format!(
        "{} requests in {}, {} req/s, {} errors{unsent}",
        thousands(s.requests),
        seconds(s.duration_s),
        rate(s.rps),
        pct(100.0 * s.error_rate().unwrap_or(0.0))
    )
}

/// The most frequent failure, by name and count, and what it means: ("connection_refused",
/// 1234, "nothing listens …"); ("unknown", 0, "") when nothing failed.
pub fn main_failure(r: &RunRecord) -> (&'static str, u64, &'static str) {
    r.summary
        .errors_by_kind
        .iter()
        .max_by_key(|(_, n)| **n)
        .map_or(("unknown", 0, ""), |(k, n)| (k.name(), *n, k.hint()))
}

/// The verdict of a run, from [`status`] (which the exit code reads too): its first line in
/// every format.
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
    let (level, headline) = match status(r) {
        RunStatus::Interrupted(signal) => (
            if s.requests == 0 || all_failed {
                Level::Fail
            } else {
                Level::Warn
            },
            match &r.find_max {
                // The record is one whole step of the search, kept (its maximum's, or its first).
                Some(f) => format!(
                    "Interrupted ({signal}) after {} steps: the search stopped before it \
                     finished; the step kept: {figures}{failures}",
                    f.steps.len()
                ),
                None => format!(
                    "Interrupted ({signal}) after {}: {cut_short}; {figures}{failures}",
                    seconds(s.duration_s)
                ),
            },
        ),
        RunStatus::Incomplete(missing) => (Level::Fail, incomplete(r, missing, &figures)),
        RunStatus::NoMaximum(f) => (Level::Fail, no_maximum(f)),
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
        RunStatus::NoConnection => {
            let (kind, n, hint) = main_failure(r);
            (
                Level::Fail,
                format!(
                    "No connection to the target worked: {kind} on {} of {} attempts in {}, no \
                     response; nothing was measured of the service ({hint})",
                    thousands(n),
                    thousands(s.requests + s.not_sent),
                    seconds(s.duration_s)
                ),
            )
        }
        RunStatus::NoRequests => (
            Level::Fail,
            "No request completed: there are no figures".to_string(),
        ),
        RunStatus::AllFailed => {
            let (kind, n, _) = main_failure(r);
            (
                Level::Fail,
                format!(
                    "Every request failed (most often {kind}: {}): {figures}; the latency \
                     describes failures, not the service",
                    thousands(n)
                ),
            )
        }
        RunStatus::Warnings(n) => (
            Level::Warn,
            format!("Completed with {n} warning(s); {figures}"),
        ),
        RunStatus::Completed => (Level::Ok, format!("Completed: {figures}")),
    };
    Verdict { level, headline }
}

/// "INCOMPLETE: 1 of 3 generators lost (share 2/3, a third of the load: 200 req/s) …".
fn incomplete(r: &RunRecord, missing: &[u32], figures: &str) -> String {
    let count = r.merged.as_ref().map_or(0, |m| m.count).max(1);
    let shares: Vec<String> = missing.iter().map(|i| format!("{i}/{count}")).collect();
    let carried: Vec<String> = r
        .merged
        .iter()
        .flat_map(|m| &m.lost)
        .map(|l| {
            format!(
                "share {}/{count} had reported {} requests over {} s",
                l.index,
                thousands(l.requests),
                l.seconds
            )
        })
        .collect();
    let carried = if carried.is_empty() {
        String::new()
    } else {
        format!(" ({} before it was lost)", carried.join(", "))
    };
    format!(
        "Incomplete: {} of {count} generators lost (share {}): {:.0} % of the load asked was \
         not delivered as planned and is in no figure{carried}; {figures}",
        missing.len(),
        shares.join(", "),
        share_pct(u64::from(count), missing.len() as u64)
    )
}

/// Why a search found no maximum: the generator limited it, or no step met the SLO.
fn no_maximum(f: &FindMax) -> String {
    if f.generator_limited {
        let why = f
            .steps
            .iter()
            .find(|s| s.generator_limited)
            .map_or("", |s| s.reason.as_str());
        let found = f
            .max_sustainable_rps
            .map_or_else(|| "none".to_string(), |m| format!("{} req/s", rate(m)));
        format!(
            "Generator-limited: the load generator, not the target, limited the search ({why}); \
             the maximum found ({found}) is only a lower bound"
        )
    } else {
        format!(
            "No maximum: no step met the SLO {}; the lowest step, {} {}, broke it: {}",
            f.slo,
            number(f.breaking_load.unwrap_or(0.0)),
            match f.model {
                crate::record::model::LoadModel::Open => "req/s",
                _ => "VUs",
            },
            f.breaking_reason.as_deref().unwrap_or("nothing measured")
        )
    }
}

/// "`rps > 100` (93.5 then)": a threshold that ended the run, with the value it failed with.
fn aborted_threshold(t: &ThresholdResult) -> String {
    match t.observed_at_abort {
        Some(v) => format!("`{} {}` ({} then)", t.metric, t.condition, number(v)),
        None => format!("`{} {}`", t.metric, t.condition),
    }
}

/// The outcome `r`'s figures give: status, first line and exit code.
pub fn outcome(r: &RunRecord) -> Outcome {
    let status = status(r);
    let v = verdict(r);
    Outcome {
        status: status.code(),
        level: v.level,
        headline: v.headline,
        exit_code: status.exit_code(),
    }
}

/// Writes into `r` the outcome its figures give. Every finished record is settled last, after
/// its warnings and thresholds, so that what it says agrees with what it holds.
pub fn settle(r: &mut RunRecord) {
    r.outcome = Some(outcome(r));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;

    fn threshold(passed: bool, aborted: bool) -> ThresholdResult {
        ThresholdResult {
            unit: None,
            metric: "rps".into(),
            condition: "> 100".into(),
            observed: Some(187.2),
            passed,
            aborted,
            aborted_at_s: None,
            observed_at_abort: None,
        }
    }

    #[test]
    fn a_threshold_that_ended_the_run_failed_whatever_the_end_showed() {
        let mut r = record("cut", 2, 100, 2000, 0, 0.0);
        // As volley 0.1 wrote it: the shortened run met the condition, so `passed` said true.
        r.thresholds = vec![threshold(true, true), threshold(true, false)];
        let status = status(&r);
        assert!(matches!(&status, RunStatus::Aborted(by) if by.len() == 1));
        assert!(status.is_failure());
    }

    #[test]
    fn the_order_is_interrupted_aborted_thresholds_then_failures() {
        let mut r = record("x", 2, 100, 2000, 0, 0.0);
        assert_eq!(status(&r), RunStatus::Completed);
        r.summary.errors = r.summary.requests;
        assert_eq!(status(&r), RunStatus::AllFailed);
        r.thresholds = vec![threshold(false, false), threshold(true, false)];
        assert_eq!(status(&r), RunStatus::ThresholdsFailed { failed: 1, of: 2 });
        r.thresholds.push(threshold(false, true));
        assert!(matches!(status(&r), RunStatus::Aborted(_)));
        r.interrupted = Some("SIGINT".into());
        assert_eq!(status(&r), RunStatus::Interrupted("SIGINT"));
        assert!(!status(&r).is_failure());
    }
}
