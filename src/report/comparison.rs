//! `volley compare` as text, Markdown, or (through [`html`](super::html)) HTML: one column per
//! variant, the change against the first (the baseline), and a verdict per metric that says
//! whether the change is more than noise (method: [`crate::analysis::compare`]).

use serde::Serialize;

mod grouped;
mod groups;

use super::table::{Table, md_text};
use crate::analysis::compare::{
    Change, ChangeVerdict, Comparison, Estimate, MIN_GUARDED_RUNS, MIN_REPEATS, Method, Metric,
    MetricRow, RunsNeeded, TailGuard, Variant,
};
use crate::record::model::Level;

/// What a comparison report says, independent of layout.
#[derive(Debug, Clone, Serialize)]
pub struct CompareView {
    /// "A vs B vs C".
    pub title: String,
    /// Ok when the runs are like-for-like, warn otherwise.
    pub level: Level,
    /// The label of the header lines: "VERDICT", or "REPEATS" for one variant alone.
    pub badge: &'static str,
    /// One line per non-baseline variant summarising its significant changes.
    pub verdicts: Vec<String>,
    /// Why the runs are not like-for-like, and where their order is confounded with a drift.
    pub mismatches: Vec<String>,
    /// Interrupted runs, warnings, weak verdicts.
    pub notes: Vec<String>,
    /// The variants: label, source, runs, what was tested.
    pub variants: Table,
    /// The main table: a column per variant, change and verdict against the baseline.
    pub table: Table,
    /// The same per scenario, step and phase, when the comparison judged them (one table).
    pub parts: Vec<Table>,
    /// Per metric and variant: intervals, p-values, method.
    pub details: Table,
    /// Grouped responses (`--group-by`) side by side, one table per selector.
    pub grouped: Vec<Table>,
    /// How the verdict is reached, in one paragraph.
    pub method: String,
}

fn value(metric: Metric, v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) => match metric {
            Metric::Throughput | Metric::Goodput => crate::units::rate(v),
            Metric::ErrorRate => format!("{v:.2}%"),
            _ => crate::units::ms(Some(v)),
        },
    }
}

fn estimate_cell(metric: Metric, e: &Estimate) -> String {
    match e.ci {
        Some((lo, hi)) => format!(
            "{} [{}–{}]",
            value(metric, e.value),
            value(metric, Some(lo)),
            value(metric, Some(hi))
        ),
        None => value(metric, e.value),
    }
}

/// A signed change: `+12.3%`, `−4.0%`, `+0.50 pp`.
pub fn signed(metric: Metric, v: f64) -> String {
    let sign = if v < 0.0 { "−" } else { "+" };
    if metric.relative() {
        format!("{sign}{:.1}%", v.abs())
    } else {
        format!("{sign}{:.2} pp", v.abs())
    }
}

fn change_cell(metric: Metric, c: &Change) -> String {
    match c.change {
        None => "-".into(),
        Some(v) => signed(metric, v),
    }
}

fn header(metric: Metric) -> String {
    format!("{} ({})", metric.label(), metric.unit())
}

/// Builds the content of a comparison report.
pub fn compare_view(variants: &[Variant], c: &Comparison) -> CompareView {
    let alone = c.labels.len() == 1;
    let title = if alone {
        format!("{}: {} runs of one test", c.labels[0], c.runs[0])
    } else {
        c.labels.join(" vs ")
    };
    CompareView {
        title,
        level: if c.mismatches.is_empty() && c.warnings.is_empty() {
            Level::Ok
        } else {
            Level::Warn
        },
        badge: if alone { "REPEATS" } else { "VERDICT" },
        verdicts: if alone {
            vec![format!(
                "the spread of each figure over {} runs: geometric mean (error rate: arithmetic \
                 mean){}; compare this folder with another one of repeats for a verdict",
                c.runs[0],
                if c.runs[0] >= MIN_REPEATS {
                    " and 95% interval"
                } else {
                    " (an interval over runs needs 3)"
                }
            )]
        } else {
            verdict_lines(c)
        },
        mismatches: c.mismatches.iter().chain(&c.warnings).cloned().collect(),
        notes: c.notes.clone(),
        variants: variants_table(variants),
        table: main_table(c),
        parts: groups::table(c).into_iter().collect(),
        details: details_table(c),
        grouped: grouped::tables(variants),
        method: METHOD.into(),
    }
}

