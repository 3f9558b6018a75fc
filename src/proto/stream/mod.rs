//! Streaming steps: a response body read as a stream of messages as it arrives, traced per
//! stream and per message ([`Trace`]) for the engine to record.
//!
//! The seam a streaming protocol plugs into. A new one is its module here (as [`sse`],
//! [`grpc`] and [`ws`]), plus three files outside it: its `pub mod`, [`Spec`] variant, [`State`] and
//! [`Tap`] arms in this file; its key in the plan file (`plan/file.rs`); its reading into a
//! [`Spec`] (`plan/read/stream.rs`).
//! The engine, the recorder, `run.json`, the reports and the thresholds see only [`Trace`] and
//! [`Spec`]'s methods; `tests/seams.rs` keeps the variants in these files.

pub mod grpc;
pub mod ids;
pub mod pace;
pub mod sse;
mod trace;
pub mod ws;

pub use trace::{StreamEnd, Tokens, Trace};

use std::time::Instant;

use super::message::{BodyTap, Messages, NextMessage, NextSend, Tapped};

/// What a streaming step asks of its protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    /// Server-Sent Events: the response body is a `text/event-stream`.
    Sse(sse::SseSpec),
    /// A gRPC streaming call (server, client or bidirectional streaming).
    Grpc(grpc::GrpcStreamSpec),
    /// A WebSocket: the step's request upgrades its HTTP/1.1 connection.
    Ws(ws::WsSpec),
}

impl Spec {
    /// Its protocol's name in reports: `sse`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sse(_) => "sse",
            Self::Grpc(_) => "grpc",
            Self::Ws(_) => "websocket",
        }
    }

    /// Whether its request side is a stream of messages (gRPC client and bidirectional
    /// streams).
    pub fn streams_request(&self) -> bool {
        match self {
            Self::Sse(_) => false,
            Self::Grpc(g) => g.client_streams,
            Self::Ws(_) => true,
        }
    }

    /// Whether its replies are matched to its messages as round trips (bidirectional streams).
    pub fn round_trips(&self) -> bool {
        match self {
            Self::Sse(_) => false,
            Self::Grpc(g) => g.round_trips(),
            Self::Ws(_) => true,
        }
    }

    /// Where the id lies that its replies share with the messages they answer, when they are
    /// matched by id (else in order).
    pub fn match_id(&self) -> Option<&ids::IdPath> {
        match self {
            Self::Sse(_) => None,
            Self::Grpc(g) => g.match_id.as_ref().map(|m| &m.path),
            Self::Ws(w) => w.match_id.as_ref(),
        }
    }

    /// How long its request side takes to send on schedule, from its first message to its
    /// last (`interval` × (`count` − 1)); zero when it does not pace its sends.
    pub fn send_span(&self) -> std::time::Duration {
        let (count, pace) = match self {
            Self::Sse(_) => return std::time::Duration::ZERO,
            Self::Grpc(g) => (g.count, g.pace),
            Self::Ws(w) => (w.count, w.pace),
        };
        pace.offset(count.saturating_sub(1)).unwrap_or_default()
    }

    /// The message its every stream sends, as the plan wrote it, and whether it goes in binary
    /// frames: a WebSocket's (a gRPC stream's is the step's request; SSE sends none).
    pub fn written_message(&self) -> Option<(&[u8], bool)> {
        match self {
            Self::Ws(w) => Some((&w.message, w.binary)),
            Self::Sse(_) | Self::Grpc(_) => None,
        }
    }

    /// Whether its messages are an LLM's output tokens (LLM mode).
    pub fn is_llm(&self) -> bool {
        match self {
            Self::Sse(s) => s.llm.is_some(),
            Self::Grpc(_) | Self::Ws(_) => false,
        }
    }
}

/// A VU's state for its streaming steps, one per protocol, reused from stream to stream.
#[derive(Debug, Default)]
pub struct State {
    sse: sse::SseState,
    grpc: grpc::GrpcState,
    ws: ws::WsState,
}

impl State {
    /// Ready for a new stream of `spec`; returns the tap its body goes through. `messages`
    /// renders each message of a streaming request side whose message is a template.
    pub fn start<'a>(
        &'a mut self,
        spec: &'a Spec,
        messages: Option<&'a mut dyn Messages>,
    ) -> Tap<'a> {
        match spec {
            Spec::Sse(s) => {
                self.sse.start();
                Tap::Sse(sse::Tap {
                    spec: s,
                    state: &mut self.sse,
                })
            }
            Spec::Grpc(s) => {
                self.grpc.start(s);
                Tap::Grpc(grpc::Tap {
                    spec: s,
                    state: &mut self.grpc,
                    messages,
                })
            }
            Spec::Ws(s) => {
                self.ws.start(s);
                Tap::Ws(ws::Tap {
                    spec: s,
                    state: &mut self.ws,
                    messages,
                })
            }
        }
    }

    /// The trace of the last stream of `spec`.
    pub fn trace(&self, spec: &Spec) -> &Trace {
        match spec {
            Spec::Sse(_) => &self.sse.trace,
            Spec::Grpc(_) => &self.grpc.trace,
            Spec::Ws(_) => &self.ws.trace,
        }
    }
}

/// The [`BodyTap`] of one stream, its protocol's.
pub enum Tap<'a> {
    /// Server-Sent Events.
    Sse(sse::Tap<'a>),
    /// A gRPC stream.
    Grpc(grpc::Tap<'a>),
    /// A WebSocket.
    Ws(ws::Tap<'a>),
}

impl BodyTap for Tap<'_> {
    fn data(&mut self, data: &[u8], at: Instant) -> Tapped {
        match self {
            Self::Sse(t) => t.data(data, at),
            Self::Grpc(t) => t.data(data, at),
            Self::Ws(t) => t.data(data, at),
        }
    }

    fn duplex(&self) -> bool {
        match self {
            Self::Sse(t) => t.duplex(),
            Self::Grpc(t) => t.duplex(),
            Self::Ws(t) => t.duplex(),
        }
    }

    fn next_send(&mut self, now: Instant) -> NextSend {
        match self {
            Self::Sse(t) => t.next_send(now),
            Self::Grpc(t) => t.next_send(now),
            Self::Ws(t) => t.next_send(now),
        }
    }

    fn sent(&mut self, at: Instant) {
        match self {
            Self::Sse(t) => t.sent(at),
            Self::Grpc(t) => t.sent(at),
            Self::Ws(t) => t.sent(at),
        }
    }

    fn upgrade(&mut self) -> Option<&mut dyn crate::proto::message::Upgrade> {
        match self {
            Self::Sse(t) => t.upgrade(),
            Self::Grpc(t) => t.upgrade(),
            Self::Ws(t) => t.upgrade(),
        }
    }

    fn message(&mut self) -> NextMessage {
        match self {
            Self::Sse(t) => t.message(),
            Self::Grpc(t) => t.message(),
            Self::Ws(t) => t.message(),
        }
    }
}
