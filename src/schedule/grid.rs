//! The open model's send grid: when each arrival of a worker's share leaves.
//!
//! A worker does not wake for every arrival: it wakes at the points of a grid, every `tick`,
//! and sends together every arrival that fell at or before the point, none before it. Each
//! arrival's *due time* is therefore its grid point: the first point at or after the instant the
//! schedule puts it at. That is still a function of time alone, fixed before the run (no
//! coordinated omission), and latency is measured from it, so no request's latency includes a
//! wait for its grid point: what the grid changes is the shape of the offered load within a tick
//! (the arrivals of a tick leave together, one after another), never the rate over any span of a
//! tick or more.
//!
//! The workers' grids are staggered by `tick / workers`, so that they do not all send at once.

use std::time::Duration;

use super::Interleave;

/// One worker's send grid: points at `offset + k · tick` (k = 0, 1, …) from the schedule's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    /// The spacing of the points; zero: no grid, every arrival leaves at its own instant.
    pub tick: Duration,
    /// The first point, below `tick`.
    pub offset: Duration,
}

impl Grid {
    /// No grid: every arrival is due at its own instant.
    pub const EXACT: Grid = Grid {
        tick: Duration::ZERO,
        offset: Duration::ZERO,
    };

    /// The grid of worker `share.worker` of `share.workers`: points every `tick`, the first
    /// `tick · worker / workers` after the start.
    pub fn for_share(tick: Duration, share: Interleave) -> Self {
        let workers = share.workers.max(1) as u128;
        let offset = tick.as_nanos() * share.worker as u128 / workers;
        Self {
            tick,
            offset: Duration::from_nanos(offset as u64),
        }
    }

    /// The first point at or after `at` (both offsets from the schedule's start): when an
    /// arrival the schedule puts at `at` is due.
    #[inline]
    pub fn due(&self, at: Duration) -> Duration {
        if self.tick.is_zero() {
            return at;
        }
        if at <= self.offset {
            return self.offset;
        }
        let tick = self.tick.as_nanos();
        let after = (at - self.offset).as_nanos();
        self.offset + Duration::from_nanos((after.div_ceil(tick) * tick) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn arrivals_are_due_at_the_first_point_at_or_after_them() {
        let grid = Grid {
            tick: ms(1),
            offset: Duration::ZERO,
        };
        for (at, due) in [
            (Duration::ZERO, Duration::ZERO),
            (us(1), ms(1)),
            (us(999), ms(1)),
            (ms(1), ms(1)),
            (us(1001), ms(2)),
            (ms(7) + Duration::from_nanos(1), ms(8)),
        ] {
            assert_eq!(grid.due(at), due, "at {at:?}");
        }
    }

    #[test]
    fn no_grid_keeps_every_instant() {
        for at in [Duration::ZERO, us(1), us(333), ms(5)] {
            assert_eq!(Grid::EXACT.due(at), at);
        }
    }

    #[test]
    fn workers_grids_are_staggered_by_a_share_of_the_tick() {
        let tick = ms(1);
        let grids: Vec<Grid> = (0..4)
            .map(|worker| Grid::for_share(tick, Interleave { worker, workers: 4 }))
            .collect();
        let offsets: Vec<Duration> = grids.iter().map(|g| g.offset).collect();
        assert_eq!(offsets, [Duration::ZERO, us(250), us(500), us(750)]);
        // Before its first point an arrival waits for it; after, points are a tick apart.
        assert_eq!(grids[2].due(Duration::ZERO), us(500));
        assert_eq!(grids[2].due(us(501)), us(1500));
        assert_eq!(grids[2].due(us(1500)), us(1500));
        assert_eq!(grids[3].due(ms(2)), us(2750));
    }

    #[test]
    fn a_due_time_is_never_before_the_arrival_nor_a_tick_after_it() {
        let grid = Grid::for_share(
            us(700),
            Interleave {
                worker: 1,
                workers: 3,
            },
        );
        for n in 0..5_000u64 {
            let at = Duration::from_nanos(n * 12_345);
            let due = grid.due(at);
            assert!(due >= at, "{at:?} → {due:?}");
            assert!(due - at < grid.tick || at < grid.offset, "{at:?} → {due:?}");
            // And it is a point of the grid.
            assert_eq!((due - grid.offset).as_nanos() % grid.tick.as_nanos(), 0);
        }
    }
}
