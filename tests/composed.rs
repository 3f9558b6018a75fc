//! Figures that hold when features compose (issue 24): each test reproduces a figure that once
//! misled where features met — several scenarios, a suite, a dead target, a file-descriptor
//! limit, a watched histogram, a merge — against real servers on 127.0.0.1, and every record
//! passes volley's own verifier.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{
    capacity_target, closed_port, only_subfolder, run_json, run_volley, serial, summary_f64,
    summary_u64, temp_dir, verified,
};
use serde_json::Value;

/// Writes a plan file against `base` with `body` after its `[target]`.
fn plan(dir: &Path, name: &str, base: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("[target]\nbase_url = \"{base}\"\n{body}")).unwrap();
    path.to_str().unwrap().to_string()
}

/// The scenario group `name` of a record.
fn scenario<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["kind"] == "scenario" && g["name"] == name)
        .unwrap_or_else(|| panic!("no scenario {name} in {:#}", r["groups"]))
}

const BURST_AND_STEADY: &str = r#"
[[scenario]]
name = "burst"
[scenario.load]
profile = "iterations"
vus = 10
iterations = 1000
max_duration = "3s"
[[scenario.step]]
name = "get"
path = "/"

[[scenario]]
name = "steady"
[scenario.load]
profile = "constant-vus"
vus = 2
duration = "2s"
[[scenario.step]]
name = "slow"
path = "/delay?ms=5"
"#;

/// Defect 1: 1,000 iterations done in a few milliseconds of a 3 s `max_duration` were
/// reported as 333 req/s (1,000 / 3 s). The scenario's window is the time it was active.
#[test]
fn an_iterations_scenario_rate_is_over_the_time_it_was_active() {
    let _serial = serial();
    let t = common::target();
    let dir = temp_dir("compose-iterations");
    let p = plan(&dir, "p.toml", &t.base_url(), BURST_AND_STEADY);
    let (out, r) = run_json(&dir, &["run", &p, "--threads", "1"]);
    assert_eq!(out.status.code(), Some(0), "{r:#}");
    let burst = scenario(&r, "burst");
    let window = burst["window_s"].as_f64().unwrap();
    assert_eq!(burst["requests"], 1000);
    assert!(window < 1.5, "done long before its max_duration: {burst:#}");
    assert!(
        burst["rps"].as_f64().unwrap() > 1000.0 / 1.5,
        "the rate is over the active time: {burst:#}"
    );
    // Defect 2: the Little's-law check counts only the time each VU was active, so the
    // finished scenario's idle VUs raise no alarm that blames the generator.
    let law = r["self_checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"] == "littles_law")
        .unwrap();
    assert_eq!(law["outcome"], "passed", "{law:#}");
    assert!(!common::warning_codes(&r).contains(&"littles_law"));
}

/// Defect 1 again: four `iterations` scenarios one after the other (`start_after`) each have
/// their own window, from their start to their last completion.
#[test]
fn sequential_iterations_scenarios_each_take_their_own_window() {
    let _serial = serial();
    let t = common::target();
    let dir = temp_dir("compose-sequential");
    let scenarios: String = (0..4)
        .map(|i| {
            format!(
                "[[scenario]]\nname = \"s{i}\"\nstart_after = \"{}ms\"\n[scenario.load]\n\
                 profile = \"iterations\"\nvus = 4\niterations = 200\nmax_duration = \"2s\"\n\
                 [[scenario.step]]\nname = \"get{i}\"\npath = \"/delay?ms=1\"\n",
                i * 400
            )
        })
        .collect();
    let p = plan(&dir, "p.toml", &t.base_url(), &scenarios);
    let (out, r) = run_json(&dir, &["run", &p, "--threads", "1"]);
    assert_eq!(out.status.code(), Some(0), "{r:#}");
    for i in 0..4 {
        let g = scenario(&r, &format!("s{i}"));
        let (start, end) = (g["start_s"].as_f64().unwrap(), g["end_s"].as_f64().unwrap());
        assert!((start - 0.4 * i as f64).abs() < 1e-6, "{g:#}");
        // 200 iterations of ~1 ms on 4 VUs: about 50 ms, far from the 2 s limit.
        assert!(end - start < 0.4, "s{i} ends at its last completion: {g:#}");
        assert!(g["rps"].as_f64().unwrap() > 500.0, "{g:#}");
    }
}

