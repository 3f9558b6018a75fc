//! Running a plan from the command line — once, or `--repeat N` times — then printing its
//! summary, writing its outputs and choosing the exit code. Quick mode, `volley run` and
//! `volley demo` all end here.

use anyhow::Context;
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

/// Runs `plan` once with signal handling, showing what `shown` says, `outputs` (started)
/// reading its live figures.
pub fn execute(
    plan: &Plan,
    argv: &volley::redact::Argv,
    shown: Shown,
    tuning: TuningArgs,
    outputs: &mut Outputs,
) -> anyhow::Result<RunRecord> {
    let options = options(argv, shown, tuning);
    volley::run::execute(plan, &options, outputs).context("the run failed")
}

/// How one command runs its plan: repeats, what it shows and generator tuning.
pub struct RunFlags {
    /// Runs of the same plan (`--repeat`).
    pub repeat: u32,
    /// What the run shows while it goes (`-q`, `--no-tui`).
    pub shown: Shown,
    /// Hidden generator tuning (`--pacer-tick`).
    pub tuning: TuningArgs,
}

/// Runs `plan` (`repeat` times when more than one), prints what a user reads and gives each
/// record to `outputs`; returns the exit code.
pub fn run(
    plan: &Plan,
    argv: &volley::redact::Argv,
    mut outputs: Outputs,
    flags: RunFlags,
) -> anyhow::Result<u8> {
    let quiet = flags.shown == Shown::Nothing;
    // Before the first request: an output that cannot be written would lose the measurement.
    super::export::start(&mut outputs, Some(plan), "volley")?;
    open_files(plan);
    if !quiet {
        for line in volley::run::watching::probe(&plan.watch) {
            eprintln!("warning: {line}");
        }
    }
    let once = |outputs: &mut Outputs| execute(plan, argv, flags.shown, flags.tuning, outputs);
    let code = match flags.repeat > 1 {
        true => super::repeat::run(&plan.name, flags.repeat, quiet, &mut outputs, once),
        false => once(&mut outputs).map(|record| super::finish(&record, &mut outputs, quiet).1),
    };
    outputs.close();
    code
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
