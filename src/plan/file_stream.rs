//! A streaming step's keys in a plan file: `sse`, `grpc_stream` and `websocket`, and their
//! objectives.

use schemars::JsonSchema;
use serde::Deserialize;

/// `sse = { … }`: how a streaming step reads its Server-Sent Events.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SseFile {
    /// The `data` of the event that ends the stream (default `"[DONE]"`; `""`: none, the
    /// stream ends with its body).
    pub done: Option<String>,
    /// Stop reading after this many messages: the rest is left unread and the connection
    /// closed (HTTP/2: the stream reset).
    pub max_messages: Option<u64>,
    /// Read each event as a chunk of this LLM API: `"openai"` (chat completions or
    /// completions). Messages are then the events that carry output text, one token each, and
    /// the stream's tokens and time per output token are measured.
    pub llm: Option<String>,
    /// Objectives for goodput, each optional: `{ ttft = "500ms", tpot = "50ms", e2e = "10s" }`
    /// (time to first token, time per output token, the whole stream).
    pub slo: Option<SloFile>,
}

/// `grpc_stream = { … }`: how a streaming gRPC call sends and reads its messages.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrpcStreamFile {
    /// Client and bidirectional streaming: how many times the step's message is sent (default
    /// 1).
    pub count: Option<u64>,
    /// Client and bidirectional streaming: message k is sent at the stream's start + k × this
    /// (default `"0s"`: all at once). Not with `echo`.
    pub interval: Option<String>,
    /// Bidirectional streaming: send each message after the reply to the one before.
    #[serde(default)]
    pub echo: bool,
    /// Stop reading after this many messages received: the stream is then cancelled.
    pub max_messages: Option<u64>,
    /// Bidirectional streaming: match each reply to the message it answers by the id both
    /// carry at this JSON path, e.g. `"$.id"` (default: in order). Needs a message template
    /// that gives each message its id (`{{ seq }}`).
    #[serde(rename = "match")]
    pub match_id: Option<String>,
    /// Objectives for goodput, each optional: `{ ttft = "100ms", e2e = "2s" }` (time to the
    /// first message, the whole stream).
    pub slo: Option<SloFile>,
}

/// `websocket = { … }`: how a WebSocket stream sends and reads its messages.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WsFile {
    /// How many times the step's body is sent as a message (default 1).
    pub count: Option<u64>,
    /// Message k is sent at the stream's start + k × this (default `"0s"`). Not with `echo`.
    pub interval: Option<String>,
    /// Send each message after the reply to the one before.
    #[serde(default)]
    pub echo: bool,
    /// Read until this many messages arrived (default: one reply per message sent).
    pub max_messages: Option<u64>,
    /// Match each reply to the message it answers by the id both carry at this JSON path,
    /// e.g. `"$.id"` (default: in order). Needs a message template that gives each message
    /// its id (`{{ seq }}`).
    #[serde(rename = "match")]
    pub match_id: Option<String>,
    /// Binary frames (default: text frames, the body then UTF-8).
    #[serde(default)]
    pub binary: bool,
    /// Objectives for goodput, as `grpc_stream.slo`.
    pub slo: Option<SloFile>,
}

/// A streaming step's objectives (`sse.slo`, `grpc_stream.slo`, `websocket.slo`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SloFile {
    /// Time to the first message (token) at most this, e.g. `"500ms"`.
    pub ttft: Option<String>,
    /// LLM mode: time per output token at most this, e.g. `"50ms"`.
    pub tpot: Option<String>,
    /// The whole stream, send to end, at most this, e.g. `"10s"`.
    pub e2e: Option<String>,
}
