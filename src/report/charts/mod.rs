//! Charts drawn in Rust with `plotters` into SVG strings, inlined in the HTML reports (no
//! scripts, no network). Legends are not drawn inside the SVG: each [`Chart`] lists its series
//! and their colours, and the page draws the legend as text under the chart, where it never
//! covers data.
//!
//! - [`run`]: the charts of one run (throughput, latency and in-flight over time, the percentile
//!   spectrum, the latency histogram, per-phase bars);
//! - [`grouped`]: the distribution of grouped responses (`--group-by`), share and p99 per value;
//! - [`compare`]: overlaid charts of several runs;
//! - [`watch`]: what was watched on the target's side, under the throughput chart on its time axis.

pub mod compare;
pub mod findmax;
pub mod grouped;
pub mod run;
pub mod watch;

use plotters::chart::DualCoordChartContext;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, SegmentValue, ValueFormatter};
use plotters::coord::types::{RangedCoordf64, RangedCoordu32};

use plotters::coord::ranged1d::SegmentedCoord;
use plotters::prelude::*;
use serde::Serialize;

use crate::error::Error;

/// Width of every chart, SVG user units (the page scales it to its column).
pub const WIDTH: u32 = 640;
/// Height of every chart, SVG user units.
pub const HEIGHT: u32 = 330;
/// Font of labels and axis descriptions.
const FONT: &str = "Helvetica, Arial, sans-serif";

/// Colour-blind-friendly palette (Tableau 10): blue, orange, green, red, purple, brown, pink,
/// grey, olive, cyan.
const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// Palette index of the conventional colours.
pub(crate) const BLUE: usize = 0;
pub(crate) const ORANGE: usize = 1;
pub(crate) const GREEN: usize = 2;
pub(crate) const RED: usize = 3;

fn color(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

/// CSS `#rrggbb` of palette colour `i`.
pub fn css_color(i: usize) -> String {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// One entry of a chart's legend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LegendItem {
    /// Series name.
    pub label: String,
    /// CSS colour of its line or bars.
    pub color: String,
}

/// A rendered chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chart {
    /// Stable identifier (`throughput`, `latency`, …), used as the HTML element id.
    pub id: String,
    /// Title shown above the chart.
    pub title: String,
    /// One sentence on how to read it.
    pub note: String,
    /// The series and their colours.
    pub legend: Vec<LegendItem>,
    /// The `<svg>` element.
    pub svg: String,
}

/// A line of a line chart: points with gaps (`None` breaks the line).
pub(crate) struct ChartLine {
    pub label: String,
    pub color: usize,
    pub width: u32,
    pub points: Vec<(f64, Option<f64>)>,
    /// Shown in the legend (repeat runs share one entry).
    pub in_legend: bool,
}

impl ChartLine {
    pub(crate) fn new(label: &str, color: usize, points: Vec<(f64, Option<f64>)>) -> Self {
        Self {
            label: label.into(),
            color,
            width: 2,
            points,
            in_legend: true,
        }
    }
}

/// Axis descriptions of a chart.
pub(crate) struct Axes<'a> {
    pub x: &'a str,
    pub y: &'a str,
}

fn render_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Render {
        what: what.into(),
        why: e.to_string(),
    }
}

/// The largest y of the lines, padded by 8 % so the top of a line never touches the frame.
pub(crate) fn y_top(lines: &[ChartLine]) -> f64 {
    let max = lines
        .iter()
        .flat_map(|l| l.points.iter().filter_map(|p| p.1))
        .fold(0.0, f64::max);
    if max > 0.0 { max * 1.08 } else { 1.0 }
}

/// Whether any line has a point to draw.
pub(crate) fn has_points(lines: &[ChartLine]) -> bool {
    lines.iter().any(|l| l.points.iter().any(|p| p.1.is_some()))
}

/// The legend of `lines`.
pub(crate) fn legend(lines: &[ChartLine]) -> Vec<LegendItem> {
    lines
        .iter()
        .filter(|l| l.in_legend)
        .map(|l| LegendItem {
            label: l.label.clone(),
            color: css_color(l.color),
        })
        .collect()
}

/// Makes the SVG scale with its container: keeps the viewBox, drops the fixed size.
fn responsive(svg: String) -> String {
    let open = format!("width=\"{WIDTH}\" height=\"{HEIGHT}\"");
    svg.replacen(
        &open,
        "width=\"100%\" preserveAspectRatio=\"xMidYMid meet\" role=\"img\"",
        1,
    )
}

