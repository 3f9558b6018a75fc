//! The report of a suite (`volley suite`): every target with its result — the failed ones with
//! the step and the cause — then the comparison of the targets that were measured, as
//! `volley compare` makes it ([`comparison`](super::comparison)), with its charts. Written as
//! `summary.txt`, `report.md` and `report.html` at the top of the suite's results folder, from
//! `suite.json` and the targets' records.

use minijinja::value::Serde;
use serde::Serialize;

use super::Format;
use super::comparison::{CompareView, compare_view, markdown_body, text_body};
use super::suite_tables::{self, find_max_ranking, load_level};
use super::table::{Table, md_text};
use crate::analysis::compare::{CompareOptions, Comparison, Metric, Variant, compare};
use crate::analysis::like_for_like::{TARGET_URL, mismatches_except};
use crate::error::Error;
use crate::record::model::Level;
use crate::record::suite::{Status, SuiteOutcome, TargetOutcome};
use crate::record::write_atomically;
use crate::units::{bytes, rate, thousands};

/// What a suite report says, independent of layout.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteView {
    /// The suite's name.
    pub title: String,
    /// Plan, repeats, time.
    pub subtitle: String,
    /// Ok when every target ran, warn when the suite was interrupted, fail otherwise (a target
    /// failed a step, its thresholds, or was aborted): as the exit code says.
    pub level: Level,
    /// The key lines: how many ran, the throughput ranking, an interruption.
    pub headline: Vec<String>,
    /// One line per target that did not run to its end, with the step and the cause.
    pub failures: Vec<String>,
    /// Every target: result, figures, details.
    pub targets: Table,
    /// Things to know before reading the figures: operations missing on some targets, loads
    /// that differ (allowed), test durations that differ.
    pub notes: Vec<String>,
    /// Report 002's table, one row per measured target (plan runs only).
    pub results: Option<Table>,
    /// One row per operation and measured target (plan runs only).
    pub operations: Option<Table>,
}

/// The targets that have measured runs (those that ran, failed thresholds or were
/// interrupted, with what they measured), as comparison variants labelled by target name. A
/// target whose run an `abort_on_fail` threshold cut short is left out: its figures are of
/// another, shorter test.
pub fn variants(o: &SuiteOutcome) -> Vec<Variant> {
    o.targets
        .iter()
        .filter(|t| {
            matches!(
                t.status,
                Status::Ran | Status::ThresholdsFailed | Status::Interrupted
            ) && !t.runs.is_empty()
        })
        .map(|t| Variant {
            label: t.name.clone(),
            source: o.folder.join(&t.folder),
            runs: t.runs.clone(),
        })
        .collect()
}

/// The comparison of `variants`, their plans' scenarios, steps (joined on their operation
/// labels) and phases included. The targets' URLs differ by design, so that difference is not
/// flagged as a like-for-like problem; every other one is. At the threshold a suite run until
/// decided decided at (`threshold_pct`, %), else `volley compare`'s default.
pub fn comparison(variants: &[Variant], threshold_pct: Option<f64>) -> Option<Comparison> {
    if variants.is_empty() {
        return None;
    }
    let options = threshold_pct.and_then(|t| CompareOptions::of_command(t).ok());
    let mut c = compare(variants, options.unwrap_or_else(CompareOptions::with_parts));
    c.mismatches = mismatches_except(variants, &[TARGET_URL]);
    Some(c)
}

