//! A search's headline figures are what its steps give: `find_max`'s maximum, peak, break,
//! saturation and lower bound recomputed from `find_max.steps` ([`FindMax::from_outcome`]), and
//! the record's own figures are those of the step the maximum comes from ([`best_step`]).

use std::time::Duration;

use super::{Findings, Rule, near};
use crate::record::find_max::{FindMax, SearchOutcome, best_step};
use crate::record::model::RunRecord;

/// [`Rule::FindMaxAgrees`].
pub(super) fn check(r: &RunRecord, f: &mut Findings) {
    let Some(found) = &r.find_max else { return };
    let outcome = SearchOutcome {
        steps: found.steps.clone(),
        stopped: found.stopped.clone(),
    };
    let again = FindMax::from_outcome(found.model, &found.slo, &outcome, Duration::ZERO);
    let figures = [
        (
            "max_sustainable_rps",
            found.max_sustainable_rps,
            again.max_sustainable_rps,
        ),
        (
            "max_sustainable_load",
            found.max_sustainable_load,
            again.max_sustainable_load,
        ),
        ("peak_rps", Some(found.peak_rps), Some(again.peak_rps)),
        ("peak_load", Some(found.peak_load), Some(again.peak_load)),
        ("breaking_load", found.breaking_load, again.breaking_load),
    ];
    for (name, recorded, from_steps) in figures {
        f.check(
            same(recorded, from_steps),
            Rule::FindMaxAgrees,
            format!("find_max.{name}"),
            shown(recorded),
            || format!("{} (from find_max.steps)", shown(from_steps)),
        );
    }
    let words = [
        (
            "breaking_reason",
            found.breaking_reason.clone(),
            again.breaking_reason,
        ),
        ("lower_bound", found.why_lower_bound(), again.lower_bound),
    ];
    for (name, recorded, from_steps) in words {
        f.check(
            recorded == from_steps,
            Rule::FindMaxAgrees,
            format!("find_max.{name}"),
            format!("{recorded:?}"),
            || format!("{from_steps:?} (from find_max.steps)"),
        );
    }
    f.check(
        found.generator_limited == again.generator_limited,
        Rule::FindMaxAgrees,
        "find_max.generator_limited",
        found.generator_limited,
        || format!("{} (from find_max.steps)", again.generator_limited),
    );
    let Some(i) = best_step(&found.steps) else {
        return;
    };
    let (step, s) = (&found.steps[i], &r.summary);
    // The measured length: only in records that keep it per step.
    let length = step
        .measured_s
        .map(|m| ("duration_s", Some(s.duration_s), Some(m)));
    let kept = [
        ("rps", Some(s.rps), Some(step.rps)),
        ("latency_ms.p50", s.latency_ms.p50, step.p50_ms),
        ("latency_ms.p99", s.latency_ms.p99, step.p99_ms),
    ]
    .into_iter()
    .chain(length);
    for (name, recorded, of_step) in kept {
        f.check(
            same(recorded, of_step),
            Rule::FindMaxAgrees,
            format!("summary.{name}"),
            shown(recorded),
            || {
                format!(
                    "{} (find_max.steps[{i}], the step the maximum comes from)",
                    shown(of_step)
                )
            },
        );
    }
    let reached = s
        .ci95
        .as_ref()
        .and_then(|c| c.precision.as_ref())
        .is_some_and(|p| p.reached);
    f.check(
        !step.precise || reached,
        Rule::FindMaxAgrees,
        format!("find_max.steps[{i}].precise"),
        step.precise,
        || format!("{reached} (summary.ci95.precision.reached of the step's own record)"),
    );
}

/// Both figures present and equal (to rounding), or both absent.
fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => near(a, b),
        (a, b) => a.is_none() && b.is_none(),
    }
}

/// A figure or `null`.
fn shown(v: Option<f64>) -> String {
    v.map_or_else(|| "null".into(), |v| v.to_string())
}
