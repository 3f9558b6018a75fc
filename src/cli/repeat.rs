//! `--repeat N`: the same test N times, back to back, each run a normal record in
//! `<out>/<name>-<time>/repeat-<i>/`, and a summary of their spread at the top of the folder
//! (the results folder output in its repeats layout writes both).

use volley::analysis::repeat_precision::{all_met, spread_precision};
use volley::record::RunRecord;
use volley::record::model::PrecisionGoal;
use volley::report::repeats::{lead, run_line, spread_text, until_line, write_spread};
use volley::run::Outputs;
use volley::run::output::Kept;

/// Runs the test named `name` `repeat` times — fewer once every `until` goal is met — each run
/// by `execute` and given to `outputs`; returns the worst exit code. An interrupted run ends the
/// series.
pub fn run(
    name: &str,
    repeat: u32,
    until: &[PrecisionGoal],
    quiet: bool,
    outputs: &mut Outputs,
    mut execute: impl FnMut(&mut Outputs) -> anyhow::Result<RunRecord>,
) -> anyhow::Result<u8> {
    let mut folder = None;
    let mut runs = Vec::new();
    let mut worst = super::EXIT_OK;
    let mut outcome = None;
    for i in 1..=repeat {
        let record = execute(outputs)?;
        let written = outputs.finish(&record);
        for kept in &written.kept {
            if let Kept::Folder(dir) = kept {
                folder = dir.parent().map(std::path::Path::to_path_buf);
                if !quiet {
                    println!(
                        "repeat {i}/{repeat}: {}  → {}",
                        run_line(&record),
                        dir.display()
                    );
                }
            }
        }
        worst = worst.max(super::exit_code(&record, &written, quiet));
        let interrupted = record.interrupted.is_some();
        runs.push(record);
        let states = spread_precision(&runs, until);
        let precise = all_met(&states);
        if precise || (!until.is_empty() && (i == repeat || interrupted)) {
            outcome = Some(until_line(&states, runs.len(), interrupted));
        }
        if interrupted || precise {
            break;
        }
    }
    let outcome = lead(outcome, &runs);
    if let (Some(line), Some(dir)) = (&outcome, &folder) {
        // The folder's top says what the goals got, as the console does.
        if let Err(e) = write_spread(dir, name, &runs, Some(line)) {
            eprintln!("volley: cannot write the spread of the repeats: {e}");
        }
        if !quiet {
            println!("{line}");
        }
    }
    if let Some(dir) = folder.filter(|_| !quiet) {
        println!("\n{}", spread_text(&dir, name, &runs));
        super::print_folder(&dir, &[]);
        println!(
            "compare with another folder of repeats: volley compare {} OTHER",
            dir.display()
        );
    }
    Ok(worst)
}
