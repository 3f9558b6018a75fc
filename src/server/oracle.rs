//! The truth oracle: the target's own measure of how long it took to handle each request, so that
//! tests can hold volley's figures against it.
//!
//! **Handler time** is measured inside the server, from the moment hyper hands over the parsed
//! request head (the service is called) to the moment hyper has taken the response's last frame
//! (the body is dropped; hyper flushes what it took to the socket in the same step). Capacity
//! queueing, `/delay` and stalls are inside it; reading the request from the socket and the
//! network are not. `/metrics` and `/stats` are not recorded (nor gRPC server-reflection streams,
//! which last as long as the client keeps them), and neither are requests whose connection
//! closed before the response was ready.
//!
//! Times go into an HDR histogram of microseconds with volley's own layout (1 µs to 1 h, 3
//! significant digits, see [`crate::record::recorder::new_histogram`]) kept as one atomic counter
//! per bucket: recording is one `fetch_add`, without a lock, from any thread. A snapshot copies
//! the counters into a real `hdrhistogram::Histogram` (the same buckets, so the same percentiles
//! as recording into it directly); a read-and-reset swaps every counter with zero, so each
//! request is counted in exactly one snapshot even while requests keep coming.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use hdrhistogram::Histogram;
use hyper::body::{Body, Frame, SizeHint};

use super::body::TargetBody;
use super::routes::ServerState;
use crate::record::recorder::{HIST_HIGH_US, new_histogram};

/// Values below this are their own bucket (HDR's sub-bucket count at 3 significant digits).
const SUB_BUCKETS: u64 = 2048;
/// Half of it: every further power of two is split into this many buckets.
const HALF: u64 = SUB_BUCKETS / 2;
/// log2(HALF).
const HALF_BITS: u32 = 10;
/// Buckets needed up to [`HIST_HIGH_US`] (below 2^32 µs): 22 powers of two of 1024, plus 1024.
const BUCKETS: usize = ((32 - HALF_BITS as usize) + 1) * HALF as usize;

/// Handler times, µs, as an HDR histogram of atomic counters (see the module documentation).
#[derive(Debug)]
pub(crate) struct HandlerTimes {
    counts: Box<[AtomicU64]>,
}

