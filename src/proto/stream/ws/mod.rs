//! WebSocket (RFC 6455) streams: the step's request is the HTTP/1.1 upgrade (`GET` with
//! `Upgrade: websocket`), and after the server's `101 Switching Protocols` the connection
//! carries the stream: the step's message (or one rendered per message) sent `count` times by
//! its [`Pace`], the server's messages counted as they arrive and matched to the messages sent
//! as round trips (in order, or by id: [`super::ids`]),
//! then the close handshake. The framing is the `fastwebsockets` crate's, chosen by a recorded
//! benchmark (`bench/ws-crates/README.md`); the upgrade is written here, on volley's own
//! connection, so its time is the exchange's wait (docs/measurement.md, "Streams").

mod session;

use std::time::Instant;

use bytes::Bytes;

use super::ids::IdPath;
use super::pace::{Pace, Sends};
use super::{StreamEnd, Trace};
use crate::proto::ErrorKind;
use crate::proto::message::{BodyTap, Io, Messages, NextMessage, NextSend, Tapped, Upgrade};

/// The GUID RFC 6455 appends to the key before hashing it into `Sec-WebSocket-Accept`.
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// What a plan's `websocket = { … }` asks of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsSpec {
    /// Each message's payload (the step's body).
    pub message: Bytes,
    /// Binary frames (`true`) or text frames (the message must then be UTF-8).
    pub binary: bool,
    /// Messages sent per stream.
    pub count: u64,
    /// When they are sent.
    pub pace: Pace,
    /// Read until this many messages arrived (a server that pushes more than it is sent);
    /// none: until a reply to each message sent.
    pub max_messages: Option<u64>,
    /// Replies are matched to messages by the id at this path (else in order).
    pub match_id: Option<IdPath>,
    /// The `Sec-WebSocket-Key` of the upgrade request (one nonce per run).
    pub key: String,
    /// The `Sec-WebSocket-Accept` the server must answer to [`key`](Self::key).
    pub accept: String,
}

impl WsSpec {
    /// A spec with a new random key (and its accept) for `message`, sent once, read to its
    /// reply.
    pub fn new(message: Bytes, binary: bool) -> Self {
        let nonce: [u8; 16] = std::array::from_fn(|_| fastrand::u8(..));
        let key = base64_encode(&nonce);
        Self {
            message,
            binary,
            count: 1,
            pace: Pace::Every(std::time::Duration::ZERO),
            max_messages: None,
            match_id: None,
            accept: accept_for(&key),
            key,
        }
    }

    /// The headers that make the step's `GET` an upgrade to this WebSocket.
    pub fn upgrade_headers(&self) -> Vec<(String, String)> {
        [
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", &self.key),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect()
    }

    /// How many messages end the stream.
    fn expected(&self) -> u64 {
        self.max_messages.unwrap_or(self.count)
    }
}

/// The `Sec-WebSocket-Accept` for `key`: base64(SHA-1(key + GUID)).
pub fn accept_for(key: &str) -> String {
    let mut input = key.as_bytes().to_vec();
    input.extend_from_slice(GUID.as_bytes());
    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, &input);
    base64_encode(digest.as_ref())
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A VU's WebSocket state: the trace, the sends, the close code and the frame buffer, reused.
#[derive(Debug, Default)]
pub struct WsState {
    /// What the current stream did.
    pub trace: Trace,
    /// The messages sent.
    sends: Sends,
    /// The code of the server's close frame (none: no close frame, or one without a code).
    pub close_code: Option<u16>,
    /// A message's frame payload, masked in place as it is sent (refilled for each).
    scratch: Vec<u8>,
}

impl WsState {
    /// Forgets the last stream: ready for the next.
    pub fn start(&mut self, spec: &WsSpec) {
        self.trace.reset();
        self.sends.start(spec.match_id.is_some());
        self.close_code = None;
    }
}

/// The [`BodyTap`] (and [`Upgrade`]) of one WebSocket stream: `spec`'s rules over a VU's
/// `state`.
pub struct Tap<'a> {
    /// What the step asks.
    pub spec: &'a WsSpec,
    /// The VU's state ([`WsState::start`] it first).
    pub state: &'a mut WsState,
    /// The messages rendered per send, when the step's message is a template.
    pub messages: Option<&'a mut dyn Messages>,
}

