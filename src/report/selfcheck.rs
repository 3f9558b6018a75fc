//! The record's self-checks in reports: a table for Markdown and HTML, a few lines for the
//! terminal summary. Failed and explained checks are also warnings (shown with the others); this
//! says which checks ran and which could not.

use std::fmt::Write;

use super::table::Table;
use crate::record::model::RunRecord;
use crate::record::selfcheck::{SelfCheck, SelfCheckOutcome};

fn outcome_words(o: SelfCheckOutcome) -> &'static str {
    match o {
        SelfCheckOutcome::Passed => "passed",
        SelfCheckOutcome::Failed => "FAILED",
        SelfCheckOutcome::Explained => "explained",
        SelfCheckOutcome::NotApplicable => "not applicable",
    }
}

/// "7 passed, 1 not applicable".
fn tally(checks: &[SelfCheck]) -> String {
    let order = [
        SelfCheckOutcome::Failed,
        SelfCheckOutcome::Explained,
        SelfCheckOutcome::Passed,
        SelfCheckOutcome::NotApplicable,
    ];
    let parts: Vec<String> = order
        .into_iter()
        .filter_map(|o| {
            let n = checks.iter().filter(|c| c.outcome == o).count();
            (n > 0).then(|| format!("{n} {}", outcome_words(o)))
        })
        .collect();
    parts.join(", ")
}

/// The "Self-checks" table (none for records written before self-checks existed).
pub fn table(r: &RunRecord) -> Option<Table> {
    if r.self_checks.is_empty() {
        return None;
    }
    let mut t = Table::new("Self-checks", &["<Check", "<Result", "<Finding"]).with_note(format!(
        "{}: relations the record's own figures must satisfy (docs/measurement.md, \
         \"Self-checks\").",
        tally(&r.self_checks)
    ));
    for c in &r.self_checks {
        t.push([c.code.name(), outcome_words(c.outcome), &c.message]);
    }
    Some(t)
}

/// The terminal summary's lines: the tally, then each check that did not pass with its reason
/// (failed and explained ones point to the warnings, which carry their message).
pub fn text(r: &RunRecord) -> String {
    let mut o = String::new();
    if r.self_checks.is_empty() {
        return o;
    }
    let _ = writeln!(o, "Self-checks: {}", tally(&r.self_checks));
    for c in &r.self_checks {
        let detail = match c.outcome {
            SelfCheckOutcome::Passed => continue,
            SelfCheckOutcome::Failed | SelfCheckOutcome::Explained => "see Warnings",
            SelfCheckOutcome::NotApplicable => c.message.as_str(),
        };
        let _ = writeln!(
            o,
            "  {} {}: {detail}",
            c.code.name(),
            outcome_words(c.outcome)
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;
    use crate::record::selfcheck::SelfCheckCode;

    fn checked() -> RunRecord {
        let mut r = record("checked", 3, 100, 2000, 0, 0.0);
        let check = |code, outcome, message: &str| SelfCheck {
            code,
            outcome,
            figures: Default::default(),
            message: message.into(),
        };
        r.self_checks = vec![
            check(
                SelfCheckCode::RequestsAddUp,
                SelfCheckOutcome::Passed,
                "requests add up",
            ),
            check(
                SelfCheckCode::LittlesLaw,
                SelfCheckOutcome::NotApplicable,
                "open model",
            ),
            check(
                SelfCheckCode::HeavyTail,
                SelfCheckOutcome::Explained,
                "heavy tail: 2 % carry 90 %",
            ),
        ];
        r
    }

    #[test]
    fn the_summary_tallies_and_names_what_did_not_pass() {
        let text = text(&checked());
        assert_eq!(
            text,
            "Self-checks: 1 explained, 1 passed, 1 not applicable\n  \
             littles_law not applicable: open model\n  heavy_tail explained: see Warnings\n"
        );
        assert_eq!(super::text(&record("old", 1, 10, 1000, 0, 0.0)), "");
    }

    #[test]
    fn the_table_lists_every_check() {
        let t = table(&checked()).unwrap();
        assert_eq!(t.rows.len(), 3);
        assert_eq!(
            t.rows[2],
            vec!["heavy_tail", "explained", "heavy tail: 2 % carry 90 %"]
        );
        assert!(t.note.unwrap().starts_with("1 explained, 1 passed"));
        assert!(table(&record("old", 1, 10, 1000, 0, 0.0)).is_none());
    }
}
