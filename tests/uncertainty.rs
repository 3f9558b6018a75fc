//! A run's figures with their 95 % intervals (docs/measurement.md, "Uncertainty"): the
//! intervals hold the pooled figure of repeated runs most of the time (a small, generous
//! version of `bench/coverage.sh`), a run asked to last until precise stops when it is, or at
//! its maximum length, and bad precision goals are refused.

mod common;

use serde_json::Value;

/// The interval of `field` (`p50_ms`, `rps`) in a record: (value, half-width).
fn bound(record: &Value, field: &str) -> Option<(f64, f64)> {
    let b = &record["summary"]["ci95"][field];
    Some((b["value"].as_f64()?, b["half_width"].as_f64()?))
}

#[test]
fn intervals_hold_the_pooled_figure_in_most_runs() {
    let target = common::target();
    let dir = common::temp_dir("uncertainty-coverage");
    let url = format!("{}/delay?ms=2&dist=exp", target.base_url());
    let runs: Vec<Value> = (0..12)
        .map(|_| common::run_json_ok(&dir, &[&url, "-c", "8", "-d", "5s", "--threads", "1"]))
        .collect();
    for field in ["rps", "p50_ms", "p99_ms"] {
        let bounds: Vec<(f64, f64)> = runs.iter().filter_map(|r| bound(r, field)).collect();
        assert_eq!(
            bounds.len(),
            runs.len(),
            "{field}: every run has an interval"
        );
        let pooled = bounds.iter().map(|b| b.0).sum::<f64>() / bounds.len() as f64;
        let covered = bounds
            .iter()
            .filter(|(v, h)| (v - pooled).abs() <= *h)
            .count();
        // 95 % intervals: 11.4 of 12 expected; 8 allows for a loaded CI machine.
        assert!(
            covered >= 8,
            "{field}: {covered} of 12 hold {pooled}: {bounds:?}"
        );
        // And they say something: the median half-width is under a fifth of the figure.
        let mut rel: Vec<f64> = bounds.iter().map(|(v, h)| h / v).collect();
        rel.sort_by(f64::total_cmp);
        assert!(rel[6] < 0.2, "{field}: half-widths {rel:?}");
    }
}

#[test]
fn a_run_lasts_until_it_is_precise_or_its_maximum() {
    let target = common::target();
    let dir = common::temp_dir("uncertainty-precision");
    let url = format!("{}/delay?ms=2", target.base_url());
    let record = common::run_json_ok(
        &dir,
        &[
            &url,
            "-c",
            "8",
            "-d",
            "60s",
            "--precision",
            "p50=5%",
            "--precision",
            "rps=10%",
        ],
    );
    let p = &record["summary"]["ci95"]["precision"];
    assert_eq!(p["reached"], true, "{p}");
    let at = p["at_s"].as_f64().unwrap();
    let window = record["summary"]["duration_s"].as_f64().unwrap();
    // At least 5 one-second batches, and far from the 60 s asked as the most.
    assert!((5.0..30.0).contains(&at), "precise at {at} s");
    assert!(
        (window - at).abs() < 0.5,
        "window {window} s, precise at {at} s"
    );
    assert!(record["interrupted"].is_null(), "{}", record["interrupted"]);
    let (p50, half) = bound(&record, "p50_ms").unwrap();
    assert!(half / p50 <= 0.06, "p50 {p50} ± {half}");

    // A goal it cannot reach: it runs its whole length and says so.
    let record = common::run_json_ok(
        &dir,
        &[&url, "-c", "8", "-d", "6s", "--precision", "p99.9=0.001%"],
    );
    let p = &record["summary"]["ci95"]["precision"];
    assert_eq!(p["reached"], false, "{p}");
    assert!(p["at_s"].is_null());
    let window = record["summary"]["duration_s"].as_f64().unwrap();
    assert!((window - 6.0).abs() < 0.1, "{window}");
    let out_dir = dir.join("shown");
    let (code, out, err) = common::run_volley(&[
        &url,
        "-c",
        "4",
        "-d",
        "6s",
        "--precision",
        "p50=0.001%",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    common::verified(&out_dir);
    // The summary shows the intervals and what the precision asked got.
    assert!(out.contains("95 % intervals (batch means): rps "), "{out}");
    assert!(
        out.contains("Precision: stopped at the maximum length: p50 ±"),
        "{out}"
    );
}

#[test]
fn bad_precision_goals_are_refused_with_what_and_where() {
    for (goal, says) in [
        (
            "p98=2%",
            "`p98` is not a figure with an interval (rps, mean, p50, p90, p99, p99.9)",
        ),
        ("p99=0%", "`0%` is not a share above 0% and up to 50%"),
        ("p99", "`p99` is not FIGURE=SHARE like p99=2%"),
    ] {
        let (code, _, err) = common::run_volley(&["http://127.0.0.1:1/", "--precision", goal]);
        assert_eq!(code, Some(2), "{goal}: {err}");
        assert!(err.contains(says), "{goal}: {err}");
    }
    let dir = common::temp_dir("uncertainty-plan");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "name = \"p\"\n[target]\nbase_url = \"http://127.0.0.1:1\"\n\
         [precision]\np99 = \"two\"\n\
         [[scenario]]\nname = \"s\"\nload = { profile = \"constant-vus\", vus = 1, duration = \"1s\" }\n\
         [[scenario.step]]\nname = \"get\"\npath = \"/\"\n",
    )
    .unwrap();
    let (code, _, err) = common::run_volley(&["check", plan.to_str().unwrap()]);
    assert_ne!(code, Some(0), "{err}");
    assert!(
        err.contains("plan.toml:4") && err.contains("`two` is not a share"),
        "{err}"
    );
}
