//! A comparison's scenarios, steps and phases ([`crate::analysis::compare::groups`]): their
//! table, their rows in the statistics, and what the verdict line says of them.

use super::{Calls, details_row, heads, main_row};
use crate::analysis::compare::Comparison;
use crate::record::model::GroupKind;
use crate::report::table::Table;

/// "scenario", "scenario and step", "step and phase", …: the kinds of the groups compared.
fn kinds(c: &Comparison) -> String {
    let words: Vec<&str> = [GroupKind::Scenario, GroupKind::Step, GroupKind::Phase]
        .into_iter()
        .filter(|kind| c.groups.iter().any(|g| g.key.kind == *kind))
        .map(GroupKind::word)
        .collect();
    match words.as_slice() {
        [.., last] if words.len() > 1 => {
            format!("{} and {last}", words[..words.len() - 1].join(", "))
        }
        _ => words.concat(),
    }
}

/// The most parts the verdict line names with their calls; more are counted in the last place.
const MAX_PARTS_SAID: usize = 5;

/// The title of the groups' table: "By scenario and step".
pub(super) fn title(c: &Comparison) -> String {
    format!("By {}", kinds(c))
}

/// The groups' table: per group and metric, a column per variant and against the baseline its
/// change and verdict (as the main table); `None` when no group was compared.
pub(super) fn table(c: &Comparison) -> Option<Table> {
    if c.groups.is_empty() {
        return None;
    }
    let heads = heads(c, &["<Group", "<Metric"]);
    let heads: Vec<&str> = heads.iter().map(String::as_str).collect();
    let note = if c.labels.len() == 1 {
        "Each scenario, step and phase on its own: its spread over the runs, as the run's."
    } else {
        "Each scenario, step and phase on its own, judged as the run's figures are and in the \
         same correction. Single runs are judged by each run's own 95% intervals of the group \
         (weak: they cannot see run-to-run variation); repeats by the t test over runs."
    };
    let mut t = Table::new(&title(c), &heads).with_note(note);
    for g in &c.groups {
        for (k, row) in g.rows.iter().enumerate() {
            let name = if k == 0 {
                g.key.path.clone()
            } else {
                String::new()
            };
            t.push(std::iter::once(name).chain(main_row(row)));
        }
    }
    Some(t)
}

/// The statistics rows of the groups, each metric named "group: metric (unit)".
pub(super) fn details_rows(c: &Comparison) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for g in &c.groups {
        for row in &g.rows {
            for (i, ch) in row.changes.iter().enumerate() {
                let Some(ch) = ch else { continue };
                let mut cells = details_row(c, row, i, ch);
                cells[0] = format!("{}: {}", g.key.path, cells[0]);
                rows.push(cells);
            }
        }
    }
    rows
}

/// What variant `i`'s groups were called, for its verdict line: "by step — mix / slow: latency
/// p50 slower (+20.0%); no call in the other 2", or "by step: no call (3; 2 changes
/// inconclusive)"; past [`MAX_PARTS_SAID`] parts with calls, the rest are counted ("4 more with
/// calls (the table "By step" has them)"); `None` when no group was compared.
pub(super) fn verdict(c: &Comparison, i: usize) -> Option<String> {
    if c.groups.is_empty() {
        return None;
    }
    let mut said = Vec::new();
    let mut unsure = 0;
    for g in &c.groups {
        let mut calls = Calls::default();
        calls.add(&g.rows, i, "");
        unsure += calls.unsure.len();
        if !calls.called.is_empty() {
            said.push(format!("{}: {}", g.key.path, calls.called.join(", ")));
        }
    }
    let by = kinds(c);
    let rest = c.groups.len() - said.len();
    if said.len() > MAX_PARTS_SAID {
        let more = said.len() - MAX_PARTS_SAID + 1;
        said.truncate(MAX_PARTS_SAID - 1);
        said.push(format!(
            "{more} more with calls (the table \"By {by}\" has them)"
        ));
    }
    let doubt = match unsure {
        0 => String::new(),
        1 => "; 1 change inconclusive".into(),
        n => format!("; {n} changes inconclusive"),
    };
    Some(if said.is_empty() {
        format!("by {by}: no call ({rest}{doubt})")
    } else if rest == 0 {
        format!("by {by} — {}", said.join("; "))
    } else {
        format!(
            "by {by} — {}; no call in the other {rest}{doubt}",
            said.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::analysis::compare::{CompareOptions, Variant, compare};
    use crate::analysis::selfcheck::testing::group;
    use crate::record::fixture::record;
    use crate::record::model::GroupKind;

    /// Four runs of a plan whose scenario `mix` has eight steps, each with p50 `p50_ms`.
    fn plan_runs(label: &str, p50_ms: f64) -> Variant {
        let runs = (0..4)
            .map(|i| {
                let mut r = record(label, 6, 1000, 2000, 0, 0.0);
                r.groups = vec![group(GroupKind::Scenario, "mix", None, 800)];
                for k in 0..8 {
                    let mut g = group(GroupKind::Step, &format!("s{k}"), Some("mix"), 100);
                    g.latency_ms.p50 = Some(p50_ms * (1.0 + 0.001 * f64::from(i)));
                    r.groups.push(g);
                }
                r
            })
            .collect();
        Variant {
            label: label.into(),
            source: label.into(),
            runs,
        }
    }

    #[test]
    fn a_verdict_line_names_five_parts_at_most() {
        let v = [plan_runs("a", 2.0), plan_runs("b", 4.0)];
        let line = super::verdict(&compare(&v, CompareOptions::with_parts()), 1).unwrap();
        for k in 0..4 {
            assert!(
                line.contains(&format!("mix / s{k}: latency p50 slower")),
                "{line}"
            );
        }
        assert!(!line.contains("mix / s4"), "{line}");
        assert!(
            line.ends_with("; 4 more with calls (the table \"By step\" has them)"),
            "{line}"
        );
    }
}
