//! The record of a finished run: from the plan and what the engine measured.

use crate::record::model::{GroupedBy, Model, TimingSplit, TlsNegotiated};
use std::collections::BTreeMap;
use std::time::SystemTime;

use crate::engine::RunOutcome;
use crate::plan::steady::Unsteady;
use crate::plan::{Plan, check_list};
use crate::record::error_kind::ErrorKind;
use crate::record::model::{
    Arrival, CheckResult, Ci95, Drain, Generator, Group, GroupBatches, GroupKind, Histograms,
    PrecisionGoal, PrecisionOutcome, RunConfig, RunRecord, ScenarioConfig, Summary, ThreadStats,
    ThresholdResult, Tool, Warning,
};
use crate::record::{SCHEMA_VERSION, encode_histogram, env};
use crate::redact::redact_url_userinfo;

use super::load::{describe_scenario, scenario_load};
use super::thresholds::RecordView;
use super::{expected, windows};
use crate::analysis::{diagnose, latency_buckets, percentiles, selfcheck};

fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

use windows::{Span, per_sec};

/// Per scenario: its window and, in the open model, what its schedule asked against what it
/// achieved.
fn scenario_figures(plan: &Plan, outcome: &RunOutcome) -> Vec<(Span, Option<Arrival>)> {
    let t = &outcome.totals;
    plan.scenarios
        .iter()
        .enumerate()
        .map(|(si, sc)| {
            // Quick mode has no scenario group: its one scenario is the whole run.
            let (counters, last_done) = match sc.group {
                Some(g) => (&t.groups[g].counters, t.groups[g].last_done_us),
                None => (&t.counters, u64::MAX),
            };
            let span = windows::scenario_span(plan, sc, outcome, last_done);
            let arrival = windows::arrival(plan, (si, sc), span, counters, counters.dropped);
            (span, arrival)
        })
        .collect()
}

/// The measured part of a scenario that lasts `d` (its timeline starts with the warm-up), s.
fn measured_part(plan: &Plan, d: std::time::Duration) -> f64 {
    d.saturating_sub(plan.warmup).as_secs_f64()
}

/// What a run's record holds besides the engine's measurement, all known before it is built.
#[derive(Debug, Default)]
pub struct Beside {
    /// The run's id, as its exported series were labelled.
    pub run_id: String,
    /// What was seen of the target (`--watch`, a suite's target process).
    pub watch: Option<crate::record::watch::Watched>,
    /// The outputs' warnings about the run (remote-write pushes that failed).
    pub warnings: Vec<Warning>,
}

/// Builds the run's record from the plan, what the engine measured and what was seen beside
/// it: the one place a run's record is made. Its judged parts (thresholds, self-checks,
/// warnings, outcome) are derived here from its measured parts; nothing changes it afterwards.
pub fn build_record(
    plan: &Plan,
    outcome: &RunOutcome,
    command: &crate::redact::Argv,
    beside: Beside,
) -> RunRecord {
    let t = &outcome.totals;
    let model = plan.model();
    let secrets = &plan.secrets;
    let scenarios = scenario_figures(plan, outcome);
    let config = run_config(plan);
    let summary = summary(plan, outcome, &scenarios);
    let generator = generator(outcome, model);
    let histograms = histograms(outcome, model);
    let mut record = RunRecord {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "volley".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        name: plan.name.clone(),
        run_id: beside.run_id,
        tags: plan.tags.clone(),
        command: secrets.command(command),
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
        groups: groups(plan, outcome, &scenarios),
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
        share: plan
            .share
            .as_ref()
            .map(|s| s.record(outcome.started_at + crate::engine::START_LEAD + plan.warmup)),
        merged: None,
        grouped: plan
            .target
            .group_by
            .iter()
            .zip(&t.grouped)
            .map(|(g, table)| GroupedBy::from_table(g.selector.to_string(), table))
            .collect(),
        watch: beside.watch,
        outcome: None,
    };
    precise_at_the_end(&mut record, outcome);
    record.thresholds = threshold_results(plan, outcome, &record);
    let gaps = t.sends.gaps();
    let sends = match model.has_open() {
        true => selfcheck::Sends::Sample(&gaps),
        false => selfcheck::Sends::NotApplicable(
            "closed model: requests go out when a VU is free, on no schedule".into(),
        ),
    };
    let load = expected::expected_load(plan, &record);
    record.self_checks = selfcheck::run(&record, &load, &sends);
    record.warnings = diagnose(&record);
    record.warnings.extend(beside.warnings);
    crate::analysis::verdict::settle(&mut record);
    record
}

