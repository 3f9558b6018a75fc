//! `volley suite SUITE.toml`: one test against several targets, then their comparison.

use volley::suite::{self, SuiteReadOptions, SuiteRunOptions};

use super::args::SuiteArgs;

/// Runs a suite; returns the exit code: 0 every target ran, 1 one or more failed, 2 the suite
/// file (or a plan it names) is invalid, 130 interrupted.
pub fn run(a: SuiteArgs, argv: &volley::redact::Argv) -> anyhow::Result<u8> {
    let s = suite::read(
        &a.suite,
        &SuiteReadOptions {
            time_scale: a.time_scale,
            sets: a.sets.clone(),
            only: a.only.clone(),
            tags: a.tags.clone(),
        },
    )?;
    if !a.quiet {
        eprintln!("{}", s.banner());
    }
    for note in &s.notes {
        eprintln!("note: {note}");
    }
    let quiet = a.quiet;
    let mut say = |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    };
    let outcome = suite::run(
        &s,
        &SuiteRunOptions {
            out: a.out,
            progress: !a.quiet,
            command: argv.clone(),
            watch_signals: true,
        },
        &mut say,
    )?;
    if !a.quiet {
        println!("\n{}", volley::report::suite::text(&outcome));
        super::print_folder(&outcome.folder, &[volley::record::suite::SUITE_FILE]);
    } else {
        outcome.not_ran().for_each(|line| eprintln!("{line}"));
    }
    Ok(outcome.exit_code())
}
