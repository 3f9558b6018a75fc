//! `volley run PLAN` and `volley check PLAN`.

use volley::plan::Plan;
use volley::plan::read::{ReadOptions, read_file};

use super::args::{CheckArgs, RunArgs};

/// Runs a plan; returns the exit code.
pub fn run(a: RunArgs, argv: &volley::redact::Argv) -> anyhow::Result<u8> {
    if a.join.join.is_some() {
        return join(a, argv);
    }
    let watch = a.watch.specs()?;
    let mut options = ReadOptions {
        sets: a.sets,
        time_scale: a.time_scale,
        threads: a.threads,
        secret_headers: a.secret_headers,
        tags: a.tags,
        segment: a.segment,
        max_data_bytes: max_data(a.max_data_size),
        seed: a.seed,
        ..Default::default()
    };
    a.results.apply(&mut options);
    let mut plan = read_file(&a.plan, &options)?
        // Run preparation: the one place the target may be contacted before the run (gRPC
        // schemas by server reflection).
        .prepare()?;
    plan.watch.extend(watch);
    let records = super::export::records(a.json, &a.out, a.repeat, &plan.name);
    let flags = super::runs::RunFlags {
        repeat: a.repeat,
        until: a.repeat_until,
        shown: volley::run::Shown::from_flags(a.quiet, a.no_tui),
        tuning: a.tuning,
    };
    super::runs::run(&plan, argv, a.export.add_to(records), flags)
}

/// The data-file limit `--max-data-size` sets (the default without it).
fn max_data(flag: Option<u64>) -> u64 {
    flag.unwrap_or(volley::plan::data::DEFAULT_MAX_DATA_BYTES)
}

/// Runs a plan as one generator of a distributed test (`--join`).
fn join(a: RunArgs, argv: &volley::redact::Argv) -> anyhow::Result<u8> {
    super::coordinate::refuse_with_join(&a.export, a.repeat, !a.repeat_until.is_empty())?;
    let watch = a.watch.specs()?;
    let load = |segment| -> anyhow::Result<Plan> {
        let mut options = ReadOptions {
            sets: a.sets.clone(),
            time_scale: a.time_scale,
            threads: a.threads,
            secret_headers: a.secret_headers.clone(),
            tags: a.tags.clone(),
            segment: Some(segment),
            max_data_bytes: max_data(a.max_data_size),
            seed: a.seed,
            ..Default::default()
        };
        a.results.clone().apply(&mut options);
        let mut plan = read_file(&a.plan, &options)?.prepare()?;
        plan.watch.extend(watch.iter().cloned());
        Ok(plan)
    };
    let outputs = super::export::records(a.json.clone(), &a.out, 1, "");
    super::coordinate::join(&a.join, a.segment, load, outputs, argv, a.quiet)
}

/// Validates a plan and prints one rendered request per step.
pub fn check(a: CheckArgs) -> anyhow::Result<u8> {
    let mut options = ReadOptions {
        sets: a.sets,
        time_scale: a.time_scale,
        threads: None,
        secret_headers: a.secret_headers,
        segment: a.segment,
        max_data_bytes: max_data(a.max_data_size),
        ..Default::default()
    };
    a.results.apply(&mut options);
    let plan = read_file(&a.plan, &options)?
        // Every step's request is shown, so gRPC schemas the plan takes from the target are
        // fetched as a run would.
        .prepare()?;
    // Printed only once every step has rendered: a plan that fails says so, and only that.
    let out = volley::run::show::check_text(&plan, &a.plan)?;
    print!("{out}");
    Ok(super::EXIT_OK)
}
