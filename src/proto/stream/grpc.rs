//! gRPC streaming calls: server streaming (one request message, a stream of replies), client
//! streaming (a stream of request messages, one reply) and bidirectional. [`Tap`] counts the
//! reply messages as their 5-byte frames complete and, for a stream whose request side streams
//! too, says when each request message is due ([`Pace`]) and what it is (the request's, or one
//! rendered per message); a bidirectional stream's replies are matched to the messages they
//! answer, in order or by id ([`super::ids`]), each match a round trip.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Trace;
use super::ids::IdPath;
pub use super::pace::Pace;
use super::pace::Sends;
use crate::proto::grpc::GrpcMethod;
use crate::proto::message::{BodyTap, Messages, NextMessage, NextSend, Tapped};

/// What a plan's `grpc_stream = { … }` (and the method's kind) asks of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcStreamSpec {
    /// The request side streams (client or bidirectional streaming).
    pub client_streams: bool,
    /// The response side streams (server or bidirectional streaming).
    pub server_streams: bool,
    /// Request messages per stream (the step's message, each time; 1 unless the request side
    /// streams).
    pub count: u64,
    /// When they are sent.
    pub pace: Pace,
    /// Stop reading after this many messages (none: read to the end).
    pub max_messages: Option<u64>,
    /// Replies are matched to messages by the id at a path (else in order).
    pub match_id: Option<ReplyIds>,
}

/// How a bidirectional stream's replies are matched by id: the path, and the method whose
/// replies are decoded (to JSON, as checks read them) to find it.
#[derive(Debug, Clone)]
pub struct ReplyIds {
    /// Where the id lies.
    pub path: IdPath,
    /// The method called.
    pub method: Arc<GrpcMethod>,
}

impl PartialEq for ReplyIds {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.method.full_name() == other.method.full_name()
    }
}

impl Eq for ReplyIds {}

impl ReplyIds {
    /// The id a reply (unframed protobuf) carries.
    fn of_reply(&self, message: &[u8]) -> Option<u64> {
        self.path.of_value(&self.method.decode_json(message).ok()?)
    }
}

impl Default for GrpcStreamSpec {
    fn default() -> Self {
        Self {
            client_streams: false,
            server_streams: true,
            count: 1,
            pace: Pace::Every(Duration::ZERO),
            max_messages: None,
            match_id: None,
        }
    }
}

impl GrpcStreamSpec {
    /// Whether replies are matched to messages as round trips (bidirectional streams).
    pub fn round_trips(&self) -> bool {
        self.client_streams && self.server_streams
    }
}

/// Counts gRPC messages in a response body as it arrives, across reads, without copying it.
#[derive(Debug, Default)]
pub struct Frames {
    /// Bytes of the current frame's header read so far.
    header: [u8; 5],
    have: usize,
    /// Bytes of the current message still to come, once its header is whole.
    left: Option<u64>,
    /// The current message's bytes, when messages are kept (replies matched by id).
    kept: Option<Vec<u8>>,
}

impl Frames {
    /// Forgets a partial frame; keeps each message's bytes from now on when `keep`.
    pub fn reset(&mut self, keep: bool) {
        let mut kept = self.kept.take().filter(|_| keep);
        if let Some(k) = &mut kept {
            k.clear();
        }
        *self = Self {
            kept: kept.or_else(|| keep.then(Vec::new)),
            ..Self::default()
        };
    }

    /// Reads `data`; calls `message` once per message whose last byte is in it, with the
    /// message's bytes when they are kept (else empty).
    pub fn feed(&mut self, mut data: &[u8], mut message: impl FnMut(&[u8]) -> Tapped) -> Tapped {
        while !data.is_empty() {
            match self.left {
                None => {
                    let take = (5 - self.have).min(data.len());
                    self.header[self.have..self.have + take].copy_from_slice(&data[..take]);
                    self.have += take;
                    data = &data[take..];
                    if self.have == 5 {
                        let h = self.header;
                        self.left = Some(u64::from(u32::from_be_bytes([h[1], h[2], h[3], h[4]])));
                    }
                }
                Some(left) => {
                    let take = left.min(data.len() as u64) as usize;
                    self.left = Some(left - take as u64);
                    if let Some(kept) = &mut self.kept {
                        kept.extend_from_slice(&data[..take]);
                    }
                    data = &data[take..];
                }
            }
            if self.left == Some(0) {
                self.have = 0;
                self.left = None;
                let kept = self.kept.as_deref().unwrap_or_default();
                let stopped = message(kept) == Tapped::Stop;
                if let Some(kept) = &mut self.kept {
                    kept.clear();
                }
                if stopped {
                    return Tapped::Stop;
                }
            }
        }
        Tapped::More
    }
}

/// A VU's gRPC stream state: the frame counter, the trace and the send times, reused.
#[derive(Debug, Default)]
pub struct GrpcState {
    /// The reply frames.
    pub frames: Frames,
    /// What the current stream did.
    pub trace: Trace,
    /// The request side's sends.
    sends: Sends,
}

impl GrpcState {
    /// Forgets the last stream: ready for the next of `spec`.
    pub fn start(&mut self, spec: &GrpcStreamSpec) {
        self.frames.reset(spec.match_id.is_some());
        self.trace.reset();
        self.sends.start(spec.match_id.is_some());
    }
}