impl Tap<'_> {
    /// A message arrived `at`; returns whether the stream is done (its replies all in, or its
    /// message limit reached).
    fn received(&mut self, at: Instant, payload: &[u8]) -> bool {
        let id = self.spec.match_id.as_ref().and_then(|p| p.of_text(payload));
        let state = &mut *self.state;
        state.sends.reply(&mut state.trace, at, id);
        state.trace.message(at);
        if self
            .spec
            .max_messages
            .is_some_and(|max| state.trace.received >= max)
        {
            state.trace.end = StreamEnd::Limit;
        }
        self.finished()
    }

    /// Whether every message was sent and every message expected has arrived.
    fn finished(&self) -> bool {
        let trace = &self.state.trace;
        trace.end == StreamEnd::Limit
            || (trace.sent >= self.spec.count && trace.received >= self.spec.expected())
    }

    /// When the next message is due.
    fn next(&mut self, now: Instant) -> NextSend {
        let state = &mut *self.state;
        state
            .sends
            .next(self.spec.pace, self.spec.count, &state.trace, now)
    }

    /// A frame of `wire` bytes went out `at`; `message` when it carried a message.
    fn wrote(&mut self, at: Instant, wire: u64, message: bool) {
        let state = &mut *self.state;
        state.trace.wire_sent += wire;
        if message {
            state.sends.sent(&mut state.trace, at, true);
        }
    }

    /// How the stream ended, from the server's close code: 1000 (normal), 1001 (going away)
    /// and none are clean ends; any other code is an error.
    fn outcome(&self) -> Result<(), ErrorKind> {
        match self.state.close_code {
            None | Some(1000 | 1001) => Ok(()),
            Some(_) => Err(ErrorKind::WebSocketClose),
        }
    }
}

impl BodyTap for Tap<'_> {
    /// The body of a response that did not switch protocols (a refusal): not the stream.
    fn data(&mut self, _data: &[u8], _at: Instant) -> Tapped {
        Tapped::More
    }

    fn upgrade(&mut self) -> Option<&mut dyn Upgrade> {
        Some(self)
    }

    fn message(&mut self) -> NextMessage {
        let state = &mut *self.state;
        match &mut self.messages {
            Some(m) => state.sends.render(&mut **m, state.trace.sent),
            None => NextMessage::Request,
        }
    }
}

impl Upgrade for Tap<'_> {
    fn run<'a>(
        &'a mut self,
        io: &'a mut dyn Io,
        head: &'a [u8],
        early: &'a [u8],
        received: &'a mut u64,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<(), ErrorKind>> + Send + 'a>> {
        Box::pin(session::run(self, io, head, early, received))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accept_is_rfc_6455s() {
        // RFC 6455, section 1.3.
        assert_eq!(
            accept_for("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn a_stream_is_done_when_every_reply_is_in_or_at_its_limit() {
        let mut spec = WsSpec::new(Bytes::from_static(b"hi"), false);
        spec.count = 2;
        let mut state = WsState::default();
        state.start(&spec);
        let mut tap = Tap {
            spec: &spec,
            state: &mut state,
            messages: None,
        };
        let t0 = Instant::now();
        tap.wrote(t0, 8, true);
        assert!(!tap.received(t0, b"hi"), "one of two sent");
        tap.wrote(t0, 8, true);
        assert!(tap.received(t0, b"hi"));
        assert_eq!(tap.state.trace.round_trips_us.len(), 2);
        assert_eq!(tap.state.trace.wire_sent, 16);
        spec.max_messages = Some(1);
        state.start(&spec);
        let mut tap = Tap {
            spec: &spec,
            state: &mut state,
            messages: None,
        };
        assert!(tap.received(t0, b"hi"), "the limit ends it");
        assert_eq!(state.trace.end, StreamEnd::Limit);
    }
}
