//! Sub-millisecond sleeps.
//!
//! tokio's timer wheel has 1 ms granularity and rounds deadlines up: a 10 ms sleep lasts 10–11 ms,
//! and an open-model request due at t would go out up to 1 ms late (at 20 000 req/s, twenty would
//! leave in one burst). A `timerfd` armed with nanosecond precision and registered with the
//! calling runtime's reactor wakes within tens of microseconds of the deadline (this VM: ~0.1 ms),
//! on the same thread, without spinning.
//!
//! [`PreciseTimer`] keeps one timerfd for repeated waits (the open model's pacer);
//! [`sleep_until`] sleeps coarsely with tokio until ~2 ms before the deadline and then on a one-shot
//! timerfd, so long waits hold no descriptor (the target's delays and service times).

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::{Duration, Instant};

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;

struct Fd(TimerFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

/// One reusable precise timer; must be created inside a tokio runtime.
pub struct PreciseTimer {
    fd: AsyncFd<Fd>,
}

impl PreciseTimer {
    /// Creates the timer (a non-blocking monotonic timerfd).
    #[allow(unsafe_code)]
    pub fn new() -> io::Result<Self> {
        let tfd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        // SAFETY: `Fd` owns the timerfd, so the descriptor stays open for exactly as long as the
        // registration (the AsyncFd owns `Fd`) and is closed only after deregistration on drop.
        let fd = unsafe { AsyncFd::register(Fd(tfd)) }.map_err(io::Error::from)?;
        Ok(Self { fd })
    }

    /// Waits until `deadline` (returns at once if it has passed).
    ///
    /// The timer is never read: arming it resets its count of expirations, and each expiry is a
    /// new edge for the reactor, so forgetting the readiness after a wake-up is enough (a read
    /// would be one more system call per wait). A wake-up before the deadline (an expiry of an
    /// earlier arming that nobody waited for) arms it again for what is left.
    pub async fn sleep_until(&self, deadline: Instant) -> io::Result<()> {
        loop {
            let now = Instant::now();
            if deadline <= now {
                return Ok(());
            }
            let wait = (deadline - now).max(Duration::from_nanos(1));
            self.fd.get_ref().0.set(
                Expiration::OneShot(TimeSpec::from_duration(wait)),
                TimerSetTimeFlags::empty(),
            )?;
            self.fd.readable().await?.clear_ready();
        }
    }
}

/// How long before the deadline [`sleep_until`] hands over from tokio's timer to a timerfd
/// (tokio may wake up to ~1 ms late, so 2 ms leaves a margin).
const COARSE_MARGIN: Duration = Duration::from_millis(2);

/// Sleeps for `duration` with sub-millisecond precision.
pub async fn sleep(duration: Duration) {
    match Instant::now().checked_add(duration) {
        Some(deadline) => sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Sleeps until `deadline` with sub-millisecond precision; returns at once if it has passed.
/// Falls back to tokio's timer (losing only precision) if no timerfd can be had.
pub async fn sleep_until(deadline: Instant) {
    let now = Instant::now();
    if deadline <= now {
        return;
    }
    if deadline - now > COARSE_MARGIN + Duration::from_millis(1) {
        tokio::time::sleep_until((deadline - COARSE_MARGIN).into()).await;
    }
    let fine = match PreciseTimer::new() {
        Ok(timer) => timer.sleep_until(deadline).await,
        Err(e) => Err(e),
    };
    if fine.is_err() {
        tokio::time::sleep_until(deadline.into()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakes_close_to_the_deadline() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let timer = PreciseTimer::new().unwrap();
            let mut late = Vec::new();
            for _ in 0..20 {
                let deadline = Instant::now() + Duration::from_micros(1500);
                timer.sleep_until(deadline).await.unwrap();
                let now = Instant::now();
                assert!(now >= deadline);
                late.push(now - deadline);
            }
            late.sort();
            // Generous: the median wake-up is far below tokio's 1 ms granularity.
            assert!(late[10] < Duration::from_micros(900), "{late:?}");
            // A past deadline returns at once.
            timer.sleep_until(Instant::now()).await.unwrap();
        });
    }

    #[test]
    fn ten_millisecond_sleeps_are_precise() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let d = Duration::from_millis(10);
            let mut late = Vec::new();
            for _ in 0..15 {
                let start = Instant::now();
                sleep(d).await;
                let took = start.elapsed();
                assert!(took >= d, "woke early: {took:?}");
                late.push(took - d);
            }
            late.sort();
            assert!(late[7] < Duration::from_micros(600), "{late:?}");
        });
    }
}
