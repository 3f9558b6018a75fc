//! Server-Sent Events: a streaming step over HTTP/1.1 or HTTP/2 whose response body is a
//! `text/event-stream`. [`Tap`] parses it as it arrives ([`parse`]) and fills the stream's
//! [`Trace`]; in LLM mode each event is read as an OpenAI-compatible chunk ([`llm`]) and only the
//! events that carry content count as messages (tokens).

pub mod llm;
pub mod parse;

use std::time::Instant;

pub use self::parse::{Event, Parser};
use super::{StreamEnd, Trace};
use crate::proto::message::{BodyTap, Tapped};

/// What a plan's `sse = { … }` asks of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseSpec {
    /// The `data` of the event that ends the stream (default `[DONE]`; none: only the body's end
    /// or the limit does).
    pub done: Option<Box<[u8]>>,
    /// Stop reading after this many messages (none: read to the end).
    pub max_messages: Option<u64>,
    /// Read events as this API's chunks (messages are then content deltas).
    pub llm: Option<llm::Api>,
}

impl Default for SseSpec {
    fn default() -> Self {
        Self {
            done: Some(b"[DONE]"[..].into()),
            max_messages: None,
            llm: None,
        }
    }
}

/// A VU's SSE state: the parser and the trace of the current stream, reused.
#[derive(Debug, Default)]
pub struct SseState {
    /// The parser.
    pub parser: Parser,
    /// What the current stream did.
    pub trace: Trace,
}

/// The [`BodyTap`] of one SSE stream: `spec`'s rules over a VU's `state`.
pub struct Tap<'a> {
    /// What the step asks.
    pub spec: &'a SseSpec,
    /// The VU's parser and trace ([`SseState::start`] them first).
    pub state: &'a mut SseState,
}

impl SseState {
    /// Forgets the last stream: ready for the next.
    pub fn start(&mut self) {
        self.parser.reset();
        self.trace.reset();
    }
}

impl BodyTap for Tap<'_> {
    fn data(&mut self, data: &[u8], at: Instant) -> Tapped {
        let Self { spec, state } = self;
        let trace = &mut state.trace;
        state
            .parser
            .feed(data, |event| on_event(spec, trace, event, at))
    }
}

/// One event: the end sentinel, a message, or (LLM mode) a chunk without content.
fn on_event(spec: &SseSpec, trace: &mut Trace, event: Event<'_>, at: Instant) -> Tapped {
    if trace.ended_at.is_some() {
        return Tapped::More;
    }
    if spec.done.as_deref() == Some(event.data) {
        // Read on to the body's end, as clients do (the OpenAI SDK drains the stream), so
        // that the connection is reused: a new one per stream would put a connect (and a TLS
        // handshake) into the next stream's time to first message.
        trace.end = StreamEnd::Sentinel;
        trace.ended_at = Some(at);
        return Tapped::More;
    }
    let is_message = match spec.llm {
        None => true,
        Some(api) => {
            let chunk = llm::read_chunk(api, event.data);
            if let Some(n) = chunk.usage {
                trace.tokens.usage = Some(n);
            }
            chunk.has_content
        }
    };
    if is_message {
        trace.message(at);
        if spec.llm.is_some() {
            trace.tokens.deltas += 1;
        }
        if spec.max_messages.is_some_and(|max| trace.received >= max) {
            trace.end = StreamEnd::Limit;
            return Tapped::Stop;
        }
    }
    Tapped::More
}