/// Builds the suite part of the report.
pub fn suite_view(o: &SuiteOutcome, variants: &[Variant]) -> SuiteView {
    let ran = o.targets.iter().filter(|t| t.status == Status::Ran).count();
    let n = o.targets.len();
    let failures = o
        .targets
        .iter()
        .filter(|t| t.status != Status::Ran)
        .map(|t| format!("{} — {}", t.name, t.outcome_words()))
        .collect();
    // As the exit code says: every target ran; interrupted; or something failed.
    let level = match o.exit_code() {
        0 => Level::Ok,
        130 => Level::Warn,
        _ => Level::Fail,
    };
    let plan_runs = o.find_max.is_none() && !variants.is_empty();
    let mut notes = o.notes.clone();
    notes.extend(o.decided.iter().cloned());
    if plan_runs {
        notes.extend(suite_tables::duration_warning(variants));
    }
    SuiteView {
        notes,
        results: plan_runs.then(|| suite_tables::results(variants)),
        operations: plan_runs
            .then(|| suite_tables::operations(variants))
            .flatten(),
        title: o.name.clone(),
        subtitle: format!(
            "{} · {} · started {} · results in {}",
            plans(o),
            match &o.find_max {
                Some(search) => format!("find-max per target ({search})"),
                None if o.decided.is_empty() => format!("{} run(s) per target", o.repeats),
                None => suite_tables::until_decided_runs(o),
            },
            o.started_at,
            o.folder.display()
        ),
        level,
        headline: headline(o, variants, ran, n),
        failures,
        targets: targets_table(o),
    }
}

/// "3 of 4 targets ran", an interruption, and the throughput (or find-max) ranking.
fn headline(o: &SuiteOutcome, variants: &[Variant], ran: usize, n: usize) -> Vec<String> {
    let mut headline = vec![format!("{ran} of {n} targets ran")];
    let cut: Vec<&str> = o
        .targets
        .iter()
        .filter(|t| t.status == Status::Aborted)
        .map(|t| t.name.as_str())
        .collect();
    if !cut.is_empty() {
        headline.push(format!(
            "Aborted by an abort_on_fail threshold, out of the ranking: {}",
            cut.join(", ")
        ));
    }
    let failed: Vec<&str> = o
        .targets
        .iter()
        .filter(|t| t.status == Status::ThresholdsFailed)
        .map(|t| t.name.as_str())
        .collect();
    if !failed.is_empty() {
        headline.push(format!("Thresholds failed: {}", failed.join(", ")));
    }
    if let Some(signal) = &o.interrupted {
        headline.push(format!(
            "Interrupted by {signal}: the figures cover what was measured before it"
        ));
    }
    // What the rounds decided heads the ranking, which alone would read as a verdict.
    headline.extend(suite_tables::decided_headline(o));
    if o.find_max.is_some() {
        headline.push(find_max_ranking(o));
        return headline;
    }
    let mut ranked: Vec<(&str, f64)> = variants
        .iter()
        .filter_map(|v| Some((v.label.as_str(), median_rps(&v.runs)?)))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    if ranked.len() > 1 {
        headline.push(format!(
            "Throughput, highest first: {}",
            ranked
                .iter()
                .map(|(name, rps)| format!("{name} {} req/s", rate(*rps)))
                .collect::<Vec<_>>()
                .join(" · ")
        ));
    }
    headline
}

/// The Targets table: one row per target, with the search's and the efficiency columns when
/// there are such figures.
fn targets_table(o: &SuiteOutcome) -> Table {
    let searched = o.find_max.is_some();
    let mut heads = vec![
        "<Target",
        "<Result",
        "Runs",
        "Requests",
        "Throughput (req/s)",
        "Error rate",
        "Data sent",
    ];
    if searched {
        heads.extend([
            "Max sustainable (req/s)",
            "<at load",
            "Peak (req/s)",
            "<Breaking load",
        ]);
    }
    let watched = o
        .targets
        .iter()
        .any(|t| super::watch::runs_efficiency(&t.runs).is_some());
    if watched {
        heads.extend(["CPU s / 1k req", "Peak RSS", "Mean CPU cores"]);
    }
    heads.push("<Details");
    let note = if searched {
        "In the order they ran. Each target got a find-max search: the figures of its run are \
         those of its best step (the highest load that met the SLO), which the comparison below \
         compares; the search's own figures follow. Each target's folder holds its record, \
         reports and server.log."
    } else {
        "In the order they ran. Throughput is the median over a target's runs; requests and data \
         are the sums. Each target's folder holds its records, reports and server.log. A target \
         volley started is watched with its descendants (/proc): CPU seconds per 1,000 requests, \
         peak RSS and mean CPU cores cover its runs' measured windows."
    };
    let mut targets = Table::new("Targets", &heads).with_note(note);
    for t in &o.targets {
        let mut row = target_row(t, searched);
        if watched {
            let details = row.pop().unwrap_or_default();
            row.extend(efficiency_cells(t));
            row.push(details);
        }
        targets.push(row);
    }
    targets
}

