//! Like for like across a suite's targets: the load each target's plan sends (VUs, rates,
//! durations, stages, phases) must be the same for the comparison to compare the targets and
//! not the tests, and each operation should be measured on every target.

use std::time::Duration;

use crate::plan::{Iterations, Plan, Scenario};
use crate::record::model::{GroupKind, LoadModel};
use crate::run::describe_scenario;
use crate::units::seconds;

/// The load of one scenario, exactly: what two targets' plans must agree on.
#[derive(Debug, Clone, PartialEq)]
struct ScenarioShape {
    /// The load in words, as the reports write it ("16 VUs for 10.0s").
    words: String,
    /// Open (arrival rate) or closed (VUs).
    model: LoadModel,
    /// Delay after the run's start.
    start_after: Duration,
    /// The ramp: its start level, then each stage's (length, level reached).
    start: f64,
    stages: Vec<(Duration, f64)>,
    /// VUs available to an open scenario.
    max_vus: Option<u32>,
    /// Iteration limits and the time limit of iteration profiles.
    iterations: Option<(Iterations, Option<Duration>)>,
    /// Arrival limit (open model).
    limit: Option<u64>,
    /// Ladder phases: (start, end, VUs, rate).
    phases: Vec<(Duration, Duration, Option<u32>, Option<f64>)>,
}

fn shape(plan: &Plan, sc: &Scenario) -> ScenarioShape {
    let p = &sc.profile;
    let ramp = p.ramp();
    let (max_vus, limit) = (p.in_flight_cap(), p.arrival_limit());
    let iterations = (!p.is_open()).then(|| (p.iterations(), p.max_duration()));
    ScenarioShape {
        words: describe_scenario(plan, sc),
        model: sc.profile.model(),
        start_after: sc.start_after,
        start: ramp.level_at(Duration::ZERO),
        stages: ramp
            .stages()
            .iter()
            .map(|s| (s.duration, s.target))
            .collect(),
        max_vus,
        iterations,
        limit,
        phases: sc
            .phases
            .iter()
            .map(|p| (p.start, p.end, p.vus, p.rate))
            .collect(),
    }
}

/// How the load of plan `b` differs from that of plan `a`, in words; `None` when it is the same.
pub fn difference(a: &Plan, b: &Plan) -> Option<String> {
    if a.scenarios.len() != b.scenarios.len() {
        return Some(format!(
            "{} scenario(s) vs {}",
            a.scenarios.len(),
            b.scenarios.len()
        ));
    }
    if a.warmup != b.warmup {
        return Some(format!(
            "warm-up {} vs {}",
            seconds(a.warmup.as_secs_f64()),
            seconds(b.warmup.as_secs_f64())
        ));
    }
    for (i, (x, y)) in a.scenarios.iter().zip(&b.scenarios).enumerate() {
        let (sx, sy) = (shape(a, x), shape(b, y));
        if sx == sy {
            continue;
        }
        let which = format!("scenario {} (`{}` vs `{}`)", i + 1, x.name, y.name);
        let what = if sx.words != sy.words {
            format!("{} vs {}", sx.words, sy.words)
        } else if sx.start_after != sy.start_after {
            format!(
                "starts after {} vs {}",
                seconds(sx.start_after.as_secs_f64()),
                seconds(sy.start_after.as_secs_f64())
            )
        } else if sx.phases != sy.phases {
            "the same peak and length, but different phases".to_string()
        } else {
            format!("stages {} vs {}", stages(&sx), stages(&sy))
        };
        return Some(format!("{which}: {what}"));
    }
    None
}

/// "0 → 32 in 5.0s, 32 for 10.0s, …"
fn stages(s: &ScenarioShape) -> String {
    let mut level = s.start;
    let mut parts = Vec::new();
    for (d, target) in &s.stages {
        let d = seconds(d.as_secs_f64());
        parts.push(if *target == level {
            format!("{target} for {d}")
        } else {
            format!("{level} → {target} in {d}")
        });
        level = *target;
    }
    format!("[{}]", parts.join(", "))
}

/// The operation labels of `plan`'s steps (the plan's `operation`, else the step's name), in
/// plan order, or the first label two steps share: `Err((label, first, second))` with the steps
/// as `scenario/step`.
pub fn operations(plan: &Plan) -> Result<Vec<String>, (String, String, String)> {
    let mut seen: Vec<(String, String)> = Vec::new();
    for g in plan.groups.iter().filter(|g| g.kind == GroupKind::Step) {
        let label = g.operation.clone().unwrap_or_else(|| g.name.clone());
        let step = format!("{}/{}", g.scenario.as_deref().unwrap_or("-"), g.name);
        if let Some((_, first)) = seen.iter().find(|(l, _)| *l == label) {
            return Err((label, first.clone(), step));
        }
        seen.push((label, step));
    }
    Ok(seen.into_iter().map(|(label, _)| label).collect())
}

/// Per operation missing on some targets: "operation `get` is measured on a, b but not on c".
/// `targets` are (name, its operations).
pub fn missing_operations(targets: &[(&str, Vec<String>)]) -> Vec<String> {
    let mut all: Vec<&str> = Vec::new();
    for (_, ops) in targets {
        for op in ops {
            if !all.contains(&op.as_str()) {
                all.push(op);
            }
        }
    }
    let mut out = Vec::new();
    for op in all {
        let names = |has: bool| -> Vec<&str> {
            targets
                .iter()
                .filter(|(_, ops)| ops.iter().any(|o| o == op) == has)
                .map(|(name, _)| *name)
                .collect()
        };
        let without = names(false);
        if !without.is_empty() {
            out.push(format!(
                "operation `{op}` is measured on {} but not on {}: the comparison shows it as \
                 missing there",
                names(true).join(", "),
                without.join(", ")
            ));
        }
    }
    out
}
