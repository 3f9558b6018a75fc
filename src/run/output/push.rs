//! `--prometheus-rw URL` and `--otlp [URL]`: volley's live metrics pushed every second and once
//! at the end of each run, by Prometheus remote write or as OpenTelemetry metrics; pushes that
//! failed are the record's warning.

use super::{Kept, Output, OutputError};
use crate::error::Error;
use crate::export::ExportError;
use crate::export::live::Shared;
use crate::export::otlp::{Otlp, OtlpSettings};
use crate::export::push::{PushStats, Pusher};
use crate::export::remote_write::RemoteWrite;
use crate::record::RunRecord;
use crate::record::model::{Warning, WarningCode};
use crate::redact::redact_url_userinfo;

/// The receiver pushed to, by its protocol.
#[derive(Debug, Clone, PartialEq)]
enum Receiver {
    /// Prometheus remote write 1.0 to this URL.
    RemoteWrite(String),
    /// OTLP/HTTP protobuf: the URL asked for (`None`: from the environment), then the
    /// settings read when the pushes start.
    Otlp(Option<String>, Option<OtlpSettings>),
}

/// The pushes of one protocol (see the module doc).
pub struct Pushes {
    receiver: Receiver,
    pusher: Option<Pusher>,
}

impl Pushes {
    /// Pushes by remote write to `url` (user information in it is sent as Basic
    /// authentication).
    pub fn remote_write(url: &str) -> Self {
        Self {
            receiver: Receiver::RemoteWrite(url.to_string()),
            pusher: None,
        }
    }

    /// Pushes OTLP metrics to `url` (`None`: where the `OTEL_*` environment says), with the
    /// environment's headers and resource read at the start ([`OtlpSettings::new`]).
    pub fn otlp(url: Option<&str>) -> Self {
        Self {
            receiver: Receiver::Otlp(url.map(str::to_string), None),
            pusher: None,
        }
    }

    fn url(&self) -> String {
        match &self.receiver {
            Receiver::RemoteWrite(url) => redact_url_userinfo(url),
            Receiver::Otlp(_, Some(s)) => redact_url_userinfo(&s.url),
            Receiver::Otlp(url, None) => redact_url_userinfo(url.as_deref().unwrap_or("")),
        }
    }
}

impl Output for Pushes {
    fn name(&self) -> &'static str {
        match self.receiver {
            Receiver::RemoteWrite(_) => "remote write",
            Receiver::Otlp(..) => "OTLP",
        }
    }

    fn reads_live_figures(&self) -> bool {
        true
    }

    /// Pushes once: a URL volley cannot push to is an error; a push that fails is said (a down
    /// endpoint is known at the start) and the run goes on, retrying every second.
    fn start(&mut self, live: &Shared) -> Result<Option<String>, OutputError> {
        let (pusher, first) = match &mut self.receiver {
            Receiver::RemoteWrite(url) => {
                let sink = RemoteWrite::new(url).map_err(ExportError::from)?;
                Pusher::start(sink, live.clone())
            }
            Receiver::Otlp(url, settings) => {
                let env = |name: &str| std::env::var(name).ok();
                let read = OtlpSettings::new(url.as_deref(), env).map_err(ExportError::Otlp)?;
                let sink = Otlp::new(&read).map_err(ExportError::Otlp)?;
                *settings = Some(read);
                Pusher::start(sink, live.clone())
            }
        };
        self.pusher = Some(pusher);
        Ok(first.err().map(|e| {
            format!(
                "warning: the first push failed: {}: {e}; the run goes on, pushes are retried \
                 every second and failures are counted in the record's warnings",
                self.name()
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
        let code = match self.receiver {
            Receiver::RemoteWrite(_) => WarningCode::RemoteWriteFailed,
            Receiver::Otlp(..) => WarningCode::OtlpFailed,
        };
        let to = format!("{} to {}", self.name(), self.url());
        warning(code, &to, &pusher.take_stats())
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

/// The record's warning `code` about failed pushes `to` a receiver, if any failed.
pub fn warning(code: WarningCode, to: &str, stats: &PushStats) -> Option<Warning> {
    if stats.failed == 0 {
        return None;
    }
    let last = match (&stats.first_error, &stats.last_error) {
        (Some(first), Some(last)) if first != last => format!("; last: {last}"),
        _ => String::new(),
    };
    Some(Warning {
        code,
        message: format!(
            "{to}: {} of {} pushes failed (first: {}{last}); the run and this record are \
             complete, but the receiver misses those pushes' samples",
            stats.failed,
            stats.pushes,
            stats.first_error.as_deref().unwrap_or("unknown"),
        ),
    })
}