/// The [`BodyTap`] of one gRPC stream: `spec`'s rules over a VU's `state`.
pub struct Tap<'a> {
    /// What the step asks.
    pub spec: &'a GrpcStreamSpec,
    /// The VU's state ([`GrpcState::start`] it first).
    pub state: &'a mut GrpcState,
    /// The messages rendered per send, when the step's message is a template.
    pub messages: Option<&'a mut dyn Messages>,
}

impl BodyTap for Tap<'_> {
    fn data(&mut self, data: &[u8], at: Instant) -> Tapped {
        let spec = self.spec;
        let GrpcState {
            frames,
            trace,
            sends,
        } = &mut *self.state;
        frames.feed(data, |message| {
            if spec.round_trips() {
                let id = spec.match_id.as_ref().and_then(|m| m.of_reply(message));
                sends.reply(trace, at, id);
            }
            trace.message(at);
            if spec.max_messages.is_some_and(|max| trace.received >= max) {
                trace.end = super::StreamEnd::Limit;
                return Tapped::Stop;
            }
            Tapped::More
        })
    }

    fn duplex(&self) -> bool {
        self.spec.client_streams
    }

    fn next_send(&mut self, now: Instant) -> NextSend {
        let state = &mut *self.state;
        state
            .sends
            .next(self.spec.pace, self.spec.count, &state.trace, now)
    }

    fn sent(&mut self, at: Instant) {
        let state = &mut *self.state;
        state
            .sends
            .sent(&mut state.trace, at, self.spec.round_trips());
    }

    fn message(&mut self) -> NextMessage {
        let state = &mut *self.state;
        let Some(m) = &mut self.messages else {
            return NextMessage::Request;
        };
        let next = state.sends.render(&mut **m, state.trace.sent);
        if let NextMessage::Rendered(message) = &next {
            // Each rendered message's bytes, for the bytes sent (the request's own message
            // is counted per send from its length).
            state.trace.wire_sent += message.len() as u64;
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(messages: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for m in messages {
            out.push(0);
            out.extend_from_slice(&(m.len() as u32).to_be_bytes());
            out.extend_from_slice(m);
        }
        out
    }

    #[test]
    fn frames_are_counted_across_any_split() {
        let body = framed(&[b"abc", b"", b"0123456789"]);
        for split in 0..=body.len() {
            let mut frames = Frames::default();
            let mut n = 0;
            let (a, b) = body.split_at(split);
            for part in [a, b] {
                frames.feed(part, |_| {
                    n += 1;
                    Tapped::More
                });
            }
            assert_eq!(n, 3, "split at {split}");
        }
        // Byte by byte.
        let mut frames = Frames::default();
        let mut n = 0;
        for b in &body {
            frames.feed(std::slice::from_ref(b), |_| {
                n += 1;
                Tapped::More
            });
        }
        assert_eq!(n, 3);
    }

    #[test]
    fn echo_sends_the_next_after_each_reply_and_matches_round_trips() {
        let spec = GrpcStreamSpec {
            client_streams: true,
            count: 2,
            pace: Pace::AfterReply,
            ..GrpcStreamSpec::default()
        };
        let mut state = GrpcState::default();
        state.start(&spec);
        let mut tap = Tap {
            spec: &spec,
            state: &mut state,
            messages: None,
        };
        let t0 = Instant::now();
        assert_eq!(tap.next_send(t0), NextSend::Now);
        tap.sent(t0);
        assert_eq!(tap.next_send(t0), NextSend::AfterReply);
        tap.data(&framed(&[b"x"]), t0 + Duration::from_millis(3));
        assert_eq!(tap.next_send(t0), NextSend::Now);
        tap.sent(t0 + Duration::from_millis(4));
        assert_eq!(tap.next_send(t0), NextSend::Done);
        tap.data(&framed(&[b"y"]), t0 + Duration::from_millis(9));
        assert_eq!(state.trace.round_trips_us, [3000, 5000]);
        assert_eq!((state.trace.sent, state.trace.received), (2, 2));
    }

    #[test]
    fn a_paced_side_is_due_on_an_absolute_schedule() {
        let spec = GrpcStreamSpec {
            client_streams: true,
            server_streams: false,
            count: 3,
            pace: Pace::Every(Duration::from_millis(10)),
            max_messages: None,
            match_id: None,
        };
        let mut state = GrpcState::default();
        let mut tap = Tap {
            spec: &spec,
            state: &mut state,
            messages: None,
        };
        let t0 = Instant::now();
        assert_eq!(tap.next_send(t0), NextSend::Now);
        tap.sent(t0);
        assert_eq!(
            tap.next_send(t0 + Duration::from_millis(1)),
            NextSend::At(t0 + Duration::from_millis(10))
        );
        // Late: due at once, and the third still on the schedule.
        let late = t0 + Duration::from_millis(15);
        assert_eq!(tap.next_send(late), NextSend::Now);
        tap.sent(late);
        assert_eq!(
            tap.next_send(late),
            NextSend::At(t0 + Duration::from_millis(20))
        );
        assert!(state.trace.round_trips_us.is_empty(), "not bidirectional");
    }
}
