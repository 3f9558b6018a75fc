//! What a run report says, independent of layout: the verdict, the key figures, and every table,
//! as formatted strings. `markdown`, `html` and `text` lay these out.

use serde::Serialize;

use super::figures::observed;
use super::figures::share_pct as error_pct;

/// An error rate (0–1, none when nothing was charged to the target) as a percentage.
fn rate_pct(rate: Option<f64>) -> f64 {
    100.0 * rate.unwrap_or(0.0)
}
pub use super::accounting::{accounting, connections};
pub use super::figures::{number, pct};
use super::find_max;
use super::load::subtitle;
pub use super::load::{length, load_shape};
pub use super::protocol::{protocol, protocol_tables, quic, tls_negotiated};
use super::table::Table;
pub use crate::analysis::verdict::{Verdict, verdict};
pub use crate::record::model::Level;
use crate::record::model::{Group, GroupKind, Model, Percentiles, RunRecord, ThresholdResult};
use crate::redact::{Secrets, redact_url_userinfo};
use crate::units::{bytes, ms, rate, seconds, thousands};

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
        tile("errors", pct(rate_pct(s.error_rate())), ""),
        tile("latency p50", ms(l.p50), "ms"),
        tile("latency p99", ms(l.p99), "ms"),
        tile("latency max", ms(l.max), "ms"),
    ];
    let mut results = r
        .find_max
        .as_ref()
        .map(find_max::tables)
        .unwrap_or_default();
    results.extend([headline(r), latency(r)]);
    results.extend(super::uncertainty::table(r));
    for kind in [GroupKind::Scenario, GroupKind::Step, GroupKind::Phase] {
        let groups: Vec<&Group> = r.groups.iter().filter(|g| g.kind == kind).collect();
        if !groups.is_empty() {
            results.push(groups_table(kind, &groups));
        }
    }
    results.extend(super::uncertainty::group_table(r));
    results.extend(super::streams::tables(r));
    results.extend(status(r));
    results.extend(super::grouped::tables(r));
    results.extend(protocol_tables(r));
    results.extend(errors(r));
    results.extend(buckets(r));
    results.extend(thresholds(r));
    results.extend(checks(r));
    results.extend(super::watch::tables(r));
    results.push(generator(r));
    results.extend(super::shares::table(r));
    results.extend(super::selfcheck::table(r));
    RunView {
        title: r.name.clone(),
        subtitle: subtitle(r),
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
        &format!("{} {}", c.method, redact_url_userinfo(&c.url)),
    ]);
    t.push(["Load", &load_shape(r)]);
    t.push(["Length", &length(r)]);
    if c.warmup_s > 0.0 {
        t.push(["Warm-up", &seconds(c.warmup_s)]);
    }
    t.push(["Timeout", &seconds(c.timeout_s)]);
    t.push(["Keep-alive", if c.keepalive { "yes" } else { "no" }]);
    t.push(["Protocol", &protocol(r)]);
    let quic = quic(r);
    if !quic.is_empty() {
        t.push(["QUIC", &quic]);
    }
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
    if !r.tags.is_empty() {
        t.push(["Tags", &tags_text(r)]);
    }
    if !r.run_id.is_empty() {
        t.push(["Run id", &r.run_id]);
    }
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
    for (label, value) in accounting(r) {
        t.push([label, &value]);
    }
    t.push([
        "Errors",
        &format!(
            "{} ({})",
            thousands(s.charged_errors()),
            pct(rate_pct(s.error_rate()))
        ),
    ]);
    if let Some(dropped) = s.dropped {
        t.push(["Dropped (in-flight cap)", &thousands(dropped)]);
    }
    t.push([
        "Latency mean ± stdev",
        &format!("{} ± {} ms", ms(l.mean), ms(l.stdev)),
    ]);
    for (name, v) in [
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
    t.push(["Connections", &connections(r)]);
    if s.warmup_requests > 0 {
        t.push([
            "Warm-up requests (not counted)",
            &thousands(s.warmup_requests),
        ]);
    }
    t
}

const LATENCY_HEADS: [&str; 14] = [
    "<", "min", "mean", "stdev", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99.9",
    "p99.99", "max",
];

