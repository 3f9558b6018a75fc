//! Counts: attempts, requests, responses and errors add up, for the run and every group, and
//! the groups add up to their parents.

use std::collections::BTreeMap;

use super::{Findings, Rule};
use crate::analysis::selfcheck::with_status;
use crate::record::decode_histogram;
use crate::record::error_kind::ErrorKind;
use crate::record::model::{GroupKind, RunRecord, error_rate};

/// The counts of one place of a record: the run (`summary`) or one group (`groups[i]`).
struct Place<'a> {
    path: String,
    requests: u64,
    not_sent: u64,
    errors: u64,
    status: &'a BTreeMap<String, u64>,
    errors_by_kind: &'a BTreeMap<ErrorKind, u64>,
    histogram: &'a str,
    histogram_path: String,
}

fn places(r: &RunRecord) -> Vec<Place<'_>> {
    let s = &r.summary;
    let run = Place {
        path: "summary".into(),
        requests: s.requests,
        not_sent: s.not_sent,
        errors: s.errors,
        status: &s.status,
        errors_by_kind: &s.errors_by_kind,
        histogram: &r.histograms.latency_us,
        histogram_path: "histograms.latency_us".into(),
    };
    let groups = r.groups.iter().enumerate().map(|(i, g)| Place {
        path: format!("groups[{i}]"),
        requests: g.requests,
        not_sent: g.not_sent,
        errors: g.errors,
        status: &g.status,
        errors_by_kind: &g.errors_by_kind,
        histogram: &g.histogram_us,
        histogram_path: format!("groups[{i}].histogram_us"),
    });
    std::iter::once(run).chain(groups).collect()
}

fn sum_where(by_kind: &BTreeMap<ErrorKind, u64>, keep: impl Fn(ErrorKind) -> bool) -> u64 {
    by_kind
        .iter()
        .filter(|(k, _)| keep(**k))
        .map(|(_, n)| n)
        .sum()
}

/// Every count rule of `r`.
pub(super) fn check(r: &RunRecord, f: &mut Findings) {
    let s = &r.summary;
    f.equal(
        Rule::AttemptsAddUp,
        "summary.attempts",
        s.attempts,
        s.requests + s.not_sent,
        || {
            format!(
                "summary.requests + summary.not_sent = {} + {}",
                s.requests, s.not_sent
            )
        },
    );
    for p in places(r) {
        place(&p, f);
    }
    buckets(r, f);
    let expected = s.error_rate().map_or(0.0, |e| 1.0 - e);
    f.close(
        Rule::SuccessRate,
        "summary.success_rate",
        s.success_rate,
        expected,
        || {
            format!(
                "1 − (errors − generator-limited) / (attempts − generator-limited), from {} \
                 errors of {} attempts",
                s.errors,
                s.requests + s.not_sent
            )
        },
    );
    groups(r, f);
}

/// The latency buckets count every response, at the bounds the run asked for (and one above).
fn buckets(r: &RunRecord, f: &mut Findings) {
    let b = &r.summary.latency_buckets;
    let responses: u64 = r.summary.status.values().sum();
    let counted: u64 = b.iter().map(|b| b.count).sum();
    f.equal(
        Rule::HistogramCount,
        "summary.latency_buckets",
        counted,
        responses,
        || "one latency per response: Σ summary.status".into(),
    );
    let asked = &r.config.latency_buckets_ms;
    if asked.is_empty() {
        return;
    }
    let found: Vec<Option<f64>> = b.iter().map(|b| b.le_ms).collect();
    let same = found.len() == asked.len() + 1
        && found.last() == Some(&None)
        && found
            .iter()
            .zip(asked)
            .all(|(le, a)| le.is_some_and(|le| (le - a).abs() < 1e-3));
    f.check(
        same,
        Rule::HistogramCount,
        "summary.latency_buckets",
        format!("{found:?}"),
        || format!("one bucket per bound of config.latency_buckets_ms {asked:?}, and one above"),
    );
}

