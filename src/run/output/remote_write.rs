//! `--prometheus-rw URL`: volley's live metrics pushed by Prometheus remote write every second
//! and once at the end of each run; pushes that failed are the record's warning.

use super::{Kept, Output, OutputError};
use crate::error::Error;
use crate::export::ExportError;
use crate::export::live::Shared;
use crate::export::push::{PushStats, Pusher};
use crate::export::remote_write::RemoteWrite;
use crate::record::RunRecord;
use crate::record::model::{Warning, WarningCode};
use crate::redact::redact_url_userinfo;

/// The pushes (see the module doc).
pub struct RemoteWritePush {
    url: String,
    pusher: Option<Pusher>,
}

impl RemoteWritePush {
    /// Pushes to `url` (user information in it is sent as Basic authentication).
    pub fn new(url: &str) -> Self {
        Self {
            url: url.to_string(),
            pusher: None,
        }
    }
}

impl Output for RemoteWritePush {
    fn name(&self) -> &'static str {
        "remote write"
    }

    fn reads_live_figures(&self) -> bool {
        true
    }

    /// Pushes once: a URL volley cannot push to is an error; a push that fails is said (a down
    /// endpoint is known at the start) and the run goes on, retrying every second.
    fn start(&mut self, live: &Shared) -> Result<Option<String>, OutputError> {
        let rw = RemoteWrite::new(&self.url).map_err(ExportError::from)?;
        let (pusher, first) = Pusher::start(rw, live.clone());
        self.pusher = Some(pusher);
        Ok(first.err().map(|e| {
            format!(
                "warning: the first push failed: {e}; the run goes on, pushes are retried every \
                 second and failures are counted in the record's warnings"
            )
        }))
    }

    /// Pushes the run's final figures (waiting one push's deadline at most), then says which
    /// pushes failed since the last run.
    fn run_ended(&mut self) -> Vec<Warning> {
        let Some(pusher) = &self.pusher else {
            return Vec::new();
        };
        pusher.flush();
        warning(&redact_url_userinfo(&self.url), &pusher.take_stats())
            .into_iter()
            .collect()
    }

    /// The final figures were pushed at the run's end: nothing to write.
    fn finish(&mut self, _: &RunRecord) -> Result<Option<Kept>, Error> {
        Ok(None)
    }

    fn close(self: Box<Self>) {
        if let Some(pusher) = self.pusher {
            pusher.close();
        }
    }
}

/// The record's warning about failed pushes, if any failed.
pub fn warning(url: &str, stats: &PushStats) -> Option<Warning> {
    if stats.failed == 0 {
        return None;
    }
    let last = match (&stats.first_error, &stats.last_error) {
        (Some(first), Some(last)) if first != last => format!("; last: {last}"),
        _ => String::new(),
    };
    Some(Warning {
        code: WarningCode::RemoteWriteFailed,
        message: format!(
            "remote write to {url}: {} of {} pushes failed (first: {}{last}); the run and this \
             record are complete, but Prometheus misses those pushes' samples",
            stats.failed,
            stats.pushes,
            stats.first_error.as_deref().unwrap_or("unknown"),
        ),
    })
}
