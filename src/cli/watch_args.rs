//! `--watch` and its options, shared by quick mode and `volley run`.

use std::time::Duration;

use clap::Args;
use volley::watch::spec::{Spec, WatchOptions, WatchTarget};

/// Watching the target's side during the run.
#[derive(Debug, Clone, Default, Args)]
pub struct WatchArgs {
    /// Watch the target's side during the run (repeatable): `prom=URL` scrapes a Prometheus
    /// metrics page every interval; `pid=N` samples a process and its descendants (CPU, RSS,
    /// threads, open fds) from /proc. A failed scrape is counted and reported, never fatal.
    #[arg(
        long = "watch",
        value_name = "prom=URL|pid=N",
        value_parser = WatchTarget::parse,
        help_heading = "Watching the target"
    )]
    pub targets: Vec<WatchTarget>,
    /// Keep only these series of the prom= watches (repeatable), PromQL-style: `name`,
    /// `name{label="v"}`, `{__name__=~"http_.*"}` (default: every series, up to
    /// --watch-max-series).
    #[arg(
        long = "watch-metric",
        value_name = "SELECTOR",
        help_heading = "Watching the target"
    )]
    pub metrics: Vec<String>,
    /// Time between two scrapes or samples, e.g. 1s, 500ms (default 1s; at least 100ms).
    #[arg(
        long = "watch-interval",
        value_name = "DURATION",
        value_parser = super::args::parse_duration,
        help_heading = "Watching the target"
    )]
    pub interval: Option<Duration>,
    /// Series kept per prom= watch (default 100; the rest are counted and reported).
    #[arg(
        long = "watch-max-series",
        value_name = "N",
        help_heading = "Watching the target"
    )]
    pub max_series: Option<usize>,
}

impl WatchArgs {
    /// The watches the flags ask for: `--watch-metric` and `--watch-max-series` apply to the
    /// prom= ones.
    pub fn specs(&self) -> Result<Vec<Spec>, volley::Error> {
        self.targets
            .iter()
            .map(|target| {
                let prom = matches!(target, WatchTarget::Prom(_));
                let options = WatchOptions {
                    metrics: if prom {
                        self.metrics.clone()
                    } else {
                        Vec::new()
                    },
                    max_series: self.max_series.filter(|_| prom),
                    interval: self.interval,
                    timeout: None,
                };
                Spec::new(target.clone(), &options).map_err(|e| volley::Error::Invalid {
                    what: "--watch".into(),
                    why: e.to_string(),
                })
            })
            .collect()
    }
}
