//! `volley verify` on a committed record (`tests/records/v2-two-scenarios.json`: a plan of a
//! closed and an open scenario, two thresholds, run against `volley serve`): it holds every
//! invariant, and a figure changed by hand is named with its JSON path and both sides of its
//! equation, exit 1.

mod common;

use std::path::{Path, PathBuf};

use common::{run_volley, temp_dir};
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/records/v2-two-scenarios.json")
}

/// The fixture with `mutate` applied, written into `dir`.
fn mutated(dir: &Path, name: &str, mutate: impl FnOnce(&mut Value)) -> PathBuf {
    let mut r: Value = serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    mutate(&mut r);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(&r).unwrap()).unwrap();
    path
}

#[test]
fn the_committed_record_verifies() {
    let (code, stdout, stderr) = run_volley(&["verify", fixture().to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.starts_with("ok: "), "{stdout}");
}

#[test]
fn a_figure_changed_by_hand_is_named_with_both_sides() {
    let dir = temp_dir("verify-mutated");
    type Case = (&'static str, fn(&mut Value), &'static str);
    let cases: [Case; 6] = [
        (
            "rps",
            |r| r["summary"]["rps"] = Value::from(r["summary"]["rps"].as_f64().unwrap() * 1.1),
            "summary.rps: ",
        ),
        (
            "group-rps",
            |r| r["groups"][3]["rps"] = Value::from(1.0),
            "groups[3].rps: 1 ≠ (requests − drained) / window_s",
        ),
        (
            "errors",
            |r| r["summary"]["errors"] = Value::from(3),
            "summary.errors: 3 ≠ Σ summary.errors_by_kind = 0",
        ),
        (
            "p99",
            |r| r["summary"]["latency_ms"]["p99"] = Value::from(0.0001),
            "summary.latency_ms.p99: 0.0001 ≠ at least summary.latency_ms.p95",
        ),
        (
            "series",
            |r| {
                let n = r["series"][0]["requests"].as_u64().unwrap();
                r["series"][0]["requests"] = Value::from(n + 1);
            },
            "summary.requests: ",
        ),
        (
            "verdict",
            |r| r["thresholds"][1]["passed"] = Value::from(false),
            "outcome.status: Completed ≠ ThresholdsFailed",
        ),
    ];
    for (name, mutate, named) in cases {
        let path = mutated(&dir, &format!("{name}.json"), mutate);
        let (code, stdout, stderr) = run_volley(&["verify", path.to_str().unwrap()]);
        assert_eq!(code, Some(1), "{name}: {stdout}{stderr}");
        assert!(stdout.contains("FAILED: "), "{name}: {stdout}");
        assert!(
            stdout.contains(named),
            "{name}: expected {named:?} in\n{stdout}"
        );
    }
    // Several paths at once: each is reported; any failure makes the exit 1.
    let bad = dir.join("rps.json");
    let (code, stdout, _) =
        run_volley(&["verify", fixture().to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(
        stdout.contains("ok: ") && stdout.contains("FAILED: "),
        "{stdout}"
    );
}

#[test]
fn what_is_not_a_record_is_refused_with_exit_2() {
    let dir = temp_dir("verify-bad");
    let path = dir.join("nope.json");
    std::fs::write(&path, "{\"hello\": 1}").unwrap();
    let (code, _, stderr) = run_volley(&["verify", path.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("nope.json"), "{stderr}");
    let (code, _, stderr) = run_volley(&["verify", dir.join("missing").to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
}
