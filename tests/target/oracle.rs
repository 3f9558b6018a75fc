//! The oracle (`/stats`) and the stalls, observed from a raw client, and what `volley serve`
//! prints.

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use volley::server::{Faults, Stall, TargetConfig, spawn_with_faults};

use super::client::Conn;
use super::{EXCLUSIVE, start};

const MS: Duration = Duration::from_millis(1);

/// `GET /stats` as JSON.
async fn stats(c: &mut Conn, path: &str) -> serde_json::Value {
    let r = c.get(path).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    r.json()
}

/// `doc[key]` as µs.
fn us(doc: &serde_json::Value, key: &str) -> u64 {
    doc[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} in {doc}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_hold_every_handler_time_and_reset() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    let mut slowest = Duration::ZERO;
    for _ in 0..10 {
        let t = Instant::now();
        assert_eq!(c.get("/delay?ms=20").await.status, 200);
        slowest = slowest.max(t.elapsed());
        assert_eq!(c.get("/").await.status, 200);
    }
    assert_eq!(c.get("/metrics").await.status, 200);
    let doc = stats(&mut c, "/stats").await;
    // /metrics and /stats themselves are not timed.
    assert_eq!(doc["count"], 20, "{doc}");
    // The slow half: at least the 20 ms asked, at most what the client saw around it.
    assert!(us(&doc, "p99_us") >= 20_000, "{doc}");
    assert!(
        us(&doc, "max_us") <= slowest.as_micros() as u64 + 50,
        "{doc} vs {slowest:?}"
    );
    assert!(us(&doc, "p50_us") < 20_000, "the fast half: {doc}");
    let h = volley::record::decode_histogram(doc["histogram"].as_str().unwrap()).unwrap();
    assert_eq!(h.len(), 20);
    assert_eq!(h.value_at_quantile(0.99), us(&doc, "p99_us"));

    // Read-and-reset hands out everything once; the next read starts from zero.
    assert_eq!(stats(&mut c, "/stats?reset=1").await["count"], 20);
    let empty = stats(&mut c, "/stats").await;
    assert_eq!(empty["count"], 0);
    assert!(empty["p50_us"].is_null(), "{empty}");
    assert_eq!(c.get("/").await.status, 200);
    let r = c.request("POST", "/stats/reset", &[], b"").await;
    assert_eq!((r.status, r.json()["count"].as_u64()), (200, Some(1)));
    assert_eq!(stats(&mut c, "/stats").await["count"], 0);
    assert_eq!(c.get("/stats/reset").await.status, 405);
    assert_eq!(c.request("POST", "/stats", &[], b"").await.status, 405);
    let metrics = c.get("/metrics").await;
    assert!(
        metrics.text().contains("path=\"/stats\",status=\"200\""),
        "{}",
        metrics.text()
    );
}

/// Where `at` falls in a period of `every`, on the target's clock that started at `epoch`.
fn phase(epoch: Instant, at: Instant, every: Duration) -> Duration {
    let since = at.saturating_duration_since(epoch).as_nanos();
    Duration::from_nanos((since % every.as_nanos()) as u64)
}

