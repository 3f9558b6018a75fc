//! What the profile made the VUs do during the measured window, worked out from the plan for the
//! Little's-law self-check ([`crate::analysis::selfcheck`]), which reads only the record.

use std::time::Duration;

use crate::analysis::selfcheck::ExpectedLoad;
use crate::plan::{Plan, Scenario};
use crate::record::model::{GroupKind, RunRecord};

/// Finest step of the numerical integral of the VU count, seconds.
const STEP_S: f64 = 0.001;
/// Most steps of that integral.
const MAX_STEPS: f64 = 200_000.0;

/// Works out [`ExpectedLoad`] from the plan and its record (the measured window
/// `summary.duration_s`, the steps' request counts).
pub fn expected_load(plan: &Plan, r: &RunRecord) -> ExpectedLoad {
    let na = |why: &str| ExpectedLoad::NotApplicable(why.into());
    if plan.scenarios.iter().any(Scenario::is_open) {
        return na(
            "open model: the arrival rate sets the load, and the requests in flight it implies \
             are a result, not a figure to check against",
        );
    }
    let per_vu = |s: &Scenario| s.profile.per_vu_iterations().is_some();
    if plan.scenarios.iter().any(per_vu) {
        return na(
            "per-VU iterations: each VU stops when its own iterations are done, at a time the \
             record does not keep",
        );
    }
    let warmup = plan.warmup.as_secs_f64();
    let window = (warmup, warmup + r.summary.duration_s);
    // Each scenario's VUs count only while it was active: a scenario that ended when its
    // iterations were done, or that waits for `start_after`, keeps none busy.
    let active = |s: &Scenario| {
        let span = r
            .groups
            .iter()
            .find(|g| g.kind == GroupKind::Scenario && g.name == s.name)
            .and_then(|g| Some((warmup + g.start_s?, warmup + g.end_s?)));
        match span {
            Some((from, to)) => (window.0.max(from), window.1.min(to)),
            None => window,
        }
    };
    let active_vu_s = plan
        .scenarios
        .iter()
        .map(|s| active_vu_seconds(s, active(s)))
        .sum();
    // The think time and pacing waits the VUs recorded (drawn per request, so counted as they
    // fell): in the scenario groups, or the totals' in quick mode.
    let think_vu_s = match r.groups.iter().any(|g| g.kind == GroupKind::Scenario) {
        true => r
            .groups
            .iter()
            .filter(|g| g.kind == GroupKind::Scenario)
            .map(|g| g.think_s + g.pacing_s)
            .sum(),
        false => r
            .groups
            .iter()
            .filter(|g| g.kind == GroupKind::Step)
            .map(|g| g.think_s)
            .sum(),
    };
    ExpectedLoad::Closed {
        active_vu_s,
        think_vu_s,
    }
}

/// VUs of a closed-model scenario active at `u` seconds after its start (the gate's rule).
fn active_vus(s: &Scenario, u: f64) -> f64 {
    if s.is_open() {
        return 0.0;
    }
    let ramp = s.profile.ramp();
    let ends = |d: Duration| u >= d.as_secs_f64();
    if u < 0.0 || ends(ramp.total()) || s.duration().is_some_and(ends) {
        return 0.0;
    }
    let level = ramp.level_at(Duration::from_secs_f64(u));
    (level + 1e-9).floor().clamp(0.0, f64::from(s.max_vus()))
}

