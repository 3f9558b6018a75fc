//! What was watched on the target's side (`--watch`), as tables (Markdown, HTML), the terminal
//! summary's lines, and the efficiency figures of a target process that suites compare.

use super::table::Table;
use crate::record::model::RunRecord;
use std::cmp::Ordering;

use crate::record::watch::{
    ProcessRole, ProcessWatched, PromWatched, QuantileBucket, SeriesStat, SeriesStats,
    WatchedSeries,
};
use crate::units::{bytes, rate, thousands};

/// The efficiency of the target's process tree over a run's measured window (see
/// `docs/measurement.md`, "Watching the target").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Efficiency {
    /// User + system CPU seconds of the tree per 1,000 requests volley finished.
    pub cpu_s_per_1k_requests: Option<f64>,
    /// Largest RSS of the tree at a sample, bytes.
    pub peak_rss_bytes: Option<u64>,
    /// Mean CPU cores the tree used.
    pub mean_cores: Option<f64>,
}

/// The process whose figures stand for the target: the one a suite started, else the first
/// watched.
pub fn target_process(r: &RunRecord) -> Option<&ProcessWatched> {
    let w = r.watch.as_ref()?;
    w.processes
        .iter()
        .find(|p| p.role == ProcessRole::SuiteTarget)
        .or_else(|| w.processes.first())
}

/// Requests volley finished in the seconds where `p`'s CPU was sampled (the same seconds as
/// its `cpu_s`).
fn sampled_requests(r: &RunRecord, p: &ProcessWatched) -> u64 {
    r.series
        .iter()
        .filter(|s| p.cpu_cores.get(s.t_s as usize).is_some_and(Option::is_some))
        .map(|s| s.requests)
        .sum()
}

/// The efficiency of `p` over the run `r`.
pub fn efficiency(r: &RunRecord, p: &ProcessWatched) -> Efficiency {
    let requests = sampled_requests(r, p);
    Efficiency {
        cpu_s_per_1k_requests: p
            .cpu_s
            .filter(|_| requests > 0)
            .map(|c| c * 1000.0 / requests as f64),
        peak_rss_bytes: p.peak_rss_bytes,
        mean_cores: p.mean_cores,
    }
}

/// A target's efficiency over several runs (a suite's repeats): CPU seconds and requests summed
/// over the runs, the largest RSS, CPU seconds over the seconds sampled. `None` when no run
/// watched a process.
pub fn runs_efficiency(runs: &[RunRecord]) -> Option<Efficiency> {
    let (mut cpu_s, mut requests, mut sampled_s, mut peak, mut any) = (0.0, 0u64, 0.0, None, false);
    for r in runs {
        let Some(p) = target_process(r) else {
            continue;
        };
        any = true;
        cpu_s += p.cpu_s.unwrap_or(0.0);
        sampled_s += p.sampled_s;
        requests += sampled_requests(r, p);
        peak = peak.max(p.peak_rss_bytes);
    }
    any.then(|| Efficiency {
        cpu_s_per_1k_requests: (requests > 0).then(|| cpu_s * 1000.0 / requests as f64),
        peak_rss_bytes: peak,
        mean_cores: (sampled_s > 0.0).then(|| cpu_s / sampled_s),
    })
}

/// A watched value, compactly: `12,345.6`, `12.3`, `0.00123`; `-` for none.
pub fn value(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if !v.is_finite() => v.to_string(),
        Some(v) if v.abs() >= 100.0 || v == 0.0 => rate(v),
        Some(v) => {
            // Four significant digits, trailing zeros dropped.
            let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
            let text = format!("{v:.digits$}");
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    }
}

/// The tables: one per Prometheus page (a row per series: start, end, min, max, mean) and one
/// of the processes.
pub fn tables(r: &RunRecord) -> Vec<Table> {
    let Some(w) = &r.watch else {
        return Vec::new();
    };
    let mut out: Vec<Table> = w.prom.iter().map(prom_table).collect();
    if !w.processes.is_empty() {
        out.push(process_table(r, &w.processes));
    }
    out
}

/// Which second's bucket a cell shows.
enum Pick {
    First,
    Last,
    Lowest,
    Highest,
}

/// The bucket a quantile series lies in at the second `pick` chooses: "0.02–0.05", "> 0.1".
fn bucket_at(s: &WatchedSeries, pick: Pick) -> String {
    let mut known = s.buckets.iter().flatten();
    let key = |b: &&QuantileBucket| (b.lower, b.upper.unwrap_or(f64::INFINITY));
    let chosen = match pick {
        Pick::First => known.next(),
        Pick::Last => known.next_back(),
        Pick::Lowest => known.min_by(|a, b| key(a).partial_cmp(&key(b)).unwrap_or(Ordering::Equal)),
        Pick::Highest => {
            known.max_by(|a, b| key(a).partial_cmp(&key(b)).unwrap_or(Ordering::Equal))
        }
    };
    chosen.map_or_else(|| "-".into(), |b| b.describe(value))
}

