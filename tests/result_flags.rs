//! What k6 and oha users reach for, the same in quick mode, `volley run` and `find-max`:
//! expected statuses (`--expect-status`, `checks.status` with classes), latency buckets of
//! their own (`--buckets`, `[report] buckets`, `volley report --buckets` on an old record),
//! `--group-by` on a plan, the standard deviation beside the mean, and hints for oha's and
//! wrk's flags.

mod common;

use std::path::Path;

use serde_json::Value;

/// The bucket bounds of a record (`null` for the one above the last) and their counts.
fn buckets(record: &Value) -> (Vec<Option<f64>>, Vec<u64>) {
    let b = record["summary"]["latency_buckets"].as_array().unwrap();
    (
        b.iter().map(|b| b["le_ms"].as_f64()).collect(),
        b.iter().map(|b| b["count"].as_u64().unwrap()).collect(),
    )
}

fn plan(dir: &Path, base_url: &str, extra_target: &str, step: &str, report: &str) -> String {
    let path = dir.join("plan.toml");
    std::fs::write(
        &path,
        format!(
            "[target]\nbase_url = \"{base_url}\"\n{extra_target}\n[[scenario]]\nname = \"s\"\n\
             [scenario.load]\nprofile = \"iterations\"\nvus = 1\niterations = 20\n\
             [[scenario.step]]\nname = \"get\"\n{step}\n{report}"
        ),
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn seed_001_buckets_come_out_of_volley() {
    let target = common::target();
    let dir = common::temp_dir("buckets-quick");
    let url = format!("{}/delay?ms=30", target.base_url());
    let args = [
        &url,
        "-n",
        "20",
        "-c",
        "2",
        "--buckets",
        "25ms,50ms,100ms,500ms",
    ];
    let (out, record) = common::run_json(&dir, &args);
    assert_eq!(out.status.code(), Some(0));
    let (bounds, counts) = buckets(&record);
    let want = [Some(25.0), Some(50.0), Some(100.0), Some(500.0), None];
    assert_eq!(bounds, want);
    assert_eq!(counts.iter().sum::<u64>(), 20);
    assert_eq!(
        (counts[0], counts[4]),
        (0, 0),
        "30 ms lies in 25–50: {counts:?}"
    );
    assert_eq!(record["config"]["latency_buckets_ms"][3], 500.0);
    // The reports name the ranges as seed 001 did.
    let results = common::only_subfolder(&dir.join("results"));
    let summary = std::fs::read_to_string(results.join("summary.txt")).unwrap();
    for range in ["≤ 25.00", "25.00–50.00", "100.0–500.0", "> 500.0"] {
        assert!(summary.contains(range), "{range} missing:\n{summary}");
    }
    // An old record cut again: from its histogram, at report time.
    let json = dir.join("run.json");
    let (code, md, stderr) = common::run_volley(&[
        "report",
        json.to_str().unwrap(),
        "-f",
        "md",
        "--buckets",
        "10ms,1s",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(md.contains("| ≤ 10.00 "), "{md}");
    assert!(md.contains("| 10.00–1000.0 | 20 "), "{md}");
    let (code, _, stderr) = common::run_volley(&[&url, "-n", "1", "--buckets", "50ms,25ms"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("bucket bounds go up: 25ms is not above 50ms"),
        "{stderr}"
    );
}

#[test]
fn a_plan_takes_the_quick_modes_result_flags() {
    let target = common::target();
    let dir = common::temp_dir("run-result-flags");
    let base = target.base_url();
    let step = "path = \"/status/422\"\n[scenario.step.checks]\nstatus = [\"2xx\", 422]";
    let plan = plan(
        &dir,
        &base,
        "",
        step,
        "[report]\nbuckets = [\"1ms\", \"1s\"]\n",
    );
    let record = common::run_json_ok(&dir, &["run", &plan]);
    assert_eq!(common::summary_u64(&record, "errors"), 0);
    assert_eq!(record["checks"][0]["check"], "status in [200–299, 422]");
    assert_eq!(buckets(&record).0, [Some(1.0), Some(1000.0), None]);
    // The flags: buckets over the plan's, a status check for the step without one, groups.
    let bare = plan_without_checks(&dir, &base);
    let record = common::run_json_ok(
        &dir,
        &[
            "run",
            &bare,
            "--expect-status",
            "422",
            "--group-by",
            "status",
            "--buckets",
            "2s",
        ],
    );
    assert_eq!(record["checks"][0]["passed"], 20);
    assert_eq!(buckets(&record).0, [Some(2000.0), None]);
    assert_eq!(record["grouped"][0]["selector"], "status");
    assert_eq!(record["grouped"][0]["values"][0]["value"], "422");
    // Without the flag, the 422s are errors.
    let (out, _) = common::run_json(&dir, &["run", &bare]);
    assert_eq!(out.status.code(), Some(1));
}

fn plan_without_checks(dir: &Path, base: &str) -> String {
    let sub = dir.join("bare");
    std::fs::create_dir_all(&sub).unwrap();
    plan(&sub, base, "", "path = \"/status/422\"", "")
}

#[test]
fn find_max_takes_expected_statuses() {
    let target = common::target();
    let dir = common::temp_dir("find-max-expect");
    let url = format!("{}/status/422", target.base_url());
    let args = [
        "find-max",
        &url,
        "--slo",
        "errors<1%",
        "--model",
        "closed",
        "--start",
        "1",
        "--max",
        "2",
        "--step",
        "300ms",
        "--warmup",
        "0s",
        "--budget",
        "5s",
        "--expect-status",
        "422",
    ];
    let record = common::run_json_ok(&dir, &args);
    assert_eq!(common::summary_u64(&record, "errors"), 0);
    assert!(
        record["find_max"]["max_sustainable_load"]
            .as_f64()
            .is_some(),
        "{}",
        record["find_max"]
    );
}

#[test]
fn the_summary_shows_the_standard_deviation_beside_the_mean() {
    let target = common::target();
    let dir = common::temp_dir("stdev");
    let url = format!("{}/", target.base_url());
    let (_, record) = common::run_json(&dir, &[&url, "-n", "50", "-c", "1"]);
    let stdev = record["summary"]["latency_ms"]["stdev"].as_f64().unwrap();
    let results = common::only_subfolder(&dir.join("results"));
    let summary = std::fs::read_to_string(results.join("summary.txt")).unwrap();
    assert!(summary.contains("stdev"), "{summary}");
    let md = std::fs::read_to_string(results.join("report.md")).unwrap();
    let shown = volley::units::ms(Some(stdev));
    assert!(md.contains(&format!("± {shown} ms")), "{shown}: {md}");
}

#[test]
fn oha_and_wrk_flags_get_a_hint() {
    for (args, hint) in [
        (&["-d", "{\"a\":1}"][..], "did you mean `--body`?"),
        (&["-z", "10s"][..], "oha's -z is the duration"),
        (&["-q", "100"][..], "did you mean `--rate`?"),
        (&["-t", "4"][..], "did you mean `--threads`?"),
    ] {
        let mut all = vec!["http://127.0.0.1:1/"];
        all.extend_from_slice(args);
        let (code, _, stderr) = common::run_volley(&all);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(hint), "{args:?}: {stderr}");
    }
}
