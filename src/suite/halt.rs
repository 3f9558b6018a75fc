//! Why a target's steps end early, and what one measured run says about its target: a failed
//! step when every request failed, an `aborted` target when an `abort_on_fail` threshold ended
//! the run, `thresholds_failed` when its thresholds failed (the target goes on).

use super::words::every_request_failed;
use crate::analysis::verdict::{RunStatus, status, verdict};
use crate::record::RunRecord;
use crate::record::suite::{Status, SuiteStep, TargetOutcome};

/// Why a target's steps ended early.
pub(super) enum Halt {
    /// A step failed.
    Failed(SuiteStep, String),
    /// A signal arrived; the words say when ("during the run", "before the smoke run").
    Interrupted(String),
    /// An `abort_on_fail` threshold ended a run; the words say which run and why.
    Aborted(String),
}

/// What the measured run `record` (`during`: "the run", "run 2 of 5") says about its target:
/// the step to halt with, if any; failed thresholds mark the target (`out`) and let it go on.
pub(super) fn halt_after(
    record: &RunRecord,
    during: &str,
    out: &mut TargetOutcome,
) -> Option<Halt> {
    let run = status(record);
    let s = &record.summary;
    let attempts = s.requests + s.not_sent;
    if matches!(run, RunStatus::ThresholdsFailed { .. }) {
        out.status = Status::ThresholdsFailed;
        out.cause
            .get_or_insert_with(|| format!("{during}: {}", verdict(record).headline));
    }
    match run {
        RunStatus::Interrupted(_) => Some(Halt::Interrupted(format!("during {during}"))),
        _ if attempts == 0 || s.errors == attempts => Some(Halt::Failed(
            SuiteStep::Run,
            format!("{during}: {}", every_request_failed(record)),
        )),
        RunStatus::Aborted(_) => Some(Halt::Aborted(format!(
            "{during}: {}",
            verdict(record).headline
        ))),
        _ => None,
    }
}
