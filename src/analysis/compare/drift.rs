//! Order and drift: when every run of one variant was taken before every run of the other, a
//! slow drift of the machine (thermal state, a neighbour's load, a growing database) is
//! indistinguishable from a difference between the variants. The runs within each variant show
//! whether there is such a drift: a common slope of the figure on the runs' start times, fitted
//! within variants (each on its own mean, so the difference between the variants does not count
//! as a trend). A slope with p < α in the direction of the change marks the change as
//! confounded and adds a warning.

use std::time::UNIX_EPOCH;

use super::change::{Scope, from_scale_change, to_scale};
use super::{ALPHA, Change, ChangeVerdict, Method, MetricRow, Variant};
use crate::analysis::stats;
use crate::record::model::RunRecord;
use crate::units::seconds;

/// Marks the changes that order and drift confound in each of `scopes` (the run's rows, each
/// part's), and returns one warning per variant with such changes, naming the parts.
pub(super) fn check(variants: &[Variant], scopes: &mut [(Scope, &mut [MetricRow])]) -> Vec<String> {
    let Some(base) = variants.first() else {
        return Vec::new();
    };
    let Some(base_times) = start_times(&base.runs) else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    for (i, v) in variants.iter().enumerate().skip(1) {
        let Some(times) = start_times(&v.runs) else {
            continue;
        };
        let Some(first) = blocks(&base_times, &times) else {
            continue;
        };
        let gap = mean(&times) - mean(&base_times);
        let sides = [(base, base_times.as_slice()), (v, times.as_slice())];
        let mut drifting = Vec::new();
        for (scope, rows) in scopes.iter_mut() {
            let found = drifting_in(*scope, rows, i, sides, gap);
            if found.is_empty() {
                continue;
            }
            drifting.push(match scope {
                Scope::Run => found.join(", "),
                Scope::Group(key) => format!("in {}: {}", key.path, found.join(", ")),
            });
        }
        if !drifting.is_empty() {
            let (earlier, later) = if first {
                (&base.label, &v.label)
            } else {
                (&v.label, &base.label)
            };
            warnings.push(format!(
                "order and drift confounded ({} vs {}): every run of {earlier} came before every \
                 run of {later} ({} apart on average), and within each variant the runs drift \
                 in time in the direction of the change — {}; the change may be that drift. \
                 Interleave the runs (A B A B …; `volley suite` does so by default)",
                v.label,
                base.label,
                seconds(gap.abs()),
                drifting.join("; ")
            ));
        }
    }
    warnings
}

/// Marks variant `i`'s changes in `rows` (figures of `scope`) that a drift within the
/// variants confounds, and says each: "latency p50 +0.05% per minute (p = 0.001)". `sides`:
/// the baseline and variant `i`, each with its runs' start times; `gap`: between their mean
/// start times, s.
fn drifting_in(
    scope: Scope,
    rows: &mut [MetricRow],
    i: usize,
    sides: [(&Variant, &[f64]); 2],
    gap: f64,
) -> Vec<String> {
    let mut drifting = Vec::new();
    for row in rows.iter_mut() {
        let metric = row.metric;
        let Some(Some(change)) = row.changes.get_mut(i) else {
            continue;
        };
        if !tested_over_runs(change) {
            continue;
        }
        let points = |(v, times): (&Variant, &[f64])| -> Vec<(f64, f64)> {
            v.runs
                .iter()
                .zip(times)
                .filter_map(|(r, &t)| {
                    let x = scope.value(metric, r)?;
                    (!metric.relative() || x > 0.0).then(|| (t, to_scale(metric, x)))
                })
                .collect()
        };
        let groups = [points(sides[0]), points(sides[1])];
        let Some((slope, p)) = stats::within_group_slope(&groups) else {
            continue;
        };
        let predicted = slope * gap;
        let observed = change.change.unwrap_or(0.0);
        if p < ALPHA && predicted != 0.0 && predicted.signum() == observed.signum() {
            change.confounded = true;
            let per_minute = from_scale_change(metric, slope * 60.0);
            let unit = if metric.relative() { "%" } else { " pp" };
            drifting.push(format!(
                "{} {per_minute:+.2}{unit} per minute (p = {p:.3})",
                metric.label()
            ));
        }
    }
    drifting
}

fn tested_over_runs(c: &Change) -> bool {
    c.method == Some(Method::Repeats)
        && !matches!(
            c.verdict,
            ChangeVerdict::Equivalent | ChangeVerdict::NotEnoughData
        )
}

/// Start times of the runs, seconds since the epoch; `None` when any is unreadable.
fn start_times(runs: &[RunRecord]) -> Option<Vec<f64>> {
    runs.iter()
        .map(|r| {
            let t = humantime::parse_rfc3339_weak(&r.started_at).ok()?;
            Some(t.duration_since(UNIX_EPOCH).ok()?.as_secs_f64())
        })
        .collect()
}

/// `Some(true)` when every run of `a` started before every run of `b`, `Some(false)` for the
/// reverse, `None` when they are interleaved.
fn blocks(a: &[f64], b: &[f64]) -> Option<bool> {
    let max = |xs: &[f64]| xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = |xs: &[f64]| xs.iter().copied().fold(f64::INFINITY, f64::min);
    if max(a) < min(b) {
        Some(true)
    } else if max(b) < min(a) {
        Some(false)
    } else {
        None
    }
}

fn mean(xs: &[f64]) -> f64 {
    stats::mean(xs).unwrap_or(0.0)
}
