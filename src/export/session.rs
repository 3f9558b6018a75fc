//! The exporters of one command: the metrics page and the remote-write pusher, started once and
//! given a fresh [`Exporter`] per run (a `--repeat` run's counters start again from zero, which
//! Prometheus reads as a counter reset).

use std::net::SocketAddr;
use std::time::Duration;

use crate::plan::Plan;
use crate::record::model::{Warning, WarningCode};
use crate::redact::redact_url_userinfo;

use super::ExportError;
use super::live::{Exporter, Shared, shared};
use super::push::{PushStats, Pusher};
use super::remote_write::{PushError, RemoteWrite};
use super::serve::MetricsServer;

/// What to export, from the command line.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// `--metrics-listen`: serve the metrics page here.
    pub listen: Option<SocketAddr>,
    /// `--metrics-linger`: keep serving the final figures this long after the last run.
    pub linger: Duration,
    /// `--prometheus-rw`: push to this remote-write URL.
    pub remote_write: Option<String>,
}

impl ExportOptions {
    /// Whether anything is exported.
    pub fn any(&self) -> bool {
        self.listen.is_some() || self.remote_write.is_some()
    }
}

/// The running exporters.
pub struct Export {
    shared: Shared,
    server: Option<MetricsServer>,
    pusher: Option<(Pusher, String)>,
    first_push: Option<PushError>,
    linger: Duration,
}

impl Export {
    /// Starts what `options` asks for, with `plan`'s series at zero: binds the page's address
    /// (an error if it cannot) and pushes once (a failure is kept for
    /// [`first_push_error`](Self::first_push_error), not an error: the run goes on).
    pub fn start(options: &ExportOptions, plan: &Plan) -> Result<Self, ExportError> {
        Self::start_for(options, Some(plan))
    }

    /// Like [`start`](Self::start); without a plan only the whole run's series start at zero
    /// (a coordinator given no plan, whose figures come from [`Exporter::whole_run`]).
    pub fn start_for(options: &ExportOptions, plan: Option<&Plan>) -> Result<Self, ExportError> {
        let shared = shared();
        match plan {
            Some(plan) => drop(Exporter::new(plan, shared.clone())),
            None => drop(Exporter::whole_run(shared.clone())),
        }
        let server = options
            .listen
            .map(|addr| MetricsServer::bind(addr, shared.clone()))
            .transpose()?;
        let (pusher, first_push) = match &options.remote_write {
            Some(url) => {
                let rw = RemoteWrite::new(url)?;
                let (pusher, first) = Pusher::start(rw, shared.clone());
                (Some((pusher, redact_url_userinfo(url))), first.err())
            }
            None => (None, None),
        };
        Ok(Self {
            shared,
            server,
            pusher,
            first_push,
            linger: options.linger,
        })
    }

    /// Where the metrics page is served.
    pub fn listening(&self) -> Option<SocketAddr> {
        self.server.as_ref().map(MetricsServer::addr)
    }

    /// Why the first push failed, if it did.
    pub fn first_push_error(&self) -> Option<&PushError> {
        self.first_push.as_ref()
    }

    /// The figures the page and the pusher read, for a writer other than
    /// [`observer`](Self::observer)'s (the coordinator's sum of its generators).
    pub fn shared(&self) -> Shared {
        self.shared.clone()
    }

    /// The observer of one run of `plan`.
    pub fn observer(&self, plan: &Plan) -> Exporter {
        Exporter::new(plan, self.shared.clone())
    }

    /// After a run: pushes its final figures (waiting one push's deadline at most) and returns
    /// the warnings the record gets (failed pushes since the last call).
    pub fn run_ended(&self) -> Vec<Warning> {
        let Some((pusher, url)) = &self.pusher else {
            return Vec::new();
        };
        pusher.flush();
        warning(url, &pusher.take_stats()).into_iter().collect()
    }

    /// After the last run: keeps serving the final figures for the linger time, then stops.
    pub fn close(self) {
        if let Some((pusher, _)) = self.pusher {
            pusher.close();
        }
        if self.server.is_some() && !self.linger.is_zero() {
            // The feature itself: the page stays up so that a scraper reads the final figures.
            std::thread::sleep(self.linger);
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
