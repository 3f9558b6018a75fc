//! The load a run asked for, in words — one wording for the banner, the terminal summary, the
//! Markdown and HTML reports: "closed model, 4 connections × 16 streams, 10.0s" in quick mode,
//! "smoke: 10 VUs for 3.0s; saturation: ladder of 4 phases up to 200 VUs over 12.0s, from
//! 3.0s" for a plan.

use crate::record::model::{
    ArrivalSchedule, LoadModel, Model, ProfileKind, RunRecord, ScenarioConfig, ScenarioLoad,
};
use crate::redact::redact_url_userinfo;
use crate::units::{rate, seconds, thousands};

/// What was tested, in one line: `GET URL — load, length` in quick mode, `plan PATH against
/// URL — scenarios` for a plan.
pub fn subtitle(r: &RunRecord) -> String {
    let c = &r.config;
    let url = redact_url_userinfo(&c.url);
    match &c.plan {
        Some(plan) => format!("plan {plan} against {url} — {}", load_shape(r)),
        None => format!("{} {url} — {}, {}", c.method, load_shape(r), length(r)),
    }
}

/// The load in words. Quick mode: "closed model, 32 connections", "closed model, 4 connections ×
/// 16 streams (64 in flight)", "open model, 1,000.0 req/s, at most 200 in flight". A plan: each
/// scenario's profile, "smoke: 10 VUs for 3.0s; …". Poisson arrivals say so, with their seed.
pub fn load_shape(r: &RunRecord) -> String {
    let poisson = r
        .config
        .scenarios
        .iter()
        .filter_map(|s| s.load.as_ref())
        .find(|l| l.arrivals == Some(ArrivalSchedule::Poisson));
    match poisson {
        Some(l) => format!(
            "{}, Poisson arrivals (seed {})",
            shape(r),
            l.seed.map_or_else(|| "?".into(), |s| s.to_string())
        ),
        None => shape(r),
    }
}

