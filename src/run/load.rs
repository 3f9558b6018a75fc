//! The load a plan's scenarios ask for, as the record's figures ([`ScenarioLoad`]); the words for
//! them are [`crate::report::load`]'s, so the banner, `volley check` and every report say the same.

use std::time::Duration;

use crate::plan::{Iterations, Plan, Profile, Scenario};
use crate::record::model::{LoadModel, ProfileKind, ScenarioLoad};
use crate::report::load::describe_load;

/// The figures of `sc`'s load profile. In quick mode (`plan.quick`) they also say the
/// connections: the VUs over the HTTP/2 streams per connection.
pub fn scenario_load(plan: &Plan, sc: &Scenario) -> ScenarioLoad {
    let ladder = !sc.phases.is_empty();
    let duration_s = sc.duration().map(|d| d.as_secs_f64());
    match &sc.profile {
        Profile::Vus {
            ramp, iterations, ..
        } => {
            let peak = ramp.peak().ceil() as u32;
            let constant = is_constant(ramp);
            let (profile, count) = match iterations {
                _ if ladder => (ProfileKind::Ladder, None),
                Iterations::Shared(n) => (ProfileKind::Iterations, Some(*n)),
                Iterations::PerVu(n) => (ProfileKind::PerVuIterations, Some(*n)),
                Iterations::Unlimited if constant => (ProfileKind::ConstantVus, None),
                Iterations::Unlimited => (ProfileKind::RampingVus, None),
            };
            ScenarioLoad {
                model: LoadModel::Closed,
                profile,
                peak_vus: Some(peak),
                peak_rate_per_sec: None,
                max_vus: None,
                duration_s,
                iterations: count,
                stages: stage_count(sc, ramp.stages().len()),
                connections: plan
                    .quick
                    .is_some()
                    .then(|| peak.div_ceil(plan.target.connect.streams.max(1))),
            }
        }
        Profile::Arrival {
            ramp,
            max_vus,
            limit,
        } => ScenarioLoad {
            model: LoadModel::Open,
            profile: if ladder {
                ProfileKind::Ladder
            } else if is_constant(ramp) {
                ProfileKind::ConstantArrivalRate
            } else {
                ProfileKind::RampingArrivalRate
            },
            peak_vus: None,
            peak_rate_per_sec: Some(ramp.peak()),
            max_vus: Some(*max_vus),
            duration_s,
            iterations: *limit,
            stages: stage_count(sc, ramp.stages().len()),
            connections: None,
        },
    }
}

/// A scenario's load in words ("10 VUs for 3.0s", "ladder of 4 phases up to 200 VUs over 12.0s"),
/// as the reports write it.
pub fn describe_scenario(plan: &Plan, sc: &Scenario) -> String {
    describe_load(&scenario_load(plan, sc))
}

/// Whether a ramp holds one level throughout.
fn is_constant(ramp: &crate::schedule::Ramp) -> bool {
    let start = ramp.level_at(Duration::ZERO);
    ramp.stages().len() == 1 && ramp.stages()[0].target == start
}

/// A ladder's phases, else the ramp's stages.
fn stage_count(sc: &Scenario, stages: usize) -> u32 {
    let n = if sc.phases.is_empty() {
        stages
    } else {
        sc.phases.len()
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}
