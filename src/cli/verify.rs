//! `volley verify`: checks the invariants of records (docs/measurement.md, "Invariants").

use std::path::PathBuf;

use clap::Args;

/// `volley verify`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 every record holds every invariant; 1 one or more do not (each \
                  failure is printed with its JSON path and both sides of its equation); 2 a \
                  path could not be read or is not a volley record."
)]
pub struct VerifyArgs {
    /// Records to check: run.json files, results folders, folders of repeats, suite folders
    /// (or their suite.json), merged records (with their shares' records when their files are
    /// where `volley merge` read them).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Print only the failures.
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

/// Runs `volley verify`.
pub fn run(a: VerifyArgs) -> anyhow::Result<u8> {
    let mut failed = false;
    for path in &a.paths {
        for checked in volley::analysis::verify::verify_path(path)? {
            let file = checked.file.display();
            if checked.violations.is_empty() {
                if !a.quiet {
                    println!("ok: {file}");
                }
            } else {
                failed = true;
                println!(
                    "FAILED: {file}: {} invariant(s) broken",
                    checked.violations.len()
                );
                for v in &checked.violations {
                    println!("  {v}");
                }
            }
            if !a.quiet {
                for note in &checked.notes {
                    println!("  note: {note}");
                }
            }
        }
    }
    Ok(if failed {
        super::EXIT_FAILED
    } else {
        super::EXIT_OK
    })
}
