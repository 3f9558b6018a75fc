//! A coordinated test when one of its processes goes away or is told to stop: a generator
//! killed mid-run, the coordinator killed or signalled, a generator waiting for a coordinator
//! that never comes, a join URL that is no URL.

mod common;

use std::time::Duration;

use common::coordinated::*;
use common::{Spawned, summary_u64, temp_dir, valid_record};

#[test]
fn a_generator_killed_mid_run_is_named_and_the_test_ends_on_time() {
    let _serial = common::serial();
    let target = common::target();
    let dir = temp_dir("coord-lost");
    let plan = plan(
        &dir,
        &target.base_url(),
        "profile = \"constant-arrival-rate\"\nrate = 600\nduration = \"4s\"\nmax_vus = 50",
        "[distributed]\nlost_after = \"2s\"\n",
    );
    let (coord, join) = coordinator(&dir, &[&plan, "--workers", "3"]);
    let workers = share_generators(&dir, &plan, &join, 3);
    // Killed once the coordinator has counted requests from the running test.
    wait_until_running(&dir);
    workers[1].signal(nix::sys::signal::Signal::SIGKILL);
    let killed_at = std::time::Instant::now();
    let mut workers = workers;
    let killed = workers.remove(1);
    let _ = killed.child.wait_with_output();
    for w in finish(workers, Duration::from_secs(60)) {
        assert_eq!(w.code, Some(0), "{}", w.stderr);
    }
    let c = coord.wait(Duration::from_secs(40));
    // At most the rest of the 4 s, the 2 s before it is lost, and slack for a busy machine.
    let after_kill = killed_at.elapsed();
    assert!(
        after_kill < Duration::from_secs(12),
        "the coordinator ended {after_kill:?} after the kill"
    );
    // The load asked was not delivered: the test is incomplete, and says so (exit 1).
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    assert!(c.stderr.contains("share 1/3: LOST"), "{}", c.stderr);
    let m = merged(&dir);
    assert_eq!(m["merged"]["missing"], serde_json::json!([1]));
    assert_eq!(m["outcome"]["status"], "incomplete", "{}", m["outcome"]);
    // The load stated is the plan's, 600/s and 50 VUs at most, not the survivors' two thirds;
    // no "asked" rate is set beside a throughput that lacks a third of the load.
    let load = &m["config"]["scenarios"][0]["load"];
    assert_eq!(load["peak_rate_per_sec"].as_f64(), Some(600.0), "{load}");
    assert_eq!(load["max_vus"].as_u64(), Some(50), "{load}");
    assert!(m["summary"]["target_rps"].is_null(), "{}", m["summary"]);
    // What the lost generator had done before: named, and its connections counted.
    let lost = &m["merged"]["lost"][0];
    assert_eq!(lost["index"], 1, "{lost}");
    assert!(lost["requests"].as_u64().unwrap() > 0, "{lost}");
    let opened = lost["connections_opened"].as_u64().unwrap();
    assert!(opened > 0, "{lost}");
    assert!(summary_u64(&m, "connections_opened") > opened);
    assert!(common::warning_codes(&m).contains(&"shares_missing"));
    let folder = common::only_subfolder(&dir.join("merged"));
    for report in ["summary.txt", "report.md", "report.html"] {
        let text = std::fs::read_to_string(folder.join(report)).unwrap();
        // The Generators table: the two shares' own figures and the missing one.
        assert!(
            text.contains("Generators")
                && text.contains("MISSING")
                && (text.contains("2/3") || text.contains("2&#x2f;3")),
            "{report} names the missing share:\n{text}"
        );
        assert!(
            text.contains("Incomplete: 1 of 3 generators lost"),
            "{report} says the test is incomplete in its first line:\n{text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_coordinator_killed_mid_run_leaves_each_generator_its_own_record() {
    let _serial = common::serial();
    let target = common::target();
    let dir = temp_dir("coord-dies");
    let url = format!("{}/", target.base_url());
    let (coord, join) = coordinator(&dir, &["--workers", "2"]);
    let quick = [url.as_str(), "-c", "2", "-d", "4s", "--threads", "1"];
    let workers: Vec<Spawned> = (0..2)
        .map(|i| generator(&dir, i, &quick, &join, &[]))
        .collect();
    wait_until_running(&dir);
    let mut child = coord.child;
    child.kill().unwrap();
    let _ = child.wait_with_output();
    let killed_at = std::time::Instant::now();
    for (i, w) in finish(workers, Duration::from_secs(60)).iter().enumerate() {
        // The run goes on to its end and keeps its own results; nothing waits for long.
        assert_eq!(w.code, Some(0), "generator {i}: {}", w.stderr);
        assert!(
            w.stderr
                .contains("the record did not reach the coordinator"),
            "generator {i}: {}",
            w.stderr
        );
        let own = valid_record(&dir.join(format!("w{i}/run.json")));
        assert!(summary_u64(&own, "requests") > 0, "generator {i}");
        assert!(
            own["share"]["count"] == 2,
            "generator {i}: {}",
            own["share"]
        );
    }
    // The rest of the 4 s run, ~10 s of tries to deliver the record, slack for a busy machine.
    let after = killed_at.elapsed();
    assert!(
        after < Duration::from_secs(30),
        "generators ended {after:?} after the kill"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGINT at the coordinator once killed it without a word or a record, and its generators
/// ran on. It tells every generator to stop, collects what they measured, writes the merged
/// record marked interrupted, and exits 130, like a single run.
#[test]
fn a_signal_at_the_coordinator_stops_the_test_and_keeps_what_was_measured() {
    let _serial = common::serial();
    let target = common::target();
    let dir = temp_dir("coord-sigint");
    let plan = plan(
        &dir,
        &target.base_url(),
        "profile = \"constant-vus\"\nvus = 2\nduration = \"60s\"",
        "",
    );
    let (coord, join) = coordinator(&dir, &[&plan, "--workers", "2"]);
    let workers = share_generators(&dir, &plan, &join, 2);
    wait_until_running(&dir);
    let signalled = std::time::Instant::now();
    coord.signal(nix::sys::signal::Signal::SIGINT);
    for w in finish(workers, Duration::from_secs(30)) {
        assert_eq!(w.code, Some(130), "{}", w.stderr);
    }
    let c = coord.wait(Duration::from_secs(30));
    assert!(signalled.elapsed() < Duration::from_secs(15));
    assert_eq!(c.code, Some(130), "{}", c.stderr);
    let m = merged(&dir);
    assert_eq!(
        m["interrupted"], "SIGINT at the coordinator",
        "{}",
        m["interrupted"]
    );
    assert!(summary_u64(&m, "requests") > 0);
    assert!(m["merged"]["missing"].as_array().unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ctrl-C while a generator waits for a coordinator that is not there once took 13 s more (5
/// minutes with the default wait): it leaves at once, exit 130, having said what it waited for
/// even under -q.
#[test]
fn a_generator_waiting_to_join_leaves_at_once_on_a_signal() {
    let dir = temp_dir("join-sigint");
    let target = common::target();
    let nobody = format!("http://127.0.0.1:{}", common::closed_port());
    let w = generator(&dir, 0, &[&format!("{}/", target.base_url())], &nobody, &[]);
    common::wait_until(
        "the generator says it waits",
        Duration::from_secs(20),
        || stderr_of(&dir.join("w0")).contains("waiting for the coordinator"),
    );
    let signalled = std::time::Instant::now();
    w.signal(nix::sys::signal::Signal::SIGINT);
    let f = w.wait(Duration::from_secs(20));
    assert!(
        signalled.elapsed() < Duration::from_secs(2),
        "left {:?} after the signal",
        signalled.elapsed()
    );
    assert_eq!(f.code, Some(130), "{}", f.stderr);
    assert!(
        f.stderr
            .contains("SIGINT while waiting for the coordinator"),
        "{}",
        f.stderr
    );
}

/// `--join` with something that cannot be a coordinator's URL is a mistake on the command line.
#[test]
fn a_join_url_that_is_no_url_is_refused_with_exit_2() {
    let (code, _, stderr) =
        common::run_volley(&["http://127.0.0.1:9/", "--join", "notaurl", "--token", TOKEN]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--join"), "{stderr}");
}
