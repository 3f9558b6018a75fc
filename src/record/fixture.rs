//! Synthetic records for unit tests of analysis and reports.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::figures::{latency_buckets, percentiles};
use super::model::*;
use super::series::SecondStats;
use super::{SCHEMA_VERSION, encode_histogram, recorder::new_histogram};

/// A closed-model record of `seconds` seconds whose every second has `per_second` requests with
/// latencies spread evenly around `latency_us` (± 20 %), and `errors_per_second` of them failed
/// with HTTP 500. `wobble` scales a deterministic per-second variation of the rate (0 = none).
pub fn record(
    name: &str,
    seconds: u64,
    per_second: u64,
    latency_us: u64,
    errors_per_second: u64,
    wobble: f64,
) -> RunRecord {
    let (total, series) = seconds_of(seconds, per_second, latency_us, errors_per_second, wobble);
    let requests: u64 = series.iter().map(|s| s.requests).sum();
    let errors: u64 = series.iter().map(|s| s.errors).sum();
    let duration = seconds as f64;
    RunRecord {
        share: None,
        merged: None,
        grouped: Vec::new(),
        watch: None,
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "volley".into(),
            version: "0.1.0".into(),
        },
        name: name.into(),
        run_id: format!("{:032x}", seconds),
        tags: Default::default(),
        command: vec!["volley".into(), "http://127.0.0.1:8080/".into()],
        config: config(duration),
        started_at: "2026-01-02T03:04:05.678Z".into(),
        ended_at: "2026-01-02T03:04:15.678Z".into(),
        environment: environment(),
        interrupted: None,
        summary: summary(&total, requests, errors, duration),
        generator: Generator {
            threads: vec![ThreadStats {
                cpu_s: 0.5,
                wall_s: duration,
                utilization: 0.5 / duration.max(1e-9),
            }],
            cpu_s: 0.6,
            cpu_us_per_request: (requests > 0).then(|| 6e5 / requests as f64),
            peak_rss_bytes: 12 << 20,
            lag_ms: None,
            send_grid_ms: None,
            steal_share: None,
        },
        series,
        histograms: Histograms {
            latency_us: encode_histogram(&total),
            service_latency_us: None,
            lag_us: None,
            connect_us: None,
            tls_handshake_us: None,
            waiting_us: None,
            batches_us: Vec::new(),
            batch_s: 0,
        },
        warnings: Vec::new(),
        groups: Vec::new(),
        checks: Vec::new(),
        thresholds: Vec::new(),
        find_max: None,
        self_checks: Vec::new(),
        outcome: None,
    }
}

/// The run's latency histogram and its per-second series (see [`record`]).
fn seconds_of(
    seconds: u64,
    per_second: u64,
    latency_us: u64,
    errors_per_second: u64,
    wobble: f64,
) -> (Histogram<u64>, Vec<SecondStats>) {
    let mut total = new_histogram();
    let mut series = Vec::new();
    for t in 0..seconds {
        // A fixed, zero-mean pattern, so tests are deterministic.
        let factor =
            1.0 + wobble * [0.0, 0.6, -0.4, 0.2, -0.8, 0.4, -0.2, 0.8, -0.6][t as usize % 9];
        let n = (per_second as f64 * factor).round() as u64;
        let mut h = new_histogram();
        for i in 0..n {
            let spread = latency_us as f64 * (0.8 + 0.4 * i as f64 / n.max(1) as f64);
            h.record(spread as u64).unwrap();
        }
        let _ = total.add(&h);
        let ok = n.saturating_sub(errors_per_second);
        series.push(SecondStats {
            t_s: t,
            span_s: 1.0,
            requests: n,
            not_sent: 0,
            errors: n - ok,
            bytes_sent: n * 40,
            bytes_received: n * 120,
            in_flight: 8,
            p50_ms: (!h.is_empty()).then(|| h.value_at_quantile(0.5) as f64 / 1000.0),
            p90_ms: (!h.is_empty()).then(|| h.value_at_quantile(0.9) as f64 / 1000.0),
            p99_ms: (!h.is_empty()).then(|| h.value_at_quantile(0.99) as f64 / 1000.0),
        });
    }
    (total, series)
}

