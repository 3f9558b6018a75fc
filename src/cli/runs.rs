//! Running a plan from the command line — once, or `--repeat N` times — then printing its
//! summary, writing its outputs and choosing the exit code. Quick mode, `volley run` and
//! `volley demo` all end here.

use anyhow::Context;
use volley::plan::Plan;
use volley::record::RunRecord;
use volley::run::{Options, Outputs, Shown};

use super::tuning::TuningArgs;

/// Runs `plan` once with signal handling, showing what `shown` says, `outputs` (started)
/// reading its live figures.
pub fn execute(
    plan: &Plan,
    argv: &volley::redact::Argv,
    shown: Shown,
    tuning: TuningArgs,
    outputs: &mut Outputs,
) -> anyhow::Result<RunRecord> {
    let color = super::terminal::policy().stderr;
    let options = Options::for_command(argv, shown, color, tuning.send_grid);
    volley::run::execute(plan, &options, outputs).context("the run failed")
}

/// How one command runs its plan: repeats, what it shows and generator tuning.
pub struct RunFlags {
    /// Runs of the same plan (`--repeat`), the most when `until` has goals.
    pub repeat: u32,
    /// Goals that end the repeats early (`--repeat-until`).
    pub until: Vec<volley::record::model::PrecisionGoal>,
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
    plan.repeat_until_fits(flags.repeat, &flags.until)?;
    if !quiet {
        eprintln!("{}", volley::run::show::banner(plan));
    }
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
        true => super::repeat::run(
            &plan.name,
            flags.repeat,
            &flags.until,
            quiet,
            &mut outputs,
            once,
        ),
        false => once(&mut outputs).map(|record| super::finish(&record, &mut outputs, quiet).1),
    };
    outputs.close();
    code
}

/// Raises the open-file limit to its hard limit, and says so when it is still below the
/// connections the plan may open.
pub fn open_files(plan: &Plan) {
    if let Some(warning) = volley::run::show::open_files_warning(plan) {
        eprintln!("warning: {warning}");
    }
}