/// "plan p.toml", or with plans of the targets' own "plans rest.toml (a, b), grpc.toml (c)".
fn plans(o: &SuiteOutcome) -> String {
    let mut plans: Vec<(String, Vec<&str>)> = Vec::new();
    for t in &o.targets {
        let Some(p) = t.plan.as_ref().or(o.plan.as_ref()) else {
            continue;
        };
        let p = p.display().to_string();
        match plans.iter_mut().find(|(q, _)| *q == p) {
            Some((_, names)) => names.push(&t.name),
            None => plans.push((p, vec![&t.name])),
        }
    }
    match &plans[..] {
        [] => "no plan".into(),
        [(p, _)] => format!("plan {p}"),
        _ => format!(
            "plans {}",
            plans
                .iter()
                .map(|(p, names)| format!("{p} ({})", names.join(", ")))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn target_row(t: &TargetOutcome, searched: bool) -> Vec<String> {
    let has_runs = !t.runs.is_empty();
    let requests: u64 = t.runs.iter().map(|r| r.summary.requests).sum();
    let attempts: u64 = t
        .runs
        .iter()
        .map(|r| r.summary.requests + r.summary.not_sent)
        .sum();
    let errors: u64 = t.runs.iter().map(|r| r.summary.errors).sum();
    let sent: u64 = t.runs.iter().map(|r| r.summary.bytes_sent).sum();
    let mut details = Vec::new();
    if let Some(cause) = &t.cause {
        details.push(cause.clone());
    }
    if let Some(s) = t.ready_after_s {
        details.push(format!("healthy after {s:.2} s"));
    }
    if let Some(smoke) = &t.smoke {
        details.push(format!(
            "smoke {} ({:.2}% errors of {} requests)",
            if smoke.passed { "passed" } else { "failed" },
            smoke.error_rate * 100.0,
            thousands(smoke.requests)
        ));
    }
    let failed_thresholds: usize = t
        .runs
        .iter()
        .map(|r| r.thresholds.iter().filter(|th| th.failed()).count())
        .sum();
    if failed_thresholds > 0 {
        details.push(format!("{failed_thresholds} threshold(s) failed"));
    }
    if let Some(how) = &t.stopped {
        details.push(format!("process {}", how));
    }
    let mut row = vec![
        t.name.clone(),
        t.result_words().to_string(),
        t.runs.len().to_string(),
        if has_runs {
            thousands(requests)
        } else {
            "-".into()
        },
        median_rps(&t.runs).map_or_else(|| "-".into(), rate),
        if attempts > 0 {
            format!("{:.2}%", errors as f64 * 100.0 / attempts as f64)
        } else {
            "-".into()
        },
        if has_runs {
            bytes(sent as f64)
        } else {
            "-".into()
        },
    ];
    if searched {
        let dash = || "-".to_string();
        match &t.find_max {
            Some(f) => {
                row.push(suite_tables::max_cell(f));
                row.push(
                    f.max_sustainable_load
                        .map_or_else(dash, |l| load_level(f, l)),
                );
                row.push(rate(f.peak_rps));
                row.push(f.breaking_load.map_or_else(dash, |l| load_level(f, l)));
                if let Some(why) = f.why_lower_bound() {
                    details.push(format!("the maximum is only a lower bound: {why}"));
                }
                details.push(format!(
                    "{} steps in {:.1} s; {}",
                    f.steps.len(),
                    f.elapsed_s,
                    f.stopped
                ));
            }
            None => row.extend([dash(), dash(), dash(), dash()]),
        }
    }
    row.push(details.join("; "));
    row
}
/// CPU seconds per 1,000 requests, peak RSS and mean CPU cores of the target's process.
fn efficiency_cells(t: &TargetOutcome) -> [String; 3] {
    let e = super::watch::runs_efficiency(&t.runs);
    [
        super::watch::value(e.and_then(|e| e.cpu_s_per_1k_requests)),
        e.and_then(|e| e.peak_rss_bytes)
            .map_or_else(|| "-".into(), |b| bytes(b as f64)),
        super::watch::value(e.and_then(|e| e.mean_cores)),
    ]
}

fn median_rps(runs: &[crate::record::RunRecord]) -> Option<f64> {
    let mut v: Vec<f64> = runs
        .iter()
        .filter_map(|r| Metric::Throughput.of_run(r))
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

/// The parts every format lays out.
struct Parts {
    view: SuiteView,
    variants: Vec<Variant>,
    compare: Option<(CompareView, Comparison)>,
}

fn parts(o: &SuiteOutcome) -> Parts {
    let variants = variants(o);
    let compare = comparison(&variants, o.threshold_pct).map(|c| (compare_view(&variants, &c), c));
    Parts {
        view: suite_view(o, &variants),
        variants,
        compare,
    }
}

const ONE_TARGET: &str = "Only one target was measured: there is nothing to compare it with.";

/// The suite report as Markdown.
pub fn markdown(o: &SuiteOutcome) -> String {
    let p = parts(o);
    let v = &p.view;
    let mut out = format!(
        "# volley suite: {}\n\n{}\n\n",
        md_text(&v.title),
        md_text(&v.subtitle)
    );
    for line in &v.headline {
        out.push_str(&format!("- **{}**\n", md_text(line)));
    }
    out.push('\n');
    if !v.failures.is_empty() {
        out.push_str("> **Targets that did not run to their end:**\n>\n");
        for f in &v.failures {
            out.push_str(&format!("> - {}\n", md_text(f)));
        }
        out.push('\n');
    }
    out.push_str(&v.targets.to_markdown("##"));
    for note in &v.notes {
        // Every line of a note inside the quote, each its own line.
        let lines = md_text(note).replace('\n', "  \n> ");
        out.push_str(&format!("> **Note:** {lines}\n\n"));
    }
    for t in v.results.iter().chain(&v.operations) {
        out.push_str(&t.to_markdown("##"));
    }
    match &p.compare {
        Some((cv, _)) if p.variants.len() > 1 => {
            out.push_str(&format!("## Comparison: {}\n\n", md_text(&cv.title)));
            out.push_str(&markdown_body(cv));
        }
        Some(_) => out.push_str(&format!("{ONE_TARGET}\n")),
        None => {}
    }
    out
}

/// The suite report as plain text (`summary.txt`, and what `volley suite` prints).
pub fn text(o: &SuiteOutcome) -> String {
    let p = parts(o);
    let v = &p.view;
    let mut out = format!("volley suite: {}\n{}\n\n", v.title, v.subtitle);
    for line in &v.headline {
        out.push_str(&format!("  {line}\n"));
    }
    out.push('\n');
    if !v.failures.is_empty() {
        out.push_str("Targets that did not run to their end:\n");
        for f in &v.failures {
            out.push_str(&format!("  ! {f}\n"));
        }
        out.push('\n');
    }
    out.push_str(&v.targets.to_text());
    for note in &v.notes {
        out.push_str(&format!("\n  ! {note}\n"));
    }
    for t in v.results.iter().chain(&v.operations) {
        out.push('\n');
        out.push_str(&t.to_text());
    }
    match &p.compare {
        Some((cv, _)) if p.variants.len() > 1 => {
            out.push_str(&format!("\ncomparison: {}\n\n", cv.title));
            out.push_str(&text_body(cv));
        }
        Some(_) => out.push_str(&format!("\n{ONE_TARGET}\n")),
        None => {}
    }
    out
}

/// The suite report as one self-contained HTML page, with the comparison's charts.
pub fn html(o: &SuiteOutcome) -> Result<String, Error> {
    let p = parts(o);
    let (compare, charts) = match &p.compare {
        Some((cv, _)) if p.variants.len() > 1 => (
            Some(cv.clone()),
            super::charts::compare::compare_charts(&p.variants)?,
        ),
        _ => (None, Vec::new()),
    };
    let folders: Vec<String> = p
        .variants
        .iter()
        .map(|v| v.source.display().to_string())
        .collect();
    let ctx = minijinja::context! {
        s => Serde(&p.view),
        v => compare.as_ref().map(Serde),
        charts => Serde(&charts),
        instead => (p.variants.len() == 1).then_some(ONE_TARGET),
        regenerate => format!("volley compare {} --format html", folders.join(" ")),
        version => env!("CARGO_PKG_VERSION"),
    };
    super::html::render_page("suite.html", "suite report", ctx)
}

/// Writes a file per [`Format`] (`summary.txt`, `report.md`, `report.html`) into the suite's
/// folder.
pub fn write(o: &SuiteOutcome) -> Result<(), Error> {
    for format in Format::ALL {
        let rendered = super::render_suite(o, format)?;
        write_atomically(&o.folder.join(format.file_name()), rendered.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::find_max::{FindMax, FindMaxStep as Step, SearchOutcome};
    use crate::record::model::LoadModel;
    use std::path::PathBuf;
    use std::time::Duration;

    fn searched(name: &str, top: f64, stopped: &str, broke: bool) -> TargetOutcome {
        let step = |level: f64, held: bool| Step {
            reason: String::new(),
            ..Step::test(level, level, held)
        };
        let mut steps = vec![step(top / 2.0, true), step(top, true)];
        if broke {
            steps.push(step(top * 2.0, false));
        }
        let outcome = SearchOutcome {
            steps,
            stopped: stopped.into(),
        };
        let mut t = TargetOutcome::new(name, "http://127.0.0.1:1", &PathBuf::from(name));
        t.find_max = Some(FindMax::from_outcome(
            LoadModel::Open,
            "p99<50ms",
            &outcome,
            Duration::ZERO,
        ));
        t
    }

    #[test]
    fn the_ranking_says_when_a_maximum_is_only_a_lower_bound() {
        let o = SuiteOutcome {
            schema_version: 1,
            name: "s".into(),
            source: "s.toml".into(),
            plan: Some("p.toml".into()),
            repeats: 1,
            find_max: Some("open model, SLO p99<50ms".into()),
            folder: "out".into(),
            started_at: String::new(),
            ended_at: String::new(),
            interrupted: None,
            notes: Vec::new(),
            decided: Vec::new(),
            decisions: Vec::new(),
            threshold_pct: None,
            exit_code: None,
            targets: vec![
                searched("a", 400.0, "the bisection converged", true),
                searched("b", 797.4, "the time budget was spent", false),
            ],
        };
        assert_eq!(
            find_max_ranking(&o),
            "Max sustainable throughput, highest first: \
             b ≥ 797.4 req/s (no break found within the budget) · a 400.0 req/s"
        );
        let row = target_row(&o.targets[1], true);
        assert!(row.contains(&"≥ 797.4".to_string()), "{row:?}");
        let stopped = format!(
            "the bisection converged; {}",
            crate::record::find_max::NOT_VALIDATED
        );
        let row = target_row(&searched("c", 400.0, &stopped, true), true);
        assert!(row.contains(&"400.0 (not validated)".into()), "{row:?}");
        // The decision heads the report on one line; its note keeps its lines in its quote.
        let two = SuiteOutcome {
            decided: vec!["decided after 3 rounds:\nb: p50 slower".into()],
            ..o
        };
        let md = markdown(&two);
        assert!(
            md.contains("- **decided after 3 rounds: b: p50 slower**"),
            "{md}"
        );
        assert!(
            md.contains("> **Note:** decided after 3 rounds:  \n> b: p50 slower\n"),
            "{md}"
        );
    }
}
