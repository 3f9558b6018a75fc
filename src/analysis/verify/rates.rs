//! Rates and windows: every rate is its count over its own window, every window lies inside
//! the run's, and the per-second series covers the window and adds up to the run.

use super::{Findings, Rule};
use crate::record::model::{Arrival, RunRecord};

/// Seconds two windows may differ by and still be one: what a microsecond clock and a decimal
/// JSON form lose.
const WINDOW_SLACK_S: f64 = 1e-6;

/// `count` over `window_s` (0 for an empty window), as every rate of a record is defined.
fn per_sec(count: u64, window_s: f64) -> f64 {
    if window_s > 0.0 {
        count as f64 / window_s
    } else {
        0.0
    }
}

/// Every rate and window rule of `r`.
pub(super) fn check(r: &RunRecord, f: &mut Findings) {
    let s = &r.summary;
    let window = s.duration_s;
    let in_window = s.requests.saturating_sub(s.drain.requests);
    f.close(
        Rule::RateOverWindow,
        "summary.rps",
        s.rps,
        per_sec(in_window, window),
        || {
            format!(
                "(summary.requests − summary.drain.requests) / summary.duration_s = ({} − {}) / \
                 {window} s",
                s.requests, s.drain.requests
            )
        },
    );
    for (path, rate, total) in [
        (
            "summary.sent_bytes_per_sec",
            s.sent_bytes_per_sec,
            s.bytes_sent,
        ),
        (
            "summary.received_bytes_per_sec",
            s.received_bytes_per_sec,
            s.bytes_received,
        ),
    ] {
        // The drain's bytes are not recorded apart: the rate can only be bounded.
        f.check(
            rate * window <= total as f64 * (1.0 + 1e-6) + 1e-6,
            Rule::RateOverWindow,
            path,
            rate,
            || format!("at most the bytes over the window, {total} / {window} s"),
        );
    }
    f.check(
        s.drain.requests <= s.requests,
        Rule::RateOverWindow,
        "summary.drain.requests",
        s.drain.requests,
        || format!("at most summary.requests, {}", s.requests),
    );
    if let Some(a) = &s.arrival {
        arrival(a, window, "summary.arrival", f);
        let one_request = a.requests_per_iteration == Some(1);
        if let Some(asked) = s.target_rps {
            f.check(
                one_request,
                Rule::RateOverWindow,
                "summary.target_rps",
                asked,
                || "absent: an iteration is not one request".into(),
            );
            f.close(
                Rule::RateOverWindow,
                "summary.target_rps",
                asked,
                a.asked_per_sec,
                || "summary.arrival.asked_per_sec".into(),
            );
        }
    }
    groups(r, f);
    series(r, f);
}

/// A group's window lies inside the run's and its rate is over it.
fn groups(r: &RunRecord, f: &mut Findings) {
    let run = r.summary.duration_s;
    for (i, g) in r.groups.iter().enumerate() {
        let at = |field: &str| format!("groups[{i}].{field}");
        f.check(
            g.window_s >= 0.0 && g.window_s <= run + WINDOW_SLACK_S,
            Rule::WindowInsideRun,
            at("window_s"),
            g.window_s,
            || format!("within the run's window, 0 … summary.duration_s = {run} s"),
        );
        if let (Some(start), Some(end)) = (g.start_s, g.end_s) {
            f.check(
                start >= -WINDOW_SLACK_S && start <= end && end <= run + WINDOW_SLACK_S,
                Rule::WindowInsideRun,
                at("end_s"),
                format!("{start} … {end}"),
                || format!("a span inside 0 … {run} s"),
            );
            f.close(
                Rule::WindowInsideRun,
                at("window_s"),
                g.window_s,
                end - start,
                || format!("{0}.end_s − {0}.start_s", format_args!("groups[{i}]")),
            );
        }
        f.check(
            g.drained <= g.requests,
            Rule::RateOverWindow,
            at("drained"),
            g.drained,
            || format!("at most its requests, {}", g.requests),
        );
        let in_window = g.requests.saturating_sub(g.drained);
        f.close(
            Rule::RateOverWindow,
            at("rps"),
            g.rps,
            per_sec(in_window, g.window_s),
            || {
                format!(
                    "(requests − drained) / window_s = ({} − {}) / {} s",
                    g.requests, g.drained, g.window_s
                )
            },
        );
        if let Some(a) = &g.arrival {
            arrival(a, g.window_s, &at("arrival"), f);
        }
    }
}

