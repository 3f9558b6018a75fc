//! Every chaos path of the built-in target is classified correctly, and a run against a target that
//! never answers still ends on time.
//!
//! The modes of issue 7 (`modes`): for each, the real binary runs briefly with a short timeout and
//! the test checks that it ended by duration + timeout, classified the error, wrote a complete,
//! schema-valid record and results folder, and kept its peak RSS (the kernel's count, `wait4`)
//! bounded.

mod common;
#[path = "chaos/modes.rs"]
mod modes;

use std::time::{Duration, Instant};

use common::*;

fn run_path(path: &str, extra: &[&str]) -> serde_json::Value {
    let t = target();
    let dir = temp_dir(&path.replace(['/', '?', '=', '&'], "_"));
    let url = format!("{}{path}", t.base_url());
    let mut args = vec![url.as_str()];
    args.extend_from_slice(extra);
    let (_, rec) = run_json(&dir, &args);
    rec
}

#[test]
fn reset_is_a_connection_reset() {
    let rec = run_path("/chaos/reset", &["-n", "20", "-c", "2"]);
    assert_eq!(summary_u64(&rec, "requests"), 20);
    assert_eq!(
        errors_of(&rec, "connection_reset"),
        20,
        "{}",
        rec["summary"]
    );
}

#[test]
fn garbage_is_an_invalid_response() {
    let rec = run_path("/chaos/garbage", &["-n", "20", "-c", "2"]);
    assert_eq!(
        errors_of(&rec, "invalid_response"),
        20,
        "{}",
        rec["summary"]
    );
}

#[test]
fn close_after_headers_is_a_closed_connection() {
    let rec = run_path("/chaos/close", &["-n", "20", "-c", "2"]);
    assert_eq!(
        errors_of(&rec, "connection_closed"),
        20,
        "{}",
        rec["summary"]
    );
}

#[test]
fn hang_times_out_and_the_run_ends_within_duration_plus_timeout() {
    let started = Instant::now();
    let rec = run_path(
        "/chaos/hang",
        &["-d", "1s", "-c", "4", "--timeout", "500ms"],
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(4), "took {took:?}");
    assert!(errors_of(&rec, "timeout") >= 4, "{}", rec["summary"]);
    assert_eq!(summary_u64(&rec, "errors"), summary_u64(&rec, "requests"));
}

#[test]
fn slow_body_succeeds_at_the_trickle_rate() {
    let rec = run_path(
        "/chaos/slow?bytes_per_sec=2000&bytes=1000",
        &["-n", "2", "-c", "1"],
    );
    assert_eq!(status_of(&rec, "200"), 2, "{}", rec["summary"]);
    let p50 = rec["summary"]["latency_ms"]["p50"].as_f64().unwrap();
    assert!(
        p50 >= 300.0,
        "1000 bytes at 2000 B/s take ~500 ms, got {p50}"
    );
}

#[test]
fn error_statuses_are_counted_by_code_and_class() {
    let rec = run_path("/status/503", &["-n", "30", "-c", "3"]);
    assert_eq!(status_of(&rec, "503"), 30);
    assert_eq!(errors_of(&rec, "http_5xx"), 30);
    let rec = run_path("/status/404", &["-n", "10", "-c", "1"]);
    assert_eq!(errors_of(&rec, "http_4xx"), 10);
}

#[test]
fn refused_connections_end_on_time_with_every_request_failed() {
    let port = closed_port();
    let dir = temp_dir("refused");
    let url = format!("http://127.0.0.1:{port}/");
    let started = Instant::now();
    let (out, rec) = run_json(&dir, &[&url, "-d", "1s", "-c", "2"]);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(1), "all failed → exit 1");
    // A refused connect never reached the target: an attempt, not a request.
    assert_eq!(summary_u64(&rec, "requests"), 0);
    assert!(summary_u64(&rec, "not_sent") > 0);
    assert_eq!(
        errors_of(&rec, "connection_refused"),
        summary_u64(&rec, "not_sent")
    );
    let codes = warning_codes(&rec);
    assert!(
        codes.contains(&"all_failed") && codes.contains(&"dominant_error"),
        "{codes:?}"
    );
}
