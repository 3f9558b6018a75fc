//! The figures of a suite's measured targets, as report 002 tabled them: one row per target
//! (throughput, mean, p95, p99, error rate, total requests, test duration), with a warning when
//! the targets' test durations differ; then one row per operation and target, steps joined on
//! their operation label (a step's `operation`, else its name), so that `POST /events` on a REST
//! target and `events.v1.Events/Create` on a gRPC target share a row group, and an operation a
//! target does not have is shown as missing there.

use super::find_max;
use super::table::Table;
use crate::analysis::compare::Variant;
use crate::analysis::like_for_like::DURATION_TOLERANCE;
use crate::record::RunRecord;
use crate::record::find_max::FindMax;
use crate::record::model::{BoundFigure, Group, GroupKind, LoadModel};
use crate::record::suite::SuiteOutcome;
use crate::units::{ms, rate, seconds, thousands};

/// What a target's row says for an operation its plan does not have.
pub const MISSING: &str = "missing";

/// "until decided: 3–6 of at most 20 run(s) per target": the runs each target got (fewest–most:
/// a target decided early runs no more), not the most it could have had. A target without a
/// run (it failed, or was not reached, before its first) is not counted: the failures say so.
pub fn until_decided_runs(o: &SuiteOutcome) -> String {
    let runs = o.targets.iter().map(|t| t.records.len()).filter(|&n| n > 0);
    let (fewest, most) = (runs.clone().min().unwrap_or(0), runs.max().unwrap_or(0));
    let got = match fewest == most {
        true => most.to_string(),
        false => format!("{fewest}–{most}"),
    };
    format!(
        "until decided: {got} of at most {} run(s) per target",
        o.repeats
    )
}

/// The median of `values` (`None` when empty).
fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    })
}

/// `errors / attempts` in %, two decimals; `-` without attempts.
fn error_rate(errors: u64, attempts: u64) -> String {
    if attempts == 0 {
        "-".into()
    } else {
        format!("{:.2}%", errors as f64 * 100.0 / attempts as f64)
    }
}

/// Report 002's table: per measured target, the median over its runs of throughput, mean, p95,
/// p99 and test duration, the summed requests and the error rate over all its attempts.
pub fn results(variants: &[Variant]) -> Table {
    let mut t = Table::new(
        "Results per target",
        &[
            "<Target",
            "Throughput (req/s)",
            "Mean (ms)",
            "p95 (ms)",
            "p99 (ms)",
            "Error rate",
            "Requests",
            "Test duration",
        ],
    )
    .with_note(format!(
        "Report 002's table. With repeats, throughput, latencies and duration are the medians \
         over the target's runs; requests are the sum, the error rate is over all its attempts. \
         The test duration is the measured window (warm-up and drain excluded).{}",
        uneven_runs(variants)
    ));
    for v in variants {
        let of = |f: fn(&RunRecord) -> Option<f64>| median(v.runs.iter().filter_map(f).collect());
        let requests: u64 = v.runs.iter().map(|r| r.summary.requests).sum();
        let attempts: u64 = v
            .runs
            .iter()
            .map(|r| r.summary.requests + r.summary.not_sent)
            .sum();
        let errors: u64 = v.runs.iter().map(|r| r.summary.errors).sum();
        t.push([
            v.label.clone(),
            of(|r| Some(r.summary.rps)).map_or_else(|| "-".into(), rate),
            ms(of(|r| r.summary.latency_ms.mean)),
            ms(of(|r| r.summary.latency_ms.p95)),
            ms(of(|r| r.summary.latency_ms.p99)),
            error_rate(errors, attempts),
            thousands(requests),
            of(|r| Some(r.summary.duration_s)).map_or_else(|| "-".into(), seconds),
        ]);
    }
    t
}

