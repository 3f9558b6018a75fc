//! The distribution of grouped responses (`--group-by`): one bar chart per selector, the share
//! of each value, with its p99 latency as a line on the right axis.

use super::{Axes, BLUE, Bars, Chart, LegendItem, ORANGE, Overlay, css_color, draw_bars};
use crate::error::Error;
use crate::record::model::RunRecord;
use crate::report::grouped::{distinct_note, title};

/// Bars drawn at most per chart; the table under the charts lists every row.
const MOST_BARS: usize = 20;

/// One chart per selector of the record.
pub fn grouped_charts(r: &RunRecord) -> Result<Vec<Chart>, Error> {
    let mut out = Vec::new();
    for (i, g) in r.grouped.iter().enumerate() {
        if g.values.is_empty() {
            continue;
        }
        let rows = &g.values[..g.values.len().min(MOST_BARS)];
        let bars = Bars {
            labels: rows.iter().map(|v| short_label(&v.value)).collect(),
            values: rows.iter().map(|v| v.share_pct).collect(),
            color: BLUE,
            axes: Axes {
                x: &g.selector,
                y: "share of exchanges (%)",
            },
            y_fmt: &|v| format!("{v:.0}"),
            overlay: Some(Overlay {
                values: rows.iter().map(|v| v.latency_ms.p99).collect(),
                color: ORANGE,
                y_desc: "p99 latency (ms)",
            }),
        };
        let mut note = distinct_note(g);
        if g.values.len() > MOST_BARS {
            note.push_str(&format!(" The first {MOST_BARS} rows are drawn."));
        }
        out.push(Chart {
            id: format!("grouped-{i}"),
            title: format!("{}: distribution", title(g)),
            note,
            legend: vec![
                LegendItem {
                    label: "share of exchanges".into(),
                    color: css_color(BLUE),
                },
                LegendItem {
                    label: "p99 latency".into(),
                    color: css_color(ORANGE),
                },
            ],
            svg: draw_bars("grouped responses", &bars)?,
        });
    }
    Ok(out)
}

/// A value short enough for an axis label.
fn short_label(v: &str) -> String {
    if v.chars().count() <= 14 {
        v.to_string()
    } else {
        let mut s: String = v.chars().take(13).collect();
        s.push('…');
        s
    }
}
