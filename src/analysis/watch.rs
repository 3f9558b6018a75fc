//! Warnings about what was watched on the target's side (`--watch`): scrapes that failed, selectors
//! that matched nothing, series left out at the cap, processes that exited or could not be read.
//! None of them says anything about volley's own figures, which stand as measured.

use crate::record::model::{RunRecord, Warning, WarningCode};
use crate::record::watch::PromWatched;

fn warn(code: WarningCode, message: String) -> Warning {
    Warning::new(code, message)
}

/// The watch's warnings, in the order the watches were given.
pub fn warnings(r: &RunRecord, out: &mut Vec<Warning>) {
    let Some(w) = &r.watch else {
        return;
    };
    for p in &w.prom {
        prom(p, out);
    }
    for p in &w.processes {
        let what = if p.command.is_empty() {
            format!("watch pid={}", p.pid)
        } else {
            format!("watch pid={} (`{}`)", p.pid, p.command)
        };
        if let Some(at) = p.exited_at_s {
            out.push(warn(
                WarningCode::WatchPidExited,
                format!(
                    "{what}: the process exited {at:.1} s into the measured window; it has no \
                     figures after that (volley's own figures are complete)"
                ),
            ));
        }
        if let Some(e) = &p.error {
            out.push(warn(
                WarningCode::WatchProcessUnreadable,
                format!("{what}: could not be sampled: {e}"),
            ));
        }
    }
}

fn prom(p: &PromWatched, out: &mut Vec<Warning>) {
    let what = format!("watch prom={}", p.url);
    let nothing = p.failures.get("nothing_matched").copied().unwrap_or(0);
    let failed = p.failed() - nothing;
    if failed > 0 {
        let kinds: Vec<String> = p
            .failures
            .iter()
            .filter(|(k, _)| *k != "nothing_matched")
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        out.push(warn(
            WarningCode::WatchScrapeFailed,
            format!(
                "{what}: {failed} of {} scrapes failed ({}){}; its series have gaps there, and \
                 the run went on",
                p.scrapes,
                kinds.join(", "),
                p.last_failure
                    .as_ref()
                    .map(|m| format!(", last: {m}"))
                    .unwrap_or_default()
            ),
        ));
    }
    if nothing > 0 {
        out.push(warn(
            WarningCode::WatchNothingMatched,
            format!(
                "{what}: {} matched no series on {nothing} of {} pages read{}",
                selectors(&p.metrics),
                p.scrapes,
                if p.series.is_empty() {
                    " (nothing was kept: check the names on the page)"
                } else {
                    ""
                }
            ),
        ));
    }
    if p.over_cap > 0 {
        out.push(warn(
            WarningCode::WatchSeriesCapped,
            format!(
                "{what}: {} series kept (max_series); {} more selected were left out: select \
                 fewer with --watch-metric or raise --watch-max-series",
                p.max_series, p.over_cap
            ),
        ));
    }
}

fn selectors(metrics: &[String]) -> String {
    let quoted: Vec<String> = metrics.iter().map(|m| format!("`{m}`")).collect();
    format!("the selector(s) {}", quoted.join(", "))
}
