//! Schedules: pure functions of time that say when work is due. No I/O, no sleeping.
//!
//! The open model's arrivals fall at instants integrated from the rate ([`Ramp::due`]). Each
//! worker takes an [`Interleave`]d share of them (and of the VUs) and sends them on a [`Grid`] of
//! short ticks: an arrival is due at the first point at or after it, so that one wake-up sends
//! every arrival of a tick. The engine sleeps until each due time and measures latency from it,
//! so a slow response delays nothing else and cannot hide later requests' waiting time (no
//! coordinated omission).

mod grid;
mod poisson;
mod ramp;
pub mod segment;

use std::time::Duration;

pub use grid::Grid;
pub use poisson::{ArrivalProcess, PoissonStream, count_between, stream_id};
pub use ramp::{Ramp, Stage};
pub use segment::Segment;

/// One worker's share of a sequence of events (arrivals, or VU numbers), by interleaving: worker
/// `worker` of `workers` owns global indices `worker, worker + workers, worker + 2·workers, …`,
/// so the union of all workers' shares is exactly the global sequence, and each share keeps the
/// global schedule's spacing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interleave {
    /// This worker's number, 0-based, below `workers`.
    pub worker: usize,
    /// How many workers share the sequence (at least 1).
    pub workers: usize,
}

impl Interleave {
    /// The global index of this share's `k`-th (0-based) item.
    #[inline]
    pub fn index(&self, k: u64) -> u64 {
        self.worker as u64 + k * self.workers as u64
    }

    /// When this share's `k`-th event is due on `ramp` (read as a rate per second), as an offset
    /// from the schedule's start; `None` once the ramp has ended.
    #[inline]
    pub fn due(&self, ramp: &Ramp, k: u64) -> Option<Duration> {
        ramp.due(self.index(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_workers_cover_every_index_once() {
        let workers = 3;
        let mut seen: Vec<u64> = (0..workers)
            .flat_map(|worker| (0..4).map(move |k| Interleave { worker, workers }.index(k)))
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..12).collect::<Vec<_>>());
    }

    #[test]
    fn shares_of_a_rate_merge_into_the_global_schedule() {
        // 0 → 100/s over 2 s: 100 events, denser towards the end.
        let ramp = Ramp::new(
            0.0,
            vec![Stage {
                duration: Duration::from_secs(2),
                target: 100.0,
            }],
        );
        let workers = 4;
        let mut merged = Vec::new();
        for worker in 0..workers {
            let share = Interleave { worker, workers };
            merged.extend((0..).map_while(|k| share.due(&ramp, k)));
        }
        merged.sort_unstable();
        let global: Vec<Duration> = (0..).map_while(|n| ramp.due(n)).collect();
        assert_eq!(global.len(), 100);
        assert_eq!(merged, global);
    }
}
