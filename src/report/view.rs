//! What a run report says, independent of layout: the verdict, the key figures, and every table,
//! as formatted strings. `markdown`, `html` and `text` lay these out.

use serde::Serialize;

use super::format::{bytes, ms, rate, seconds, thousands};
use super::table::Table;
use crate::proto::ErrorKind;
use crate::record::model::{Group, GroupKind, Percentiles, RunRecord};
use crate::redact::{Secrets, redact_url_password};

/// How a run went, in one word for styling and one line for people.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// "ok", "warn" or "fail".
    pub level: &'static str,
    /// One line: what happened.
    pub headline: String,
}

/// One key figure shown large at the top of the HTML report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tile {
    /// What it is ("throughput").
    pub label: String,
    /// The number, formatted.
    pub value: String,
    /// Its unit ("req/s").
    pub unit: String,
}

/// A run report's content.
#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    /// The run's name.
    pub title: String,
    /// What was tested, in one line: method, URL, load, length.
    pub subtitle: String,
    /// How the run went.
    pub verdict: Verdict,
    /// Key figures.
    pub tiles: Vec<Tile>,
    /// Warnings about the run itself.
    pub warnings: Vec<String>,
    /// Environment and configuration.
    pub setup: Vec<Table>,
    /// Results: headline, latency, groups, statuses, errors, buckets, thresholds, checks,
    /// generator.
    pub results: Vec<Table>,
}

/// The load shape in words: "closed model, 32 connections".
pub fn load_shape(r: &RunRecord) -> String {
    let c = &r.config;
    match c.model.as_str() {
        "open" => format!(
            "open model, {} req/s, at most {} in flight",
            rate(c.rate_per_sec.unwrap_or(0.0)),
            c.max_in_flight.unwrap_or(0)
        ),
        _ if c.streams > 1 => {
            let vus = c.connections.unwrap_or(0);
            format!(
                "closed model, {} in flight ({} connections × {} streams)",
                vus,
                vus.div_ceil(c.streams),
                c.streams
            )
        }
        _ => format!("closed model, {} connections", c.connections.unwrap_or(0)),
    }
}

/// The run's length as asked: "10.0s" or "50,000 requests".
pub fn length(r: &RunRecord) -> String {
    match (r.config.duration_s, r.config.requests) {
        (Some(d), _) => seconds(d),
        (None, Some(n)) => format!("{} requests", thousands(n)),
        _ => "-".into(),
    }
}

/// Error rate of a record, %; 0 when nothing completed.
fn error_pct(requests: u64, errors: u64) -> f64 {
    if requests == 0 {
        0.0
    } else {
        100.0 * errors as f64 / requests as f64
    }
}

/// `12.34%`.
pub fn pct(v: f64) -> String {
    format!("{v:.2}%")
}

/// The verdict of a run.
pub fn verdict(r: &RunRecord) -> Verdict {
    let s = &r.summary;
    let failed_thresholds = r.thresholds.iter().filter(|t| !t.passed).count();
    let figures = format!(
        "{} requests in {}, {} req/s, {} errors",
        thousands(s.requests),
        seconds(s.duration_s),
        rate(s.rps),
        pct(error_pct(s.requests, s.errors))
    );
    let (level, headline) = if s.requests == 0 {
        (
            "fail",
            "No request completed: there are no figures".to_string(),
        )
    } else if s.errors == s.requests {
        (
            "fail",
            format!(
                "Every request failed: {figures}; the latency describes failures, not the service"
            ),
        )
    } else if let Some(signal) = &r.interrupted {
        (
            "warn",
            format!(
                "Interrupted ({signal}) after {}: the figures cover only the part that ran; {figures}",
                seconds(s.duration_s)
            ),
        )
    } else if failed_thresholds > 0 {
        (
            "fail",
            format!(
                "{failed_thresholds} of {} thresholds failed; {figures}",
                r.thresholds.len()
            ),
        )
    } else if !r.warnings.is_empty() {
        (
            "warn",
            format!("Completed with {} warning(s); {figures}", r.warnings.len()),
        )
    } else {
        ("ok", format!("Completed: {figures}"))
    };
    Verdict { level, headline }
}

