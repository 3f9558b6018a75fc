//! volley's live metrics without Prometheus: the `--metrics-listen` page while a run lasts, and
//! remote write to an endpoint that is down or answers 400 — the run completes, its record is
//! whole, and the warning says what happened. (tests/prometheus.rs reads both outputs back
//! through a real Prometheus.)

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;

/// The `remote_write_failed` warning's message.
fn push_warning(record: &Value) -> String {
    record["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "remote_write_failed")
        .and_then(|w| w["message"].as_str())
        .unwrap_or_else(|| panic!("no remote_write_failed warning: {}", record["warnings"]))
        .to_string()
}

/// A quick run of 2 s against the built-in target pushing to `url`: (exit code, stderr, record
/// from its results folder, checked whole).
fn run_pushing_to(name: &str, url: &str) -> (Option<i32>, String, Value) {
    let target = common::target();
    let dir = common::temp_dir(name);
    let (out, _) = common::run_json(
        &dir,
        &[
            &format!("http://{}/", target.addr()),
            "-c",
            "2",
            "-d",
            "2s",
            "--threads",
            "1",
            "--prometheus-rw",
            url,
        ],
    );
    let record = common::assert_complete_results(&common::only_subfolder(&dir.join("results")));
    assert!(common::summary_u64(&record, "requests") > 0, "{record}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), stderr, record)
}

#[test]
fn a_remote_write_endpoint_that_is_down_is_a_warning_and_the_run_goes_on() {
    let _serial = common::serial();
    let url = format!("http://127.0.0.1:{}/api/v1/write", common::closed_port());
    let (code, stderr, record) = run_pushing_to("rw-down", &url);
    assert_eq!(code, Some(0), "{stderr}");
    // Known at the start: the first push is made before the run.
    assert!(
        stderr.contains("warning: the first push failed: remote write: connection refused"),
        "{stderr}"
    );
    let message = push_warning(&record);
    assert!(message.contains(&url), "{message}");
    assert!(message.contains("connection refused"), "{message}");
    // The first push, about one a second, and the last one: every one failed.
    let failed: Vec<u64> = message
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .take(2)
        .collect();
    assert!(
        failed.len() == 2 && failed[0] == failed[1] && failed[0] >= 2,
        "{message}"
    );
}

/// Reads one HTTP request, its head and then Content-Length bytes of body, so that the answer
/// never races the upload: a server that answers and closes while the body is still coming
/// resets the connection, and the client sees a reset instead of the answer.
fn read_request(conn: &mut std::net::TcpStream) {
    let mut data = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
        let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&data[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if data.len() >= end + 4 + length {
            return;
        }
    }
}

#[test]
fn a_remote_write_endpoint_answering_400_is_a_warning_with_its_answer() {
    let _serial = common::serial();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let pushes = Arc::new(AtomicUsize::new(0));
    let seen = pushes.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            seen.fetch_add(1, Ordering::Relaxed);
            conn.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            read_request(&mut conn);
            let body = "out of order sample\n";
            let _ = write!(
                conn,
                "HTTP/1.1 400 Bad Request\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let url = format!("http://{addr}/api/v1/write");
    let (code, stderr, record) = run_pushing_to("rw-400", &url);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("the first push failed: remote write: HTTP 400: out of order sample"),
        "{stderr}"
    );
    let message = push_warning(&record);
    assert!(
        message.contains("HTTP 400: out of order sample"),
        "{message}"
    );
    // The first push, one a second during the run, and the last one after it.
    assert!(pushes.load(Ordering::Relaxed) >= 3, "{message}");
}

#[test]
fn the_metrics_page_is_served_while_the_run_lasts() {
    let _serial = common::serial();
    let target = common::target();
    let dir = common::temp_dir("metrics-page");
    let url = format!("http://{}/", target.addr());
    let run = common::spawn_volley(
        &dir,
        &[
            &url,
            "-c",
            "2",
            "-d",
            "3s",
            "--threads",
            "1",
            "--metrics-listen",
            "127.0.0.1:0",
            "--tag",
            "testid=page",
        ],
        &[],
    );
    // The bound address is printed on stderr.
    let mut page_url = String::new();
    common::wait_until("the metrics address", Duration::from_secs(20), || {
        let text = std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default();
        let found = text
            .lines()
            .find_map(|l| l.strip_prefix("volley: live metrics at http://"));
        if let Some(rest) = found {
            page_url = format!("http://{}", rest.trim_end_matches("/metrics"));
        }
        found.is_some()
    });
    // Every series carries the run's id (the record's, below) and its tag.
    let whole = "scenario=\"\",step=\"\",testid=\"page\"";
    let run_id = |page: &str| -> Option<String> {
        let line = page
            .lines()
            .find(|l| l.starts_with("volley_requests_total{"))?;
        let id = line.split("run_id=\"").nth(1)?.split('"').next()?;
        Some(id.to_string())
    };
    let requests = |page: &str| -> Option<u64> {
        let id = run_id(page)?;
        let line = format!("volley_requests_total{{run_id=\"{id}\",{whole}}} ");
        page.lines()
            .find_map(|l| l.strip_prefix(line.as_str()))
            .and_then(|n| n.parse().ok())
    };
    let mut page = String::new();
    common::wait_until("requests on the page", Duration::from_secs(20), || {
        page = common::http_get(&page_url, "/metrics");
        requests(&page).is_some_and(|n| n > 0)
    });
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    assert!(page.contains("text/plain; version=0.0.4"), "{page}");
    let id = run_id(&page).unwrap();
    for family in [
        "# TYPE volley_latency_seconds histogram".to_string(),
        format!("volley_in_flight{{run_id=\"{id}\",{whole}}} "),
        format!("volley_active_vus{{run_id=\"{id}\",{whole}}} "),
        format!(
            "volley_responses_total{{run_id=\"{id}\",scenario=\"\",status=\"200\",step=\"\",testid=\"page\"}} "
        ),
    ] {
        assert!(page.contains(&family), "{family}\n{page}");
    }
    assert!(common::http_get(&page_url, "/").starts_with("HTTP/1.1 404"));
    // Ten clients that send half a request and wait: a scrape is answered at once beside them
    // (one such socket once held every scrape ~2 s; five made them time out).
    let addr = page_url.trim_start_matches("http://").to_string();
    let stalled: Vec<std::net::TcpStream> = (0..10)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(&addr).unwrap();
            std::io::Write::write_all(&mut s, b"GET /metr").unwrap();
            s
        })
        .collect();
    let asked = std::time::Instant::now();
    assert!(common::http_get(&page_url, "/metrics").starts_with("HTTP/1.1 200 OK"));
    assert!(
        asked.elapsed() < Duration::from_millis(1500),
        "a scrape waited {:?} behind half-sent requests",
        asked.elapsed()
    );
    drop(stalled);
    let finished = run.wait(Duration::from_secs(60));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let record = common::valid_record(&dir.join("run.json"));
    assert!(requests(&page).unwrap() <= common::summary_u64(&record, "requests"));
    assert_eq!(record["run_id"], id.as_str());
    assert_eq!(record["tags"]["testid"], "page");
}

#[test]
fn an_address_that_cannot_be_listened_on_is_refused_before_the_run() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let target = common::target();
    let (code, _, stderr) = common::run_volley(&[
        &format!("http://{}/", target.addr()),
        "-d",
        "1s",
        "--metrics-listen",
        &addr,
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("--metrics-listen {addr}: cannot listen there")),
        "{stderr}"
    );
    let (code, _, stderr) = common::run_volley(&[
        &format!("http://{}/", target.addr()),
        "-d",
        "1s",
        "--prometheus-rw",
        "https://127.0.0.1:9/api/v1/write",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("only http:// is supported"), "{stderr}");
}
