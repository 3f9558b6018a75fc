//! The library's error type.

use std::path::PathBuf;

/// [`Error::File`] action when an input could not be read (or its start, as in "cannot read
/// plan"): such errors are the user's input, exit code 2.
pub const CANNOT_READ: &str = "cannot read";

/// Everything that can go wrong in volley outside the hot path (which counts
/// [`ErrorKind`](crate::proto::ErrorKind)s instead).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A user choice (flag, URL, plan value) is invalid.
    #[error("invalid {what}: {why}")]
    Invalid {
        /// What was invalid, in the user's words ("URL", "rate", "header (-H)").
        what: String,
        /// Why, and what would be valid.
        why: String,
    },
    /// A plan file is invalid; `at` is `file:line:col`.
    #[error("{at}: {why}{}", hint.as_ref().map(|h| format!("\n  hint: {h}")).unwrap_or_default())]
    Plan {
        /// Where: `path:line:col` (or the path alone).
        at: String,
        /// What is wrong.
        why: String,
        /// What would be valid.
        hint: Option<String>,
    },
    /// A suite file is invalid; `at` is `file:line:col`.
    #[error("{at}: {why}{}", hint.as_ref().map(|h| format!("\n  hint: {h}")).unwrap_or_default())]
    Suite {
        /// Where: `path:line:col` (or the path alone).
        at: String,
        /// What is wrong.
        why: String,
        /// What would be valid.
        hint: Option<String>,
    },
    /// A command a suite starts (a target's server, its reset) could not be run or failed.
    #[error("`{command}`: {why}")]
    Process {
        /// The command line, as the user wrote it.
        command: String,
        /// What went wrong.
        why: String,
    },
    /// A file could not be read or written.
    #[error("{action} {path}: {cause}")]
    File {
        /// "cannot read", "cannot write", …
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause (not a `#[source]`: the message already says it).
        cause: std::io::Error,
    },
    /// A record (`run.json`) could not be parsed or is of an unsupported version.
    #[error("record {path}: {why}")]
    Record {
        /// The record file.
        path: PathBuf,
        /// Why it could not be used.
        why: String,
    },
    /// A report or chart could not be rendered.
    #[error("cannot render {what}: {why}")]
    Render {
        /// What was being rendered ("report.html", "latency chart").
        what: String,
        /// The cause.
        why: String,
    },
    /// The engine could not start (threads, runtimes, timers).
    #[error("engine: {0}")]
    Engine(String),
    /// The target refused what the run needs before any load was sent (its TLS certificate, its
    /// protocol): nothing could be measured.
    #[error("cannot use {target}: {why}")]
    Connect {
        /// The target's URL.
        target: String,
        /// What happened and what to do.
        why: String,
    },
}

impl Error {
    /// Whether the error is about the user's input (flags, plan, records to read) rather than
    /// about carrying out the work: the command line maps it to exit code 2.
    pub fn is_input(&self) -> bool {
        match self {
            Self::Invalid { .. } | Self::Record { .. } | Self::Plan { .. } | Self::Suite { .. } => {
                true
            }
            // "cannot read", "cannot read plan", …: an input the user named is missing.
            Self::File { action, .. } => action.starts_with(CANNOT_READ),
            Self::Render { .. } | Self::Process { .. } | Self::Engine(_) | Self::Connect { .. } => {
                false
            }
        }
    }
}
