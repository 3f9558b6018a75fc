//! Streaming steps: a response body read as a stream of messages as it arrives, traced per
//! stream and per message ([`Trace`]) for the engine to record.
//!
//! The seam a streaming protocol plugs into. A new one is its module here (as [`sse`]), plus
//! three files outside it: its `pub mod`, [`Spec`] variant and [`State`] arms in this file; its
//! key in the plan file (`plan/file.rs`); its reading into a [`Spec`] (`plan/read/stream.rs`).
//! The engine, the recorder, `run.json`, the reports and the thresholds see only [`Trace`] and
//! [`Spec`]'s methods; `tests/seams.rs` keeps the variants in these files.

pub mod sse;
mod trace;

pub use trace::{StreamEnd, Tokens, Trace};

use super::message::BodyTap;

/// What a streaming step asks of its protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    /// Server-Sent Events: the response body is a `text/event-stream`.
    Sse(sse::SseSpec),
}

impl Spec {
    /// Its protocol's name in reports: `sse`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sse(_) => "sse",
        }
    }

    /// Whether its messages are an LLM's output tokens (LLM mode).
    pub fn is_llm(&self) -> bool {
        match self {
            Self::Sse(s) => s.llm.is_some(),
        }
    }
}

/// A VU's state for its streaming steps, one per protocol, reused from stream to stream.
#[derive(Debug, Default)]
pub struct State {
    sse: sse::SseState,
}

impl State {
    /// Ready for a new stream of `spec`; returns the tap its body goes through.
    pub fn start<'a>(&'a mut self, spec: &'a Spec) -> impl BodyTap + 'a {
        match spec {
            Spec::Sse(s) => {
                self.sse.start();
                sse::Tap {
                    spec: s,
                    state: &mut self.sse,
                }
            }
        }
    }

    /// The trace of the last stream of `spec`.
    pub fn trace(&self, spec: &Spec) -> &Trace {
        match spec {
            Spec::Sse(_) => &self.sse.trace,
        }
    }
}