impl Default for HandlerTimes {
    fn default() -> Self {
        HandlerTimes {
            counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

/// The bucket of `us` (values above [`HIST_HIGH_US`] are clamped to it, as volley clamps).
fn index_of(us: u64) -> usize {
    let v = us.min(HIST_HIGH_US);
    if v < SUB_BUCKETS {
        return v as usize;
    }
    // v has its top bit at position p ≥ 11; keep its 11 top bits (1024..2048) at a shift of
    // p − 10, and put each shift's 1024 buckets after the previous shift's.
    let shift = 63 - v.leading_zeros() - HALF_BITS;
    (u64::from(shift) * HALF + (v >> shift)) as usize
}

/// The lowest value of bucket `index`.
fn value_of(index: usize) -> u64 {
    let i = index as u64;
    if i < SUB_BUCKETS {
        return i;
    }
    let shift = i / HALF - 1;
    (i - shift * HALF) << shift
}

impl HandlerTimes {
    /// Records one handler time, µs.
    pub(crate) fn record(&self, us: u64) {
        self.counts[index_of(us)].fetch_add(1, Ordering::Relaxed);
    }

    /// The handler times recorded so far (since the last reset); with `reset`, they are taken
    /// out, so the next snapshot starts from zero without losing any request in between.
    pub(crate) fn snapshot(&self, reset: bool) -> Histogram<u64> {
        let mut h = new_histogram();
        for (index, count) in self.counts.iter().enumerate() {
            let n = if reset {
                count.swap(0, Ordering::Relaxed)
            } else {
                count.load(Ordering::Relaxed)
            };
            if n > 0 {
                // In range by construction: `value_of` never exceeds HIST_HIGH_US's bucket.
                let _ = h.record_n(value_of(index), n);
            }
        }
        h
    }
}

/// The `GET /stats` document: counts and percentiles of handler time (µs), the histogram
/// (HDR V2, base64, as in `run.json`) and the target's clock (`uptime_us`, on which stalls are
/// aligned).
pub(crate) fn render(h: &Histogram<u64>, uptime_us: u64) -> String {
    let q = |q: f64| (!h.is_empty()).then(|| h.value_at_quantile(q));
    let some = |v: u64| (!h.is_empty()).then_some(v);
    serde_json::json!({
        "count": h.len(),
        "min_us": some(h.min()),
        "mean_us": (!h.is_empty()).then(|| h.mean()),
        "max_us": some(h.max()),
        "p50_us": q(0.50),
        "p90_us": q(0.90),
        "p95_us": q(0.95),
        "p99_us": q(0.99),
        "p99_9_us": q(0.999),
        "p99_99_us": q(0.9999),
        "histogram": crate::record::encode_histogram(h),
        "uptime_us": uptime_us,
    })
    .to_string()
}

/// The upper bounds of `volley_target_handler_seconds`'s buckets, seconds (Prometheus's
/// client defaults, with 1–2.5 ms between).
const BUCKETS_S: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// Appends the handler times `h` to a `/metrics` page as the Prometheus histogram
/// `volley_target_handler_seconds` (cumulative buckets, sum and count): what a service's own
/// latency histogram looks like to `--watch`, whose quantiles are known only to their bucket.
pub(crate) fn prometheus(h: &Histogram<u64>, out: &mut String) {
    use std::fmt::Write as _;
    out.push_str(
        "# HELP volley_target_handler_seconds Handler time of the timed requests (the oracle, \
         since start or the last /stats/reset).\n\
         # TYPE volley_target_handler_seconds histogram\n",
    );
    for le in BUCKETS_S {
        let below = h.count_between(0, (le * 1e6) as u64);
        let _ = writeln!(
            out,
            "volley_target_handler_seconds_bucket{{le=\"{le}\"}} {below}"
        );
    }
    let total = h.len();
    let sum_s = h.mean() * total as f64 / 1e6;
    let _ = write!(
        out,
        "volley_target_handler_seconds_bucket{{le=\"+Inf\"}} {total}\n\
         volley_target_handler_seconds_sum {sum_s}\n\
         volley_target_handler_seconds_count {total}\n"
    );
}

/// A request's handler time, running since its handling started; recorded when dropped with the
/// response body.
#[derive(Debug)]
pub(crate) struct HandlerTimer {
    state: Arc<ServerState>,
    start: Instant,
}

impl HandlerTimer {
    /// The handler time of a request whose handling started at `start`.
    pub(crate) fn new(state: Arc<ServerState>, start: Instant) -> Self {
        HandlerTimer { state, start }
    }
}

impl Drop for HandlerTimer {
    fn drop(&mut self) {
        let us = self.start.elapsed().as_micros();
        self.state
            .handler_times
            .record(u64::try_from(us).unwrap_or(u64::MAX));
    }
}

/// A response body that stops its request's [`HandlerTimer`] when hyper is done with it.
#[derive(Debug)]
pub(crate) struct TimedBody {
    body: TargetBody,
    _timer: Option<HandlerTimer>,
}

impl TimedBody {
    /// `body`, timed by `timer` (`None`: not recorded).
    pub(crate) fn new(body: TargetBody, timer: Option<HandlerTimer>) -> Self {
        TimedBody {
            body,
            _timer: timer,
        }
    }
}

impl Body for TimedBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values around every bucket boundary, and a spread of others.
    fn probes() -> Vec<u64> {
        let mut v: Vec<u64> = (0..5000).collect();
        for p in 11..33 {
            let b = 1u64 << p;
            v.extend([b - 2, b - 1, b, b + 1, b + (b >> 11), b + 3 * (b >> 3)]);
        }
        v.extend([
            123_456,
            9_999_999,
            HIST_HIGH_US - 1,
            HIST_HIGH_US,
            HIST_HIGH_US + 1,
        ]);
        v.extend([u64::MAX]);
        v
    }

    #[test]
    fn buckets_are_hdrs_buckets() {
        let reference = new_histogram();
        for v in probes() {
            let clamped = v.min(HIST_HIGH_US);
            let i = index_of(v);
            assert!(i < BUCKETS, "{v}: index {i}");
            assert_eq!(
                value_of(i),
                reference.lowest_equivalent(clamped),
                "bucket of {v} starts at HDR's lowest equivalent value"
            );
            assert_eq!(index_of(value_of(i)), i, "{v}");
        }
    }

    #[test]
    fn snapshots_match_a_histogram_recorded_directly() {
        let times = HandlerTimes::default();
        let mut direct = new_histogram();
        for v in probes() {
            times.record(v);
            direct.record(v.min(HIST_HIGH_US)).unwrap();
        }
        let h = times.snapshot(false);
        assert_eq!(h.len(), direct.len());
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            assert_eq!(h.value_at_quantile(q), direct.value_at_quantile(q), "q {q}");
        }
        assert_eq!(h.max(), direct.max());
        // Read-and-reset takes everything out exactly once.
        assert_eq!(times.snapshot(true).len(), direct.len());
        assert!(times.snapshot(false).is_empty());
    }

    #[test]
    fn renders_percentiles_and_the_histogram() {
        let times = HandlerTimes::default();
        for us in 1..=1000 {
            times.record(us);
        }
        let doc: serde_json::Value =
            serde_json::from_str(&render(&times.snapshot(false), 42)).unwrap();
        assert_eq!(doc["count"], 1000);
        assert_eq!(doc["p50_us"], 500);
        assert_eq!(doc["p99_us"], 990);
        assert_eq!(doc["max_us"], 1000);
        assert_eq!(doc["uptime_us"], 42);
        let back = crate::record::decode_histogram(doc["histogram"].as_str().unwrap()).unwrap();
        assert_eq!(back.len(), 1000);
        let empty: serde_json::Value = serde_json::from_str(&render(&new_histogram(), 0)).unwrap();
        assert_eq!(
            (empty["count"].as_u64(), empty["p50_us"].is_null()),
            (Some(0), true)
        );
    }
}
