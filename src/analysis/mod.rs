//! Analysis: from what the engine measured to the figures people read — percentiles, buckets,
//! the summary, and warnings about the run itself.

pub mod compare;
pub mod like_for_like;
pub mod metric;
pub mod selfcheck;
pub mod spectrum;
pub mod stats;
mod thresholds;
mod warnings;

use crate::record::model::TimingSplit;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;

use crate::engine::RunOutcome;
use crate::plan::{Iterations, Plan, Profile, check_list};
use crate::record::model::{
    Bucket, CheckResult, Generator, Group, GroupKind, Histograms, Percentiles, RunConfig,
    RunRecord, ScenarioConfig, Summary, ThreadStats, ThresholdResult, Tool,
};
use crate::record::series::us_to_ms;
use crate::record::{SCHEMA_VERSION, encode_histogram, env};
use crate::redact::redact_url_password;

pub use thresholds::RecordView;
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

/// Describes a scenario's load profile in one line.
pub fn describe_profile(profile: &Profile) -> String {
    let secs = |d: Duration| crate::report::format::seconds(d.as_secs_f64());
    match profile {
        Profile::Vus {
            ramp, iterations, ..
        } => match iterations {
            Iterations::Unlimited => {
                if ramp.stages().len() == 1 {
                    format!("{} VUs for {}", ramp.peak(), secs(ramp.total()))
                } else {
                    format!(
                        "up to {} VUs over {} ({} stages)",
                        ramp.peak(),
                        secs(ramp.total()),
                        ramp.stages().len()
                    )
                }
            }
            Iterations::Shared(n) => format!("{n} iterations shared by {} VUs", ramp.peak()),
            Iterations::PerVu(n) => format!("{n} iterations per VU, {} VUs", ramp.peak()),
        },
        Profile::Arrival {
            ramp,
            max_vus,
            limit,
        } => match limit {
            Some(n) => format!(
                "{n} iterations at {:.1}/s, at most {max_vus} in flight",
                ramp.peak()
            ),
            None if ramp.stages().len() == 1 => format!(
                "{:.1} iterations/s for {}, at most {max_vus} VUs",
                ramp.peak(),
                secs(ramp.total())
            ),
            None => format!(
                "up to {:.1} iterations/s over {} ({} stages), at most {max_vus} VUs",
                ramp.peak(),
                secs(ramp.total()),
                ramp.stages().len()
            ),
        },
    }
}

