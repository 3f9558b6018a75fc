//! Schedules: pure functions of time that say when work is due. No I/O, no sleeping.
//!
//! The open model's requests fall due at fixed intervals from the run's start; the engine sleeps
//! until `due(n)` and measures latency from that instant, so a slow response delays nothing else
//! and cannot hide later requests' waiting time (no coordinated omission).

mod ramp;
pub mod segment;

use std::time::Duration;

pub use ramp::{Ramp, Stage};
pub use segment::Segment;

/// A fixed arrival rate, split across workers by interleaving: worker `w` of `workers` owns global
/// request indices `w, w + workers, w + 2·workers, …`, so the union of all workers' schedules is
/// exactly the global schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenSchedule {
    /// Requests per second, over all workers. Always finite and > 0.
    pub rate_per_sec: f64,
}

impl OpenSchedule {
    /// When global request `n` (0-based) is due, as an offset from the schedule's start.
    pub fn due(&self, n: u64) -> Duration {
        Duration::from_secs_f64(n as f64 / self.rate_per_sec)
    }

    /// How many requests fall due strictly before `elapsed`: the smallest `n` with `due(n) >= elapsed`.
    pub fn due_before(&self, elapsed: Duration) -> u64 {
        // The small tolerance keeps float error in `due(n)` from rounding n up to n + 1.
        (elapsed.as_secs_f64() * self.rate_per_sec - 1e-6)
            .ceil()
            .max(0.0) as u64
    }

    /// The `k`-th (0-based) global index owned by worker `worker` of `workers`.
    pub fn worker_index(worker: usize, workers: usize, k: u64) -> u64 {
        worker as u64 + k * workers as u64
    }
}

/// Splits `total` items (connections, in-flight slots, requests) over `parts` workers as evenly as
/// possible: the first `total % parts` workers get one more.
pub fn split_evenly(total: u64, parts: usize, part: usize) -> u64 {
    let parts = parts as u64;
    total / parts + u64::from((part as u64) < total % parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_times_follow_the_rate() {
        let s = OpenSchedule {
            rate_per_sec: 2000.0,
        };
        let cases = [
            (0, 0),
            (1, 500_000),
            (2000, 1_000_000_000),
            (3001, 1_500_500_000),
        ];
        for (n, nanos) in cases {
            assert_eq!(s.due(n), Duration::from_nanos(nanos), "n = {n}");
        }
    }

    #[test]
    fn due_before_inverts_due() {
        let s = OpenSchedule { rate_per_sec: 3.0 };
        assert_eq!(s.due_before(Duration::ZERO), 0);
        assert_eq!(s.due_before(Duration::from_millis(1)), 1);
        assert_eq!(s.due_before(Duration::from_secs(1)), 3);
        assert_eq!(s.due_before(Duration::from_millis(1001)), 4);
        let s = OpenSchedule {
            rate_per_sec: 1000.0,
        };
        for n in [0u64, 1, 999, 10_000] {
            assert_eq!(s.due_before(s.due(n)), n);
        }
    }

    #[test]
    fn interleaved_workers_cover_every_index_once() {
        let workers = 3;
        let mut seen: Vec<u64> = (0..workers)
            .flat_map(|w| (0..4).map(move |k| OpenSchedule::worker_index(w, workers, k)))
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..12).collect::<Vec<_>>());
    }

    #[test]
    fn split_is_even_and_sums_to_total() {
        for (total, parts) in [(64, 2), (7, 3), (1, 4), (0, 2), (100_001, 7)] {
            let shares: Vec<u64> = (0..parts).map(|p| split_evenly(total, parts, p)).collect();
            assert_eq!(shares.iter().sum::<u64>(), total);
            let (min, max) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
            assert!(max - min <= 1, "{shares:?}");
        }
    }
}
