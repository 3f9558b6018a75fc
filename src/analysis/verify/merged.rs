//! A merged record (`volley merge`, the coordinator) is the sum of its shares: its own list of
//! shares adds up to it, and, given the shares' records, every count and histogram adds up
//! exactly.

use std::collections::BTreeMap;

use super::{Findings, Rule, Violation};
use crate::record::decode_histogram;
use crate::record::model::RunRecord;

/// The rules a merged record holds on its own: its shares' figures add up to its counts, and
/// every share is either there or missing.
pub(super) fn check(r: &RunRecord, f: &mut Findings) {
    let Some(m) = &r.merged else {
        return;
    };
    let present = m.shares.len() as u64 + m.missing.len() as u64;
    f.equal(
        Rule::MergedAddsUp,
        "merged.count",
        u64::from(m.count),
        present,
        || "the shares kept plus the shares missing".into(),
    );
    let sum = |pick: fn(&crate::record::shares::ShareFigures) -> u64| -> u64 {
        m.shares.iter().map(pick).sum()
    };
    f.equal(
        Rule::MergedAddsUp,
        "summary.requests",
        r.summary.requests,
        sum(|s| s.requests),
        || "Σ merged.shares[].requests".into(),
    );
    f.equal(
        Rule::MergedAddsUp,
        "summary.errors",
        r.summary.errors,
        sum(|s| s.errors),
        || "Σ merged.shares[].errors".into(),
    );
    for (i, l) in m.lost.iter().enumerate() {
        f.check(
            m.missing.contains(&l.index),
            Rule::MergedAddsUp,
            format!("merged.lost[{i}].index"),
            l.index,
            || format!("one of the missing shares, {:?}", m.missing),
        );
    }
}

/// The connections lost generators had reported: in the merged summary, beside the shares'.
fn lost_connections(r: &RunRecord) -> u64 {
    r.merged
        .as_ref()
        .map_or(0, |m| m.lost.iter().map(|l| l.connections_opened).sum())
}

/// A merged record against the records of its shares: every count and every histogram is
/// their sum, exactly.
pub fn shares(merged: &RunRecord, shares: &[RunRecord]) -> Vec<Violation> {
    let mut f = Findings::default();
    let (m, sum) = (&merged.summary, |pick: fn(&RunRecord) -> u64| -> u64 {
        shares.iter().map(pick).sum()
    });
    let counts: [(&str, u64, u64); 7] = [
        ("requests", m.requests, sum(|r| r.summary.requests)),
        ("errors", m.errors, sum(|r| r.summary.errors)),
        ("not_sent", m.not_sent, sum(|r| r.summary.not_sent)),
        ("bytes_sent", m.bytes_sent, sum(|r| r.summary.bytes_sent)),
        (
            "bytes_received",
            m.bytes_received,
            sum(|r| r.summary.bytes_received),
        ),
        (
            "connections_opened",
            m.connections_opened,
            sum(|r| r.summary.connections_opened) + lost_connections(merged),
        ),
        (
            "drain.requests",
            m.drain.requests,
            sum(|r| r.summary.drain.requests),
        ),
    ];
    for (field, whole, parts) in counts {
        f.equal(
            Rule::MergedAddsUp,
            format!("summary.{field}"),
            whole,
            parts,
            || format!("Σ of the shares' summary.{field}"),
        );
    }
    for (field, whole, parts) in [
        (
            "status",
            m.status.clone(),
            add(shares.iter().map(|r| &r.summary.status)),
        ),
        (
            "errors_by_kind",
            named(&m.errors_by_kind),
            add(shares
                .iter()
                .map(|r| &r.summary.errors_by_kind)
                .map(named_ref)),
        ),
    ] {
        f.check(
            whole == parts,
            Rule::MergedAddsUp,
            format!("summary.{field}"),
            format!("{whole:?}"),
            || format!("Σ of the shares' summary.{field} = {parts:?}"),
        );
    }
    histograms(merged, shares, &mut f);
    f.into_vec()
}

fn named<K: std::fmt::Display>(m: &BTreeMap<K, u64>) -> BTreeMap<String, u64> {
    m.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn named_ref<K: std::fmt::Display>(m: &BTreeMap<K, u64>) -> BTreeMap<String, u64> {
    named(m)
}

/// Adds maps of counts key by key.
fn add<M: std::borrow::Borrow<BTreeMap<String, u64>>>(
    maps: impl Iterator<Item = M>,
) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for m in maps {
        for (k, v) in m.borrow() {
            *out.entry(k.clone()).or_insert(0) += v;
        }
    }
    out
}

/// Each histogram of the merged record is the sum of the shares' (where every share has one).
fn histograms(merged: &RunRecord, shares: &[RunRecord], f: &mut Findings) {
    type Pick = fn(&RunRecord) -> Option<&String>;
    let fields: [(&str, Pick); 6] = [
        ("latency_us", |r| Some(&r.histograms.latency_us)),
        ("service_latency_us", |r| {
            r.histograms.service_latency_us.as_ref()
        }),
        ("lag_us", |r| r.histograms.lag_us.as_ref()),
        ("connect_us", |r| r.histograms.connect_us.as_ref()),
        ("tls_handshake_us", |r| {
            r.histograms.tls_handshake_us.as_ref()
        }),
        ("waiting_us", |r| r.histograms.waiting_us.as_ref()),
    ];
    for (field, pick) in fields {
        let Some(whole) = pick(merged).and_then(|h| decode_histogram(h).ok()) else {
            continue;
        };
        let mut sum = crate::record::recorder::new_histogram();
        for part in shares.iter().filter_map(pick) {
            if let Ok(h) = decode_histogram(part) {
                let _ = sum.add(&h);
            }
        }
        let same = whole.len() == sum.len()
            && whole
                .iter_recorded()
                .zip(sum.iter_recorded())
                .all(|(a, b)| {
                    a.value_iterated_to() == b.value_iterated_to()
                        && a.count_at_value() == b.count_at_value()
                })
            && whole.iter_recorded().count() == sum.iter_recorded().count();
        f.check(
            same,
            Rule::MergedAddsUp,
            format!("histograms.{field}"),
            format!("{} values", whole.len()),
            || {
                format!(
                    "the sum of the shares' histograms.{field}, {} values, bucket by bucket",
                    sum.len()
                )
            },
        );
    }
}