/// The rules every place must hold.
fn place(p: &Place<'_>, f: &mut Findings) {
    let responses: u64 = p.status.values().sum();
    let without = sum_where(p.errors_by_kind, |k| !k.has_response());
    let attempts = p.requests + p.not_sent;
    f.equal(
        Rule::ResponsesAddUp,
        format!("{}.requests", p.path),
        attempts,
        responses + without,
        || {
            format!(
                "responses (Σ {0}.status) + failures without a response = {responses} + \
                 {without}, for requests + not_sent",
                p.path
            )
        },
    );
    let by_kind: u64 = p.errors_by_kind.values().sum();
    f.equal(
        Rule::ErrorsAddUp,
        format!("{}.errors", p.path),
        p.errors,
        by_kind,
        || format!("Σ {}.errors_by_kind", p.path),
    );
    let never_sent = sum_where(p.errors_by_kind, ErrorKind::never_sent);
    f.equal(
        Rule::ErrorsAddUp,
        format!("{}.not_sent", p.path),
        p.not_sent,
        never_sent,
        || format!("Σ {}.errors_by_kind of the kinds never sent", p.path),
    );
    f.check(
        p.errors <= attempts,
        Rule::ErrorsAddUp,
        format!("{}.errors", p.path),
        p.errors,
        || format!("at most the attempts, {attempts}"),
    );
    let kind = |k| p.errors_by_kind.get(&k).copied().unwrap_or(0);
    for (k, range) in [
        (ErrorKind::Http4xx, 400..=499),
        (ErrorKind::Http5xx, 500..=599),
    ] {
        let statuses = with_status(p.status, range);
        f.check(
            kind(k) <= statuses,
            Rule::ErrorsAddUp,
            format!("{}.errors_by_kind.{}", p.path, k.name()),
            kind(k),
            || format!("at most the responses with such a status, {statuses}"),
        );
    }
    match decode_histogram(p.histogram) {
        Ok(h) => f.equal(
            Rule::HistogramCount,
            p.histogram_path.clone(),
            h.len(),
            responses,
            || format!("one latency per response: Σ {}.status", p.path),
        ),
        Err(why) => f.check(
            false,
            Rule::HistogramCount,
            p.histogram_path.clone(),
            why,
            || "a readable HDR V2 histogram".into(),
        ),
    }
}

/// Requests, errors and not-sent attempts of a set of groups.
fn sum<'a>(groups: impl Iterator<Item = &'a crate::record::model::Group>) -> [u64; 3] {
    groups.fold([0; 3], |t, g| {
        [t[0] + g.requests, t[1] + g.errors, t[2] + g.not_sent]
    })
}

const COUNTS: [&str; 3] = ["requests", "errors", "not_sent"];

/// Scenarios add up to the run; steps to their scenario; phases hold at most their scenario.
fn groups(r: &RunRecord, f: &mut Findings) {
    let of = |kind: GroupKind| r.groups.iter().filter(move |g| g.kind == kind);
    let s = &r.summary;
    let run = [s.requests, s.errors, s.not_sent];
    if of(GroupKind::Scenario).next().is_some() {
        let parts = sum(of(GroupKind::Scenario));
        for i in 0..3 {
            f.equal(
                Rule::GroupsAddUp,
                format!("summary.{}", COUNTS[i]),
                run[i],
                parts[i],
                || format!("Σ groups[kind = scenario].{}", COUNTS[i]),
            );
        }
    }
    for (si, sc) in r.groups.iter().enumerate() {
        if sc.kind != GroupKind::Scenario {
            continue;
        }
        let whole = [sc.requests, sc.errors, sc.not_sent];
        let mine = |kind| of(kind).filter(|g| g.scenario.as_deref() == Some(sc.name.as_str()));
        if mine(GroupKind::Step).next().is_some() {
            let think: f64 = mine(GroupKind::Step).map(|g| g.think_s).sum();
            f.close(
                Rule::GroupsAddUp,
                format!("groups[{si}].think_s"),
                sc.think_s,
                think,
                || format!("Σ groups.think_s of the steps of scenario {}", sc.name),
            );
            let parts = sum(mine(GroupKind::Step));
            for i in 0..3 {
                f.equal(
                    Rule::GroupsAddUp,
                    format!("groups[{si}].{}", COUNTS[i]),
                    whole[i],
                    parts[i],
                    || {
                        format!(
                            "Σ {}.{} of the steps of scenario {}",
                            "groups", COUNTS[i], sc.name
                        )
                    },
                );
            }
        }
        let phases = sum(mine(GroupKind::Phase));
        for i in 0..3 {
            f.check(
                phases[i] <= whole[i],
                Rule::GroupsAddUp,
                format!("groups[{si}].{}", COUNTS[i]),
                whole[i],
                || format!("at least Σ of its phases' {}, {}", COUNTS[i], phases[i]),
            );
        }
    }
    // The error rate of each group, as the summary's, is derived: nothing recorded to check.
    let _ = error_rate;
}
