//! The summary's accounting lines, one source for the terminal summary and the reports:
//! attempts that were never sent, the drain, asked against achieved, and where connections
//! came from.

use crate::record::model::{Model, RunRecord, generator_limited};
use crate::units::{rate, seconds, thousands};

/// "3 opened", with where else connections came from: the warm-up's (which measured requests
/// may reuse) and lost generators' (in a merged record).
pub fn connections(r: &RunRecord) -> String {
    let s = &r.summary;
    let mut also = Vec::new();
    if s.warmup_connections > 0 {
        also.push(format!(
            "{} more during the warm-up, reused by measured requests",
            thousands(s.warmup_connections)
        ));
    }
    let count = r.merged.as_ref().map_or(0, |m| m.count);
    for l in r.merged.iter().flat_map(|m| &m.lost) {
        also.push(format!(
            "{} of them by lost share {}/{count}",
            thousands(l.connections_opened),
            l.index
        ));
    }
    let opened = format!("{} opened", thousands(s.connections_opened));
    if also.is_empty() {
        opened
    } else {
        format!("{opened} ({})", also.join("; "))
    }
}

/// The headline's lines about attempts that never left the machine, the drain and the arrival
/// schedule, as (label, value): one source for the terminal summary and the reports.
pub fn accounting(r: &RunRecord) -> Vec<(&'static str, String)> {
    let s = &r.summary;
    let mut out = Vec::new();
    let limited = generator_limited(&s.errors_by_kind);
    let unconnected = s.not_sent.saturating_sub(limited);
    if unconnected > 0 {
        out.push((
            "Not connected",
            format!(
                "{} of {} attempts found no connection to the target (refused, unreachable or \
                 timed out): errors in the error rate, never requests",
                thousands(unconnected),
                thousands(s.requests + s.not_sent)
            ),
        ));
    }
    if limited > 0 {
        out.push((
            "Not sent",
            format!(
                "{} of {} attempts never left the machine (no local port or file descriptor, \
                 or the request could not be built): the generator's limit, in no rate",
                thousands(limited),
                thousands(s.requests + s.not_sent)
            ),
        ));
    }
    if s.drain.requests > 0 || s.drain.duration_s >= 0.0005 {
        out.push((
            "Drain",
            format!(
                "{} requests completed in the {} after the window (counted; in no rate)",
                thousands(s.drain.requests),
                seconds(s.drain.duration_s)
            ),
        ));
    }
    match &s.arrival {
        // A plan that mixes the models: the schedule covers its open scenarios alone.
        Some(a) if r.config.model == Model::Mixed => out.push((
            "Open scenarios",
            format!(
                "{}/s of {}/s asked, iterations of the open-model scenarios only ({} of {} due \
                 completed in the window; {} dropped, {} not started); the closed scenarios \
                 have no asked rate",
                rate(a.achieved_per_sec),
                rate(a.asked_per_sec),
                thousands(a.completed),
                thousands(a.due),
                thousands(a.dropped),
                thousands(a.unsent)
            ),
        )),
        Some(a) if a.requests_per_iteration != Some(1) => out.push((
            "Iterations",
            format!(
                "{}/s of {}/s asked ({} of {} due completed in the window, {} started; {} \
                 dropped, {} not started)",
                rate(a.achieved_per_sec),
                rate(a.asked_per_sec),
                thousands(a.completed),
                thousands(a.due),
                thousands(a.started),
                thousands(a.dropped),
                thousands(a.unsent)
            ),
        )),
        Some(a) if a.unsent > 0 => out.push((
            "Not started",
            format!(
                "{} of {} due requests (the run stopped, or the generator fell behind)",
                thousands(a.unsent),
                thousands(a.due)
            ),
        )),
        Some(_) => {}
        None if s.iterations != s.requests + s.not_sent && s.iterations > 0 => out.push((
            "Iterations",
            format!(
                "{} started ({}/s){}",
                thousands(s.iterations),
                rate(s.iterations as f64 / s.duration_s.max(1e-9)),
                // A run of one URL: one request an iteration, so the rest were in flight.
                match (
                    &r.config.plan,
                    s.iterations.checked_sub(s.requests + s.not_sent)
                ) {
                    (None, Some(cut)) => format!(
                        "; {} in flight when the run stopped, abandoned unrecorded",
                        thousands(cut)
                    ),
                    _ => String::new(),
                }
            ),
        )),
        None => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterations_a_stop_left_in_flight_are_said_in_a_run_of_one_url() {
        let mut r = crate::record::fixture::record("quick", 5, 100, 2000, 0, 0.0);
        r.summary.iterations = r.summary.requests + 4;
        let line = |r: &RunRecord| {
            let lines = accounting(r);
            lines
                .into_iter()
                .find(|(k, _)| *k == "Iterations")
                .unwrap()
                .1
        };
        assert_eq!(
            line(&r),
            "504 started (100.8/s); 4 in flight when the run stopped, abandoned unrecorded"
        );
        // A plan's iterations hold several requests each: the count alone.
        r.config.plan = Some("plan.toml".into());
        r.summary.iterations = 100;
        assert_eq!(line(&r), "100 started (20.0/s)");
    }
}
