//! `volley serve --backends N`: the target answers as N backends behind a round-robin front.
//!
//! Every request but the observing routes (`/metrics`, `/stats`) is handed to the next backend in
//! turn (`b1`, `b2`, …, `bN`, then `b1` again: one atomic counter, so the spread over the
//! backends is exact whatever the concurrency), waits that backend's own delay (if any) before
//! its route runs, and is answered with the header `X-Backend: bK`. What a load balancer in front
//! of N replicas looks like from the client, without starting N processes: a
//! `volley URL --group-by header:X-Backend` then has a real distribution to show, and a backend
//! with a larger delay a real latency of its own.
//!
//! `/metrics` gains, per backend:
//!
//! | series | type | what |
//! | --- | --- | --- |
//! | `volley_target_backend_requests_total{backend}` | counter | requests answered by that backend |
//! | `volley_target_backend_delay_seconds{backend}` | gauge | its configured delay, s |
//! | `volley_target_backend_duration_seconds{backend}` | histogram | handler time (request head parsed → response ready, its delay included), s |
//!
//! so that a watch of the target's own `/metrics` has a counter, a gauge and a histogram to show.
//! Counting is a few relaxed atomic additions per request, without a lock.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hyper::Response;
use hyper::header::{HeaderName, HeaderValue};

/// Most backends one target can pretend to be.
pub const MAX_BACKENDS: usize = 64;

/// The response header that names the backend.
pub const BACKEND_HEADER: &str = "x-backend";

/// Upper bounds of the duration histogram's buckets, seconds (`+Inf` is implicit).
const BUCKETS_S: [f64; 14] = [
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0,
];

/// Why a set of backends cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendsError {
    /// A count outside 1..=[`MAX_BACKENDS`].
    #[error("--backends takes 1 to {MAX_BACKENDS} backends, not {0}")]
    Count(usize),
    /// A number of delays that is neither 0, 1 nor the count.
    #[error(
        "--backend-delay lists {delays} delays for {count} backends (give one, or one per backend)"
    )]
    Delays {
        /// How many delays were given.
        delays: usize,
        /// How many backends.
        count: usize,
    },
}

/// The backends the target pretends to be: how many, and each one's delay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backends {
    delays: Vec<Duration>,
}

impl Backends {
    /// `count` backends (1..=[`MAX_BACKENDS`]) with the given delays: none (no delay), one (the
    /// same for every backend), or exactly `count` (backend `bK` waits `delays[K-1]`).
    pub fn new(count: usize, delays: &[Duration]) -> Result<Self, BackendsError> {
        if !(1..=MAX_BACKENDS).contains(&count) {
            return Err(BackendsError::Count(count));
        }
        let delays = match delays.len() {
            0 => vec![Duration::ZERO; count],
            1 => vec![delays[0]; count],
            n if n == count => delays.to_vec(),
            n => {
                return Err(BackendsError::Delays { delays: n, count });
            }
        };
        Ok(Self { delays })
    }

    /// Number of backends.
    pub fn count(&self) -> usize {
        self.delays.len()
    }

    /// Each backend's delay, in backend order (`b1` first).
    pub fn delays(&self) -> &[Duration] {
        &self.delays
    }
}

/// One backend's counters.
#[derive(Debug)]
struct Backend {
    name: HeaderValue,
    delay: Duration,
    requests: AtomicU64,
    /// Non-cumulative bucket counts: `BUCKETS_S.len()` bounds, then `+Inf`.
    buckets: [AtomicU64; BUCKETS_S.len() + 1],
    sum_us: AtomicU64,
}

/// The front's running state: the round-robin counter and each backend's counters.
#[derive(Debug)]
pub(crate) struct Front {
    next: AtomicU64,
    backends: Box<[Backend]>,
}

