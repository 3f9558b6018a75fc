//! `grouped` in `run.json`: responses grouped by a value read from each response (`--group-by`),
//! with figures per value. Definitions: docs/measurement.md, "Grouped responses".

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Percentiles;
use crate::record::encode_histogram;
use crate::record::error_kind::ErrorKind;
use crate::record::figures::percentiles;
use crate::record::group::{GroupRow, GroupTable};

/// The responses of a run grouped by one selector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupedBy {
    /// The selector as written: `header:X-Backend`, `json:$.path` or `status`.
    pub selector: String,
    /// Distinct values seen (`(none)` is not a value): exact up to 4,096, a lower bound beyond
    /// (then `distinct_saturated`).
    pub distinct_values: u64,
    /// More distinct values were seen than are counted exactly: `distinct_values` is a lower
    /// bound.
    pub distinct_saturated: bool,
    /// Exchanges recorded (every measured attempt of the steps that group by this selector).
    pub exchanges: u64,
    /// Of them, responses (an HTTP status arrived).
    pub responses: u64,
    /// One row per value kept (the first 50 distinct values, sorted by value), then `(other)`
    /// (values past the 50th) and `(none)` (no value: header absent, no response, …) when seen.
    pub values: Vec<GroupedValue>,
}

/// What a row of [`GroupedBy`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ValueRow {
    /// One value.
    Value,
    /// Every value past the first 50 distinct ones.
    Other,
    /// Exchanges without a value.
    None,
}

/// The figures of one value (or of `(other)`, `(none)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupedValue {
    /// The value (lossy UTF-8, at most 128 bytes compared and kept); `(other)` or `(none)` for
    /// those rows.
    pub value: String,
    /// What the row stands for.
    pub row: ValueRow,
    /// Exchanges recorded in the row (responses and failed attempts).
    pub exchanges: u64,
    /// Responses (an HTTP status arrived).
    pub responses: u64,
    /// The row's share of the selector's exchanges, percent (rows add up to 100).
    pub share_pct: f64,
    /// Failed exchanges (transport failures, and 4xx/5xx as in `summary.errors`).
    pub errors: u64,
    /// Latency of the row's responses, ms (same definition as `summary.latency_ms`).
    pub latency_ms: Percentiles,
    /// Responses by status code.
    pub status: BTreeMap<String, u64>,
    /// Failures by kind.
    pub errors_by_kind: BTreeMap<String, u64>,
    /// The row's latency histogram (HDR V2, base64, µs).
    pub histogram_us: String,
}

impl GroupedBy {
    /// The record's form of a merged table.
    pub fn from_table(selector: String, t: &GroupTable) -> Self {
        let total = t.exchanges();
        let mut values: Vec<GroupedValue> = t
            .values()
            .map(|(v, row)| {
                let text = String::from_utf8_lossy(v).into_owned();
                GroupedValue::of(text, ValueRow::Value, row, total)
            })
            .collect();
        sort_rows(&mut values);
        let specials = [
            ("(other)", ValueRow::Other, t.other()),
            ("(none)", ValueRow::None, t.none()),
        ];
        for (name, kind, row) in specials {
            if let Some(row) = row {
                values.push(GroupedValue::of(name.into(), kind, row, total));
            }
        }
        let distinct = t.distinct();
        Self {
            selector,
            distinct_values: distinct.count,
            distinct_saturated: distinct.saturated,
            exchanges: total,
            responses: values.iter().map(|v| v.responses).sum(),
            values,
        }
    }

    /// The row of `value`, if kept.
    pub fn value(&self, value: &str) -> Option<&GroupedValue> {
        self.values.iter().find(|v| v.value == value)
    }
}

impl GroupedValue {
    fn of(value: String, row: ValueRow, r: &GroupRow, total: u64) -> Self {
        Self {
            value,
            row,
            exchanges: r.exchanges,
            responses: r.responses,
            share_pct: if total == 0 {
                0.0
            } else {
                r.exchanges as f64 * 100.0 / total as f64
            },
            errors: r.error_count(),
            latency_ms: percentiles(&r.latency),
            status: r.statuses().map(|(c, n)| (c.to_string(), n)).collect(),
            errors_by_kind: ErrorKind::ALL
                .into_iter()
                .filter(|k| r.errors[k.index()] > 0)
                .map(|k| (k.name().to_string(), r.errors[k.index()]))
                .collect(),
            histogram_us: encode_histogram(&r.latency),
        }
    }
}

/// Sorts rows as the record keeps them: values in natural order (`b2` before `b10`), then
/// `(other)`, then `(none)`.
pub fn sort_rows(rows: &mut [GroupedValue]) {
    rows.sort_by(|a, b| {
        (a.row as u8)
            .cmp(&(b.row as u8))
            .then_with(|| natural(&a.value, &b.value))
    });
}

/// Orders `b2` before `b10`: by the text with its digit runs compared as numbers.
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    fn key(s: &str) -> Vec<(String, u128)> {
        let mut out = Vec::new();
        let mut text = String::new();
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_ascii_digit() {
                let mut n = u128::from(c as u8 - b'0');
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    n = n
                        .saturating_mul(10)
                        .saturating_add(u128::from(*d as u8 - b'0'));
                    chars.next();
                }
                out.push((std::mem::take(&mut text), n));
            } else {
                text.push(c);
            }
        }
        out.push((text, 0));
        out
    }
    key(a).cmp(&key(b)).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_sorted_naturally_with_other_and_none_last_and_shares_add_up() {
        let mut t = GroupTable::new();
        for v in ["b10", "b2", "b1", "b2"] {
            t.record(Some(v.as_bytes()), 1_000, Some(200), None);
        }
        t.record(None, 0, None, Some(ErrorKind::ConnectRefused));
        let g = GroupedBy::from_table("header:X-Backend".into(), &t);
        let names: Vec<&str> = g.values.iter().map(|v| v.value.as_str()).collect();
        assert_eq!(names, ["b1", "b2", "b10", "(none)"]);
        assert_eq!((g.exchanges, g.responses, g.distinct_values), (5, 4, 3));
        let shares: f64 = g.values.iter().map(|v| v.share_pct).sum();
        assert!((shares - 100.0).abs() < 1e-9);
        let none = g.value("(none)").unwrap();
        assert_eq!((none.row, none.errors), (ValueRow::None, 1));
        assert_eq!(none.errors_by_kind["connection_refused"], 1);
        assert_eq!(g.value("b2").unwrap().status["200"], 2);
    }
}
