//! Overlaid charts of several variants: percentile spectra and throughput over time.

use hdrhistogram::Histogram;

use super::run::{drawn, spectrum_lines};
use super::{Axes, Chart, ChartLine, draw_lines, has_points, legend, short};
use crate::analysis::compare::Variant;
use crate::analysis::spectrum::spectrum;
use crate::error::Error;
use crate::record::decode_histogram;

/// The overlaid charts of a comparison; charts without data are left out.
pub fn compare_charts(variants: &[Variant]) -> Result<Vec<Chart>, Error> {
    let mut out = Vec::new();
    out.extend(spectra(variants)?);
    out.extend(throughput(variants)?);
    Ok(out)
}

/// The latency histograms of all of a variant's runs, merged exactly (HDR addition).
pub fn merged_latency(v: &Variant) -> Option<Histogram<u64>> {
    let mut merged: Option<Histogram<u64>> = None;
    for r in &v.runs {
        let Ok(h) = decode_histogram(&r.histograms.latency_us) else {
            continue;
        };
        match &mut merged {
            None => merged = Some(h),
            Some(m) => {
                let _ = m.add(&h);
            }
        }
    }
    merged.filter(|h| !h.is_empty())
}

fn spectra(variants: &[Variant]) -> Result<Option<Chart>, Error> {
    let lines: Vec<ChartLine> = variants
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let h = merged_latency(v)?;
            let points = spectrum(&h)
                .into_iter()
                .map(|p| (p.x, Some(p.latency_ms)))
                .collect();
            Some(ChartLine::new(&v.label, i, points))
        })
        .collect();
    spectrum_lines(
        lines,
        "compare-spectrum",
        "Latency by percentile",
        "Each variant's latency at every percentile (all its runs merged), the x axis stretched \
         towards the tail (log scale of 1/(1−p)). Lower is faster.",
    )
}

fn throughput(variants: &[Variant]) -> Result<Option<Chart>, Error> {
    let mut lines = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        for (k, r) in v.runs.iter().enumerate() {
            let mut line = ChartLine::new(
                &v.label,
                i,
                drawn(r)
                    .iter()
                    .map(|s| {
                        let rate = if s.span_s > 0.0 {
                            s.requests as f64 / s.span_s
                        } else {
                            0.0
                        };
                        (s.t_s as f64 + s.span_s / 2.0, Some(rate))
                    })
                    .collect(),
            );
            line.in_legend = k == 0;
            if v.runs.len() > 1 {
                line.width = 1;
            }
            lines.push(line);
        }
    }
    if !has_points(&lines) {
        return Ok(None);
    }
    let end = variants
        .iter()
        .flat_map(|v| &v.runs)
        .flat_map(|r| drawn(r).iter().map(|s| s.t_s as f64 + s.span_s))
        .fold(1.0, f64::max);
    let svg = draw_lines(
        "throughput comparison",
        0f64..end,
        &|v| short(*v),
        &|v| short(*v),
        Axes {
            x: "time since start of measurement (s)",
            y: "requests per second",
        },
        &lines,
    )?;
    Ok(Some(Chart {
        id: "compare-throughput".into(),
        title: "Throughput over time".into(),
        note: "Requests finished per second in each run; repeated runs of a variant share its \
               colour. Higher is faster."
            .into(),
        legend: legend(&lines),
        svg,
    }))
}
