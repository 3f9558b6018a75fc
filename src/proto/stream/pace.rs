//! When a streaming request side sends its messages ([`Pace`]), and the in-order matching of
//! replies to them as round trips ([`Sends`]): shared by gRPC client/bidirectional streams and
//! WebSocket.

use std::time::{Duration, Instant};

use super::Trace;
use crate::proto::message::NextSend;

/// When a streaming request side sends its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// Message k at the stream's start + k × this (zero: all at once).
    Every(Duration),
    /// The first at once, each next after the reply to the one before (echo).
    AfterReply,
}

impl Pace {
    /// When message `k` (0-based) is due after the stream's start, on an absolute schedule;
    /// none when it waits for a reply instead.
    pub fn offset(self, k: u64) -> Option<Duration> {
        match self {
            Self::Every(every) => Some(every.saturating_mul(u32::try_from(k).unwrap_or(u32::MAX))),
            Self::AfterReply => None,
        }
    }
}

/// A stream's sends: when each went, and when the first was due. Reused from stream to
/// stream (its buffer kept).
#[derive(Debug, Default)]
pub struct Sends {
    /// When each message was sent (kept only when replies are matched as round trips).
    sent_at: Vec<Instant>,
    /// When the first message was due.
    started: Option<Instant>,
}

impl Sends {
    /// Forgets the last stream.
    pub fn reset(&mut self) {
        self.sent_at.clear();
        self.started = None;
    }

    /// When the next of `count` messages sent by `pace` is due, asked at `now`.
    pub fn next(&mut self, pace: Pace, count: u64, trace: &Trace, now: Instant) -> NextSend {
        let sent = trace.sent;
        if sent >= count {
            return NextSend::Done;
        }
        match pace.offset(sent) {
            Some(offset) => {
                let due = *self.started.get_or_insert(now) + offset;
                if due <= now {
                    NextSend::Now
                } else {
                    NextSend::At(due)
                }
            }
            None if sent == 0 || trace.received >= sent => NextSend::Now,
            None => NextSend::AfterReply,
        }
    }

    /// A message was sent `at`; its time is kept when replies are matched (`round_trips`).
    pub fn sent(&mut self, trace: &mut Trace, at: Instant, round_trips: bool) {
        trace.sent += 1;
        if round_trips {
            self.sent_at.push(at);
        }
    }

    /// A reply arrived `at`, before `trace` counts it: the round trip of the message it
    /// answers in order (the n-th reply, the n-th message), when that message was sent.
    pub fn reply(&self, trace: &mut Trace, at: Instant) {
        let sent = usize::try_from(trace.received)
            .ok()
            .and_then(|i| self.sent_at.get(i));
        if let Some(&sent) = sent {
            let us = at.saturating_duration_since(sent).as_micros();
            trace
                .round_trips_us
                .push(u64::try_from(us).unwrap_or(u64::MAX));
        }
    }
}
