//! The command line: argument definitions, dispatch, and exit codes. `anyhow` lives here only.
//!
//! Exit codes: 0 the run finished and not every request failed; 1 every request failed, none
//! completed, no connection could be opened, a distributed test lost a generator, find-max
//! found no maximum, or the run could not be carried out; 2 the command line or its input (a
//! plan, a record) is invalid — records that cannot be read or are of another format version
//! included; 99 a threshold failed; 130 the run was interrupted (SIGINT/SIGTERM) — its summary
//! and record are still written. A run's record keeps the code it ended with (`outcome`).
//! `volley suite`: 0 every target ran, 1 one or more failed a step, 2 invalid suite file, 99 a
//! target's thresholds failed or ended its run, 130 interrupted. `volley verify`: 0 every
//! invariant holds, 1 one does not, 2 a file could not be read. `volley compare`: 0 the comparison was made and no `--fail-on` rule
//! was met; 1 ([`EXIT_GATE`]) a `--fail-on` rule was met (or, with `--fail-on-inconclusive`, a
//! metric a rule names was inconclusive), or the comparison could not be made; 2 invalid command
//! line (a `--fail-on` rule that does not parse included) or records.

/// `print!`, `println!`, `eprint!` and `eprintln!` that never panic: a closed pipe (`volley URL |
/// head`) loses only the text it would have shown, never the run's record or reports, which the
/// standard macros' panic on a failed write would abort.
macro_rules! print {
    ($($t:tt)*) => {{ $crate::cli::stdout_wrote(::std::io::Write::write_fmt(&mut ::std::io::stdout(), format_args!($($t)*))); }};
}
macro_rules! println {
    () => { print!("\n") };
    ($($t:tt)*) => {{ print!("{}\n", format_args!($($t)*)); }};
}
macro_rules! eprint {
    ($($t:tt)*) => {{ let _ = ::std::io::Write::write_fmt(&mut ::std::io::stderr(), format_args!($($t)*)); }};
}
macro_rules! eprintln {
    () => { eprint!("\n") };
    ($($t:tt)*) => {{ eprint!("{}\n", format_args!($($t)*)); }};
}

mod ab;
mod args;
mod command_args;
mod compare;
mod completions;
mod coordinate;
mod demo;
mod distributed;
mod export;
mod findmax;
mod new;
mod plan;
mod proto_args;
mod quick;
mod repeat;
mod report;
mod runs;
mod serve;
mod suite;
mod terminal;
mod tuning;
mod verify;
mod watch_args;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use args::Command;
use volley::run::output::Kept;

pub use volley::analysis::verdict::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
/// Exit code of `volley compare`: a `--fail-on` rule was met (the CI gate failed).
pub const EXIT_GATE: u8 = 1;
/// Exit code: invalid command line or input.
pub const EXIT_USAGE: u8 = 2;

/// The first failure to write to stdout other than a reader that stopped early (a full disk,
/// `> /dev/full`): said at the end, and the exit code is not 0 — what was printed is lost.
static STDOUT_FAILED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Notes the outcome of a write to stdout (see [`STDOUT_FAILED`]).
pub(crate) fn stdout_wrote(result: std::io::Result<()>) {
    if let Err(e) = result
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        let _ = STDOUT_FAILED.set(e.to_string());
    }
}