fn latency_cells(label: &str, p: &Percentiles) -> Vec<String> {
    let values = [
        p.min, p.mean, p.stdev, p.p10, p.p25, p.p50, p.p75, p.p90, p.p95, p.p99, p.p99_9, p.p99_99,
        p.max,
    ];
    std::iter::once(label.to_string())
        .chain(values.iter().map(|v| ms(*v)))
        .collect()
}

fn latency(r: &RunRecord) -> Table {
    let s = &r.summary;
    let note = match r.config.model {
        _ if s.latency_ms.p50.is_none() => {
            "No response was received, so there is no latency to report."
        }
        Model::Open => {
            "Open model: latency from when each request was due (free of coordinated omission); \
             service latency from when it was actually sent."
        }
        Model::Mixed => {
            "Closed and open scenarios: latency from when each request was sent (closed) or due \
             (open, free of coordinated omission); service latency from when it was actually \
             sent, every scenario's."
        }
        Model::Closed => {
            "Closed model: latency from when each request was sent to when its response was \
             complete."
        }
    };
    let mut t = Table::new("Latency (ms)", &LATENCY_HEADS).with_note(note);
    t.push(latency_cells("latency", &s.latency_ms));
    if let Some(service) = &s.service_latency_ms {
        t.push(latency_cells("service latency", service));
    }
    t
}

/// The figures of every group table, after the columns that say which group it is.
const GROUP_FIGURES: [&str; 9] = [
    "Requests", "Errors", "req/s", "mean ms", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "max ms",
];

fn groups_table(kind: GroupKind, groups: &[&Group]) -> Table {
    let (title, names): (&str, &[&str]) = match kind {
        GroupKind::Scenario => ("Scenarios", &["<Scenario"]),
        GroupKind::Step => ("Steps", &["<Scenario", "<Step"]),
        GroupKind::Phase => ("Phases", &["<Phase", "<Load", "<Span"]),
    };
    let heads: Vec<&str> = names.iter().chain(&GROUP_FIGURES).copied().collect();
    let mut t = Table::new(title, &heads);
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
                let from = |v: String| match g.ramp_from {
                    Some(f) if g.target_vus.is_some() => format!("{}→{v} (ramp)", f.round()),
                    Some(f) => format!("{}→{v} (ramp)", rate(f)),
                    None => v,
                };
                row.push(match (g.target_vus, g.target_rps) {
                    (Some(v), _) => from(crate::units::vus(f64::from(v))),
                    (None, Some(rps)) => from(format!("{} req/s", rate(rps))),
                    _ => "-".into(),
                });
                row.push(match (g.start_s, g.end_s) {
                    (Some(a), Some(b)) => format!("{}–{} s", number(a), number(b)),
                    _ => "-".into(),
                });
            }
        }
        let l = &g.latency_ms;
        row.push(thousands(g.requests));
        row.push(format!(
            "{} ({})",
            thousands(g.errors),
            pct(rate_pct(g.error_rate()))
        ));
        row.push(rate(g.rps));
        row.extend(
            [l.mean, l.p50, l.p90, l.p95, l.p99, l.max]
                .iter()
                .map(|v| ms(*v)),
        );
        t.push(row);
    }
    match idle_note(groups) {
        Some(note) => t.with_note(&note),
        None => t,
    }
}

/// The think time and pacing waits of groups that have them, which no latency includes.
fn idle_note(groups: &[&Group]) -> Option<String> {
    let idle: Vec<String> = groups
        .iter()
        .filter(|g| g.think_s > 0.0 || g.pacing_s > 0.0)
        .map(|g| {
            let mut parts = Vec::new();
            if g.think_s > 0.0 {
                parts.push(format!("think {}", seconds(g.think_s)));
            }
            if g.pacing_s > 0.0 {
                parts.push(format!("pacing waits {}", seconds(g.pacing_s)));
            }
            format!("{}: {}", g.name, parts.join(", "))
        })
        .collect();
    (!idle.is_empty()).then(|| {
        format!(
            "VU time not in any latency (summed over VUs): {}.",
            idle.join("; ")
        )
    })
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

fn errors(r: &RunRecord) -> Option<Table> {
    let s = &r.summary;
    if s.errors_by_kind.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Errors",
        &["<Kind", "Attempts", "Share of attempts", "<What it means"],
    );
    for (kind, n, hint) in error_kinds(r) {
        t.push([
            kind.to_string(),
            thousands(n),
            pct(error_pct(s.requests + s.not_sent, n)),
            hint.to_string(),
        ]);
    }
    Some(t)
}

