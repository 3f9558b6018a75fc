//! The pacer under tokio's paused time: its due times are the schedule's, a late pacer sends
//! every iteration with its scheduled due time, a pacer past the late limit stops.

use super::*;
use crate::engine::clock::PausedClock;

/// 1000 arrivals per second for 100 ms: 100 events, one per millisecond.
fn ramp() -> Ramp {
    Ramp::constant(1000.0, Duration::from_millis(100))
}

/// Runs `arrivals` on the paused clock; returns each ticket with the instant it was handed out.
async fn handed(arrivals: &mut Arrivals<'_>, stopped: impl Fn() -> bool) -> Vec<(Ticket, Instant)> {
    let mut out = Vec::new();
    pace(arrivals, &PausedClock, stopped, |t| {
        out.push((t, PausedClock.now()))
    })
    .await;
    out
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
    let mut arrivals = Arrivals::new(&ramp, share, start, start, Some(end), None);
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
    let mut arrivals = Arrivals::new(&ramp, share, start, start, Some(start + ramp.total()), None);
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
    let mut arrivals = Arrivals::new(&ramp, share, start, start, Some(end), None);
    assert!(handed(&mut arrivals, || false).await.is_empty());
    // Ended just under the limit ago: everything still goes out.
    let start = now + Duration::from_millis(1) - ramp.total() - LATE_LIMIT;
    let end = start + ramp.total();
    let mut arrivals = Arrivals::new(&ramp, share, start, start, Some(end), None);
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
    let mut arrivals = Arrivals::new(&ramp, share, start, measure_start, None, Some(50));
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
    let mut arrivals = Arrivals::new(&ramp, share, start, start, None, None);
    let stop_at = start + Duration::from_micros(9_500);
    let got = handed(&mut arrivals, || PausedClock.now() >= stop_at).await;
    // Checked before each wait: the iteration it was waiting for (due at 10 ms) still goes.
    assert_eq!(got.len(), 11, "due at 0..=10 ms");
}
