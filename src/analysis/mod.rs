//! Analysis: from what the engine measured to the figures people read — percentiles, buckets,
//! the summary, and warnings about the run itself.

pub mod compare;
pub mod like_for_like;
pub mod metric;
pub mod spectrum;
pub mod stats;
mod warnings;

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;

use crate::engine::RunOutcome;
use crate::plan::{Limit, Load, RunSpec};
use crate::record::model::{
    Bucket, Generator, Histograms, Percentiles, RunConfig, RunRecord, Summary, ThreadStats, Tool,
};
use crate::record::series::us_to_ms;
use crate::record::{SCHEMA_VERSION, encode_histogram, env};

pub use warnings::diagnose;

/// Percentile figures of a histogram of microseconds, in milliseconds.
pub fn percentiles(h: &Histogram<u64>) -> Percentiles {
    if h.is_empty() {
        return Percentiles {
            min: None,
            mean: None,
            stdev: None,
            p50: None,
            p75: None,
            p90: None,
            p95: None,
            p99: None,
            p99_9: None,
            p99_99: None,
            max: None,
        };
    }
    let q = |q: f64| Some(us_to_ms(h.value_at_quantile(q)));
    Percentiles {
        min: Some(us_to_ms(h.min())),
        mean: Some(h.mean() / 1000.0),
        stdev: Some(h.stdev() / 1000.0),
        p50: q(0.50),
        p75: q(0.75),
        p90: q(0.90),
        p95: q(0.95),
        p99: q(0.99),
        p99_9: q(0.999),
        p99_99: q(0.9999),
        max: Some(us_to_ms(h.max())),
    }
}

/// The 1-2-5 latency buckets spanning the histogram's range, µs upper bounds.
fn bucket_bounds_us(min_us: u64, max_us: u64) -> Vec<u64> {
    let mut bounds = Vec::new();
    let mut decade = 1u64;
    'outer: loop {
        for m in [1, 2, 5] {
            let b = decade * m;
            if b >= min_us {
                bounds.push(b);
            }
            if b >= max_us {
                break 'outer;
            }
        }
        decade = decade.saturating_mul(10);
    }
    bounds
}

/// The latency histogram in 1-2-5 buckets (ms bounds), covering every recorded value.
pub fn latency_buckets(h: &Histogram<u64>) -> Vec<Bucket> {
    if h.is_empty() {
        return Vec::new();
    }
    let bounds = bucket_bounds_us(h.min(), h.lowest_equivalent(h.max()));
    let mut counts = vec![0u64; bounds.len()];
    for v in h.iter_recorded() {
        // The bin's lowest value: a recorded 10 000 µs belongs in "≤ 10 ms".
        let value = h.lowest_equivalent(v.value_iterated_to());
        let i = bounds
            .iter()
            .position(|&b| value <= b)
            .unwrap_or(bounds.len() - 1);
        counts[i] += v.count_since_last_iteration();
    }
    bounds
        .into_iter()
        .zip(counts)
        .map(|(b, count)| Bucket {
            le_ms: us_to_ms(b),
            count,
        })
        .collect()
}

fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

fn per_sec(count: u64, d: Duration) -> f64 {
    if d.is_zero() {
        0.0
    } else {
        count as f64 / d.as_secs_f64()
    }
}

