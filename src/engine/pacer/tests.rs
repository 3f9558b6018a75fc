//! The pacer under tokio's paused time: its due times are the schedule's, a late pacer sends
//! every iteration with its scheduled due time, a pacer past the late limit stops.

use super::*;
use crate::engine::clock::PausedClock;

/// 1000 arrivals per second for 100 ms: 100 events, one per millisecond.
fn ramp() -> Ramp {
    Ramp::constant(1000.0, Duration::from_millis(100))
}

/// An open-model ticket as handed out: its due time is always there.
#[derive(Debug, Clone, Copy)]
struct Handed {
    due: Instant,
    arrival: Instant,
    measured: bool,
}

/// Runs `arrivals` on the paused clock; returns each ticket with the instant it was handed out.
async fn handed(arrivals: &mut Arrivals<'_>, stopped: impl Fn() -> bool) -> Vec<(Handed, Instant)> {
    let mut out = Vec::new();
    pace(arrivals, &PausedClock, stopped, |t| {
        let due = t.due.expect("an open-model ticket has a due time");
        let (arrival, measured) = (t.arrival, t.measured);
        out.push((
            Handed {
                due,
                arrival,
                measured,
            },
            PausedClock.now(),
        ))
    })
    .await;
    out
}

/// The only worker.
const ALONE: Interleave = Interleave {
    worker: 0,
    workers: 1,
};

/// A grid of `tick` for the only worker.
fn grid(tick: Duration) -> Grid {
    Grid::for_share(tick, ALONE)
}

