//! The charts of one run, from its record alone.

use super::{
    Axes, BLUE, Bars, Chart, ChartLine, GREEN, LegendItem, ORANGE, Overlay, RED, css_color,
    draw_bars, draw_lines, has_points, legend, short,
};
use crate::analysis::spectrum::{percentile_label, spectrum};
use crate::error::Error;
use crate::record::decode_histogram;
use crate::record::model::{GroupKind, Model, RunRecord};
use crate::record::series::SecondStats;

/// Every chart the record has data for, in page order. A chart without data (no series, no
/// response, no phases) is left out rather than drawn empty.
pub fn run_charts(r: &RunRecord) -> Result<Vec<Chart>, Error> {
    let mut out = Vec::new();
    if let Some(f) = &r.find_max {
        out.extend(super::findmax::find_max_charts(f)?);
    }
    out.extend(throughput(r)?);
    out.extend(super::watch::watch_charts(r)?);
    out.extend(latency_over_time(r)?);
    out.extend(in_flight(r)?);
    out.extend(spectrum_chart(r)?);
    out.extend(streams_spectrum(r)?);
    out.extend(histogram(r)?);
    out.extend(super::grouped::grouped_charts(r)?);
    out.extend(phases(r)?);
    Ok(out)
}

/// Middle of a second of the series, seconds since measuring began.
pub(super) fn mid(s: &SecondStats) -> f64 {
    s.t_s as f64 + s.span_s / 2.0
}

fn time_range(r: &RunRecord) -> std::ops::Range<f64> {
    let end = r
        .series
        .iter()
        .map(|s| s.t_s as f64 + s.span_s)
        .fold(r.summary.duration_s, f64::max);
    0.0..end.max(1.0)
}

/// The seconds drawn over time: all of them, except a final partial interval shorter than half a
/// second (the drain after the last request was sent), whose rate would be a spike or a plunge
/// drawn from a few milliseconds. A run shorter than that keeps everything.
pub(crate) fn drawn(r: &RunRecord) -> &[SecondStats] {
    match r.series.split_last() {
        Some((last, rest)) if last.span_s < 0.5 && !rest.is_empty() => rest,
        _ => &r.series,
    }
}

pub(super) fn rate(count: u64, s: &SecondStats) -> f64 {
    if s.span_s > 0.0 {
        count as f64 / s.span_s
    } else {
        0.0
    }
}

pub(super) fn time_chart(
    r: &RunRecord,
    (id, title, note): (&str, &str, &str),
    y: &str,
    y_fmt: &dyn Fn(&f64) -> String,
    lines: &[ChartLine],
) -> Result<Option<Chart>, Error> {
    if !has_points(lines) {
        return Ok(None);
    }
    let svg = draw_lines(
        title,
        time_range(r),
        &|v| short(*v),
        y_fmt,
        Axes {
            x: "time since start of measurement (s)",
            y,
        },
        lines,
    )?;
    Ok(Some(Chart {
        id: id.into(),
        title: title.into(),
        note: note.into(),
        legend: legend(lines),
        svg,
    }))
}

fn throughput(r: &RunRecord) -> Result<Option<Chart>, Error> {
    let lines = [
        ChartLine::new(
            "requests/s",
            BLUE,
            drawn(r)
                .iter()
                .map(|s| (mid(s), Some(rate(s.requests, s))))
                .collect(),
        ),
        ChartLine::new(
            "errors/s",
            RED,
            drawn(r)
                .iter()
                .map(|s| (mid(s), Some(rate(s.errors, s))))
                .collect(),
        ),
    ];
    time_chart(
        r,
        (
            "throughput",
            "Throughput over time",
            "Requests finished per second (successful or not), and of those, failed.",
        ),
        "per second",
        &|v| short(*v),
        &lines,
    )
}