/// What the run was asked to do, as the record says it.
pub fn run_config(plan: &Plan) -> RunConfig {
    let single = plan.scenarios.first().filter(|_| plan.scenarios.len() == 1);
    let (connections, rate_per_sec, max_in_flight, duration_s, count) = match single {
        Some(s) => {
            let (p, peak) = (&s.profile, s.profile.ramp().peak());
            (
                (!p.is_open()).then_some(peak as u32),
                p.is_open().then_some(peak),
                p.in_flight_cap(),
                s.duration().map(|d| measured_part(plan, d)),
                p.iteration_count(),
            )
        }
        None => (None, None, None, None, None),
    };
    let quick = plan.quick.as_ref();
    // Secret header values never reach the record (nor, so, any report).
    let secrets = &plan.secrets;
    RunConfig {
        url: redact_url_userinfo(quick.map_or(plan.target.base_url.as_str(), |q| q.url.as_str())),
        method: quick.map_or_else(|| "(plan)".to_string(), |q| q.method.clone()),
        headers: quick
            .map_or(plan.target.headers.as_slice(), |q| q.headers.as_slice())
            .iter()
            .map(|(n, v)| secrets.header_line(&format!("{n}: {v}")))
            .collect(),
        secret_headers: secrets.marked().map(str::to_string).collect(),
        body_bytes: quick.map_or(0, |q| q.body_bytes),
        latency_buckets_ms: plan.latency_buckets_ms(),
        model: plan.model(),
        connections,
        rate_per_sec,
        max_in_flight,
        duration_s,
        requests: count,
        warmup_s: plan.warmup.as_secs_f64(),
        timeout_s: plan.target.timeout.as_secs_f64(),
        keepalive: plan.target.connect.keepalive,
        protocol: plan.target.connect.protocol_name(),
        tls: plan.target.connect.tls.is_some(),
        streams: plan.target.connect.streams,
        zero_rtt: plan.target.connect.zero_rtt,
        source_addrs: plan.target.connect.source_addrs.len(),
        threads: plan.threads,
        plan: plan.source.as_ref().map(|p| p.display().to_string()),
        scenarios: plan
            .scenarios
            .iter()
            .map(|sc| ScenarioConfig {
                name: sc.name.clone(),
                profile: describe_scenario(plan, sc),
                start_after_s: sc.start_after.as_secs_f64(),
                steps: sc.steps.iter().map(|s| s.name.clone()).collect(),
                load: Some(scenario_load(plan, sc)),
            })
            .collect(),
        max_header_bytes: Some(plan.target.limits.max_head_bytes as u64),
        max_body_bytes: plan.target.limits.max_body_bytes,
    }
}

/// The run's headline figures (docs/measurement.md).
fn summary(plan: &Plan, outcome: &RunOutcome, scenarios: &[(Span, Option<Arrival>)]) -> Summary {
    let t = &outcome.totals;
    let open = plan.has_open_scenario();
    let requests = t.counters.requests;
    let status: BTreeMap<String, u64> = t.statuses().map(|(c, n)| (c.to_string(), n)).collect();
    let errors_by_kind: BTreeMap<ErrorKind, u64> = t.error_kinds().collect();
    let window = outcome.window.as_secs_f64();
    let c = &t.counters;
    let arrivals: Vec<Arrival> = scenarios.iter().filter_map(|(_, a)| *a).collect();
    let per_iteration = match arrivals.as_slice() {
        [one] => one.requests_per_iteration,
        _ => None,
    };
    let arrival = windows::run_arrival(&arrivals, window, per_iteration);
    let attempts = c.attempts();
    Summary {
        requests,
        errors: c.errors,
        attempts,
        not_sent: c.not_sent,
        success_rate: c.error_rate().map_or(0.0, |e| 1.0 - e),
        duration_s: window,
        rps: per_sec(requests - c.drained, window),
        // Only when every scenario is open: the asked rate is then the whole run's.
        target_rps: arrival
            .filter(|a| a.requests_per_iteration == Some(1) && !plan.mixes_models())
            .map(|a| a.asked_per_sec),
        // A stopped run abandons what is in flight: no drain, only the workers' way out.
        drain: Drain {
            duration_s: match stopped(outcome) && c.drained == 0 {
                true => 0.0,
                false => outcome.drain.as_secs_f64(),
            },
            requests: c.drained,
        },
        iterations: c.iterations,
        arrival,
        latency_ms: percentiles(&t.latency),
        ci95: Some(uncertainty(
            plan,
            outcome,
            per_sec(requests - c.drained, window),
        )),
        service_latency_ms: open.then(|| percentiles(&t.service)),
        dropped: open.then_some(t.dropped),
        status,
        errors_by_kind,
        bytes_sent: t.counters.bytes_sent,
        bytes_received: t.counters.bytes_received,
        connections_opened: t.counters.connections_opened,
        sent_bytes_per_sec: per_sec(c.bytes_sent - c.drained_bytes_sent, window),
        received_bytes_per_sec: per_sec(c.bytes_received - c.drained_bytes_received, window),
        latency_buckets: latency_buckets(&t.latency, &plan.latency_buckets_ms()),
        warmup_requests: t.warmup_requests,
        warmup_connections: t.warmup_connections,
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
        tls_negotiated: t
            .tls_sessions()
            .map(|(n, connections)| TlsNegotiated {
                version: n.version_name().into(),
                alpn: n.alpn_name().map(str::to_string),
                connections,
            })
            .collect(),
        quic: (t.quic.connections > 0).then_some(t.quic),
        streams: super::streams::whole(plan, t.streams.as_deref(), window),
    }
}