/// Draws lines on x axis `x` (linear, log, or with chosen key points) and a linear y axis from 0.
pub(crate) fn draw_lines<X>(
    what: &str,
    x: X,
    x_fmt: &dyn Fn(&f64) -> String,
    y_fmt: &dyn Fn(&f64) -> String,
    axes: Axes<'_>,
    lines: &[ChartLine],
) -> Result<String, Error>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| render_error(what, e))?;
        let mut chart = ChartBuilder::on(&root)
            .margin_top(14)
            .margin_right(22)
            .margin_left(8)
            .margin_bottom(6)
            .x_label_area_size(46)
            .y_label_area_size(66)
            .build_cartesian_2d(x, 0f64..y_top(lines))
            .map_err(|e| render_error(what, e))?;
        chart
            .configure_mesh()
            .x_desc(axes.x)
            .y_desc(axes.y)
            .x_label_formatter(x_fmt)
            .y_label_formatter(y_fmt)
            .x_labels(8)
            .y_labels(6)
            .label_style((FONT, 14).into_font().color(&RGBColor(60, 60, 60)))
            .axis_desc_style((FONT, 15).into_font().color(&RGBColor(30, 30, 30)))
            .bold_line_style(RGBColor(225, 225, 225))
            .max_light_lines(1)
            .light_line_style(RGBColor(246, 246, 246))
            .axis_style(RGBColor(120, 120, 120))
            .draw()
            .map_err(|e| render_error(what, e))?;
        for line in lines {
            let style = color(line.color).stroke_width(line.width);
            for segment in segments(&line.points) {
                if let [point] = segment[..] {
                    // A line of one point draws nothing: show the point.
                    chart
                        .draw_series(std::iter::once(Circle::new(
                            point,
                            3,
                            color(line.color).filled(),
                        )))
                        .map_err(|e| render_error(what, e))?;
                    continue;
                }
                chart
                    .draw_series(LineSeries::new(segment, style))
                    .map_err(|e| render_error(what, e))?;
            }
        }
        root.present().map_err(|e| render_error(what, e))?;
    }
    Ok(responsive(svg))
}

/// Runs of consecutive defined points (a run of one is drawn as a dot).
fn segments(points: &[(f64, Option<f64>)]) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current = Vec::new();
    for &(x, y) in points {
        match y {
            Some(y) => current.push((x, y)),
            None if !current.is_empty() => out.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Bars (one per label) with an optional line on a secondary y axis.
pub(crate) struct Bars<'a> {
    pub labels: Vec<String>,
    pub values: Vec<f64>,
    pub color: usize,
    pub axes: Axes<'a>,
    pub y_fmt: &'a dyn Fn(&f64) -> String,
    /// A second series drawn as a line with points, its axis on the right.
    pub overlay: Option<Overlay<'a>>,
}

/// The secondary series of a bar chart.
pub(crate) struct Overlay<'a> {
    pub values: Vec<Option<f64>>,
    pub color: usize,
    pub y_desc: &'a str,
}

/// Draws a bar chart: one segment of the x axis per label.
pub(crate) fn draw_bars(what: &str, bars: &Bars<'_>) -> Result<String, Error> {
    let n = bars.labels.len().max(1);
    let last = n as u32 - 1;
    let label_of = |v: &SegmentValue<u32>| match v {
        SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
            bars.labels.get(*i as usize).cloned().unwrap_or_default()
        }
        SegmentValue::Last => String::new(),
    };
    let right_end = |i: u32| {
        if i >= last {
            SegmentValue::Last
        } else {
            SegmentValue::Exact(i + 1)
        }
    };
    let y_max = bars.values.iter().copied().fold(0.0, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| render_error(what, e))?;
        let right = if bars.overlay.is_some() { 66 } else { 0 };
        let top = bars
            .overlay
            .as_ref()
            .map(|o| o.values.iter().flatten().copied().fold(0.0, f64::max))
            .filter(|t| *t > 0.0)
            .map_or(1.0, |t| t * 1.1);
        // The secondary coordinates must exist before the primary mesh is drawn: they take over
        // the right label area, which the primary axis would otherwise label too.
        let mut chart = ChartBuilder::on(&root)
            .margin_top(14)
            .margin_right(if right > 0 { 8 } else { 22 })
            .margin_left(8)
            .margin_bottom(6)
            .x_label_area_size(46)
            .y_label_area_size(66)
            .right_y_label_area_size(right)
            .build_cartesian_2d((0u32..last).into_segmented(), 0f64..y_max)
            .map_err(|e| render_error(what, e))?
            .set_secondary_coord((0u32..last).into_segmented(), 0f64..top);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(bars.axes.x)
            .y_desc(bars.axes.y)
            .x_label_formatter(&label_of)
            .y_label_formatter(bars.y_fmt)
            .x_labels(n)
            .y_labels(6)
            .label_style((FONT, 14).into_font().color(&RGBColor(60, 60, 60)))
            .axis_desc_style((FONT, 15).into_font().color(&RGBColor(30, 30, 30)))
            .bold_line_style(RGBColor(225, 225, 225))
            .max_light_lines(1)
            .light_line_style(RGBColor(246, 246, 246))
            .axis_style(RGBColor(120, 120, 120))
            .draw()
            .map_err(|e| render_error(what, e))?;
        let fill = color(bars.color).filled();
        // A fifth of each segment on either side of its bar, so one bar is not a wall.
        let gap = ((WIDTH - 100) / n as u32 / 5).max(1);
        chart
            .draw_series(bars.values.iter().enumerate().map(|(i, &v)| {
                let i = i as u32;
                let mut bar =
                    Rectangle::new([(SegmentValue::Exact(i), 0.0), (right_end(i), v)], fill);
                bar.set_margin(0, 0, gap, gap);
                bar
            }))
            .map_err(|e| render_error(what, e))?;
        if let Some(o) = &bars.overlay {
            draw_overlay(what, &mut chart, o)?;
        }
        root.present().map_err(|e| render_error(what, e))?;
    }
    Ok(responsive(svg))
}