fn latency_over_time(r: &RunRecord) -> Result<Option<Chart>, Error> {
    let line = |label, color, f: fn(&SecondStats) -> Option<f64>| {
        ChartLine::new(
            label,
            color,
            drawn(r).iter().map(|s| (mid(s), f(s))).collect(),
        )
    };
    let mut lines = vec![
        line("p50", BLUE, |s| s.p50_ms),
        line("p90", ORANGE, |s| s.p90_ms),
        line("p99", RED, |s| s.p99_ms),
    ];
    lines.retain(|l| l.points.iter().any(|p| p.1.is_some()));
    let basis = if r.config.model == Model::Open {
        "from when each request was due"
    } else {
        "from send to complete response"
    };
    time_chart(
        r,
        (
            "latency",
            "Latency over time",
            &format!("Percentiles of the responses finished in each second, {basis}."),
        ),
        "latency (ms)",
        &|v| short(*v),
        &lines,
    )
}

fn in_flight(r: &RunRecord) -> Result<Option<Chart>, Error> {
    let lines = [ChartLine::new(
        "in flight",
        GREEN,
        drawn(r)
            .iter()
            .map(|s| (mid(s), Some(s.in_flight as f64)))
            .collect(),
    )];
    let note = if r.config.model == Model::Open {
        "Requests sent and not yet answered at the end of each second; it grows when the target \
         falls behind the arrival rate."
    } else {
        "Requests sent and not yet answered at the end of each second (at most one per \
         connection)."
    };
    // A count: no fractional labels.
    let whole = |v: &f64| {
        if v.fract() == 0.0 {
            short(*v)
        } else {
            String::new()
        }
    };
    time_chart(
        r,
        ("in-flight", "Requests in flight", note),
        "requests",
        &whole,
        &lines,
    )
}

fn spectrum_chart(r: &RunRecord) -> Result<Option<Chart>, Error> {
    let mut lines = Vec::new();
    let mut add = |label: &str, color, encoded: Option<&String>| {
        if let Some(h) = encoded.and_then(|e| decode_histogram(e).ok()) {
            let points = spectrum(&h)
                .into_iter()
                .map(|p| (p.x, Some(p.latency_ms)))
                .collect();
            lines.push(ChartLine::new(label, color, points));
        }
    };
    let main = if r.config.model == Model::Open {
        "latency (from due time)"
    } else {
        "latency"
    };
    add(main, BLUE, Some(&r.histograms.latency_us));
    add(
        "service latency (from send)",
        ORANGE,
        r.histograms.service_latency_us.as_ref(),
    );
    spectrum_lines(
        lines,
        "spectrum",
        "Latency by percentile",
        "Latency at each percentile, the x axis stretched towards the tail (log scale of \
         1/(1−p)), as HdrHistogram plots it: p50, p90, p99 and p99.9 are evenly spaced.",
    )
}

/// The distribution of the run's stream figures by percentile: time to first message, the gaps
/// between messages, and (LLM mode) time per output token.
fn streams_spectrum(r: &RunRecord) -> Result<Option<Chart>, Error> {
    let Some(st) = &r.summary.streams else {
        return Ok(None);
    };
    let h = &st.histograms;
    let llm = st.llm.is_some();
    let figures = [
        (
            if llm { "TTFT" } else { "time to first message" },
            BLUE,
            Some(&h.ttft_us),
        ),
        (
            if llm {
                "inter-token gap"
            } else {
                "gap between messages"
            },
            ORANGE,
            Some(&h.message_gap_us),
        ),
        ("time per output token", GREEN, h.tpot_us.as_ref()),
        ("round trip of a message", RED, h.round_trip_us.as_ref()),
    ];
    let lines = figures
        .into_iter()
        .filter_map(|(label, color, encoded)| {
            let h = decode_histogram(encoded?).ok()?;
            let points = spectrum(&h).into_iter().map(|p| (p.x, Some(p.latency_ms)));
            Some(ChartLine::new(label, color, points.collect()))
        })
        .collect();
    spectrum_lines(
        lines,
        "streams",
        "Streams by percentile",
        "Time to the first message of each stream (from when it was due, in the open model), \
         each gap between consecutive messages, in LLM mode each stream's time per output \
         token, and for bidirectional streams each message's round trip to its reply, at each \
         percentile (the x axis stretched towards the tail).",
    )
}