/// What the generator itself did: CPU per thread, memory, send lag.
fn generator(outcome: &RunOutcome, model: Model) -> Generator {
    let open = model.has_open();
    Generator {
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
        cpu_us_per_request: worker_cpu_per_request(outcome),
        peak_rss_bytes: outcome.peak_rss_bytes,
        lag_ms: open.then(|| percentiles(&outcome.totals.lag)),
        send_grid_ms: open.then(|| outcome.send_grid.as_micros() as f64 / 1e3),
        steal_share: outcome.steal_share,
    }
}

/// The 95 % intervals of the headline figures (`rps`: the run's throughput, req/s), and what a
/// run asked to last until precise got.
fn uncertainty(plan: &Plan, outcome: &RunOutcome, rps: f64) -> Ci95 {
    if let Some(why) = plan.unsteady().filter(Unsteady::mixes_loads) {
        return Ci95::unsteady(why.cause());
    }
    let batches = outcome.batches.histograms();
    let mut ci = crate::analysis::interval::ci95(&crate::analysis::interval::Input {
        window_s: outcome.window.as_secs_f64(),
        series: &outcome.series,
        batch_s: outcome.batches.batch_s(),
        batches: &batches,
        rps,
        latency: &outcome.totals.latency,
    });
    ci.precision = (!plan.precision.is_empty()).then(|| PrecisionOutcome {
        goals: plan.precision.clone(),
        reached: outcome.precise_at.is_some(),
        // Judged once a second is complete: the last second's end may come just after the
        // window's.
        at_s: outcome
            .precise_at
            .map(|d| d.min(outcome.window).as_secs_f64()),
    });
    ci
}

/// Whether the run was stopped before its end: by a signal, a failed `abort_on_fail`
/// threshold, or once precise (before its window's end: a goal met by the last second is
/// judged just after it).
fn stopped(outcome: &RunOutcome) -> bool {
    let precise_early = outcome.precise_at.is_some_and(|at| at < outcome.window);
    outcome.interrupted.is_some() || outcome.abort.is_some() || precise_early
}

/// A run whose goals only its last second met: the stop at its end can come before the control
/// loop judged that second. If it ran its course and its final intervals meet every goal, it
/// was precise at its end.
fn precise_at_the_end(r: &mut RunRecord, outcome: &RunOutcome) {
    let Some(p) = r.summary.ci95.as_ref().and_then(|c| c.precision.as_ref()) else {
        return;
    };
    let met = |g: &PrecisionGoal| {
        crate::analysis::interval::goal_got(r, g).is_some_and(|got| got <= g.share)
    };
    if p.reached || stopped(outcome) || !p.goals.iter().all(met) {
        return;
    }
    let at_s = Some(r.summary.duration_s);
    if let Some(p) = r.summary.ci95.as_mut().and_then(|c| c.precision.as_mut()) {
        (p.reached, p.at_s) = (true, at_s);
    }
}

fn histograms(outcome: &RunOutcome, model: Model) -> Histograms {
    let (t, b) = (&outcome.totals, &outcome.batches);
    let open = model.has_open();
    Histograms {
        latency_us: encode_histogram(&t.latency),
        service_latency_us: open.then(|| encode_histogram(&t.service)),
        lag_us: open.then(|| encode_histogram(&t.lag)),
        connect_us: (!t.connect.is_empty()).then(|| encode_histogram(&t.connect)),
        tls_handshake_us: (!t.tls.is_empty()).then(|| encode_histogram(&t.tls)),
        waiting_us: (!t.wait.is_empty()).then(|| encode_histogram(&t.wait)),
        batches_us: if b.is_empty() { Vec::new() } else { b.encode() },
        batch_s: if b.is_empty() { 0 } else { b.batch_s() },
    }
}

/// The verdict of every threshold on the finished record. One that ended the run
/// (`abort_on_fail`) has failed whatever the shortened run's figures show, and says when it
/// failed and with what value.
fn threshold_results(
    plan: &Plan,
    outcome: &RunOutcome,
    record: &RunRecord,
) -> Vec<ThresholdResult> {
    let view = RecordView::new(record);
    plan.thresholds
        .iter()
        .enumerate()
        .map(|(i, th)| {
            let observed = th.observe(&view);
            let abort = outcome.abort.as_ref().and_then(|a| {
                let (_, then) = a.thresholds.iter().find(|(t, _)| *t == i)?;
                Some((a.at.as_secs_f64(), *then))
            });
            ThresholdResult::judged(
                th.metric_text.clone(),
                th.condition_text.clone(),
                observed,
                th.metric.unit(),
                th.passes(observed),
                abort,
            )
        })
        .collect()
}

