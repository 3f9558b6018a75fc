//! The terminal summary (also `summary.txt`), rendered from the record alone.

use std::fmt::Write;

use crate::record::model::{Bucket, Model, Percentiles, RunRecord};
use crate::report::figures::steal_percent;
use crate::units::{bytes, ms, thousands};

/// Width of the longest histogram bar, characters.
const BAR_WIDTH: usize = 40;

/// Renders the summary of a run.
pub fn render(r: &RunRecord) -> String {
    let mut o = String::new();
    // The verdict first: how the run went (aborted, interrupted, failed) is never below the fold.
    let v = super::view::verdict(r);
    let _ = writeln!(o, "{} — {}", v.mark(), v.headline);
    let _ = writeln!(o, "{}", super::load::subtitle(r));
    if !r.tags.is_empty() {
        let tags = super::view::tags_text(r);
        let _ = writeln!(o, "tags: {tags} (run_id {})", r.run_id);
    }
    let _ = writeln!(o);
    summary(&mut o, r);
    let _ = writeln!(o);
    latencies(&mut o, r);
    histogram(&mut o, &r.summary.latency_buckets);
    status_codes(&mut o, r);
    for table in super::view::protocol_tables(r) {
        o.push_str(&table.to_text());
    }
    errors(&mut o, r);
    for table in super::grouped::tables(r) {
        o.push_str(&table.to_text());
    }
    for table in super::view::plan_tables(r) {
        o.push_str(&table.to_text());
    }
    generator(&mut o, r);
    let watched = super::watch::text_lines(r);
    if !watched.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "Watched");
        for line in watched {
            let _ = writeln!(o, "  {line}");
        }
    }
    o.push_str(&super::selfcheck::text(r));
    if !r.warnings.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "Warnings");
        for w in &r.warnings {
            let _ = writeln!(o, "  ! {}", w.message);
        }
    }
    o
}

/// The "Summary" block: counts, throughput, accounting, bytes, connections.
fn summary(o: &mut String, r: &RunRecord) {
    let s = &r.summary;
    let _ = writeln!(o, "Summary");
    let _ = writeln!(
        o,
        "  Requests:      {}  ({} errors, {:.2}% success)",
        thousands(s.requests),
        thousands(s.charged_errors()),
        s.success_rate * 100.0
    );
    let _ = writeln!(o, "  Duration:      {:.2} s", s.duration_s);
    match s.target_rps {
        Some(target) => {
            let _ = writeln!(
                o,
                "  Throughput:    {:.1} req/s  (asked {target:.1} req/s)",
                s.rps
            );
        }
        None => {
            let _ = writeln!(o, "  Throughput:    {:.1} req/s", s.rps);
        }
    }
    if let Some(dropped) = s.dropped {
        let _ = writeln!(o, "  Dropped:       {}", thousands(dropped));
    }
    for (label, value) in super::view::accounting(r) {
        let _ = writeln!(o, "  {:<15}{value}", format!("{label}:"));
    }
    let _ = writeln!(
        o,
        "  Sent:          {}  ({}/s)",
        bytes(s.bytes_sent as f64),
        bytes(s.sent_bytes_per_sec)
    );
    let _ = writeln!(
        o,
        "  Received:      {}  ({}/s)",
        bytes(s.bytes_received as f64),
        bytes(s.received_bytes_per_sec)
    );
    let _ = writeln!(o, "  Connections:   {}", super::view::connections(r));
    let tls = super::view::tls_negotiated(r);
    if !tls.is_empty() {
        let _ = writeln!(o, "  TLS:           {tls}");
    }
    let quic = super::view::quic(r);
    if !quic.is_empty() {
        let _ = writeln!(o, "  QUIC:          {quic}");
    }
    if s.warmup_requests > 0 {
        let _ = writeln!(
            o,
            "  Warm-up:       {} requests (not counted)",
            thousands(s.warmup_requests)
        );
    }
}

/// The latency tables: latency, and (open model) service latency.
fn latencies(o: &mut String, r: &RunRecord) {
    let s = &r.summary;
    let label = if r.config.model == Model::Open {
        "Latency, ms (from when each request was due)"
    } else {
        "Latency, ms"
    };
    latency_table(o, label, &s.latency_ms);
    if let Some(ci) = &s.ci95 {
        if let Some(line) = super::uncertainty::text_line(ci) {
            let _ = writeln!(o, "95 % intervals (within this run): {line}");
        }
        if let Some(why) = &ci.unsteady {
            let _ = writeln!(o, "95 % intervals: none, the load was not steady: {why}");
        } else if let Some(why) = super::uncertainty::too_few(r)
            && super::uncertainty::text_line(ci).is_none()
        {
            let _ = writeln!(o, "95 % intervals: none, {why}");
        }
        if let Some(p) = &ci.precision {
            let line = super::uncertainty::precision_line(r, p);
            let _ = writeln!(o, "Precision (within this run): {line}");
        }
        let _ = writeln!(o);
    }
    if let Some(service) = &s.service_latency_ms {
        latency_table(
            o,
            "Service latency, ms (from the actual send; uncorrected)",
            service,
        );
    }
}

