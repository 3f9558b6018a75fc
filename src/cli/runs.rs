//! Running a plan from the command line — once, or `--repeat N` times — then printing its
//! summary, writing its outputs and choosing the exit code. Quick mode, `volley run` and
//! `volley demo` all end here.

use std::path::Path;

use anyhow::Context;
use volley::export::{Export, ExportOptions};
use volley::plan::Plan;
use volley::record::RunRecord;
use volley::run::{Options, Outputs};

use super::tuning::TuningArgs;

/// What a run shows on stderr while it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Nothing (`-q`).
    Nothing,
    /// The one-line progress (`--no-tui`), when stderr is a terminal.
    Progress,
    /// The live terminal view when stderr is a terminal, `CI` is not set and the run is longer
    /// than a few seconds; else the progress line.
    View,
}

impl Shown {
    /// From `-q` and `--no-tui`.
    pub fn from_flags(quiet: bool, no_tui: bool) -> Self {
        match (quiet, no_tui) {
            (true, _) => Self::Nothing,
            (false, true) => Self::Progress,
            (false, false) => Self::View,
        }
    }
}

/// The run options of one command: signal handling, what `shown` says, the open model's pacer
/// tick `tuning` asks for.
fn options(argv: &volley::redact::Argv, shown: Shown, tuning: TuningArgs) -> Options {
    Options {
        progress: shown != Shown::Nothing,
        live_view: shown == Shown::View,
        color: super::terminal::policy().stderr,
        handle_signals: true,
        command: argv.clone(),
        send_grid: tuning.send_grid,
        remote_judge: false,
    }
}

/// Runs `plan` once with signal handling, showing what `shown` says.
pub fn execute(
    plan: &Plan,
    argv: &volley::redact::Argv,
    shown: Shown,
    tuning: TuningArgs,
) -> anyhow::Result<RunRecord> {
    let options = options(argv, shown, tuning);
    volley::run::execute(plan, &options, &mut []).context("the run failed")
}

/// Like [`execute`], with `export`'s observer watching: the record gets the exporters'
/// warnings, after the run's final figures were pushed.
fn execute_exported(
    plan: &Plan,
    argv: &volley::redact::Argv,
    export: Option<&Export>,
    flags: &RunFlags<'_>,
) -> anyhow::Result<RunRecord> {
    let Some(export) = export else {
        return execute(plan, argv, flags.shown, flags.tuning);
    };
    let options = options(argv, flags.shown, flags.tuning);
    let mut observer = export.observer(plan);
    let mut record =
        volley::run::execute(plan, &options, &mut [&mut observer]).context("the run failed")?;
    record.warnings.extend(export.run_ended());
    volley::analysis::verdict::settle(&mut record);
    Ok(record)
}

/// How one command runs its plan: repeats, what it shows, exporters and generator tuning.
pub struct RunFlags<'a> {
    /// Runs of the same plan (`--repeat`).
    pub repeat: u32,
    /// What the run shows while it goes (`-q`, `--no-tui`).
    pub shown: Shown,
    /// `--metrics-listen`, `--prometheus-rw`.
    pub export: &'a ExportOptions,
    /// Hidden generator tuning (`--pacer-tick`).
    pub tuning: TuningArgs,
}

/// Runs `plan` (`repeat` times when more than one), prints what a user reads and writes the
/// outputs; returns the exit code.
pub fn run(
    plan: &Plan,
    argv: &volley::redact::Argv,
    outputs: &Outputs,
    flags: RunFlags<'_>,
) -> anyhow::Result<u8> {
    let quiet = flags.shown == Shown::Nothing;
    // Before the first request: an output that cannot be written would lose the measurement.
    outputs.check()?;
    open_files(plan);
    if !quiet {
        for line in volley::run::watching::probe(&plan.watch) {
            eprintln!("warning: {line}");
        }
    }
    let export = super::export::start(flags.export, plan)?;
    let code = run_exported(plan, argv, outputs, export.as_ref(), &flags);
    if let Some(export) = export {
        export.close();
    }
    code
}

/// [`run`] once the exporters have started.
fn run_exported(
    plan: &Plan,
    argv: &volley::redact::Argv,
    outputs: &Outputs,
    export: Option<&Export>,
    flags: &RunFlags<'_>,
) -> anyhow::Result<u8> {
    let quiet = flags.shown == Shown::Nothing;
    if flags.repeat > 1 {
        return super::repeat::run(&plan.name, &outputs.out, flags.repeat, quiet, || {
            execute_exported(plan, argv, export, flags)
        });
    }
    let record = execute_exported(plan, argv, export, flags)?;
    if !quiet {
        print!("{}", volley::report::text::render(&record));
    }
    Ok(super::write_and_finish(&record, outputs, quiet).1)
}

/// Raises the open-file limit to its hard limit, and says so when it is still below the
/// connections the plan may open (one per VU, at most; a few more for the process itself).
pub fn open_files(plan: &Plan) {
    let Some(limit) = volley::run::raise_open_files() else {
        return;
    };
    let wanted: u64 = plan.scenarios.iter().map(|s| u64::from(s.max_vus())).sum();
    if limit < wanted + 64 {
        eprintln!(
            "warning: the open-file limit is {limit}, below the {wanted} connections this test \
             may open: those over it fail as too_many_open_files (a limit of this machine, not \
             the target's); raise it with `ulimit -n` (its hard limit too, as root)"
        );
    }
}

/// The results folder of `out` for a demo-style caller that prints the summary itself.
pub fn outputs(out: &Path) -> Outputs {
    Outputs {
        json: None,
        out: out.to_path_buf(),
    }
}