/// Defect 5: a port nobody listens on once gave "165,820 requests … 82,885.0 req/s". Refused
/// connects are attempts, never requests; they back off; and the run ends after a second with
/// the cause in its first line and exit 1.
#[test]
fn a_target_that_refuses_every_connection_ends_the_run_early() {
    let dir = temp_dir("compose-refused");
    let url = format!("http://127.0.0.1:{}/", closed_port());
    let started = Instant::now();
    let (out, r) = run_json(&dir, &[&url, "-d", "10s", "-c", "8"]);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "ran {:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(summary_u64(&r, "requests"), 0);
    assert_eq!(summary_f64(&r, "rps"), 0.0);
    let attempts = summary_u64(&r, "attempts");
    // 8 VUs backing off from 1 ms, doubling, for about a second: a few dozen tries each.
    assert!(attempts > 0 && attempts < 8 * 20, "{}", r["summary"]);
    assert_eq!(r["outcome"]["status"], "no_connection");
    let headline = r["outcome"]["headline"].as_str().unwrap();
    assert!(
        headline.starts_with("No connection to the target worked: connection_refused"),
        "{headline}"
    );
}

/// Defect 5, the other way to meet it: HTTP/2 prior knowledge against a server that speaks
/// only HTTP/1.1 (a real one, written here: it answers every request with 400, as such servers
/// do to the HTTP/2 preface).
#[test]
fn http2_against_an_http1_only_server_ends_early_and_says_why() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut s = stream;
                let mut line = String::new();
                let _ = BufReader::new(&s).read_line(&mut line);
                let _ = s.write_all(
                    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            });
        }
    });
    let dir = temp_dir("compose-h2c");
    let url = format!("http://{addr}/");
    let started = Instant::now();
    let (out, r) = run_json(&dir, &[&url, "-d", "10s", "-c", "4", "--protocol", "http2"]);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(r["outcome"]["status"], "no_connection", "{}", r["outcome"]);
    assert!(summary_u64(&r, "attempts") < 4 * 20, "{}", r["summary"]);
}

/// Defect 6: under a file-descriptor limit, "32,875 (10,738 errors, 75.38 % success)" when
/// every request sent succeeded. The target is charged only with what was sent to it.
#[test]
fn attempts_the_generator_could_not_make_are_not_the_targets_errors() {
    let _serial = serial();
    let t = common::target();
    let dir = temp_dir("compose-nofile");
    let path = dir.join("run.json");
    let out = std::process::Command::new("prlimit")
        .arg("--nofile=48")
        .arg(env!("CARGO_BIN_EXE_volley"))
        .args([&format!("{}/", t.base_url()), "-d", "1s", "-c", "100"])
        .args(["--threads", "1", "--json", path.to_str().unwrap(), "-q"])
        .arg("--out")
        .arg(dir.join("results"))
        .output()
        .expect("prlimit runs volley");
    verified(&path);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let s = &r["summary"];
    assert!(
        common::errors_of(&r, "too_many_open_files") > 0,
        "the limit bit: {s}"
    );
    assert_eq!(s["success_rate"], 1.0, "{s}");
    assert_eq!(out.status.code(), Some(0), "{s}");
    let text =
        std::fs::read_to_string(only_subfolder(&dir.join("results")).join("summary.txt")).unwrap();
    assert!(text.contains("(0 errors, 100.00% success)"), "{text}");
    assert!(text.contains("Not sent:"), "{text}");
}