/// The latency histogram as bars of `■`.
fn histogram(o: &mut String, buckets: &[Bucket]) {
    if buckets.is_empty() {
        return;
    }
    let _ = writeln!(o, "Latency histogram");
    let total: u64 = buckets.iter().map(|b| b.count).sum();
    let most = buckets.iter().map(|b| b.count).max().unwrap_or(1).max(1);
    for (b, label) in buckets.iter().zip(super::figures::bucket_labels(buckets)) {
        let bar = (b.count as f64 / most as f64 * BAR_WIDTH as f64).round() as usize;
        let _ = writeln!(
            o,
            "  {label:>17} ms  {:<width$}  {:>12}  {:5.1}%",
            "■".repeat(bar),
            thousands(b.count),
            100.0 * b.count as f64 / total.max(1) as f64,
            width = BAR_WIDTH
        );
    }
    let _ = writeln!(o);
}

/// Responses by status code.
fn status_codes(o: &mut String, r: &RunRecord) {
    let s = &r.summary;
    if s.status.is_empty() {
        return;
    }
    let _ = writeln!(o, "Status codes");
    for (code, n) in &s.status {
        let _ = writeln!(
            o,
            "  {code}  {:>12}  {:5.1}%",
            thousands(*n),
            100.0 * *n as f64 / s.requests.max(1) as f64
        );
    }
    let _ = writeln!(o);
}

/// Failures by kind, most frequent first, with what each means.
fn errors(o: &mut String, r: &RunRecord) {
    let s = &r.summary;
    if s.errors_by_kind.is_empty() {
        return;
    }
    let _ = writeln!(o, "Errors");
    for (kind, n, hint) in super::view::error_kinds(r) {
        let _ = writeln!(o, "  {kind:<22} {:>12}  {hint}", thousands(n));
    }
    let _ = writeln!(o);
}

/// One line on the load generator: threads, CPU, memory, send lag.
fn generator(o: &mut String, r: &RunRecord) {
    let g = &r.generator;
    let busy: Vec<String> = g
        .threads
        .iter()
        .map(|t| format!("{:.0}%", t.utilization * 100.0))
        .collect();
    let _ = write!(
        o,
        "Generator: {} thread(s) busy {}, process CPU {:.2} s",
        g.threads.len(),
        busy.join("/"),
        g.cpu_s
    );
    if let Some(per) = g.cpu_us_per_request {
        let _ = write!(o, ", worker CPU {per:.2} µs/request");
    }
    let _ = write!(o, ", peak RSS {}", bytes(g.peak_rss_bytes as f64));
    if let Some(steal) = g.steal_share {
        let _ = write!(o, ", CPU steal {}", steal_percent(steal));
    }
    if let Some(lag) = &g.lag_ms {
        let _ = write!(
            o,
            ", send lag p50 {} / p99 {} / max {} ms",
            ms(lag.p50),
            ms(lag.p99),
            ms(lag.max)
        );
    }
    if let Some(grid) = g.send_grid_ms {
        let _ = write!(o, ", {}", super::view::send_grid(grid));
    }
    let _ = writeln!(o);
}

fn latency_table(o: &mut String, label: &str, p: &Percentiles) {
    let _ = writeln!(o, "{label}");
    let heads = [
        "min", "mean", "stdev", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99.9", "max",
    ];
    let values = [
        p.min, p.mean, p.stdev, p.p10, p.p25, p.p50, p.p75, p.p90, p.p95, p.p99, p.p99_9, p.max,
    ];
    let mut head = String::from(" ");
    let mut row = String::from(" ");
    for (h, v) in heads.iter().zip(values) {
        let _ = write!(head, " {h:>8}");
        let _ = write!(row, " {:>8}", ms(v));
    }
    let _ = writeln!(o, "{head}");
    let _ = writeln!(o, "{row}");
    let _ = writeln!(o);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;
    use crate::record::model::{Group, GroupKind, ThresholdResult};

    #[test]
    fn plan_breakdowns_appear_in_the_summary_when_present() {
        let mut r = record("plan", 3, 100, 2000, 0, 0.0);
        assert!(!render(&r).contains("Phases"));
        r.groups = vec![Group {
            kind: GroupKind::Phase,
            name: "phase 1: 10 VUs".into(),
            scenario: None,
            operation: None,
            start_s: Some(0.0),
            end_s: Some(3.0),
            target_vus: Some(10),
            target_rps: None,
            requests: 300,
            errors: 0,
            not_sent: 0,
            drained: 0,
            window_s: 3.0,
            iterations: None,
            arrival: None,
            rps: 100.0,
            latency_ms: r.summary.latency_ms,
            status: Default::default(),
            errors_by_kind: Default::default(),
            histogram_us: r.histograms.latency_us.clone(),
            think_s: 0.0,
            ramp_from: None,
            pacing_s: 0.0,
            streams: None,
            ci95: None,
            batches: None,
        }];
        r.thresholds = vec![ThresholdResult {
            unit: None,
            metric: "errors".into(),
            condition: "rate < 1%".into(),
            observed: Some(0.0),
            passed: true,
            aborted: false,
            aborted_at_s: None,
            observed_at_abort: None,
        }];
        let text = render(&r);
        assert!(text.contains("Phases\n  Phase"), "{text}");
        assert!(text.contains("phase 1: 10 VUs  10 VUs  0–3 s"), "{text}");
        // A phase of a time-scaled ladder keeps its fractions: 0.3–0.6 s, not 0–1 s.
        r.groups[0].start_s = Some(0.3);
        r.groups[0].end_s = Some(0.6);
        let scaled = render(&r);
        assert!(scaled.contains("10 VUs  0.3–0.6 s"), "{scaled}");
        assert!(text.contains("Thresholds"), "{text}");
        assert!(text.contains("rate < 1%"), "{text}");
    }
}