/// Failures by kind, most frequent first (then by name), each with what it means: one order
/// and one reading of the kinds for every report.
pub fn error_kinds(r: &RunRecord) -> Vec<(&'static str, u64, &'static str)> {
    let mut kinds: Vec<(&'static str, u64, &'static str)> = r
        .summary
        .errors_by_kind
        .iter()
        .map(|(kind, n)| (kind.name(), *n, kind.hint()))
        .collect();
    kinds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    kinds
}

fn buckets(r: &RunRecord) -> Option<Table> {
    let b = &r.summary.latency_buckets;
    if b.is_empty() {
        return None;
    }
    let total: u64 = b.iter().map(|b| b.count).sum();
    let mut t = Table::new(
        "Latency distribution",
        &["Latency (ms)", "Responses", "Share", "Cumulative"],
    );
    let mut cumulative = 0;
    for (bucket, label) in b.iter().zip(super::figures::bucket_labels(b)) {
        cumulative += bucket.count;
        t.push([
            label,
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
        t.push([
            th.metric.clone(),
            th.condition.clone(),
            th.observed.map_or_else(
                || "no data".into(),
                // Records older than the unit: the bare value, as they were shown.
                |v| {
                    th.unit
                        .map_or_else(|| format!("{v:.3}"), |u| observed(v, u))
                },
            ),
            threshold_result(th),
        ]);
    }
    Some(t)
}

/// "pass", "FAIL", or "FAIL (aborted the run at t = 1.02 s: 93.5)" for one that ended the run
/// (whatever the shortened run's figures show: the Observed column is the whole run's).
fn threshold_result(th: &ThresholdResult) -> String {
    if th.aborted {
        let at = th
            .aborted_at_s
            .map(|at| format!(" at t = {at:.2} s"))
            .unwrap_or_default();
        let then = th
            .observed_at_abort
            .map(|v| {
                format!(
                    ": {}",
                    th.unit.map_or_else(|| number(v), |u| observed(v, u))
                )
            })
            .unwrap_or_default();
        format!("FAIL (aborted the run{at}{then})")
    } else if th.passed {
        "pass".into()
    } else {
        "FAIL".into()
    }
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
        "How the load generator itself fared: a busy or late generator limits the figures. \
         Process CPU counts every thread of the volley process (with `volley demo`, the built-in \
         target too); CPU per request counts the worker threads only, over every request they \
         finished, warm-up included.",
    );
    let busy: Vec<String> = g
        .threads
        .iter()
        .map(|t| format!("{:.0}%", t.utilization * 100.0))
        .collect();
    t.push(["Worker threads busy", &busy.join(" / ")]);
    t.push(["Process CPU (every thread)", &format!("{:.2} s", g.cpu_s)]);
    if let Some(per) = g.cpu_us_per_request {
        t.push(["CPU per request (worker threads)", &format!("{per:.2} µs")]);
    }
    t.push(["Peak RSS", &bytes(g.peak_rss_bytes as f64)]);
    if let Some(steal) = g.steal_share {
        t.push([
            "CPU steal (the machine's CPU time its hypervisor took)",
            &crate::report::figures::steal_percent(steal),
        ]);
    }
    if let Some(lag) = &g.lag_ms {
        t.push([
            "Send lag p50 / p99 / max",
            &format!("{} / {} / {} ms", ms(lag.p50), ms(lag.p99), ms(lag.max)),
        ]);
    }
    if let Some(grid) = g.send_grid_ms {
        t.push(["Arrivals sent", &send_grid(grid)]);
    }
    t
}

/// How the open model's arrivals left: on a send grid of `tick_ms`, or each at its instant.
pub fn send_grid(tick_ms: f64) -> String {
    if tick_ms > 0.0 {
        format!("on a {tick_ms} ms send grid")
    } else {
        "each at its own instant (no send grid)".into()
    }
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
                    | super::uncertainty::GROUP_TABLE
                    | "Streams"
                    | "Stream sends and goodput"
                    | "LLM streams"
                    | "Thresholds"
                    | "Checks"
                    | "Maximum sustainable throughput"
                    | "Search steps"
                    | "Generators"
            )
        })
        .collect()
}

/// A run's tags as `key=value, key=value` (empty when it has none).
pub fn tags_text(r: &RunRecord) -> String {
    let pairs: Vec<String> = r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join(", ")
}
