//! What a run leaves behind, from its flags: `--json`, the results folder (`--out`, `--repeat`),
//! `--metrics-listen`, `--metrics-linger`, `--prometheus-rw`, `--otlp` — one [`Outputs`] per
//! command.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use volley::run::Outputs;
use volley::run::output::{JsonFile, MetricsPage, Pushes, ResultsFolder};

use super::args::parse_duration;

/// Live metrics for Prometheus and OpenTelemetry.
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
    /// Push them as OpenTelemetry metrics (OTLP/HTTP protobuf), e.g. http://127.0.0.1:4318
    /// (/v1/metrics added to a URL without a path); without a URL, from
    /// OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT, else localhost:4318. OTEL_RESOURCE_ATTRIBUTES,
    /// OTEL_SERVICE_NAME and OTEL_EXPORTER_OTLP_HEADERS are honoured.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub otlp: Option<String>,
}

impl ExportArgs {
    /// Whether anything is exported.
    pub fn any(&self) -> bool {
        self.metrics_listen.is_some() || self.prometheus_rw.is_some() || self.otlp.is_some()
    }

    /// `outputs` with the live outputs asked for after them.
    pub fn add_to(&self, mut outputs: Outputs) -> Outputs {
        if let Some(url) = &self.prometheus_rw {
            outputs = outputs.with(Pushes::remote_write(url));
        }
        if let Some(url) = &self.otlp {
            outputs = outputs.with(Pushes::otlp((!url.is_empty()).then_some(url.as_str())));
        }
        if let Some(addr) = self.metrics_listen {
            outputs = outputs.with(MetricsPage::new(addr, self.metrics_linger));
        }
        outputs
    }
}

/// The record's outputs: `--json` first, then a new results folder in `out` per run (with
/// `repeat` above 1, one folder for the series of the test `name`).
pub fn records(json: Option<PathBuf>, out: &Path, repeat: u32, name: &str) -> Outputs {
    let mut outputs = Outputs::none();
    if let Some(path) = json {
        outputs = outputs.with(JsonFile::new(path));
    }
    outputs.with(match repeat > 1 {
        true => ResultsFolder::repeats(out, name),
        false => ResultsFolder::new(out),
    })
}

/// Starts `outputs` before anything is measured and says on stderr, after `who`, what they
/// say (where the page is, a first push that failed).
pub fn start(
    outputs: &mut Outputs,
    plan: Option<&volley::plan::Plan>,
    who: &str,
) -> anyhow::Result<()> {
    for line in outputs.start(plan)? {
        eprintln!("{who}: {line}");
    }
    Ok(())
}
