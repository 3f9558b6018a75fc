//! The verdict: the recorded outcome (status, first line, exit code) is the one the record's
//! figures give, and a threshold that ended the run has failed.

use super::{Findings, Rule};
use crate::analysis::verdict;
use crate::record::model::RunRecord;

/// The outcome and threshold rules of `r`.
pub(super) fn check(r: &RunRecord, f: &mut Findings) {
    let expected = verdict::outcome(r);
    match &r.outcome {
        None => f.check(false, Rule::OutcomeAgrees, "outcome", "absent", || {
            format!(
                "the outcome the figures give, {:?} (exit {}); a record without one was written \
                 before volley recorded its verdict",
                expected.status, expected.exit_code
            )
        }),
        Some(o) => {
            f.check(
                o.status == expected.status,
                Rule::OutcomeAgrees,
                "outcome.status",
                format!("{:?}", o.status),
                || format!("{:?}, what the figures give", expected.status),
            );
            f.equal(
                Rule::OutcomeAgrees,
                "outcome.exit_code",
                u64::from(o.exit_code),
                u64::from(expected.exit_code),
                || format!("the exit code of a run that is {:?}", expected.status),
            );
            f.check(
                o.level == expected.level,
                Rule::OutcomeAgrees,
                "outcome.level",
                format!("{:?}", o.level),
                || format!("{:?}", expected.level),
            );
            f.check(
                o.headline == expected.headline,
                Rule::OutcomeAgrees,
                "outcome.headline",
                format!("{:?}", o.headline),
                || format!("{:?}, the first line the figures give", expected.headline),
            );
        }
    }
    for (i, t) in r.thresholds.iter().enumerate() {
        f.check(
            !(t.aborted && t.passed),
            Rule::ThresholdsAgree,
            format!("thresholds[{i}].passed"),
            t.passed,
            || "false: the threshold ended the run (aborted)".into(),
        );
        f.check(
            t.aborted || t.aborted_at_s.is_none(),
            Rule::ThresholdsAgree,
            format!("thresholds[{i}].aborted_at_s"),
            format!("{:?}", t.aborted_at_s),
            || "absent: the threshold did not end the run (aborted = false)".into(),
        );
    }
}
