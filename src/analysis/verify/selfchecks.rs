//! The self-checks a record keeps agree with it: every check that warns is also a warning, and
//! the schedule check's figures are the record's and do not contradict its outcome.

use super::{Findings, Rule, near};
use crate::analysis::selfcheck::{LAG_LIMIT_MS, critical};
use crate::record::model::{RunRecord, WarningCode};
use crate::record::selfcheck::{SelfCheck, SelfCheckCode, SelfCheckOutcome};

/// [`Rule::SelfChecksAgree`].
pub(super) fn check(r: &RunRecord, f: &mut Findings) {
    for (i, c) in r.self_checks.iter().enumerate() {
        let warned = r
            .warnings
            .iter()
            .any(|w| w.code == WarningCode::SelfCheck(c.code));
        f.check(
            warned || !c.outcome.warns(),
            Rule::SelfChecksAgree,
            format!("self_checks[{i}].outcome"),
            format!("{:?} with no `{}` warning", c.outcome, c.code.name()),
            || "a warning of the same code: a failed check is also a warning".into(),
        );
        if c.code == SelfCheckCode::ScheduleKept {
            schedule(r, i, c, f);
        }
    }
}

/// `schedule_kept`: a passed check whose own figures show a failure — a distance above its
/// critical value, a send lag p99 above the limit, iterations dropped — and figures that are
/// not the record's (its lag p99, its drops, the critical value of its gap counts). A merged
/// record keeps one share's check, whose figures are that share's.
fn schedule(r: &RunRecord, i: usize, c: &SelfCheck, f: &mut Findings) {
    let figure = |name: &str| c.figures.get(name).copied();
    let path = |name: &str| format!("self_checks[{i}].figures.{name}");
    if c.outcome == SelfCheckOutcome::Passed {
        let limits = [
            ("ks_distance", figure("ks_critical"), "ks_critical"),
            ("lag_p99_ms", Some(LAG_LIMIT_MS), "the send lag's limit"),
            ("dropped", Some(0.0), "none dropped"),
        ];
        for (name, limit, what) in limits {
            let (Some(found), Some(limit)) = (figure(name), limit) else {
                continue;
            };
            f.check(
                found <= limit,
                Rule::SelfChecksAgree,
                path(name),
                found,
                || format!("at most {limit} ({what}), as the check passed"),
            );
        }
    }
    if r.merged.is_some() {
        return;
    }
    let lag = r.generator.lag_ms.and_then(|l| l.p99);
    let dropped = r.summary.arrival.map(|a| a.dropped as f64);
    let gaps = figure("gaps_planned").zip(figure("gaps_sent"));
    let crit = gaps.map(|(n, m)| critical(n as usize, m as usize));
    for (name, expected, from) in [
        ("lag_p99_ms", lag, "generator.lag_ms.p99"),
        ("dropped", dropped, "summary.arrival.dropped"),
        (
            "ks_critical",
            crit,
            "the critical distance of gaps_planned and gaps_sent",
        ),
    ] {
        let (Some(found), Some(expected)) = (figure(name), expected) else {
            continue;
        };
        f.check(
            near(found, expected),
            Rule::SelfChecksAgree,
            path(name),
            found,
            || format!("{expected} ({from})"),
        );
    }
}
