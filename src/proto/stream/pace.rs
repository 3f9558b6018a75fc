//! When a streaming request side sends its messages ([`Pace`]), and the matching of replies to
//! them as round trips ([`Sends`]), in order or by id ([`super::ids`]): shared by gRPC
//! client/bidirectional streams and WebSocket.

use std::time::{Duration, Instant};

use super::Trace;
use crate::proto::message::{Messages, NextMessage, NextSend};

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
    /// Replies are matched by id: the unanswered messages' ids and send times.
    by_id: Option<Vec<(u64, Instant)>>,
    /// The id of the message rendered last, until it is sent.
    rendered_id: Option<u64>,
}

impl Sends {
    /// Forgets the last stream.
    pub fn reset(&mut self) {
        self.sent_at.clear();
        self.started = None;
        self.rendered_id = None;
        if let Some(pending) = &mut self.by_id {
            pending.clear();
        }
    }

    /// Forgets the last stream; replies to the next are matched by id when `by_id`.
    pub fn start(&mut self, by_id: bool) {
        self.reset();
        match (by_id, &self.by_id) {
            (true, None) => self.by_id = Some(Vec::new()),
            (false, Some(_)) => self.by_id = None,
            _ => {}
        }
    }

    /// Renders message `k` with `messages`, keeping its id for [`sent`](Self::sent).
    pub fn render(&mut self, messages: &mut dyn Messages, k: u64) -> NextMessage {
        match messages.message(k) {
            Some((wire, id)) => {
                self.rendered_id = id;
                NextMessage::Rendered(wire)
            }
            None => NextMessage::Failed,
        }
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

    /// A message was sent `at`; its time is kept when replies are matched (`round_trips`): by
    /// the id it was rendered with, or in order.
    pub fn sent(&mut self, trace: &mut Trace, at: Instant, round_trips: bool) {
        trace.sent += 1;
        let id = self.rendered_id.take();
        match (&mut self.by_id, id) {
            (Some(pending), Some(id)) => pending.push((id, at)),
            // A message without an id: no reply is its round trip.
            (Some(_), None) => {}
            (None, _) if round_trips => self.sent_at.push(at),
            (None, _) => {}
        }
    }

    /// A reply arrived `at`, before `trace` counts it: the round trip of the message it
    /// answers, when that message was sent. Matched by `id` (what the reply carries) when
    /// replies are matched by id, else in order (the n-th reply, the n-th message).
    pub fn reply(&mut self, trace: &mut Trace, at: Instant, id: Option<u64>) {
        let sent = match &mut self.by_id {
            Some(pending) => id
                .and_then(|id| pending.iter().position(|p| p.0 == id))
                .map(|i| pending.remove(i).1),
            None => usize::try_from(trace.received)
                .ok()
                .and_then(|i| self.sent_at.get(i))
                .copied(),
        };
        if let Some(sent) = sent {
            let us = at.saturating_duration_since(sent).as_micros();
            trace
                .round_trips_us
                .push(u64::try_from(us).unwrap_or(u64::MAX));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_out_of_order_are_matched_by_id() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut sends = Sends::default();
        let mut trace = Trace::default();
        sends.start(true);
        for (k, at) in [(1, 0), (2, 10), (3, 20)] {
            sends.rendered_id = Some(k);
            sends.sent(&mut trace, ms(at), true);
        }
        // The second is answered first, then one the client never sent, then the others.
        for (id, at) in [
            (Some(2), 15),
            (Some(9), 16),
            (None, 17),
            (Some(1), 30),
            (Some(3), 50),
        ] {
            sends.reply(&mut trace, ms(at), id);
            trace.message(ms(at));
        }
        assert_eq!(trace.round_trips_us, [5000, 30000, 30000]);
        // In order, the same replies would be 15, 6 and −3 ms: the n-th reply, the n-th message.
        sends.start(false);
        trace.reset();
        for at in [0, 10, 20] {
            sends.sent(&mut trace, ms(at), true);
        }
        for at in [15, 16, 30] {
            sends.reply(&mut trace, ms(at), None);
            trace.message(ms(at));
        }
        assert_eq!(trace.round_trips_us, [15000, 6000, 10000]);
    }
}
