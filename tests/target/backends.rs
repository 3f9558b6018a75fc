//! `volley serve --backends N`: a round-robin front over N backends, each with its own delay.

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use volley::server::{Backends, TargetConfig, spawn_with_backends};

use super::EXCLUSIVE;
use super::client::Conn;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The value of the series `line_start` (name and labels) in a `/metrics` page.
fn value(page: &str, series: &str) -> Option<f64> {
    page.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backends_take_turns_and_are_counted_in_metrics() {
    let _shared = EXCLUSIVE.read().await;
    let config = TargetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        threads: 2,
        capacity: None,
    };
    let target = spawn_with_backends(config, Backends::new(3, &[]).unwrap()).unwrap();
    let mut c = Conn::connect(target.addr()).await;
    let mut seen = Vec::new();
    for path in ["/", "/status/503", "/delay?ms=1", "/", "/headers", "/"] {
        let r = c.get(path).await;
        seen.push(r.header("x-backend").unwrap_or("none").to_string());
    }
    assert_eq!(seen, ["b1", "b2", "b3", "b1", "b2", "b3"]);
    // /metrics is the front's observer, not a request to a backend.
    let page = c.get("/metrics").await;
    assert_eq!(page.header("x-backend"), None);
    let page = page.text().to_string();
    for b in ["b1", "b2", "b3"] {
        let series = format!("volley_target_backend_requests_total{{backend=\"{b}\"}}");
        assert_eq!(value(&page, &series), Some(2.0), "{page}");
        let count = format!("volley_target_backend_duration_seconds_count{{backend=\"{b}\"}}");
        assert_eq!(value(&page, &count), Some(2.0), "{page}");
    }
    assert!(page.contains("volley_target_requests_total{path=\"/\",status=\"200\"} 3\n"));
    target.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_backend_is_slow_and_only_that_one() {
    let _exclusive = EXCLUSIVE.write().await;
    let config = TargetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        threads: 2,
        capacity: None,
    };
    let backends = Backends::new(2, &[ms(0), ms(40)]).unwrap();
    let target = spawn_with_backends(config, backends).unwrap();
    let mut c = Conn::connect(target.addr()).await;
    let mut by_backend = [Duration::MAX; 2];
    for _ in 0..6 {
        let started = Instant::now();
        let r = c.get("/").await;
        let took = started.elapsed();
        let i = match r.header("x-backend") {
            Some("b1") => 0,
            Some("b2") => 1,
            other => panic!("{other:?}"),
        };
        by_backend[i] = by_backend[i].min(took);
    }
    // The fastest answer of each: b2 waits its 40 ms every time; b1 is far quicker.
    assert!(by_backend[1] >= ms(40), "{by_backend:?}");
    assert!(by_backend[0] < ms(30), "{by_backend:?}");
    let page = c.get("/metrics").await.text().to_string();
    let slow_fast = "volley_target_backend_duration_seconds_bucket{backend=\"b2\",le=\"0.02\"}";
    assert_eq!(value(&page, slow_fast), Some(0.0), "{page}");
    let delay = "volley_target_backend_delay_seconds{backend=\"b2\"}";
    assert_eq!(value(&page, delay), Some(0.04), "{page}");
    target.stop();
}

#[test]
fn volley_serve_backends_flags() {
    let _shared = EXCLUSIVE.blocking_read();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_volley"))
        .args(["serve", "--port", "0", "--threads", "1"])
        .args(["--backends", "3", "--backend-delay", "1ms,5ms,20ms"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.contains("backends"));
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    assert!(child.wait().unwrap().success());
    let line = line.expect("a line about the backends");
    assert!(line.contains("3 backends"), "{line}");
    assert!(line.contains("1ms, 5ms, 20ms"), "{line}");

    for bad in [
        &["--backends", "0"][..],
        &["--backends", "3", "--backend-delay", "1ms,2ms"],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_volley"))
            .args(["serve", "--port", "0"])
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--backend"),
            "{bad:?}"
        );
    }
}