/// Builds the content of a run report.
pub fn run_view(r: &RunRecord) -> RunView {
    let s = &r.summary;
    let l = &s.latency_ms;
    let tile = |label: &str, value: String, unit: &str| Tile {
        label: label.into(),
        value,
        unit: unit.into(),
    };
    let tiles = vec![
        tile("throughput", rate(s.rps), "req/s"),
        tile("requests", thousands(s.requests), ""),
        tile("errors", pct(error_pct(s.requests, s.errors)), ""),
        tile("latency p50", ms(l.p50), "ms"),
        tile("latency p99", ms(l.p99), "ms"),
        tile("latency max", ms(l.max), "ms"),
    ];
    let mut results = find_max_tables(r);
    results.extend([headline(r), latency(r)]);
    for kind in [GroupKind::Scenario, GroupKind::Step, GroupKind::Phase] {
        let groups: Vec<&Group> = r.groups.iter().filter(|g| g.kind == kind).collect();
        if !groups.is_empty() {
            results.push(groups_table(kind, &groups));
        }
    }
    results.extend(status(r));
    results.extend(protocol_tables(r));
    results.extend(errors(r));
    results.extend(buckets(r));
    results.extend(thresholds(r));
    results.extend(checks(r));
    results.push(generator(r));
    results.extend(super::selfcheck::table(r));
    RunView {
        title: r.name.clone(),
        subtitle: format!(
            "{} {} — {}, {}",
            r.config.method,
            r.config.url,
            load_shape(r),
            length(r)
        ),
        verdict: verdict(r),
        tiles,
        warnings: r.warnings.iter().map(|w| w.message.clone()).collect(),
        setup: vec![environment(r), configuration(r)],
        results,
    }
}

fn environment(r: &RunRecord) -> Table {
    let e = &r.environment;
    let mut t = Table::new("Environment", &["<", "<"]);
    t.push(["Host", &e.hostname]);
    t.push([
        "CPU",
        &format!("{} ({} logical cores)", e.cpu_model, e.cores),
    ]);
    t.push(["Memory", &bytes(e.memory_bytes as f64)]);
    t.push(["OS", &format!("{}, kernel {} ({})", e.os, e.kernel, e.arch)]);
    t.push(["Tool", &format!("{} {}", r.tool.name, r.tool.version)]);
    t
}

fn configuration(r: &RunRecord) -> Table {
    let c = &r.config;
    // Records of this volley are redacted already; this also covers hand-made or older ones.
    let secrets = Secrets::new(&c.secret_headers);
    let mut t = Table::new("Configuration", &["<", "<"]);
    t.push([
        "Target",
        &format!("{} {}", c.method, redact_url_password(&c.url)),
    ]);
    t.push(["Load", &load_shape(r)]);
    t.push(["Length", &length(r)]);
    if c.warmup_s > 0.0 {
        t.push(["Warm-up", &seconds(c.warmup_s)]);
    }
    t.push(["Timeout", &seconds(c.timeout_s)]);
    t.push(["Keep-alive", if c.keepalive { "yes" } else { "no" }]);
    let mut protocol = c.protocol.clone();
    if c.streams > 1 {
        protocol.push_str(&format!(", {} streams per connection", c.streams));
    }
    if c.tls {
        protocol.push_str(", TLS");
    }
    t.push(["Protocol", &protocol]);
    if c.source_addrs > 0 {
        t.push(["Source addresses", &c.source_addrs.to_string()]);
    }
    if !c.headers.is_empty() {
        let headers: Vec<String> = c.headers.iter().map(|h| secrets.header_line(h)).collect();
        t.push(["Headers", &headers.join("; ")]);
    }
    if c.body_bytes > 0 {
        t.push(["Request body", &bytes(c.body_bytes as f64)]);
    }
    t.push(["Generator threads", &c.threads.to_string()]);
    t.push(["Command", &secrets.argv(&r.command).join(" ")]);
    t.push(["Started", &r.started_at]);
    t.push(["Ended", &r.ended_at]);
    t
}