/// " The targets ran different numbers of runs (a 8, b 3): …" when they did (a suite until
/// decided stops a target's runs once it is decided), else nothing: summed requests then
/// differ by the runs alone.
fn uneven_runs(variants: &[Variant]) -> String {
    let first = variants.first().map_or(0, |v| v.runs.len());
    if variants.iter().all(|v| v.runs.len() == first) {
        return String::new();
    }
    let counts: Vec<String> = variants
        .iter()
        .map(|v| format!("{} {}", v.label, v.runs.len()))
        .collect();
    format!(
        " The targets ran different numbers of runs ({}): their summed requests differ by that \
         alone; compare the medians.",
        counts.join(", ")
    )
}

/// A warning when the targets' test durations (each the median over its runs) differ by more
/// than [`DURATION_TOLERANCE`] of the first's: their totals, and any rate that hides a stop,
/// are then not comparable.
pub fn duration_warning(variants: &[Variant]) -> Option<String> {
    let durations: Vec<(&str, f64)> = variants
        .iter()
        .filter_map(|v| {
            let d = median(v.runs.iter().map(|r| r.summary.duration_s).collect())?;
            Some((v.label.as_str(), d))
        })
        .collect();
    let (_, base) = *durations.first()?;
    let off = durations
        .iter()
        .any(|(_, d)| base > 0.0 && ((d - base) / base).abs() > DURATION_TOLERANCE);
    off.then(|| {
        format!(
            "Test durations differ by more than {:.0}%: {}. Total requests are not comparable, \
             and a shorter test may have stopped early; compare over equal durations (report \
             002 set a 3.5-minute run beside a 13.5-minute one)",
            DURATION_TOLERANCE * 100.0,
            durations
                .iter()
                .map(|(label, d)| format!("{label} {}", seconds(*d)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// The operation labels of the variants' step groups, in order of first appearance.
pub fn operation_labels(variants: &[Variant]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for g in variants
        .iter()
        .flat_map(|v| &v.runs)
        .flat_map(|r| &r.groups)
        .filter(|g| g.kind == GroupKind::Step)
    {
        if !labels.iter().any(|l| l == g.operation_label()) {
            labels.push(g.operation_label().to_string());
        }
    }
    labels
}

/// One row per operation and target: the step's requests (summed over runs), throughput over
/// its own window, mean, p95 and p99 (medians over runs) and error rate; `missing` where the
/// target's plan has no step with that operation. `None` when no run has steps.
pub fn operations(variants: &[Variant]) -> Option<Table> {
    let labels = operation_labels(variants);
    if labels.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Operations",
        &[
            "<Operation",
            "<Target",
            "Requests",
            "Throughput (req/s)",
            "Mean (ms)",
            "p95 (ms)",
            "p99 (ms)",
            "Error rate",
        ],
    )
    .with_note(format!(
        "Steps joined on their operation label (a step's `operation`, else its name). With \
         repeats, requests are summed and the other figures are medians over runs; throughput is \
         over the step's own window. A target run once shows its step's 95 % interval within \
         that run (±; docs/measurement.md, \"Uncertainty\"). \"missing\": the target's plan has \
         no such operation.{}",
        uneven_runs(variants)
    ));
    for label in &labels {
        for v in variants {
            let steps: Vec<&Group> = v
                .runs
                .iter()
                .flat_map(|r| &r.groups)
                .filter(|g| g.kind == GroupKind::Step && g.operation_label() == label)
                .collect();
            if steps.is_empty() {
                t.push([label.as_str(), v.label.as_str(), MISSING]);
                continue;
            }
            let of =
                |f: fn(&Group) -> Option<f64>| median(steps.iter().filter_map(|g| f(g)).collect());
            // A target run once: the step's own interval, within that run.
            let once = match steps.as_slice() {
                [one] => one.ci95.as_ref(),
                _ => None,
            };
            let with = |text: String, figure: BoundFigure, show: fn(f64) -> String| match once
                .and_then(|ci| ci.get(figure))
            {
                Some(b) => format!("{text} ± {}", show(b.half_width)),
                None => text,
            };
            let in_ms = |v: f64| ms(Some(v));
            let requests: u64 = steps.iter().map(|g| g.requests).sum();
            let attempts: u64 = steps.iter().map(|g| g.requests + g.not_sent).sum();
            let errors: u64 = steps.iter().map(|g| g.errors).sum();
            t.push([
                label.clone(),
                v.label.clone(),
                thousands(requests),
                with(
                    of(|g| Some(g.rps)).map_or_else(|| "-".into(), rate),
                    BoundFigure::Rps,
                    super::uncertainty::rate_half,
                ),
                with(ms(of(|g| g.latency_ms.mean)), BoundFigure::Mean, in_ms),
                with(ms(of(|g| g.latency_ms.p95)), BoundFigure::P95, in_ms),
                with(ms(of(|g| g.latency_ms.p99)), BoundFigure::P99, in_ms),
                error_rate(errors, attempts),
            ]);
        }
    }
    Some(t)
}

/// "Max sustainable throughput, highest first: a 1,980.0 req/s · b 990.0 req/s · c none".
pub(super) fn find_max_ranking(o: &SuiteOutcome) -> String {
    let mut ranked: Vec<(&str, &FindMax)> = o
        .targets
        .iter()
        .filter_map(|t| Some((t.name.as_str(), t.find_max.as_ref()?)))
        .collect();
    ranked.sort_by(
        |a, b| match (a.1.max_sustainable_rps, b.1.max_sustainable_rps) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        },
    );
    format!(
        "Max sustainable throughput{}: {}",
        if ranked.len() > 1 {
            ", highest first"
        } else {
            ""
        },
        ranked
            .iter()
            .map(|(name, f)| match f.max_sustainable_rps {
                Some(_) => format!("{name} {}", find_max::max_sustainable(f)),
                None => format!("{name} none (no level met the SLO)"),
            })
            .collect::<Vec<_>>()
            .join(" · ")
    )
}

/// A target's maximum in the suite's table: `400.0`; `≥ 797.4` when only a lower bound (no
/// break found, the generator saturated, or a budget that ended the bisection with its bracket
/// open); `(not validated)` after one no validation run confirmed ([`FindMax::unvalidated`]);
/// `-` without one.
pub(super) fn max_cell(f: &FindMax) -> String {
    let Some(v) = f.max_sustainable_rps else {
        return "-".into();
    };
    let at_least = f.why_lower_bound().is_some();
    format!(
        "{}{}{}",
        if at_least { "≥ " } else { "" },
        rate(v),
        if f.unvalidated().is_some() {
            " (not validated)"
        } else {
            ""
        }
    )
}

/// What a suite's rounds decided, a line per target for its headline: each target's decision
/// and its metrics' calls, without the method's paragraph or the table's note (which its notes
/// keep in full).
pub(super) fn decided_headline(o: &SuiteOutcome) -> Vec<String> {
    let method = |l: &&str| l.starts_with("Intervals at each look's own level");
    o.decided
        .iter()
        .filter(|d| d.as_str() != super::sequential::TABLE_NOTE)
        .map(|d| {
            let mut line = String::new();
            for l in d
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !method(l))
            {
                if !line.is_empty() {
                    line.push_str(if line.ends_with(':') { " " } else { " · " });
                }
                line.push_str(l);
            }
            line
        })
        .collect()
}

/// A find-max level in words: `400.0/s` (open model) or `32 VUs` (closed).
pub(super) fn load_level(f: &FindMax, level: f64) -> String {
    if f.model == LoadModel::Open {
        format!("{level:.1}/s")
    } else {
        crate::units::vus(level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;

    fn variant(label: &str, ops: &[(&str, Option<&str>)], duration_s: f64) -> Variant {
        let mut r = record(label, 3, 100, 1000, 0, 0.0);
        r.summary.duration_s = duration_s;
        r.groups = ops
            .iter()
            .map(|(name, op)| {
                let mut g = crate::analysis::selfcheck::testing::group(
                    GroupKind::Step,
                    name,
                    Some("s"),
                    100,
                );
                g.operation = op.map(str::to_string);
                g
            })
            .collect();
        Variant {
            label: label.into(),
            source: label.into(),
            runs: vec![r],
        }
    }

    #[test]
    fn steps_join_on_their_operation_and_a_missing_one_is_shown() {
        let v = [
            variant("rest", &[("post", Some("create")), ("get", None)], 10.0),
            variant("grpc", &[("Create", Some("create"))], 10.0),
        ];
        assert_eq!(operation_labels(&v), ["create", "get"]);
        let t = operations(&v).unwrap();
        let rows: Vec<(&str, &str, &str)> = t
            .rows
            .iter()
            .map(|r| (r[0].as_str(), r[1].as_str(), r[2].as_str()))
            .collect();
        assert_eq!(
            rows,
            [
                ("create", "rest", "100"),
                ("create", "grpc", "100"),
                ("get", "rest", "100"),
                ("get", "grpc", MISSING),
            ]
        );
        assert_eq!(duration_warning(&v), None);
    }

    #[test]
    fn a_target_run_once_shows_its_steps_intervals_and_repeats_their_medians() {
        let bound = |value: f64, half_width: f64| crate::record::model::Bound {
            value,
            half_width,
            batches: 8,
            batch_s: 1,
            effective: 8.0,
        };
        let mut once = variant("rest", &[("post", None)], 10.0);
        once.runs[0].groups[0].ci95 = Some(crate::record::model::Ci95 {
            p95_ms: Some(bound(5.1, 0.04)),
            p99_ms: Some(bound(5.38, 0.02)),
            rps: Some(bound(100.0, 2.5)),
            ..Default::default()
        });
        let mut twice = once.clone();
        twice.label = "grpc".into();
        twice.runs.push(twice.runs[0].clone());
        let t = operations(&[once, twice]).unwrap();
        // The fixture's step: 10 req/s, p99 from its histogram; ± only for the single run.
        let [rps, p95, p99] = [3, 5, 6].map(|i| &t.rows[0][i]);
        assert!(rps.ends_with(" ± 2.5") && p95.ends_with(" ± 0.040") && p99.ends_with(" ± 0.020"));
        assert!(!t.rows[1][3].contains('±') && !t.rows[1][6].contains('±'));
    }

    #[test]
    fn summed_requests_of_uneven_runs_are_said_to_be_so() {
        let (a, mut b) = (
            variant("a", &[("get", None)], 10.0),
            variant("b", &[("get", None)], 10.0),
        );
        assert_eq!(uneven_runs(&[a.clone(), b.clone()]), "");
        b.runs.push(b.runs[0].clone());
        let v = [a, b];
        let said = "different numbers of runs (a 1, b 2)";
        assert!(results(&v).note.unwrap().contains(said));
        assert!(operations(&v).unwrap().note.unwrap().contains(said));
    }

    #[test]
    fn until_decided_runs_count_the_targets_that_ran() {
        let target = |name: &str, runs: usize| {
            let mut t =
                crate::record::suite::TargetOutcome::new(name, "", std::path::Path::new(name));
            t.records = vec![std::path::PathBuf::from("run.json"); runs];
            t
        };
        let mut o: SuiteOutcome = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "name": "s", "source": "s.toml", "repeats": 20, "folder": "out",
            "started_at": "", "ended_at": "", "interrupted": null, "targets": []
        }))
        .unwrap();
        o.targets = vec![target("a", 6), target("b", 3), target("broken", 0)];
        assert_eq!(
            until_decided_runs(&o),
            "until decided: 3–6 of at most 20 run(s) per target"
        );
        o.targets.truncate(1);
        assert!(until_decided_runs(&o).starts_with("until decided: 6 of"));
    }

    #[test]
    fn durations_that_differ_are_warned_about() {
        let v = [variant("a", &[], 811.2), variant("b", &[], 211.9)];
        let w = duration_warning(&v).unwrap();
        assert!(w.contains("a 13m31s, b 3m32s"), "{w}");
        assert_eq!(results(&v).rows.len(), 2);
        assert_eq!(results(&v).rows[1][7], "3m32s");
    }
}
