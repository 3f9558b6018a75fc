//! `report.md`: the run report as Markdown that pastes into a pull request or a wiki.

use super::table::md_text;
use super::view::run_view;
use crate::record::model::RunRecord;

/// Renders the Markdown report of a run.
pub fn render(r: &RunRecord) -> String {
    let v = run_view(r);
    let mut o = format!("# volley report: {}\n\n", md_text(&v.title));
    o.push_str(&format!("`{}`\n\n", v.subtitle.replace('`', "'")));
    o.push_str(&format!(
        "**{}** — {}\n\n",
        v.verdict.mark(),
        md_text(&v.verdict.headline)
    ));
    if !v.warnings.is_empty() {
        o.push_str("> **Warnings about the run itself**\n>\n");
        for w in &v.warnings {
            o.push_str(&format!("> - {}\n", md_text(w)));
        }
        o.push('\n');
    }
    for t in &v.setup {
        o.push_str(&t.to_markdown("##"));
    }
    for t in &v.results {
        o.push_str(&t.to_markdown("##"));
    }
    o.push_str(&format!(
        "<sub>Written by volley {} from the run record (`volley report run.json --format md`).</sub>\n",
        r.tool.version
    ));
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;
    use crate::record::model::{
        CheckResult, Group, GroupKind, ThresholdResult, Warning, WarningCode,
    };

    #[test]
    fn has_every_section_with_figures() {
        let r = record("checkout", 5, 1000, 2000, 10, 0.0);
        let md = render(&r);
        for expected in [
            "# volley report: checkout",
            "`GET http://127.0.0.1:8080/ — closed model, 8 connections, 5.0s`",
            "**OK** — Completed: 5,000 requests in 5.0s, 1,000.0 req/s, 1.00% errors",
            "## Environment",
            "| CPU | Test CPU (2 logical cores) |",
            "## Configuration",
            "## Results",
            "| Throughput | 1,000.0 req/s |",
            "| Errors | 50 (1.00%) |",
            "| Latency p99.9 | 2.40 ms |",
            "| Data received | 585.94 KiB (117.19 KiB/s) |",
            "## Latency (ms)",
            "## Status codes",
            "| 500 | 50 | 1.00% |",
            "## Errors",
            "| http_5xx | 50 | 1.00% | the server answered with a server-error status",
            "## Latency distribution",
            "| 2.00 | ",
            "## Load generator",
        ] {
            assert!(md.contains(expected), "missing {expected:?} in\n{md}");
        }
        assert!(!md.contains("## Phases"));
        assert!(!md.contains("## Thresholds"));
    }

    #[test]
    fn the_latency_note_names_the_model_it_was_measured_in() {
        let mut r = record("m", 5, 1000, 2000, 0, 0.0);
        let note = |r: &RunRecord| {
            let md = render(r);
            let at = md.find("## Latency (ms)").unwrap();
            md[at..].lines().nth(2).unwrap_or_default().to_string()
        };
        assert!(
            note(&r).starts_with("Closed model: latency from when"),
            "{}",
            note(&r)
        );
        r.config.model = crate::record::model::Model::Open;
        assert!(
            note(&r).starts_with("Open model: latency from when"),
            "{}",
            note(&r)
        );
        r.config.model = crate::record::model::Model::Mixed;
        assert!(
            note(&r).starts_with("Closed and open scenarios:"),
            "{}",
            note(&r)
        );
    }

    #[test]
    fn plan_sections_render_when_present() {
        let mut r = record("plan", 5, 100, 2000, 0, 0.0);
        let base = r.summary.latency_ms;
        let group = |kind, name: &str| Group {
            kind,
            name: name.into(),
            scenario: Some("shop".into()),
            operation: None,
            start_s: Some(0.0),
            end_s: Some(60.0),
            target_vus: Some(50),
            target_rps: None,
            requests: 600,
            errors: 6,
            not_sent: 0,
            drained: 0,
            window_s: 60.0,
            iterations: None,
            arrival: None,
            rps: 10.0,
            latency_ms: base,
            status: Default::default(),
            errors_by_kind: Default::default(),
            histogram_us: r.histograms.latency_us.clone(),
            think_s: 0.0,
            ramp_from: None,
            pacing_s: 0.0,
            streams: None,
            ci95: None,
            batches: None,
        };
        r.groups = vec![
            group(GroupKind::Scenario, "shop"),
            group(GroupKind::Step, "get_task"),
            group(GroupKind::Phase, "phase 2: 50 VUs"),
        ];
        r.checks = vec![CheckResult {
            scenario: "shop".into(),
            step: "get_task".into(),
            check: "status in [200, 201]".into(),
            passed: 99,
            failed: 1,
        }];
        r.thresholds = vec![ThresholdResult {
            unit: None,
            metric: "latency{step=get_task}".into(),
            condition: "p95 < 5ms".into(),
            observed: Some(7.25),
            passed: false,
            aborted: false,
            aborted_at_s: None,
            observed_at_abort: None,
        }];
        r.warnings = vec![Warning {
            code: WarningCode::GeneratorSaturated,
            message: "a load-generator thread was 97% busy".into(),
        }];
        let md = render(&r);
        for expected in [
            "**FAILED** — 1 of 1 thresholds failed",
            "> - a load-generator thread was 97% busy",
            "## Scenarios",
            "## Steps\n\n| Scenario | Step |",
            "| shop | get_task | 600 | 6 (1.00%) | 10.0 |",
            "## Phases",
            "| phase 2: 50 VUs | 50 VUs | 0–60 s | 600 |",
            "| latency{step=get_task} | p95 &lt; 5ms | 7.250 | FAIL |",
            "| shop | get_task | status in [200, 201] | 99 | 1 | 99.00% |",
        ] {
            assert!(md.contains(expected), "missing {expected:?} in\n{md}");
        }
    }

    #[test]
    fn interrupted_and_failed_runs_say_so() {
        let mut r = record("cut", 3, 100, 2000, 0, 0.0);
        r.interrupted = Some("SIGINT".into());
        assert!(render(&r).contains("**WARNING** — Interrupted (SIGINT) after 3.0s"));
        let mut r = record("down", 0, 0, 0, 0, 0.0);
        r.summary.not_sent = 10;
        r.summary.attempts = 10;
        r.summary.errors = 10;
        r.summary
            .errors_by_kind
            .insert(crate::record::error_kind::ErrorKind::ConnectRefused, 10);
        let md = render(&r);
        assert!(
            md.contains("**FAILED** — No connection to the target worked: connection_refused"),
            "{md}"
        );
        assert!(md.contains("No response was received"), "{md}");
        assert!(md.contains("| Latency p50 | - ms |"), "{md}");
        assert!(md.contains("nothing listens at the target address"), "{md}");
    }
}
