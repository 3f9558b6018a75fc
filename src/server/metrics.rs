//! Lock-free request counters, rendered as Prometheus text by `GET /metrics`.
//!
//! Requests are counted in a fixed array of atomics indexed by route template
//! × status code (100..=599), so cardinality is bounded whatever clients send.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// A route template: the `path` label of `volley_target_requests_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RouteId {
    /// `GET /`
    Root,
    /// `/delay`
    Delay,
    /// `/status/{code}`
    Status,
    /// `/bytes/{n}`
    Bytes,
    /// `/echo`
    Echo,
    /// `GET /headers`
    Headers,
    /// `/tasks`
    Tasks,
    /// `/tasks/{id}`
    TaskById,
    /// `/metrics`
    Metrics,
    /// `/stats` and `/stats/reset`
    Stats,
    /// `/chaos/{kind}` reached hyper (sent on a reused connection).
    Chaos,
    /// A gRPC call (any method).
    Grpc,
    /// `/cookies`
    Cookies,
    /// `/cookies/set`
    CookiesSet,
    /// `/cookies/need`
    CookiesNeed,
    /// `/sse`
    Sse,
    /// `/ws`
    Ws,
    /// `/v1/chat/completions` and `/v1/completions`
    Completions,
    /// Anything else (404).
    Unmatched,
}

impl RouteId {
    const ALL: [RouteId; 19] = [
        RouteId::Root,
        RouteId::Delay,
        RouteId::Status,
        RouteId::Bytes,
        RouteId::Echo,
        RouteId::Headers,
        RouteId::Tasks,
        RouteId::TaskById,
        RouteId::Metrics,
        RouteId::Stats,
        RouteId::Chaos,
        RouteId::Grpc,
        RouteId::Cookies,
        RouteId::CookiesSet,
        RouteId::CookiesNeed,
        RouteId::Sse,
        RouteId::Ws,
        RouteId::Completions,
        RouteId::Unmatched,
    ];

    /// The label value.
    pub(crate) fn template(self) -> &'static str {
        match self {
            RouteId::Root => "/",
            RouteId::Delay => "/delay",
            RouteId::Status => "/status/{code}",
            RouteId::Bytes => "/bytes/{n}",
            RouteId::Echo => "/echo",
            RouteId::Headers => "/headers",
            RouteId::Tasks => "/tasks",
            RouteId::TaskById => "/tasks/{id}",
            RouteId::Metrics => "/metrics",
            RouteId::Stats => "/stats",
            RouteId::Chaos => "/chaos/{kind}",
            RouteId::Grpc => "grpc",
            RouteId::Cookies => "/cookies",
            RouteId::CookiesSet => "/cookies/set",
            RouteId::CookiesNeed => "/cookies/need",
            RouteId::Sse => "/sse",
            RouteId::Ws => "/ws",
            RouteId::Completions => "/v1/completions",
            RouteId::Unmatched => "unmatched",
        }
    }
}

/// What a connection served by the raw chaos handler did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChaosKind {
    /// `/chaos/reset`
    Reset,
    /// `/chaos/hang`
    Hang,
    /// `/chaos/garbage`
    Garbage,
    /// `/chaos/close`
    Close,
    /// `/chaos/slow`
    Slow,
    /// `/chaos/reset-body`
    ResetBody,
    /// `/chaos/headers`
    Headers,
    /// `/chaos/long-header`
    LongHeader,
    /// `/chaos/bad-chunked`
    BadChunked,
    /// `/chaos/deaf`
    Deaf,
    /// Unknown chaos path, bad parameters, or a non-chaos request (4xx).
    Invalid,
}

impl ChaosKind {
    const ALL: [ChaosKind; 11] = [
        ChaosKind::Reset,
        ChaosKind::Hang,
        ChaosKind::Garbage,
        ChaosKind::Close,
        ChaosKind::Slow,
        ChaosKind::ResetBody,
        ChaosKind::Headers,
        ChaosKind::LongHeader,
        ChaosKind::BadChunked,
        ChaosKind::Deaf,
        ChaosKind::Invalid,
    ];

    fn label(self) -> &'static str {
        match self {
            ChaosKind::Reset => "reset",
            ChaosKind::Hang => "hang",
            ChaosKind::Garbage => "garbage",
            ChaosKind::Close => "close",
            ChaosKind::Slow => "slow",
            ChaosKind::ResetBody => "reset-body",
            ChaosKind::Headers => "headers",
            ChaosKind::LongHeader => "long-header",
            ChaosKind::BadChunked => "bad-chunked",
            ChaosKind::Deaf => "deaf",
            ChaosKind::Invalid => "invalid",
        }
    }
}

