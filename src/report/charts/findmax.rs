//! The charts of a `find-max` search: throughput and latency against the load tried, with the
//! knee (the highest load that met the SLO) marked.

use super::{
    Axes, BLUE, Chart, ChartLine, GREEN, RED, draw_lines, has_points, legend, short, y_top,
};
use crate::error::Error;
use crate::record::find_max::FindMax;
use crate::record::model::LoadModel;

/// The two charts of a search (none without steps).
pub fn find_max_charts(f: &FindMax) -> Result<Vec<Chart>, Error> {
    let mut steps: Vec<_> = f
        .steps
        .iter()
        .filter(|s| s.rps > 0.0 || s.p99_ms.is_some())
        .collect();
    steps.sort_by(|a, b| a.level.total_cmp(&b.level));
    if steps.is_empty() {
        return Ok(Vec::new());
    }
    let unit = if f.model == LoadModel::Open {
        "offered load (req/s)"
    } else {
        "load (VUs)"
    };
    let x_end = steps.last().map_or(1.0, |s| s.level) * 1.05;
    let knee = |lines: &mut Vec<ChartLine>| {
        if let Some(k) = f.max_sustainable_load {
            let top = y_top(lines);
            lines.push(ChartLine::new(
                "knee: max sustainable",
                GREEN,
                vec![(k, Some(0.0)), (k, Some(top))],
            ));
        }
    };
    let mut out = Vec::new();
    let mut lines = vec![ChartLine::new(
        "achieved req/s",
        BLUE,
        steps.iter().map(|s| (s.level, Some(s.rps))).collect(),
    )];
    if f.model == LoadModel::Open {
        lines.push(ChartLine::new(
            "offered = achieved",
            RED,
            vec![(0.0, Some(0.0)), (x_end, Some(x_end))],
        ));
        lines[1].width = 1;
    }
    knee(&mut lines);
    if has_points(&lines) {
        out.push(super::Chart {
            id: "findmax-throughput".into(),
            title: "Throughput against load".into(),
            note: "Each point is one step of the search. Where achieved throughput leaves the \
                   diagonal, the target stopped keeping up; the green line marks the highest load \
                   that met the SLO."
                .into(),
            legend: legend(&lines),
            svg: draw_lines(
                "throughput against load",
                0.0..x_end,
                &|v| short(*v),
                &|v| short(*v),
                Axes {
                    x: unit,
                    y: "throughput (req/s)",
                },
                &lines,
            )?,
        });
    }
    let mut lines = vec![
        ChartLine::new(
            "p50",
            BLUE,
            steps.iter().map(|s| (s.level, s.p50_ms)).collect(),
        ),
        ChartLine::new(
            "p99",
            RED,
            steps.iter().map(|s| (s.level, s.p99_ms)).collect(),
        ),
    ];
    knee(&mut lines);
    if has_points(&lines) {
        out.push(Chart {
            id: "findmax-latency".into(),
            title: "Latency against load".into(),
            note: "p50 and p99 of each step's measured part; the knee is where p99 turns upward."
                .into(),
            legend: legend(&lines),
            svg: draw_lines(
                "latency against load",
                0.0..x_end,
                &|v| short(*v),
                &|v| short(*v),
                Axes {
                    x: unit,
                    y: "latency (ms)",
                },
                &lines,
            )?,
        });
    }
    Ok(out)
}