/// A percentile-spectrum chart of `lines` (x = 1/(1 − p)).
pub(crate) fn spectrum_lines(
    lines: Vec<ChartLine>,
    id: &str,
    title: &str,
    note: &str,
) -> Result<Option<Chart>, Error> {
    if !has_points(&lines) {
        return Ok(None);
    }
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(10.0, f64::max);
    let mut keys = vec![1.0, 2.0];
    let mut k = 10.0;
    while k <= x_max * 1.001 {
        keys.push(k);
        k *= 10.0;
    }
    use plotters::prelude::{BindKeyPoints, IntoLogRange};
    let svg = draw_lines(
        title,
        (1f64..x_max).log_scale().with_key_points(keys),
        &|v| percentile_label(*v),
        &|v| short(*v),
        Axes {
            x: "percentile",
            y: "latency (ms)",
        },
        &lines,
    )?;
    Ok(Some(Chart {
        id: id.into(),
        title: title.into(),
        note: note.into(),
        legend: legend(&lines),
        svg,
    }))
}

fn histogram(r: &RunRecord) -> Result<Option<Chart>, Error> {
    let b = &r.summary.latency_buckets;
    if b.is_empty() {
        return Ok(None);
    }
    let bars = Bars {
        labels: crate::report::figures::bucket_labels(b),
        values: b.iter().map(|b| b.count as f64).collect(),
        color: BLUE,
        axes: Axes {
            x: "latency bucket (ms)",
            y: "responses",
        },
        y_fmt: &|v| short(*v),
        overlay: None,
    };
    Ok(Some(Chart {
        id: "histogram".into(),
        title: "Latency histogram".into(),
        note: format!(
            "Responses per latency bucket ({}); each bar counts latencies above the previous \
             bound up to its own.",
            if r.config.latency_buckets_ms.is_empty() {
                "1-2-5 steps"
            } else {
                "the run's own bounds"
            }
        ),
        legend: vec![LegendItem {
            label: "responses".into(),
            color: css_color(BLUE),
        }],
        svg: draw_bars("latency histogram", &bars)?,
    }))
}

fn phases(r: &RunRecord) -> Result<Option<Chart>, Error> {
    let phases: Vec<_> = r
        .groups
        .iter()
        .filter(|g| g.kind == GroupKind::Phase)
        .collect();
    if phases.is_empty() {
        return Ok(None);
    }
    let bars = Bars {
        labels: phases
            .iter()
            .map(|g| match (g.target_vus, g.target_rps) {
                (Some(v), _) => format!("{v} VUs"),
                (None, Some(rps)) => format!("{} req/s", short(rps)),
                _ => g.name.clone(),
            })
            .collect(),
        values: phases.iter().map(|g| g.rps).collect(),
        color: BLUE,
        axes: Axes {
            x: "phase (load held)",
            y: "throughput (req/s)",
        },
        y_fmt: &|v| short(*v),
        overlay: Some(Overlay {
            values: phases.iter().map(|g| g.latency_ms.p99).collect(),
            color: RED,
            y_desc: "latency p99 (ms)",
        }),
    };
    Ok(Some(Chart {
        id: "phases".into(),
        title: "Throughput and p99 per phase".into(),
        note:
            "Bars: throughput achieved in each phase of the ladder (left axis). ChartLine: its p99 \
               latency (right axis). Throughput that stops growing while p99 climbs marks \
               saturation."
                .into(),
        legend: vec![
            LegendItem {
                label: "throughput (req/s)".into(),
                color: css_color(BLUE),
            },
            LegendItem {
                label: "p99 (ms)".into(),
                color: css_color(RED),
            },
        ],
        svg: draw_bars("phase chart", &bars)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;

    #[test]
    fn the_drain_interval_is_not_drawn() {
        let mut r = record("drain", 3, 100, 2000, 0, 0.0);
        let mut tail = r.series[2].clone();
        tail.t_s = 3;
        tail.span_s = 0.009;
        tail.requests = 1;
        r.series.push(tail);
        assert_eq!(drawn(&r).len(), 3);
        // A run that is nothing but a short interval keeps it.
        r.series = vec![r.series[3].clone()];
        assert_eq!(drawn(&r).len(), 1);
    }

    #[test]
    fn every_chart_of_a_full_record() {
        let r = record("all", 6, 100, 2000, 1, 0.1);
        let ids: Vec<String> = run_charts(&r).unwrap().into_iter().map(|c| c.id).collect();
        assert_eq!(
            ids,
            [
                "throughput",
                "latency",
                "in-flight",
                "spectrum",
                "histogram"
            ]
        );
    }
}