const MIN_STATUS: u16 = 100;
const STATUSES: usize = 500;

/// All of the target's counters.
#[derive(Debug)]
pub(crate) struct Metrics {
    /// `RouteId::ALL.len() × STATUSES` request counters.
    requests: Box<[AtomicU64]>,
    chaos: [AtomicU64; ChaosKind::ALL.len()],
    in_flight: AtomicI64,
    connections: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            requests: (0..RouteId::ALL.len() * STATUSES)
                .map(|_| AtomicU64::new(0))
                .collect(),
            chaos: Default::default(),
            in_flight: AtomicI64::new(0),
            connections: AtomicU64::new(0),
        }
    }
}

/// Decrements the in-flight gauge when dropped.
#[derive(Debug)]
pub(crate) struct InFlight<'a>(&'a AtomicI64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Metrics {
    /// Counts one request in flight until the guard is dropped.
    pub(crate) fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(&self.in_flight)
    }

    /// Counts one answered request.
    pub(crate) fn record(&self, route: RouteId, status: u16) {
        let slot = usize::from(status.wrapping_sub(MIN_STATUS));
        if slot < STATUSES {
            self.requests[route as usize * STATUSES + slot].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts one request served by the chaos handler.
    pub(crate) fn record_chaos(&self, kind: ChaosKind) {
        self.chaos[kind as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one accepted connection.
    pub(crate) fn record_connection(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    /// Prometheus text exposition format (version 0.0.4); zero counters are
    /// left out.
    pub(crate) fn render(&self) -> String {
        let mut out = String::with_capacity(1024);
        out.push_str(
            "# HELP volley_target_requests_total Requests answered by hyper, by route template and status.\n\
             # TYPE volley_target_requests_total counter\n",
        );
        for route in RouteId::ALL {
            let row = &self.requests[route as usize * STATUSES..][..STATUSES];
            for (slot, counter) in row.iter().enumerate() {
                let n = counter.load(Ordering::Relaxed);
                if n > 0 {
                    let _ = writeln!(
                        out,
                        "volley_target_requests_total{{path=\"{}\",status=\"{}\"}} {n}",
                        route.template(),
                        slot + MIN_STATUS as usize
                    );
                }
            }
        }
        out.push_str(
            "# HELP volley_target_chaos_total Requests served by the raw /chaos/ handler, by behaviour.\n\
             # TYPE volley_target_chaos_total counter\n",
        );
        for kind in ChaosKind::ALL {
            let n = self.chaos[kind as usize].load(Ordering::Relaxed);
            if n > 0 {
                let _ = writeln!(
                    out,
                    "volley_target_chaos_total{{kind=\"{}\"}} {n}",
                    kind.label()
                );
            }
        }
        let _ = write!(
            out,
            "# HELP volley_target_in_flight Requests being handled now (including this scrape).\n\
             # TYPE volley_target_in_flight gauge\n\
             volley_target_in_flight {}\n\
             # HELP volley_target_connections_total TCP connections accepted.\n\
             # TYPE volley_target_connections_total counter\n\
             volley_target_connections_total {}\n",
            self.in_flight.load(Ordering::Relaxed).max(0),
            self.connections.load(Ordering::Relaxed),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_route_and_status() {
        let m = Metrics::default();
        m.record(RouteId::Root, 200);
        m.record(RouteId::Root, 200);
        m.record(RouteId::TaskById, 404);
        m.record(RouteId::Status, 599);
        m.record(RouteId::Status, 600); // out of range: ignored
        m.record(RouteId::Status, 99);
        m.record_chaos(ChaosKind::Reset);
        m.record_connection();
        let text = m.render();
        assert!(text.contains("volley_target_requests_total{path=\"/\",status=\"200\"} 2\n"));
        assert!(
            text.contains("volley_target_requests_total{path=\"/tasks/{id}\",status=\"404\"} 1\n")
        );
        assert!(text.contains("{path=\"/status/{code}\",status=\"599\"} 1\n"));
        assert!(!text.contains("status=\"600\""));
        assert!(text.contains("volley_target_chaos_total{kind=\"reset\"} 1\n"));
        assert!(text.contains("volley_target_in_flight 0\n"));
        assert!(text.contains("volley_target_connections_total 1\n"));
    }

    #[test]
    fn in_flight_guard() {
        let m = Metrics::default();
        let a = m.in_flight();
        let b = m.in_flight();
        assert!(m.render().contains("volley_target_in_flight 2\n"));
        drop(a);
        drop(b);
        assert!(m.render().contains("volley_target_in_flight 0\n"));
    }
}
