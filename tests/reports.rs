//! Reports end to end: the results folder every run writes, `volley report` regenerating each
//! file from the record alone, and the reports of runs that went wrong.

mod common;

use std::path::Path;

use common::*;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn quick_mode_writes_a_results_folder_that_report_regenerates() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("results-folder");
    let out = dir.join("results");
    let url = format!("{}/delay?ms=1", t.base_url());
    let (code, stdout, stderr) = run_volley(&[
        &url,
        "-c",
        "4",
        "-d",
        "2s",
        "--threads",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let folder = only_subfolder(&out);
    let name = folder.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("quick-") && name.ends_with('Z') && name.len() == "quick-".len() + 16,
        "{name}"
    );
    for (label, file) in [
        ("results: ", ""),
        ("report.md: ", "report.md"),
        ("report.html: ", "report.html"),
    ] {
        let expected = format!("{label}{}", folder.join(file).display());
        assert!(
            stdout.contains(expected.trim_end_matches('/')),
            "{expected} in {stdout}"
        );
    }

    let md = read(&folder.join("report.md"));
    // A run on a machine whose hypervisor took CPU from it is completed with a warning: that
    // is the machine, not the report.
    let verdict = if md.contains("the hypervisor took") {
        "**WARNING** — Completed with "
    } else {
        "**OK** — Completed: "
    };
    for expected in [
        "# volley report: quick",
        verdict,
        "## Environment",
        "## Configuration",
        "| Load | closed model, 4 connections |",
        "## Results",
        "| Latency p99.9 | ",
        "| Data received | ",
        "## Latency (ms)",
        "## Status codes\n\n| Status | Responses | Share |\n|:---|---:|---:|\n| 200 | ",
        "## Latency distribution",
        "## Load generator",
    ] {
        assert!(md.contains(expected), "missing {expected:?} in\n{md}");
    }
    // A 1 ms delay: the median is between 1 and 5 ms, and the report says so.
    let p50: f64 = md
        .lines()
        .find_map(|l| l.strip_prefix("| Latency p50 | "))
        .and_then(|l| l.split(' ').next())
        .and_then(|v| v.parse().ok())
        .expect("p50 row");
    assert!((1.0..5.0).contains(&p50), "p50 {p50}");

    let html = read(&folder.join("report.html"));
    for id in [
        "throughput",
        "latency",
        "in-flight",
        "spectrum",
        "histogram",
    ] {
        assert!(html.contains(&format!("id=\"chart-{id}\"")), "chart {id}");
    }

    // Every file regenerates byte for byte from the record alone.
    let record = folder.join("run.json");
    for (format, file) in [
        ("md", "report.md"),
        ("html", "report.html"),
        ("txt", "summary.txt"),
    ] {
        let (code, stdout, stderr) =
            run_volley(&["report", record.to_str().unwrap(), "--format", format]);
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(stdout, read(&folder.join(file)), "{format}");
    }
    // -o writes a file; a results folder works as the argument too.
    let copy = dir.join("copy.html");
    let (code, stdout, stderr) = run_volley(&[
        "report",
        folder.to_str().unwrap(),
        "-f",
        "html",
        "-o",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.is_empty());
    assert_eq!(read(&copy), html);
}

#[test]
fn a_run_where_every_request_failed_still_gets_its_reports() {
    let dir = temp_dir("all-failed");
    let out = dir.join("results");
    let url = format!("http://127.0.0.1:{}/", closed_port());
    let (code, _, stderr) =
        run_volley(&[&url, "-n", "20", "-c", "2", "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    let folder = only_subfolder(&out);
    let md = read(&folder.join("report.md"));
    assert!(
        md.contains("**FAILED** — No connection to the target worked: connection_refused on 20"),
        "{md}"
    );
    assert!(md.contains("No response was received"), "{md}");
    assert!(
        md.contains("| connection_refused | 20 | 100.00% | nothing listens"),
        "{md}"
    );
    let html = read(&folder.join("report.html"));
    assert!(html.contains("No connection to the target worked"));
    // No latency: no latency charts, but the request-rate charts still show the failures.
    assert!(!html.contains("id=\"chart-spectrum\""));
    assert!(!html.contains("id=\"chart-histogram\""));
    let (code, stdout, _) = run_volley(&["report", folder.to_str().unwrap(), "-f", "txt"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("every request failed"), "{stdout}");
}

#[test]
fn bad_records_are_refused_clearly_with_exit_code_2() {
    let dir = temp_dir("bad-records");
    let future = dir.join("future.json");
    std::fs::write(
        &future,
        r#"{"schema_version": 7, "tool": {"name": "volley", "version": "3.1.0"}}"#,
    )
    .unwrap();
    let not_a_record = dir.join("other.json");
    std::fs::write(&not_a_record, r#"{"hello": "world"}"#).unwrap();
    let missing = dir.join("missing.json");
    let cases: [(&[&str], &str); 5] = [
        (
            &["report", future.to_str().unwrap()],
            "record format version 7 (written by volley 3.1.0); this volley (0.1.0) reads \
             version 2: upgrade volley to read it",
        ),
        (
            &[
                "compare",
                future.to_str().unwrap(),
                future.to_str().unwrap(),
            ],
            "record format version 7",
        ),
        (
            &["report", not_a_record.to_str().unwrap()],
            "not a volley run record",
        ),
        (&["report", missing.to_str().unwrap()], "cannot read"),
        (
            &["report", dir.to_str().unwrap()],
            "none of its subfolders holds one",
        ),
    ];
    for (args, expected) in cases {
        let (code, _, stderr) = run_volley(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// What the target wrote (a grouped value) reaches `report.md` as text, never as raw HTML;
/// `report.html` escapes it too.
#[test]
fn markup_from_the_target_is_escaped_in_every_report() {
    let t = target();
    let dir = temp_dir("report-markup");
    let out = dir.join("results");
    let markup = "<img src=x onerror=alert(1)>&";
    let body = serde_json::json!({ "title": markup }).to_string();
    let url = format!("{}/tasks", t.base_url());
    let (code, _, stderr) = run_volley(&[
        &url,
        "-m",
        "POST",
        "-H",
        "Content-Type: application/json",
        "--body",
        &body,
        "-n",
        "3",
        "-c",
        "1",
        "--group-by",
        "json:$.title",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let folder = only_subfolder(&out);
    common::verified(&folder);
    let record = read(&folder.join("run.json"));
    assert!(record.contains("<img src=x onerror=alert(1)>&"), "{record}");
    for file in ["report.md", "report.html"] {
        let text = read(&folder.join(file));
        assert!(!text.contains("<img"), "{file} holds raw markup:\n{text}");
        assert!(
            text.contains("&lt;img src=x onerror=alert(1)&gt;&amp;"),
            "{file}:\n{text}"
        );
    }
}
