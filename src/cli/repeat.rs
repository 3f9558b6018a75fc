//! `--repeat N`: the same test N times, back to back, each run a normal record in
//! `<out>/<name>-<time>/repeat-<i>/`, and a summary of their spread at the top of the folder.

use std::path::Path;

use volley::record::RunRecord;
use volley::report::repeats::{repeat_dir, run_line, write_spread};
use volley::report::{new_folder, write_results_into};

/// Runs the test named `name` `repeat` times, each run by `execute`; returns the worst exit
/// code. An interrupted run ends the series.
pub fn run(
    name: &str,
    out: &Path,
    repeat: u32,
    quiet: bool,
    mut execute: impl FnMut() -> anyhow::Result<RunRecord>,
) -> anyhow::Result<u8> {
    let mut folder = None;
    let mut runs = Vec::new();
    let mut worst = super::EXIT_OK;
    for i in 1..=repeat {
        let record = execute()?;
        let dir = match &folder {
            Some(dir) => dir,
            None => folder.insert(new_folder(out, &volley::report::folder_name(&record))?),
        };
        let files = write_results_into(&repeat_dir(dir, i), &record)?;
        if !quiet {
            println!(
                "repeat {i}/{repeat}: {}  → {}",
                run_line(&record),
                files.dir.display()
            );
        }
        worst = worst.max(super::finish_run(&record, quiet));
        let interrupted = record.interrupted.is_some();
        runs.push(record);
        if interrupted {
            break;
        }
    }
    let Some(dir) = folder else {
        return Ok(worst);
    };
    let text = write_spread(&dir, name, runs)?;
    if !quiet {
        println!("\n{text}");
        super::print_folder(&dir, &[]);
        println!(
            "compare with another folder of repeats: volley compare {} OTHER",
            dir.display()
        );
    }
    Ok(worst)
}