fn shape(r: &RunRecord) -> String {
    let c = &r.config;
    if c.plan.is_none() || c.scenarios.is_empty() {
        let model = if c.model == Model::Open {
            LoadModel::Open
        } else {
            LoadModel::Closed
        };
        let vus = c.connections.unwrap_or(0);
        return quick_shape(
            model,
            vus.div_ceil(c.streams.max(1)),
            c.streams,
            c.rate_per_sec.unwrap_or(0.0),
            c.max_in_flight.unwrap_or(0),
        );
    }
    c.scenarios
        .iter()
        .map(scenario_words)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Quick mode's load: `connections` (closed model: each with `streams` requests in flight), or an
/// arrival rate (requests per second) with at most `max_in_flight` in flight.
pub fn quick_shape(
    model: LoadModel,
    connections: u32,
    streams: u32,
    rate_per_sec: f64,
    max_in_flight: u32,
) -> String {
    match model {
        LoadModel::Open if streams > 1 => format!(
            "open model, {} req/s, at most {max_in_flight} in flight ({streams} streams per \
             connection)",
            rate(rate_per_sec)
        ),
        LoadModel::Open => format!(
            "open model, {} req/s, at most {max_in_flight} in flight",
            rate(rate_per_sec)
        ),
        LoadModel::Closed if streams > 1 => format!(
            "closed model, {connections} connections × {streams} streams ({} in flight)",
            u64::from(connections) * u64::from(streams)
        ),
        LoadModel::Closed if connections == 1 => "closed model, 1 connection".into(),
        LoadModel::Closed => format!("closed model, {connections} connections"),
    }
}

/// One scenario of a record. Records of older versions have no figures; their profile words
/// stand in.
fn scenario_words(s: &ScenarioConfig) -> String {
    let load = s
        .load
        .as_ref()
        .map_or_else(|| s.profile.clone(), describe_load);
    scenario_line(&s.name, &load, s.start_after_s)
}

/// One scenario of a plan: "name: its load, from 3.0s" (`start_after_s` seconds after the run's
/// start).
pub fn scenario_line(name: &str, load: &str, start_after_s: f64) -> String {
    if start_after_s > 0.0 {
        format!("{name}: {load}, from {}", seconds(start_after_s))
    } else {
        format!("{name}: {load}")
    }
}

/// A scenario's load profile in words: "10 VUs for 3.0s", "up to 500 VUs over 3m30s (3
/// stages)", "ladder of 4 phases up to 200 VUs over 12.0s", "100.0 iterations/s for 30.0s, at
/// most 50 VUs".
pub fn describe_load(l: &ScenarioLoad) -> String {
    let vus = crate::units::vus(f64::from(l.peak_vus.unwrap_or(0)));
    let max_vus = l.max_vus.unwrap_or(0);
    let per_sec = rate(l.peak_rate_per_sec.unwrap_or(0.0));
    let over = l.duration_s.map(seconds).unwrap_or_else(|| "-".into());
    let n = thousands(l.iterations.unwrap_or(0));
    match (l.profile, l.model) {
        (ProfileKind::ConstantVus, _) => format!("{vus} for {over}"),
        (ProfileKind::Iterations, _) => format!("{n} iterations shared by {vus}"),
        (ProfileKind::PerVuIterations, _) => format!("{n} iterations per VU, {vus}"),
        (ProfileKind::ConstantArrivalRate, _) if l.iterations.is_some() => {
            format!("{n} iterations at {per_sec}/s, at most {max_vus} in flight")
        }
        (ProfileKind::ConstantArrivalRate, _) => {
            format!("{per_sec} iterations/s for {over}, at most {max_vus} VUs")
        }
        (ProfileKind::Ladder, LoadModel::Closed) => {
            format!("ladder of {} phases up to {vus} over {over}", l.stages)
        }
        (ProfileKind::Ladder, LoadModel::Open) => format!(
            "ladder of {} phases up to {per_sec} iterations/s over {over}, at most {max_vus} VUs",
            l.stages
        ),
        // The ramping profiles, and the words of any profile without words of its own: its
        // peak, length and stages, by its model.
        (_, LoadModel::Closed) => {
            format!("up to {vus} over {over} ({})", stages(l.stages))
        }
        (_, LoadModel::Open) => format!(
            "up to {per_sec} iterations/s over {over} ({}), at most {max_vus} VUs",
            stages(l.stages)
        ),
    }
}

fn stages(n: u32) -> String {
    if n == 1 {
        "1 stage".into()
    } else {
        format!("{n} stages")
    }
}

/// The run's length as asked: "10.0s" or "50,000 requests".
pub fn length(r: &RunRecord) -> String {
    match (r.config.duration_s, r.config.requests) {
        (Some(d), _) => seconds(d),
        (None, Some(n)) => format!("{} requests", thousands(n)),
        _ => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;

    fn load(profile: ProfileKind, model: LoadModel) -> ScenarioLoad {
        ScenarioLoad {
            model,
            profile,
            peak_vus: (model == LoadModel::Closed).then_some(200),
            peak_rate_per_sec: (model == LoadModel::Open).then_some(600.0),
            max_vus: (model == LoadModel::Open).then_some(100),
            duration_s: Some(12.0),
            iterations: None,
            stages: 4,
            connections: None,
            arrivals: None,
            seed: None,
        }
    }

    #[test]
    fn http2_streams_are_connections_times_streams() {
        let mut r = record("h2", 1, 10, 1000, 0, 0.0);
        r.config.connections = Some(64);
        r.config.streams = 16;
        assert_eq!(
            load_shape(&r),
            "closed model, 4 connections × 16 streams (64 in flight)"
        );
        r.config.streams = 1;
        r.config.connections = Some(8);
        assert_eq!(
            subtitle(&r),
            "GET http://127.0.0.1:8080/ — closed model, 8 connections, 1.0s"
        );
    }

    #[test]
    fn a_plan_is_described_by_its_scenarios() {
        let mut r = record("ladder", 1, 10, 1000, 0, 0.0);
        r.config.plan = Some("002-ladder.toml".into());
        r.config.method = "(plan)".into();
        r.config.connections = None;
        r.config.duration_s = None;
        let scenario = |name: &str, start: f64, load: Option<ScenarioLoad>| ScenarioConfig {
            name: name.into(),
            profile: "old words".into(),
            start_after_s: start,
            steps: vec!["s".into()],
            load,
        };
        let smoke = ScenarioLoad {
            peak_vus: Some(10),
            duration_s: Some(3.0),
            stages: 1,
            ..load(ProfileKind::ConstantVus, LoadModel::Closed)
        };
        r.config.scenarios = vec![
            scenario("smoke", 0.0, Some(smoke)),
            scenario(
                "saturation",
                3.0,
                Some(load(ProfileKind::Ladder, LoadModel::Closed)),
            ),
            scenario("old", 0.0, None),
        ];
        assert_eq!(
            subtitle(&r),
            "plan 002-ladder.toml against http://127.0.0.1:8080/ — smoke: 10 VUs for 3.0s; \
             saturation: ladder of 4 phases up to 200 VUs over 12.0s, from 3.0s; old: old words"
        );
    }

    #[test]
    fn every_profile_has_words() {
        for (kind, model, words) in [
            (
                ProfileKind::RampingVus,
                LoadModel::Closed,
                "up to 200 VUs over 12.0s (4 stages)",
            ),
            (
                ProfileKind::RampingArrivalRate,
                LoadModel::Open,
                "up to 600.0 iterations/s over 12.0s (4 stages), at most 100 VUs",
            ),
            (
                ProfileKind::Ladder,
                LoadModel::Open,
                "ladder of 4 phases up to 600.0 iterations/s over 12.0s, at most 100 VUs",
            ),
            (
                ProfileKind::ConstantArrivalRate,
                LoadModel::Open,
                "600.0 iterations/s for 12.0s, at most 100 VUs",
            ),
        ] {
            assert_eq!(describe_load(&load(kind, model)), words);
        }
    }
}