fn headline(r: &RunRecord) -> Table {
    let s = &r.summary;
    let l = &s.latency_ms;
    let mut t = Table::new("Results", &["<Metric", "Value"]);
    let rps = match s.target_rps {
        Some(asked) => format!("{} req/s (asked {})", rate(s.rps), rate(asked)),
        None => format!("{} req/s", rate(s.rps)),
    };
    t.push(["Throughput", &rps]);
    t.push(["Requests", &thousands(s.requests)]);
    t.push(["Duration (measured)", &format!("{:.2} s", s.duration_s)]);
    t.push([
        "Errors",
        &format!(
            "{} ({})",
            thousands(s.errors),
            pct(error_pct(s.requests, s.errors))
        ),
    ]);
    if let Some(dropped) = s.dropped {
        t.push(["Dropped (in-flight cap)", &thousands(dropped)]);
    }
    for (name, v) in [
        ("Latency mean", l.mean),
        ("Latency p50", l.p50),
        ("Latency p90", l.p90),
        ("Latency p95", l.p95),
        ("Latency p99", l.p99),
        ("Latency p99.9", l.p99_9),
        ("Latency max", l.max),
    ] {
        t.push([name, &format!("{} ms", ms(v))]);
    }
    t.push([
        "Data sent",
        &format!(
            "{} ({}/s)",
            bytes(s.bytes_sent as f64),
            bytes(s.sent_bytes_per_sec)
        ),
    ]);
    t.push([
        "Data received",
        &format!(
            "{} ({}/s)",
            bytes(s.bytes_received as f64),
            bytes(s.received_bytes_per_sec)
        ),
    ]);
    t.push(["Connections opened", &thousands(s.connections_opened)]);
    if s.warmup_requests > 0 {
        t.push([
            "Warm-up requests (not counted)",
            &thousands(s.warmup_requests),
        ]);
    }
    t
}

const LATENCY_HEADS: [&str; 11] = [
    "<", "min", "mean", "p50", "p75", "p90", "p95", "p99", "p99.9", "p99.99", "max",
];

fn latency_cells(label: &str, p: &Percentiles) -> Vec<String> {
    let values = [
        p.min, p.mean, p.p50, p.p75, p.p90, p.p95, p.p99, p.p99_9, p.p99_99, p.max,
    ];
    std::iter::once(label.to_string())
        .chain(values.iter().map(|v| ms(*v)))
        .collect()
}

fn latency(r: &RunRecord) -> Table {
    let s = &r.summary;
    let note = if s.latency_ms.p50.is_none() {
        "No response was received, so there is no latency to report."
    } else if r.config.model == "open" {
        "Open model: latency from when each request was due (free of coordinated omission); \
         service latency from when it was actually sent."
    } else {
        "Closed model: latency from when each request was sent to when its response was complete."
    };
    let mut t = Table::new("Latency (ms)", &LATENCY_HEADS).with_note(note);
    t.push(latency_cells("latency", &s.latency_ms));
    if let Some(service) = &s.service_latency_ms {
        t.push(latency_cells("service latency", service));
    }
    t
}

fn groups_table(kind: GroupKind, groups: &[&Group]) -> Table {
    let mut t = match kind {
        GroupKind::Scenario => Table::new(
            "Scenarios",
            &[
                "<Scenario",
                "Requests",
                "Errors",
                "req/s",
                "p50 ms",
                "p90 ms",
                "p95 ms",
                "p99 ms",
                "max ms",
            ],
        ),
        GroupKind::Step => Table::new(
            "Steps",
            &[
                "<Scenario",
                "<Step",
                "Requests",
                "Errors",
                "req/s",
                "p50 ms",
                "p90 ms",
                "p95 ms",
                "p99 ms",
                "max ms",
            ],
        ),
        GroupKind::Phase => Table::new(
            "Phases",
            &[
                "<Phase", "<Load", "<Span", "Requests", "Errors", "req/s", "p50 ms", "p90 ms",
                "p95 ms", "p99 ms", "max ms",
            ],
        ),
    };
    for g in groups {
        let mut row: Vec<String> = Vec::new();
        match kind {
            GroupKind::Scenario => row.push(g.name.clone()),
            GroupKind::Step => {
                row.push(g.scenario.clone().unwrap_or_default());
                row.push(g.name.clone());
            }
            GroupKind::Phase => {
                row.push(g.name.clone());
                row.push(match (g.target_vus, g.target_rps) {
                    (Some(v), _) => format!("{v} VUs"),
                    (None, Some(rps)) => format!("{} req/s", rate(rps)),
                    _ => "-".into(),
                });
                row.push(match (g.start_s, g.end_s) {
                    (Some(a), Some(b)) => format!("{a:.0}–{b:.0} s"),
                    _ => "-".into(),
                });
            }
        }
        let l = &g.latency_ms;
        row.push(thousands(g.requests));
        row.push(format!(
            "{} ({})",
            thousands(g.errors),
            pct(error_pct(g.requests, g.errors))
        ));
        row.push(rate(g.rps));
        row.extend([l.p50, l.p90, l.p95, l.p99, l.max].iter().map(|v| ms(*v)));
        t.push(row);
    }
    t
}

