//! The windows every rate is divided by (docs/measurement.md, "Windows" and "Rates"), and the
//! open model's asked-against-achieved figures, from the plan and what the engine measured.
//!
//! All times are seconds since measuring began (the end of warm-up). The run's window ends at
//! the scheduled end of its load, or earlier when it was stopped; a scenario's window is its own
//! part of that (from its start, or the end of warm-up, to its scheduled end — or, for a
//! scenario limited by iterations, its last completion); a ladder phase's is its own span.

use std::time::Duration;

use crate::engine::RunOutcome;
use crate::plan::{Flow, Plan, Scenario};
use crate::record::model::Arrival;
use crate::record::recorder::Counters;
use crate::schedule::{ArrivalProcess, count_between};

/// A span of the measured part, seconds since measuring began.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Start, s.
    pub start: f64,
    /// End, s (never before `start`).
    pub end: f64,
}

impl Span {
    /// Its length, s.
    pub fn len(&self) -> f64 {
        self.end - self.start
    }

    /// Whether it has no length.
    pub fn is_empty(&self) -> bool {
        self.len() <= 0.0
    }

    fn clipped(start: f64, end: f64, window: f64) -> Self {
        let start = start.clamp(0.0, window);
        Self {
            start,
            end: end.clamp(start, window),
        }
    }
}

/// Count per second of a span; 0 for an empty span.
pub fn per_sec(count: u64, span_s: f64) -> f64 {
    if span_s > 0.0 {
        count as f64 / span_s
    } else {
        0.0
    }
}

/// Where a scenario's own time starts, relative to measuring, s (negative: before warm-up ended).
fn scenario_origin(plan: &Plan, sc: &Scenario) -> f64 {
    sc.start_after.as_secs_f64() - plan.warmup.as_secs_f64()
}

/// The window of scenario `sc`, the time it was active: from its start (or the end of warm-up)
/// to its scheduled end; for a scenario that can end when its iterations are done, to its last
/// completion (`last_done_us` of its group, µs since measuring began) if that came first
/// (1,000 iterations done in 11 ms of a 3 s `max_duration` are over 11 ms); clipped to the
/// run's window.
pub fn scenario_span(plan: &Plan, sc: &Scenario, outcome: &RunOutcome, last_done_us: u64) -> Span {
    let window = outcome.window.as_secs_f64();
    let origin = scenario_origin(plan, sc);
    let last_done = last_done_us as f64 / 1e6;
    let end = match (sc.duration(), sc.profile.ends_by_count()) {
        (Some(d), false) => origin + d.as_secs_f64(),
        (Some(d), true) => (origin + d.as_secs_f64()).min(last_done),
        (None, _) => last_done,
    };
    Span::clipped(origin, end, window)
}

/// The span of a ladder phase given relative to its scenario's start, clipped to the window.
pub fn phase_span(
    plan: &Plan,
    sc: &Scenario,
    outcome: &RunOutcome,
    (start, end): (Duration, Duration),
) -> Span {
    let origin = scenario_origin(plan, sc);
    Span::clipped(
        origin + start.as_secs_f64(),
        origin + end.as_secs_f64(),
        outcome.window.as_secs_f64(),
    )
}

/// Requests one iteration of `sc` sends when that is fixed: a weighted flow sends one step, a
/// sequential flow each of its steps.
pub fn requests_per_iteration(sc: &Scenario) -> Option<u32> {
    match &sc.flow {
        Flow::Weighted(_) => Some(1),
        Flow::Sequential => u32::try_from(sc.steps.len()).ok(),
    }
}

/// Open-model scenario `sc`: iterations due in its window by the schedule (Poisson arrivals:
/// the realised count, replayed), against those started
/// and dropped (its counters). `None` for closed-model scenarios.
pub fn arrival(
    plan: &Plan,
    (scenario, sc): (usize, &Scenario),
    span: Span,
    counters: &Counters,
    dropped: u64,
) -> Option<Arrival> {
    if !sc.is_open() {
        return None;
    }
    let (ramp, limit) = (sc.profile.ramp(), sc.profile.arrival_limit());
    // The span in the scenario's own time, where the schedule is defined.
    let origin = scenario_origin(plan, sc);
    let at = |t: f64| Duration::from_secs_f64((t - origin).max(0.0));
    let mut due = match sc.profile.arrival_process() {
        Some(ArrivalProcess::Poisson { seed }) => {
            let segment = plan.share.as_ref().map_or(0, |s| s.segment.index());
            let workers = sc.profile.workers(plan.threads);
            let (from, to) = (at(span.start), at(span.end));
            count_between(ramp, seed, (scenario, segment), workers, from, to)
        }
        _ => ramp
            .count_before(at(span.end))
            .saturating_sub(ramp.count_before(at(span.start))),
    };
    if let Some(n) = limit {
        due = due.min(n);
    }
    // A limited scenario's span ends at its last completion, after its last due time.
    if limit.is_some() {
        due = due.max(counters.iterations + dropped);
    }
    let started = counters.iterations;
    Some(Arrival {
        due,
        asked_per_sec: per_sec(due, span.len()),
        started,
        completed: counters.completed,
        achieved_per_sec: per_sec(counters.completed, span.len()),
        dropped,
        unsent: due.saturating_sub(started + dropped),
        requests_per_iteration: requests_per_iteration(sc),
    })
}

/// The whole run's asked-against-achieved figures: the sum over its open-model scenarios, over
/// the run's window. `None` without open-model scenarios.
pub fn run_arrival(
    scenarios: &[Arrival],
    window_s: f64,
    per_iteration: Option<u32>,
) -> Option<Arrival> {
    let first = scenarios.first()?;
    let mut sum = Arrival {
        requests_per_iteration: per_iteration,
        ..*first
    };
    for a in &scenarios[1..] {
        sum.due += a.due;
        sum.started += a.started;
        sum.completed += a.completed;
        sum.dropped += a.dropped;
        sum.unsent += a.unsent;
    }
    sum.asked_per_sec = per_sec(sum.due, window_s);
    sum.achieved_per_sec = per_sec(sum.completed, window_s);
    Some(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_clipped_to_the_window() {
        let s = Span::clipped(-1.0, 3.0, 2.0);
        assert_eq!(
            s,
            Span {
                start: 0.0,
                end: 2.0
            }
        );
        let s = Span::clipped(3.0, 5.0, 2.0);
        assert!(s.is_empty(), "{s:?}");
        assert_eq!(per_sec(10, 0.0), 0.0);
        assert_eq!(per_sec(10, 2.0), 5.0);
    }
}
