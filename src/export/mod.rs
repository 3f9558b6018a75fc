//! Exporting volley's own live metrics: the Prometheus text exposition (`--metrics-listen`) and
//! Prometheus remote write (`--prometheus-rw`).
//!
//! Both are made from one [`LiveSnapshot`] (what the run knows at a per-second tick) through one
//! list of [`Series`] ([`series`]), so the page and the pushed samples are the same numbers by
//! construction. Series (every one labelled `scenario` and `step`, names from the plan, so their
//! number is bounded by the plan; the whole run is `scenario=""`, `step=""`):
//!
//! | series | type | definition |
//! | --- | --- | --- |
//! | `volley_requests_total` | counter | measured requests that reached the network (`summary.requests`), since the start |
//! | `volley_errors_total{kind}` | counter | failed attempts by error kind (`summary.errors_by_kind`) |
//! | `volley_responses_total{status}` | counter | responses by status code (`summary.status`) |
//! | `volley_dropped_iterations_total` | counter | open model: iterations not started in time (run, scenarios) |
//! | `volley_in_flight` | gauge | requests in flight at the end of the last second (whole run) |
//! | `volley_active_vus` | gauge | VUs the closed-model schedule runs now |
//! | `volley_rate_asked_per_second` | gauge | the rate the open-model schedule asks for now, iterations/s |
//! | `volley_rate_achieved_per_second` | gauge | iterations completed in the last second every worker reported (run, scenarios) |
//! | `volley_generator_cpu_ratio` | gauge | volley's process CPU over the last second, per worker thread, 0–1 (whole run) |
//! | `volley_generator_steal_ratio` | gauge | the machine's CPU time the hypervisor took over the last second, 0–1 (whole run) |
//! | `volley_latency_seconds` | histogram | latency of the responses, seconds, fixed buckets [`LATENCY_BUCKETS_S`] |
//!
//! docs/measurement.md ("Live metrics") defines them. Layout: [`live`] is the run's observer
//! that fills the snapshot from the workers' interval snapshots; [`exposition`] and [`serve`]
//! the page; [`remote_write`] and [`push`] the pushes. The outputs that start and end them for
//! a command are `run::output`'s (`MetricsPage`, `Pushes`), above this layer.

pub mod exposition;
pub mod family;
pub mod http_post;
pub mod live;
pub mod otlp;
pub mod push;
pub mod remote_write;
pub mod serve;

pub use family::Family;
pub use live::Exporter;

use std::net::SocketAddr;

/// Why the exporters could not start.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The metrics page's address cannot be listened on.
    #[error("--metrics-listen {addr}: cannot listen there: {source}")]
    Listen {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The remote-write URL is not one volley can push to.
    #[error("--prometheus-rw: {0}")]
    RemoteWrite(#[from] http_post::PushError),
    /// The OTLP endpoint or settings are not ones volley can push with.
    #[error("--otlp: {0}")]
    Otlp(http_post::PushError),
}

use hdrhistogram::Histogram;

/// Upper bounds of the exported latency buckets, seconds (`+Inf` implicit): 100 µs to 60 s.
pub const LATENCY_BUCKETS_S: [f64; 18] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0,
];

/// Cumulative latency buckets, as Prometheus histograms have them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LatencyBuckets {
    /// Responses at or under each of [`LATENCY_BUCKETS_S`], cumulative.
    pub le: [u64; LATENCY_BUCKETS_S.len()],
    /// All responses (the `+Inf` bucket).
    pub count: u64,
    /// Sum of the latencies, seconds.
    pub sum_s: f64,
}

impl LatencyBuckets {
    /// From an HDR histogram of latencies in µs (volley's recorders').
    pub fn from_hdr_us(h: &Histogram<u64>) -> Self {
        let mut b = Self::default();
        b.add_hdr_us(h);
        b
    }

    /// Adds an HDR histogram of latencies in µs. A value counts under a bound when the lowest
    /// value of its HDR bucket is at or under it, so bucket counts are exact up to the
    /// histogram's precision at each bound (3 significant digits); the sum is count × mean.
    pub fn add_hdr_us(&mut self, h: &Histogram<u64>) {
        for v in h.iter_recorded() {
            let low_us = h.lowest_equivalent(v.value_iterated_to());
            let n = v.count_at_value();
            for (slot, bound_s) in self.le.iter_mut().zip(LATENCY_BUCKETS_S) {
                if low_us <= (bound_s * 1e6) as u64 {
                    *slot += n;
                }
            }
        }
        self.count += h.len();
        self.sum_s += h.mean() * h.len() as f64 / 1e6;
    }
}

