//! Percentiles: every latency ladder of a record is ordered and holds its mean, and the run's
//! and each group's are what their histograms give.

use super::{Findings, Rule, near};
use crate::record::decode_histogram;
use crate::record::figures::percentiles;
use crate::record::model::{Percentiles, RunRecord};

/// Slack for two figures of one ladder, ms: they come from one histogram, so they differ from
/// the exact order only by float rounding.
const SLACK_MS: f64 = 1e-6;

/// The run's ladders beside its latency that a record may leave out, each with its JSON path
/// and its histogram in `histograms`: service latency, connect, TLS handshake, waiting, lag.
fn optional(r: &RunRecord) -> [(&'static str, Option<&Percentiles>, Option<&String>); 5] {
    let (s, h) = (&r.summary, &r.histograms);
    let t = &s.timing;
    [
        (
            "summary.service_latency_ms",
            s.service_latency_ms.as_ref(),
            h.service_latency_us.as_ref(),
        ),
        (
            "summary.timing.connect_ms",
            t.connect_ms.as_ref(),
            h.connect_us.as_ref(),
        ),
        (
            "summary.timing.tls_handshake_ms",
            t.tls_handshake_ms.as_ref(),
            h.tls_handshake_us.as_ref(),
        ),
        (
            "summary.timing.waiting_ms",
            t.waiting_ms.as_ref(),
            h.waiting_us.as_ref(),
        ),
        (
            "generator.lag_ms",
            r.generator.lag_ms.as_ref(),
            h.lag_us.as_ref(),
        ),
    ]
}

/// Every ladder of a record with its JSON path.
fn ladders(r: &RunRecord) -> Vec<(String, &Percentiles)> {
    let s = &r.summary;
    let mut out = vec![("summary.latency_ms".to_string(), &s.latency_ms)];
    out.extend(
        optional(r)
            .into_iter()
            .filter_map(|(path, p, _)| Some((path.to_string(), p?))),
    );
    out.extend(
        r.groups
            .iter()
            .enumerate()
            .map(|(i, g)| (format!("groups[{i}].latency_ms"), &g.latency_ms)),
    );
    let streams = std::iter::once(("summary.streams".to_string(), s.streams.as_ref())).chain(
        r.groups
            .iter()
            .enumerate()
            .map(|(i, g)| (format!("groups[{i}].streams"), g.streams.as_ref())),
    );
    for (path, st) in streams {
        let Some(st) = st else { continue };
        out.push((format!("{path}.ttft_ms"), &st.ttft_ms));
        out.push((format!("{path}.message_gap_ms"), &st.message_gap_ms));
        out.push((format!("{path}.stream_ms"), &st.stream_ms));
        if let Some(l) = &st.llm {
            out.push((format!("{path}.llm.tpot_ms"), &l.tpot_ms));
        }
    }
    out
}

/// min ≤ p10 ≤ … ≤ p99.99 ≤ max and min ≤ mean ≤ max, for every ladder of `r`.
pub(super) fn check(r: &RunRecord, f: &mut Findings) {
    for (path, p) in ladders(r) {
        let present: Vec<(&str, f64)> = p
            .ladder()
            .into_iter()
            .filter_map(|(name, v)| Some((name, v?)))
            .collect();
        for pair in present.windows(2) {
            let ((lo_name, lo), (hi_name, hi)) = (pair[0], pair[1]);
            f.check(
                hi >= lo - SLACK_MS,
                Rule::PercentilesOrdered,
                format!("{path}.{hi_name}"),
                hi,
                || format!("at least {path}.{lo_name} = {lo}"),
            );
        }
        if let (Some(min), Some(mean), Some(max)) = (p.min, p.mean, p.max) {
            f.check(
                mean >= min - SLACK_MS && mean <= max + SLACK_MS,
                Rule::PercentilesOrdered,
                format!("{path}.mean"),
                mean,
                || format!("between {path}.min = {min} and {path}.max = {max}"),
            );
        }
    }
}

/// [`Rule::LadderFromHistogram`]: `summary.latency_ms` is what `histograms.latency_us` gives,
/// each group's `latency_ms` what its `histogram_us` gives (an undecodable histogram is
/// `histogram_count`'s finding); and each figure the run's other ladders give (service
/// latency, send lag, connect, TLS handshake, waiting) is what its histogram gives.
pub(super) fn from_histograms(r: &RunRecord, f: &mut Findings) {
    let run = (
        "summary.latency_ms".to_string(),
        &r.summary.latency_ms,
        &r.histograms.latency_us,
    );
    let groups = r.groups.iter().enumerate().map(|(i, g)| {
        (
            format!("groups[{i}].latency_ms"),
            &g.latency_ms,
            &g.histogram_us,
        )
    });
    for (path, ladder, encoded) in std::iter::once(run).chain(groups) {
        against_histogram(&path, ladder, encoded, Rungs::All, f);
    }
    for (path, ladder, encoded) in optional(r) {
        if let (Some(ladder), Some(encoded)) = (ladder, encoded) {
            against_histogram(path, ladder, encoded, Rungs::Given, f);
        }
    }
}

/// Which rungs of a ladder must be what its histogram gives.
#[derive(Clone, Copy, PartialEq)]
enum Rungs {
    /// Every rung, and a rung left out only where the histogram gives none.
    All,
    /// Those the record gives: a rung left out claims nothing.
    Given,
}

/// `ladder` (at `path`) against what the histogram `encoded` gives.
fn against_histogram(
    path: &str,
    ladder: &Percentiles,
    encoded: &str,
    rungs: Rungs,
    f: &mut Findings,
) {
    let Ok(h) = decode_histogram(encoded) else {
        return;
    };
    let again = percentiles(&h);
    let mean = [("mean", ladder.mean, again.mean)];
    let pairs = ladder.ladder().into_iter().zip(again.ladder());
    let all = pairs.map(|((name, found), (_, expected))| (name, found, expected));
    for (name, found, expected) in all.chain(mean) {
        let agree = match (found, expected) {
            (Some(a), Some(b)) => near(a, b),
            (None, _) if rungs == Rungs::Given => true,
            (a, b) => a.is_none() && b.is_none(),
        };
        let shown = |v: Option<f64>| v.map_or_else(|| "null".into(), |v| v.to_string());
        f.check(
            agree,
            Rule::LadderFromHistogram,
            format!("{path}.{name}"),
            shown(found),
            || format!("{} from its histogram", shown(expected)),
        );
    }
}
