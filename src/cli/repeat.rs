//! `--repeat N`: the same test N times, back to back, each run a normal record in
//! `<out>/<name>-<time>/repeat-<i>/`, and a summary of their spread at the top of the folder.

use std::path::Path;

use volley::analysis::compare::{CompareOptions, Variant, compare};
use volley::plan::Plan;
use volley::record::write_atomically;
use volley::report::format::{ms, thousands};
use volley::report::{comparison, html, new_folder, write_results_into};

/// Runs `spec` `repeat` times; returns the worst exit code. An interrupted run ends the series.
pub fn run(
    spec: &Plan,
    argv: &[String],
    out: &Path,
    repeat: u32,
    quiet: bool,
) -> anyhow::Result<u8> {
    let mut folder = None;
    let mut runs = Vec::new();
    let mut worst = super::EXIT_OK;
    for i in 1..=repeat {
        let record = super::quick::execute(spec, argv, !quiet)?;
        let dir = match &folder {
            Some(dir) => dir,
            None => folder.insert(new_folder(out, &volley::report::folder_name(&record))?),
        };
        let files = write_results_into(&dir.join(format!("repeat-{i}")), &record)?;
        if !quiet {
            let s = &record.summary;
            println!(
                "repeat {i}/{repeat}: {} requests, {:.1} req/s, p50 {} ms, p99 {} ms, {} errors  → {}",
                thousands(s.requests),
                s.rps,
                ms(s.latency_ms.p50),
                ms(s.latency_ms.p99),
                thousands(s.errors),
                files.dir.display()
            );
        }
        worst = worst.max(super::run_exit_code(&record));
        let interrupted = record.interrupted.is_some();
        runs.push(record);
        if interrupted {
            break;
        }
    }
    let Some(dir) = folder else {
        return Ok(worst);
    };
    let variant = Variant {
        label: spec.name.clone(),
        source: dir.clone(),
        runs,
    };
    let variants = [variant];
    let c = compare(&variants, CompareOptions::default());
    let text = comparison::text(&variants, &c);
    write_atomically(&dir.join("summary.txt"), text.as_bytes())?;
    write_atomically(
        &dir.join("report.md"),
        comparison::markdown(&variants, &c).as_bytes(),
    )?;
    write_atomically(
        &dir.join("report.html"),
        html::render_compare(&variants, &c)?.as_bytes(),
    )?;
    if !quiet {
        println!("\n{text}");
        println!("results: {}", dir.display());
        println!("report.md: {}", dir.join("report.md").display());
        println!("report.html: {}", dir.join("report.html").display());
        println!(
            "compare with another folder of repeats: volley compare {} OTHER",
            dir.display()
        );
    }
    Ok(worst)
}
