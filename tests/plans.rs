//! Plans end to end: every example against the built-in target (shortened), ramps followed over
//! time, thresholds (failing ones exit 99, abort_on_fail stops the run).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// Runs `volley run PLAN` against `base` with extra args; returns (exit code, record).
fn run_plan(plan: &Path, base: &str, extra: &[&str]) -> (Option<i32>, Value, String) {
    let dir = temp_dir(&format!(
        "run-{}",
        plan.file_stem().unwrap().to_string_lossy()
    ));
    let json = dir.join("run.json");
    let out = volley()
        .arg("run")
        .arg(plan)
        .arg("--set")
        .arg(format!("target.base_url={base}"))
        .args(extra)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "no record ({e}): {}\n{stdout}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    common::verified(&json);
    (
        out.status.code(),
        serde_json::from_str(&text).unwrap(),
        stdout,
    )
}

fn example(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

fn threshold<'a>(rec: &'a Value, metric: &str) -> &'a Value {
    rec["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["metric"] == metric)
        .unwrap_or_else(|| panic!("no threshold {metric}"))
}

#[test]
fn example_000_pools_ramps_and_passes() {
    let _serial = serial();
    let t = target();
    let (code, rec, _) = run_plan(
        &example("000-pools.toml"),
        &t.base_url(),
        &["--time-scale", "0.25", "--set", "pools=64"],
    );
    assert_eq!(code, Some(0), "{}", rec["thresholds"]);
    let step = common::group(&rec, "step", "get_pool");
    assert!(step["requests"].as_u64().unwrap() > 100);
    assert_eq!(step["errors"], 0);
    assert!(rec["checks"][0]["passed"].as_u64().unwrap() > 100);
    assert_eq!(rec["checks"][0]["failed"], 0);
}

#[test]
fn example_001_load_balancer_fails_its_error_threshold_with_exit_99() {
    let _serial = serial();
    let t = target();
    let (code, rec, stdout) = run_plan(
        &example("001-load-balancer.toml"),
        &t.base_url(),
        &["--time-scale", "0.25"],
    );
    assert_eq!(code, Some(99), "{stdout}");
    let errors = threshold(&rec, "errors");
    assert_eq!(errors["passed"], false);
    assert!(errors["observed"].as_f64().unwrap() > 0.005);
    let line = stdout
        .lines()
        .find(|l| l.contains("errors") && l.contains("rate < 0.5%"))
        .unwrap_or_else(|| panic!("no threshold line in:\n{stdout}"));
    assert!(line.contains("FAIL"), "{line}");
    // The weighted flow: all three steps ran, in about their weights' proportions.
    let light = common::group(&rec, "step", "light")["requests"]
        .as_u64()
        .unwrap();
    let bad = common::group(&rec, "step", "bad_gateway")["requests"]
        .as_u64()
        .unwrap();
    assert!(light > bad * 10, "light {light}, bad {bad}");
    assert!(status_of(&rec, "502") > 0 && status_of(&rec, "200") > 0);
    assert_eq!(errors_of(&rec, "http_5xx"), status_of(&rec, "502"));
}

