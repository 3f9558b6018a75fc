//! The figures of streaming steps (docs/measurement.md, "Streams"): per stream and per message,
//! in histograms kept per worker beside the request figures and merged exactly.

use hdrhistogram::Histogram;

use super::{HIST_LOW_US, new_histogram};
use crate::record::model::{StreamDrained, StreamEnds};

/// How a stream ended, as its protocol's tap saw it (a failed exchange is counted as failed
/// instead).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Ending {
    /// The body (or connection) ended.
    #[default]
    Eof,
    /// The end sentinel arrived (SSE: `data: [DONE]`); what follows it is read to the body's
    /// end (so the connection can be reused) but not counted.
    Sentinel,
    /// The step's message limit was reached.
    Limit,
}

/// Output tokens of one LLM stream and where the count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenCount {
    /// Output tokens.
    pub tokens: u64,
    /// True when the server's `usage` report gave the count; false when the deltas were counted.
    pub from_usage: bool,
}

/// One measured stream, as the engine hands it to the recorder.
#[derive(Debug, Clone, Copy)]
pub struct StreamSample<'a> {
    /// Whether the exchange succeeded (a response with an accepted status, no transport error).
    pub ok: bool,
    /// How it ended, when it succeeded.
    pub ending: Option<Ending>,
    /// From the due time (open model) or the send (closed) to the first message, µs.
    pub first_us: Option<u64>,
    /// Each gap between consecutive messages, µs.
    pub gaps_us: &'a [u64],
    /// Messages received.
    pub messages: u64,
    /// From the send to the stream's end, µs.
    pub stream_us: u64,
    /// LLM mode: output tokens.
    pub tokens: Option<TokenCount>,
    /// LLM mode: (end − first token) / (tokens − 1), µs, when there were two tokens or more.
    pub per_token_us: Option<u64>,
    /// With service-level objectives: whether the stream met them all.
    pub good: Option<bool>,
    /// Whether it ended after its window's scheduled end (in a drain).
    pub drained: bool,
    /// Messages sent on a streaming request side (gRPC client and bidirectional streams).
    pub sent: u64,
    /// Each round trip, µs: a message's send to the reply matched to it.
    pub round_trips_us: &'a [u64],
}

/// Counts of a group's streams.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamCounts {
    /// Streams measured (attempts of streaming steps that reached the network).
    pub streams: u64,
    /// Of them, failed ones.
    pub failed: u64,
    /// Streams that received at least one message.
    pub with_messages: u64,
    /// Messages received.
    pub messages: u64,
    /// Messages sent on streaming request sides.
    pub sent: u64,
    /// How the streams that did not fail ended.
    pub ended: StreamEnds,
    /// LLM mode: streams, and of them those whose token count came from `usage`.
    pub llm_streams: u64,
    /// LLM mode: of the streams, those whose count came from the server's `usage`.
    pub usage_counted: u64,
    /// LLM mode: output tokens.
    pub tokens: u64,
    /// With objectives: the streams judged, and those that met them.
    pub judged: u64,
    /// Of the judged streams, those that met every objective.
    pub good: u64,
    /// The streams, messages, tokens and good streams of the streams ended in a drain.
    pub drained: StreamDrained,
}

/// The figures of a group's streams.
#[derive(Debug, Clone)]
pub struct StreamStats {
    /// Time to the first message, µs (streams with one).
    pub first: Histogram<u64>,
    /// Gaps between consecutive messages, µs.
    pub gap: Histogram<u64>,
    /// Stream durations, µs (every stream that did not fail).
    pub duration: Histogram<u64>,
    /// LLM mode: time per output token, µs (streams with two tokens or more).
    pub per_token: Histogram<u64>,
    /// Round trips of bidirectional streams' messages, µs.
    pub round_trip: Histogram<u64>,
    /// The counts.
    pub counts: StreamCounts,
}

impl Default for StreamStats {
    fn default() -> Self {
        Self {
            first: new_histogram(),
            gap: new_histogram(),
            duration: new_histogram(),
            per_token: new_histogram(),
            round_trip: new_histogram(),
            counts: StreamCounts::default(),
        }
    }
}

