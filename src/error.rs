//! The library's error type.

use std::path::PathBuf;

/// What volley was doing with a file when it failed ([`Error::File`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAction {
    /// Reading an input the user named (a record, a suite): the user's input, exit code 2.
    Read,
    /// Reading a plan: the user's input, exit code 2.
    ReadPlan,
    /// Writing an output.
    Write,
    /// Creating an output folder.
    Create,
}

impl FileAction {
    /// Whether the file was an input the user named.
    pub fn is_input(self) -> bool {
        matches!(self, Self::Read | Self::ReadPlan)
    }
}

impl std::fmt::Display for FileAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Read => "cannot read",
            Self::ReadPlan => "cannot read plan",
            Self::Write => "cannot write",
            Self::Create => "cannot create",
        })
    }
}

/// Everything that can go wrong in volley outside the hot path (which counts
/// `record::error_kind::ErrorKind`s instead).
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
        /// What volley was doing.
        action: FileAction,
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
    /// [`Error::Invalid`]: `what` (a flag, a file, a URL) cannot be used, because `why`.
    pub fn invalid(what: impl Into<String>, why: impl ToString) -> Self {
        Self::Invalid {
            what: what.into(),
            why: why.to_string(),
        }
    }

    /// Whether the error is about the user's input (flags, plan, records to read) rather than
    /// about carrying out the work: the command line maps it to exit code 2.
    pub fn is_input(&self) -> bool {
        match self {
            Self::Invalid { .. } | Self::Record { .. } | Self::Plan { .. } | Self::Suite { .. } => {
                true
            }
            // An input the user named is missing.
            Self::File { action, .. } => action.is_input(),
            Self::Render { .. } | Self::Process { .. } | Self::Engine(_) | Self::Connect { .. } => {
                false
            }
        }
    }
}

/// An error and its causes, as anyhow's `{:#}` writes them ("outer: cause: its cause"), each
/// cause left out when the text before it already says it: an error whose message includes its
/// source ("cannot listen on …: Address already in use") was written with that source twice.
pub fn chain_text(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    for cause in std::iter::successors(err.source(), |e| e.source()) {
        let line = cause.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
    }
    text
}