/// Parses the command line, runs the command, and maps the result to an exit code.
pub fn main() -> ExitCode {
    // First of all: a signal that comes while volley starts waits for the thread that will
    // handle it (or for the release below), instead of killing the process.
    volley::run::hold_signals();
    // clap exits with code 2 on usage errors and 0 for --help/--version. The command line is
    // kept as clap read it, so that every secret in it is found wherever it is written.
    let (cli, argv) = terminal::parse();
    match &cli.command {
        // Runs, and the coordinator of a distributed test: the process's watcher handles
        // SIGINT, SIGTERM and SIGHUP from now on (docs/signals.md).
        None
        | Some(Command::Run(_) | Command::FindMax(_) | Command::Coordinate(_) | Command::Ab(_)) => {
            if let Err(err) = volley::run::watch_signals() {
                eprintln!("error: {err}");
                return ExitCode::from(EXIT_FAILED);
            }
        }
        // Every other command keeps the signals' default actions. A suite watches them itself,
        // on its own thread, once it starts: the processes it starts for its targets must not
        // inherit a mask that holds back the SIGTERM that stops them.
        Some(_) => volley::run::release_signals(),
    }
    let result = match cli.command {
        Some(Command::Serve(a)) => serve::run(a),
        Some(Command::Demo(a)) => demo::run(a),
        Some(Command::Run(a)) => plan::run(a, &argv),
        Some(Command::Check(a)) => plan::check(a),
        Some(Command::FindMax(a)) => findmax::run(*a, &argv),
        Some(Command::Report(a)) => report::run(a),
        Some(Command::Compare(a)) => compare::run(a),
        Some(Command::Suite(a)) => suite::run(a, &argv),
        Some(Command::New(a)) => new::run(a),
        Some(Command::Completions(a)) => completions::completions(a),
        Some(Command::Man(a)) => completions::man(a),
        Some(Command::Merge(a)) => distributed::merge_run(a),
        Some(Command::K8s(a)) => distributed::k8s(a),
        Some(Command::Coordinate(a)) => coordinate::run(a),
        Some(Command::Verify(a)) => verify::run(a),
        Some(Command::Ab(a)) => ab::run(*a, &argv),
        None => quick::run(cli.quick, &argv),
    };
    flush_stdout();
    let result = result.map(|code| match STDOUT_FAILED.get() {
        Some(why) => {
            eprintln!("volley: could not write to stdout: {why}");
            code.max(EXIT_FAILED)
        }
        None => code,
    });
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let text = volley::error::chain_text(err.as_ref());
            eprintln!("{}: {text}", terminal::error_label());
            let usage = err
                .downcast_ref::<volley::Error>()
                .is_some_and(volley::Error::is_input)
                || err
                    .downcast_ref::<volley::run::OutputError>()
                    .is_some_and(volley::run::OutputError::is_input);
            ExitCode::from(if usage { EXIT_USAGE } else { EXIT_FAILED })
        }
    }
}

/// Every command's end: shows the run's summary (unless `quiet`), gives the record to every
/// output and says where each kept it (a failure always), and returns what was written with the
/// exit code ([`exit_code`]).
fn finish(
    record: &volley::record::RunRecord,
    outputs: &mut volley::run::Outputs,
    quiet: bool,
) -> (volley::run::Written, u8) {
    if !quiet {
        print!("{}", volley::report::text::render(record));
    }
    let written = outputs.finish(record);
    if !quiet {
        for kept in &written.kept {
            match kept {
                Kept::Record(path) => eprintln!("record written to {}", path.display()),
                Kept::Folder(dir) => print_folder(dir, &[]),
            }
        }
    }
    let code = exit_code(record, &written, quiet);
    (written, code)
}

/// The exit code of a finished run whose outputs were `written`: the run's, or 1 when an output
/// could not keep it though the run went well. Says every output that failed, naming what was
/// kept; under `-q`, a run that did not end well still says why in one line on stderr (the
/// first line of its reports), since the exit code alone does not.
fn exit_code(
    record: &volley::record::RunRecord,
    written: &volley::run::Written,
    quiet: bool,
) -> u8 {
    for (what, why) in &written.failed {
        eprintln!(
            "volley: could not write {what}: {why}; kept: {}",
            written.kept_text()
        );
    }
    let outcome = volley::analysis::verdict::outcome(record);
    if quiet && outcome.exit_code != EXIT_OK {
        eprintln!("volley: {}", outcome.headline);
    }
    match written.complete() || outcome.exit_code != EXIT_OK {
        true => outcome.exit_code,
        false => EXIT_FAILED,
    }
}

/// Prints a results folder, its own files first (`suite.json`), then its reports (every command).
fn print_folder(dir: &std::path::Path, own: &[&'static str]) {
    use volley::report::Format;
    println!("results: {}", dir.display());
    let reports = Format::ALL
        .into_iter()
        .filter(|f| f.named_after_a_run())
        .map(Format::file_name);
    for name in own.iter().copied().chain(reports) {
        println!("{name}: {}", dir.join(name).display());
    }
}

/// Writes a rendered report to `path` (atomically), or to stdout when there is none.
fn emit(text: &str, path: Option<&Path>) -> anyhow::Result<()> {
    match path {
        Some(path) => volley::record::write_atomically(path, text.as_bytes())?,
        None => to_stdout(text.as_bytes())?,
    }
    Ok(())
}

/// Writes `bytes` to stdout. A reader that stopped early (`volley report run.json | head`) is
/// not an error: what it did not read is simply not shown.
fn to_stdout(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Flushes stdout at the end, noting a failure ([`STDOUT_FAILED`]).
fn flush_stdout() {
    stdout_wrote(std::io::stdout().flush());
}
