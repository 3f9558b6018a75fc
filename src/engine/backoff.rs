//! A VU's back-off after the generator ran out of a local resource or could not connect.

use std::time::{Duration, Instant};

use crate::proto::ErrorKind;

/// A VU's wait after the generator ran out of a local resource (ephemeral ports, file
/// descriptors) or could not open a connection (refused, unreachable, timed out): bounded exponential, from [`BACKOFF_MIN`] to [`BACKOFF_MAX`], reset by any
/// attempt that did not fail that way. Without it a VU whose connect fails at once retries in a
/// tight loop, burning the CPU and counting millions of failed attempts (a dead port once made
/// 82,885 "requests" a second).
#[derive(Default)]
pub(super) struct Backoff {
    next: Duration,
}

/// First wait after a local resource failure.
const BACKOFF_MIN: Duration = Duration::from_millis(1);
/// Longest wait between two tries.
const BACKOFF_MAX: Duration = Duration::from_millis(500);

impl Backoff {
    /// After an attempt that ended with `error`: waits (never past `end`) and returns true when
    /// it was such a failure.
    pub(super) async fn after(&mut self, error: Option<ErrorKind>, end: Option<Instant>) -> bool {
        if !error.is_some_and(ErrorKind::backs_off) {
            self.next = Duration::ZERO;
            return false;
        }
        self.next = (self.next * 2).clamp(BACKOFF_MIN, BACKOFF_MAX);
        let mut wake = tokio::time::Instant::now() + self.next;
        if let Some(end) = end {
            wake = wake.min(end.into());
        }
        tokio::time::sleep_until(wake).await;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How long (paused time) one call of [`Backoff::after`] waited, and what it answered.
    async fn waited(
        b: &mut Backoff,
        error: Option<ErrorKind>,
        end: Option<Instant>,
    ) -> (Duration, bool) {
        let start = tokio::time::Instant::now();
        let local = b.after(error, end).await;
        (start.elapsed(), local)
    }

    #[tokio::test(start_paused = true)]
    async fn local_resource_failures_back_off_exponentially_up_to_the_cap() {
        let mut b = Backoff::default();
        let mut waits = Vec::new();
        for _ in 0..12 {
            let (w, local) = waited(&mut b, Some(ErrorKind::AddrNotAvailable), None).await;
            assert!(local);
            waits.push(w.as_millis());
        }
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 500, 500, 500]);
        // Running out of file descriptors, and a connection the target refuses, back off the
        // same way.
        for kind in [ErrorKind::TooManyOpenFiles, ErrorKind::ConnectRefused] {
            assert_eq!(waited(&mut b, Some(kind), None).await.0.as_millis(), 500);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn any_other_outcome_resets_without_waiting() {
        let mut b = Backoff::default();
        for _ in 0..5 {
            waited(&mut b, Some(ErrorKind::AddrNotAvailable), None).await;
        }
        for other in [None, Some(ErrorKind::Timeout), Some(ErrorKind::Reset)] {
            assert_eq!(waited(&mut b, other, None).await, (Duration::ZERO, false));
        }
        assert_eq!(
            waited(&mut b, Some(ErrorKind::AddrNotAvailable), None)
                .await
                .0
                .as_millis(),
            1
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_never_passes_the_end() {
        let mut b = Backoff::default();
        for _ in 0..9 {
            waited(&mut b, Some(ErrorKind::AddrNotAvailable), None).await;
        }
        // The next wait would be 500 ms; the scenario ends in 30 ms.
        let end = tokio::time::Instant::now().into_std() + Duration::from_millis(30);
        let (w, local) = waited(&mut b, Some(ErrorKind::AddrNotAvailable), Some(end)).await;
        assert!(local);
        assert_eq!(w.as_millis(), 30);
    }
}