/// Defect 7: a plan of 600/s open plus closed VUs printed "2076.8 req/s (asked 600.0 req/s)".
/// The asked rate is the open scenarios', and said to be.
#[test]
fn the_asked_rate_of_a_mixed_plan_is_the_open_scenarios_only() {
    let _serial = serial();
    let t = common::target();
    let dir = temp_dir("compose-mixed");
    let p = plan(
        &dir,
        "p.toml",
        &t.base_url(),
        r#"
[[scenario]]
name = "open"
[scenario.load]
profile = "constant-arrival-rate"
rate = 200
duration = "1s"
max_vus = 20
[[scenario.step]]
name = "a"
path = "/"

[[scenario]]
name = "closed"
[scenario.load]
profile = "constant-vus"
vus = 2
duration = "1s"
[[scenario.step]]
name = "b"
path = "/delay?ms=2"
"#,
    );
    let (_, r) = run_json(&dir, &["run", &p, "--threads", "1"]);
    assert!(r["summary"]["target_rps"].is_null(), "{}", r["summary"]);
    let text =
        std::fs::read_to_string(only_subfolder(&dir.join("results")).join("summary.txt")).unwrap();
    assert!(!text.contains("(asked"), "{text}");
    assert!(
        text.contains("Open scenarios:") && text.contains("/s asked, iterations of the open"),
        "{text}"
    );
}

