//! Self-checks: relations a record's own figures must satisfy, tested on the finished record and
//! kept in it (`self_checks`), so that a figure that does not add up is caught where it is
//! written, not in a reader's spreadsheet. A failed check (or an explained one: a mean above the
//! p95) also becomes a warning. `docs/measurement.md`, "Self-checks", defines each check.
//!
//! Every check reads the record alone, except Little's law, which also needs what the profile
//! made the VUs do ([`ExpectedLoad`], worked out from the plan when the record is built).

mod counts;
pub(crate) use counts::with_status;
mod groups;
mod littles_law;
mod ordered;
mod schedule;
mod tail;
#[cfg(test)]
pub(crate) mod testing;

use std::collections::BTreeMap;

use crate::record::model::RunRecord;
use crate::record::selfcheck::{SelfCheck, SelfCheckCode, SelfCheckOutcome};

pub use littles_law::{ExpectedLoad, LITTLES_LAW_TOLERANCE};
pub use schedule::{LAG_LIMIT_MS, Sends, critical};

/// Runs every self-check on a finished record (thresholds included, warnings not needed), in a
/// fixed order: counts, groups, percentiles, Little's law, heavy tail, the schedule kept.
pub fn run(r: &RunRecord, load: &ExpectedLoad, sends: &Sends<'_>) -> Vec<SelfCheck> {
    vec![
        counts::requests_add_up(r),
        counts::errors_add_up(r),
        counts::histogram_matches_responses(r),
        counts::series_adds_up(r),
        groups::groups_add_up(r),
        ordered::percentiles_ordered(r),
        littles_law::check(r, load),
        tail::heavy_tail(r),
        schedule::check(r, sends),
    ]
}

/// A self-check with its figures (non-finite values are left out: JSON has no NaN).
fn finding(
    code: SelfCheckCode,
    outcome: SelfCheckOutcome,
    figures: &[(&str, f64)],
    message: String,
) -> SelfCheck {
    SelfCheck {
        code,
        outcome,
        figures: figures
            .iter()
            .filter(|(_, v)| v.is_finite())
            .map(|(k, v)| (k.to_string(), *v))
            .collect::<BTreeMap<_, _>>(),
        message,
    }
}

fn passed(code: SelfCheckCode, figures: &[(&str, f64)], message: String) -> SelfCheck {
    finding(code, SelfCheckOutcome::Passed, figures, message)
}

fn failed(code: SelfCheckCode, figures: &[(&str, f64)], message: String) -> SelfCheck {
    finding(code, SelfCheckOutcome::Failed, figures, message)
}

fn not_applicable(code: SelfCheckCode, why: String) -> SelfCheck {
    finding(code, SelfCheckOutcome::NotApplicable, &[], why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;

    #[test]
    fn a_consistent_record_passes_every_check_that_applies() {
        let r = record("ok", 5, 1000, 2000, 10, 0.3);
        let load = ExpectedLoad::Closed {
            active_vu_s: 2.0 * 5.0,
            think_vu_s: 0.0,
        };
        let closed = Sends::NotApplicable("closed model".into());
        let checks = run(&r, &load, &closed);
        assert_eq!(checks.len(), 9);
        for c in &checks {
            let na = [SelfCheckCode::GroupsAddUp, SelfCheckCode::ScheduleKept];
            let expected = if na.contains(&c.code) {
                SelfCheckOutcome::NotApplicable
            } else {
                SelfCheckOutcome::Passed
            };
            assert_eq!(c.outcome, expected, "{c:?}");
        }
    }

    #[test]
    fn non_finite_figures_are_left_out() {
        let c = passed(
            SelfCheckCode::LittlesLaw,
            &[("a", 1.0), ("b", f64::NAN), ("c", f64::INFINITY)],
            String::new(),
        );
        assert_eq!(c.figures.keys().collect::<Vec<_>>(), vec!["a"]);
    }
}
