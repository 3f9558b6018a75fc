//! How a run ended, decided in one place from its record: the first line of the terminal
//! summary, of `report.md` and of `report.html`, the exit code and `-q`'s line on stderr all read
//! [`status`], so they can never disagree (they once did: a run cut short by an `abort_on_fail`
//! threshold exited 0 under a table that said "pass").

use crate::record::model::{RunRecord, ThresholdResult};

/// How a run ended, most important first: the first that applies is the run's status.
#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus<'a> {
    /// A signal or a stop request ended the run early (e.g. "SIGINT").
    Interrupted(&'a str),
    /// Thresholds with `abort_on_fail` failed during the run and ended it early.
    Aborted(Vec<&'a ThresholdResult>),
    /// Thresholds failed (at the end of a run that ran its course).
    ThresholdsFailed {
        /// How many failed.
        failed: usize,
        /// Of how many.
        of: usize,
    },
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
    /// Whether the figures are of a run that failed: thresholds failed or ended the run, or no
    /// request succeeded.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Self::Aborted(_) | Self::ThresholdsFailed { .. } | Self::NoRequests | Self::AllFailed
        )
    }
}

/// The status of the run `r` records.
pub fn status(r: &RunRecord) -> RunStatus<'_> {
    let s = &r.summary;
    let aborted: Vec<&ThresholdResult> = r.thresholds.iter().filter(|t| t.aborted).collect();
    let failed = r.thresholds.iter().filter(|t| t.failed()).count();
    if let Some(signal) = &r.interrupted {
        RunStatus::Interrupted(signal)
    } else if !aborted.is_empty() {
        RunStatus::Aborted(aborted)
    } else if failed > 0 {
        RunStatus::ThresholdsFailed {
            failed,
            of: r.thresholds.len(),
        }
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