/// The worker threads' CPU time per request they finished, warm-up included, µs (see
/// docs/measurement.md, "The generator's own figures"): the generator's own cost, without the
/// control thread or whatever else shares the process (`volley demo`'s built-in target).
fn worker_cpu_per_request(outcome: &RunOutcome) -> Option<f64> {
    let t = &outcome.totals;
    let finished = t.counters.requests + t.warmup_requests;
    let cpu: f64 = outcome.threads.iter().map(|u| u.cpu.as_secs_f64()).sum();
    (finished > 0).then(|| cpu * 1e6 / finished as f64)
}

/// The result groups of a plan run, in the plan's order; groups without requests are kept (a
/// step that never ran is worth seeing). Each group's rate is over its own window.
fn groups(plan: &Plan, outcome: &RunOutcome, scenarios: &[(Span, Option<Arrival>)]) -> Vec<Group> {
    // Per group id: its scenario (index) and, for phases, the phase.
    let mut owner: BTreeMap<usize, (usize, Option<&crate::plan::Phase>)> = BTreeMap::new();
    for (si, sc) in plan.scenarios.iter().enumerate() {
        owner.extend(sc.group.map(|g| (g, (si, None))));
        owner.extend(
            sc.steps
                .iter()
                .filter_map(|st| st.group)
                .map(|g| (g, (si, None))),
        );
        owner.extend(sc.phases.iter().map(|p| (p.group, (si, Some(p)))));
    }
    plan.groups
        .iter()
        .zip(&outcome.totals.groups)
        .enumerate()
        .map(|(i, (def, stats))| {
            let (si, phase) = owner.get(&i).copied().unwrap_or((0, None));
            let sc = &plan.scenarios[si];
            let (span, arrival) = match phase {
                Some(p) => (
                    windows::phase_span(plan, sc, outcome, (p.start, p.end)),
                    None,
                ),
                None => scenarios[si],
            };
            let c = &stats.counters;
            let is_scenario = def.kind == GroupKind::Scenario;
            let rps = per_sec(c.requests - c.drained, span.len());
            let (ci95, batches) = group_uncertainty(outcome, i, span, rps, &stats.latency).unzip();
            Group {
                kind: def.kind,
                name: def.name.clone(),
                scenario: def.scenario.clone(),
                operation: def.operation.clone(),
                start_s: Some(span.start),
                end_s: Some(span.end),
                target_vus: phase.and_then(|p| p.vus),
                target_rps: phase.and_then(|p| p.rate),
                requests: c.requests,
                errors: c.errors,
                not_sent: c.not_sent,
                drained: c.drained,
                window_s: span.len(),
                rps,
                iterations: is_scenario.then_some(c.iterations),
                arrival: arrival.filter(|_| is_scenario),
                latency_ms: percentiles(&stats.latency),
                status: stats.statuses().map(|(c, n)| (c.to_string(), n)).collect(),
                errors_by_kind: stats.error_kinds().collect(),
                histogram_us: encode_histogram(&stats.latency),
                ramp_from: phase.and_then(|p| match p.origin {
                    crate::plan::PhaseOrigin::Stage { ramp_from } => ramp_from,
                    crate::plan::PhaseOrigin::Ladder => None,
                }),
                think_s: c.think_us as f64 / 1e6,
                pacing_s: c.pacing_us as f64 / 1e6,
                streams: super::streams::group(plan, i, stats.streams.as_deref(), span.len()),
                ci95,
                batches,
            }
        })
        .filter(|g| g.kind != GroupKind::Scenario || plan.scenarios.len() > 1 || g.requests > 0)
        .collect()
}

/// Group `i`'s intervals and what they were computed from (`rps`: its rate, req/s; `latency`:
/// its whole latency, µs): for a group whose window starts with the measured window, when the
/// run gathered its seconds (a steady load).
fn group_uncertainty(
    outcome: &RunOutcome,
    i: usize,
    span: Span,
    rps: f64,
    latency: &hdrhistogram::Histogram<u64>,
) -> Option<(Ci95, GroupBatches)> {
    let seconds = outcome.group_series.get(i)?;
    if seconds.is_empty() || span.start.abs() > 1e-3 {
        return None;
    }
    let ci = crate::analysis::interval::of_group(
        &outcome.series,
        seconds,
        span.len(),
        rps,
        latency,
        crate::analysis::interval::AUTOCORRELATION,
    );
    Some((ci, seconds.to_record()))
}
