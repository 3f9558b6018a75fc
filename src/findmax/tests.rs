//! The search against simulated targets of known capacity.

use super::*;
use crate::record::model::LoadModel;

fn config() -> SearchConfig {
    SearchConfig {
        start: 10.0,
        growth: 2.0,
        resolution: 0.01,
        integer: false,
        budget: Duration::from_secs(180),
        step_time: Duration::from_secs(5),
        max_level: 1e6,
        validation_steps: 3,
    }
}

/// A target that holds up to `capacity` req/s and serves at most that.
fn target(capacity: f64) -> impl FnMut(f64, bool) -> FindMaxStep {
    move |level, _| FindMaxStep {
        p99_ms: Some(if level <= capacity { 2.0 } else { 500.0 }),
        reason: String::new(),
        doubtful: level > capacity,
        ..FindMaxStep::test(level, level.min(capacity), level <= capacity)
    }
}

#[test]
fn a_one_off_tail_break_is_run_again_and_ignored() {
    // The first probe of 50/s hits a pause of the machine; every later probe is honest.
    let mut honest = target(200.0);
    let mut first = true;
    let out = search(&config_from(50.0), |level, _| {
        let mut s = honest(level, false);
        if std::mem::take(&mut first) {
            s.held = false;
            s.reason = "latency p99<50ms failed (observed 67.500 ms)".into();
            s.doubtful = true;
        }
        s
    });
    assert!(out.steps[0].noise && !out.steps[1].noise && out.steps[1].held);
    let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &out, Duration::ZERO);
    let found = f.max_sustainable_rps.unwrap();
    assert!((194.0..=200.0).contains(&found), "{found}");
    assert!(f.breaking_load.unwrap() > 200.0);
}

#[test]
fn the_level_limit_is_itself_tried_before_the_search_says_it_was_reached() {
    let mut limited = config_from(800.0);
    limited.max_level = 3_000.0;
    // 800, 1,600, then 3,000 (not 3,200), which breaks: the search bisects below it.
    let out = search(&limited, target(2_000.0));
    assert_eq!(out.steps[2].level, 3_000.0, "{:?}", out.steps);
    assert!(
        !out.stopped.starts_with(STOPPED_LEVEL_LIMIT),
        "{}",
        out.stopped
    );
    // Whole VUs: a limit of 10.5 is 10 VUs, never a fraction.
    let mut vus = config_from(2.0);
    (vus.max_level, vus.integer) = (10.5, true);
    let out = search(&vus, target(50.0));
    let levels: Vec<f64> = out.steps.iter().map(|s| s.level).collect();
    assert!(levels.iter().all(|l| l.fract() == 0.0), "{levels:?}");
    assert_eq!(
        levels.iter().copied().fold(0.0, f64::max),
        10.0,
        "{levels:?}"
    );
    // A target that holds the limit: it was run, and the search says so.
    let out = search(&limited, target(5_000.0));
    assert_eq!(out.steps.last().map(|s| s.level), Some(3_000.0));
    assert!(
        out.stopped.starts_with(STOPPED_LEVEL_LIMIT),
        "{}",
        out.stopped
    );
}

#[test]
fn a_one_off_generator_stall_is_run_again() {
    let mut honest = target(400.0);
    let mut first = true;
    let out = search(&config_from(50.0), |level, _| {
        let mut s = honest(level, false);
        if std::mem::take(&mut first) {
            s.held = false;
            s.generator_limited = true;
            s.doubtful = true;
            s.reason = "the generator sent requests late".into();
        }
        s
    });
    assert!(out.steps[0].noise);
    let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &out, Duration::ZERO);
    assert!(!f.generator_limited, "{:?}", out.steps);
    let found = f.max_sustainable_rps.unwrap();
    assert!((388.0..=400.0).contains(&found), "{found}");
}

