//! What to watch, typed and validated before a run: `--watch prom=URL`, `--watch pid=N`, a plan's
//! or a suite's `[[watch]]`, and the process a suite starts for a target.

use std::time::Duration;

use super::prom::DEFAULT_MAX_SERIES;
use super::scrape::{DEFAULT_TIMEOUT, UrlError, check_url};
use super::select::{Selector, SelectorError};

/// Scrape or sample interval unless told otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);
/// The shortest interval accepted.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// The largest `max_series` accepted per Prometheus watch.
pub const MAX_SERIES_LIMIT: usize = 10_000;

/// One watch: what, and how often.
#[derive(Debug, Clone)]
pub struct Spec {
    /// What is watched.
    pub source: Source,
    /// Time between two scrapes or samples.
    pub interval: Duration,
}

/// What one watch looks at.
#[derive(Debug, Clone)]
pub enum Source {
    /// A Prometheus (or OpenMetrics) text page.
    Prom(Prom),
    /// A process and its descendants, from `/proc`.
    Process(Process),
}

/// A Prometheus watch.
#[derive(Debug, Clone)]
pub struct Prom {
    /// The page's URL (`http://` only).
    pub url: String,
    /// The selectors as written (empty: every series, up to `max_series`).
    pub metrics: Vec<String>,
    /// The selectors, parsed.
    pub selectors: Vec<Selector>,
    /// Series kept at most; the rest are counted, not kept.
    pub max_series: usize,
    /// Deadline of one scrape (shorter than the interval).
    pub timeout: Duration,
}

// One type for the watch and the record (`record::watch` re-exports it): its docs are the
// record schema's words. `Given`: also `pid = N` in a plan; `SuiteTarget`: the suite's efficiency
// figures read it.
/// Why a process was watched.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ProcessRole {
    /// The user named it (`--watch pid=N`).
    Given,
    /// `volley suite` started it as the target's command.
    SuiteTarget,
}

/// A process watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Process {
    /// The root of the watched tree.
    pub pid: u32,
    /// Why it is watched.
    pub role: ProcessRole,
}

/// `prom=URL` or `pid=N`, as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchTarget {
    /// `prom=URL`.
    Prom(String),
    /// `pid=N`.
    Pid(u32),
}

/// The choices of a watch besides its target; `None` takes the default.
#[derive(Debug, Clone, Default)]
pub struct WatchOptions {
    /// Selectors (`--watch-metric`, `metrics = […]`).
    pub metrics: Vec<String>,
    /// Series kept at most (default [`DEFAULT_MAX_SERIES`]).
    pub max_series: Option<usize>,
    /// Interval (default [`DEFAULT_INTERVAL`]).
    pub interval: Option<Duration>,
    /// Scrape deadline (default the shorter of [`DEFAULT_TIMEOUT`] and 80 % of the interval).
    pub timeout: Option<Duration>,
}

/// A watch that cannot be carried out as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Neither `prom=` nor `pid=`.
    #[error("`{0}`: write prom=URL (a Prometheus metrics page) or pid=N (a process)")]
    Form(String),
    /// `pid=` without a positive whole number.
    #[error("`{0}`: a PID is a positive whole number")]
    Pid(String),
    /// The URL is not an `http://` URL with a host.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// A selector does not parse.
    #[error(transparent)]
    Selector(#[from] SelectorError),
    /// The interval is below [`MIN_INTERVAL`].
    #[error("watch interval {0:?} is too short: at least 100ms")]
    Interval(Duration),
    /// The scrape timeout is not shorter than the interval.
    #[error("watch timeout {timeout:?} must be shorter than the interval ({interval:?})")]
    Timeout {
        /// The timeout given.
        timeout: Duration,
        /// The interval.
        interval: Duration,
    },
    /// `max_series` outside 1 to [`MAX_SERIES_LIMIT`].
    #[error("watch max series must be 1 to {MAX_SERIES_LIMIT}, not {0}")]
    MaxSeries(usize),
    /// Selectors or Prometheus options on a process watch.
    #[error("pid={0}: metrics, max series and timeout apply to prom= watches only")]
    PromOptionOnPid(u32),
}

impl WatchTarget {
    /// Parses `prom=URL` or `pid=N`.
    pub fn parse(s: &str) -> Result<WatchTarget, SpecError> {
        let s = s.trim();
        if let Some(url) = s.strip_prefix("prom=") {
            check_url(url)?;
            return Ok(WatchTarget::Prom(url.to_string()));
        }
        if let Some(pid) = s.strip_prefix("pid=") {
            return match pid.trim().parse::<u32>() {
                Ok(n) if n > 0 => Ok(WatchTarget::Pid(n)),
                _ => Err(SpecError::Pid(s.to_string())),
            };
        }
        Err(SpecError::Form(s.to_string()))
    }
}

