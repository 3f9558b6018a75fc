//! `volley find-max TARGET --slo …`: the maximum sustainable throughput of a URL or a
//! one-scenario plan.

use std::path::Path;

use volley::findmax;
use volley::findmax::run::Settings;
use volley::plan::read::{ReadOptions, read_file};
use volley::plan::{Plan, RunInput};
use volley::record::model::LoadModel;

use super::args::FindMaxArgs;

/// Runs the search; returns the exit code.
pub fn run(a: FindMaxArgs, argv: &volley::redact::Argv) -> anyhow::Result<u8> {
    let settings = settings(&a)?;
    let mut outputs = super::export::records(a.json.clone(), &a.out, 1, "");
    super::export::start(&mut outputs, None, "volley find-max")?;
    let base = base_plan(&a)?;
    super::runs::open_files(&base);
    if let Some(why) = findmax::run::unsearchable(&base, settings.step) {
        anyhow::bail!(volley::Error::Invalid {
            what: why.what().into(),
            why: why.to_string(),
        });
    }
    if !a.quiet {
        eprintln!("volley find-max: {}", settings.banner(&base));
    }
    let found = findmax::run::run(
        &base,
        &settings,
        |plan| {
            let options = volley::run::Options {
                progress: false,
                handle_signals: true,
                command: argv.clone(),
                ..volley::run::Options::default()
            };
            volley::run::execute(plan, &options, &mut volley::run::Outputs::none())
        },
        |step| {
            if !a.quiet {
                eprintln!("  {}", settings.step_line(step));
            }
        },
    )?;
    let Some(found) = found else {
        anyhow::bail!("no step could run within the budget of {:?}", a.budget);
    };
    let code = super::finish(&found.record, &mut outputs, a.quiet).1;
    let said = volley::report::find_max::result_line(&found.summary).filter(|_| a.quiet);
    said.inspect(|line| println!("{line}"));
    Ok(code)
}

/// The search's settings from the flags.
fn settings(a: &FindMaxArgs) -> anyhow::Result<Settings> {
    let slo = findmax::slo::parse(&a.slo).map_err(|why| volley::Error::Invalid {
        what: "--slo".into(),
        why: why.to_string(),
    })?;
    Ok(Settings {
        slo_text: a.slo.clone(),
        slo,
        model: a.model,
        budget: a.budget,
        step: a.step,
        warmup: a.warmup,
        start: a.start,
        max: a.max,
        max_in_flight: a.max_in_flight,
        resolution: a.resolution,
        validation_steps: a.validation_steps,
        threads: a.threads,
    }
    .checked()?)
}

/// The test the search varies: a URL as quick mode would run it, or a plan file.
fn base_plan(a: &FindMaxArgs) -> anyhow::Result<Plan> {
    let target = &a.target;
    if Path::new(target).is_file() {
        let mut options = ReadOptions {
            sets: a.sets.clone(),
            threads: a.threads,
            secret_headers: a.secret_headers.clone(),
            load_replaced: true,
            ..Default::default()
        };
        a.results.clone().apply(&mut options);
        return Ok(read_file(Path::new(target), &options)?.prepare()?);
    }
    let mut input = RunInput::new(target.clone());
    input.name = "find-max".into();
    input.method = a.method.clone();
    input.headers = a.headers.clone();
    input.secret_headers = a.secret_headers.clone();
    input.body = a.body.clone().unwrap_or_default();
    input.timeout = a.timeout;
    input.threads = a.threads;
    input.connect = a.connect.options();
    input.grpc = a.grpc.input();
    (input.duration, input.load_replaced) = (Some(a.step), true);
    a.results.clone().apply_quick(&mut input);
    if a.model == LoadModel::Open {
        input.rate_per_sec = Some(1.0);
    }
    Ok(input.validate()?.prepare()?)
}