/// The summary of `requests` (`errors` of them failed with HTTP 500) over `duration` seconds.
fn summary(total: &Histogram<u64>, requests: u64, errors: u64, duration: f64) -> Summary {
    let mut status = BTreeMap::new();
    status.insert("200".to_string(), requests - errors);
    if errors > 0 {
        status.insert("500".to_string(), errors);
    }
    let mut errors_by_kind = BTreeMap::new();
    if errors > 0 {
        errors_by_kind.insert(crate::record::error_kind::ErrorKind::Http5xx, errors);
    }
    Summary {
        requests,
        errors,
        attempts: requests,
        not_sent: 0,
        drain: Default::default(),
        iterations: requests,
        arrival: None,
        success_rate: if requests == 0 {
            0.0
        } else {
            (requests - errors) as f64 / requests as f64
        },
        duration_s: duration,
        rps: requests as f64 / duration.max(1e-9),
        target_rps: None,
        latency_ms: percentiles(total),
        ci95: None,
        service_latency_ms: None,
        dropped: None,
        status,
        errors_by_kind,
        bytes_sent: requests * 40,
        bytes_received: requests * 120,
        connections_opened: 8,
        sent_bytes_per_sec: requests as f64 * 40.0 / duration.max(1e-9),
        received_bytes_per_sec: requests as f64 * 120.0 / duration.max(1e-9),
        latency_buckets: latency_buckets(total, &[]),
        warmup_requests: 0,
        warmup_connections: 0,
        grpc_status: BTreeMap::new(),
        timing: TimingSplit::default(),
        tls_negotiated: Vec::new(),
        quic: None,
        streams: None,
    }
}

/// The configuration of a closed-model quick run of `duration` seconds, 8 connections.
fn config(duration: f64) -> RunConfig {
    RunConfig {
        url: "http://127.0.0.1:8080/".into(),
        method: "GET".into(),
        headers: Vec::new(),
        secret_headers: Vec::new(),
        body_bytes: 0,
        latency_buckets_ms: Vec::new(),
        model: Model::Closed,
        connections: Some(8),
        rate_per_sec: None,
        max_in_flight: None,
        duration_s: Some(duration),
        requests: None,
        warmup_s: 0.0,
        timeout_s: 10.0,
        keepalive: true,
        protocol: crate::record::model::WireProtocol::Http1,
        tls: false,
        streams: 1,
        zero_rtt: false,
        source_addrs: 0,
        threads: 1,
        plan: None,
        scenarios: Vec::new(),
        max_header_bytes: Some(65536),
        max_body_bytes: None,
    }
}

/// A made-up machine.
fn environment() -> Environment {
    Environment {
        hostname: "bench".into(),
        cpu_model: "Test CPU".into(),
        cores: 2,
        memory_bytes: 8 << 30,
        os: "Debian GNU/Linux 12 (bookworm)".into(),
        kernel: "6.1.0".into(),
        arch: "x86_64".into(),
    }
}

/// Multiplies every count of `r`'s latency histogram so that it holds at least 20,000
/// responses, its shape unchanged: enough above p99.9 for each percentile to be judged over
/// runs (`Metric::enough_responses`).
pub fn many_responses(r: &mut RunRecord) {
    let h = crate::record::decode_histogram(&r.histograms.latency_us).unwrap();
    let k = 20_000_u64.div_ceil(h.len().max(1));
    let mut more = crate::record::recorder::new_histogram();
    for v in h.iter_recorded() {
        more.record_n(v.value_iterated_to(), v.count_at_value() * k)
            .unwrap();
    }
    r.histograms.latency_us = crate::record::encode_histogram(&more);
}
