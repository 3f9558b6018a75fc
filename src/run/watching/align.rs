//! From ticks to the record: each figure placed in the second of the run's series it describes.
//!
//! A tick at `t1` (seconds since measuring began) whose watch ticked before at `t0` describes the
//! interval `[t0, t1]`: its rates, CPU cores and the values read at `t1` go to second
//! `floor(t0)` (with 50 ms of slack for a tick a little late on its grid), the second that interval
//! starts in. Ticks of the warm-up (before 0) and of the drain (past the last second) are left
//! out; so is the first tick, which only sets the baseline.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use crate::record::watch::{
    MetricKind, ProcessWatched, PromWatched, QuantileBucket, SeriesStat, SeriesStats, WatchedSeries,
};
use crate::watch::PromTick;
use crate::watch::process::ProcSample;
use crate::watch::prom::{ReadingStat, SeriesId};
use crate::watch::scrape::{FAILURE_KINDS, Failures};
use crate::watch::spec::{Process, Prom};
use crate::watch::text::Kind;

/// A tick's lateness on its grid that still counts as on time, seconds.
const SLACK_S: f64 = 0.05;

/// One sample of a process tree, at `t_s` seconds since measuring began.
#[derive(Debug, Clone)]
pub struct ProcTick {
    /// When it was taken.
    pub t_s: f64,
    /// What it gave.
    pub outcome: ProcOutcome,
}

/// What one process sample gave.
#[derive(Debug, Clone)]
pub enum ProcOutcome {
    /// The tree's figures.
    Sample(ProcSample),
    /// The root process is gone.
    Exited,
    /// `/proc` could not be read.
    Failed(String),
}

/// One kept figure: its series, what it is, a value per second and, for a quantile, the
/// bucket it lies in per second.
struct Column {
    series: usize,
    stat: ReadingStat,
    values: Vec<Option<f64>>,
    buckets: Vec<Option<QuantileBucket>>,
}

/// The second that an interval starting at `t0_s` describes, if inside `0..seconds`.
fn slot(t0_s: f64, seconds: usize) -> Option<usize> {
    let k = (t0_s + SLACK_S).floor();
    (k >= 0.0 && (k as usize) < seconds).then_some(k as usize)
}

/// A Prometheus watch's ticks folded into per-second columns as they come, so that memory holds
/// one number per kept figure and second, not every tick.
#[derive(Default)]
pub(super) struct PromColumns {
    ids: Vec<SeriesId>,
    columns: Vec<Column>,
    index: HashMap<(usize, u64), usize>,
    over_cap: u64,
    scrapes: u64,
    last_t_s: Option<f64>,
    failures: Failures,
}

impl PromColumns {
    /// Adds the next tick.
    pub(super) fn add(&mut self, tick: PromTick) {
        self.ids.extend(tick.new_series);
        self.over_cap = self.over_cap.max(tick.over_cap as u64);
        self.scrapes += 1;
        self.failures = tick.failures;
        let slot = self.last_t_s.and_then(|t0| slot(t0, usize::MAX));
        self.last_t_s = Some(tick.t_s);
        let Some(k) = slot else {
            return;
        };
        for r in tick.readings {
            let key = (r.series, stat_key(r.stat));
            let columns = &mut self.columns;
            let c = *self.index.entry(key).or_insert_with(|| {
                columns.push(Column {
                    series: r.series,
                    stat: r.stat,
                    values: Vec::new(),
                    buckets: Vec::new(),
                });
                columns.len() - 1
            });
            let column = &mut self.columns[c];
            if column.values.len() <= k {
                column.values.resize(k + 1, None);
            }
            column.values[k] = Some(r.value);
            if let Some((lower, upper)) = r.bucket {
                if column.buckets.len() <= k {
                    column.buckets.resize(k + 1, None);
                }
                column.buckets[k] = Some(QuantileBucket {
                    lower,
                    upper: upper.is_finite().then_some(upper),
                });
            }
        }
    }