/// The figures of one scope (the whole run, a scenario, or one step of one).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScopeFigures {
    /// Scenario name (`""`: the whole run).
    pub scenario: String,
    /// Step name (`""`: the whole scenario).
    pub step: String,
    /// Exchanges completed since the start (cumulative).
    pub requests: u64,
    /// Failures by kind name, cumulative; kinds never seen may be left out.
    pub errors: Vec<(&'static str, u64)>,
    /// Responses by status code, cumulative.
    pub statuses: Vec<(u16, u64)>,
    /// Iterations dropped by the open model, cumulative (`None`: not counted for this scope,
    /// a step).
    pub dropped: Option<u64>,
    /// Exchanges in flight now (`None`: not known for this scope).
    pub in_flight: Option<u64>,
    /// Virtual users the schedule runs now (`None`: no closed-model scenario in this scope).
    pub active_vus: Option<u64>,
    /// Asked rate now, iterations/s (`None`: no open-model scenario in this scope).
    pub asked_per_s: Option<f64>,
    /// Achieved rate over the last second, iterations/s (`None`: not counted for this scope, a
    /// step).
    pub achieved_per_s: Option<f64>,
    /// The generator's CPU share over the last second ([`crate::engine::CpuShare`]), 0–1
    /// (`None`: not known for this scope; only the whole run of a run in this process has it).
    pub generator_cpu: Option<f64>,
    /// The machine's CPU steal share over the last second ([`crate::engine::StealShare`]), 0–1
    /// (`None`: not known; as `generator_cpu`, and where `/proc/stat` cannot be read).
    pub generator_steal: Option<f64>,
    /// Latency of the responses since the start (cumulative).
    pub latency: LatencyBuckets,
    /// Streams since the start and their messages, cumulative (`None`: no stream yet).
    pub streams: Option<crate::record::recorder::StreamTally>,
}

/// What the run knows at one tick: every scope's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveSnapshot {
    /// Wall-clock time of the tick, ms since the Unix epoch (remote write's timestamps).
    pub unix_ms: i64,
    /// The scopes: the whole run first, then scenarios and steps.
    pub scopes: Vec<ScopeFigures>,
    /// Labels every series carries, sorted by name: the run's id (`run_id`) and its tags (set by
    /// the outputs' façade for each run).
    pub labels: Vec<(String, String)>,
}

/// Whether a series is a counter, a gauge, or part of a histogram (for `# TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesType {
    /// Monotonic.
    Counter,
    /// Goes up and down.
    Gauge,
    /// `_bucket`, `_sum`, `_count` of a histogram family.
    Histogram,
}

/// One exported series: its family, full sample name, labels (sorted by name) and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The family (`Latency` for `volley_latency_seconds_bucket`).
    pub family: Family,
    /// The family's type.
    pub kind: SeriesType,
    /// The sample's name.
    pub name: String,
    /// Labels, sorted by name (as remote write requires).
    pub labels: Vec<(String, String)>,
    /// The value.
    pub value: f64,
}

/// Every series of a snapshot, grouped by family in [`Family::ALL`] order.
pub fn series(snapshot: &LiveSnapshot) -> Vec<Series> {
    let mut out = Vec::new();
    for family in Family::ALL {
        for scope in &snapshot.scopes {
            scope_series(family, scope, &snapshot.labels, &mut out);
        }
    }
    out
}

fn scope_series(
    family: Family,
    s: &ScopeFigures,
    every: &[(String, String)],
    out: &mut Vec<Series>,
) {
    let name = family.name();
    let base = || {
        let mut labels = vec![
            ("scenario".to_string(), s.scenario.clone()),
            ("step".to_string(), s.step.clone()),
        ];
        labels.extend_from_slice(every);
        labels
    };
    let mut push = |sample: &str, extra: Option<(&'static str, String)>, value: f64| {
        let mut labels = base();
        labels.extend(extra.map(|(k, v)| (k.to_string(), v)));
        labels.sort_by(|a, b| a.0.cmp(&b.0));
        out.push(Series {
            family,
            kind: family.kind(),
            name: sample.to_string(),
            labels,
            value,
        });
    };
    match family {
        Family::Requests => push(name, None, s.requests as f64),
        Family::Errors => {
            for (kind, n) in &s.errors {
                push(name, Some(("kind", (*kind).to_string())), *n as f64);
            }
        }
        Family::Responses => {
            for (status, n) in &s.statuses {
                push(name, Some(("status", status.to_string())), *n as f64);
            }
        }
        Family::DroppedIterations => {
            if let Some(n) = s.dropped {
                push(name, None, n as f64);
            }
        }
        Family::Streams => {
            if let Some(t) = s.streams {
                push(name, None, t.streams as f64);
            }
        }
        Family::StreamMessages => {
            if let Some(t) = s.streams {
                push(
                    name,
                    Some(("direction", "received".into())),
                    t.received as f64,
                );
                push(name, Some(("direction", "sent".into())), t.sent as f64);
            }
        }
        Family::InFlight => {
            if let Some(n) = s.in_flight {
                push(name, None, n as f64);
            }
        }
        Family::ActiveVus => {
            if let Some(n) = s.active_vus {
                push(name, None, n as f64);
            }
        }
        Family::RateAsked => {
            if let Some(rate) = s.asked_per_s {
                push(name, None, rate);
            }
        }
        Family::RateAchieved => {
            if let Some(rate) = s.achieved_per_s {
                push(name, None, rate);
            }
        }
        Family::GeneratorCpu => {
            if let Some(share) = s.generator_cpu {
                push(name, None, share);
            }
        }
        Family::GeneratorSteal => {
            if let Some(share) = s.generator_steal {
                push(name, None, share);
            }
        }
        Family::Latency => {
            let bucket = format!("{name}_bucket");
            for (bound, n) in LATENCY_BUCKETS_S.iter().zip(s.latency.le) {
                push(&bucket, Some(("le", bound.to_string())), n as f64);
            }
            push(&bucket, Some(("le", "+Inf".into())), s.latency.count as f64);
            push(&format!("{name}_sum"), None, s.latency.sum_s);
            push(&format!("{name}_count"), None, s.latency.count as f64);
        }
    }
}
