//! `volley find-max` against capacity-mode targets whose maximum is known (workers / service
//! time): the answer must lie within ±10 % of it, within the time budget.
//!
//! The capacities here are 100, 200 and 400 req/s. An 800 req/s target is measured by
//! `bench/findmax.sh` instead: on a busy 2-core CI machine the target (in this process) and the
//! generator together could not hold 600 req/s at p99 < 50 ms, so find-max rightly reported about
//! 560 — a fact about that machine, not about the search. For the same reason the SLO here is
//! p99 < 100 ms (the bench's is 50 ms): with 10–20 ms service times it tolerates the stalls of
//! tens of milliseconds that a shared 2-core machine has after heavy work, and the knee of a
//! capacity-limited target is so sharp that the maximum found hardly moves (the queue, hence
//! the latency, grows without bound just above W/S).
//!
//! Every test here that loads a target holds `serial()`: the short ones used to run beside the
//! first search, which then found too little and searched again (the binary took 250 s in a
//! full local run on 2026-12-01, 125 s alone).

mod common;

use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// One search against a fresh target of `workers` × `service_ms`, with `more` flags: the exit
/// status, the record, how long it took, the results folder's parent, and the target's true
/// capacity (req/s: the workers over the mean time a request held one, by its own `/metrics`).
fn search(workers: usize, service_ms: u64, attempt: u32, more: &[&str]) -> Searched {
    let t = capacity_target(workers, Duration::from_millis(service_ms));
    let dir = temp_dir(&format!("findmax-{workers}x{service_ms}-{attempt}"));
    let json = dir.join("run.json");
    let started = Instant::now();
    let out = volley()
        .current_dir(&dir)
        .args([
            "find-max",
            &format!("{}/", t.base_url()),
            "--slo",
            "p99<100ms,errors<1%",
            "--budget",
            "60s",
            "--step",
            "1500ms",
            "--warmup",
            "500ms",
            "-q",
        ])
        .args(more)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let took = started.elapsed();
    if json.exists() {
        common::verified(&json);
    }
    let rec: Value = serde_json::from_str(
        &std::fs::read_to_string(&json)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr))),
    )
    .unwrap();
    let page = http_get(&t.base_url(), "/metrics");
    let held = metric(&page, "volley_target_capacity_held_seconds_total");
    let truth = workers as f64 * metric(&page, "volley_target_capacity_holds_total") / held;
    (out, rec, took, dir, truth)
}

/// What [`search`] returns: the exit status, the record, how long it took, the results folder's
/// parent and the target's true capacity (req/s).
type Searched = (Output, Value, Duration, PathBuf, f64);

/// A search that got within `tolerance` of the truth and ended on its validation, where
/// `search` returns its record and the truth.
fn validated_within(rec: &Value, truth: f64, tolerance: f64) -> bool {
    let f = &rec["find_max"];
    let last = f["steps"].as_array().and_then(|s| s.last());
    f["max_sustainable_rps"]
        .as_f64()
        .is_some_and(|found| (found - truth).abs() <= truth * tolerance)
        && last.is_some_and(|l| l["validation"] == true)
}

/// [`search`], and once more when the first missed the truth by more than `tolerance` or did
/// not end on a validation: a search is a measurement of this machine too, and a stall of
/// several seconds (seen once in a full local run: a 400 req/s target served 170-210 req/s for
/// 8 s, then was fine again) makes it rightly report less, or spends its budget. The second
/// search decides; the first's figure comes back beside it, to be printed.
fn search_twice(
    workers: usize,
    service_ms: u64,
    more: &[&str],
    tolerance: f64,
) -> (Searched, Option<Value>) {
    let first = search(workers, service_ms, 1, more);
    if validated_within(&first.1, first.4, tolerance) {
        return (first, None);
    }
    let found = first.1["find_max"]["max_sustainable_rps"].clone();
    eprintln!(
        "{workers} x {service_ms} ms: first search found {found} (true {:.1}); steps {}; \
         searching again",
        first.4, first.1["find_max"]["steps"]
    );
    (search(workers, service_ms, 2, more), Some(found))
}

