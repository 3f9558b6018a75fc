//! Streaming steps: a step whose response is a stream of messages, measured per stream and per
//! message (docs/measurement.md, "Streams"). Its protocol is a [`crate::proto::stream::Spec`].

use super::Text;
use crate::proto::stream::Spec;
use crate::record::model::StreamSlo;

/// What a streaming step reads, and what its streams are judged against.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamStep {
    /// The protocol and its options.
    pub spec: Spec,
    /// The objectives of goodput (none set: no goodput).
    pub slo: StreamSlo,
    /// A streaming request side's message template, rendered per message with `seq` (the
    /// message's index in its stream, from 0); none: the request's body is every message.
    pub message: Option<Text>,
}

/// The template variable of a message's index in its stream.
pub const SEQ: &str = "seq";

impl StreamStep {
    /// The objectives, when any is set.
    pub fn objectives(&self) -> Option<StreamSlo> {
        self.slo.any().then_some(self.slo)
    }
}