#[test]
fn a_tail_break_seen_twice_is_believed() {
    let out = search(&config_from(50.0), |level, _| FindMaxStep {
        doubtful: true,
        took: None,
        ..target(100.0)(level, false)
    });
    let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &out, Duration::ZERO);
    assert!(out.steps.iter().all(|s| !s.noise));
    let found = f.max_sustainable_rps.unwrap();
    assert!((97.0..=100.0).contains(&found), "{found}");
    // Each break was run again at its level, and the second run says it is one.
    for pair in out.steps.windows(2) {
        let twice = pair[0].level == pair[1].level && !pair[1].validation;
        assert_eq!(pair[1].rerun, twice, "{:?}", out.steps);
        assert!(!twice || !pair[0].held, "{:?}", out.steps);
    }
    assert!(out.steps.iter().any(|s| s.rerun));
}

fn config_from(start: f64) -> SearchConfig {
    SearchConfig { start, ..config() }
}

#[test]
fn a_coarser_resolution_stops_sooner_and_no_validation_is_none() {
    let capacity = 800.0;
    let searched = |resolution, validation_steps| {
        let c = SearchConfig {
            resolution,
            validation_steps,
            ..config()
        };
        search(&c, target(capacity))
    };
    let (fine, coarse) = (searched(0.01, 3), searched(0.05, 3));
    let bisected = |o: &SearchOutcome| o.steps.iter().filter(|s| !s.validation).count();
    assert!(bisected(&coarse) + 2 <= bisected(&fine), "{coarse:?}");
    let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &coarse, Duration::ZERO);
    let found = f.max_sustainable_rps.unwrap();
    assert!(found <= capacity && found >= capacity * 0.95, "{found}");
    // No validation: the bisection's step is the answer, and nothing says it was validated.
    let bare = searched(0.01, 0);
    assert!(bare.steps.iter().all(|s| !s.validation), "{bare:?}");
    assert_eq!(bare.stopped, STOPPED_CONVERGED);
}

#[test]
fn finds_known_capacities_within_resolution() {
    for capacity in [37.0, 200.0, 400.0, 800.0, 12_345.0] {
        let out = search(&config(), target(capacity));
        let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &out, Duration::ZERO);
        let found = f.max_sustainable_rps.unwrap();
        assert!(
            found <= capacity && found >= capacity * 0.99,
            "{capacity}: {found} ({})",
            out.stopped
        );
        assert!(out.steps.len() as u64 * 5 <= 180);
        assert!(
            out.stopped
                .starts_with("the bisection converged; validated at")
        );
        // The reported figure is the validation's, the last step.
        let last = out.steps.last().unwrap();
        assert!(last.validation && last.held && f.max_sustainable_rps == Some(last.rps));
        assert!(f.breaking_load.unwrap() > capacity);
    }
}

#[test]
fn a_level_that_fails_its_validation_is_stepped_down_from() {
    // Short steps hold up to 200/s; the target sustains only 197/s over a longer run.
    let out = search(&config(), |level, validation| {
        target(if validation { 197.0 } else { 200.0 })(level, validation)
    });
    let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &out, Duration::ZERO);
    let found = f.max_sustainable_rps.unwrap();
    assert!(
        (193.0..=197.0).contains(&found),
        "{found} ({})",
        out.stopped
    );
    assert!(
        out.stopped.contains("failed, stepped down to"),
        "{}",
        out.stopped
    );
    let validations: Vec<&FindMaxStep> = out.steps.iter().filter(|s| s.validation).collect();
    // 200 fails, 198 (1 % down) fails, 194.04 (2 % further) holds.
    assert_eq!(validations.len(), 3, "{:?}", out.steps);
    assert!(!validations[0].held && !validations[1].held && validations[2].held);
}

