//! volley's exporters against a real Prometheus (Debian's `prometheus` 2.42, which `.ci/run`
//! installs): remote write is pushed to its receiver and read back through its query API, and the
//! exposition page is scraped by it. Not wired to a run yet: the snapshot is synthetic.
//!
//! The harness ([`Prometheus`]) starts the server on 127.0.0.1 with a temporary config and
//! storage folder and `--web.enable-remote-write-receiver`, waits for `/-/ready`, and stops it by
//! its PID when dropped.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use volley::export::remote_write::RemoteWrite;
use volley::export::{LatencyBuckets, LiveSnapshot, ScopeFigures, exposition};

/// A Prometheus server for one test.
struct Prometheus {
    child: Child,
    base: String,
}

impl Prometheus {
    /// Starts it with `scrape_configs` (YAML, may be empty) and waits until it is ready.
    fn start(name: &str, scrape_configs: &str) -> Prometheus {
        let dir = common::temp_dir(name);
        let config = dir.join("prometheus.yml");
        let yaml =
            format!("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n{scrape_configs}");
        std::fs::write(&config, yaml).unwrap();
        let port = common::closed_port();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--web.enable-remote-write-receiver")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
            .spawn()
            .expect("Debian's prometheus package (apt-get install prometheus; .ci/run does)");
        let server = Prometheus {
            child,
            base: format!("http://127.0.0.1:{port}"),
        };
        common::wait_until("Prometheus ready", Duration::from_secs(60), || {
            get(&server.base, "/-/ready").is_some_and(|r| r.starts_with("HTTP/1.1 200"))
        });
        server
    }

    /// The value of an instant query's single result, polled until it is there (30 s at most).
    fn value(&self, query: &str) -> f64 {
        let path = format!("/api/v1/query?query={}", url_encode(query));
        let mut found = None;
        common::wait_until(query, Duration::from_secs(30), || {
            found = get(&self.base, &path).and_then(|r| single_value(&r));
            found.is_some()
        });
        found.unwrap()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A GET; the whole response, or `None` if nothing answers yet.
fn get(base: &str, path: &str) -> Option<String> {
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

/// The value of a query answer with exactly one series.
fn single_value(response: &str) -> Option<f64> {
    let body = &response[response.find("\r\n\r\n")? + 4..];
    let json: Value = serde_json::from_str(body).ok()?;
    let result = json["data"]["result"].as_array()?;
    match result.as_slice() {
        [one] => one["value"][1].as_str()?.parse().ok(),
        _ => None,
    }
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn snapshot() -> LiveSnapshot {
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
    for us in [900, 2_000, 2_000, 30_000, 700_000] {
        h.record(us).unwrap();
    }
    let unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    LiveSnapshot {
        unix_ms,
        scopes: vec![ScopeFigures {
            scenario: "checkout".into(),
            step: "pay".into(),
            requests: 6,
            errors: vec![("timeout", 1)],
            statuses: vec![(200, 4), (503, 1)],
            active_vus: 3,
            asked_per_s: Some(20.0),
            achieved_per_s: 19.0,
            latency: LatencyBuckets::from_hdr_us(&h),
            ..ScopeFigures::default()
        }],
    }
}

#[test]
fn remote_write_totals_read_back_from_prometheus() {
    let prometheus = Prometheus::start("prom-rw", "");
    let rw = RemoteWrite::new(&format!("{}/api/v1/write", prometheus.base)).unwrap();
    rw.push(&snapshot()).unwrap();
    let q = |m: &str| prometheus.value(m);
    assert_eq!(
        q("volley_requests_total{scenario=\"checkout\",step=\"pay\"}"),
        6.0
    );
    assert_eq!(q("volley_errors_total{kind=\"timeout\"}"), 1.0);
    assert_eq!(q("volley_responses_total{status=\"503\"}"), 1.0);
    assert_eq!(q("sum(volley_responses_total)"), 5.0);
    assert_eq!(q("volley_latency_seconds_count"), 5.0);
    assert_eq!(q("volley_latency_seconds_bucket{le=\"0.0025\"}"), 3.0);
    let p50 = q("histogram_quantile(0.5, volley_latency_seconds_bucket)");
    assert!(p50 > 0.001 && p50 <= 0.0025, "{p50}");
    assert_eq!(q("volley_rate_asked_per_second"), 20.0);
}

#[test]
fn the_exposition_page_is_scraped_by_prometheus() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let page = exposition::render(&snapshot());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                exposition::CONTENT_TYPE,
                page.len()
            );
            let _ = conn.write_all(head.as_bytes());
            let _ = conn.write_all(page.as_bytes());
        }
    });
    let scrape = format!(
        "scrape_configs:\n  - job_name: volley\n    static_configs:\n      - targets: ['{addr}']\n"
    );
    let prometheus = Prometheus::start("prom-scrape", &scrape);
    assert_eq!(prometheus.value("up{job=\"volley\"}"), 1.0);
    let q = |m: &str| prometheus.value(m);
    assert_eq!(q("volley_requests_total{job=\"volley\"}"), 6.0);
    assert_eq!(q("volley_latency_seconds_count{job=\"volley\"}"), 5.0);
    assert_eq!(q("volley_active_vus{job=\"volley\"}"), 3.0);
}
