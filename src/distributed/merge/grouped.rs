//! The merged record's grouped responses (`--group-by`): rows of the same value added, their
//! histograms added bucket by bucket, shares recomputed.
//!
//! What the shares' records cannot give back: which values each share saw. The merged
//! `distinct_values` is the largest of the shares' counts (a lower bound, flagged as saturated
//! when the shares disagree), and a value that only some shares kept among their first 50 is
//! merged with the others' `(other)` rows only as far as the rows say.

use std::collections::BTreeMap;

use super::{MergeError, PlacedShare};
use crate::analysis::percentiles;
use crate::record::model::{GroupedBy, GroupedValue, sort_rows};
use crate::record::recorder::new_histogram;
use crate::record::{decode_histogram, encode_histogram};

/// Every selector of the shares, its rows merged by value.
pub(super) fn merged<'a>(parts: &[PlacedShare<'a>]) -> Result<Vec<GroupedBy>, MergeError> {
    let first = parts[0].record;
    let mut out = Vec::new();
    for (i, g) in first.grouped.iter().enumerate() {
        let of_share = |p: &PlacedShare<'a>| -> Option<&'a GroupedBy> {
            p.record.grouped.get(i).filter(|o| o.selector == g.selector)
        };
        let mut rows: BTreeMap<(u8, String), Vec<(&str, &GroupedValue)>> = BTreeMap::new();
        for p in parts {
            for v in of_share(p).map_or(&[][..], |o| &o.values) {
                let key = (v.row as u8, v.value.clone());
                rows.entry(key).or_default().push((p.source, v));
            }
        }
        let exchanges: u64 = parts.iter().filter_map(of_share).map(|o| o.exchanges).sum();
        let mut values = Vec::new();
        for ((_, value), same) in rows {
            values.push(merge_rows(value, &same, exchanges)?);
        }
        sort_rows(&mut values);
        let counts: Vec<u64> = parts
            .iter()
            .filter_map(of_share)
            .map(|o| o.distinct_values)
            .collect();
        let distinct = counts.iter().copied().max().unwrap_or(0);
        out.push(GroupedBy {
            selector: g.selector.clone(),
            distinct_values: distinct,
            distinct_saturated: counts.iter().any(|&c| c != distinct)
                || parts
                    .iter()
                    .filter_map(of_share)
                    .any(|o| o.distinct_saturated),
            exchanges,
            responses: values.iter().map(|v| v.responses).sum(),
            values,
        });
    }
    Ok(out)
}

/// One value's rows of every share, as one.
fn merge_rows(
    value: String,
    same: &[(&str, &GroupedValue)],
    total: u64,
) -> Result<GroupedValue, MergeError> {
    let sum = |f: fn(&GroupedValue) -> u64| same.iter().map(|(_, v)| f(v)).sum::<u64>();
    let mut status: BTreeMap<String, u64> = BTreeMap::new();
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let mut hist = new_histogram();
    for (source, v) in same {
        let h = decode_histogram(&v.histogram_us).map_err(|why| MergeError::Field {
            record: source.to_string(),
            why: format!("grouped histogram_us of `{}`: {why}", v.value),
        })?;
        // Same bounds everywhere, so adding cannot fail.
        let _ = hist.add(&h);
        for (k, n) in &v.status {
            *status.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &v.errors_by_kind {
            *kinds.entry(k.clone()).or_default() += n;
        }
    }
    let exchanges = sum(|v| v.exchanges);
    Ok(GroupedValue {
        value,
        row: same[0].1.row,
        exchanges,
        responses: sum(|v| v.responses),
        share_pct: if total == 0 {
            0.0
        } else {
            exchanges as f64 * 100.0 / total as f64
        },
        errors: sum(|v| v.errors),
        latency_ms: percentiles(&hist),
        status,
        errors_by_kind: kinds,
        histogram_us: encode_histogram(&hist),
    })
}