impl Spec {
    /// A watch of `target` with `options`, every choice checked (the URL is not resolved).
    pub fn new(target: WatchTarget, options: &WatchOptions) -> Result<Spec, SpecError> {
        let interval = options.interval.unwrap_or(DEFAULT_INTERVAL);
        if interval < MIN_INTERVAL {
            return Err(SpecError::Interval(interval));
        }
        let source = match target {
            WatchTarget::Pid(pid) => {
                let prom_only = !options.metrics.is_empty()
                    || options.max_series.is_some()
                    || options.timeout.is_some();
                if prom_only {
                    return Err(SpecError::PromOptionOnPid(pid));
                }
                Source::Process(Process {
                    pid,
                    role: ProcessRole::Given,
                })
            }
            WatchTarget::Prom(url) => Source::Prom(prom(url, options, interval)?),
        };
        Ok(Spec { source, interval })
    }

    /// The watch `volley suite` puts on a target's command.
    pub fn suite_target(pid: u32) -> Spec {
        Spec {
            source: Source::Process(Process {
                pid,
                role: ProcessRole::SuiteTarget,
            }),
            interval: DEFAULT_INTERVAL,
        }
    }

    /// The watch as a user writes it: `prom=URL` or `pid=N`.
    pub fn describe(&self) -> String {
        match &self.source {
            Source::Prom(p) => format!("prom={}", crate::redact::redact_url_userinfo(&p.url)),
            Source::Process(p) => format!("pid={}", p.pid),
        }
    }
}

fn prom(url: String, options: &WatchOptions, interval: Duration) -> Result<Prom, SpecError> {
    check_url(&url)?;
    let selectors = options
        .metrics
        .iter()
        .map(|m| Selector::parse(m))
        .collect::<Result<Vec<_>, _>>()?;
    let max_series = options.max_series.unwrap_or(DEFAULT_MAX_SERIES);
    if !(1..=MAX_SERIES_LIMIT).contains(&max_series) {
        return Err(SpecError::MaxSeries(max_series));
    }
    let timeout = match options.timeout {
        Some(t) if t >= interval || t.is_zero() => {
            return Err(SpecError::Timeout {
                timeout: t,
                interval,
            });
        }
        Some(t) => t,
        None => DEFAULT_TIMEOUT.min(interval.mul_f64(0.8)),
    };
    Ok(Prom {
        url,
        metrics: options.metrics.clone(),
        selectors,
        max_series,
        timeout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_bad_ones_say_what_to_write() {
        assert_eq!(
            WatchTarget::parse("prom=http://127.0.0.1:9/metrics"),
            Ok(WatchTarget::Prom("http://127.0.0.1:9/metrics".into()))
        );
        assert_eq!(WatchTarget::parse("pid=42"), Ok(WatchTarget::Pid(42)));
        for bad in ["pid=0", "pid=x", "pid=-3"] {
            assert!(
                matches!(WatchTarget::parse(bad), Err(SpecError::Pid(_))),
                "{bad}"
            );
        }
        let e = WatchTarget::parse("http://x/metrics")
            .unwrap_err()
            .to_string();
        assert!(e.contains("prom=URL") && e.contains("pid=N"), "{e}");
        let e = WatchTarget::parse("prom=https://x/metrics")
            .unwrap_err()
            .to_string();
        assert!(e.contains("only http://"), "{e}");
    }

    #[test]
    fn options_are_checked_and_defaults_fit_the_interval() {
        let url = || WatchTarget::Prom("http://127.0.0.1:9/metrics".into());
        let spec = Spec::new(url(), &WatchOptions::default()).unwrap();
        let Source::Prom(p) = &spec.source else {
            panic!()
        };
        assert_eq!((p.max_series, p.timeout), (100, DEFAULT_TIMEOUT));
        let fast = WatchOptions {
            interval: Some(Duration::from_millis(500)),
            ..WatchOptions::default()
        };
        let Source::Prom(p) = Spec::new(url(), &fast).unwrap().source else {
            panic!()
        };
        assert_eq!(p.timeout, Duration::from_millis(400));
        let bad = |o: WatchOptions| Spec::new(url(), &o).unwrap_err();
        assert!(matches!(
            bad(WatchOptions {
                metrics: vec!["x{".into()],
                ..WatchOptions::default()
            }),
            SpecError::Selector(_)
        ));
        assert!(matches!(
            bad(WatchOptions {
                timeout: Some(Duration::from_secs(2)),
                ..WatchOptions::default()
            }),
            SpecError::Timeout { .. }
        ));
        assert!(matches!(
            bad(WatchOptions {
                max_series: Some(0),
                ..WatchOptions::default()
            }),
            SpecError::MaxSeries(0)
        ));
        let on_pid = Spec::new(
            WatchTarget::Pid(7),
            &WatchOptions {
                metrics: vec!["x".into()],
                ..WatchOptions::default()
            },
        );
        assert!(matches!(on_pid, Err(SpecError::PromOptionOnPid(7))));
    }
}