fn status(r: &RunRecord) -> Option<Table> {
    let s = &r.summary;
    if s.status.is_empty() {
        return None;
    }
    let mut t = Table::new("Status codes", &["<Status", "Responses", "Share"]);
    for (code, n) in &s.status {
        t.push([code.clone(), thousands(*n), pct(error_pct(s.requests, *n))]);
    }
    Some(t)
}

/// Where the time of requests went (connect, TLS handshake, waiting) and gRPC statuses.
pub fn protocol_tables(r: &RunRecord) -> Vec<Table> {
    let s = &r.summary;
    let mut out = Vec::new();
    let tm = &s.timing;
    let rows = [
        ("TCP connect", tm.connect_ms, tm.connects),
        ("TLS handshake", tm.tls_handshake_ms, tm.tls_handshakes),
        ("Waiting (to first byte)", tm.waiting_ms, 0),
    ];
    if rows.iter().any(|(_, p, _)| p.is_some()) {
        let mut t = Table::new(
            "Time split, ms",
            &["<Phase", "Count", "p50", "p90", "p99", "max"],
        );
        for (name, p, count) in rows {
            let Some(p) = p else { continue };
            let count = if count > 0 {
                thousands(count)
            } else {
                "every response".into()
            };
            t.push([
                name.to_string(),
                count,
                ms(p.p50),
                ms(p.p90),
                ms(p.p99),
                ms(p.max),
            ]);
        }
        out.push(t);
    }
    if !s.grpc_status.is_empty() {
        let mut t = Table::new("gRPC status codes", &["<Status", "Calls", "Share"]);
        for (name, n) in &s.grpc_status {
            t.push([name.clone(), thousands(*n), pct(error_pct(s.requests, *n))]);
        }
        out.push(t);
    }
    out
}

fn errors(r: &RunRecord) -> Option<Table> {
    let s = &r.summary;
    if s.errors_by_kind.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Errors",
        &["<Kind", "Requests", "Share of requests", "<What it means"],
    );
    let mut kinds: Vec<_> = s.errors_by_kind.iter().collect();
    kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (kind, n) in kinds {
        let hint = ErrorKind::from_name(kind).map_or("", |k| k.hint());
        t.push([
            kind.clone(),
            thousands(*n),
            pct(error_pct(s.requests, *n)),
            hint.to_string(),
        ]);
    }
    Some(t)
}

fn buckets(r: &RunRecord) -> Option<Table> {
    let b = &r.summary.latency_buckets;
    if b.is_empty() {
        return None;
    }
    let total: u64 = b.iter().map(|b| b.count).sum();
    let mut t = Table::new(
        "Latency distribution",
        &["Latency ≤ (ms)", "Responses", "Share", "Cumulative"],
    );
    let mut cumulative = 0;
    for bucket in b {
        cumulative += bucket.count;
        t.push([
            ms(Some(bucket.le_ms)),
            thousands(bucket.count),
            pct(error_pct(total, bucket.count)),
            pct(error_pct(total, cumulative)),
        ]);
    }
    Some(t)
}

fn thresholds(r: &RunRecord) -> Option<Table> {
    if r.thresholds.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Thresholds",
        &["<Metric", "<Condition", "Observed", "<Result"],
    );
    for th in &r.thresholds {
        let result = match (th.passed, th.aborted) {
            (true, _) => "pass",
            (false, false) => "FAIL",
            (false, true) => "FAIL (ended the run)",
        };
        t.push([
            th.metric.clone(),
            th.condition.clone(),
            th.observed
                .map_or_else(|| "no data".into(), |v| format!("{v:.3}")),
            result.into(),
        ]);
    }
    Some(t)
}

