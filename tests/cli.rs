//! The command line: usage errors and their exit codes, SIGINT leaving a record, and the demo.

mod common;

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;

fn stderr_of(args: &[&str]) -> (Option<i32>, String) {
    let out = volley().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn usage_errors_exit_2_with_a_clear_message() {
    let cases: &[(&[&str], &str)] = &[
        (&["not-a-url"], "not a valid URL"),
        (&["ftp://127.0.0.1/"], "scheme `ftp`"),
        // A URL without its scheme, and a command mistyped, say which they are.
        (
            &["127.0.0.1:1/x"],
            "(no scheme: write http://127.0.0.1:1/x or https://127.0.0.1:1/x)",
        ),
        (
            &["localhost:1/x"],
            "(no scheme? a host and port are written http://host:port)",
        ),
        (
            &["verfiy", "run.json"],
            "`verfiy` is neither a command nor a URL: did you mean `volley verify`?",
        ),
        (&["comapre"], "did you mean `volley compare`?"),
        (
            &["grpc://127.0.0.1:1"],
            "give --call package.Service/Method",
        ),
        (&["http://127.0.0.1:1/", "--frobnicate"], "--frobnicate"),
        (&["http://127.0.0.1:1/", "-n", "0"], "at least 1"),
        (&["http://127.0.0.1:1/", "--rate", "0"], "greater than 0"),
        (&["http://127.0.0.1:1/", "--rate", "-5"], "greater than 0"),
        (&["http://127.0.0.1:1/", "-c", "0"], "at least 1"),
        (&["http://127.0.0.1:1/", "-d", "soon"], "not a duration"),
        (&["http://127.0.0.1:1/", "-H", "NoColon"], "Name: value"),
        (
            &["http://127.0.0.1:1/", "-d", "1s", "-n", "5"],
            "cannot be used with",
        ),
        (
            &["http://127.0.0.1:1/", "--body-file", "/nonexistent/body"],
            "cannot read /nonexistent/body",
        ),
        (
            &["http://127.0.0.1:1/", "--max-header-size", "100"],
            "invalid --max-header-size: must be between 1KiB and 16MiB",
        ),
        (
            &["http://127.0.0.1:1/", "--max-body-size", "lots"],
            "is not a size like 65536, 64KiB or 10MB",
        ),
        (
            &["http://127.0.0.1:1/", "--max-body-size", "0"],
            "invalid --max-body-size: must be at least 1 byte",
        ),
        (
            &["serve", "--port", "0", "--close-after-requests", "0"],
            "invalid --close-after-requests: must be at least 1",
        ),
        (&[], "required"),
    ];
    for (args, expected) in cases {
        let (code, stderr) = stderr_of(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// An error whose message already holds its cause is written with that cause once (the port in
/// use and a bad remote-write URL were each said twice in one line).
#[test]
fn an_error_says_its_cause_once() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let cases: [(&[&str], &str); 2] = [
        (&["serve", "--port", &port], "Address already in use"),
        (
            &[
                "http://127.0.0.1:1/",
                "-n",
                "1",
                "--prometheus-rw",
                "notaurl",
            ],
            "relative URL without a base",
        ),
    ];
    for (args, cause) in cases {
        let (code, stderr) = stderr_of(args);
        assert_ne!(code, Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr.matches(cause).count(), 1, "{args:?}: {stderr}");
    }
}

#[test]
fn a_reader_that_stops_early_loses_only_text_never_the_results() {
    let t = target();
    let dir = temp_dir("closed-stdout");
    let url = format!("{}/", t.base_url());
    // `volley URL | head -0`: stdout's reader is gone before anything is printed.
    let mut child = volley()
        .args([&url, "-c", "2", "-n", "200", "--out"])
        .arg(dir.join("results"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let record = assert_complete_results(&only_subfolder(&dir.join("results")));
    assert_eq!(record["summary"]["requests"].as_u64(), Some(200));
    // Rendering to a closed pipe is not an error either.
    let mut child = volley()
        .arg("report")
        .arg(only_subfolder(&dir.join("results")).join("run.json"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn volley_serve_keeps_serving_when_nobody_reads_its_stdout() {
    let port = closed_port().to_string();
    let mut child = volley()
        .args(["serve", "--port", &port])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    // Synchronise on the port answering, not on a sleep.
    let addr = format!("127.0.0.1:{port}");
    let started = Instant::now();
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "volley serve exited before it listened"
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "never listened"
        );
        std::thread::yield_now();
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = child.wait_with_output().unwrap();
    // The banner went to a closed pipe before the signal: a panic there ends the process
    // (SIGABRT) instead of a clean stop.
    assert_eq!(
        out.status.code(),
        Some(0),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sigint_stops_the_run_and_leaves_a_complete_record() {
    let t = target();
    let dir = temp_dir("sigint");
    let path = dir.join("run.json");
    let url = format!("{}/", t.base_url());
    let results = dir.join("results");
    let child = volley()
        .args([&url, "-c", "4", "-d", "60s", "--json"])
        .arg(&path)
        .arg("--out")
        .arg(&results)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Synchronise on the target having served requests, not on a sleep.
    let started = Instant::now();
    loop {
        let metrics = http_get(&t.base_url(), "/metrics");
        if served(&metrics) > 100 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "run never started"
        );
        std::thread::yield_now();
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(130));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The summary's first line is the verdict, as in every report.
    assert!(
        stdout.starts_with("WARNING — Interrupted (SIGINT) after"),
        "{stdout}"
    );
    common::verified(&path);
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(rec["interrupted"], "SIGINT");
    assert!(summary_u64(&rec, "requests") > 100);
    assert!(summary_f64(&rec, "duration_s") < 30.0);
    assert!(
        rec["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "interrupted")
    );
    // The results folder has every report, and each says the run was cut short.
    let folder = only_subfolder(&results);
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(
        md.contains("**WARNING** — Interrupted (SIGINT) after"),
        "{md}"
    );
    let html = std::fs::read_to_string(folder.join("report.html")).unwrap();
    assert!(html.contains("Interrupted (SIGINT) after"));
    assert!(html.contains("id=\"chart-throughput\""));
    let summary = std::fs::read_to_string(folder.join("summary.txt")).unwrap();
    assert!(
        summary.starts_with("WARNING — Interrupted (SIGINT) after"),
        "{summary}"
    );
}

#[test]
fn demo_runs_end_to_end_and_writes_records() {
    let dir = temp_dir("demo");
    let out = volley()
        .args(["demo", "--duration", "2s", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("closed model, 32 connections"), "{stdout}");
    assert!(stdout.contains("open model, 1,000.0 req/s"), "{stdout}");
    let mut runs: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs[0].starts_with("demo-closed-") && runs[1].starts_with("demo-open-"));
    for run in &runs {
        let mut text = String::new();
        std::fs::File::open(dir.join(run).join("run.json"))
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        let rec: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(summary_u64(&rec, "requests") > 100);
        assert_eq!(summary_u64(&rec, "errors"), 0);
        for file in ["summary.txt", "report.md", "report.html"] {
            let path = dir.join(run).join(file);
            assert!(path.exists(), "{}", path.display());
            assert!(
                stdout.contains(&format!("{}", path.display())) || file == "summary.txt",
                "{file} path not printed: {stdout}"
            );
        }
    }
}

fn served(metrics: &str) -> u64 {
    metrics
        .lines()
        .filter(|l| l.starts_with("volley_target_requests_total{path=\"/\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}
