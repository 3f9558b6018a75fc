//! Quick mode: one URL from flags → one run → summary and record.

use std::io::IsTerminal;

use anyhow::Context;
use volley::engine::{self, RunOptions};
use volley::plan::{Plan, RunInput};
use volley::record::RunRecord;
use volley::redact::redact_url_password;

use super::args::QuickArgs;

/// Runs quick mode; returns the exit code.
pub fn run(args: QuickArgs, argv: &[String]) -> anyhow::Result<u8> {
    let quiet = args.quiet;
    let json = args.json.clone();
    let out = args.out.clone();
    let repeat = args.repeat;
    let spec = input_from(args)?.validate()?;
    if !quiet {
        eprintln!("{}", banner(&spec));
    }
    if repeat > 1 {
        return super::repeat::run(&spec, argv, &out, repeat, quiet);
    }
    let record = execute(&spec, argv, !quiet)?;
    if !quiet {
        print!("{}", volley::report::text::render(&record));
    }
    // The record first: it is what every report is made from.
    if let Some(path) = json {
        volley::record::write_record(&path, &record)?;
        if !quiet {
            eprintln!("record written to {}", path.display());
        }
    }
    let files = volley::report::write_results(&out, &record)?;
    if !quiet {
        super::print_results(&files);
    }
    Ok(super::finish_run(&record, quiet))
}

/// Runs a spec with signal handling and, when stderr is a terminal, a progress line.
pub fn execute(spec: &Plan, argv: &[String], show_progress: bool) -> anyhow::Result<RunRecord> {
    let options = RunOptions {
        progress: show_progress && std::io::stderr().is_terminal(),
        handle_signals: true,
    };
    let outcome = engine::run(spec, &options).context("the run failed")?;
    Ok(volley::analysis::build_record(spec, &outcome, argv))
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
            let load = volley::analysis::scenario_load(plan, sc);
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
                (Some(d), _) => volley::report::format::seconds(d),
                (None, n) => format!(
                    "{} requests",
                    volley::report::format::thousands(n.unwrap_or(0))
                ),
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
    let share = plan
        .share
        .as_ref()
        .map_or_else(String::new, |s| format!("\n{}", share_line(s)));
    format!(
        "volley: {what} — {}{warmup}, {} thread(s){share}",
        scenarios.join("; "),
        plan.threads
    )
}

/// What a share of a test is, in words.
pub fn share_line(s: &volley::plan::segment::PlanShare) -> String {
    format!(
        "share {} of {} shares (--segment {}; the figures above are this share's), test {}",
        s.segment.index(),
        s.segment.count(),
        s.segment,
        s.plan_hash
    )
}

fn input_from(a: QuickArgs) -> anyhow::Result<RunInput> {
    let body = match (a.body, a.body_file) {
        (Some(text), _) => text.into_bytes(),
        (None, Some(path)) => std::fs::read(&path).map_err(|e| volley::Error::Invalid {
            what: "--body-file".into(),
            why: format!("cannot read {}: {e}", path.display()),
        })?,
        (None, None) => Vec::new(),
    };
    let mut input = RunInput::new(a.url.unwrap_or_default());
    input.method = a.method;
    input.headers = a.headers;
    input.secret_headers = a.secret_headers;
    input.body = body;
    input.concurrency = a.connections;
    input.rate_per_sec = a.rate;
    input.duration = a.duration;
    input.requests = a.requests;
    input.warmup = a.warmup.unwrap_or_default();
    input.timeout = a.timeout;
    input.connect = a.connect.options();
    input.grpc = a.grpc.input();
    input.threads = a.threads;
    input.max_header_bytes = a.max_header_size;
    input.max_body_bytes = a.max_body_size;
    input.segment = a.segment;
    Ok(input)
}
