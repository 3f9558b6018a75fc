//! The charts of what was watched on the target's side (`--watch`), drawn under volley's own
//! throughput chart on the same time axis (seconds since measuring began): per Prometheus page,
//! its rates next to volley's requests per second, and its values; per run, the watched
//! processes' CPU cores and resident memory.

use super::run::{drawn, mid, rate, time_chart};
use super::{BLUE, Chart, ChartLine, short};
use crate::error::Error;
use crate::record::model::RunRecord;
use crate::record::watch::{PromWatched, SeriesStat};

/// Lines drawn per chart at most (the table lists every series).
const MAX_LINES: usize = 8;

/// The watch's charts, in page order (none without a watch).
pub fn watch_charts(r: &RunRecord) -> Result<Vec<Chart>, Error> {
    let Some(w) = &r.watch else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (i, p) in w.prom.iter().enumerate() {
        out.extend(prom_rates(r, p, i)?);
        out.extend(prom_values(r, p, i)?);
    }
    out.extend(processes(r)?);
    Ok(out)
}

/// A watched series' values at the middle of each drawn second.
fn points<T: Copy>(
    r: &RunRecord,
    values: &[Option<T>],
    f: impl Fn(T) -> f64,
) -> Vec<(f64, Option<f64>)> {
    drawn(r)
        .iter()
        .map(|s| {
            let v = values.get(s.t_s as usize).copied().flatten().map(&f);
            (mid(s), v)
        })
        .collect()
}

fn prom_rates(r: &RunRecord, p: &PromWatched, i: usize) -> Result<Option<Chart>, Error> {
    let volley = ChartLine::new(
        "volley requests/s",
        BLUE,
        drawn(r)
            .iter()
            .map(|s| (mid(s), Some(rate(s.requests, s))))
            .collect(),
    );
    let mut lines = vec![volley];
    let rates = p.series.iter().filter(|s| s.stat == SeriesStat::Rate);
    for (n, s) in rates.take(MAX_LINES - 1).enumerate() {
        lines.push(ChartLine::new(
            &s.display_name(),
            n + 1,
            points(r, &s.values, |v| v),
        ));
    }
    if lines.len() == 1 {
        return Ok(None);
    }
    time_chart(
        r,
        (
            &format!("watch-rates-{i}"),
            &format!("Target's rates: {}", p.url),
            "The target's counters as per-second rates over each scrape interval, next to the \
             requests volley finished per second.",
        ),
        "per second",
        &|v| short(*v),
        &lines,
    )
}

fn prom_values(r: &RunRecord, p: &PromWatched, i: usize) -> Result<Option<Chart>, Error> {
    let lines: Vec<ChartLine> = p
        .series
        .iter()
        .filter(|s| s.stat == SeriesStat::Value)
        .take(MAX_LINES)
        .enumerate()
        .map(|(n, s)| ChartLine::new(&s.display_name(), n, points(r, &s.values, |v| v)))
        .collect();
    if lines.is_empty() {
        return Ok(None);
    }
    time_chart(
        r,
        (
            &format!("watch-values-{i}"),
            &format!("Target's gauges: {}", p.url),
            "The target's gauges as read at the end of each second.",
        ),
        "value",
        &|v| short(*v),
        &lines,
    )
}

fn processes(r: &RunRecord) -> Result<Vec<Chart>, Error> {
    let Some(w) = &r.watch else {
        return Ok(Vec::new());
    };
    let name = |p: &crate::record::watch::ProcessWatched| format!("pid {}", p.pid);
    let cpu: Vec<ChartLine> = w
        .processes
        .iter()
        .take(MAX_LINES)
        .enumerate()
        .map(|(n, p)| ChartLine::new(&name(p), n, points(r, &p.cpu_cores, |v| v)))
        .collect();
    let rss: Vec<ChartLine> = w
        .processes
        .iter()
        .take(MAX_LINES)
        .enumerate()
        .map(|(n, p)| {
            ChartLine::new(
                &name(p),
                n,
                points(r, &p.rss_bytes, |v| v as f64 / 1048576.0),
            )
        })
        .collect();
    let mut out = Vec::new();
    out.extend(time_chart(
        r,
        (
            "watch-cpu",
            "Target processes: CPU",
            "CPU cores used by each watched process and its descendants (user + system CPU \
             seconds per second), from /proc.",
        ),
        "CPU cores",
        &|v| short(*v),
        &cpu,
    )?);
    out.extend(time_chart(
        r,
        (
            "watch-rss",
            "Target processes: memory",
            "Resident memory of each watched process and its descendants at the end of each \
             second, from /proc.",
        ),
        "RSS (MiB)",
        &|v| short(*v),
        &rss,
    )?);
    Ok(out)
}
