//! A suite (`suite.json`): each target's status agrees with its records, and the recorded exit
//! code with the statuses.

use super::{Findings, Rule, Violation};
use crate::analysis::verdict::{RunStatus, status};
use crate::record::suite::{Status, SuiteOutcome};

/// The suite `o` against its targets' records (each target's `runs`, read with it by
/// [`SuiteOutcome::read`]).
pub fn suite(o: &SuiteOutcome) -> Vec<Violation> {
    let mut f = Findings::default();
    for (i, t) in o.targets.iter().enumerate() {
        let runs = &t.runs;
        let path = format!("targets[{i}].status");
        let found = format!("{:?} ({})", t.status, t.name);
        let statuses: Vec<RunStatus<'_>> = runs.iter().map(status).collect();
        let any = |p: fn(&RunStatus<'_>) -> bool| statuses.iter().any(p);
        let searched = o.find_max.is_some();
        let (holds, expected) = match t.status {
            Status::Ran => (
                !statuses.iter().any(|s| {
                    s.is_failure() && !(searched && matches!(s, RunStatus::NoMaximum(_)))
                        || matches!(s, RunStatus::Interrupted(_))
                }),
                "a failure or an interruption: every run ran to its end and met its thresholds",
            ),
            Status::ThresholdsFailed => (
                any(|s| matches!(s, RunStatus::ThresholdsFailed { .. }))
                    && !any(|s| matches!(s, RunStatus::Aborted(_))),
                "a run whose thresholds failed, none aborted",
            ),
            Status::Aborted => (
                any(|s| matches!(s, RunStatus::Aborted(_))),
                "a run an abort_on_fail threshold ended",
            ),
            Status::Interrupted | Status::NotRun => (
                o.interrupted.is_some(),
                "the suite interrupted (`interrupted` set)",
            ),
            Status::Failed => (t.failed_step.is_some(), "the step it failed at"),
        };
        f.check(holds, Rule::SuiteStatusAgrees, path, found, || {
            let seen: Vec<String> = statuses.iter().map(|s| format!("{:?}", s.code())).collect();
            format!(
                "a status its records support: expected {expected}; they are [{}]",
                seen.join(", ")
            )
        });
        f.equal(
            Rule::SuiteStatusAgrees,
            format!("targets[{i}].records"),
            t.records.len() as u64,
            runs.len() as u64,
            || "the records found".into(),
        );
    }
    if let Some(code) = o.exit_code {
        f.equal(
            Rule::SuiteStatusAgrees,
            "exit_code",
            u64::from(code),
            u64::from(o.exit_code()),
            || "the exit code the targets' statuses give".into(),
        );
    }
    f.into_vec()
}
