//! Periodic stalls: the endpoint freezes for a while at the start of every period of the target's
//! own clock, like a service in a stop-the-world pause.
//!
//! The clock starts when the target starts serving (its *epoch*); freezes cover
//! `[k·every, k·every + duration)` for every k ≥ 0. A request that arrives during a freeze is held
//! until the freeze ends, and a response that is ready during one is held too, so nothing leaves
//! the endpoint while it is frozen. A request due at phase `t ∈ [0, duration)` of a freeze thus
//! waits `duration − t`, which gives the analytic latency law that the oracle tests check:
//! `P(L > x) = (duration − x) / every` for `0 ≤ x < duration` (plus the service time).

use std::time::{Duration, Instant};

/// A periodic freeze of the endpoint (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    /// How long each freeze lasts; more than zero and less than `every`.
    pub duration: Duration,
    /// The period: a freeze starts every `every` of the target's clock.
    pub every: Duration,
}

/// Why a stall cannot be made: unusable lengths, or a query that does not say them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StallError {
    /// The freeze is not longer than zero and shorter than its period.
    #[error(
        "a stall must last more than zero and less than its period (got {} every {})",
        humantime::format_duration(*duration),
        humantime::format_duration(*every)
    )]
    Unusable {
        /// How long each freeze was asked to last.
        duration: Duration,
        /// The period asked for.
        every: Duration,
    },
    /// A query's `stall_ms` or `every_ms` is not a number of milliseconds in range.
    #[error("{name} must be a number of milliseconds in 0..={MAX_PERIOD_MS}")]
    NotMilliseconds {
        /// The parameter.
        name: &'static str,
    },
    /// A query has `stall_ms` without `every_ms`, or the other way round.
    #[error("stall_ms and every_ms go together")]
    Unpaired,
}

/// Most freezes one request waits out in a row (two stalls of different periods could chain;
/// a bound keeps the wait finite whatever they are).
const MAX_CHAINED: usize = 64;

impl Stall {
    /// A stall of `duration` every `every`, or why it is unusable.
    pub fn new(duration: Duration, every: Duration) -> Result<Stall, StallError> {
        if duration.is_zero() || duration >= every {
            return Err(StallError::Unusable { duration, every });
        }
        Ok(Stall { duration, every })
    }

    /// When the freeze covering `now` ends (`None`: `now` is outside every freeze), on the clock
    /// that started at `epoch`.
    pub(crate) fn frozen_until(&self, epoch: Instant, now: Instant) -> Option<Instant> {
        let since = now.saturating_duration_since(epoch).as_nanos();
        let phase = since % self.every.as_nanos().max(1);
        let duration = self.duration.as_nanos();
        // `duration - phase` is below `every`, which is a Duration: it fits back into one.
        (phase < duration).then(|| now + Duration::from_nanos((duration - phase) as u64))
    }
}

/// Waits until none of `stalls` freezes the endpoint (at once when none does now).
///
/// On tokio's timer, which ends a freeze up to 1 ms late (0.2 % of a 500 ms freeze) but releases
/// hundreds of held requests from one timer wheel slot: a precise timer per request (a timerfd
/// each) made the target itself take ~30 ms to release 500 of them.
pub(crate) async fn wait_out(stalls: &[Option<Stall>], epoch: Instant) {
    for _ in 0..MAX_CHAINED {
        let now = Instant::now();
        let until = stalls
            .iter()
            .flatten()
            .filter_map(|s| s.frozen_until(epoch, now))
            .max();
        match until {
            Some(until) => tokio::time::sleep_until(until.into()).await,
            None => return,
        }
    }
}

/// The per-request stall of a query: `stall_ms=S&every_ms=P` (both or neither), in
/// milliseconds (fractions allowed).
pub(crate) fn from_query(
    stall_ms: Option<&str>,
    every_ms: Option<&str>,
) -> Result<Option<Stall>, StallError> {
    let ms = |name: &'static str, value: &str| match value.parse::<f64>() {
        Ok(ms) if ms.is_finite() && (0.0..=MAX_PERIOD_MS).contains(&ms) => {
            Ok(Duration::from_secs_f64(ms / 1e3))
        }
        _ => Err(StallError::NotMilliseconds { name }),
    };
    match (stall_ms, every_ms) {
        (None, None) => Ok(None),
        (Some(s), Some(p)) => Stall::new(ms("stall_ms", s)?, ms("every_ms", p)?).map(Some),
        _ => Err(StallError::Unpaired),
    }
}

/// Longest period a query may ask for, milliseconds (one day).
const MAX_PERIOD_MS: f64 = 86_400_000.0;

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn freezes_the_start_of_every_period() {
        let epoch = Instant::now();
        let s = Stall::new(500 * MS, 5000 * MS).unwrap();
        let at = |ms: u64| epoch + Duration::from_millis(ms);
        assert_eq!(s.frozen_until(epoch, at(0)), Some(at(500)));
        assert_eq!(s.frozen_until(epoch, at(200)), Some(at(500)));
        assert_eq!(s.frozen_until(epoch, at(499)), Some(at(500)));
        assert_eq!(s.frozen_until(epoch, at(500)), None);
        assert_eq!(s.frozen_until(epoch, at(4999)), None);
        assert_eq!(s.frozen_until(epoch, at(5000)), Some(at(5500)));
        assert_eq!(s.frozen_until(epoch, at(15_250)), Some(at(15_500)));
        // Before the epoch (a clock read just before it): the first freeze.
        assert_eq!(s.frozen_until(at(10), epoch), Some(epoch + 500 * MS));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert_eq!(
            Stall::new(2 * MS, MS).unwrap_err().to_string(),
            "a stall must last more than zero and less than its period (got 2ms every 1ms)"
        );
        assert_eq!(
            from_query(Some("x"), Some("1")).unwrap_err().to_string(),
            "stall_ms must be a number of milliseconds in 0..=86400000"
        );
        assert_eq!(
            from_query(Some("1"), None).unwrap_err().to_string(),
            "stall_ms and every_ms go together"
        );
    }

    #[test]
    fn rejects_unusable_stalls() {
        assert!(Stall::new(Duration::ZERO, MS).is_err());
        assert!(Stall::new(MS, MS).is_err());
        assert!(Stall::new(2 * MS, MS).is_err());
        assert!(Stall::new(MS, 2 * MS).is_ok());
    }

    #[test]
    fn parses_queries() {
        assert_eq!(from_query(None, None), Ok(None));
        assert_eq!(
            from_query(Some("500"), Some("5000")),
            Ok(Some(Stall::new(500 * MS, 5000 * MS).unwrap()))
        );
        assert_eq!(
            from_query(Some("0.5"), Some("2"))
                .unwrap()
                .unwrap()
                .duration,
            Duration::from_micros(500)
        );
        for (s, p) in [
            (Some("500"), None),
            (None, Some("5000")),
            (Some("x"), Some("5000")),
            (Some("-1"), Some("5000")),
            (Some("5000"), Some("500")),
            (Some("0"), Some("500")),
            (Some("1"), Some("inf")),
        ] {
            assert!(from_query(s, p).is_err(), "{s:?} {p:?}");
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn waits_out_the_freeze_it_arrives_in() {
        let epoch = Instant::now();
        let stall = Some(Stall::new(30 * MS, 1000 * MS).unwrap());
        wait_out(&[None, stall], epoch).await;
        assert!(Instant::now() >= epoch + 30 * MS, "left the freeze early");
    }
}