#[test]
fn few_vus_step_down_one_at_least_when_a_validation_fails() {
    // Short steps hold up to 40 VUs, a validation only up to 38: 1 % below 40 rounds back
    // to 40, so the first step down is one VU (39), the next 2 % (38). Before, the search
    // stopped after the one validation, saying "and each step down".
    let mut c = config();
    (c.start, c.integer) = (5.0, true);
    let out = search(&c, |level, validation| {
        target(if validation { 38.0 } else { 40.0 })(level, validation)
    });
    let levels: Vec<f64> = out
        .steps
        .iter()
        .filter(|s| s.validation)
        .map(|s| s.level)
        .collect();
    assert_eq!(levels, [40.0, 39.0, 38.0], "{}", out.stopped);
    assert!(
        out.stopped
            .ends_with("stepped down to 38, which held over 3 steps"),
        "{}",
        out.stopped
    );
    let f = FindMax::from_outcome(LoadModel::Closed, "p99<50ms", &out, Duration::ZERO);
    assert_eq!(f.max_sustainable_load, Some(38.0));
    // At one VU there is no lower level, and the reason says so.
    c.start = 1.0;
    let out = search(&c, |level, validation| {
        target(if validation { 0.5 } else { 1.0 })(level, validation)
    });
    assert!(
        out.stopped
            .ends_with("the validation failed at 1, the lowest level"),
        "{}",
        out.stopped
    );
}

#[test]
fn an_interrupted_step_ends_the_search_and_breaks_nothing() {
    let out = search(&config(), |level, v| FindMaxStep {
        interrupted: level >= 80.0,
        held: level < 80.0,
        ..target(1e6)(level, v)
    });
    assert_eq!(out.stopped, STOPPED_INTERRUPTED);
    let levels: Vec<f64> = out.steps.iter().map(|s| s.level).collect();
    assert_eq!(levels, [10.0, 20.0, 40.0, 80.0]);
    let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &out, Duration::ZERO);
    assert_eq!(f.breaking_load, None);
    assert!(!f.generator_limited);
    assert_eq!(f.max_sustainable_load, Some(40.0));
    assert_eq!(
        f.lower_bound.as_deref(),
        Some("no break found before the search was interrupted")
    );
    // During a validation: the validation is not a failed one, and the bracket's level stands.
    let out = search(&config(), |level, v| FindMaxStep {
        interrupted: v,
        held: !v && level <= 100.0,
        ..target(100.0)(level, v)
    });
    assert!(
        out.stopped
            .starts_with("the search was interrupted while validating"),
        "{}",
        out.stopped
    );
    let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &out, Duration::ZERO);
    assert_eq!(
        f.unvalidated(),
        Some("the search was interrupted while validating")
    );
    assert!(
        (99.0..=100.0).contains(&f.max_sustainable_load.unwrap()),
        "{f:?}"
    );
    assert!(f.breaking_load.unwrap() > 100.0);
}

#[test]
fn a_break_whose_run_again_was_interrupted_is_no_break() {
    // 100/s holds; 200/s breaks in its tail (doubtful), and its run again is interrupted.
    let mut runs_of_200 = 0;
    let out = search(&config_from(100.0), |level, v| {
        let mut s = target(150.0)(level, v);
        if level == 200.0 {
            runs_of_200 += 1;
            if runs_of_200 == 2 {
                (s.interrupted, s.doubtful) = (true, false);
            }
        }
        s
    });
    assert_eq!(out.stopped, STOPPED_INTERRUPTED);
    assert!(
        out.steps[1].reason.contains("not confirmed"),
        "{:?}",
        out.steps
    );
    let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &out, Duration::ZERO);
    assert_eq!(f.breaking_load, None, "{f:?}");
    assert_eq!(
        f.lower_bound.as_deref(),
        Some("no break found before the search was interrupted")
    );
    // The peak is the first run of 200/s, which was whole.
    assert_eq!((f.peak_rps, f.peak_load), (150.0, 200.0));
}

#[test]
fn budget_bounds_the_search() {
    let mut c = config();
    c.budget = Duration::from_secs(20);
    let out = search(&c, target(1e5));
    assert_eq!(out.steps.len(), 4);
    assert_eq!(out.stopped, "the time budget was spent");
}

