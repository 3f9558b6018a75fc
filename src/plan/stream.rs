//! Streaming steps: a step whose response is a stream of messages, measured per stream and per
//! message (docs/measurement.md, "Streams"). The one enum a new streaming protocol adds a
//! variant to.

use crate::proto::sse::SseSpec;
use crate::record::model::StreamSlo;

/// What a streaming step reads, and what its streams are judged against.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamStep {
    /// The protocol and its options.
    pub kind: StreamKind,
    /// The objectives of goodput (none set: no goodput).
    pub slo: StreamSlo,
}

/// The streaming protocols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamKind {
    /// Server-Sent Events: the response body is a `text/event-stream`.
    Sse(SseSpec),
}

impl StreamStep {
    /// The objectives, when any is set.
    pub fn objectives(&self) -> Option<StreamSlo> {
        self.slo.any().then_some(self.slo)
    }
}