#[test]
fn example_002_ladder_keeps_results_per_phase() {
    let _serial = serial();
    let t = target();
    let (code, rec, _) = run_plan(
        &example("002-ladder.toml"),
        &t.base_url(),
        &["--time-scale", "0.5"],
    );
    assert_eq!(code, Some(0), "{}", rec["thresholds"]);
    let phases: Vec<&Value> = rec["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["kind"] == "phase")
        .collect();
    assert_eq!(phases.len(), 4);
    for (p, vus) in phases.iter().zip([10, 50, 100, 200]) {
        assert_eq!(p["target_vus"], vus);
        assert!(p["requests"].as_u64().unwrap() > 0, "{p}");
        assert!(p["end_s"].as_f64().unwrap() > p["start_s"].as_f64().unwrap());
    }
    // More VUs on a 2 ms service: throughput rises from the first phase.
    let rps = |i: usize| phases[i]["rps"].as_f64().unwrap();
    assert!(rps(1) > rps(0) * 2.0, "{} vs {}", rps(1), rps(0));
    assert!(
        common::group(&rec, "scenario", "smoke")["requests"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn example_003_crud_flow_extracts_and_chains() {
    let _serial = serial();
    let t = target();
    let (code, rec, _) = run_plan(
        &example("003-tasks-crud.toml"),
        &t.base_url(),
        &["--time-scale", "0.4"],
    );
    assert_eq!(code, Some(0), "{}", rec["thresholds"]);
    let created = common::group(&rec, "step", "create_task")["requests"]
        .as_u64()
        .unwrap();
    assert!(created >= 250, "{created}");
    for step in ["get_task", "update_task", "delete_task"] {
        let g = common::group(&rec, "step", step);
        assert_eq!(g["requests"].as_u64().unwrap(), created, "{step}");
        assert_eq!(g["errors"], 0, "{step}: {g}");
    }
    for c in rec["checks"].as_array().unwrap() {
        assert_eq!(c["failed"], 0, "{c}");
    }
    assert_eq!(status_of(&rec, "201"), created);
    assert_eq!(status_of(&rec, "204"), created);
    // Every task was deleted again: the store is empty.
    let list = http_get(&t.base_url(), "/tasks");
    assert!(list.trim_end().ends_with("[]"), "{list}");
}

#[test]
fn example_005_rest_and_grpc_run_one_after_the_other_at_equal_connections() {
    let _serial = serial();
    let t = target();
    let (code, rec, _) = run_plan(
        &example("005-rest-vs-grpc.toml"),
        &t.base_url(),
        &["--time-scale", "0.15"],
    );
    assert_eq!(code, Some(0), "{}\n{}", rec["thresholds"], rec["summary"]);
    let rest = common::group(&rec, "scenario", "rest");
    let grpc = common::group(&rec, "scenario", "grpc");
    for g in [rest, grpc] {
        assert!(g["requests"].as_u64().unwrap() > 100, "{g}");
        assert_eq!(g["errors"], 0, "{g}");
    }
    // Every gRPC call of the grpc scenario succeeded; both scenarios held 16 connections.
    assert_eq!(
        rec["summary"]["grpc_status"]["OK"].as_u64(),
        grpc["requests"].as_u64()
    );
    assert_eq!(summary_u64(&rec, "connections_opened"), 32);
    for c in rec["checks"].as_array().unwrap() {
        assert_eq!(c["failed"], 0, "{c}");
    }
}

#[test]
fn example_004_transactions_counts_exact_iterations_and_expected_400s() {
    let _serial = serial();
    let t = target();
    let (code, rec, _) = run_plan(&example("004-transactions.toml"), &t.base_url(), &[]);
    assert_eq!(code, Some(0), "{}", rec["thresholds"]);
    assert_eq!(
        common::group(&rec, "step", "post_transaction")["requests"],
        2000
    );
    assert_eq!(common::group(&rec, "step", "post_invalid")["requests"], 500);
    assert_eq!(status_of(&rec, "400"), 500);
    assert_eq!(rec["summary"]["errors"], 0, "expected 400s are not errors");
}

#[test]
fn per_vu_iterations_end_one_vu_at_a_time_so_have_no_interval() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("per-vu");
    let plan = dir.join("each.toml");
    // Two VUs, 300 iterations each, one at 10 ms and one at 20 ms: the first ends at ~3 s,
    // and the load halves for the last ~3 s.
    std::fs::write(
        &plan,
        r#"
[target]
base_url = "http://127.0.0.1:1"
[[scenario]]
name = "each"
load = { profile = "per-vu-iterations", vus = 2, iterations = 300 }
[[scenario.step]]
name = "get"
path = "/delay?ms={{ vu }}0"
"#,
    )
    .unwrap();
    let (code, rec, _) = run_plan(&plan, &t.base_url(), &[]);
    assert_eq!(code, Some(0));
    assert_eq!(rec["summary"]["requests"], 600);
    let ci = &rec["summary"]["ci95"];
    assert_eq!(
        ci["unsteady"],
        "each VU of scenario `each` stops after its own iterations, so the load falls as they \
         finish",
        "{ci}"
    );
    assert!(
        ci.get("rps").is_none() && ci.get("p50_ms").is_none(),
        "{ci}"
    );
}

#[test]
fn ramping_vus_follow_their_stages() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("ramp-vus");
    let plan = dir.join("ramp.toml");
    std::fs::write(
        &plan,
        r#"
[target]
base_url = "http://127.0.0.1:1"
[[scenario]]
name = "ramp"
[scenario.load]
profile = "ramping-vus"
stages = [{ duration = "4s", target = 40 }, { duration = "2s", target = 40 }]
[[scenario.step]]
name = "slow"
path = "/delay?ms=50"
"#,
    )
    .unwrap();
    let (code, rec, out) = run_plan(&plan, &t.base_url(), &[]);
    assert_eq!(code, Some(0));
    let s = rec["series"].as_array().unwrap();
    let in_flight = |i: usize| s[i]["in_flight"].as_u64().unwrap();
    // At the end of second k the ramp is at 10·(k+1) VUs; each VU is nearly always in flight.
    assert!((4..=16).contains(&in_flight(0)), "{s:?}");
    assert!((24..=40).contains(&in_flight(2)), "{s:?}");
    assert!((34..=40).contains(&in_flight(4)), "{s:?}");
    let reqs = |i: usize| s[i]["requests"].as_u64().unwrap();
    assert!(reqs(3) > reqs(0) * 3, "{s:?}");
    // Six seconds of a climbing load: no interval, and the record says why.
    let ci = &rec["summary"]["ci95"];
    assert_eq!(
        ci["unsteady"], "scenario `ramp` changes its load over time (a ramp or a ladder)",
        "{ci}"
    );
    assert!(
        ci.get("rps").is_none() && ci.get("p99_ms").is_none(),
        "{ci}"
    );
    // Nor have its stages, steps or scenarios.
    for g in rec["groups"].as_array().unwrap() {
        assert!(g.get("ci95").is_none() && g.get("batches").is_none(), "{g}");
    }
    assert!(
        out.contains("95 % intervals: none, the load was not steady: scenario `ramp`"),
        "{out}"
    );
}

#[test]
fn ramping_arrival_rate_follows_its_stages() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("ramp-rate");
    let plan = dir.join("ramp.toml");
    std::fs::write(
        &plan,
        r#"
[target]
base_url = "http://127.0.0.1:1"
[[scenario]]
name = "ramp"
[scenario.load]
profile = "ramping-arrival-rate"
start_rate = 100
stages = [{ duration = "4s", target = 500 }]
max_vus = 100
[[scenario.step]]
name = "root"
path = "/"
"#,
    )
    .unwrap();
    let (code, rec, _) = run_plan(&plan, &t.base_url(), &[]);
    assert_eq!(code, Some(0));
    // 100 → 500/s over 4 s: 1200 arrivals; second k holds about 150 + 100k.
    let total = summary_u64(&rec, "requests");
    assert!((1180..=1200).contains(&total), "{total}");
    let s = rec["series"].as_array().unwrap();
    let reqs = |i: usize| s[i]["requests"].as_f64().unwrap();
    for (k, expected) in [(0, 150.0), (1, 250.0), (2, 350.0), (3, 450.0)] {
        assert!(
            (reqs(k) - expected).abs() < expected * 0.15,
            "second {k}: {s:?}"
        );
    }
}

#[test]
fn abort_on_fail_stops_the_run_early_with_exit_99() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("abort");
    let plan = dir.join("abort.toml");
    std::fs::write(
        &plan,
        r#"
[target]
base_url = "http://127.0.0.1:1"
[[scenario]]
name = "slow"
[scenario.load]
profile = "constant-vus"
vus = 4
duration = "60s"
[[scenario.step]]
name = "slow"
path = "/delay?ms=20"
[thresholds]
latency = [{ condition = "p50 < 5ms", abort_on_fail = true, grace = "1s" }]
"#,
    )
    .unwrap();
    let started = Instant::now();
    let (code, rec, _) = run_plan(&plan, &t.base_url(), &[]);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code, Some(99));
    let th = &rec["thresholds"][0];
    assert_eq!(th["passed"], false);
    assert_eq!(th["aborted"], true);
    assert!(
        rec["interrupted"].is_null(),
        "an abort is not an interruption"
    );
}