/// The variants: label, source, runs, what was tested, requests, and their tags when any has
/// some (tags name runs; they are no part of the like-for-like checks).
fn variants_table(variants: &[Variant]) -> Table {
    let tagged = variants
        .iter()
        .any(|v| v.runs.iter().any(|r| !r.tags.is_empty()));
    let mut headers = vec![
        "<Variant",
        "<Source",
        "Runs",
        "<Test",
        "Requests (all runs)",
    ];
    if tagged {
        headers.push("<Tags");
    }
    let mut vt = Table::new("Variants", &headers);
    for (i, v) in variants.iter().enumerate() {
        let label = if i == 0 {
            format!("{} (baseline)", v.label)
        } else {
            v.label.clone()
        };
        let test = v.runs.first().map_or_else(String::new, |r| {
            format!(
                "{} {} — {}, {}",
                r.config.method,
                r.config.url,
                super::view::load_shape(r),
                super::view::length(r)
            )
        });
        let requests: u64 = v.runs.iter().map(|r| r.summary.requests).sum();
        let mut tags: Vec<String> = v.runs.iter().map(super::view::tags_text).collect();
        tags.dedup();
        vt.push([
            label,
            v.source.display().to_string(),
            v.runs.len().to_string(),
            test,
            crate::units::thousands(requests),
            tags.join(" | "),
        ]);
    }
    vt
}

/// The main table: a column per variant, and against the baseline its change and verdict.
fn main_table(c: &Comparison) -> Table {
    let heads = heads(c, &["<Metric"]);
    let head_refs: Vec<&str> = heads.iter().map(String::as_str).collect();
    let note = if c.runs.iter().all(|&n| n > 1) {
        "Figures are geometric means over runs (the error rate: the mean), with a 95% t interval \
         when there are three runs or more. Changes are against the baseline."
    } else if c.runs.iter().any(|&n| n > 1) {
        "Figures are geometric means over runs (the error rate: the mean), with a 95% t interval \
         when there are three runs or more; a variant of one run shows that run's own 95% \
         interval, within the run (a rerun may land outside it). Changes are against the \
         baseline."
    } else {
        "In brackets, where a run has one: its own 95% interval, within that run (a rerun may \
         land outside it; three runs or more of each measure the spread between runs). Changes \
         are against the baseline."
    };
    let mut table = Table::new("Comparison", &head_refs).with_note(note);
    for row in &c.rows {
        table.push(main_row(row));
    }
    table
}

/// The columns of a table of [`main_row`]s after `lead`: a column per variant, and for each
/// after the baseline its change and verdict.
fn heads(c: &Comparison, lead: &[&str]) -> Vec<String> {
    let mut heads: Vec<String> = lead.iter().map(|h| h.to_string()).collect();
    for (i, label) in c.labels.iter().enumerate() {
        heads.push(label.clone());
        if i > 0 {
            heads.push(format!("change {label}"));
            heads.push(format!("<verdict {label}"));
        }
    }
    heads
}

/// Per metric and variant: intervals, p-values, method, verdict, runs to settle.
fn details_table(c: &Comparison) -> Table {
    let mut details = Table::new(
        "Statistics",
        &[
            "<Metric",
            "<Variant",
            "Change",
            "95% interval of change",
            "p-value (Holm)",
            "<Method",
            "<Verdict",
            "Runs to settle (each)",
        ],
    )
    .with_note(details_note(c));
    for row in &c.rows {
        for (i, ch) in row.changes.iter().enumerate() {
            let Some(ch) = ch else { continue };
            details.push(details_row(c, row, i, ch));
        }
    }
    for cells in groups::details_rows(c) {
        details.push(cells);
    }
    details
}

fn details_note(c: &Comparison) -> String {
    format!(
        "p-values in brackets are adjusted by Holm's correction across the {} tests of this \
         comparison. A change is called only when its adjusted p < 0.05 and its whole 95% \
         interval lies beyond ±{}% (±{} percentage points for the error rate); \"no significant \
         difference\" only when the whole interval lies within that threshold; otherwise it is \
         inconclusive, and \"runs to settle\" is the number of runs of each variant that would \
         likely (80% power) settle it if the change stays at its estimate. Relative changes and \
         their intervals are computed on the log scale (ratio of geometric means).",
        c.tests,
        c.threshold_pct,
        c.threshold(Metric::ErrorRate)
    )
}

