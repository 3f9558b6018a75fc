//! Where the engine's gates and pacer read the time and wait.
//!
//! Their decisions are pure functions of "now"; the clock is the one thing that differs between
//! a run and a unit test. The run's clocks read [`std::time::Instant`] (the instants the recorder
//! measures with); the pacer's waits on a timerfd ([`crate::timer`]) for sub-millisecond
//! precision. Neither follows tokio's paused time, so tests use [`PausedClock`], which reads
//! tokio's clock: `tokio::time::advance` then moves the gates and the pacer.

use std::future::Future;
use std::time::Instant;

use crate::timer::PreciseTimer;

/// A source of "now" and a way to wait for an instant.
pub(crate) trait TimeSource {
    /// The current instant.
    fn now(&self) -> Instant;
    /// Waits until `at` (returns at once if it has passed).
    fn sleep_until(&self, at: Instant) -> impl Future<Output = ()>;
}

/// The system clock and tokio's timer (1 ms resolution): for waits that need no precision.
pub(crate) struct SystemClock;

impl TimeSource for SystemClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::now()
    }

    async fn sleep_until(&self, at: Instant) {
        tokio::time::sleep_until(at.into()).await;
    }
}

/// The system clock and a timerfd: the open model's pacer, whose waits end within tens of
/// microseconds of the due time. Falls back to tokio's timer (losing only precision) when no
/// timerfd can be had.
pub(crate) struct PreciseClock {
    timer: Option<PreciseTimer>,
}

impl PreciseClock {
    /// A clock with its own timerfd; must be created inside a tokio runtime.
    pub(crate) fn new() -> Self {
        Self {
            timer: PreciseTimer::new().ok(),
        }
    }
}

impl TimeSource for PreciseClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::now()
    }

    async fn sleep_until(&self, at: Instant) {
        if let Some(t) = &self.timer
            && t.sleep_until(at).await.is_ok()
        {
            return;
        }
        tokio::time::sleep_until(at.into()).await;
    }
}

/// tokio's clock, which tests pause and advance (`#[tokio::test(start_paused = true)]`).
#[cfg(test)]
pub(crate) struct PausedClock;

#[cfg(test)]
impl TimeSource for PausedClock {
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    async fn sleep_until(&self, at: Instant) {
        tokio::time::sleep_until(at.into()).await;
    }
}
