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
            self.wait(Some(deadline - now)).await?;
        }
    }

    /// Arms the timer `wait` from now when given, then waits for an expiry (of this arming or
    /// an earlier one nobody waited for).
    async fn wait(&self, arm: Option<Duration>) -> io::Result<()> {
        if let Some(wait) = arm {
            self.arm(wait)?;
        }
        self.fd.readable().await?.clear_ready();
        Ok(())
    }

    /// Arms the timer to expire once, `wait` from now.
    fn arm(&self, wait: Duration) -> io::Result<()> {
        self.fd.get_ref().0.set(
            Expiration::OneShot(TimeSpec::from_duration(wait.max(Duration::from_nanos(1)))),
            TimerSetTimeFlags::empty(),
        )?;
        Ok(())
    }
}

/// A deadline waited for again and again, as a `select!` loop polls it once per turn: a timerfd
/// armed only when the deadline moves (not once per poll, which would be a system call per
/// turn), made at the first wait; tokio's timer if no timerfd can be had.
///
/// Cancel-safe: a wait dropped before its deadline leaves the timer armed for the next.
#[derive(Default)]
pub struct Deadline {
    timer: Option<Timer>,
    /// The deadline the timer is armed for.
    armed: Option<Instant>,
}

enum Timer {
    Precise(PreciseTimer),
    Coarse(std::pin::Pin<Box<tokio::time::Sleep>>),
}

impl Deadline {
    /// Resolves at `deadline` (at once if it has passed); must be polled inside a tokio runtime.
    pub async fn until(&mut self, deadline: Instant) {
        let timer = self.timer.get_or_insert_with(|| match PreciseTimer::new() {
            Ok(t) => Timer::Precise(t),
            Err(_) => Timer::Coarse(Box::pin(tokio::time::sleep_until(deadline.into()))),
        });
        loop {
            let now = Instant::now();
            if deadline <= now {
                return;
            }
            let moved = self.armed != Some(deadline);
            self.armed = Some(deadline);
            match timer {
                Timer::Precise(t) => {
                    if t.wait(moved.then(|| deadline - now)).await.is_err() {
                        // The timerfd failed: tokio's timer from here on.
                        let sleep = tokio::time::sleep_until(deadline.into());
                        *timer = Timer::Coarse(Box::pin(sleep));
                    }
                    // At the deadline, or early after an expiry nobody waited for: the next
                    // turn returns or arms again.
                    self.armed = None;
                }
                Timer::Coarse(sleep) => {
                    if moved {
                        sleep.as_mut().reset(deadline.into());
                    }
                    sleep.as_mut().await;
                }
            }
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

    #[test]
    fn a_deadline_polled_again_and_again_wakes_on_time_and_survives_cancellation() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut d = Deadline::default();
            let mut late = Vec::new();
            for _ in 0..10 {
                let due = Instant::now() + Duration::from_millis(20);
                // A select loop's other branch wins first: the wait is dropped and polled anew
                // (on a machine too busy to wake within 20 ms the deadline wins; both end at
                // or after it).
                let _ = tokio::time::timeout(Duration::from_millis(1), d.until(due)).await;
                d.until(due).await;
                let now = Instant::now();
                assert!(now >= due);
                late.push(now - due);
            }
            // A deadline moved earlier than the one armed is kept too.
            let far = Instant::now() + Duration::from_secs(5);
            let _ = tokio::time::timeout(Duration::from_micros(200), d.until(far)).await;
            let near = Instant::now() + Duration::from_millis(2);
            d.until(near).await;
            assert!(Instant::now() < far - Duration::from_secs(4));
            late.sort();
            assert!(late[5] < Duration::from_micros(900), "{late:?}");
        });
    }
}