/// The target's clock origin, on this process's clock, from `/stats`'s `uptime_us` (to within
/// half a round trip).
async fn epoch_of(c: &mut Conn) -> Instant {
    let before = Instant::now();
    let uptime = us(&stats(c, "/stats").await, "uptime_us");
    let after = Instant::now();
    before + (after - before) / 2 - Duration::from_micros(uptime)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_freezes_the_route_on_the_targets_clock() {
    let _alone = EXCLUSIVE.write().await;
    let target = start(None);
    let (stall, every) = (200 * MS, 400 * MS);
    let mut c = Conn::connect(target.addr()).await;
    let epoch = epoch_of(&mut c).await;
    // Back-to-back requests for 2.5 periods: each is answered at once or held to a freeze's end.
    let mut held = Vec::new();
    let began = Instant::now();
    while began.elapsed() < every * 5 / 2 {
        let sent = Instant::now();
        let r = c.get("/delay?ms=0&stall_ms=200&every_ms=400").await;
        let done = Instant::now();
        assert_eq!(r.status, 200);
        let answered_at = phase(epoch, done, every);
        // Never answered inside a freeze (margins: a response sent just before a freeze is read
        // a little later; the epoch is known to half a round trip).
        assert!(
            !(30 * MS..stall - 5 * MS).contains(&answered_at),
            "answered {answered_at:?} into a period whose first {stall:?} are frozen"
        );
        if done - sent > 50 * MS {
            held.push((phase(epoch, sent, every), done - sent, answered_at));
        }
    }
    eprintln!("held (phase sent, waited, phase answered): {held:?}");
    assert!(
        held.len() >= 2,
        "2.5 periods hold at least 2 requests: {held:?}"
    );
    for (sent_at, waited, answered_at) in held {
        // The epoch is known to half a round trip: a request sent within a few ms of a period's
        // end arrived at the start of the next freeze (seen once: sent at 399.995 ms of 400).
        let sent_at = if sent_at + 5 * MS > every {
            Duration::ZERO
        } else {
            sent_at
        };
        // Held from its arrival to the freeze's end, not longer.
        assert!(
            (stall - 2 * MS..stall + 30 * MS).contains(&answered_at),
            "released at {answered_at:?}"
        );
        // The client's own delays (a busy 2-core machine) come on top of the hold.
        assert!(waited <= stall - sent_at.min(stall) + 80 * MS, "{waited:?}");
    }
    // The oracle saw the holding too: the slowest handler time is a freeze's length.
    let doc = stats(&mut c, "/stats").await;
    assert!(us(&doc, "max_us") >= 150_000, "{doc}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_wide_stall_spares_metrics_and_stats() {
    let _alone = EXCLUSIVE.write().await;
    let (stall, every) = (300 * MS, 600 * MS);
    let target = spawn_with_faults(
        TargetConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            threads: 2,
            capacity: None,
        },
        Faults {
            stall: Some(Stall::new(stall, every).unwrap()),
            ..Faults::default()
        },
    )
    .unwrap();
    let mut c = Conn::connect(target.addr()).await;
    // /stats answers inside a freeze: its own clock says so (a few tries, the first freeze is
    // the first 300 ms of the target's life).
    let mut frozen_answers = 0;
    for _ in 0..2000 {
        let doc = stats(&mut c, "/stats").await;
        let at = Duration::from_micros(us(&doc, "uptime_us") % every.as_micros() as u64);
        if at < stall - 50 * MS {
            frozen_answers += 1;
            let t = Instant::now();
            assert_eq!(c.get("/metrics").await.status, 200);
            assert!(t.elapsed() < 40 * MS, "/metrics frozen: {:?}", t.elapsed());
            break;
        }
    }
    assert_eq!(frozen_answers, 1, "no /stats answer came inside a freeze");
    // Every other route is held to the freeze's end: a GET / sent well inside a freeze (a few
    // tries, in case this machine is too slow to catch one).
    let epoch = epoch_of(&mut c).await;
    let mut other = Conn::connect(target.addr()).await;
    let mut released = None;
    for _ in 0..5 {
        let inside = phase(epoch, Instant::now(), every) < stall - 20 * MS;
        assert_eq!(other.get("/").await.status, 200);
        if inside {
            released = Some(phase(epoch, Instant::now(), every));
            break;
        }
    }
    let released = released.expect("no GET / sent inside a freeze");
    assert!(
        (stall - 2 * MS..stall + 30 * MS).contains(&released),
        "GET / released at {released:?} of the period"
    );
    let doc = stats(&mut c, "/stats").await;
    // Only GET / is timed, and the held one waited at least 20 ms.
    assert!(us(&doc, "count") >= 1, "{doc}");
    assert!(us(&doc, "max_us") >= 19_000, "held: {doc}");
    // Unusable stalls are refused.
    let err = spawn_with_faults(
        TargetConfig::default(),
        Faults {
            stall: Some(Stall {
                duration: every,
                every,
            }),
            ..Faults::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("less than its period"), "{err}");
}

/// The `package` and `service` names of the shipped `.proto` file, as full names.
fn proto_services() -> Vec<String> {
    let text = include_str!("../../proto/volley_target.proto");
    let package = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("package "))
        .unwrap()
        .trim_end_matches(';');
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("service "))
        .map(|l| format!("{package}.{}", l.split_whitespace().next().unwrap()))
        .collect()
}

#[test]
fn volley_serve_names_its_real_grpc_services_and_its_stall() {
    let _shared = EXCLUSIVE.blocking_read();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_volley"))
        .args(["serve", "--port", "0", "--threads", "1"])
        .args(["--stall", "100ms", "--stall-every", "1s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = Vec::new();
    // The stall is the last line printed before serving.
    while let Some(Ok(line)) = lines.next() {
        let last = line.contains("stalls");
        printed.push(line);
        if last {
            break;
        }
    }
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    assert!(child.wait().unwrap().success());
    let text = printed.join("\n");
    let grpc = printed
        .iter()
        .find(|l| l.contains("gRPC"))
        .unwrap_or_else(|| panic!("{text}"));
    let services = proto_services();
    assert_eq!(services.len(), 3, "{services:?}");
    for service in services {
        assert!(
            grpc.contains(&format!("{service},")) || grpc.contains(&format!("{service} ")),
            "{service} not named in {grpc:?}"
        );
    }
    assert!(!text.contains("volley.target.Echo"), "{text}");
    assert!(text.contains("GET /stats"), "{text}");
    assert!(text.contains("stalls for 100ms every 1s"), "{text}");

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_volley"))
        .args([
            "serve",
            "--port",
            "0",
            "--stall",
            "1s",
            "--stall-every",
            "1s",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--stall"));
}