/// Builds the run's record from the plan and what the engine measured.
pub fn build_record(plan: &Plan, outcome: &RunOutcome, command: &[String]) -> RunRecord {
    let t = &outcome.totals;
    let open = plan.scenarios.iter().any(|s| s.is_open());
    let requests = t.counters.requests;
    let single = plan.scenarios.first().filter(|_| plan.scenarios.len() == 1);
    let (connections, rate_per_sec, max_in_flight, duration_s, count) =
        match single.map(|s| &s.profile) {
            Some(Profile::Vus {
                ramp, iterations, ..
            }) => (
                Some(ramp.peak() as u32),
                None,
                None,
                single.and_then(|s| s.duration()).map(|d| d.as_secs_f64()),
                match iterations {
                    Iterations::Shared(n) => Some(*n),
                    _ => None,
                },
            ),
            Some(Profile::Arrival {
                ramp,
                max_vus,
                limit,
            }) => (
                None,
                Some(ramp.peak()),
                Some(*max_vus),
                single.and_then(|s| s.duration()).map(|d| d.as_secs_f64()),
                *limit,
            ),
            None => (None, None, None, None, None),
        };
    let quick = plan.quick.as_ref();
    // Secret header values never reach the record (nor, so, any report).
    let secrets = &plan.secrets;
    let config = RunConfig {
        url: redact_url_password(quick.map_or(plan.target.base_url.as_str(), |q| q.url.as_str())),
        method: quick.map_or_else(|| "(plan)".to_string(), |q| q.method.clone()),
        headers: quick
            .map_or(plan.target.headers.as_slice(), |q| q.headers.as_slice())
            .iter()
            .map(|(n, v)| secrets.header_line(&format!("{n}: {v}")))
            .collect(),
        secret_headers: secrets.marked().map(str::to_string).collect(),
        body_bytes: quick.map_or(0, |q| q.body_bytes),
        model: if plan.scenarios.iter().all(|s| s.is_open()) {
            "open".into()
        } else if open {
            "mixed".into()
        } else {
            "closed".into()
        },
        connections,
        rate_per_sec,
        max_in_flight,
        duration_s,
        requests: count,
        warmup_s: plan.warmup.as_secs_f64(),
        timeout_s: plan.target.timeout.as_secs_f64(),
        keepalive: plan.target.connect.keepalive,
        protocol: plan.target.connect.protocol_name().into(),
        tls: plan.target.connect.tls.is_some(),
        streams: plan.target.connect.streams,
        source_addrs: plan.target.connect.source_addrs.len(),
        threads: plan.threads,
        plan: plan.source.as_ref().map(|p| p.display().to_string()),
        scenarios: plan
            .scenarios
            .iter()
            .map(|sc| ScenarioConfig {
                name: sc.name.clone(),
                profile: describe_profile(&sc.profile),
                start_after_s: sc.start_after.as_secs_f64(),
                steps: sc.steps.iter().map(|s| s.name.clone()).collect(),
            })
            .collect(),
        max_header_bytes: Some(plan.target.limits.max_head_bytes as u64),
        max_body_bytes: plan.target.limits.max_body_bytes,
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
        target_rps: if open && plan.scenarios.len() == 1 {
            rate_per_sec
        } else {
            None
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
        grpc_status: t
            .grpc_statuses()
            .map(|(c, n)| (c.name().to_string(), n))
            .collect(),
        timing: TimingSplit {
            connect_ms: (!t.connect.is_empty()).then(|| percentiles(&t.connect)),
            tls_handshake_ms: (!t.tls.is_empty()).then(|| percentiles(&t.tls)),
            waiting_ms: (!t.wait.is_empty()).then(|| percentiles(&t.wait)),
            connects: t.connect.len(),
            tls_handshakes: t.tls.len(),
        },
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
        name: plan.name.clone(),
        command: secrets.argv(command),
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
        groups: groups(plan, outcome),
        checks: check_list(plan)
            .into_iter()
            .zip(&t.checks)
            .map(|((scenario, step, check), counts)| CheckResult {
                scenario: scenario.to_string(),
                step: step.to_string(),
                check: check.describe(),
                passed: counts[0],
                failed: counts[1],
            })
            .collect(),
        thresholds: Vec::new(),
        find_max: None,
        self_checks: Vec::new(),
    };
    let view = RecordView::new(&record);
    let verdicts: Vec<ThresholdResult> = plan
        .thresholds
        .iter()
        .enumerate()
        .map(|(i, th)| {
            let observed = th.observe(&view);
            ThresholdResult {
                metric: th.metric_text.clone(),
                condition: th.condition_text.clone(),
                observed,
                passed: th.passes(observed),
                aborted: outcome.aborted_by.contains(&i),
            }
        })
        .collect();
    record.thresholds = verdicts;
    record.self_checks = selfcheck::run(&record, &selfcheck::expected_load(plan, &record));
    record.warnings = diagnose(&record);
    record
}

/// The result groups of a plan run, in the plan's order; groups without requests are kept (a
/// step that never ran is worth seeing).
fn groups(plan: &Plan, outcome: &RunOutcome) -> Vec<Group> {
    let phases: BTreeMap<usize, &crate::plan::Phase> = plan
        .scenarios
        .iter()
        .flat_map(|sc| sc.phases.iter().map(|p| (p.group, p)))
        .collect();
    plan.groups
        .iter()
        .zip(&outcome.totals.groups)
        .enumerate()
        .map(|(i, (def, stats))| {
            let phase = phases.get(&i);
            let span = match phase {
                Some(p) => (p.end - p.start).min(outcome.measured.max(Duration::from_millis(1))),
                None => outcome.measured,
            };
            Group {
                kind: def.kind,
                name: def.name.clone(),
                scenario: def.scenario.clone(),
                start_s: phase.map(|p| p.start.as_secs_f64()),
                end_s: phase.map(|p| p.end.as_secs_f64()),
                target_vus: phase.and_then(|p| p.vus),
                target_rps: phase.and_then(|p| p.rate),
                requests: stats.counters.requests,
                errors: stats.counters.errors,
                rps: per_sec(stats.counters.requests, span),
                latency_ms: percentiles(&stats.latency),
                status: stats.statuses().map(|(c, n)| (c.to_string(), n)).collect(),
                errors_by_kind: stats
                    .error_kinds()
                    .map(|(k, n)| (k.name().to_string(), n))
                    .collect(),
                histogram_us: encode_histogram(&stats.latency),
            }
        })
        .filter(|g| g.kind != GroupKind::Scenario || plan.scenarios.len() > 1 || g.requests > 0)
        .collect()
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
