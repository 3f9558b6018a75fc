//! The record's histograms, kept whole so that runs merge exactly and reports re-cut them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Serialized HdrHistograms (V2 format, base64), values in microseconds.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Histograms {
    /// Latency as in `summary.latency_ms`.
    pub latency_us: String,
    /// Open model: latency from the actual send.
    pub service_latency_us: Option<String>,
    /// Open model: send lag against the schedule.
    pub lag_us: Option<String>,
    /// TCP connect times (as `summary.timing.connect_ms`); absent when none was measured and
    /// in records of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_us: Option<String>,
    /// TLS handshake times (as `summary.timing.tls_handshake_ms`); absent as above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_handshake_us: Option<String>,
    /// Times to the first byte (as `summary.timing.waiting_ms`); absent as above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_us: Option<String>,
    /// The latency histogram cut in consecutive batches of `batch_s` seconds by completion time
    /// (batch *j*: seconds [j·batch_s, (j+1)·batch_s) since measuring began), the uncertainty's
    /// input (`summary.ci95`); their sum is `latency_us`. Empty in records of older versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batches_us: Vec<String>,
    /// Each batch's length, s; 0 without batches.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batch_s: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
