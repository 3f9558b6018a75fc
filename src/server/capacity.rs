//! Capacity mode (`--capacity W --service-time S`): a FIFO semaphore of W permits, each request
//! holding one for S plus its route's work, and the oracle of what that really cost: every
//! hold's length, so that `/metrics` says the target's true capacity (W over the mean hold),
//! which is below W/S by the target's own work per request.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, SemaphorePermit};

use super::Capacity;

/// The workers and what their holds cost.
#[derive(Debug)]
pub(crate) struct Limiter {
    permits: Semaphore,
    workers: usize,
    service_time: Duration,
    /// Σ hold lengths, µs.
    held_us: AtomicU64,
    /// Holds ended.
    holds: AtomicU64,
}

/// A worker held by one request; its length is counted when it is dropped.
#[derive(Debug)]
pub(crate) struct Hold<'a> {
    _permit: Option<SemaphorePermit<'a>>,
    since: Instant,
    limiter: &'a Limiter,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        let us = self.since.elapsed().as_micros() as u64;
        self.limiter.held_us.fetch_add(us, Ordering::Relaxed);
        self.limiter.holds.fetch_add(1, Ordering::Relaxed);
    }
}

impl Limiter {
    /// The limiter of `c`; `c.workers` must be in 1..=`Semaphore::MAX_PERMITS`.
    pub(crate) fn new(c: Capacity) -> Self {
        Self {
            permits: Semaphore::new(c.workers),
            workers: c.workers,
            service_time: c.service_time,
            held_us: AtomicU64::new(0),
            holds: AtomicU64::new(0),
        }
    }

    /// Waits for a worker (first come, first served), then holds it for the service time; the
    /// hold lasts until the returned value is dropped (the route's work done).
    pub(crate) async fn hold(&self) -> Hold<'_> {
        // The semaphore is never closed, so this only fails in theory.
        let permit = self.permits.acquire().await.ok();
        let since = Instant::now();
        crate::timer::sleep(self.service_time).await;
        Hold {
            _permit: permit,
            since,
            limiter: self,
        }
    }

    /// Its series of `/metrics` (Prometheus text format 0.0.4), appended to `out`.
    pub(crate) fn render(&self, out: &mut String) {
        let _ = write!(
            out,
            "# HELP volley_target_capacity_workers Capacity mode: requests served at once.\n\
             # TYPE volley_target_capacity_workers gauge\n\
             volley_target_capacity_workers {}\n\
             # HELP volley_target_capacity_service_seconds Capacity mode: the service time asked.\n\
             # TYPE volley_target_capacity_service_seconds gauge\n\
             volley_target_capacity_service_seconds {}\n\
             # HELP volley_target_capacity_held_seconds_total Capacity mode: Σ the time requests \
             held a worker (service time + the route's work): workers / (this / holds) is the \
             true capacity, req/s.\n\
             # TYPE volley_target_capacity_held_seconds_total counter\n\
             volley_target_capacity_held_seconds_total {}\n\
             # HELP volley_target_capacity_holds_total Capacity mode: requests that held a worker.\n\
             # TYPE volley_target_capacity_holds_total counter\n\
             volley_target_capacity_holds_total {}\n",
            self.workers,
            self.service_time.as_secs_f64(),
            self.held_us.load(Ordering::Relaxed) as f64 / 1e6,
            self.holds.load(Ordering::Relaxed),
        );
    }
}