#[test]
fn a_budget_spent_before_the_bracket_closed_says_how_wide_it_is() {
    // 10, 20 and 40 held, 80 broke: four steps fill 20 s, and the maximum is not known to
    // better than 40–80.
    let mut c = config();
    c.budget = Duration::from_secs(20);
    let out = search(&c, target(50.0));
    assert_eq!(
        out.stopped,
        "the time budget was spent before the bisection converged: the maximum lies \
         between 40 and 80, not validated"
    );
    let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &out, Duration::ZERO);
    assert_eq!(
        (f.max_sustainable_load, f.breaking_load),
        (Some(40.0), Some(80.0))
    );
}

#[test]
fn a_tail_break_with_no_time_to_run_it_again_says_so() {
    // 30 s: 10, 20 and 40 held, 80 broke twice (25 s), 60 broke once at 30 s, with no time
    // left to run it again.
    let mut c = config();
    c.budget = Duration::from_secs(30);
    let out = search(&c, target(50.0));
    let levels: Vec<f64> = out.steps.iter().map(|s| s.level).collect();
    assert_eq!(levels, [10.0, 20.0, 40.0, 80.0, 80.0, 60.0]);
    assert!(
        out.steps[5]
            .reason
            .ends_with("— not run again: no time was left"),
        "{:?}",
        out.steps[5]
    );
    assert!(
        out.stopped
            .ends_with("the maximum lies between 40 and 60, not validated"),
        "{}",
        out.stopped
    );
}

#[test]
fn the_budget_charges_what_a_step_took() {
    // Steps of a nominal 5 s that `--precision` ended after 2 s: 20 s fit eight of them
    // (each begun only while a whole step still fits), where steps charged at their nominal
    // length fit four (above).
    let mut c = config();
    c.budget = Duration::from_secs(20);
    let out = search(&c, |level, v| FindMaxStep {
        took: Some(Duration::from_secs(2)),
        ..target(1e5)(level, v)
    });
    assert_eq!(out.steps.len(), 8, "{:?}", out.steps);
    assert_eq!(out.stopped, "the time budget was spent");
}

#[test]
fn generator_saturation_ends_the_search_without_a_false_maximum() {
    let out = search(&config(), |level, v| FindMaxStep {
        generator_limited: level >= 160.0,
        ..target(1e6)(level, v)
    });
    assert_eq!(
        out.stopped,
        "the load generator saturated before the target did"
    );
    let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &out, Duration::ZERO);
    assert!(f.generator_limited);
    assert_eq!(f.breaking_load, None);
}

#[test]
fn closed_model_levels_are_whole_vus() {
    let mut c = config();
    c.start = 1.0;
    c.integer = true;
    let out = search(&c, target(23.0));
    assert!(out.steps.iter().all(|s| s.level.fract() == 0.0));
    let f = FindMax::from_outcome(LoadModel::Closed, "p99<50ms", &out, Duration::ZERO);
    assert_eq!(f.max_sustainable_load, Some(23.0));
}

#[test]
fn a_first_level_that_breaks_searches_downwards() {
    let mut c = config();
    c.start = 1000.0;
    let out = search(&c, target(100.0));
    let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &out, Duration::ZERO);
    let found = f.max_sustainable_rps.unwrap();
    assert!((97.0..=100.0).contains(&found), "{found}");
    // Broken at every level: down to a sixteenth of the start (it went on to 0.001/s).
    let out = search(&config_from(50.0), target(0.0));
    let mut levels: Vec<f64> = out.steps.iter().map(|s| s.level).collect();
    levels.dedup(); // each doubtful break is run again
    assert_eq!(
        (levels, out.stopped.as_str()),
        (vec![50.0, 25.0, 12.5, 6.25, 3.125], STOPPED_FLOOR)
    );
}