fn prom_table(p: &PromWatched) -> Table {
    let mut t = Table::new(
        &format!("Target metrics: {}", p.url),
        &["<series", "start", "end", "min", "max", "mean"],
    )
    .with_note(format!(
        "Scraped every {} s: {} scrapes, {} failed. Counters as per-second rates, gauges as \
         values, histograms as their rate and quantiles over each interval; one value per second \
         of the run.",
        p.interval_s,
        thousands(p.scrapes),
        thousands(p.failed())
    ));
    for s in &p.series {
        let SeriesStats {
            start,
            end,
            min,
            max,
            mean,
            ..
        } = s.stats;
        if s.stat == SeriesStat::Quantile && !s.buckets.is_empty() {
            // A histogram's quantile is known only to its bucket: the bounds, not the
            // interpolation, are the figure (docs/measurement.md, "Watching the target").
            t.push([
                s.display_name(),
                bucket_at(s, Pick::First),
                bucket_at(s, Pick::Last),
                bucket_at(s, Pick::Lowest),
                bucket_at(s, Pick::Highest),
                format!("≈{}", value(mean)),
            ]);
            continue;
        }
        t.push([
            s.display_name(),
            value(start),
            value(end),
            value(min),
            value(max),
            value(mean),
        ]);
    }
    if p.series.is_empty() {
        t.push(["(no series kept)", "-", "-", "-", "-", "-"]);
    }
    t
}

fn process_table(r: &RunRecord, processes: &[ProcessWatched]) -> Table {
    let mut t = Table::new(
        "Target processes",
        &[
            "<process",
            "CPU s",
            "mean cores",
            "CPU s / 1k req",
            "peak RSS",
            "threads",
            "open fds",
            "<note",
        ],
    )
    .with_note(
        "Each process with its descendants, from /proc over the measured window: user + system \
         CPU seconds, mean CPU cores used, CPU seconds per 1,000 requests volley finished, the \
         largest resident memory seen; threads and open fds at the last sample.",
    );
    for p in processes {
        let e = efficiency(r, p);
        let last = |v: &[Option<u64>]| {
            v.iter()
                .rev()
                .find_map(|x| *x)
                .map_or("-".into(), thousands)
        };
        let note = match (p.exited_at_s, &p.error) {
            (Some(at), _) => format!("exited at {at:.1} s"),
            (None, Some(e)) => e.clone(),
            _ => String::new(),
        };
        t.push([
            process_name(p),
            value(p.cpu_s),
            value(p.mean_cores),
            value(e.cpu_s_per_1k_requests),
            p.peak_rss_bytes.map_or("-".into(), |b| bytes(b as f64)),
            last(&p.threads),
            last(&p.fds),
            note,
        ]);
    }
    t
}

/// `pid 1234 (volley serve)`, the command cut at 40 characters.
pub fn process_name(p: &ProcessWatched) -> String {
    if p.command.is_empty() {
        return format!("pid {}", p.pid);
    }
    let mut cmd: String = p.command.chars().take(40).collect();
    if p.command.chars().count() > 40 {
        cmd.push('…');
    }
    format!("pid {} ({cmd})", p.pid)
}

/// The terminal summary's lines: one per watch.
pub fn text_lines(r: &RunRecord) -> Vec<String> {
    let Some(w) = &r.watch else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in &w.prom {
        let mut line = format!(
            "prom {}: {} series, {} of {} scrapes failed",
            p.url,
            p.series.len(),
            thousands(p.failed()),
            thousands(p.scrapes)
        );
        // The busiest rate stands for the page (the target's request rate, as a rule).
        let headline = p
            .series
            .iter()
            .filter(|s| s.stat == SeriesStat::Rate && s.stats.mean.is_some())
            .max_by(|a, b| {
                a.stats
                    .mean
                    .partial_cmp(&b.stats.mean)
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .or_else(|| p.series.iter().find(|s| s.stats.mean.is_some()));
        if let Some(s) = headline {
            line.push_str(&format!(
                "; {} mean {}",
                s.display_name(),
                value(s.stats.mean)
            ));
        }
        out.push(line);
    }
    for p in &w.processes {
        let e = efficiency(r, p);
        let mut line = format!(
            "{}: CPU {} s ({} cores), {} CPU s per 1k requests, peak RSS {}",
            process_name(p),
            value(p.cpu_s),
            value(p.mean_cores),
            value(e.cpu_s_per_1k_requests),
            p.peak_rss_bytes.map_or("-".into(), |b| bytes(b as f64)),
        );
        if let Some(at) = p.exited_at_s {
            line.push_str(&format!(", exited at {at:.1} s"));
        }
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_compact() {
        assert_eq!(value(None), "-");
        assert_eq!(value(Some(0.0)), "0.0");
        assert_eq!(value(Some(12345.67)), "12,345.7");
        assert_eq!(value(Some(12.3456)), "12.35");
        assert_eq!(value(Some(0.5)), "0.5");
        assert_eq!(value(Some(0.00123)), "0.00123");
    }
}
