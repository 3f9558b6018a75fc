//! The percentile ladder every distribution of `run.json` is written as.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Latency figures, milliseconds. `null` when no response was received. A percentile pN is the
/// smallest recorded value that at least N % of the responses do not exceed (HDR, 3 significant
/// digits; see docs/measurement.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Percentiles {
    /// Fastest, ms.
    pub min: Option<f64>,
    /// Arithmetic mean, ms.
    pub mean: Option<f64>,
    /// Standard deviation, ms.
    pub stdev: Option<f64>,
    /// 10th percentile, ms (absent in records of older versions).
    #[serde(default)]
    pub p10: Option<f64>,
    /// 25th percentile, ms (absent in records of older versions).
    #[serde(default)]
    pub p25: Option<f64>,
    /// Median, ms.
    pub p50: Option<f64>,
    /// 75th percentile, ms.
    pub p75: Option<f64>,
    /// 90th percentile, ms.
    pub p90: Option<f64>,
    /// 95th percentile, ms.
    pub p95: Option<f64>,
    /// 99th percentile, ms.
    pub p99: Option<f64>,
    /// 99.9th percentile, ms.
    pub p99_9: Option<f64>,
    /// 99.99th percentile, ms.
    pub p99_99: Option<f64>,
    /// Slowest, ms.
    pub max: Option<f64>,
}

impl Percentiles {
    /// The ordered figures of the ladder, by name: min, p10 … p99.99, max (each `None` when
    /// absent). The order they must be in: each at most the next.
    pub fn ladder(&self) -> [(&'static str, Option<f64>); 11] {
        [
            ("min", self.min),
            ("p10", self.p10),
            ("p25", self.p25),
            ("p50", self.p50),
            ("p75", self.p75),
            ("p90", self.p90),
            ("p95", self.p95),
            ("p99", self.p99),
            ("p99_9", self.p99_9),
            ("p99_99", self.p99_99),
            ("max", self.max),
        ]
    }
}
