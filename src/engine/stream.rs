//! Streaming steps in the VU loop: the tap a step's response body goes through, and the stream
//! it traced recorded per stream and per message (docs/measurement.md, "Streams"). The VU's
//! state is reused from stream to stream: nothing is allocated per message.

use std::time::Instant;

use super::vu::micros;
use crate::plan::stream::{StreamKind, StreamStep};
use crate::proto::message::BodyTap;
use crate::proto::sse::{self, SseState};
use crate::proto::stream::{StreamEnd, Trace};
use crate::record::recorder::{Ending, Recorder, StreamSample, TokenCount, Window};

/// A VU's state for its streaming steps, one per protocol.
#[derive(Debug, Default)]
pub(super) struct Streams {
    sse: SseState,
}

impl Streams {
    /// Ready for a new stream of `step`; returns the tap its body goes through.
    pub(super) fn start<'a>(&'a mut self, step: &'a StreamStep) -> impl BodyTap + 'a {
        match &step.kind {
            StreamKind::Sse(spec) => {
                self.sse.start();
                sse::Tap {
                    spec,
                    state: &mut self.sse,
                }
            }
        }
    }

    /// The trace of the last stream of `step`.
    fn trace(&self, step: &StreamStep) -> &Trace {
        match step.kind {
            StreamKind::Sse(_) => &self.sse.trace,
        }
    }
}

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
    streams: &Streams,
    step: &StreamStep,
    t: &Times,
    groups: &[Option<usize>],
) {
    let trace = streams.trace(step);
    let from = t.due.unwrap_or(t.sent);
    let first_us = trace
        .first
        .map(|first| micros(first.saturating_duration_since(from)));
    let stream_us = micros(t.done.saturating_duration_since(t.sent));
    let llm = matches!(&step.kind, StreamKind::Sse(s) if s.llm.is_some());
    let tokens = llm.then(|| TokenCount {
        tokens: trace.tokens.count(),
        from_usage: trace.tokens.usage.is_some(),
    });
    let per_token_us = match (tokens, trace.first) {
        (Some(n), Some(first)) if n.tokens >= 2 => {
            Some(micros(t.done.saturating_duration_since(first)) / (n.tokens - 1))
        }
        _ => None,
    };
    let good = step.objectives().map(|slo| {
        let within = |limit: Option<f64>, us: Option<u64>| {
            limit.is_none_or(|ms| us.is_some_and(|us| us as f64 <= ms * 1e3))
        };
        t.ok && within(slo.ttft_ms, first_us)
            && (slo.tpot_ms.is_none() || per_token_us.is_none() || within(slo.tpot_ms, per_token_us))
            && within(slo.e2e_ms, Some(stream_us))
    });
    let sample = StreamSample {
        ok: t.ok,
        ending: t.ok.then_some(match trace.end {
            StreamEnd::Eof => Ending::Eof,
            StreamEnd::Sentinel => Ending::Sentinel,
            StreamEnd::Limit => Ending::Limit,
        }),
        first_us,
        gaps_us: &trace.gaps_us,
        messages: trace.received,
        stream_us,
        tokens,
        per_token_us,
        good,
        drained: t.window != Window::Inside,
    };
    rec.record_stream(&sample, groups);
}