/// The line `volley serve` prints about its backends.
pub(crate) fn describe(backends: &Backends) -> String {
    let delays: Vec<String> = backends
        .delays
        .iter()
        .map(|d| humantime::format_duration(*d).to_string())
        .collect();
    format!(
        "{} backends behind a round-robin front (header X-Backend: b1..b{}), delays {}",
        backends.count(),
        backends.count(),
        delays.join(", ")
    )
}

/// `/metrics`: the target's own counters, its capacity's (in capacity mode), then the
/// backends' (when it has some).
pub(crate) fn metrics_page(state: &super::routes::ServerState) -> String {
    let mut page = state.metrics.render();
    super::oracle::prometheus(&state.handler_times.snapshot(false), &mut page);
    if let Some(limiter) = &state.capacity {
        limiter.render(&mut page);
    }
    if let Some(front) = &state.front {
        front.render(&mut page);
    }
    page
}

/// A request handed to one backend; [`Visit::leave`] counts it and names the backend.
#[derive(Debug)]
pub(crate) struct Visit<'a> {
    backend: &'a Backend,
}

impl Front {
    pub(crate) fn new(config: &Backends) -> Self {
        let backends = config
            .delays
            .iter()
            .enumerate()
            .map(|(i, &delay)| Backend {
                name: HeaderValue::from_str(&format!("b{}", i + 1))
                    .expect("bN is a valid header value"),
                delay,
                requests: AtomicU64::new(0),
                buckets: Default::default(),
                sum_us: AtomicU64::new(0),
            })
            .collect();
        Self {
            next: AtomicU64::new(0),
            backends,
        }
    }

    /// Hands the request to the next backend in turn and waits its delay.
    pub(crate) async fn enter(&self) -> Visit<'_> {
        let turn = self.next.fetch_add(1, Ordering::Relaxed);
        let backend = &self.backends[(turn % self.backends.len() as u64) as usize];
        if !backend.delay.is_zero() {
            crate::timer::sleep(backend.delay).await;
        }
        Visit { backend }
    }

    /// The per-backend series of `/metrics` (Prometheus text format 0.0.4), appended to `out`.
    pub(crate) fn render(&self, out: &mut String) {
        out.push_str(
            "# HELP volley_target_backend_requests_total Requests answered by each backend of the round-robin front.\n\
             # TYPE volley_target_backend_requests_total counter\n",
        );
        for b in &self.backends {
            let name = b.label();
            let n = b.requests.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "volley_target_backend_requests_total{{backend=\"{name}\"}} {n}"
            );
        }
        out.push_str(
            "# HELP volley_target_backend_delay_seconds The delay each backend adds, seconds.\n\
             # TYPE volley_target_backend_delay_seconds gauge\n",
        );
        for b in &self.backends {
            let _ = writeln!(
                out,
                "volley_target_backend_delay_seconds{{backend=\"{}\"}} {}",
                b.label(),
                b.delay.as_secs_f64()
            );
        }
        out.push_str(
            "# HELP volley_target_backend_duration_seconds Handler time per backend (its delay included), seconds.\n\
             # TYPE volley_target_backend_duration_seconds histogram\n",
        );
        for b in &self.backends {
            b.render_histogram(out);
        }
    }
}

impl Backend {
    fn label(&self) -> &str {
        self.name.to_str().unwrap_or("?")
    }

    fn render_histogram(&self, out: &mut String) {
        let name = self.label();
        let mut cumulative = 0;
        for (i, bucket) in self.buckets.iter().enumerate() {
            cumulative += bucket.load(Ordering::Relaxed);
            let le = BUCKETS_S
                .get(i)
                .map_or_else(|| "+Inf".to_string(), f64::to_string);
            let _ = writeln!(
                out,
                "volley_target_backend_duration_seconds_bucket{{backend=\"{name}\",le=\"{le}\"}} {cumulative}"
            );
        }
        let sum_s = self.sum_us.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(
            out,
            "volley_target_backend_duration_seconds_sum{{backend=\"{name}\"}} {sum_s}\n\
             volley_target_backend_duration_seconds_count{{backend=\"{name}\"}} {cumulative}"
        );
    }
}