/// Asked against achieved adds up, and its rates are over `window_s`.
fn arrival(a: &Arrival, window_s: f64, path: &str, f: &mut Findings) {
    f.close(
        Rule::RateOverWindow,
        format!("{path}.asked_per_sec"),
        a.asked_per_sec,
        per_sec(a.due, window_s),
        || format!("due / window = {} / {window_s} s", a.due),
    );
    f.close(
        Rule::RateOverWindow,
        format!("{path}.achieved_per_sec"),
        a.achieved_per_sec,
        per_sec(a.completed, window_s),
        || format!("completed / window = {} / {window_s} s", a.completed),
    );
    f.equal(
        Rule::ArrivalAddsUp,
        format!("{path}.unsent"),
        a.unsent,
        a.due.saturating_sub(a.started + a.dropped),
        || {
            format!(
                "due − started − dropped (at least 0) = {} − {} − {}",
                a.due, a.started, a.dropped
            )
        },
    );
    f.check(
        a.completed <= a.started,
        Rule::ArrivalAddsUp,
        format!("{path}.completed"),
        a.completed,
        || format!("at most the iterations started, {}", a.started),
    );
}

/// The series covers the window, second by second, and adds up to the run's counts.
fn series(r: &RunRecord, f: &mut Findings) {
    let s = &r.summary;
    let sum = |pick: fn(&crate::record::series::SecondStats) -> u64| -> u64 {
        r.series.iter().map(pick).sum()
    };
    for (field, whole, parts) in [
        ("requests", s.requests, sum(|x| x.requests)),
        ("errors", s.errors, sum(|x| x.errors)),
        ("not_sent", s.not_sent, sum(|x| x.not_sent)),
    ] {
        f.equal(
            Rule::SeriesAddsUp,
            format!("summary.{field}"),
            whole,
            parts,
            || format!("Σ series[].{field}"),
        );
    }
    for (k, pair) in r.series.windows(2).enumerate() {
        f.check(
            pair[0].t_s < pair[1].t_s,
            Rule::SeriesAddsUp,
            format!("series[{}].t_s", k + 1),
            pair[1].t_s,
            || format!("after series[{k}].t_s = {}", pair[0].t_s),
        );
    }
    if s.requests + s.not_sent == 0 {
        return;
    }
    // The seconds the window touches (a touch under a millisecond is left out) cover it.
    let seconds = (s.duration_s - 0.001).max(0.0).ceil() as u64;
    let inside = r.series.iter().filter(|x| x.t_s < seconds);
    let covered: f64 = inside.clone().map(|x| x.span_s).sum();
    f.check(
        (covered - s.duration_s).abs() <= 0.002 + 1e-6 * s.duration_s,
        Rule::SeriesAddsUp,
        "series[].span_s",
        format!("Σ {covered} s over {} seconds", inside.count()),
        || format!("summary.duration_s = {} s", s.duration_s),
    );
    // A merged record's seconds are its shares' shifted by whole seconds (docs/distributed.md):
    // they hold the shares' counts, but not to the exact instant of the merged window.
    if r.merged.is_some() {
        return;
    }
    // Completions inside the window: the whole seconds hold no more, the touched seconds no
    // less (a response after the window's end may share its last, partial second).
    let in_window = s.requests.saturating_sub(s.drain.requests);
    let whole: u64 = r
        .series
        .iter()
        .filter(|x| (x.t_s + 1) as f64 <= s.duration_s + WINDOW_SLACK_S)
        .map(|x| x.requests)
        .sum();
    // Every second the window reaches into, even by less than a millisecond.
    let reached = s.duration_s.ceil() as u64;
    let touched: u64 = r
        .series
        .iter()
        .filter(|x| x.t_s < reached)
        .map(|x| x.requests)
        .sum();
    f.check(
        whole <= in_window && in_window <= touched,
        Rule::SeriesAddsUp,
        "series[].requests",
        format!("{whole} in the window's whole seconds, {touched} in the seconds it touches"),
        || {
            format!(
                "the requests completed inside the window, summary.requests − \
                 summary.drain.requests = {in_window}, between the two"
            )
        },
    );
}
