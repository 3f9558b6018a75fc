//! The top of a folder of repeated runs (`--repeat N`, a suite's repeats): `summary.txt`,
//! `report.md` and `report.html` with the spread of the repeats — per metric the geometric
//! mean over runs (the error rate's arithmetic mean) and its 95 % interval, and so for each
//! scenario, step and phase of a plan — beside `repeat-1/` … `repeat-N/`.

use std::path::{Path, PathBuf};

use super::uncertainty::{asked, goal_got, plus_minus, precision_line};
use super::{Format, comparison};
use crate::analysis::compare::{CompareOptions, Variant, compare};
use crate::analysis::repeat_precision::{SpreadPrecision, all_met};
use crate::error::Error;
use crate::record::{RunRecord, write_atomically};
use crate::units::{ms, rate, thousands};

/// The folder of run `i` (from 1) of a series of repeats.
pub fn repeat_dir(dir: &Path, i: u32) -> PathBuf {
    dir.join(format!("repeat-{i}"))
}

/// The spread of `runs` (one variant named `label`, kept in `dir`) as `summary.txt` says it.
pub fn spread_text(dir: &Path, label: &str, runs: &[RunRecord]) -> String {
    let variants = spread_of(dir, label, runs);
    comparison::text(&variants, &compare(&variants, CompareOptions::with_parts()))
}

fn spread_of(dir: &Path, label: &str, runs: &[RunRecord]) -> [Variant; 1] {
    [Variant {
        label: label.to_string(),
        source: dir.to_path_buf(),
        runs: runs.to_vec(),
    }]
}

/// Writes the spread of `runs` (one variant named `label`) into `dir`, headed by `lead` where
/// given (what `--repeat-until` got, [`until_line`]); returns the text summary.
pub fn write_spread(
    dir: &Path,
    label: &str,
    runs: &[RunRecord],
    lead: Option<&str>,
) -> Result<String, Error> {
    let variants = spread_of(dir, label, runs);
    let c = compare(&variants, CompareOptions::with_parts());
    for format in Format::ALL {
        let rendered = super::render_comparison(&variants, &c, format, lead.map(|l| (l, l)))?;
        write_atomically(&dir.join(format.file_name()), rendered.as_bytes())?;
    }
    Ok(comparison::text(&variants, &c))
}

/// One line per finished run: `1,234 requests, 617.0 req/s, p50 1.20 ms, p99 3.40 ms, 0 errors`,
/// and for a run asked to last until precise what it got (`; precise at 6.0s: p50 ±0.9 % (asked
/// ±1 %)`, [`precision_line`]).
pub fn run_line(r: &RunRecord) -> String {
    let s = &r.summary;
    let precision = s.ci95.as_ref().and_then(|c| c.precision.as_ref());
    format!(
        "{} requests, {} req/s, p50 {} ms, p99 {} ms, {} errors{}",
        thousands(s.requests),
        rate(s.rps),
        ms(s.latency_ms.p50),
        ms(s.latency_ms.p99),
        thousands(s.errors),
        precision.map_or_else(String::new, |p| format!("; {}", precision_line(r, p))),
    )
}

/// The line that heads a folder of repeats: what `--repeat-until` got (`until`), then what
/// `--precision` got in each run ([`precision_lead`]); `None` when neither was asked.
pub fn lead(until: Option<String>, runs: &[RunRecord]) -> Option<String> {
    let lines: Vec<String> = until.into_iter().chain(precision_lead(runs)).collect();
    (!lines.is_empty()).then(|| lines.join("; "))
}

/// What `--precision` got in each of a folder's runs: `--precision in each run: 1 of 3 runs
/// precise (p50 ±1 %)`; `None` when no run asked it.
pub fn precision_lead(runs: &[RunRecord]) -> Option<String> {
    let outcomes: Vec<_> = runs
        .iter()
        .filter_map(|r| r.summary.ci95.as_ref()?.precision.as_ref())
        .collect();
    let goals = outcomes.first()?.goals.iter();
    let goals: Vec<String> = goals
        .map(|g| format!("{} {}", g.label(), asked(g)))
        .collect();
    let reached = outcomes.iter().filter(|p| p.reached).count();
    Some(format!(
        "--precision in each run: {reached} of {} runs precise ({})",
        runs.len(),
        goals.join(", ")
    ))
}

