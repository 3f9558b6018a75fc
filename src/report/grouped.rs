//! Grouped responses (`--group-by`): per selector, a table of the values with their share,
//! statuses, errors and latency, in every report format (terminal, Markdown, HTML).

use super::figures::pct;
use super::table::Table;
use crate::record::model::{GroupedBy, RunRecord};
use crate::units::{ms, thousands};

/// One table per selector of the record, in the record's order.
pub fn tables(r: &RunRecord) -> Vec<Table> {
    r.grouped.iter().map(table).collect()
}

/// The title of a selector's table.
pub fn title(g: &GroupedBy) -> String {
    format!("Grouped by {}", g.selector)
}

/// What the distinct count says, in words.
pub fn distinct_note(g: &GroupedBy) -> String {
    let seen = if g.distinct_saturated {
        format!("at least {}", thousands(g.distinct_values))
    } else {
        thousands(g.distinct_values)
    };
    let noun = if g.distinct_values == 1 && !g.distinct_saturated {
        "value"
    } else {
        "values"
    };
    let mut note = format!(
        "{seen} distinct {noun} in {} exchanges ({} responses); share: of the exchanges; latency \
         in ms, of the responses.",
        thousands(g.exchanges),
        thousands(g.responses)
    );
    if g.values
        .iter()
        .any(|v| v.row == crate::record::model::ValueRow::Other)
    {
        note.push_str(" The first 50 values have a row; later ones are counted in (other).");
    }
    note
}

fn table(g: &GroupedBy) -> Table {
    let mut t = Table::new(
        &title(g),
        &[
            "<Value",
            "Responses",
            "Share",
            "Errors",
            "<Statuses",
            "p50",
            "p90",
            "p95",
            "p99",
            "max",
            "mean",
        ],
    )
    .with_note(distinct_note(g));
    for v in &g.values {
        let statuses: Vec<String> = v.status.iter().map(|(c, n)| format!("{c}×{n}")).collect();
        let l = &v.latency_ms;
        t.push([
            v.value.clone(),
            thousands(v.responses),
            pct(v.share_pct),
            thousands(v.errors),
            statuses.join(" "),
            ms(l.p50),
            ms(l.p90),
            ms(l.p95),
            ms(l.p99),
            ms(l.max),
            ms(l.mean),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::group::GroupTable;

    #[test]
    fn a_table_per_selector_with_a_row_per_value() {
        let mut table = GroupTable::new();
        for (v, us) in [("b1", 1_000), ("b2", 30_000), ("b1", 2_000)] {
            table.record(Some(v.as_bytes()), us, Some(200), None);
        }
        let g = GroupedBy::from_table("header:X-Backend".into(), &table);
        let t = tables(&RunRecord {
            grouped: vec![g],
            ..crate::record::fixture::record("grouped", 2, 10, 1_000, 0, 0.0)
        });
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].title, "Grouped by header:X-Backend");
        assert_eq!(t[0].rows[0][..4], ["b1", "2", "66.67%", "0"]);
        assert_eq!(t[0].rows[1][4], "200×1");
        assert!(
            t[0].note
                .as_deref()
                .unwrap()
                .starts_with("2 distinct values")
        );
    }
}
