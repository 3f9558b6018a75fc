//! Running a plan from the command line — once, or `--repeat N` times — then printing its
//! summary, writing its outputs and choosing the exit code. Quick mode, `volley run` and
//! `volley demo` all end here.

use std::path::Path;

use anyhow::Context;
use volley::plan::Plan;
use volley::record::RunRecord;
use volley::redact::redact_url_password;
use volley::run::{Options, Outputs};

/// Runs `plan` once with signal handling and, when `progress` and stderr is a terminal, the
/// progress line.
pub fn execute(plan: &Plan, argv: &[String], progress: bool) -> anyhow::Result<RunRecord> {
    let options = Options {
        progress,
        handle_signals: true,
        command: argv.to_vec(),
        ..Default::default()
    };
    volley::run::execute(plan, &options, &mut []).context("the run failed")
}

/// Runs `plan` (`repeat` times when more than one), prints what a user reads and writes the
/// outputs; returns the exit code.
pub fn run(
    plan: &Plan,
    argv: &[String],
    outputs: &Outputs,
    repeat: u32,
    quiet: bool,
) -> anyhow::Result<u8> {
    if repeat > 1 {
        return super::repeat::run(&plan.name, &outputs.out, repeat, quiet, || {
            execute(plan, argv, !quiet)
        });
    }
    let record = execute(plan, argv, !quiet)?;
    if !quiet {
        print!("{}", volley::report::text::render(&record));
    }
    let written = volley::run::write_outputs(&record, outputs)?;
    if !quiet {
        if let Some(path) = &written.json {
            eprintln!("record written to {}", path.display());
        }
        super::print_results(&written.files);
    }
    Ok(super::finish_run(&record, quiet))
}

/// The results folder of `out` for a demo-style caller that prints the summary itself.
pub fn outputs(out: &Path) -> Outputs {
    Outputs {
        json: None,
        out: out.to_path_buf(),
    }
}

/// One line that says what is about to happen.
pub fn banner(plan: &Plan) -> String {
    let what = match &plan.quick {
        Some(q) => format!("{} {}", q.method, redact_url_password(&q.url)),
        None => format!(
            "plan {} against {}",
            plan.source
                .as_ref()
                .map_or_else(|| plan.name.clone(), |p| p.display().to_string()),
            redact_url_password(&plan.target.base_url)
        ),
    };
    let scenarios: Vec<String> = plan
        .scenarios
        .iter()
        .map(|sc| {
            let load = volley::run::scenario_load(plan, sc);
            if plan.quick.is_none() {
                return volley::report::load::scenario_line(
                    &sc.name,
                    &volley::report::load::describe_load(&load),
                    sc.start_after.as_secs_f64(),
                );
            }
            // Quick mode says it as its reports do: "closed model, 4 connections × 16 streams (64
            // in flight), 10.0s", "open model, 1,000.0 req/s, at most 200 in flight, 10.0s".
            let shape = volley::report::load::quick_shape(
                load.model,
                load.connections.unwrap_or(0),
                plan.target.connect.streams,
                load.peak_rate_per_sec.unwrap_or(0.0),
                load.max_vus.unwrap_or(0),
            );
            let length = match (load.duration_s, load.iterations) {
                (Some(d), _) => volley::units::seconds(d),
                (None, n) => format!("{} requests", volley::units::thousands(n.unwrap_or(0))),
            };
            format!("{shape}, {length}")
        })
        .collect();
    let warmup = if plan.warmup.is_zero() {
        String::new()
    } else {
        format!(
            ", after {} warm-up",
            humantime::format_duration(plan.warmup)
        )
    };
    let share = plan.share.as_ref().map_or_else(String::new, |s| {
        format!("\n{}", super::quick::share_line(s))
    });
    format!(
        "volley: {what} — {}{warmup}, {} thread(s){share}",
        scenarios.join("; "),
        plan.threads
    )
}
