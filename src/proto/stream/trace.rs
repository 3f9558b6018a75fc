//! The protocol-neutral side of a streaming step: what one stream did, as its protocol's tap
//! saw it ([`Trace`]), and how it ended ([`StreamEnd`], the recorder's own word for it). A streaming protocol (today
//! [`super::sse`]) fills a [`Trace`] from the bytes its connection hands it; the engine records
//! it. One trace per VU, reused: nothing is allocated per message once its gap buffer has grown
//! to the longest stream.

use std::time::Instant;

pub use crate::record::recorder::Ending as StreamEnd;

/// Output tokens of an LLM stream, by both counts a server may give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tokens {
    /// Messages that carried a content delta (one token each, as LLM servers stream them).
    pub deltas: u64,
    /// `usage.completion_tokens` of the stream's last usage report, when the server sent one.
    pub usage: Option<u64>,
}

impl Tokens {
    /// The output token count: the server's usage report when there is one, else the deltas.
    pub fn count(&self) -> u64 {
        self.usage.unwrap_or(self.deltas)
    }
}

/// What one stream did. Times are when the connection's read returned the bytes.
#[derive(Debug, Default)]
pub struct Trace {
    /// When the first message arrived.
    pub first: Option<Instant>,
    /// When the last message arrived.
    pub last: Option<Instant>,
    /// Messages received (SSE: events, not counting the end sentinel; LLM mode: content
    /// deltas).
    pub received: u64,
    /// Each gap between consecutive messages received, µs, in order (`received − 1` of them).
    pub gaps_us: Vec<u64>,
    /// Output tokens (LLM mode).
    pub tokens: Tokens,
    /// How it ended.
    pub end: StreamEnd,
    /// When the end sentinel arrived (the stream's end; the body after it is read, not
    /// counted).
    pub ended_at: Option<Instant>,
    /// Messages sent on a streaming request side (gRPC client and bidirectional streams).
    pub sent: u64,
    /// Each round trip, µs: from a message's send to the reply matched to it (bidirectional
    /// streams, matched in order).
    pub round_trips_us: Vec<u64>,
    /// Bytes the stream's protocol sent after its request (WebSocket: every frame, masked,
    /// with its header), bytes; 0 where the request carries the messages (gRPC).
    pub wire_sent: u64,
}

impl Trace {
    /// Forgets the last stream (its buffer kept).
    pub fn reset(&mut self) {
        self.first = None;
        self.last = None;
        self.received = 0;
        self.gaps_us.clear();
        self.tokens = Tokens::default();
        self.end = StreamEnd::Eof;
        self.ended_at = None;
        self.sent = 0;
        self.round_trips_us.clear();
        self.wire_sent = 0;
    }

    /// Counts a message that arrived `at`.
    pub fn message(&mut self, at: Instant) {
        if let Some(last) = self.last {
            let gap = at.saturating_duration_since(last).as_micros();
            self.gaps_us.push(u64::try_from(gap).unwrap_or(u64::MAX));
        }
        self.first.get_or_insert(at);
        self.last = Some(at);
        self.received += 1;
    }
}
