//! The truth oracle: volley's latency figures held against the built-in target's own measure of
//! every request it handled (`GET /stats`, see `src/target/oracle.rs`) and against the analytic
//! latency law of a periodically stalling endpoint (`docs/measurement.md`, "The truth oracle").
//!
//! Bounds: the figures of the issue (2 % or 0.2 ms; 10 %) are the bounds, with two allowances for
//! a busy 2-core CI machine, both printed: the `/delay` comparison is tried up to three times and
//! passes when one run is within them (a systematic error fails every run), and the stall law
//! allows, beyond its 10 %, what the target itself measured beyond the law (the time it takes to
//! release 500 held requests at once). Exact figures from a quiet machine: `bench/oracle.sh`.

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use common::{run_json, serial, summary_u64, temp_dir};
use serde_json::Value;
use volley::server::{self, Faults, RunningTarget, Stall, TargetConfig};

/// A target on two threads (the stalls release hundreds of requests at once), on 127.0.0.1:0.
fn target_with(stall: Option<Stall>) -> RunningTarget {
    let config = TargetConfig {
        bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        threads: 2,
        capacity: None,
    };
    let faults = Faults {
        stall,
        ..Faults::default()
    };
    server::spawn_with_faults(config, faults).expect("target starts")
}

/// The target's `/stats`, taking the figures out (`?reset=1`).
fn take_stats(target: &RunningTarget) -> Value {
    let response = common::http_get(&target.base_url(), "/stats?reset=1");
    let (head, body) = response.split_once("\r\n\r\n").expect("a whole response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    serde_json::from_str(body).expect("/stats is JSON")
}

/// The target's figure `key` (µs), in ms.
fn server_ms(stats: &Value, key: &str) -> f64 {
    stats[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {stats}"))
        / 1000.0
}

/// volley's `summary.latency_ms[key]`.
fn volley_ms(record: &Value, key: &str) -> f64 {
    record["summary"]["latency_ms"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("latency_ms.{key} missing in {}", record["summary"]))
}

/// One percentile of one `/delay` run, volley against the target.
#[derive(Debug)]
struct Percentile {
    name: &'static str,
    volley_ms: f64,
    server_ms: f64,
    /// `volley − server − overhead`, ms.
    residual_ms: f64,
    /// max(2 % of the server's figure, 0.2 ms).
    allowed_ms: f64,
}

/// Compares a closed-model run's p50/p90/p99 with the target's handler times of the same
/// requests; returns them and the loopback overhead (the mean of volley's latency minus the
/// target's handler time over those requests, ms).
fn compare_delay_run(record: &Value, stats: &Value) -> (Vec<Percentile>, f64) {
    let requests = summary_u64(record, "requests");
    assert_eq!(summary_u64(record, "errors"), 0, "{}", record["summary"]);
    assert_eq!(
        stats["count"].as_u64(),
        Some(requests),
        "volley's requests are the requests the target handled"
    );
    let overhead = volley_ms(record, "mean") - server_ms(stats, "mean_us");
    let rows: Vec<Percentile> = [("p50", "p50_us"), ("p90", "p90_us"), ("p99", "p99_us")]
        .into_iter()
        .map(|(name, key)| {
            let (volley_ms, server_ms) = (volley_ms(record, name), server_ms(stats, key));
            // Every request's latency contains its handler time, so no percentile of volley's
            // may lie below the target's (beyond HDR's 0.1 % bucket width): noise cannot cause
            // that, only a wrong figure.
            assert!(
                volley_ms >= server_ms * 0.998 - 0.002,
                "volley's {name} {volley_ms} ms is below the target's own {server_ms} ms"
            );
            Percentile {
                name,
                volley_ms,
                server_ms,
                residual_ms: volley_ms - server_ms - overhead,
                allowed_ms: (0.02 * server_ms).max(0.2),
            }
        })
        .collect();
    (rows, overhead)
}

#[test]
fn volley_percentiles_are_the_targets_own_plus_loopback() {
    let _alone = serial();
    let dir = temp_dir("oracle-delay");
    let target = target_with(None);
    // Exponential delays: p50, p90 and p99 lie far apart (3.5, 11.5 and 23 ms), so a percentile
    // taken at the wrong rank, in the wrong unit or rounded to the millisecond shows.
    let url = format!("{}/delay?ms=5&dist=exp", target.base_url());
    let mut tries = Vec::new();
    for _ in 0..3 {
        take_stats(&target);
        let (out, record) = run_json(&dir, &[&url, "-c", "10", "-d", "3s", "--threads", "1"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (rows, overhead) = compare_delay_run(&record, &take_stats(&target));
        for r in &rows {
            eprintln!(
                "{}: volley {:.3} ms, target {:.3} ms + overhead {overhead:.3} ms: {:+.3} ms \
                 (allowed ±{:.3})",
                r.name, r.volley_ms, r.server_ms, r.residual_ms, r.allowed_ms
            );
        }
        // A loopback request costs tens of microseconds; a busy machine makes it hundreds.
        let overhead_ok = (0.0..=1.0).contains(&overhead);
        if overhead_ok && rows.iter().all(|r| r.residual_ms.abs() <= r.allowed_ms) {
            return;
        }
        tries.push((overhead, rows));
    }
    panic!("no run within max(2 %, 0.2 ms) of the target's own figures: {tries:#?}");
}

#[test]
fn open_model_latency_follows_the_stall_law() {
    let _alone = serial();
    let dir = temp_dir("oracle-stall");
    let (stall, every) = (Duration::from_millis(500), Duration::from_secs(5));
    let target = target_with(Some(Stall::new(stall, every).unwrap()));
    take_stats(&target);
    // 20 s is 4 periods: whatever the phase the run starts at, 10 % of the requests fall due
    // in a freeze, uniformly over its 500 ms.
    let (out, record) = run_json(&dir, &[&target.base_url(), "--rate", "1000", "-d", "20s"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats = take_stats(&target);
    let summary = &record["summary"];
    // P(L > x) = (S − x) / P for 0 ≤ x < S: p95 = S − 0.05 P, p99 = S − 0.01 P, p99.9 = S − 0.001 P.
    let s_ms = stall.as_secs_f64() * 1e3;
    let p_ms = every.as_secs_f64() * 1e3;
    let mut failed = Vec::new();
    for (name, key, tail) in [
        ("p95", "p95_us", 0.05),
        ("p99", "p99_us", 0.01),
        ("p99_9", "p99_9_us", 0.001),
    ] {
        let law = s_ms - tail * p_ms;
        let (volley, server) = (volley_ms(&record, name), server_ms(&stats, key));
        // The target's own lateness beyond the law (releasing 500 held requests takes it a few
        // milliseconds, more on a busy machine) is not volley's.
        let target_late = (server - law).max(0.0);
        let allowed = 0.10 * law + target_late;
        eprintln!(
            "{name}: volley {volley:.1} ms, law {law:.1} ms ({:+.1} %), target's own {server:.1} ms; \
             allowed ±{allowed:.1} ms",
            100.0 * (volley - law) / law
        );
        // Due-time latency contains the handler time: never below the target's own figure.
        assert!(
            volley >= server * 0.998,
            "{name}: volley {volley} ms below the target's {server} ms"
        );
        if (volley - law).abs() > allowed {
            failed.push(format!("{name}: volley {volley:.1} ms, law {law:.1} ms"));
        }
    }
    assert!(
        failed.is_empty(),
        "open-model latency does not follow the stall law: {failed:?}\n{summary}"
    );
    assert_eq!(summary["dropped"].as_u64(), Some(0), "{summary}");
    assert_eq!(summary_u64(&record, "errors"), 0, "{summary}");
    let requests = summary_u64(&record, "requests");
    assert!((19_800..=20_200).contains(&requests), "{requests} requests");
    assert_eq!(stats["count"].as_u64(), Some(requests), "{stats}");
}
