//! Where the measured window ends (docs/measurement.md, "Windows").

use std::time::Instant;

/// The end of the measured window.
///
/// - `last`: when the last worker finished (after its drain);
/// - `end`: the load's scheduled end, the latest of its scenarios' (none when a scenario runs
///   until its iterations are done);
/// - `held_until`: the latest scheduled end of the scenarios that run until a time, not a count;
/// - `stopped`: when a signal or a threshold stopped the run.
///
/// A run that ended by its counts ends its window at its last finish, at most its scheduled end.
/// A scenario that runs until a time holds the window open to its end even when its last request
/// was due, and finished, earlier (an open-model rate of 2/s over 2 s has its last arrival at
/// 1.5 s; its rate is 4 over 2 s, not over 1.5 s). A stop ends the window at once.
pub(super) fn window_end(
    last: Instant,
    end: Option<Instant>,
    held_until: Option<Instant>,
    stopped: Option<Instant>,
) -> Instant {
    let by_counts = end.map_or(last, |end| last.min(end));
    let held = held_until.map_or(by_counts, |held| by_counts.max(held));
    stopped.map_or(held, |stopped| held.min(stopped))
}

/// The last completion of the scenarios that end by a count (on the measured clock), from their
/// groups; `None` when one has no group to say it (quick mode: the workers' finish says it).
/// Beside a timed scenario, this, not the last worker's finish, is what may end the window
/// later: the timed scenario's own drain must not stretch it.
pub(super) fn counted_finish(
    plan: &crate::plan::Plan,
    totals: &crate::record::recorder::Recorder,
    measure_start: Instant,
) -> Option<Instant> {
    let mut last_us = 0;
    for sc in plan.scenarios.iter().filter(|s| s.profile.ends_by_count()) {
        last_us = last_us.max(totals.groups.get(sc.group?)?.last_done_us);
    }
    Some(measure_start + std::time::Duration::from_micros(last_us))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn at(ms: u64) -> Instant {
        // One origin for every call in a test: only differences matter.
        static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        *ORIGIN.get_or_init(Instant::now) + Duration::from_millis(ms)
    }

    #[test]
    fn a_timed_run_ends_at_its_scheduled_end_whenever_its_last_request_finished() {
        // Drained past the end: the drain is not in the window.
        assert_eq!(
            window_end(at(2_004), Some(at(2_000)), Some(at(2_000)), None),
            at(2_000)
        );
        // The last arrival (2/s) at 1.5 s, done at 1.502 s: the window is still 2 s.
        assert_eq!(
            window_end(at(1_502), Some(at(2_000)), Some(at(2_000)), None),
            at(2_000)
        );
    }

    #[test]
    fn a_run_that_ends_by_its_counts_ends_at_its_last_finish() {
        // `-n` alone: no scheduled end.
        assert_eq!(window_end(at(700), None, None, None), at(700));
        // `-n` with `-d`: the count ran out first, or the time did.
        assert_eq!(window_end(at(700), Some(at(2_000)), None, None), at(700));
        assert_eq!(
            window_end(at(2_300), Some(at(2_000)), None, None),
            at(2_000)
        );
        // A counted scenario beside a timed one that ends at 1 s: the counted one's finish.
        assert_eq!(
            window_end(at(1_700), None, Some(at(1_000)), None),
            at(1_700)
        );
    }

    #[test]
    fn a_stop_ends_the_window_at_once() {
        assert_eq!(
            window_end(at(1_502), Some(at(2_000)), Some(at(2_000)), Some(at(800))),
            at(800)
        );
        assert_eq!(window_end(at(700), None, None, Some(at(900))), at(700));
    }
}
