//! The stream figures of `run.json` (docs/measurement.md, "Streams"): a group's streaming steps
//! (SSE and gRPC streams), per stream and per message, with the histograms that merge them exactly.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Percentiles;

/// The service-level objectives a stream is judged against for goodput (vLLM's definition: a
/// request is good when it meets every objective given).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamSlo {
    /// Time to the first message at most this, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// LLM mode: time per output token at most this, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
    /// The whole stream (send to end) at most this, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<f64>,
}

impl StreamSlo {
    /// Whether any objective is set.
    pub fn any(&self) -> bool {
        self.ttft_ms.is_some() || self.tpot_ms.is_some() || self.e2e_ms.is_some()
    }
}

/// How a group's streams ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StreamEnds {
    /// The body (or connection) ended.
    pub eof: u64,
    /// The end sentinel arrived (SSE: `data: [DONE]`).
    pub sentinel: u64,
    /// The step's message limit was reached (the rest unread).
    pub limit: u64,
}

/// What the counts of streams that ended in a drain were (in every total, in no rate).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StreamDrained {
    /// Streams.
    pub streams: u64,
    /// Their messages.
    pub messages: u64,
    /// Their output tokens.
    pub tokens: u64,
    /// Their good streams.
    pub good: u64,
    /// Their messages sent.
    #[serde(default)]
    pub sent: u64,
}

/// Where an LLM group's output token counts came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TokensFrom {
    /// Every stream's last `usage` report.
    Usage,
    /// Counting content deltas (no stream sent a usage report).
    Deltas,
    /// Some streams one way, some the other.
    Mixed,
}

/// LLM mode's figures of a group's streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LlmFigures {
    /// Streams read in LLM mode.
    pub streams: u64,
    /// Output tokens of every stream.
    pub tokens: u64,
    /// Where the counts came from.
    pub tokens_from: TokensFrom,
    /// Streams whose count came from the server's `usage`.
    pub usage_counted: u64,
    /// Output tokens of the streams that ended inside the window, over the window, tokens/s.
    pub tokens_per_s: f64,
    /// Time per output token, (end − first token) / (tokens − 1), ms (streams of two tokens
    /// or more).
    pub tpot_ms: Percentiles,
}

/// Goodput: streams that met every objective.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Goodput {
    /// The objectives.
    pub slo: StreamSlo,
    /// Streams judged (every stream measured).
    pub judged: u64,
    /// Of them, those that met every objective (a failed stream meets none).
    pub good: u64,
    /// Good streams that ended inside the window, over the window, streams/s.
    pub rps: f64,
}

/// The encoded histograms (HDR V2, base64, µs) of a group's stream figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StreamHistograms {
    /// Time to first message.
    pub ttft_us: String,
    /// Gaps between messages.
    pub message_gap_us: String,
    /// Stream durations.
    pub stream_us: String,
    /// LLM mode: time per output token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_us: Option<String>,
    /// Round trips of bidirectional streams' messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip_us: Option<String>,
}

/// The request side of streams that send messages (gRPC client and bidirectional streaming).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SentFigures {
    /// Messages sent.
    pub messages: u64,
    /// Messages sent by the streams that ended inside the window, over the window, messages/s.
    pub messages_per_s: f64,
    /// Round trips measured: replies of bidirectional streams matched, in order, to the
    /// messages they answer (the count of `round_trip_ms`).
    pub round_trips: u64,
    /// From a message's send to the reply matched to it, ms.
    pub round_trip_ms: Percentiles,
}

/// The stream figures of a group (or the whole run) with streaming steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamFigures {
    /// Streams measured: attempts of streaming steps that reached the network.
    pub streams: u64,
    /// Of them, those that failed (their errors are the step's errors).
    pub failed: u64,
    /// Streams that received at least one message: the count of `ttft_ms`.
    pub with_messages: u64,
    /// Messages received (SSE: events but the end sentinel; LLM mode: content deltas).
    pub messages: u64,
    /// Streams that ended inside the window, over the window, streams/s.
    pub streams_per_s: f64,
    /// Messages of the streams that ended inside the window, over the window, messages/s.
    pub messages_per_s: f64,
    /// How the streams that did not fail ended.
    pub ended: StreamEnds,
    /// What the counts of streams ended in a drain were.
    pub drained: StreamDrained,
    /// Time to first message: from the due time (open model) or the send (closed model) to the
    /// read that completed the first message, ms.
    pub ttft_ms: Percentiles,
    /// Each gap between consecutive messages of a stream, ms.
    pub message_gap_ms: Percentiles,
    /// From the send to the stream's end, ms (streams that did not fail).
    pub stream_ms: Percentiles,
    /// What streams with a streaming request side sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<SentFigures>,
    /// LLM mode's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmFigures>,
    /// Goodput, when the step has objectives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<Goodput>,
    /// The histograms, for exact merging.
    pub histograms: StreamHistograms,
}