/// Builds the run's record from the spec and what the engine measured.
pub fn build_record(spec: &RunSpec, outcome: &RunOutcome, command: &[String]) -> RunRecord {
    let t = &outcome.totals;
    let open = matches!(spec.load, Load::Open { .. });
    let requests = t.counters.requests;
    let config = RunConfig {
        url: spec.request.url.clone(),
        method: spec.request.method.clone(),
        headers: spec
            .request
            .headers
            .iter()
            .map(|(n, v)| format!("{n}: {v}"))
            .collect(),
        body_bytes: spec.request.body.len() as u64,
        model: spec.load.model_name().into(),
        connections: match spec.load {
            Load::Closed { connections } => Some(connections),
            Load::Open { .. } => None,
        },
        rate_per_sec: match spec.load {
            Load::Open { rate_per_sec, .. } => Some(rate_per_sec),
            Load::Closed { .. } => None,
        },
        max_in_flight: match spec.load {
            Load::Open { max_in_flight, .. } => Some(max_in_flight),
            Load::Closed { .. } => None,
        },
        duration_s: match spec.limit {
            Limit::Duration(d) => Some(d.as_secs_f64()),
            Limit::Requests(_) => None,
        },
        requests: match spec.limit {
            Limit::Requests(n) => Some(n),
            Limit::Duration(_) => None,
        },
        warmup_s: spec.warmup.as_secs_f64(),
        timeout_s: spec.timeout.as_secs_f64(),
        keepalive: spec.keepalive,
        threads: spec.threads,
    };
    let status: BTreeMap<String, u64> = t.statuses().map(|(c, n)| (c.to_string(), n)).collect();
    let errors_by_kind: BTreeMap<String, u64> = t
        .error_kinds()
        .map(|(k, n)| (k.name().to_string(), n))
        .collect();
    let summary = Summary {
        requests,
        errors: t.counters.errors,
        success_rate: if requests == 0 {
            0.0
        } else {
            (requests - t.counters.errors) as f64 / requests as f64
        },
        duration_s: outcome.measured.as_secs_f64(),
        rps: per_sec(requests, outcome.measured),
        target_rps: match spec.load {
            Load::Open { rate_per_sec, .. } => Some(rate_per_sec),
            Load::Closed { .. } => None,
        },
        latency_ms: percentiles(&t.latency),
        service_latency_ms: open.then(|| percentiles(&t.service)),
        dropped: open.then_some(t.dropped),
        status,
        errors_by_kind,
        bytes_sent: t.counters.bytes_sent,
        bytes_received: t.counters.bytes_received,
        connections_opened: t.counters.connections_opened,
        sent_bytes_per_sec: per_sec(t.counters.bytes_sent, outcome.measured),
        received_bytes_per_sec: per_sec(t.counters.bytes_received, outcome.measured),
        latency_buckets: latency_buckets(&t.latency),
        warmup_requests: t.warmup_requests,
    };
    let generator = Generator {
        threads: outcome
            .threads
            .iter()
            .map(|u| ThreadStats {
                cpu_s: u.cpu.as_secs_f64(),
                wall_s: u.wall.as_secs_f64(),
                utilization: u.utilization(),
            })
            .collect(),
        cpu_s: outcome.process_cpu.as_secs_f64(),
        cpu_us_per_request: (requests > 0)
            .then(|| outcome.process_cpu.as_secs_f64() * 1e6 / requests as f64),
        peak_rss_bytes: outcome.peak_rss_bytes,
        lag_ms: open.then(|| percentiles(&t.lag)),
    };
    let histograms = Histograms {
        latency_us: encode_histogram(&t.latency),
        service_latency_us: open.then(|| encode_histogram(&t.service)),
        lag_us: open.then(|| encode_histogram(&t.lag)),
    };
    let mut record = RunRecord {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "volley".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        name: spec.name.clone(),
        command: command.to_vec(),
        config,
        started_at: rfc3339(outcome.started_at),
        ended_at: rfc3339(outcome.ended_at),
        environment: env::detect(),
        interrupted: outcome.interrupted.map(str::to_string),
        summary,
        generator,
        series: outcome.series.clone(),
        histograms,
        warnings: Vec::new(),
        groups: Vec::new(),
        checks: Vec::new(),
        thresholds: Vec::new(),
    };
    record.warnings = diagnose(&record);
    record
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::recorder::new_histogram;

    #[test]
    fn bucket_bounds_cover_the_range() {
        assert_eq!(bucket_bounds_us(150, 900), vec![200, 500, 1000]);
        assert_eq!(bucket_bounds_us(1, 1), vec![1]);
        assert_eq!(bucket_bounds_us(3, 20), vec![5, 10, 20]);
    }

    #[test]
    fn buckets_count_every_value() {
        let mut h = new_histogram();
        for v in [150, 180, 400, 950, 10_000] {
            h.record(v).unwrap();
        }
        let b = latency_buckets(&h);
        assert_eq!(b.iter().map(|b| b.count).sum::<u64>(), 5);
        assert_eq!(
            b[0],
            Bucket {
                le_ms: 0.2,
                count: 2
            }
        );
        assert_eq!(b.last().unwrap().le_ms, 10.0);
    }

    #[test]
    fn percentiles_of_empty_are_null() {
        let p = percentiles(&new_histogram());
        assert_eq!(p.p50, None);
        let mut h = new_histogram();
        for v in 1..=100u64 {
            h.record(v * 1000).unwrap();
        }
        let p = percentiles(&h);
        // HDR reports a bin's highest equivalent value (3 significant digits).
        assert!((p.p50.unwrap() - 50.0).abs() < 0.05, "{p:?}");
        assert!((p.max.unwrap() - 100.0).abs() < 0.1, "{p:?}");
    }
}