impl Visit<'_> {
    /// Counts the answered request (its handler time from `started`) and adds `X-Backend`.
    pub(crate) fn leave<B>(self, started: Instant, response: &mut Response<B>) {
        let b = self.backend;
        let elapsed = started.elapsed();
        let s = elapsed.as_secs_f64();
        let slot = BUCKETS_S
            .iter()
            .position(|&le| s <= le)
            .unwrap_or(BUCKETS_S.len());
        b.buckets[slot].fetch_add(1, Ordering::Relaxed);
        let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        b.sum_us.fetch_add(us, Ordering::Relaxed);
        // Counted last: a scrape that sees the request counted sees its bucket too.
        b.requests.fetch_add(1, Ordering::Relaxed);
        response
            .headers_mut()
            .insert(HeaderName::from_static(BACKEND_HEADER), b.name.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn delays_are_none_one_or_one_per_backend() {
        assert_eq!(
            Backends::new(3, &[]).unwrap().delays(),
            &[Duration::ZERO; 3]
        );
        assert_eq!(
            Backends::new(2, &[ms(5)]).unwrap().delays(),
            &[ms(5), ms(5)]
        );
        assert_eq!(
            Backends::new(3, &[ms(1), ms(5), ms(20)]).unwrap().delays(),
            &[ms(1), ms(5), ms(20)]
        );
        assert!(Backends::new(3, &[ms(1), ms(2)]).is_err());
        assert!(Backends::new(0, &[]).is_err());
        assert!(Backends::new(MAX_BACKENDS + 1, &[]).is_err());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn round_robin_names_and_counts_each_backend() {
        let front = Front::new(&Backends::new(3, &[]).unwrap());
        let mut names = Vec::new();
        for _ in 0..7 {
            let mut response = Response::new(());
            front.enter().await.leave(Instant::now(), &mut response);
            names.push(
                response.headers()[BACKEND_HEADER]
                    .to_str()
                    .unwrap()
                    .to_string(),
            );
        }
        assert_eq!(names, ["b1", "b2", "b3", "b1", "b2", "b3", "b1"]);
        let mut text = String::new();
        front.render(&mut text);
        assert!(text.contains("volley_target_backend_requests_total{backend=\"b1\"} 3\n"));
        assert!(text.contains("volley_target_backend_requests_total{backend=\"b3\"} 2\n"));
        assert!(text.contains(
            "volley_target_backend_duration_seconds_bucket{backend=\"b2\",le=\"+Inf\"} 2\n"
        ));
        assert!(text.contains("volley_target_backend_duration_seconds_count{backend=\"b2\"} 2\n"));
        assert!(text.contains("# TYPE volley_target_backend_duration_seconds histogram\n"));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn each_backend_waits_its_own_delay() {
        let front = Front::new(&Backends::new(2, &[ms(0), ms(30)]).unwrap());
        let mut slow = Response::new(());
        let started = Instant::now();
        front.enter().await.leave(started, &mut Response::new(()));
        let fast = started.elapsed();
        let started = Instant::now();
        front.enter().await.leave(started, &mut slow);
        assert_eq!(slow.headers()[BACKEND_HEADER], "b2");
        assert!(started.elapsed() >= ms(30), "{:?}", started.elapsed());
        assert!(fast < ms(30), "{fast:?}");
        let mut text = String::new();
        front.render(&mut text);
        // At least 30 ms: above the 20 ms bucket, whatever else the machine is doing.
        assert!(text.contains("{backend=\"b2\",le=\"0.02\"} 0\n"), "{text}");
        assert!(text.contains("{backend=\"b2\",le=\"+Inf\"} 1\n"), "{text}");
        assert!(text.contains("volley_target_backend_delay_seconds{backend=\"b2\"} 0.03\n"));
    }
}
