//! Grouped responses (`--group-by`) side by side: per selector, each value's share and latency in
//! every variant, and the change against the baseline. Descriptive: the noise-aware verdict
//! covers the headline metrics only.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::analysis::compare::Variant;
use crate::record::decode_histogram;
use crate::record::model::{GroupedValue, sort_rows};
use crate::record::recorder::new_histogram;
use crate::report::table::Table;
use crate::units::ms;

/// One value of one variant, all its runs together.
struct Figures {
    exchanges: u64,
    latency: Histogram<u64>,
}

/// Per selector: the variants' exchanges (all runs) and per value, per variant, its figures.
type BySelector = BTreeMap<String, (Vec<u64>, BTreeMap<String, Vec<Option<Figures>>>)>;

/// One table per selector found in any variant's runs, in the order first met.
pub fn tables(variants: &[Variant]) -> Vec<Table> {
    let mut order: Vec<String> = Vec::new();
    let mut rows_of: BTreeMap<String, Vec<GroupedValue>> = BTreeMap::new();
    let mut by: BySelector = BTreeMap::new();
    let n = variants.len();
    for (vi, v) in variants.iter().enumerate() {
        for g in v.runs.iter().flat_map(|r| &r.grouped) {
            if !order.contains(&g.selector) {
                order.push(g.selector.clone());
            }
            let (totals, values) = by
                .entry(g.selector.clone())
                .or_insert_with(|| (vec![0; n], BTreeMap::new()));
            totals[vi] += g.exchanges;
            for row in &g.values {
                let rows = rows_of.entry(g.selector.clone()).or_default();
                if !rows.iter().any(|r| r.value == row.value) {
                    rows.push(row.clone());
                }
                let cells = values
                    .entry(row.value.clone())
                    .or_insert_with(|| (0..n).map(|_| None).collect());
                let f = cells[vi].get_or_insert_with(|| Figures {
                    exchanges: 0,
                    latency: new_histogram(),
                });
                f.exchanges += row.exchanges;
                if let Ok(h) = decode_histogram(&row.histogram_us) {
                    let _ = f.latency.add(&h);
                }
            }
        }
    }
    order
        .iter()
        .map(|selector| {
            let mut rows = rows_of.remove(selector).unwrap_or_default();
            sort_rows(&mut rows);
            let (totals, values) = &by[selector];
            table(selector, variants, &rows, totals, values)
        })
        .collect()
}

fn table(
    selector: &str,
    variants: &[Variant],
    rows: &[GroupedValue],
    totals: &[u64],
    values: &BTreeMap<String, Vec<Option<Figures>>>,
) -> Table {
    let mut headers = vec!["<Value".to_string()];
    for (i, v) in variants.iter().enumerate() {
        headers.push(format!("{} share", v.label));
        if i > 0 {
            headers.push(format!("{} Δ share", v.label));
        }
        headers.push(format!("{} p50 (ms)", v.label));
        headers.push(format!("{} p99 (ms)", v.label));
        if i > 0 {
            headers.push(format!("{} Δ p99", v.label));
        }
    }
    let refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut t = Table::new(&format!("Grouped by {selector}"), &refs).with_note(
        "Share of each variant's exchanges (all its runs), latency of the value's responses; \
         Δ against the baseline (share in percentage points). Descriptive: the verdict above \
         covers the headline figures only.",
    );
    for row in rows {
        let cells = &values[&row.value];
        let share = |i: usize| {
            cells[i]
                .as_ref()
                .filter(|_| totals[i] > 0)
                .map(|f| f.exchanges as f64 * 100.0 / totals[i] as f64)
        };
        let q = |i: usize, q: f64| {
            cells[i]
                .as_ref()
                .filter(|f| !f.latency.is_empty())
                .map(|f| f.latency.value_at_quantile(q) as f64 / 1000.0)
        };
        let mut out = vec![row.value.clone()];
        for i in 0..variants.len() {
            out.push(share(i).map_or("-".into(), |s| format!("{s:.2}%")));
            if i > 0 {
                out.push(match (share(0), share(i)) {
                    (Some(a), Some(b)) => signed_pp(b - a),
                    _ => "-".into(),
                });
            }
            out.push(ms(q(i, 0.5)));
            out.push(ms(q(i, 0.99)));
            if i > 0 {
                out.push(match (q(0, 0.99), q(i, 0.99)) {
                    (Some(a), Some(b)) if a > 0.0 => signed_pct((b - a) * 100.0 / a),
                    _ => "-".into(),
                });
            }
        }
        t.push(out);
    }
    t
}

fn signed_pp(v: f64) -> String {
    let sign = if v < 0.0 { "−" } else { "+" };
    format!("{sign}{:.2} pp", v.abs())
}

fn signed_pct(v: f64) -> String {
    let sign = if v < 0.0 { "−" } else { "+" };
    format!("{sign}{:.1}%", v.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::group::GroupTable;
    use crate::record::model::GroupedBy;

    fn variant(label: &str, spread: &[(&str, u64, u64)]) -> Variant {
        let mut t = GroupTable::new();
        for &(v, n, us) in spread {
            for _ in 0..n {
                t.record(Some(v.as_bytes()), us, Some(200), None);
            }
        }
        let mut r = crate::record::fixture::record(label, 2, 10, 1_000, 0, 0.0);
        r.grouped = vec![GroupedBy::from_table("header:X-Backend".into(), &t)];
        Variant {
            label: label.into(),
            source: label.into(),
            runs: vec![r],
        }
    }

    #[test]
    fn shares_and_latency_per_value_side_by_side() {
        let a = variant("a", &[("b1", 50, 1_000), ("b2", 50, 1_000)]);
        let b = variant("b", &[("b1", 25, 1_000), ("b2", 75, 2_000)]);
        let t = tables(&[a, b]);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].title, "Grouped by header:X-Backend");
        assert_eq!(t[0].headers[1..4], ["a share", "a p50 (ms)", "a p99 (ms)"]);
        let b2 = &t[0].rows[1];
        assert_eq!(b2[0], "b2");
        assert_eq!(b2[1], "50.00%");
        assert_eq!(b2[4], "75.00%");
        assert_eq!(b2[5], "+25.00 pp");
        assert_eq!(b2[8], "+100.0%");
    }
}