/// The coordinates of a bar chart: one segment per bar, a linear y.
type BarCoord = Cartesian2d<SegmentedCoord<RangedCoordu32>, RangedCoordf64>;

/// Draws a bar chart's secondary series: a line with points, its axis on the right.
fn draw_overlay(
    what: &str,
    chart: &mut DualCoordChartContext<'_, SVGBackend<'_>, BarCoord, BarCoord>,
    o: &Overlay<'_>,
) -> Result<(), Error> {
    chart
        .configure_secondary_axes()
        .y_desc(o.y_desc)
        .y_labels(6)
        .y_label_formatter(&|v: &f64| short(*v))
        .label_style((FONT, 14).into_font().color(&RGBColor(60, 60, 60)))
        .axis_desc_style((FONT, 15).into_font().color(&RGBColor(30, 30, 30)))
        .axis_style(RGBColor(120, 120, 120))
        .draw()
        .map_err(|e| render_error(what, e))?;
    let style = color(o.color).stroke_width(2);
    let points: Vec<(f64, Option<f64>)> = o
        .values
        .iter()
        .enumerate()
        .map(|(i, v)| (i as f64, *v))
        .collect();
    for segment in segments(&points) {
        let at = |(x, y): (f64, f64)| (SegmentValue::CenterOf(x as u32), y);
        chart
            .draw_secondary_series(LineSeries::new(segment.iter().map(|&p| at(p)), style))
            .map_err(|e| render_error(what, e))?;
        chart
            .draw_secondary_series(
                segment
                    .iter()
                    .map(|&p| Circle::new(at(p), 4, color(o.color).filled())),
            )
            .map_err(|e| render_error(what, e))?;
    }
    Ok(())
}

/// A compact axis number: `1200` → `1.2k`, `0.25` → `0.25`, `3` → `3`.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 10.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        // Up to three decimals, trailing zeros dropped: 0.5, 0.25, 0.125.
        let s = format!("{v:.3}");
        s.trim_end_matches('0').to_string()
    };
    s.replace(".0k", "k").replace(".0M", "M")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers() {
        assert_eq!(short(0.0), "0");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(0.2), "0.2");
        assert_eq!(short(2.5), "2.5");
        assert_eq!(short(8.0), "8");
        assert_eq!(short(250.0), "250");
        assert_eq!(short(1200.0), "1.2k");
        assert_eq!(short(2000.0), "2k");
        assert_eq!(short(45_000.0), "45k");
        assert_eq!(short(3_000_000.0), "3M");
    }

    #[test]
    fn lines_break_at_gaps() {
        let s = segments(&[
            (0.0, Some(1.0)),
            (1.0, None),
            (2.0, Some(2.0)),
            (3.0, Some(3.0)),
        ]);
        assert_eq!(s, vec![vec![(0.0, 1.0)], vec![(2.0, 2.0), (3.0, 3.0)]]);
    }

    #[test]
    fn svg_is_responsive_and_self_contained() {
        let lines = [ChartLine::new(
            "a",
            BLUE,
            vec![(0.0, Some(1.0)), (1.0, Some(2.0))],
        )];
        let svg = draw_lines(
            "test",
            0f64..1.0,
            &|v| short(*v),
            &|v| short(*v),
            Axes {
                x: "time (s)",
                y: "req/s",
            },
            &lines,
        )
        .unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("width=\"100%\""), "{}", &svg[..200]);
        assert!(svg.contains("viewBox=\"0 0 640 330\""));
        assert!(svg.contains("time (s)") && svg.contains("req/s"));
        assert!(svg.contains("<polyline"));
        assert!(!svg.contains("href"), "no links: nothing to fetch");
    }
}
