//! What was watched on the target's side during a run (`--watch`, `[[watch]]`, the processes a
//! suite starts): the record's `watch` section. Every per-second list is aligned with the run's
//! own `series`: entry `k` is second `k` of the measured window (see `docs/measurement.md`,
//! "Watching the target").

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Everything watched during the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Watched {
    /// Prometheus metrics pages.
    #[serde(default)]
    pub prom: Vec<PromWatched>,
    /// Process trees.
    #[serde(default)]
    pub processes: Vec<ProcessWatched>,
}

/// One Prometheus metrics page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PromWatched {
    /// The page's URL.
    pub url: String,
    /// The selectors as given (empty: every series, up to `max_series`).
    pub metrics: Vec<String>,
    /// Time between two scrapes, seconds.
    pub interval_s: f64,
    /// Series kept at most.
    pub max_series: usize,
    /// Scrapes attempted while the run lasted (warm-up and drain included).
    pub scrapes: u64,
    /// Failed scrapes by kind (`refused`, `timeout`, `status`, `not_metrics`, `too_large`,
    /// `malformed`, `nothing_matched`, `io`); kinds that did not occur are left out.
    pub failures: BTreeMap<String, u64>,
    /// The last failure's message, if any.
    pub last_failure: Option<String>,
    /// Selected samples not kept because `max_series` series were already kept (the largest
    /// count of one scrape).
    pub over_cap: u64,
    /// The series kept, one entry per figure (a histogram gives its rate and its quantiles).
    pub series: Vec<WatchedSeries>,
}

impl PromWatched {
    /// Failed scrapes of every kind.
    pub fn failed(&self) -> u64 {
        self.failures.values().sum()
    }
}

/// A metric family's declared kind (`# TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// A counter.
    Counter,
    /// A gauge.
    Gauge,
    /// A histogram.
    Histogram,
    /// A summary.
    Summary,
    /// No or an unknown `# TYPE`.
    Untyped,
}

/// What the values of a watched series are.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeriesStat {
    /// Increase per second over the interval (counters; a histogram's observations).
    Rate,
    /// The value at the scrape (gauges, untyped, a summary's quantiles).
    Value,
    /// A histogram's quantile over the interval (`quantile` says which), in the metric's unit.
    Quantile,
}

/// One watched figure, second by second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WatchedSeries {
    /// The sample's name (a histogram's family name).
    pub name: String,
    /// Its labels as `{a="x",b="y"}`, sorted (empty when none).
    pub labels: String,
    /// The family's kind.
    pub kind: MetricKind,
    /// What the values are.
    pub stat: SeriesStat,
    /// With `stat` = `quantile`: which, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantile: Option<f64>,
    /// One value per second of the run's `series` (null where no scrape gave one).
    pub values: Vec<Option<f64>>,
    /// With `stat` = `quantile`: per second, the bucket the quantile lies in. The value is only
    /// an estimate inside it (docs/measurement.md, "Watching the target"); absent for other
    /// series and in records of older versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buckets: Vec<Option<QuantileBucket>>,
    /// Over `values`.
    pub stats: SeriesStats,
}

/// The bucket of a histogram a quantile lies in, in the metric's unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QuantileBucket {
    /// The bucket's lower bound (the previous bucket's `le`).
    pub lower: f64,
    /// Its upper bound (`le`); null for the `+Inf` bucket.
    pub upper: Option<f64>,
}

impl QuantileBucket {
    /// "0.02–0.05", "> 0.1" (the `+Inf` bucket), each bound as `value` writes it.
    pub fn describe(&self, value: impl Fn(Option<f64>) -> String) -> String {
        match self.upper {
            Some(upper) => format!("{}–{}", value(Some(self.lower)), value(Some(upper))),
            None => format!("> {}", value(Some(self.lower))),
        }
    }
}

impl WatchedSeries {
    /// `name{labels}` with the figure: `… (per s)`, `… p99`.
    pub fn display_name(&self) -> String {
        let what = match (self.stat, self.quantile) {
            (SeriesStat::Rate, _) => " (per s)".to_string(),
            (SeriesStat::Quantile, Some(q)) => format!(" p{} (bucket)", q * 100.0),
            _ => String::new(),
        };
        format!("{}{}{what}", self.name, self.labels)
    }
}

/// Start, end, min, max and mean of a per-second list (null when it has no value).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeriesStats {
    /// The first value.
    pub start: Option<f64>,
    /// The last value.
    pub end: Option<f64>,
    /// The smallest.
    pub min: Option<f64>,
    /// The largest.
    pub max: Option<f64>,
    /// The arithmetic mean of the values present.
    pub mean: Option<f64>,
    /// Seconds with a value.
    pub samples: u64,
}

impl SeriesStats {
    /// The figures of `values`, ignoring the gaps.
    pub fn of(values: &[Option<f64>]) -> Self {
        let present: Vec<f64> = values.iter().flatten().copied().collect();
        let n = present.len();
        if n == 0 {
            return Self::default();
        }
        Self {
            start: present.first().copied(),
            end: present.last().copied(),
            min: present.iter().copied().reduce(f64::min),
            max: present.iter().copied().reduce(f64::max),
            mean: Some(present.iter().sum::<f64>() / n as f64),
            samples: n as u64,
        }
    }
}

pub use crate::watch::spec::ProcessRole;

/// One process tree (the process and its descendants).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessWatched {
    /// The root's PID.
    pub pid: u32,
    /// Why it was watched.
    pub role: ProcessRole,
    /// Its command line when the run started (`/proc/PID/cmdline`), empty if unreadable.
    pub command: String,
    /// Time between two samples, seconds.
    pub interval_s: f64,
    /// CPU cores used (user + system CPU seconds of the tree per second) in each second of the
    /// run's `series`.
    pub cpu_cores: Vec<Option<f64>>,
    /// Resident memory of the tree at the end of each second, bytes.
    pub rss_bytes: Vec<Option<u64>>,
    /// Threads of the tree at the end of each second.
    pub threads: Vec<Option<u64>>,
    /// Open file descriptors of the tree at the end of each second.
    pub fds: Vec<Option<u64>>,
    /// User + system CPU seconds of the tree over the seconds sampled in the measured window.
    pub cpu_s: Option<f64>,
    /// Those seconds' span, seconds: `cpu_s` over it is `mean_cores`.
    pub sampled_s: f64,
    /// Mean CPU cores used: `cpu_s` / `sampled_s`.
    pub mean_cores: Option<f64>,
    /// Largest RSS of the tree seen at a sample in the measured window, bytes.
    pub peak_rss_bytes: Option<u64>,
    /// When the process was found gone, seconds since measuring began (null while it lived).
    pub exited_at_s: Option<f64>,
    /// Why it could not be sampled at all, if so (e.g. no `/proc`).
    pub error: Option<String>,
}