fn checks(r: &RunRecord) -> Option<Table> {
    if r.checks.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Checks",
        &[
            "<Scenario",
            "<Step",
            "<Check",
            "Passed",
            "Failed",
            "Pass rate",
        ],
    );
    for c in &r.checks {
        let total = c.passed + c.failed;
        t.push([
            c.scenario.clone(),
            c.step.clone(),
            c.check.clone(),
            thousands(c.passed),
            thousands(c.failed),
            if total == 0 {
                "-".into()
            } else {
                pct(100.0 * c.passed as f64 / total as f64)
            },
        ]);
    }
    Some(t)
}

fn generator(r: &RunRecord) -> Table {
    let g = &r.generator;
    let mut t = Table::new("Load generator", &["<Figure", "Value"]).with_note(
        "How the load generator itself fared: a busy or late generator limits the figures.",
    );
    let busy: Vec<String> = g
        .threads
        .iter()
        .map(|t| format!("{:.0}%", t.utilization * 100.0))
        .collect();
    t.push(["Worker threads busy", &busy.join(" / ")]);
    t.push(["Process CPU", &format!("{:.2} s", g.cpu_s)]);
    if let Some(per) = g.cpu_us_per_request {
        t.push(["CPU per request", &format!("{per:.2} µs")]);
    }
    t.push(["Peak RSS", &bytes(g.peak_rss_bytes as f64)]);
    if let Some(lag) = &g.lag_ms {
        t.push([
            "Send lag p50 / p99 / max",
            &format!("{} / {} / {} ms", ms(lag.p50), ms(lag.p99), ms(lag.max)),
        ]);
    }
    t
}

/// The result of a `find-max` search and its steps (none for other runs).
fn find_max_tables(r: &RunRecord) -> Vec<Table> {
    let Some(f) = &r.find_max else {
        return Vec::new();
    };
    let load = |l: f64| {
        if f.model == "open" {
            format!("{} req/s", rate(l))
        } else {
            format!("{l:.0} VUs")
        }
    };
    let mut t = Table::new("Maximum sustainable throughput", &["<Figure", "<Value"]);
    t.push([
        "max sustainable throughput".to_string(),
        f.max_sustainable_rps.map_or_else(
            || "none: no step met the SLO".into(),
            |v| format!("{} req/s", rate(v)),
        ),
    ]);
    t.push([
        "at load".to_string(),
        f.max_sustainable_load.map_or_else(|| "-".into(), load),
    ]);
    t.push([
        "peak throughput".to_string(),
        format!("{} req/s at {}", rate(f.peak_rps), load(f.peak_load)),
    ]);
    t.push([
        "breaking point".to_string(),
        match (&f.breaking_load, &f.breaking_reason) {
            (Some(l), Some(why)) => format!("{} ({why})", load(*l)),
            _ => "not reached".into(),
        },
    ]);
    t.push(["SLO".to_string(), f.slo.clone()]);
    t.push([
        "search".to_string(),
        format!(
            "{} steps in {}, {}",
            f.steps.len(),
            seconds(f.elapsed_s),
            f.stopped
        ),
    ]);
    if f.generator_limited {
        t.push([
            "WARNING".to_string(),
            "the load generator saturated before the target: the maximum is only a lower bound"
                .to_string(),
        ]);
    }
    let mut steps = Table::new(
        "Search steps",
        &[
            "Load",
            "Achieved req/s",
            "p50 ms",
            "p99 ms",
            "Errors",
            "<Met SLO",
            "<Why not",
        ],
    );
    for s in &f.steps {
        steps.push([
            load(s.level),
            rate(s.rps),
            ms(s.p50_ms),
            ms(s.p99_ms),
            format!("{:.2}%", s.error_rate * 100.0),
            if s.held {
                "yes".to_string()
            } else {
                "no".to_string()
            },
            s.reason.clone(),
        ]);
    }
    vec![t, steps]
}

/// The tables of groups, thresholds and checks (for the terminal summary, which has its own
/// layout for the rest).
pub fn plan_tables(r: &RunRecord) -> Vec<Table> {
    let view = run_view(r);
    view.results
        .into_iter()
        .filter(|t| {
            matches!(
                t.title.as_str(),
                "Scenarios"
                    | "Steps"
                    | "Phases"
                    | "Thresholds"
                    | "Checks"
                    | "Maximum sustainable throughput"
                    | "Search steps"
            )
        })
        .collect()
}
