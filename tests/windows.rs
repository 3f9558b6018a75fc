//! The windows rates are divided by, and the open model's asked-against-achieved figures
//! (docs/measurement.md, "Windows" and "Rates"), against the built-in target.

mod common;

use std::path::Path;

use serde_json::Value;

use common::{run_json, summary_f64, summary_u64, target, temp_dir};

/// Writes `plan` (with `BASE` replaced by the target's URL) and runs it; the record.
fn run_plan(dir: &Path, base: &str, plan: &str) -> Value {
    let path = dir.join("plan.toml");
    std::fs::write(&path, plan.replace("BASE", base)).unwrap();
    let (out, record) = run_json(dir, &["run", path.to_str().unwrap(), "--threads", "1"]);
    assert!(
        out.status.code().is_some_and(|c| c == 0 || c == 99),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    record
}

/// Requests that hang until the timeout must not stretch the window: `-d 2s` is 2 s, the time
/// spent waiting out the timeouts is the drain, reported on its own, and the throughput is that
/// of the window (what the per-second series shows), not diluted by the drain.
#[test]
fn the_drain_is_in_no_denominator() {
    let t = target();
    let dir = temp_dir("windows-drain");
    let record = run_plan(
        &dir,
        &t.base_url(),
        r#"
name = "drain"
[target]
base_url = "BASE"
timeout = "3s"
[[scenario]]
name = "s"
flow = "weighted"
[scenario.load]
profile = "constant-vus"
vus = 20
duration = "2s"
[[scenario.step]]
name = "fast"
path = "/delay?ms=1"
weight = 97
[[scenario.step]]
name = "hangs"
path = "/delay?ms=60000"
weight = 3
"#,
    );
    let s = &record["summary"];
    let duration = summary_f64(&record, "duration_s");
    assert!(
        (1.95..2.2).contains(&duration),
        "the window is the 2 s asked for, not {duration} s: {s}"
    );
    let drain = s["drain"]["duration_s"].as_f64().unwrap();
    assert!(drain > 0.5, "the timeouts are waited out in the drain: {s}");
    let drained = s["drain"]["requests"].as_u64().unwrap();
    assert!(drained >= 1, "{s}");
    let requests = summary_u64(&record, "requests");
    let rps = summary_f64(&record, "rps");
    let expected = (requests - drained) as f64 / duration;
    assert!(
        (rps - expected).abs() < 0.01 * expected,
        "rps {rps} = requests in the window / window ({expected}): {s}"
    );
    // The per-second series of the window agrees with the headline rate.
    let seconds: Vec<f64> = record["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["span_s"].as_f64() == Some(1.0) && x["t_s"].as_u64() < Some(2))
        .map(|x| x["requests"].as_f64().unwrap())
        .collect();
    assert_eq!(seconds.len(), 2, "{}", record["series"]);
    let series = seconds.iter().sum::<f64>() / 2.0;
    assert!(
        (rps - series).abs() < 0.15 * series,
        "headline {rps} req/s against the series' {series} req/s"
    );
    // Exactly: the series goes by completion time, so its seconds of the window hold the
    // window's requests, and the drained ones are after it (a worker's timer that woke late
    // once put some of them in the window's last second).
    let in_window: u64 = record["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["t_s"].as_u64() < Some(2))
        .map(|x| x["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(in_window, requests - drained, "{}", record["series"]);
    t.stop();
}

/// A scenario that ran 1 s of a 3 s plan is divided by its 1 s, a ladder phase by its own span.
#[test]
fn groups_use_their_own_window() {
    let t = target();
    let dir = temp_dir("windows-groups");
    let record = run_plan(
        &dir,
        &t.base_url(),
        r#"
name = "groups"
[target]
base_url = "BASE"
[[scenario]]
name = "early"
[scenario.load]
profile = "constant-vus"
vus = 4
duration = "1s"
[[scenario.step]]
name = "first"
path = "/delay?ms=5"

[[scenario]]
name = "late"
start_after = "1s"
[scenario.load]
profile = "ladder"
phases = [{ vus = 2, duration = "1s" }, { vus = 4, duration = "1s" }]
[[scenario.step]]
name = "second"
path = "/delay?ms=5"
"#,
    );
    assert!((summary_f64(&record, "duration_s") - 3.0).abs() < 0.1);
    for (kind, name, window) in [
        ("scenario", "early", 1.0),
        ("step", "first", 1.0),
        ("scenario", "late", 2.0),
        ("phase", "phase 1: 2 VUs", 1.0),
        ("phase", "phase 2: 4 VUs", 1.0),
    ] {
        let g = common::group(&record, kind, name);
        let w = g["window_s"].as_f64().unwrap();
        assert!((w - window).abs() < 0.05, "{kind} {name}: window {w}: {g}");
        let in_window = (g["requests"].as_u64().unwrap() - g["drained"].as_u64().unwrap()) as f64;
        let rps = g["rps"].as_f64().unwrap();
        assert!(
            (rps - in_window / window).abs() < 0.06 * rps,
            "{kind} {name}: {rps} req/s for {in_window} requests in {window} s"
        );
    }
    // 4 VUs at ~5 ms each: several hundred per second, whatever the plan's length.
    let early = common::group(&record, "scenario", "early")["rps"]
        .as_f64()
        .unwrap();
    assert!(early > 300.0, "{early}");
    let phases = record["groups"].as_array().unwrap().iter();
    let starts: Vec<f64> = phases
        .filter(|g| g["kind"] == "phase")
        .map(|g| g["start_s"].as_f64().unwrap())
        .collect();
    assert_eq!(starts, vec![1.0, 2.0], "phases in the run's time");
    t.stop();
}

/// An open-model plan whose iteration is two requests: the asked and achieved figures are
/// iterations, never requests; a ramp's asked figure is its mean over the window, not its peak.
#[test]
fn the_open_model_compares_iterations_with_iterations() {
    let t = target();
    let dir = temp_dir("windows-arrival");
    let record = run_plan(
        &dir,
        &t.base_url(),
        r#"
name = "arrival"
[target]
base_url = "BASE"
[[scenario]]
name = "two-steps"
[scenario.load]
profile = "ramping-arrival-rate"
start_rate = 0
stages = [{ duration = "2s", target = 100 }]
max_vus = 50
[[scenario.step]]
name = "a"
path = "/delay?ms=1"
[[scenario.step]]
name = "b"
path = "/delay?ms=1"
"#,
    );
    let s = &record["summary"];
    let a = &s["arrival"];
    assert_eq!(a["requests_per_iteration"], 2, "{s}");
    // The integral of 0 → 100/s over 2 s is 100 iterations: 50/s on average.
    assert_eq!(a["due"], 100, "{a}");
    let asked = a["asked_per_sec"].as_f64().unwrap();
    assert!((asked - 50.0).abs() < 1.0, "{a}");
    let achieved = a["achieved_per_sec"].as_f64().unwrap();
    assert!(achieved > 45.0 && achieved <= asked + 0.01, "{a}");
    assert!(s["target_rps"].is_null(), "no request rate was asked: {s}");
    assert_eq!(s["iterations"], a["started"]);
    // Two requests per iteration.
    let rps = summary_f64(&record, "rps");
    assert!(
        (rps - 2.0 * achieved).abs() < 0.1 * rps,
        "{rps} vs {achieved}"
    );
    let codes = common::warning_codes(&record);
    assert!(!codes.contains(&"rate_not_achieved"), "{codes:?}");
    t.stop();
}

/// Quick mode's open model: one request per iteration, so the asked rate is a request rate.
#[test]
fn quick_open_model_asks_requests() {
    let t = target();
    let dir = temp_dir("windows-quick-open");
    let url = format!("{}/delay?ms=1", t.base_url());
    let (_, record) = run_json(&dir, &[&url, "--rate", "200", "-d", "2s", "--threads", "1"]);
    let s = &record["summary"];
    assert_eq!(s["arrival"]["requests_per_iteration"], 1);
    assert_eq!(s["arrival"]["due"], 400, "{s}");
    assert!(
        (s["target_rps"].as_f64().unwrap() - 200.0).abs() < 0.5,
        "{s}"
    );
    assert_eq!(s["attempts"], s["requests"]);
    assert_eq!(s["not_sent"], 0);
    t.stop();
}

/// A timed run's window is its scheduled length even when its last request finished long before
/// the end: 2/s over 2 s sends at 0, 0.5, 1 and 1.5 s, so 4 over 2 s, asked and achieved 2/s
/// (the window once ended at the last response, 1.5 s, and reported 2.7 req/s asked). A closed
/// ramp down to no VUs keeps its ramp-down too.
#[test]
fn a_timed_run_is_measured_over_its_whole_schedule() {
    let t = target();
    let dir = temp_dir("windows-sparse");
    let url = format!("{}/delay?ms=1", t.base_url());
    let (_, record) = run_json(&dir, &[&url, "--rate", "2", "-d", "2s", "--threads", "1"]);
    let s = &record["summary"];
    assert_eq!(s["requests"], 4, "{s}");
    assert!(
        (summary_f64(&record, "duration_s") - 2.0).abs() < 0.01,
        "{s}"
    );
    for rate in [
        &s["target_rps"],
        &s["rps"],
        &s["arrival"]["achieved_per_sec"],
    ] {
        assert!((rate.as_f64().unwrap() - 2.0).abs() < 0.01, "{s}");
    }
    // The series covers the window: each second whole, with its two responses.
    let series: Vec<(u64, f64, u64)> = record["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["t_s"].as_u64().unwrap(),
                x["span_s"].as_f64().unwrap(),
                x["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(series, vec![(0, 1.0, 2), (1, 1.0, 2)]);

    let plan = r#"
[target]
base_url = "BASE"
[[scenario]]
name = "down"
[scenario.load]
profile = "ramping-vus"
stages = [{ duration = "1s", target = 4 }, { duration = "2s", target = 0 }]
[[scenario.step]]
name = "root"
path = "/"
"#;
    let record = run_plan(&dir, &t.base_url(), plan);
    let d = summary_f64(&record, "duration_s");
    assert!((d - 3.0).abs() < 0.01, "the ramp-down is measured: {d}");
    t.stop();
}

/// `-d 1s --warmup 1s` measures 1 s after 1 s of warm-up (the warm-up once ate the duration).
#[test]
fn the_warm_up_comes_before_the_duration() {
    let t = target();
    let dir = temp_dir("windows-warmup");
    let url = format!("{}/delay?ms=1", t.base_url());
    for model in [&["-c", "2"][..], &["--rate", "200"][..]] {
        let mut args = vec![url.as_str(), "-d", "1s", "--warmup", "1s", "--threads", "1"];
        args.extend_from_slice(model);
        let (_, record) = run_json(&dir, &args);
        let duration = summary_f64(&record, "duration_s");
        assert!((0.95..1.15).contains(&duration), "{model:?}: {duration}");
        assert_eq!(record["config"]["duration_s"], 1.0, "{model:?}");
        assert!(summary_u64(&record, "warmup_requests") > 50, "{model:?}");
        assert!(summary_u64(&record, "requests") > 100, "{model:?}");
    }
    // The first line says what is measured after the warm-up (it once said 2.0s for `-d 1s`).
    let out = dir.join("banner");
    let args = [
        url.as_str(),
        "-d",
        "1s",
        "--warmup",
        "1s",
        "-c",
        "2",
        "--threads",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    let (code, stdout, stderr) = common::run_volley(&args);
    assert_eq!(code, Some(0));
    let banner = format!("{stderr}{stdout}");
    let first = banner.lines().find(|l| l.starts_with("volley: ")).unwrap();
    assert!(
        first.contains("closed model, 2 connections, 1.0s, after 1s warm-up"),
        "{first}"
    );
    t.stop();
}

/// A ladder of two-step iterations: every request belongs to the phase its iteration started in,
/// so the phases add up to their scenario (a second step sent after the last phase ended once
/// belonged to none).
#[test]
fn phases_add_up_to_their_scenario() {
    let t = target();
    let dir = temp_dir("windows-phases");
    let record = run_plan(
        &dir,
        &t.base_url(),
        r#"
name = "ladder2"
[target]
base_url = "BASE"
[[scenario]]
name = "climb"
[scenario.load]
profile = "ladder"
phases = [{ vus = 2, duration = "1s" }, { vus = 4, duration = "1s" }]
[[scenario.step]]
name = "one"
path = "/delay?ms=3"
[[scenario.step]]
name = "two"
path = "/delay?ms=3"
"#,
    );
    let groups = record["groups"].as_array().unwrap();
    let of = |kind: &str| -> u64 {
        groups
            .iter()
            .filter(|g| g["kind"] == kind)
            .map(|g| g["requests"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(of("phase"), summary_u64(&record, "requests"), "{groups:?}");
    assert_eq!(of("step"), summary_u64(&record, "requests"));
    t.stop();
}

/// A rate ladder (100/s for 1 s, then 300/s for 1 s): the asked figure is the schedule's
/// integral over the window — 400 iterations, 200/s on average — never the 300/s peak, and each
/// phase is asked its own rate over its own span. (Once it reported "achieved 275.5 … of the
/// 600.0 req/s asked (45.9 %)".)
#[test]
fn a_rate_ladder_asks_the_integral_of_its_phases() {
    let t = target();
    let dir = temp_dir("windows-rate-ladder");
    let record = run_plan(
        &dir,
        &t.base_url(),
        r#"
name = "rate-ladder"
[target]
base_url = "BASE"
[[scenario]]
name = "climb"
[scenario.load]
profile = "ladder"
max_vus = 100
phases = [{ rate = 100, duration = "1s" }, { rate = 300, duration = "1s" }]
[[scenario.step]]
name = "one"
path = "/delay?ms=1"
"#,
    );
    let s = &record["summary"];
    let a = &s["arrival"];
    assert_eq!(a["due"], 400, "{a}");
    let asked = a["asked_per_sec"].as_f64().unwrap();
    assert!(
        (asked - 200.0).abs() < 2.0,
        "the mean of the schedule, not its peak: {a}"
    );
    let achieved = a["achieved_per_sec"].as_f64().unwrap();
    assert!(achieved > 0.9 * asked && achieved <= asked + 0.01, "{a}");
    let target_rps = s["target_rps"].as_f64().unwrap();
    assert!((target_rps - 200.0).abs() < 2.0, "{s}");
    let codes = common::warning_codes(&record);
    assert!(!codes.contains(&"rate_not_achieved"), "{codes:?}");
    let phases: Vec<&Value> = record["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["kind"] == "phase")
        .collect();
    assert_eq!(phases.len(), 2, "{}", record["groups"]);
    for (phase, rate) in phases.iter().zip([100.0, 300.0]) {
        assert_eq!(phase["target_rps"], rate, "{phase}");
        let rps = phase["rps"].as_f64().unwrap();
        assert!(
            (rps - rate).abs() < 0.15 * rate,
            "a phase's rate is over its own 1 s: {phase}"
        );
    }
    t.stop();
}

/// Quick mode (the case a user hit: `-c 10 -d 5s` reported 5.88 s, `-c 100` 10 s and half the
/// real rate): with slow requests still in flight at the end, `-d 2s` measures 2 s and the wait
/// for them is the drain.
#[test]
fn quick_mode_keeps_the_drain_out_of_the_window() {
    let t = target();
    let dir = temp_dir("windows-quick-drain");
    // Exponential service times of mean 500 ms: the 10 requests in flight at the end take
    // about 1.5 s more (the longest of 10), and less than 0.3 s with probability 0.0003.
    let url = format!("{}/delay?ms=500&dist=exp", t.base_url());
    let (out, record) = run_json(
        &dir,
        &[
            &url,
            "-c",
            "10",
            "-d",
            "2s",
            "--timeout",
            "10s",
            "--threads",
            "1",
        ],
    );
    let s = &record["summary"];
    let duration = summary_f64(&record, "duration_s");
    assert!(
        (1.95..2.2).contains(&duration),
        "the window is the 2 s asked for, not {duration} s: {s}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(s["drain"]["duration_s"].as_f64().unwrap() > 0.3, "{s}");
    let requests = summary_u64(&record, "requests");
    let drained = s["drain"]["requests"].as_u64().unwrap();
    let rps = summary_f64(&record, "rps");
    let expected = (requests - drained) as f64 / duration;
    assert!(
        (rps - expected).abs() < 0.01 * expected,
        "{rps} vs {expected}: {s}"
    );
    t.stop();
}
