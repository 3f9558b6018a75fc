//! Whether compared runs are like-for-like: same test shape, same tool, same machine, full
//! length. A comparison of a 3.5-minute run with a 13.5-minute one, or of 64 connections with
//! 200, says little about the targets; the header of every comparison says so.

use super::variant::Variant;
use crate::record::model::{RunRecord, WarningCode};
use crate::units::seconds;

/// Measured durations further apart than this share of the baseline's are flagged.
pub const DURATION_TOLERANCE: f64 = 0.10;

/// The name of the target-URL field, for comparisons where the target is the thing tested (a
/// suite runs one test against several targets).
pub const TARGET_URL: &str = "target URL";

type Field = (&'static str, fn(&RunRecord) -> String);

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// The configuration fields that must agree, with how each is shown.
const FIELDS: &[Field] = &[
    ("tool version", |r| r.tool.version.clone()),
    ("load model", |r| r.config.model.to_string()),
    ("connections", |r| opt(r.config.connections)),
    ("rate (req/s)", |r| opt(r.config.rate_per_sec)),
    ("in-flight cap", |r| opt(r.config.max_in_flight)),
    ("duration asked", |r| {
        r.config.duration_s.map_or_else(|| "-".into(), seconds)
    }),
    ("request count asked", |r| opt(r.config.requests)),
    ("warm-up", |r| seconds(r.config.warmup_s)),
    (TARGET_URL, |r| r.config.url.clone()),
    ("method", |r| r.config.method.clone()),
    ("request body (bytes)", |r| r.config.body_bytes.to_string()),
    ("headers", |r| r.config.headers.join("; ")),
    ("keep-alive", |r| r.config.keepalive.to_string()),
    ("generator threads", |r| r.config.threads.to_string()),
    ("machine", |r| {
        format!(
            "{} ({}, {} cores)",
            r.environment.hostname, r.environment.cpu_model, r.environment.cores
        )
    }),
];

/// Why the variants' runs are not like-for-like; empty when they are.
pub fn mismatches(variants: &[Variant]) -> Vec<String> {
    mismatches_except(variants, &[])
}

/// Like [`mismatches`], leaving out the fields named in `expected` (e.g. [`TARGET_URL`]): the
/// differences that are the point of the comparison.
pub fn mismatches_except(variants: &[Variant], expected: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(first) = variants.first().and_then(|v| v.runs.first()) else {
        return out;
    };
    for (name, show) in FIELDS.iter().filter(|(name, _)| !expected.contains(name)) {
        let reference = show(first);
        let differs = variants
            .iter()
            .flat_map(|v| &v.runs)
            .any(|r| show(r) != reference);
        if differs {
            out.push(format!("{name} differs: {}", per_variant(variants, *show)));
        }
    }
    let base = first.summary.duration_s;
    let off = variants.iter().flat_map(|v| &v.runs).any(|r| {
        let d = r.summary.duration_s;
        base > 0.0 && ((d - base) / base).abs() > DURATION_TOLERANCE
    });
    if off {
        let precise = variants.iter().flat_map(|v| &v.runs).any(|r| {
            let ci = r.summary.ci95.as_ref();
            ci.is_some_and(|c| c.precision.as_ref().is_some_and(|p| p.reached))
        });
        out.push(format!(
            "measured duration differs by more than {:.0}%: {}{}",
            DURATION_TOLERANCE * 100.0,
            per_variant(variants, |r| seconds(r.summary.duration_s)),
            match precise {
                true => " (runs asked to last until precise stop when they are)",
                false => "",
            }
        ));
    }
    out
}

/// `A = x; B = y / z` (distinct values per variant, in run order).
fn per_variant(variants: &[Variant], show: fn(&RunRecord) -> String) -> String {
    variants
        .iter()
        .map(|v| {
            let mut values: Vec<String> = Vec::new();
            for r in &v.runs {
                let s = show(r);
                if !values.contains(&s) {
                    values.push(s);
                }
            }
            format!("{} = {}", v.label, values.join(" / "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Notes about individual runs: interrupted, every request failed, warnings raised.
pub fn run_notes(variants: &[Variant]) -> Vec<String> {
    let mut out = Vec::new();
    for v in variants {
        for (i, r) in v.runs.iter().enumerate() {
            let who = if v.runs.len() > 1 {
                format!("{} run {}", v.label, i + 1)
            } else {
                v.label.clone()
            };
            if let Some(signal) = &r.interrupted {
                out.push(format!(
                    "{who} was interrupted ({signal}) after {}: its figures cover only that part",
                    seconds(r.summary.duration_s)
                ));
            }
            if r.summary.requests > 0 && r.summary.errors == r.summary.requests {
                out.push(format!(
                    "{who}: every request failed, so it has no latency figures"
                ));
            }
            let codes: Vec<String> = r
                .warnings
                .iter()
                .filter(|w| !matches!(w.code, WarningCode::Interrupted | WarningCode::AllFailed))
                .map(|w| match (&w.code, r.generator.steal_share) {
                    // How much, since it moves the run's figures by about as much.
                    (WarningCode::CpuSteal, Some(share)) => {
                        format!("cpu_steal ({:.1}% of the CPU time)", share * 100.0)
                    }
                    (code, _) => code.name().to_string(),
                })
                .collect();
            if !codes.is_empty() {
                out.push(format!("{who} warned: {}", codes.join(", ")));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;

    fn variant(label: &str, url: &str) -> Variant {
        let mut r = record(label, 3, 100, 1000, 0, 0.0);
        r.config.url = url.into();
        Variant {
            label: label.into(),
            source: label.into(),
            runs: vec![r],
        }
    }

    #[test]
    fn an_expected_difference_is_not_a_mismatch() {
        let v = [
            variant("a", "http://127.0.0.1:1/"),
            variant("b", "http://127.0.0.1:2/"),
        ];
        let all = mismatches(&v);
        assert_eq!(all.len(), 1, "{all:?}");
        assert!(all[0].starts_with("target URL differs: a = http://127.0.0.1:1/"));
        assert!(mismatches_except(&v, &[TARGET_URL]).is_empty());
        let mut v = v;
        v[1].runs[0].config.connections = Some(99);
        let rest = mismatches_except(&v, &[TARGET_URL]);
        assert_eq!(rest.len(), 1, "{rest:?}");
        assert!(rest[0].starts_with("connections differs"), "{rest:?}");
    }

    #[test]
    fn a_run_the_hypervisor_took_cpu_from_is_noted_with_how_much() {
        let mut v = [
            variant("a", "http://127.0.0.1:1/"),
            variant("b", "http://127.0.0.1:1/"),
        ];
        assert!(run_notes(&v).is_empty());
        let r = &mut v[1].runs[0];
        r.generator.steal_share = Some(0.034);
        r.warnings = crate::analysis::diagnose(r);
        assert_eq!(
            run_notes(&v),
            ["b warned: cpu_steal (3.4% of the CPU time)"]
        );
    }
}