/// What `--repeat-until` got after `runs` runs: `precise after 4 runs: p50 ±0.8 % (asked ±1 %)`,
/// `stopped at the most runs (10): p50 ±1.4 % (asked ±1 %)`, or, `interrupted` before either,
/// `interrupted after 2 runs: p50 no interval (asked ±1 %)` (the spread between the runs,
/// [`crate::analysis::repeat_precision`]).
pub fn until_line(states: &[SpreadPrecision], runs: usize, interrupted: bool) -> String {
    let asked: Vec<String> = states
        .iter()
        .map(|s| {
            goal_got(
                &s.goal,
                &s.share.map_or_else(|| "no interval".into(), plus_minus),
            )
        })
        .collect();
    let asked = asked.join(", ");
    match (all_met(states), interrupted) {
        (true, _) => format!("precise after {runs} runs: {asked}"),
        (false, true) => format!("interrupted after {runs} runs: {asked}"),
        (false, false) => format!("stopped at the most runs ({runs}): {asked}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::model::{BoundFigure, PrecisionGoal};

    #[test]
    fn a_spread_of_two_runs_promises_no_interval() {
        let run = || crate::record::fixture::record("r", 5, 100, 2000, 0, 0.0);
        let two = spread_text(Path::new("out"), "r", &[run(), run()]);
        assert!(
            two.contains("arithmetic mean) (an interval over runs needs 3);"),
            "{two}"
        );
        assert!(!two.contains("no verdict from these runs"), "{two}");
        let three = spread_text(Path::new("out"), "r", &[run(), run(), run()]);
        assert!(
            three.contains("arithmetic mean) and 95% interval;"),
            "{three}"
        );
    }

    #[test]
    fn until_lines_say_how_the_series_ended() {
        let goal = |share| PrecisionGoal {
            figure: BoundFigure::P50,
            share,
            part: None,
        };
        let met = [SpreadPrecision {
            goal: goal(0.01),
            share: Some(0.008),
        }];
        let short = [SpreadPrecision {
            goal: goal(0.01),
            share: Some(0.014),
        }];
        let none = [SpreadPrecision {
            goal: goal(0.01),
            share: None,
        }];
        assert_eq!(
            until_line(&met, 4, false),
            "precise after 4 runs: p50 ±0.8 % (asked ±1 %)"
        );
        assert_eq!(
            until_line(&short, 10, false),
            "stopped at the most runs (10): p50 ±1.4 % (asked ±1 %)"
        );
        assert_eq!(
            until_line(&none, 2, true),
            "interrupted after 2 runs: p50 no interval (asked ±1 %)"
        );
        // Goals met by the runs an interruption left are met all the same.
        assert!(until_line(&met, 3, true).starts_with("precise after 3 runs"));
    }

    #[test]
    fn each_run_of_a_folder_says_what_its_precision_goals_got() {
        use crate::record::model::{Ci95, PrecisionOutcome};
        let run = |reached: bool| {
            let mut r = crate::record::fixture::record("r", 6, 1000, 2000, 0, 0.0);
            let goals = vec![PrecisionGoal {
                figure: BoundFigure::P50,
                share: 0.01,
                part: None,
            }];
            let at_s = reached.then_some(5.0);
            r.summary.ci95 = Some(Ci95 {
                precision: Some(PrecisionOutcome {
                    goals,
                    reached,
                    at_s,
                }),
                ..Ci95::default()
            });
            r
        };
        let runs = [run(false), run(true), run(false)];
        // Before, neither the runs' lines nor the folder's top said a word of it.
        assert!(run_line(&runs[0]).contains("; stopped at the maximum length: p50 "));
        assert!(run_line(&runs[1]).contains("; precise at 5.0s: p50 "));
        assert_eq!(
            precision_lead(&runs).as_deref(),
            Some("--precision in each run: 1 of 3 runs precise (p50 ±1 %)")
        );
        let plain = crate::record::fixture::record("r", 6, 1000, 2000, 0, 0.0);
        assert_eq!(precision_lead(std::slice::from_ref(&plain)), None);
        assert!(!run_line(&plain).contains(';'));
    }
}
