//! `--metrics-listen`, `--metrics-linger`, `--prometheus-rw`: volley's own live metrics for
//! Prometheus, in quick mode and `volley run`.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;
use volley::export::{Export, ExportOptions};
use volley::plan::Plan;

use super::args::parse_duration;

/// Live metrics for Prometheus.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Live metrics")]
pub struct ExportArgs {
    /// While the run lasts, serve volley's live metrics at http://ADDR/metrics in the
    /// Prometheus text format, e.g. 127.0.0.1:9464 (port 0: any free port; the address is
    /// printed on stderr).
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    /// Keep serving the final figures this long after the run, so that a scraper reads them,
    /// e.g. 5s (default: stop with the run).
    #[arg(
        long,
        value_name = "DURATION",
        value_parser = parse_duration,
        default_value = "0s",
        requires = "metrics_listen"
    )]
    pub metrics_linger: Duration,
    /// Push the same metrics every second, and once at the end, by Prometheus remote write,
    /// e.g. http://127.0.0.1:9090/api/v1/write. A push that fails is counted in the record's
    /// warnings; the run goes on.
    #[arg(long, value_name = "URL")]
    pub prometheus_rw: Option<String>,
}

impl ExportArgs {
    /// What to export.
    pub fn options(&self) -> ExportOptions {
        ExportOptions {
            listen: self.metrics_listen,
            linger: self.metrics_linger,
            remote_write: self.prometheus_rw.clone(),
        }
    }
}

/// Starts the exporters `options` asks for (none: `None`) and says on stderr where the page is
/// and whether the first push failed.
pub fn start(options: &ExportOptions, plan: &Plan) -> anyhow::Result<Option<Export>> {
    if !options.any() {
        return Ok(None);
    }
    let export = Export::start(options, plan)?;
    if let Some(addr) = export.listening() {
        eprintln!("volley: live metrics at http://{addr}/metrics");
    }
    if let Some(e) = export.first_push_error() {
        eprintln!(
            "volley: warning: the first push failed: {e}; the run goes on, pushes are retried \
             every second and failures are counted in the record's warnings"
        );
    }
    Ok(Some(export))
}