impl StreamStats {
    /// Records one stream.
    pub fn record(&mut self, s: &StreamSample<'_>) {
        let c = &mut self.counts;
        c.streams += 1;
        let drained = u64::from(s.drained);
        c.drained.streams += drained;
        if !s.ok {
            c.failed += 1;
        } else {
            self.duration
                .saturating_record(s.stream_us.max(HIST_LOW_US));
        }
        match s.ending {
            Some(Ending::Eof) => c.ended.eof += 1,
            Some(Ending::Sentinel) => c.ended.sentinel += 1,
            Some(Ending::Limit) => c.ended.limit += 1,
            None => {}
        }
        c.with_messages += u64::from(s.first_us.is_some());
        record_latencies([&mut self.first, &mut self.gap, &mut self.round_trip], s);
        c.messages += s.messages;
        c.drained.messages += s.messages * drained;
        c.sent += s.sent;
        c.drained.sent += s.sent * drained;
        if let Some(t) = s.tokens {
            c.llm_streams += 1;
            c.usage_counted += u64::from(t.from_usage);
            c.tokens += t.tokens;
            c.drained.tokens += t.tokens * drained;
        }
        if let Some(us) = s.per_token_us {
            self.per_token.saturating_record(us.max(HIST_LOW_US));
        }
        if let Some(good) = s.good {
            c.judged += 1;
            c.good += u64::from(good);
            c.drained.good += u64::from(good) * drained;
        }
    }

    /// Adds another group's stream figures (exact).
    pub fn merge(&mut self, o: &StreamStats) {
        let _ = self.first.add(&o.first);
        let _ = self.gap.add(&o.gap);
        let _ = self.duration.add(&o.duration);
        let _ = self.per_token.add(&o.per_token);
        let _ = self.round_trip.add(&o.round_trip);
        let (a, b) = (&mut self.counts, &o.counts);
        a.streams += b.streams;
        a.failed += b.failed;
        a.with_messages += b.with_messages;
        a.messages += b.messages;
        a.sent += b.sent;
        a.ended.eof += b.ended.eof;
        a.ended.sentinel += b.ended.sentinel;
        a.ended.limit += b.ended.limit;
        a.llm_streams += b.llm_streams;
        a.usage_counted += b.usage_counted;
        a.tokens += b.tokens;
        a.judged += b.judged;
        a.good += b.good;
        a.drained.streams += b.drained.streams;
        a.drained.messages += b.drained.messages;
        a.drained.sent += b.drained.sent;
        a.drained.tokens += b.drained.tokens;
        a.drained.good += b.drained.good;
    }
}

/// The latencies of streams ended in one interval, for live views: time to the first message,
/// the gaps between messages and the round trips (as [`StreamStats`]' histograms, µs).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamLatencies {
    /// Time to the first message, µs.
    pub first: Histogram<u64>,
    /// Gaps between consecutive messages, µs.
    pub gap: Histogram<u64>,
    /// Round trips, µs.
    pub round_trip: Histogram<u64>,
}

impl Default for StreamLatencies {
    fn default() -> Self {
        Self {
            first: new_histogram(),
            gap: new_histogram(),
            round_trip: new_histogram(),
        }
    }
}

impl StreamLatencies {
    /// Records one stream's latencies.
    pub fn record(&mut self, s: &StreamSample<'_>) {
        record_latencies([&mut self.first, &mut self.gap, &mut self.round_trip], s);
    }

    /// Adds `o` (exact).
    pub fn add(&mut self, o: &StreamLatencies) {
        let _ = self.first.add(&o.first);
        let _ = self.gap.add(&o.gap);
        let _ = self.round_trip.add(&o.round_trip);
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.first.is_empty() && self.gap.is_empty() && self.round_trip.is_empty()
    }

    /// What was recorded since the last take (none when nothing was), and a fresh start.
    pub(super) fn take(&mut self) -> Option<Box<StreamLatencies>> {
        if self.is_empty() {
            return None;
        }
        let taken = Box::new(self.clone());
        self.first.reset();
        self.gap.reset();
        self.round_trip.reset();
        Some(taken)
    }
}

/// Records `s`'s time to its first message, its gaps and its round trips into `[first, gap,
/// round_trip]`, µs (at least the histograms' lowest value): [`StreamStats`]' and
/// [`StreamLatencies`]' one rule.
fn record_latencies([first, gap, round_trip]: [&mut Histogram<u64>; 3], s: &StreamSample<'_>) {
    if let Some(us) = s.first_us {
        first.saturating_record(us.max(HIST_LOW_US));
    }
    for &g in s.gaps_us {
        gap.saturating_record(g.max(HIST_LOW_US));
    }
    for &rtt in s.round_trips_us {
        round_trip.saturating_record(rtt.max(HIST_LOW_US));
    }
}

/// Merges `o` into `a`, either of which may have no streams.
pub(super) fn merge_optional(a: &mut Option<Box<StreamStats>>, o: &Option<Box<StreamStats>>) {
    if let Some(o) = o {
        a.get_or_insert_with(Box::default).merge(o);
    }
}