/// Defect 8: a target's own histogram turned into "p99 49.7 ms" for a backend whose every
/// request took ~21 ms (the 25–50 ms bucket, interpolated). The bucket is the figure.
#[test]
fn a_watched_histograms_quantile_is_shown_as_its_bucket() {
    let _serial = serial();
    let t = common::target();
    let base = t.base_url();
    let dir = temp_dir("compose-watch-hist");
    let (_, r) = run_json(
        &dir,
        &[
            &format!("{base}/delay?ms=30"),
            "-d",
            "3s",
            "-c",
            "2",
            "--threads",
            "1",
            "--watch",
            &format!("prom={base}/metrics"),
            "--watch-metric",
            "volley_target_handler_seconds",
        ],
    );
    let p99 = r["watch"]["prom"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stat"] == "quantile" && s["quantile"] == 0.99)
        .unwrap_or_else(|| panic!("no p99 in {:#}", r["watch"]));
    let buckets: Vec<&Value> = p99["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| !b.is_null())
        .collect();
    assert!(!buckets.is_empty(), "{p99:#}");
    for b in buckets {
        assert_eq!(
            (b["lower"].as_f64(), b["upper"].as_f64()),
            (Some(0.025), Some(0.05))
        );
    }
    let md =
        std::fs::read_to_string(only_subfolder(&dir.join("results")).join("report.md")).unwrap();
    assert!(
        md.contains("p99 (bucket)") && md.contains("0.025–0.05"),
        "{md}"
    );
}

/// Defect 9: merged records lost the time split's percentiles ("TCP connect 42 - - - 0.316").
#[test]
fn a_merge_keeps_the_percentiles_of_the_time_split() {
    let _serial = serial();
    let t = common::target();
    let dir = temp_dir("compose-merge-split");
    let url = format!("{}/", t.base_url());
    let mut records = Vec::new();
    for i in 0..2 {
        let share = dir.join(format!("s{i}"));
        std::fs::create_dir_all(&share).unwrap();
        let segment = format!("{i}/2");
        let (out, _) = run_json(
            &share,
            &[
                &url,
                "-n",
                "200",
                "-c",
                "2",
                "-H",
                "Connection: close",
                "--segment",
                &segment,
            ],
        );
        assert_eq!(out.status.code(), Some(0));
        records.push(share.join("run.json"));
    }
    let merged = dir.join("merged");
    let (code, _, stderr) = run_volley(&[
        "merge",
        records[0].to_str().unwrap(),
        records[1].to_str().unwrap(),
        "-o",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let m = common::valid_record(&merged.join("run.json"));
    let connect = &m["summary"]["timing"]["connect_ms"];
    for q in ["p50", "p90", "p99"] {
        assert!(connect[q].as_f64().is_some(), "{q}: {connect}");
    }
    assert_eq!(m["summary"]["timing"]["connects"], 200);
}

/// Defect 10: `compare --fail-on` with a single folder of repeats printed PASS and exited 0:
/// nothing had been compared.
#[test]
fn a_gate_with_nothing_to_compare_is_refused() {
    let _serial = serial();
    let t = common::target();
    let dir = temp_dir("compose-gate-one");
    let (folder, _) = common::run_repeats(&dir, &format!("{}/", t.base_url()), 2, 1);
    let (code, stdout, stderr) = run_volley(&[
        "compare",
        "--baseline",
        folder.to_str().unwrap(),
        "--fail-on",
        "p99 > +5%",
    ]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("nothing to compare"), "{stderr}");
    // The repeats' own report names its figures for what they are.
    let text = std::fs::read_to_string(folder.join("summary.txt")).unwrap();
    assert!(text.contains("geometric mean"), "{text}");
    assert!(!text.contains("median and 95%"), "{text}");
}

/// Defect 11: a status outside 100–599 is no HTTP status, not a success.
#[test]
fn a_status_outside_100_to_599_is_an_error() {
    let t = common::target();
    let dir = temp_dir("compose-999");
    let (out, r) = run_json(
        &dir,
        &[
            &format!("{}/status/999", t.base_url()),
            "-n",
            "20",
            "-c",
            "1",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(common::status_of(&r, "999"), 20);
    assert_eq!(common::errors_of(&r, "invalid_status"), 20);
}

/// Defect 11: "3,000 requests in 0.0s" and "Connections: 0 opened" after a warm-up.
#[test]
fn a_short_window_and_the_warm_ups_connections_are_said_as_they_are() {
    let _serial = serial();
    let t = common::target();
    let dir = temp_dir("compose-short");
    let (_, r) = run_json(
        &dir,
        &[
            &format!("{}/", t.base_url()),
            "-n",
            "300",
            "-c",
            "4",
            "--warmup",
            "300ms",
        ],
    );
    assert!(
        summary_u64(&r, "warmup_connections") >= 4,
        "{}",
        r["summary"]
    );
    let headline = r["outcome"]["headline"].as_str().unwrap();
    assert!(!headline.contains("in 0.0s"), "{headline}");
    let text =
        std::fs::read_to_string(only_subfolder(&dir.join("results")).join("summary.txt")).unwrap();
    assert!(
        text.contains("during the warm-up, reused by measured requests"),
        "{text}"
    );
}

/// A suite whose target's plan was aborted by `abort_on_fail` once said "ran", ranked it and
/// exited 0 (defect 3): it is `aborted`, out of the ranking, named, and the suite exits 99.
#[test]
fn a_suite_names_an_aborted_target_and_exits_99() {
    let _serial = serial();
    let slow = capacity_target(1, Duration::from_millis(20));
    let fast = common::target();
    let dir = temp_dir("compose-suite-abort");
    plan(
        &dir,
        "plan.toml",
        "http://127.0.0.1:1",
        "[[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 2\n\
         duration = \"4s\"\n[[scenario.step]]\nname = \"root\"\npath = \"/\"\n\
         [thresholds]\nrps = [{ condition = \"> 200\", abort_on_fail = true, grace = \"1s\" }]\n",
    );
    let suite = dir.join("suite.toml");
    std::fs::write(
        &suite,
        format!(
            "name = \"abort\"\nplan = \"plan.toml\"\n\
             [[target]]\nname = \"slow\"\nbase_url = \"{}\"\n\
             [[target]]\nname = \"fast\"\nbase_url = \"{}\"\n",
            slow.base_url(),
            fast.base_url()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let (code, stdout, stderr) = run_volley(&[
        "suite",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(99), "{stdout}\n{stderr}");
    let folder = only_subfolder(&out);
    verified(&folder);
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("suite.json")).unwrap()).unwrap();
    assert_eq!(s["targets"][0]["status"], "aborted", "{s:#}");
    assert_eq!(s["targets"][1]["status"], "ran", "{s:#}");
    assert_eq!(s["exit_code"], 99);
    let text = std::fs::read_to_string(folder.join("summary.txt")).unwrap();
    assert!(
        text.contains("Aborted by an abort_on_fail threshold, out of the ranking: slow"),
        "{text}"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.contains("highest first") && l.contains("slow")),
        "the aborted target is not ranked: {text}"
    );
}