#[test]
fn finds_the_known_capacity_of_three_targets_within_budget() {
    let _serial = serial();
    for (workers, service_ms) in [(2usize, 20u64), (2, 10), (4, 10)] {
        let nominal = workers as f64 * 1000.0 / service_ms as f64;
        // Against the truth the target reports (below W/S by its own work per request).
        let ((out, rec, took, dir, truth), found_first) =
            search_twice(workers, service_ms, &[], 0.10);
        let capacity = format!("{nominal} (true {truth:.1})");
        let f = &rec["find_max"];
        assert_eq!(
            out.status.code(),
            Some(0),
            "capacity {capacity}: {}\nsteps {:#}\nwarnings {:#}",
            String::from_utf8_lossy(&out.stderr),
            f["steps"],
            rec["warnings"]
        );
        assert!(took <= Duration::from_secs(65), "took {took:?}");
        let found = f["max_sustainable_rps"].as_f64().unwrap();
        println!(
            "capacity {capacity}: found {found:.1} in {took:.1?} (first search: {found_first:?})"
        );
        assert!(
            validated_within(&rec, truth, 0.10),
            "capacity {capacity}: found {found} (first search: {found_first:?}); steps {}",
            f["steps"]
        );
        assert!(f["breaking_load"].as_f64().unwrap() > f["max_sustainable_load"].as_f64().unwrap());
        assert!(f["peak_rps"].as_f64().unwrap() >= found);
        assert!(f["elapsed_s"].as_f64().unwrap() <= 60.0);
        assert_eq!(f["generator_limited"], false);
        assert!(f["steps"].as_array().unwrap().len() >= 4);
        // -q prints the result and nothing else (it printed nothing at all).
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            said.starts_with("max sustainable throughput: ") && said.lines().count() == 1,
            "{said}"
        );
        // The bisection went to 1 %, and a run three steps long validated the level found:
        // the maximum reported is that run's throughput.
        let stopped = f["stopped"].as_str().unwrap();
        assert!(
            stopped.contains("validated at") || stopped.contains("stepped down to"),
            "{stopped}"
        );
        assert!(stopped.ends_with("over 3 steps"), "{stopped}");
        let last = f["steps"].as_array().unwrap().last().unwrap();
        assert_eq!(last["validation"], true, "{last}");
        assert_eq!(last["rps"].as_f64(), Some(found));
        let gap =
            f["breaking_load"].as_f64().unwrap() / f["max_sustainable_load"].as_f64().unwrap();
        assert!(
            gap <= 1.0 + 0.011 || stopped.contains("stepped down"),
            "bracket {gap}"
        );
        // The results folder has the report with the search's charts.
        let html = std::fs::read_dir(dir.join("volley-results"))
            .unwrap()
            .map(|e| e.unwrap().path().join("report.html"))
            .find(|p| p.exists())
            .expect("report.html");
        let html = std::fs::read_to_string(html).unwrap();
        assert!(html.contains("Throughput against load") && html.contains("Latency against load"));
    }
}

#[test]
fn bad_slo_and_multi_scenario_plans_are_refused() {
    let url = "http://127.0.0.1:9/";
    let plan = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/002-ladder.toml");
    for (target, slo, more, says) in [
        (url, "p99 fast", &[][..], "--slo: `p99 fast`"),
        // `errors<1` read as a fraction was 100 %: a step with 30 % errors held.
        (url, "p99<50ms,errors<1", &[], "write `1%`"),
        // Refused before the search (it printed its banner, then exited 1 with "no step could
        // run within the budget").
        (
            url,
            "p99<50ms",
            &["--budget", "5s"],
            "shorter than one step (6s 400ms",
        ),
        (plan, "p99<50ms", &[], "one scenario"),
        (url, "p99<50ms", &["--resolution", "1"], "`1` has no `%`"),
        // One bound, the search's own: it said "up to 50%" here, the bound of a precision.
        (
            url,
            "p99<50ms",
            &["--resolution", "60%"],
            "resolution of 60% is not above 0% and up to 10%",
        ),
        (url, "p99<50ms", &["--resolution", "20%"], "up to 10%"),
        (url, "p99<50ms", &["--validation-steps", "11"], "0..=10"),
    ] {
        let out = volley()
            .args(["find-max", target, "--slo", slo])
            .args(more)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(2) && err.contains(says),
            "{slo}: {err}"
        );
    }
}

#[test]
fn the_bracket_and_the_validation_length_are_the_users_to_set() {
    let _serial = serial();
    let more = ["--resolution", "5%", "--validation-steps", "1"];
    let ((out, rec, _, _, truth), _) = search_twice(2, 10, &more, 0.10);
    let err = String::from_utf8_lossy(&out.stderr);
    let f = &rec["find_max"];
    let stopped = f["stopped"].as_str().unwrap();
    // The bisection stopped at 5 % (at 1 % it takes two more steps) and one step validated
    // the level found, or a step down from it.
    let gap = f["breaking_load"].as_f64().unwrap() / f["max_sustainable_load"].as_f64().unwrap();
    assert!(
        gap <= 1.051 || stopped.contains("stepped down"),
        "bracket {gap}: {f:#}"
    );
    assert!(stopped.ends_with("over 1 step"), "{stopped}: {err}");
    let last = f["steps"].as_array().unwrap().last().unwrap();
    assert_eq!(last["validation"], true, "{last}");
    assert!(
        last["measured_s"].as_f64().unwrap() < 2.5,
        "one step long: {last}"
    );
    let found = f["max_sustainable_rps"].as_f64().unwrap();
    assert!(
        (found - truth).abs() <= truth * 0.10,
        "found {found} of {truth}: {f:#}"
    );
}

/// A `/metrics` value of a capacity-mode target.
fn metric(page: &str, name: &str) -> f64 {
    page.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{page}"))
}

