//! gRPC streaming calls: server streaming (one request message, a stream of replies), client
//! streaming (a stream of request messages, one reply) and bidirectional. [`Tap`] counts the
//! reply messages as their 5-byte frames complete and, for a stream whose request side streams
//! too, says when each request message is due ([`Pace`]); a bidirectional stream's replies are
//! matched in order to the messages they answer, each match a round trip.

use std::time::{Duration, Instant};

use super::Trace;
pub use super::pace::Pace;
use super::pace::Sends;
use crate::proto::message::{BodyTap, NextSend, Tapped};

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
}

impl Default for GrpcStreamSpec {
    fn default() -> Self {
        Self {
            client_streams: false,
            server_streams: true,
            count: 1,
            pace: Pace::Every(Duration::ZERO),
            max_messages: None,
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
}

impl Frames {
    /// Forgets a partial frame.
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Reads `data`; calls `message` once per message whose last byte is in it.
    pub fn feed(&mut self, mut data: &[u8], mut message: impl FnMut() -> Tapped) -> Tapped {
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
                    let take = left.min(data.len() as u64);
                    self.left = Some(left - take);
                    data = &data[take as usize..];
                }
            }
            if self.left == Some(0) {
                self.have = 0;
                self.left = None;
                if message() == Tapped::Stop {
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
    /// Forgets the last stream: ready for the next.
    pub fn start(&mut self) {
        self.frames.reset();
        self.trace.reset();
        self.sends.reset();
    }
}

/// The [`BodyTap`] of one gRPC stream: `spec`'s rules over a VU's `state`.
pub struct Tap<'a> {
    /// What the step asks.
    pub spec: &'a GrpcStreamSpec,
    /// The VU's state ([`GrpcState::start`] it first).
    pub state: &'a mut GrpcState,
}

impl BodyTap for Tap<'_> {
    fn data(&mut self, data: &[u8], at: Instant) -> Tapped {
        let spec = self.spec;
        let state = &mut *self.state;
        let (trace, sends) = (&mut state.trace, &state.sends);
        state.frames.feed(data, || {
            if spec.round_trips() {
                sends.reply(trace, at);
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
                frames.feed(part, || {
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
            frames.feed(std::slice::from_ref(b), || {
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
        state.start();
        let mut tap = Tap {
            spec: &spec,
            state: &mut state,
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
        };
        let mut state = GrpcState::default();
        let mut tap = Tap {
            spec: &spec,
            state: &mut state,
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