/// In a plan that mixes the models, the send lag describes the open scenario's requests alone
/// (a closed request has no due time), and the service latency every response.
#[test]
fn a_mixed_plan_reports_the_send_lag_of_its_open_requests_only() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("mixed-lag");
    let plan = dir.join("mixed.toml");
    std::fs::write(
        &plan,
        r#"
[target]
base_url = "http://127.0.0.1:1"
[[scenario]]
name = "busy"
[scenario.load]
profile = "constant-vus"
vus = 4
duration = "2s"
[[scenario.step]]
name = "busy-root"
path = "/"
[[scenario]]
name = "paced"
[scenario.load]
profile = "constant-arrival-rate"
rate = 100
duration = "2s"
max_vus = 20
[[scenario.step]]
name = "paced-root"
path = "/"
"#,
    )
    .unwrap();
    let (code, rec, _) = run_plan(&plan, &t.base_url(), &[]);
    assert_eq!(code, Some(0));
    let group = |name: &str| {
        let groups = rec["groups"].as_array().unwrap();
        let g = groups.iter().find(|g| g["name"] == name).unwrap();
        g["requests"].as_u64().unwrap()
    };
    let count = |field: &str| {
        let text = rec["histograms"][field].as_str().unwrap();
        volley::record::decode_histogram(text).unwrap().len()
    };
    let (busy, paced) = (group("busy"), group("paced"));
    assert_eq!(paced, 200);
    assert!(busy > 1000, "{busy}");
    assert_eq!(count("lag_us"), paced, "closed requests have no send lag");
    assert_eq!(count("service_latency_us"), busy + paced);
    assert_eq!(count("latency_us"), busy + paced);
}