#[test]
fn a_capacity_target_reports_its_true_service_time() {
    let _serial = serial();
    // The oracle of find-max's accuracy: the target counts how long each request held a
    // worker (the service time plus its own work), so its true capacity is known.
    let t = capacity_target(2, Duration::from_millis(10));
    let dir = temp_dir("findmax-oracle");
    let url = format!("{}/", t.base_url());
    run_json_ok(&dir, &[&url, "-c", "2", "-n", "100"]);
    let page = http_get(&t.base_url(), "/metrics");
    assert_eq!(metric(&page, "volley_target_capacity_workers"), 2.0);
    assert_eq!(metric(&page, "volley_target_capacity_holds_total"), 100.0);
    let held = metric(&page, "volley_target_capacity_held_seconds_total") / 100.0;
    assert!(
        (0.010..0.030).contains(&held),
        "mean hold {held} s for 10 ms"
    );
}

#[test]
fn an_interrupted_search_says_so_and_calls_nothing_a_break() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("findmax-interrupted");
    let url = format!("{}/", t.base_url());
    let run = spawn_volley(
        &dir,
        &[
            "find-max",
            &url,
            "--slo",
            "p99<200ms",
            "--step",
            "1s",
            "--warmup",
            "0s",
            "--start",
            "50",
            "--budget",
            "60s",
        ],
        &[],
    );
    // The first step (50/s for 1 s) holds; past 60 requests a later step is under way.
    wait_until("a second step", Duration::from_secs(30), || {
        served(&t, "/", 200) > 60
    });
    run.signal(nix::sys::signal::Signal::SIGINT);
    let finished = run.wait(Duration::from_secs(20));
    let record = valid_record(&dir.join("run.json"));
    common::verified(&dir.join("run.json"));
    let fm = &record["find_max"];
    let steps = fm["steps"].as_array().unwrap();
    let (last, before) = steps.split_last().unwrap();
    // Before the fix: "the load generator saturated before the target did", the interrupted
    // step the break, and a made-up step "not run: the search was stopped" after it.
    assert_eq!(fm["stopped"], "the search was interrupted", "{fm:#}");
    assert_eq!(fm["generator_limited"], false, "{fm:#}");
    assert_eq!(fm["breaking_load"], Value::Null, "{fm:#}");
    assert_eq!(
        fm["lower_bound"], "no break found before the search was interrupted",
        "{fm:#}"
    );
    assert!(
        last["interrupted"] == true && last["held"] == false,
        "{fm:#}"
    );
    assert!(!before.is_empty(), "{fm:#}");
    for s in before {
        assert!(s["held"] == true && s["interrupted"] == false, "{fm:#}");
    }
    assert_eq!(record["interrupted"], "SIGINT", "{}", finished.stderr);
    // Steps of 1 s are too short to see a queue build: the search says so (it did not).
    let unjudged = fm["steady_unjudged"].as_str().unwrap_or_default();
    assert!(
        unjudged.contains("too short to judge a steady state"),
        "{fm:#}"
    );
    // The record kept is the highest step that held, whole.
    let best = before.last().unwrap();
    assert_eq!(fm["max_sustainable_load"], best["level"]);
    assert_eq!(record["summary"]["rps"], best["rps"]);
}

#[test]
fn a_step_that_precision_ended_says_how_long_it_measured() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("findmax-precise");
    let json = dir.join("run.json");
    let out = volley()
        .current_dir(&dir)
        .args([
            "find-max",
            // A 20 ms delay: a p50 of 0.2 ms at the root moved by more than half between
            // seconds when other tests shared the CPU, and the goal was missed.
            &format!("{}/delay?ms=20", t.base_url()),
            "--slo",
            "p99<200ms",
        ])
        .args([
            "--step", "7s", "--warmup", "0s", "--start", "50", "--max", "100",
        ])
        .args(["--precision", "p50=50%", "--budget", "60s", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    common::verified(&json);
    let record = valid_record(&json);
    let steps = record["find_max"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{err}");
    assert_eq!(record["find_max"]["steady_unjudged"], Value::Null);
    // Five one-second batches are the fewest an interval needs: a goal this loose is met then,
    // two seconds before the step's end. Before, nothing said so.
    for s in steps {
        let m = s["measured_s"].as_f64().unwrap();
        assert!(
            s["precise"] == true && (4.5..6.5).contains(&m),
            "{steps:#?}"
        );
    }
    assert!(err.contains("precise after 5.0 s"), "{err}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("5.0s (precise)"), "{table}");
}

/// A search against a port where nothing listens says why in its one line (it said "observed
/// nothing measured"), and exits 1.
#[test]
fn a_dead_target_is_named_in_the_searchs_line() {
    let _serial = serial();
    let dir = temp_dir("findmax-dead");
    let url = format!("http://127.0.0.1:{}/", closed_port());
    let out = volley()
        .current_dir(&dir)
        .args(["find-max", &url, "--slo", "p99<50ms", "-q"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("No maximum: ")
            && err.contains("(observed nothing measured: ")
            && err.contains(" attempts failed, ")
            && err.contains(" with connection_refused)"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