fn p_cell(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

fn details_row(c: &Comparison, row: &MetricRow, i: usize, ch: &Change) -> Vec<String> {
    let method = match ch.method {
        Some(Method::Repeats) => format!(
            "t test on {} over runs ({} vs {})",
            if row.metric.relative() {
                "logs"
            } else {
                "values"
            },
            row.estimates[0].values.len(),
            row.estimates[i].values.len()
        ),
        Some(Method::PerSecond) => "per-second samples (weak)".into(),
        Some(Method::RunIntervals) => "the runs' own intervals (weak)".into(),
        None => "-".into(),
    };
    let p = match (ch.p_value, ch.p_adjusted) {
        (Some(p), Some(adj)) => format!("{} ({})", p_cell(p), p_cell(adj)),
        (Some(p), None) => p_cell(p),
        _ => "-".into(),
    };
    vec![
        header(row.metric),
        c.labels[i].clone(),
        change_cell(row.metric, ch),
        ch.ci.map_or_else(
            || "-".into(),
            |(lo, hi)| format!("{} … {}", signed(row.metric, lo), signed(row.metric, hi)),
        ),
        p,
        method,
        ch.words(row.metric),
        runs_needed(ch).unwrap_or_else(|| "-".into()),
    ]
}

/// "~25", ">200", or nothing: runs of each variant that would likely settle an inconclusive
/// verdict.
fn runs_needed(ch: &Change) -> Option<String> {
    match ch.verdict {
        ChangeVerdict::Inconclusive {
            runs_needed: Some(RunsNeeded::About(n)),
            ..
        } => Some(format!("~{n}")),
        ChangeVerdict::Inconclusive {
            runs_needed: Some(RunsNeeded::MoreThan(n)),
            ..
        } => Some(format!(">{n}")),
        ChangeVerdict::Inconclusive {
            tail_guard: Some(TailGuard::TooFewRuns),
            ..
        } => Some(format!("≥{MIN_GUARDED_RUNS}")),
        _ => None,
    }
}

fn main_row(row: &MetricRow) -> Vec<String> {
    let mut cells = vec![header(row.metric)];
    for (i, e) in row.estimates.iter().enumerate() {
        cells.push(estimate_cell(row.metric, e));
        if let Some(Some(ch)) = row.changes.get(i) {
            cells.push(change_cell(row.metric, ch));
            cells.push(ch.words(row.metric));
        }
    }
    cells
}

/// What one variant's rows say against the baseline: the calls ("latency p50 slower
/// (+19.9%)"), the inconclusive changes ("latency p99 (+41.9%; ~30)") and how many were shown
/// equivalent.
#[derive(Default)]
struct Calls {
    called: Vec<String>,
    unsure: Vec<String>,
    quiet: usize,
}

impl Calls {
    /// Sorts the changes of variant `i` in `rows`, each named `prefix` + the metric's label.
    fn add(&mut self, rows: &[MetricRow], i: usize, prefix: &str) {
        for row in rows {
            let Some(Some(ch)) = row.changes.get(i) else {
                continue;
            };
            let change = ch
                .change
                .map_or_else(|| "-".into(), |v| signed(row.metric, v));
            let label = format!("{prefix}{}", row.metric.label());
            match ch.verdict {
                ChangeVerdict::Better | ChangeVerdict::Worse => {
                    let words = ch.words(row.metric);
                    let mut said = match words.strip_suffix(" (weak)") {
                        Some(word) => format!("{word} (weak, {change}"),
                        None => format!("{words} ({change}"),
                    };
                    if ch.confounded {
                        said.push_str(", order and drift confounded");
                    }
                    self.called.push(format!("{label} {said})"));
                }
                ChangeVerdict::Inconclusive { .. } => {
                    let settle = match runs_needed(ch) {
                        Some(n) => format!("; {n}"),
                        // The counts fell short (runs that agree exactly, as 0 errors in each):
                        // more requests, not more runs alike, would bound it.
                        None if row.metric == crate::analysis::metric::Metric::ErrorRate
                            && ch.method == Some(Method::Repeats) =>
                        {
                            format!(
                                "; too few requests to bound it within ±{} pp",
                                crate::analysis::compare::ERROR_RATE_THRESHOLD_PP
                            )
                        }
                        // No spread between runs to size it: three runs each, the fewest a
                        // test over runs takes, is the start.
                        None if ch.method.is_some_and(|m| m != Method::Repeats) => {
                            "; ≥ 3, weak: too few runs for a spread".into()
                        }
                        None => String::new(),
                    };
                    self.unsure.push(format!("{label} ({change}{settle})"));
                }
                ChangeVerdict::Equivalent => self.quiet += 1,
                ChangeVerdict::NotEnoughData | ChangeVerdict::NotJudged => {}
            }
        }
    }
}

/// "B vs A: throughput slower (−16.8%), latency p50 slower (+19.9%); inconclusive (change; runs
/// of each that would likely settle it): latency p99 (+41.9%; ~30); no significant difference in
/// 6 other metric(s)", then what its scenarios, steps and phases were called.
fn verdict_lines(c: &Comparison) -> Vec<String> {
    (1..c.labels.len())
        .map(|i| {
            let mut run = Calls::default();
            run.add(&c.rows, i, "");
            let mut parts = Vec::new();
            if !run.called.is_empty() {
                parts.push(run.called.join(", "));
            }
            if !run.unsure.is_empty() {
                parts.push(format!(
                    "inconclusive (change; runs of each that would likely settle it): {}",
                    run.unsure.join(", ")
                ));
            }
            if run.quiet > 0 {
                parts.push(if parts.is_empty() {
                    "no significant difference".to_string()
                } else {
                    format!("no significant difference in {} other metric(s)", run.quiet)
                });
            }
            if parts.is_empty() {
                parts.push("not enough data for a verdict".to_string());
            }
            parts.extend(groups::verdict(c, i));
            format!("{} vs {}: {}", c.labels[i], c.labels[0], parts.join("; "))
        })
        .collect()
}

const METHOD: &str = "With repeated runs (--repeat N; at least 3 and 3), each run is one sample: \
a variant's figure is the geometric mean of its runs' figures (the error rate: their mean), and \
the change is tested with Student's t test on the logarithms of the per-run values (pooled \
variance; the error rate: on the values, in percentage points), so a relative change and its 95% interval are a \
ratio of geometric means and can never pass −100%. With single runs, each run's own 95% interval \
of the figure (batch means over its seconds) is its standard error, and a figure without one \
(the error rate), or two runs a side, uses the per-second series with a standard error \
corrected for autocorrelation (effective n = n·(1−ρ)/(1+ρ)); such verdicts are marked weak \
because they cannot see run-to-run variation, and a tail (p99, p99.9) is never called from them. \
Every p-value of the comparison is adjusted by Holm's correction across all its metrics and \
variants (and a plan's scenarios, steps and phases, whose single runs are judged by each run's \
own interval of the part, weak), so the chance of any false call stays at 5% for the whole comparison. A change is \
called faster or slower only when its adjusted p < 0.05 and its whole interval lies beyond the \
practical threshold; \"no significant difference\" means the whole interval lies within it \
(equivalence shown); anything else is inconclusive. For throughput higher is faster, for latency \
lower is faster. When every run of one variant came before every run of the other and the runs \
drift in time, the report warns that order and drift are confounded.";

/// Renders a comparison as Markdown.
pub fn markdown(variants: &[Variant], c: &Comparison) -> String {
    let v = compare_view(variants, c);
    format!(
        "# volley comparison: {}\n\n{}",
        md_text(&v.title),
        markdown_body(&v)
    )
}

/// A comparison's Markdown under a title of the caller's: verdicts, warnings, notes, and the
/// tables at `##` level.
pub fn markdown_body(v: &CompareView) -> String {
    let mut o = String::new();
    for line in &v.verdicts {
        o.push_str(&format!("- **{}**\n", md_text(line)));
    }
    o.push('\n');
    if !v.mismatches.is_empty() {
        o.push_str(
            "> **Not like-for-like** — these runs differ in more than the thing tested:\n>\n",
        );
        for m in &v.mismatches {
            o.push_str(&format!("> - {}\n", md_text(m)));
        }
        o.push('\n');
    }
    if !v.notes.is_empty() {
        for n in &v.notes {
            o.push_str(&format!("- Note: {}\n", md_text(n)));
        }
        o.push('\n');
    }
    o.push_str(&v.variants.to_markdown("##"));
    o.push_str(&v.table.to_markdown("##"));
    for t in &v.parts {
        o.push_str(&t.to_markdown("##"));
    }
    for t in &v.grouped {
        o.push_str(&t.to_markdown("##"));
    }
    if !v.details.rows.is_empty() {
        o.push_str(&v.details.to_markdown("##"));
    }
    o.push_str(&format!("## Method\n\n{}\n", md_text(&v.method)));
    o
}

/// Renders a comparison as plain text.
pub fn text(variants: &[Variant], c: &Comparison) -> String {
    let v = compare_view(variants, c);
    format!("volley comparison: {}\n\n{}", v.title, text_body(&v))
}

/// A comparison's plain text under a title of the caller's.
pub fn text_body(v: &CompareView) -> String {
    let mut o = String::new();
    for line in &v.verdicts {
        o.push_str(&format!("  {line}\n"));
    }
    o.push('\n');
    if !v.mismatches.is_empty() {
        o.push_str("NOT LIKE-FOR-LIKE: these runs differ in more than the thing tested\n");
        for m in &v.mismatches {
            o.push_str(&format!("  ! {m}\n"));
        }
        o.push('\n');
    }
    for n in &v.notes {
        o.push_str(&format!("  note: {n}\n"));
    }
    if !v.notes.is_empty() {
        o.push('\n');
    }
    o.push_str(&v.variants.to_text());
    o.push_str(&v.table.to_text());
    for t in &v.parts {
        o.push_str(&t.to_text());
    }
    for t in &v.grouped {
        o.push_str(&t.to_text());
    }
    if !v.details.rows.is_empty() {
        o.push_str(&v.details.to_text());
    }
    o
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod words_tests;
