//! `--group-by` end to end: the built-in target answering as several backends, volley grouping
//! its responses by header, JSON field and status, and what run.json, the reports and
//! `volley compare` say per value.

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::Value;
use volley::server::{self, Backends, RunningTarget, TargetConfig};

/// The built-in target as `n` backends behind a round-robin front, with these delays.
fn backends(n: usize, delays: &[Duration]) -> RunningTarget {
    server::spawn_with_backends(
        TargetConfig {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            threads: 1,
            capacity: None,
        },
        Backends::new(n, delays).unwrap(),
    )
    .expect("target starts")
}

/// The record's table of `selector`.
fn grouped<'a>(record: &'a Value, selector: &str) -> &'a Value {
    record["grouped"]
        .as_array()
        .unwrap_or_else(|| panic!("no grouped in the record: {}", record["summary"]))
        .iter()
        .find(|g| g["selector"] == selector)
        .unwrap_or_else(|| panic!("no table {selector}: {}", record["grouped"]))
}

/// The row of `value` in a table.
fn row<'a>(table: &'a Value, value: &str) -> &'a Value {
    table["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["value"] == value)
        .unwrap_or_else(|| panic!("no row {value}: {}", table["values"]))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The values of a table, in the record's order.
fn values(table: &Value) -> Vec<String> {
    table["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap().to_string())
        .collect()
}

/// Runs a quick test of `url` grouped by `group_by`, with results in `dir/results`.
fn quick(dir: &Path, url: &str, group_by: &[&str], extra: &[&str]) -> Value {
    let mut args = vec![url, "-c", "6", "-d", "2s"];
    for g in group_by {
        args.extend(["--group-by", g]);
    }
    args.extend(extra);
    let (out, record) = run_json(dir, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        schema_errors(&record).is_empty(),
        "{:?}",
        schema_errors(&record)
    );
    record
}

#[test]
fn responses_spread_over_three_backends_add_up_to_the_total_a_third_each() {
    let _serial = serial();
    let t = backends(3, &[]);
    let dir = temp_dir("group-three");
    let record = quick(&dir, &t.base_url(), &["header:X-Backend"], &[]);
    let g = grouped(&record, "header:X-Backend");
    assert_eq!(values(g), ["b1", "b2", "b3"], "{g}");
    assert_eq!(u(&g["distinct_values"]), 3);
    let requests = summary_u64(&record, "requests");
    assert!(requests > 100, "{requests}");
    let sum: u64 = g["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| u(&v["responses"]))
        .sum();
    assert_eq!(sum, requests, "the rows add up to the total");
    assert_eq!(u(&g["responses"]), requests);
    for b in ["b1", "b2", "b3"] {
        let share = row(g, b)["share_pct"].as_f64().unwrap();
        assert!((30.0..=36.7).contains(&share), "{b}: {share}%");
        assert_eq!(u(&row(g, b)["status"]["200"]), u(&row(g, b)["responses"]));
    }
    // Every report shows it: the summary, Markdown and HTML (table and chart).
    let results = only_subfolder(&dir.join("results"));
    let summary = std::fs::read_to_string(results.join("summary.txt")).unwrap();
    assert!(summary.contains("Grouped by header:X-Backend"), "{summary}");
    assert!(summary.contains("3 distinct values"), "{summary}");
    let md = std::fs::read_to_string(results.join("report.md")).unwrap();
    assert!(md.contains("## Grouped by header:X-Backend"), "{md}");
    assert!(md.contains("| b2 |"), "{md}");
    let html = std::fs::read_to_string(results.join("report.html")).unwrap();
    assert!(
        html.contains("id=\"chart-grouped-0\""),
        "no distribution chart"
    );
    assert!(html.contains("Grouped by header:X-Backend: distribution"));
    assert!(
        html.contains("<td>b3</td>") || html.contains(">b3<"),
        "no latency table row"
    );
}

#[test]
fn per_backend_latency_reflects_each_backends_delay() {
    let _serial = serial();
    let ms = Duration::from_millis;
    let t = backends(3, &[ms(1), ms(1), ms(40)]);
    let dir = temp_dir("group-delay");
    let record = quick(&dir, &t.base_url(), &["header:X-Backend"], &[]);
    let g = grouped(&record, "header:X-Backend");
    let p50 = |b: &str| row(g, b)["latency_ms"]["p50"].as_f64().unwrap();
    assert!(p50("b3") >= 38.0, "b3 waits 40 ms: p50 {}", p50("b3"));
    for b in ["b1", "b2"] {
        assert!(p50(b) < 20.0, "{b} waits 1 ms: p50 {}", p50(b));
    }
    assert!(row(g, "b3")["latency_ms"]["max"].as_f64().unwrap() >= 40.0);
}

#[test]
fn status_grouping_counts_each_status_with_its_errors() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("group-status");
    let plan = dir.join("status.toml");
    std::fs::write(
        &plan,
        format!(
            "[target]\nbase_url = \"{}\"\ngroup_by = [\"status\"]\n\n\
             [[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"iterations\"\nvus = 2\n\
             iterations = 60\n\n\
             [[scenario.step]]\nname = \"ok\"\npath = \"/\"\n\n\
             [[scenario.step]]\nname = \"missing\"\npath = \"/status/404\"\n",
            t.base_url()
        ),
    )
    .unwrap();
    let (_, record) = run_json(&dir, &["run", plan.to_str().unwrap()]);
    let g = grouped(&record, "status");
    assert_eq!(values(g), ["200", "404"], "{g}");
    assert_eq!(u(&row(g, "200")["responses"]), 60);
    assert_eq!(u(&row(g, "404")["responses"]), 60);
    assert_eq!(u(&row(g, "404")["errors"]), 60);
    assert_eq!(u(&row(g, "200")["errors"]), 0);
    assert_eq!(row(g, "404")["share_pct"].as_f64().unwrap(), 50.0);
}

/// A plan whose step creates tasks and groups by the id of each (a new value per response).
fn tasks_plan(dir: &Path, base: &str, iterations: u32) -> std::path::PathBuf {
    let plan = dir.join("tasks.toml");
    std::fs::write(
        &plan,
        format!(
            "[target]\nbase_url = \"{base}\"\n\n\
             [[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"iterations\"\nvus = 2\n\
             iterations = {iterations}\n\n\
             [[scenario.step]]\nname = \"create\"\nmethod = \"POST\"\npath = \"/tasks\"\n\
             json = {{ title = \"x\" }}\ngroup_by = [\"json:$.id\", \"json:$.title\"]\n"
        ),
    )
    .unwrap();
    plan
}

#[test]
fn json_grouping_reads_a_field_and_past_fifty_values_counts_the_rest_as_other() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("group-json");
    let plan = tasks_plan(&dir, &t.base_url(), 80);
    let (out, record) = run_json(&dir, &["run", plan.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let title = grouped(&record, "json:$.title");
    assert_eq!(values(title), ["x"]);
    assert_eq!(u(&row(title, "x")["responses"]), 80);
    assert_eq!(u(&row(title, "x")["status"]["201"]), 80);
    let ids = grouped(&record, "json:$.id");
    assert_eq!(u(&ids["distinct_values"]), 80, "every id is distinct");
    assert_eq!(ids["distinct_saturated"], false);
    let rows = ids["values"].as_array().unwrap();
    assert_eq!(rows.len(), 51, "50 values and (other)");
    let other = row(ids, "(other)");
    assert_eq!(other["row"], "other");
    assert_eq!(u(&other["exchanges"]), 30);
    let total: u64 = rows.iter().map(|v| u(&v["exchanges"])).sum();
    assert_eq!(total, 80);
    let results = only_subfolder(&dir.join("results"));
    let summary = std::fs::read_to_string(results.join("summary.txt")).unwrap();
    assert!(
        summary.contains("later ones are counted in (other)"),
        "{summary}"
    );
}

#[test]
fn a_bad_selector_is_a_clear_error_before_any_load() {
    let _serial = serial();
    let t = backends(3, &[]);
    let (code, _, stderr) = run_volley(&[&t.base_url(), "--group-by", "backend", "-d", "1s"]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("--group-by"), "{stderr}");
    assert!(
        stderr.contains("`backend` is not a selector: write header:NAME, json:$.path or status"),
        "{stderr}"
    );
    let (code, _, stderr) = run_volley(&[&t.base_url(), "--group-by", "header:X Backend"]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("is not a valid header name"), "{stderr}");
    let dir = temp_dir("group-bad-plan");
    let plan = dir.join("bad.toml");
    std::fs::write(
        &plan,
        "[target]\nbase_url = \"http://127.0.0.1:1\"\ngroup_by = [\"json:$.a[x]\"]\n\n\
         [[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\n\
         duration = \"1s\"\n\n[[scenario.step]]\nname = \"get\"\npath = \"/\"\n",
    )
    .unwrap();
    let (code, _, stderr) = run_volley(&["check", plan.to_str().unwrap()]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("bad.toml:3:"), "located: {stderr}");
    assert!(stderr.contains("group_by `json:$.a[x]`"), "{stderr}");
}

#[test]
fn compare_shows_each_values_share_and_latency_side_by_side() {
    let _serial = serial();
    let ms = Duration::from_millis;
    let even = backends(3, &[ms(1)]);
    let slow = backends(3, &[ms(1), ms(1), ms(30)]);
    let dir = temp_dir("group-compare");
    let a = dir.join("a");
    let b = dir.join("b");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    quick(&a, &even.base_url(), &["header:X-Backend"], &[]);
    quick(&b, &slow.base_url(), &["header:X-Backend"], &[]);
    let (code, stdout, stderr) = run_volley(&[
        "compare",
        a.join("run.json").to_str().unwrap(),
        b.join("run.json").to_str().unwrap(),
    ]);
    assert!(code.is_some(), "{stderr}");
    assert!(stdout.contains("Grouped by header:X-Backend"), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("b3 "))
        .unwrap_or_else(|| panic!("no b3 row: {stdout}"));
    assert!(line.contains("Δ") || line.contains('%'), "{line}");
    let header = stdout
        .lines()
        .find(|l| l.contains("share") && l.contains("p99"))
        .unwrap_or_else(|| panic!("no header: {stdout}"));
    assert!(header.contains("Δ p99"), "{header}");
    // The row ends with variant b's p50, p99 (ms) and p99's change: b3 waits 30 ms there.
    let cells: Vec<&str> = line.split_whitespace().collect();
    let b_p50: f64 = cells[cells.len() - 3].parse().unwrap();
    assert!(b_p50 >= 28.0, "{line}");
    assert!(cells[cells.len() - 1].starts_with('+'), "{line}");
}

#[test]
fn example_001_groups_the_balancers_responses_by_backend() {
    let _serial = serial();
    let t = backends(3, &[]);
    let dir = temp_dir("group-example");
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/001-load-balancer.toml");
    let (out, record) = run_json(
        &dir,
        &[
            "run",
            plan.to_str().unwrap(),
            "--set",
            &format!("target.base_url={}", t.base_url()),
            "--time-scale",
            "0.25",
        ],
    );
    // The plan fails its error threshold on purpose (see its comments).
    assert_eq!(
        out.status.code(),
        Some(99),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let g = grouped(&record, "header:X-Backend");
    assert_eq!(values(g), ["b1", "b2", "b3"], "{g}");
    let sum: u64 = g["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| u(&v["exchanges"]))
        .sum();
    assert_eq!(
        sum,
        summary_u64(&record, "requests") + summary_u64(&record, "not_sent")
    );
}