/// ∫ active VUs dt over `window` (seconds since the run's start), VU-seconds.
fn active_vu_seconds(s: &Scenario, window: (f64, f64)) -> f64 {
    let (from, to) = window;
    if to <= from {
        return 0.0;
    }
    let steps = ((to - from) / STEP_S).ceil().clamp(1.0, MAX_STEPS);
    let dt = (to - from) / steps;
    let offset = s.start_after.as_secs_f64();
    (0..steps as u64)
        .map(|i| active_vus(s, from + (i as f64 + 0.5) * dt - offset) * dt)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::selfcheck::testing;
    use crate::record::fixture::record;

    fn plan(toml: &str) -> Plan {
        let text = format!("[target]\nbase_url = \"http://127.0.0.1:8080\"\n{toml}");
        crate::plan::read::read_str(&text, std::path::Path::new("t.toml"), &Default::default())
            .and_then(|d| d.prepare())
            .unwrap()
    }

    fn active(load: ExpectedLoad) -> (f64, f64) {
        match load {
            ExpectedLoad::Closed {
                active_vu_s,
                think_vu_s,
            } => (active_vu_s, think_vu_s),
            ExpectedLoad::NotApplicable(why) => panic!("not applicable: {why}"),
        }
    }

    #[test]
    fn the_active_vus_follow_the_ramp_and_the_scenario_starts() {
        let p = plan(
            r#"
[[scenario]]
name = "ramp"
[scenario.load]
profile = "ramping-vus"
stages = [{ duration = "10s", target = 10 }]
[[scenario.step]]
name = "a"
path = "/"
[[scenario]]
name = "late"
start_after = "2s"
[scenario.load]
profile = "constant-vus"
vus = 3
duration = "4s"
[[scenario.step]]
name = "b"
path = "/"
"#,
        );
        let mut r = record("ramp", 10, 100, 2000, 0, 0.0);
        // Ramp 0→10 VUs over 10 s: VU i runs once the level reaches i + 1, so ∫ = 0+1+…+9.
        // The late scenario: 3 VUs for 4 s.
        let (vu_s, think) = active(expected_load(&p, &r));
        assert!((vu_s - (45.0 + 12.0)).abs() < 0.05, "{vu_s}");
        assert_eq!(think, 0.0);
        // A window that ends early (an interrupted run) integrates only what it covers.
        r.summary.duration_s = 4.0;
        let (vu_s, _) = active(expected_load(&p, &r));
        assert!((vu_s - (6.0 + 6.0)).abs() < 0.05, "{vu_s}");
    }

    #[test]
    fn think_time_and_pacing_are_what_the_vus_recorded() {
        let p = plan(
            r#"
[[scenario]]
name = "shop"
pace = "1s"
[scenario.load]
profile = "constant-vus"
vus = 4
duration = "5s"
[[scenario.step]]
name = "browse"
path = "/"
think = { exponential = "100ms" }
"#,
        );
        let mut r = record("think", 5, 100, 2000, 0, 0.0);
        let mut browse = testing::group(GroupKind::Step, "browse", Some("shop"), 50);
        browse.think_s = 4.0;
        let mut shop = testing::group(GroupKind::Scenario, "shop", None, 50);
        (shop.think_s, shop.pacing_s) = (4.0, 1.5);
        r.groups = vec![shop, browse];
        let (vu_s, think) = active(expected_load(&p, &r));
        assert!((vu_s - 20.0).abs() < 0.01, "{vu_s}");
        assert!((think - 5.5).abs() < 1e-9, "{think}");
        // Without scenario groups, the steps' think time.
        r.groups.remove(0);
        assert!((active(expected_load(&p, &r)).1 - 4.0).abs() < 1e-9);
    }

    #[test]
    fn quick_mode_warm_up_and_the_models_without_a_vu_count() {
        let mut input = crate::plan::RunInput::new("http://127.0.0.1:8080/");
        input.concurrency = Some(4);
        input.duration = Some(Duration::from_secs(2));
        input.warmup = Duration::from_secs(1);
        let p = input.clone().validate().unwrap().prepare().unwrap();
        let mut r = record("quick", 2, 100, 2000, 0, 0.0);
        // The window starts after the warm-up and lasts the 2 s asked; the ramp covers both.
        let (vu_s, _) = active(expected_load(&p, &r));
        assert!((vu_s - 8.0).abs() < 0.01, "{vu_s}");
        r.summary.duration_s = 0.5;
        let (vu_s, _) = active(expected_load(&p, &r));
        assert!((vu_s - 2.0).abs() < 0.01, "{vu_s}");
        input.rate_per_sec = Some(100.0);
        let open = input.validate().unwrap().prepare().unwrap();
        assert!(matches!(
            expected_load(&open, &r),
            ExpectedLoad::NotApplicable(why) if why.starts_with("open model")
        ));
        let per_vu = plan(
            r#"
[[scenario]]
name = "each"
[scenario.load]
profile = "per-vu-iterations"
vus = 2
iterations = 10
[[scenario.step]]
name = "a"
path = "/"
"#,
        );
        assert!(matches!(
            expected_load(&per_vu, &r),
            ExpectedLoad::NotApplicable(why) if why.starts_with("per-VU")
        ));
    }
}
