//! Tests run by several generators: `--segment i/N` runs against the built-in target, merged
//! with `volley merge`, and the refusals of records that are not the shares of one test.

mod common;

use std::path::{Path, PathBuf};

use common::{run_json, run_volley, summary_u64, temp_dir, valid_record};
use serde_json::Value;
use volley::analysis::percentiles;
use volley::record::decode_histogram;

/// Runs quick mode share `segment` into `dir/<name>/run.json`; returns the record's path.
fn quick_share(dir: &Path, name: &str, args: &[&str], segment: &str) -> (PathBuf, Value) {
    let sub = dir.join(name);
    std::fs::create_dir_all(&sub).unwrap();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--segment", segment]);
    let (out, record) = run_json(&sub, &all);
    assert!(
        out.status.success(),
        "share {segment}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (sub.join("run.json"), record)
}

/// `volley merge RECORDS… -o DIR -q`; returns (exit code, stderr, merged record if written).
fn merge(records: &[&Path], out: &Path) -> (Option<i32>, String, Option<Value>) {
    let mut args: Vec<String> = vec!["merge".into()];
    args.extend(records.iter().map(|p| p.display().to_string()));
    args.extend(["-o".into(), out.display().to_string(), "-q".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, stderr) = run_volley(&args);
    let merged = out.join("run.json");
    let record = merged.exists().then(|| valid_record(&merged));
    (code, stderr, record)
}

/// The sum of the records' latency histograms.
fn summed_latency(records: &[&Value]) -> hdrhistogram::Histogram<u64> {
    let mut total = decode_histogram(records[0]["histograms"]["latency_us"].as_str().unwrap())
        .expect("histogram decodes");
    for r in &records[1..] {
        let h = decode_histogram(r["histograms"]["latency_us"].as_str().unwrap()).unwrap();
        total.add(&h).unwrap();
    }
    total
}

/// The record's percentiles are `h`'s: every field equal, up to the last bit JSON's decimal
/// text may change (serde_json parses floats to within one ulp).
fn assert_same_percentiles(written: &Value, h: &hdrhistogram::Histogram<u64>) {
    let expected = serde_json::to_value(percentiles(h)).unwrap();
    let (w, e) = (written.as_object().unwrap(), expected.as_object().unwrap());
    assert_eq!(w.len(), e.len(), "{written} against {expected}");
    for (k, v) in e {
        let (a, b) = (w[k].as_f64().unwrap(), v.as_f64().unwrap());
        assert!(
            (a - b).abs() <= b.abs() * 1e-12,
            "{k}: {a} written, {b} from the summed histogram"
        );
    }
}

#[test]
fn three_quick_shares_send_exactly_n_and_merge_exactly() {
    let target = common::target();
    let dir = temp_dir("dist-quick");
    let url = format!("{}/", target.base_url());
    let args = [url.as_str(), "-n", "3001", "-c", "7"];
    let shares: Vec<(PathBuf, Value)> = (0..3)
        .map(|i| quick_share(&dir, &format!("s{i}"), &args, &format!("{i}/3")))
        .collect();
    // The shares: 1001 + 1000 + 1000 requests (the remainder to share 0), one test hash.
    let requests: Vec<u64> = shares
        .iter()
        .map(|(_, r)| summary_u64(r, "requests"))
        .collect();
    assert_eq!(requests, [1001, 1000, 1000]);
    let hashes: Vec<&str> = shares
        .iter()
        .map(|(_, r)| r["share"]["plan_hash"].as_str().unwrap())
        .collect();
    assert!(
        hashes
            .iter()
            .all(|h| *h == hashes[0] && h.starts_with("sha256:"))
    );
    for (i, (_, r)) in shares.iter().enumerate() {
        assert_eq!(r["share"]["index"], i as u64);
        assert_eq!(r["share"]["count"], 3);
    }

    let out = dir.join("merged");
    let paths: Vec<&Path> = shares.iter().map(|(p, _)| p.as_path()).collect();
    let (code, stderr, merged) = merge(&paths, &out);
    assert_eq!(code, Some(0), "{stderr}");
    let merged = merged.expect("merged run.json");
    assert_eq!(summary_u64(&merged, "requests"), 3001);
    assert_eq!(summary_u64(&merged, "errors"), 0);
    assert_eq!(merged["summary"]["status"]["200"], 3001);
    assert_eq!(merged["merged"]["count"], 3);
    assert_eq!(merged["merged"]["shares"].as_array().unwrap().len(), 3);
    assert!(merged["share"].is_null());

    // The merged histogram is the sum of the shares' bucket by bucket, and every percentile
    // of the merged record is that histogram's.
    let records: Vec<&Value> = shares.iter().map(|(_, r)| r).collect();
    let sum = summed_latency(&records);
    let h = decode_histogram(merged["histograms"]["latency_us"].as_str().unwrap()).unwrap();
    assert_eq!(h.len(), 3001);
    assert_eq!(h, sum, "merged histogram is the sum of the shares'");
    assert_same_percentiles(&merged["summary"]["latency_ms"], &sum);
    // The folder is a complete results folder.
    for f in ["summary.txt", "report.md", "report.html"] {
        assert!(out.join(f).exists(), "{f} in {}", out.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_shares_of_a_plan_file_merge_to_the_whole() {
    let target = common::target();
    let dir = temp_dir("dist-plan");
    let rows: String = (0..10).map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.join("ids.csv"), format!("id\n{rows}")).unwrap();
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"dist\"\n[target]\nbase_url = \"{}\"\n\
             [data.ids]\nfile = \"ids.csv\"\nmode = \"sequential\"\n\
             [[scenario]]\nname = \"get\"\n[scenario.load]\n\
             profile = \"iterations\"\nvus = 5\niterations = 1001\n\
             [[scenario.step]]\nname = \"item\"\npath = \"/bytes/{{{{ data.ids.id }}}}\"\n",
            target.base_url()
        ),
    )
    .unwrap();
    let plan = plan.display().to_string();
    // `volley check --segment` shows the share and its part of the load.
    let (code, stdout, stderr) = run_volley(&["check", &plan, "--segment", "1/2"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("share 1 of 2 shares (--segment 1/2; the load shown is this share's)")
            && stdout.contains("scenario get: 500 iterations shared by 2 VUs"),
        "{stdout}"
    );
    let mut paths = Vec::new();
    let mut records = Vec::new();
    for i in 0..2 {
        let sub = dir.join(format!("s{i}"));
        let json = sub.join("run.json");
        let segment = format!("{i}/2");
        let (code, _, stderr) = run_volley(&[
            "run",
            &plan,
            "--segment",
            &segment,
            "--json",
            json.to_str().unwrap(),
            "--out",
            sub.join("results").to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(code, Some(0), "share {segment}: {stderr}");
        records.push(valid_record(&json));
        paths.push(json);
    }
    assert_eq!(
        [
            summary_u64(&records[0], "requests"),
            summary_u64(&records[1], "requests")
        ],
        [501, 500]
    );
    let out = dir.join("merged");
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let (code, stderr, merged) = merge(&refs, &out);
    assert_eq!(code, Some(0), "{stderr}");
    let merged = merged.expect("merged run.json");
    assert_eq!(summary_u64(&merged, "requests"), 1001);
    assert_eq!(summary_u64(&merged, "iterations"), 1001);
    let rs: Vec<&Value> = records.iter().collect();
    let sum = summed_latency(&rs);
    let h = decode_histogram(merged["histograms"]["latency_us"].as_str().unwrap()).unwrap();
    assert_eq!(h, sum);
    assert_same_percentiles(&merged["summary"]["latency_ms"], &sum);
    // Series second k of the merged record is the shares' seconds at that wall-clock second:
    // its requests add up to every share's.
    let series_total = |r: &Value| -> u64 {
        r["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["requests"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(
        series_total(&merged),
        series_total(&records[0]) + series_total(&records[1])
    );
    // So are a group's seconds (its intervals' input, which `volley verify` recomputes the
    // merged group's intervals from): the step's requests per second add up to the whole.
    let step = common::group(&merged, "step", "item");
    let per_second: u64 = step["batches"]["requests"]
        .as_array()
        .unwrap_or_else(|| panic!("the merged step's batches: {step}"))
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(per_second, 1001);
    assert!(step["ci95"].is_object(), "{step}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_refuses_records_that_are_not_one_whole_test() {
    let target = common::target();
    let dir = temp_dir("dist-refuse");
    let url = format!("{}/", target.base_url());
    let (a, _) = quick_share(&dir, "a", &[&url, "-n", "30", "-c", "3"], "0/3");
    let (b, _) = quick_share(&dir, "b", &[&url, "-n", "30", "-c", "3"], "1/3");
    let (other, _) = quick_share(&dir, "o", &[&url, "-n", "31", "-c", "3"], "2/3");

    let (code, stderr, merged) = merge(&[&a, &b], &dir.join("m1"));
    assert_ne!(code, Some(0));
    assert!(merged.is_none());
    assert!(stderr.contains("missing share 2/3"), "{stderr}");

    let (code, stderr, _) = merge(&[&a, &b, &a], &dir.join("m2"));
    assert_ne!(code, Some(0));
    assert!(
        stderr.contains("overlapping segments") && stderr.contains("share 0/3"),
        "{stderr}"
    );

    let (code, stderr, _) = merge(&[&a, &b, &other], &dir.join("m3"));
    assert_ne!(code, Some(0));
    assert!(stderr.contains("different tests"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_shares_watch_section_is_kept_beside_the_merged_figures() {
    let target = common::target();
    let dir = temp_dir("dist-watch");
    let url = format!("{}/", target.base_url());
    let page = format!("prom={}/metrics", target.base_url());
    let args = [
        url.as_str(),
        "-d",
        "2s",
        "-c",
        "2",
        "--threads",
        "1",
        "--watch",
        page.as_str(),
        "--watch-metric",
        "volley_target_requests_total",
    ];
    let shares: Vec<(PathBuf, Value)> = (0..2)
        .map(|i| quick_share(&dir, &format!("s{i}"), &args, &format!("{i}/2")))
        .collect();
    for (_, r) in &shares {
        let series = &r["watch"]["prom"][0]["series"];
        assert!(!series.as_array().unwrap().is_empty(), "{}", r["watch"]);
    }
    let out = dir.join("merged");
    let paths: Vec<&Path> = shares.iter().map(|(p, _)| p.as_path()).collect();
    let (code, stderr, merged) = merge(&paths, &out);
    assert_eq!(code, Some(0), "{stderr}");
    let merged = merged.expect("merged run.json");
    // Not merged (the same target's page, scraped by each generator at its own instants) …
    assert!(merged["watch"].is_null(), "{}", merged["watch"]);
    // … but each generator's, exactly as its own record has it, beside its other figures.
    for (i, (_, r)) in shares.iter().enumerate() {
        let kept = &merged["merged"]["shares"][i];
        assert_eq!(kept["index"], i as u64);
        assert_eq!(kept["watch"], r["watch"], "share {i}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
