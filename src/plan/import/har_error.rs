//! Why a HAR file cannot become a plan (`--from-har`), and what of it was left out.

use std::collections::BTreeSet;

/// Why a HAR file cannot become a plan: it cannot be read, is not a HAR, an entry is
/// malformed (said with its place, `log.entries[3].request.url`), or nothing is left to import.
#[derive(Debug, thiserror::Error)]
pub enum HarError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Read {
        /// The file as given.
        file: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{file}: not JSON (a HAR file is JSON): {source}")]
    Json {
        /// The file as given.
        file: String,
        /// Where and why the JSON parser stopped.
        source: serde_json::Error,
    },
    /// Something in the file is not what a HAR holds there.
    #[error("{file}: {at}: {why}")]
    Shape {
        /// The file as given.
        file: String,
        /// Where, as a path into the HAR (`log.entries[3].request.url`).
        at: String,
        /// What is wrong.
        why: String,
    },
    /// Every entry was left out.
    #[error("{file}: no request left to import ({why})")]
    Empty {
        /// The file as given.
        file: String,
        /// Why each was left out.
        why: String,
    },
    /// `--base-url` is not an http(s) URL.
    #[error("--base-url: {0}")]
    BaseUrl(String),
}

/// What was left out, and why, for the notes.
#[derive(Debug, Default)]
pub(super) struct LeftOut {
    pub assets: usize,
    pub preflights: usize,
    pub unanswered: usize,
    pub schemes: BTreeSet<String>,
    pub other_origins: BTreeSet<String>,
}

impl LeftOut {
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.assets > 0 {
            notes.push(format!(
                "left out {} static asset(s) (images, scripts, stylesheets, fonts); --include \
                 keeps them",
                self.assets
            ));
        }
        if self.preflights > 0 {
            notes.push(format!(
                "left out {} CORS preflight(s): browsers send them, a load generator need not",
                self.preflights
            ));
        }
        if self.unanswered > 0 {
            notes.push(format!(
                "left out {} request(s) the recording has no response to",
                self.unanswered
            ));
        }
        if !self.schemes.is_empty() {
            let s: Vec<&str> = self.schemes.iter().map(String::as_str).collect();
            notes.push(format!("left out requests of scheme(s) {}", s.join(", ")));
        }
        if !self.other_origins.is_empty() {
            let o: Vec<&str> = self.other_origins.iter().map(String::as_str).collect();
            notes.push(format!(
                "left out requests to other origins than the first request's (a plan has one \
                 target): {}",
                o.join(", ")
            ));
        }
        notes
    }

    pub fn why(&self, entries: usize) -> String {
        if entries == 0 {
            return "log.entries is empty".into();
        }
        let notes = self.notes();
        if notes.is_empty() {
            "every entry was left out".into()
        } else {
            notes.join("; ")
        }
    }
}
