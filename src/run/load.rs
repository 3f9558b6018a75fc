//! The load a plan's scenarios ask for, as the record's figures ([`ScenarioLoad`]); the words for
//! them are [`crate::report::load`]'s, so the banner, `volley check` and every report say the same.

use crate::plan::{Plan, Scenario};
use crate::record::model::{ArrivalSchedule, LoadModel, ScenarioLoad};
use crate::report::load::describe_load;
use crate::schedule::ArrivalProcess;

/// The figures of `sc`'s load profile. In quick mode (`plan.quick`) they also say the
/// connections: the VUs over the HTTP/2 streams per connection.
pub fn scenario_load(plan: &Plan, sc: &Scenario) -> ScenarioLoad {
    let p = &sc.profile;
    let model = p.model();
    let peak = p.ramp().peak();
    let closed = model == LoadModel::Closed;
    ScenarioLoad {
        model,
        profile: p.kind(sc.is_ladder()),
        peak_vus: closed.then_some(peak.ceil() as u32),
        peak_rate_per_sec: (!closed).then_some(peak),
        max_vus: p.in_flight_cap(),
        duration_s: sc.duration().map(|d| d.as_secs_f64()),
        iterations: p.iteration_count().or(p.per_vu_iterations()),
        stages: stage_count(sc, p.ramp().stages().len()),
        connections: (closed && plan.quick.is_some())
            .then(|| (peak.ceil() as u32).div_ceil(plan.target.connect.streams.max(1))),
        arrivals: p.arrival_process().map(|a| match a {
            ArrivalProcess::Uniform => ArrivalSchedule::Uniform,
            ArrivalProcess::Poisson { .. } => ArrivalSchedule::Poisson,
        }),
        seed: p.arrival_process().and_then(ArrivalProcess::seed),
    }
}

/// A scenario's load in words ("10 VUs for 3.0s", "ladder of 4 phases up to 200 VUs over 12.0s"),
/// as the reports write it.
pub fn describe_scenario(plan: &Plan, sc: &Scenario) -> String {
    describe_load(&scenario_load(plan, sc))
}

/// A ladder's phases, else the ramp's stages.
fn stage_count(sc: &Scenario, stages: usize) -> u32 {
    let n = if !sc.is_ladder() {
        stages
    } else {
        sc.phases.len()
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}