    /// What the watch says now: scrapes, failures (`error`: its thread could not start) and
    /// each kept figure's value in the latest second that has one, in the record's order.
    pub(super) fn now(&self, spec: &Prom, error: Option<&str>) -> super::PromNow {
        let mut figures: Vec<(usize, f64, String, f64)> = self
            .columns
            .iter()
            .filter_map(|c| {
                let value = c.values.iter().rev().find_map(|v| *v)?;
                let id = self.ids.get(c.series)?;
                let name = series(id, c.stat, Vec::new()).display_name();
                Some((c.series, stat_order(c.stat), name, value))
            })
            .collect();
        figures.sort_by(|a, b| {
            (a.0, a.1)
                .partial_cmp(&(b.0, b.1))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let failed: u64 = self.failures.by_kind.iter().sum();
        super::PromNow {
            url: crate::redact::redact_url_userinfo(&spec.url),
            scrapes: self.scrapes,
            failed: failed + u64::from(error.is_some()),
            last_failure: error
                .map(str::to_string)
                .or_else(|| self.failures.last.clone()),
            figures: figures.into_iter().map(|(_, _, n, v)| (n, v)).collect(),
        }
    }

    /// The record of the watch `spec`, for a run whose series has `seconds` entries.
    pub(super) fn record(
        self,
        spec: &Prom,
        interval: Duration,
        error: Option<&str>,
        seconds: usize,
    ) -> PromWatched {
        let mut columns = self.columns;
        columns.sort_by(|a, b| {
            (a.series, stat_order(a.stat))
                .partial_cmp(&(b.series, stat_order(b.stat)))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let mut failures: BTreeMap<String, u64> = FAILURE_KINDS
            .iter()
            .zip(self.failures.by_kind)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| ((*k).to_string(), n))
            .collect();
        let mut last_failure = self.failures.last;
        if let Some(e) = error {
            *failures.entry("io".into()).or_default() += 1;
            last_failure = Some(e.to_string());
        }
        let ids = self.ids;
        PromWatched {
            url: crate::redact::redact_url_userinfo(&spec.url),
            metrics: spec.metrics.clone(),
            interval_s: interval.as_secs_f64(),
            max_series: spec.max_series,
            scrapes: self.scrapes,
            failures,
            last_failure,
            over_cap: self.over_cap,
            series: columns
                .into_iter()
                .filter_map(|mut c| {
                    c.values.resize(seconds, None);
                    if !c.buckets.is_empty() {
                        c.buckets.resize(seconds, None);
                    }
                    let mut s = series(ids.get(c.series)?, c.stat, c.values);
                    s.buckets = c.buckets;
                    Some(s)
                })
                .collect(),
        }
    }
}

fn series(id: &SeriesId, stat: ReadingStat, values: Vec<Option<f64>>) -> WatchedSeries {
    let (stat, quantile) = match stat {
        ReadingStat::Rate => (SeriesStat::Rate, None),
        ReadingStat::Value => (SeriesStat::Value, None),
        ReadingStat::Quantile(q) => (SeriesStat::Quantile, Some(q)),
    };
    WatchedSeries {
        name: id.name.clone(),
        labels: id.labels.clone(),
        kind: match id.kind {
            Kind::Counter => MetricKind::Counter,
            Kind::Gauge => MetricKind::Gauge,
            Kind::Histogram => MetricKind::Histogram,
            Kind::Summary => MetricKind::Summary,
            Kind::Untyped => MetricKind::Untyped,
        },
        stat,
        quantile,
        stats: SeriesStats::of(&values),
        values,
        buckets: Vec::new(),
    }
}

/// A key for a stat (quantiles by their bits).
fn stat_key(s: ReadingStat) -> u64 {
    match s {
        ReadingStat::Rate => u64::MAX,
        ReadingStat::Value => u64::MAX - 1,
        ReadingStat::Quantile(q) => q.to_bits(),
    }
}

/// Rate and value first, then quantiles ascending.
fn stat_order(s: ReadingStat) -> f64 {
    match s {
        ReadingStat::Rate | ReadingStat::Value => -1.0,
        ReadingStat::Quantile(q) => q,
    }
}

/// A process watch's record.
pub(super) fn process(
    spec: &Process,
    command: &str,
    interval: Duration,
    ticks: &[ProcTick],
    error: Option<&str>,
    seconds: usize,
) -> ProcessWatched {
    let mut out = ProcessWatched {
        pid: spec.pid,
        role: spec.role,
        command: command.to_string(),
        interval_s: interval.as_secs_f64(),
        cpu_cores: vec![None; seconds],
        rss_bytes: vec![None; seconds],
        threads: vec![None; seconds],
        fds: vec![None; seconds],
        cpu_s: None,
        sampled_s: 0.0,
        mean_cores: None,
        peak_rss_bytes: None,
        exited_at_s: None,
        error: error.map(str::to_string),
    };
    let mut last: Option<(f64, ProcSample)> = None;
    for tick in ticks {
        let s = match &tick.outcome {
            ProcOutcome::Sample(s) => *s,
            ProcOutcome::Exited => {
                out.exited_at_s = Some(tick.t_s.max(0.0));
                break;
            }
            ProcOutcome::Failed(e) => {
                out.error = Some(e.clone());
                continue;
            }
        };
        if let Some((t0, s0)) = last
            && let Some(k) = slot(t0, seconds)
            && tick.t_s > t0
        {
            let dt = tick.t_s - t0;
            let cpu = (s.cpu_s - s0.cpu_s).max(0.0);
            out.cpu_cores[k] = Some(cpu / dt);
            out.rss_bytes[k] = Some(s.rss_bytes);
            out.threads[k] = Some(s.threads);
            out.fds[k] = Some(s.fds);
            out.cpu_s = Some(out.cpu_s.unwrap_or(0.0) + cpu);
            out.sampled_s += dt;
            out.peak_rss_bytes = Some(out.peak_rss_bytes.unwrap_or(0).max(s.rss_bytes));
        }
        last = Some((tick.t_s, s));
    }
    out.mean_cores = out
        .cpu_s
        .filter(|_| out.sampled_s > 0.0)
        .map(|c| c / out.sampled_s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::watch::ProcessRole;

    #[test]
    fn an_interval_goes_to_the_second_it_starts_in() {
        assert_eq!(slot(-0.3, 5), None, "warm-up");
        assert_eq!(slot(-0.01, 5), Some(0), "a hair early on the grid");
        assert_eq!(slot(0.0, 5), Some(0));
        assert_eq!(slot(1.04, 5), Some(1));
        assert_eq!(slot(1.97, 5), Some(2), "within the slack of 2");
        assert_eq!(slot(5.0, 5), None, "the drain");
    }

    fn sample(cpu_s: f64, rss_bytes: u64) -> ProcOutcome {
        ProcOutcome::Sample(ProcSample {
            cpu_s,
            rss_bytes,
            threads: 2,
            fds: 5,
            processes: 1,
            fds_unreadable: 0,
        })
    }

    #[test]
    fn cpu_cores_are_cpu_seconds_per_second_and_an_exit_is_noted() {
        let spec = Process {
            pid: 9,
            role: ProcessRole::SuiteTarget,
        };
        let ticks = [
            (-0.2, sample(1.0, 10)),
            (0.0, sample(1.1, 10)),
            (1.0, sample(1.6, 30)),
            (2.0, sample(2.6, 20)),
            (2.5, ProcOutcome::Exited),
        ]
        .map(|(t_s, outcome)| ProcTick { t_s, outcome });
        let p = process(&spec, "x", Duration::from_secs(1), &ticks, None, 3);
        assert_eq!(p.cpu_cores, [Some(0.5), Some(1.0), None]);
        assert_eq!(p.rss_bytes, [Some(30), Some(20), None]);
        assert!((p.cpu_s.unwrap() - 1.5).abs() < 1e-9);
        assert_eq!(p.mean_cores, Some(0.75));
        assert_eq!(p.peak_rss_bytes, Some(30));
        assert_eq!(p.exited_at_s, Some(2.5));
        assert_eq!(p.role, ProcessRole::SuiteTarget);
    }
}
