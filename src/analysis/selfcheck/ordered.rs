//! Percentile checks: every latency ladder of the record is ordered and holds its mean.

use super::counts::group_place;
use super::{failed, passed};
use crate::record::model::{Percentiles, RunRecord};
use crate::record::selfcheck::{SelfCheck, SelfCheckCode};

/// Slack for comparing two figures of one ladder, ms: they come from one histogram, so they
/// differ from the exact order only by float rounding.
const SLACK_MS: f64 = 1e-6;

/// The ordered figures of a ladder that are present: min, p10 … p99.99, max.
fn ladder(p: &Percentiles) -> Vec<(String, f64)> {
    p.ladder()
        .iter()
        .filter_map(|(name, v)| Some((name.to_string(), (*v)?)))
        .collect()
}

/// The first disorder of a ladder: "p99 4.100 ms < p95 4.200 ms".
fn disorder(p: &Percentiles) -> Option<(String, f64, f64)> {
    let l = ladder(p);
    for pair in l.windows(2) {
        let ((lo_name, lo), (hi_name, hi)) = (&pair[0], &pair[1]);
        if *hi < lo - SLACK_MS {
            return Some((
                format!("{hi_name} {hi:.3} ms < {lo_name} {lo:.3} ms"),
                *lo,
                *hi,
            ));
        }
    }
    match (p.min, p.mean, p.max) {
        (Some(min), Some(mean), _) if mean < min - SLACK_MS => {
            Some((format!("mean {mean:.3} ms < min {min:.3} ms"), min, mean))
        }
        (_, Some(mean), Some(max)) if mean > max + SLACK_MS => {
            Some((format!("mean {mean:.3} ms > max {max:.3} ms"), mean, max))
        }
        _ => None,
    }
}

/// Every latency ladder of a record, named.
fn ladders(r: &RunRecord) -> Vec<(String, &Percentiles)> {
    let s = &r.summary;
    let t = &s.timing;
    let mut out = vec![("latency".to_string(), &s.latency_ms)];
    let optional = [
        ("service latency", s.service_latency_ms.as_ref()),
        ("connect time", t.connect_ms.as_ref()),
        ("TLS handshake time", t.tls_handshake_ms.as_ref()),
        ("waiting time", t.waiting_ms.as_ref()),
        ("send lag", r.generator.lag_ms.as_ref()),
    ];
    out.extend(
        optional
            .into_iter()
            .filter_map(|(name, p)| Some((name.to_string(), p?))),
    );
    out.extend(r.groups.iter().map(|g| {
        (
            format!(
                "latency of {}",
                group_place(g.kind, &g.name, g.scenario.as_deref())
            ),
            &g.latency_ms,
        )
    }));
    out
}

/// min ≤ p10 ≤ … ≤ p99.99 ≤ max and min ≤ mean ≤ max, for every ladder of the record.
pub(super) fn percentiles_ordered(r: &RunRecord) -> SelfCheck {
    let code = SelfCheckCode::PercentilesOrdered;
    let all = ladders(r);
    for (name, p) in &all {
        if let Some((what, lower, upper)) = disorder(p) {
            return failed(
                code,
                &[("lower_ms", lower), ("upper_ms", upper)],
                format!("the percentiles are out of order: {name}: {what}"),
            );
        }
    }
    let figures: Vec<String> = ladder(&r.summary.latency_ms)
        .into_iter()
        .map(|(n, _)| n.replace('_', "."))
        .collect();
    passed(
        code,
        &[("ladders", all.len() as f64)],
        format!(
            "{} latency ladder(s) ordered ({}) with the mean between min and max",
            all.len(),
            figures.join(" ≤ ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::super::testing::group;
    use super::*;
    use crate::record::fixture::record;
    use crate::record::model::GroupKind;
    use crate::record::selfcheck::SelfCheckOutcome::{Failed, Passed};

    #[test]
    fn the_ladder_follows_the_quantiles_whatever_fields_exist() {
        let r = record("ok", 3, 100, 2000, 0, 0.0);
        let names: Vec<String> = ladder(&r.summary.latency_ms)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let at = |n: &str| names.iter().position(|x| x == n).unwrap();
        assert_eq!(at("min"), 0);
        assert_eq!(at("max"), names.len() - 1);
        assert!(at("p50") < at("p75") && at("p75") < at("p90") && at("p90") < at("p95"));
        assert!(at("p99") < at("p99_9") && at("p99_9") < at("p99_99"));
        assert!(!names.iter().any(|n| n == "mean" || n == "stdev"));
    }

    #[test]
    fn ordered_percentiles_pass() {
        let mut r = record("ok", 3, 100, 2000, 0, 0.0);
        r.groups = vec![group(GroupKind::Step, "get", Some("shop"), 300)];
        let c = percentiles_ordered(&r);
        assert_eq!(c.outcome, Passed, "{c:?}");
        assert_eq!(c.figures["ladders"], 2.0);
    }

    #[test]
    fn a_percentile_below_the_previous_one_fails() {
        let mut r = record("bad", 3, 100, 2000, 0, 0.0);
        let l = &mut r.summary.latency_ms;
        l.p99 = Some(l.p95.unwrap() - 0.1);
        let c = percentiles_ordered(&r);
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!(c.message.contains("latency: p99"), "{}", c.message);
    }

    #[test]
    fn a_max_below_a_percentile_or_a_mean_outside_fails() {
        let mut r = record("bad", 3, 100, 2000, 0, 0.0);
        r.groups = vec![group(GroupKind::Step, "get", Some("shop"), 300)];
        r.groups[0].latency_ms.max = Some(1.0);
        let c = percentiles_ordered(&r);
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!(
            c.message.contains("step get (scenario shop): max"),
            "{}",
            c.message
        );
        let mut r = record("bad", 3, 100, 2000, 0, 0.0);
        r.summary.latency_ms.mean = Some(1000.0);
        let c = percentiles_ordered(&r);
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!(
            c.message.contains("mean 1000.000 ms > max"),
            "{}",
            c.message
        );
        let mut r = record("bad", 3, 100, 2000, 0, 0.0);
        r.generator.lag_ms = Some(r.summary.latency_ms);
        r.generator.lag_ms.as_mut().unwrap().min = Some(100.0);
        let c = percentiles_ordered(&r);
        assert!(c.message.contains("send lag"), "{}", c.message);
    }
}
