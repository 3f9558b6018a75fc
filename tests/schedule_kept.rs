//! The open model's schedule self-check (docs/measurement.md, "The schedule kept"): a run the
//! generator can keep passes the Kolmogorov–Smirnov test of its send gaps, uniform and Poisson;
//! a run whose iterations are dropped at the in-flight cap, or that asks more than its worker
//! thread can send, fails it and names the cause.

mod common;

use serde_json::Value;

fn schedule_check(record: &Value) -> &Value {
    record["self_checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["code"] == "schedule_kept"))
        .expect("an open run has a schedule_kept check")
}

fn figure(check: &Value, name: &str) -> f64 {
    check["figures"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name} in {check}"))
}

#[test]
fn a_kept_schedule_passes_the_gap_test_uniform_and_poisson() {
    // Alone: a test beside it that loads both cores would make its sends late and bunched.
    let _serial = common::serial();
    let target = common::target();
    let dir = common::temp_dir("schedule-kept");
    let url = format!("{}/delay?ms=1", target.base_url());
    for arrivals in ["uniform", "poisson"] {
        let args = [&url, "--rate", "400", "-d", "2s", "--arrivals", arrivals];
        let record = common::run_json_ok(&dir, &args);
        let check = schedule_check(&record);
        // 800 iterations: the sample holds every gap.
        assert!(figure(check, "gaps_sent") > 700.0, "{check}");
        let (d, critical) = (figure(check, "ks_distance"), figure(check, "ks_critical"));
        assert!(
            d <= critical,
            "{arrivals}: the gaps differ from the plan: {check}"
        );
        assert_eq!(figure(check, "dropped"), 0.0);
        // A busy machine can make the sends late (a true finding, named as such); the gaps
        // and the count above are what this test holds the generator to.
        if figure(check, "lag_p99_ms") <= 5.0 {
            assert_eq!(check["outcome"], "passed", "{check}");
        } else {
            let message = check["message"].as_str().unwrap();
            assert!(message.contains("sends went out late"), "{message}");
        }
    }
}

#[test]
fn iterations_dropped_at_the_in_flight_cap_fail_the_check_with_their_cause() {
    let _serial = common::serial();
    let target = common::target();
    let dir = common::temp_dir("schedule-dropped");
    // 200 req/s of 50 ms requests need 10 in flight; the cap is 2.
    let url = format!("{}/delay?ms=50", target.base_url());
    let (_, record) = common::run_json(&dir, &[&url, "--rate", "200", "-d", "2s", "-c", "2"]);
    let check = schedule_check(&record);
    assert_eq!(check["outcome"], "failed", "{check}");
    assert!(figure(check, "dropped") > 100.0, "{check}");
    let message = check["message"].as_str().unwrap();
    assert!(
        message.contains("dropped at the in-flight cap"),
        "{message}"
    );
    assert!(message.contains("cause: the in-flight cap"), "{message}");
    assert!(common::warning_codes(&record).contains(&"schedule_kept"));
}

#[test]
fn a_rate_beyond_the_generator_fails_the_check_and_names_the_cause() {
    let _serial = common::serial();
    let target = common::target();
    let dir = common::temp_dir("schedule-cpu");
    // One worker thread cannot send half a million requests a second: it runs flat out and
    // falls behind its schedule.
    let url = format!("{}/", target.base_url());
    let args = [
        &url,
        "--rate",
        "500000",
        "-d",
        "2s",
        "--threads",
        "1",
        "-c",
        "200",
    ];
    let (_, record) = common::run_json(&dir, &args);
    let check = schedule_check(&record);
    assert_eq!(check["outcome"], "failed", "{check}");
    let message = check["message"].as_str().unwrap();
    assert!(message.contains("did not keep its schedule"), "{message}");
    // The cause named is the first the record shows: a worker busy 90 % of its time or more
    // is the CPU's fault (a machine that took the CPU from it shows less, and another cause);
    // on a quiet machine this worker runs flat out.
    let busiest = figure(check, "busiest_worker_cpu_pct");
    let cpu = message.contains("cause: CPU: the busiest worker thread ran");
    assert_eq!(
        cpu,
        busiest >= 90.0,
        "worker busy {busiest:.0} %: {message}"
    );
    assert!(message.contains("; cause: "), "{message}");
}

#[test]
fn a_closed_run_has_no_schedule_to_keep() {
    let _serial = common::serial();
    let target = common::target();
    let dir = common::temp_dir("schedule-closed");
    let url = format!("{}/", target.base_url());
    let record = common::run_json_ok(&dir, &[&url, "-c", "2", "-n", "200"]);
    assert_eq!(schedule_check(&record)["outcome"], "not_applicable");
}