#[tokio::test(start_paused = true)]
async fn due_times_are_the_schedules_share() {
    let ramp = ramp();
    let start = PausedClock.now();
    let share = Interleave {
        worker: 1,
        workers: 3,
    };
    let end = start + ramp.total();
    let mut arrivals = Arrivals::new(&ramp, share, Grid::EXACT, start, start, Some(end), None);
    let got = handed(&mut arrivals, || false).await;
    let expected: Vec<Instant> = (0..)
        .map_while(|k| share.due(&ramp, k))
        .map(|offset| start + offset)
        .collect();
    assert_eq!(expected.len(), 33, "indices 1, 4, …, 97");
    let dues: Vec<Instant> = got.iter().map(|(t, _)| t.due).collect();
    assert_eq!(dues, expected);
    for (ticket, at) in &got {
        assert!(ticket.measured);
        // On time: tokio's timer wakes on the next whole millisecond at the latest.
        assert!(*at >= ticket.due, "handed out early");
        assert!(
            *at - ticket.due < Duration::from_millis(1),
            "{:?}",
            *at - ticket.due
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_late_pacer_sends_every_iteration_with_its_scheduled_due_time() {
    let ramp = ramp();
    let now = PausedClock.now();
    // The schedule began 30 ms ago: 30 iterations are overdue when the pacer starts.
    let start = now - Duration::from_millis(30);
    let share = Interleave {
        worker: 0,
        workers: 1,
    };
    let mut arrivals = Arrivals::new(
        &ramp,
        share,
        Grid::EXACT,
        start,
        start,
        Some(start + ramp.total()),
        None,
    );
    let got = handed(&mut arrivals, || false).await;
    assert_eq!(got.len(), 100, "none skipped");
    for (n, (ticket, at)) in got.iter().enumerate() {
        assert_eq!(ticket.due, start + ramp.due(n as u64).unwrap(), "n = {n}");
        let lag = *at - ticket.due;
        if n < 30 {
            // Sent at once, late: the lag the VU records (sent − due) is the pacer's delay.
            assert_eq!(*at, now, "n = {n}");
            assert_eq!(lag, Duration::from_millis(30 - n as u64), "n = {n}");
        } else {
            assert!(lag < Duration::from_millis(1), "n = {n}: {lag:?}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn nothing_is_sent_past_the_late_limit() {
    let ramp = ramp();
    let now = PausedClock.now();
    let share = Interleave {
        worker: 0,
        workers: 1,
    };
    // Ended exactly the late limit ago: too late for any of it.
    let start = now - ramp.total() - LATE_LIMIT;
    let end = start + ramp.total();
    let mut arrivals = Arrivals::new(&ramp, share, Grid::EXACT, start, start, Some(end), None);
    assert!(handed(&mut arrivals, || false).await.is_empty());
    // Ended just under the limit ago: everything still goes out.
    let start = now + Duration::from_millis(1) - ramp.total() - LATE_LIMIT;
    let end = start + ramp.total();
    let mut arrivals = Arrivals::new(&ramp, share, Grid::EXACT, start, start, Some(end), None);
    assert_eq!(handed(&mut arrivals, || false).await.len(), 100);
}

#[tokio::test(start_paused = true)]
async fn warm_up_is_unmeasured_and_a_count_limit_follows_it() {
    let ramp = ramp();
    let start = PausedClock.now();
    let share = Interleave {
        worker: 0,
        workers: 1,
    };
    let measure_start = start + Duration::from_millis(20);
    // Quick mode -n 50 after a 20 ms warm-up: 20 warm-up iterations, then exactly 50.
    let mut arrivals = Arrivals::new(
        &ramp,
        share,
        Grid::EXACT,
        start,
        measure_start,
        None,
        Some(50),
    );
    let got = handed(&mut arrivals, || false).await;
    assert_eq!(got.len(), 70);
    let measured = got.iter().filter(|(t, _)| t.measured).count();
    assert_eq!(measured, 50);
    assert!(got[..20].iter().all(|(t, _)| !t.measured));
}

#[tokio::test(start_paused = true)]
async fn a_stopped_run_hands_out_nothing_more() {
    let ramp = ramp();
    let start = PausedClock.now();
    let share = Interleave {
        worker: 0,
        workers: 1,
    };
    let mut arrivals = Arrivals::new(&ramp, share, Grid::EXACT, start, start, None, None);
    let stop_at = start + Duration::from_micros(9_500);
    let got = handed(&mut arrivals, || PausedClock.now() >= stop_at).await;
    // Checked before each wait: the iteration it was waiting for (due at 10 ms) still goes.
    assert_eq!(got.len(), 11, "due at 0..=10 ms");
}

/// The distinct instants at which `got` was handed out: the pacer's wake-ups.
fn wakes(got: &[(Handed, Instant)]) -> Vec<Instant> {
    let mut at: Vec<Instant> = got.iter().map(|(_, at)| *at).collect();
    at.dedup();
    at
}

/// Each ticket is due at the first point of `grid` (from `start`) at or after its arrival, and
/// went out at its due time or, when the pacer was behind, at its first wake-up after it: never
/// early, and none left behind for a later one.
fn assert_on_the_grid(got: &[(Handed, Instant)], grid: Grid, start: Instant) {
    let wakes = wakes(got);
    for (n, (ticket, at)) in got.iter().enumerate() {
        assert_eq!(
            ticket.due,
            start + grid.due(ticket.arrival - start),
            "n = {n}"
        );
        assert!(*at >= ticket.due, "n = {n}: handed out early");
        let first = wakes.iter().find(|w| **w >= ticket.due);
        assert_eq!(first, Some(at), "n = {n}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_grid_point_sends_every_arrival_of_its_tick_at_one_wake_up() {
    // 1000 arrivals per second, one per ms, and a 5 ms grid: five per wake-up.
    let ramp = ramp();
    let start = PausedClock.now();
    let tick = Duration::from_millis(5);
    let end = Some(start + ramp.total());
    let mut arrivals = Arrivals::new(&ramp, ALONE, grid(tick), start, start, end, None);
    let got = handed(&mut arrivals, || false).await;
    assert_eq!(got.len(), 100, "none skipped");
    for (n, (ticket, at)) in got.iter().enumerate() {
        // Each keeps its arrival (its phase) and is due at the grid point at or after it, and
        // sent then: latency is measured from the point, so the grid adds nothing to it.
        assert_eq!(
            ticket.arrival,
            start + ramp.due(n as u64).unwrap(),
            "n = {n}"
        );
        assert!(ticket.due - ticket.arrival < tick, "n = {n}");
        assert_eq!(*at, ticket.due, "n = {n}: sent at its due time");
    }
    assert_on_the_grid(&got, grid(tick), start);
    // Points 0, 5, …, 100 ms: one wake-up each, a tick apart.
    let woke = wakes(&got);
    assert_eq!(woke.len(), 21);
    assert!(woke.windows(2).all(|pair| pair[1] - pair[0] == tick));
    // The five arriving at 1..=5 ms all went out at the 5 ms point.
    let at_five = start + Duration::from_millis(5);
    assert!(got[1..=5].iter().all(|(_, at)| *at == at_five));
    // No grid: one wake-up per arrival, each due at its arrival.
    let start = PausedClock.now();
    let mut arrivals = Arrivals::new(&ramp, ALONE, Grid::EXACT, start, start, None, None);
    let got = handed(&mut arrivals, || false).await;
    assert_eq!(wakes(&got).len(), 100);
    assert!(got.iter().all(|(t, _)| t.due == t.arrival));
}

#[tokio::test(start_paused = true)]
async fn a_ramp_on_staggered_grids_keeps_its_arrivals_exactly() {
    // 0 → 5000 req/s over 200 ms, then 100 ms at 5000: 500 + 500 arrivals over two workers.
    let ramp = Ramp::new(
        0.0,
        vec![
            crate::schedule::Stage {
                duration: Duration::from_millis(200),
                target: 5000.0,
            },
            crate::schedule::Stage {
                duration: Duration::from_millis(100),
                target: 5000.0,
            },
        ],
    );
    let tick = Duration::from_millis(2);
    let mut all = Vec::new();
    for worker in 0..2 {
        // One worker after the other, each from now.
        let start = PausedClock.now();
        let share = Interleave { worker, workers: 2 };
        let grid = Grid::for_share(tick, share);
        assert_eq!(grid.offset, Duration::from_millis(worker as u64));
        let expected: Vec<Instant> = (0..)
            .map_while(|k| share.due(&ramp, k))
            .map(|offset| start + offset)
            .collect();
        let end = Some(start + ramp.total());
        let mut arrivals = Arrivals::new(&ramp, share, grid, start, start, end, None);
        let got = handed(&mut arrivals, || false).await;
        let arrived: Vec<Instant> = got.iter().map(|(t, _)| t.arrival).collect();
        assert_eq!(
            arrived, expected,
            "worker {worker}: the share's schedule, each once"
        );
        assert_on_the_grid(&got, grid, start);
        for (n, (ticket, at)) in got.iter().enumerate() {
            assert!(
                ticket.due - ticket.arrival < tick,
                "worker {worker}, n = {n}"
            );
            assert_eq!(*at, ticket.due, "worker {worker}, n = {n}");
        }
        all.extend(arrived.iter().map(|d| *d - start));
    }
    // The two shares together: the whole schedule, each arrival once (500 + 500).
    all.sort();
    let whole: Vec<Duration> = (0..).map_while(|n| ramp.due(n)).collect();
    assert_eq!(all, whole);
    assert!((999..=1001).contains(&whole.len()), "{}", whole.len());
}

#[tokio::test(start_paused = true)]
async fn on_a_grid_counts_late_limit_and_stop_are_unchanged() {
    let ramp = ramp();
    let tick = Duration::from_millis(5);
    let now = PausedClock.now();
    // Warm-up, then quick mode's -n 50: exactly 50 measured, by arrival (the arrivals at
    // 16..=19 ms are due at the 20 ms point, where measuring starts, but are warm-up).
    let measure_start = now + Duration::from_millis(20);
    let mut arrivals = Arrivals::new(&ramp, ALONE, grid(tick), now, measure_start, None, Some(50));
    let got = handed(&mut arrivals, || false).await;
    assert_eq!(got.len(), 70);
    assert_eq!(got.iter().filter(|(t, _)| t.measured).count(), 50);
    assert!(got[..20].iter().all(|(t, _)| !t.measured));
    // Ended exactly the late limit ago: nothing.
    let start = PausedClock.now() - ramp.total() - LATE_LIMIT;
    let end = Some(start + ramp.total());
    let mut arrivals = Arrivals::new(&ramp, ALONE, grid(tick), start, start, end, None);
    assert!(handed(&mut arrivals, || false).await.is_empty());
    // 30 ms behind: the 31 overdue go out at once with their own due times, then on the grid.
    let now = PausedClock.now();
    let start = now - Duration::from_millis(30);
    let end = Some(start + ramp.total());
    let mut arrivals = Arrivals::new(&ramp, ALONE, grid(tick), start, start, end, None);
    let got = handed(&mut arrivals, || false).await;
    assert_eq!(got.len(), 100);
    assert!(got[..=30].iter().all(|(_, at)| *at == now));
    assert_on_the_grid(&got, grid(tick), start);
    // A stop is seen before each hand-out but the one the pacer woke for: woken at the 10 ms
    // point (after 0 and 5 ms), it sends the iteration arriving at 6 ms and no more.
    let start = PausedClock.now();
    let stop_at = start + Duration::from_micros(9_500);
    let mut arrivals = Arrivals::new(&ramp, ALONE, grid(tick), start, start, None, None);
    let got = handed(&mut arrivals, || PausedClock.now() >= stop_at).await;
    assert_eq!(got.len(), 7, "arrivals at 0..=6 ms");
}

#[tokio::test(start_paused = true)]
async fn poisson_arrivals_are_the_replayed_schedule_with_exponential_gaps() {
    let ramp = Ramp::constant(1000.0, Duration::from_secs(4));
    let start = PausedClock.now();
    let end = start + ramp.total();
    let process = ArrivalProcess::Poisson { seed: 42 };
    let mut got = Vec::new();
    for worker in 0..2 {
        let share = Interleave { worker, workers: 2 };
        let mut arrivals = Arrivals::new(&ramp, share, Grid::EXACT, start, start, Some(end), None)
            .with_process(process, stream_id(0, 0, worker));
        got.extend(handed(&mut arrivals, || false).await);
    }
    let n = got.len() as u64;
    // The record's `due` replays exactly these.
    let replayed =
        crate::schedule::count_between(&ramp, 42, (0, 0), 2, Duration::ZERO, ramp.total());
    assert_eq!(n, replayed);
    // 4000 expected; a Poisson count's σ is 63.
    assert!((3700..=4300).contains(&n), "{n}");
    let mut at: Vec<Instant> = got.iter().map(|(t, _)| t.arrival).collect();
    at.sort_unstable();
    let gaps: Vec<f64> = at.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    // Exponential gaps: the standard deviation is the mean (evenly spaced: 0).
    assert!((sd / mean - 1.0).abs() < 0.1, "mean {mean}, sd {sd}");
}

#[tokio::test(start_paused = true)]
async fn a_count_limit_counts_the_poisson_arrivals_after_the_warm_up() {
    let ramp = Ramp::constant(1000.0, Duration::from_secs(10));
    let start = PausedClock.now();
    let measure = start + Duration::from_millis(300);
    let mut measured = 0;
    for worker in 0..3 {
        let share = Interleave { worker, workers: 3 };
        let mut arrivals =
            Arrivals::new(&ramp, share, Grid::EXACT, start, measure, None, Some(500))
                .with_process(ArrivalProcess::Poisson { seed: 9 }, stream_id(0, 0, worker));
        let got = handed(&mut arrivals, || false).await;
        measured += got.iter().filter(|(t, _)| t.measured).count();
        assert!(
            got.iter().any(|(t, _)| !t.measured),
            "the warm-up has arrivals too"
        );
    }
    assert_eq!(measured, 500);
}
