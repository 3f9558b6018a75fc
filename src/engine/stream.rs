//! Streaming steps in the VU loop: the stream a step's protocol traced
//! ([`crate::proto::stream`]) recorded per stream and per message (docs/measurement.md,
//! "Streams"). Nothing here names a protocol, and nothing is allocated per message.

use std::time::Instant;

use super::vu::micros;
use crate::plan::stream::StreamStep;
use crate::proto::stream::State;
use crate::record::recorder::{Recorder, StreamSample, TokenCount, Window};

/// When one stream was due, sent and done, and how its exchange went.
pub(super) struct Times {
    /// Open model: when it fell due.
    pub due: Option<Instant>,
    /// When its request was sent.
    pub sent: Instant,
    /// When it ended (its body's end, or the read the tap stopped at, or the failure).
    pub done: Instant,
    /// Whether the exchange succeeded.
    pub ok: bool,
    /// When it ended relative to its window.
    pub window: Window,
}

/// Records the last stream of `step` in `rec`, in the run's figures and `groups`'.
pub(super) fn record(
    rec: &mut Recorder,
    streams: &State,
    step: &StreamStep,
    t: &Times,
    groups: &[Option<usize>],
) {
    let trace = streams.trace(&step.spec);
    let from = t.due.unwrap_or(t.sent);
    let first_us = trace
        .first
        .map(|first| micros(first.saturating_duration_since(from)));
    // The stream ends at its sentinel when it had one (the rest of the body is not the stream).
    let end = trace.ended_at.unwrap_or(t.done);
    let stream_us = micros(end.saturating_duration_since(t.sent));
    let llm = step.spec.is_llm();
    let tokens = llm.then(|| TokenCount {
        tokens: trace.tokens.count(),
        from_usage: trace.tokens.usage.is_some(),
    });
    let per_token_us = match (tokens, trace.first) {
        (Some(n), Some(first)) if n.tokens >= 2 => {
            Some(micros(end.saturating_duration_since(first)) / (n.tokens - 1))
        }
        _ => None,
    };
    let good = step.objectives().map(|slo| {
        let within = |limit: Option<f64>, us: Option<u64>| {
            limit.is_none_or(|ms| us.is_some_and(|us| us as f64 <= ms * 1e3))
        };
        t.ok && within(slo.ttft_ms, first_us)
            && (slo.tpot_ms.is_none()
                || per_token_us.is_none()
                || within(slo.tpot_ms, per_token_us))
            && within(slo.e2e_ms, Some(stream_us))
    });
    let sample = StreamSample {
        ok: t.ok,
        ending: t.ok.then_some(trace.end),
        first_us,
        gaps_us: &trace.gaps_us,
        messages: trace.received,
        stream_us,
        tokens,
        per_token_us,
        good,
        drained: t.window != Window::Inside,
        sent: trace.sent,
        round_trips_us: &trace.round_trips_us,
    };
    rec.record_stream(&sample, groups);
}
