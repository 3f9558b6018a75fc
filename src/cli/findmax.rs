//! `volley find-max TARGET --slo …`: the maximum sustainable throughput of a URL or a
//! one-scenario plan.

use std::path::Path;
use std::time::{Duration, Instant};

use volley::engine::{self, RunOptions};
use volley::findmax::{self, FindMax, Judgement, SearchConfig, Step};
use volley::plan::load::{LoadOptions, load};
use volley::plan::{Iterations, Plan, Profile, RunInput};
use volley::record::RunRecord;
use volley::schedule::Ramp;

use super::args::FindMaxArgs;

/// Time a step costs beyond its warm-up and measured part (start, drain, record), estimated.
const STEP_OVERHEAD: Duration = Duration::from_millis(400);

/// Runs the search; returns the exit code.
pub fn run(a: FindMaxArgs, argv: &[String]) -> anyhow::Result<u8> {
    let slo = findmax::slo::parse(&a.slo).map_err(|why| volley::Error::Invalid {
        what: "--slo".into(),
        why,
    })?;
    let open = a.model == "open";
    let base = base_plan(&a)?;
    if base.scenarios.len() != 1 {
        return Err(volley::Error::Invalid {
            what: "plan".into(),
            why: format!(
                "find-max needs a plan with one scenario; this one has {}",
                base.scenarios.len()
            ),
        }
        .into());
    }
    let config = SearchConfig {
        start: a.start.unwrap_or(if open { 50.0 } else { 1.0 }),
        growth: 2.0,
        resolution: 0.03,
        integer: !open,
        budget: a.budget,
        step_time: a.warmup + a.step + STEP_OVERHEAD,
        max_level: a.max.unwrap_or(if open { 1e6 } else { 10_000.0 }),
    };
    if !a.quiet {
        eprintln!(
            "volley find-max: {} — {} model, SLO {}, steps of {} + {} warm-up, budget {}",
            base.quick
                .as_ref()
                .map_or_else(|| base.target.base_url.clone(), |q| q.url.clone()),
            a.model,
            a.slo,
            humantime::format_duration(a.step),
            humantime::format_duration(a.warmup),
            humantime::format_duration(a.budget)
        );
    }
    let started = Instant::now();
    let mut best: Option<(f64, RunRecord)> = None;
    let mut first: Option<RunRecord> = None;
    let mut interrupted = false;
    let mut failure: Option<anyhow::Error> = None;
    let outcome = findmax::search(&config, |level| {
        if interrupted || failure.is_some() {
            return stopped_step(level, "not run: the search was stopped");
        }
        let plan = at_level(&base, level, open, &a);
        let record = match engine::run(
            &plan,
            &RunOptions {
                progress: false,
                handle_signals: true,
            },
        ) {
            Ok(outcome) => volley::analysis::build_record(&plan, &outcome, argv),
            Err(e) => {
                failure = Some(e.into());
                return stopped_step(level, "the run failed");
            }
        };
        let judgement = if record.interrupted.is_some() {
            interrupted = true;
            Judgement::Broke("interrupted".into())
        } else {
            findmax::slo::judge(&record, &slo, open.then_some(level))
        };
        let s = &record.summary;
        let step = Step {
            level,
            rps: s.rps,
            p50_ms: s.latency_ms.p50,
            p99_ms: s.latency_ms.p99,
            error_rate: if s.requests == 0 {
                0.0
            } else {
                s.errors as f64 / s.requests as f64
            },
            held: judgement == Judgement::Held,
            reason: match &judgement {
                Judgement::Held => String::new(),
                Judgement::Broke(why) | Judgement::GeneratorLimited(why) => why.clone(),
            },
            generator_limited: matches!(judgement, Judgement::GeneratorLimited(_)),
        };
        if !a.quiet {
            eprintln!(
                "  {} {:>10} → {:>10.1} req/s, p50 {:>8} ms, p99 {:>8} ms, errors {:.2}%{}",
                if step.held { "✓" } else { "✗" },
                level_text(level, open),
                step.rps,
                volley::report::format::ms(step.p50_ms),
                volley::report::format::ms(step.p99_ms),
                step.error_rate * 100.0,
                if step.reason.is_empty() {
                    String::new()
                } else {
                    format!("  ({})", step.reason)
                }
            );
        }
        if step.held && best.as_ref().is_none_or(|(l, _)| level > *l) {
            best = Some((level, record));
        } else if first.is_none() {
            first = Some(record);
        }
        step
    });
    if let Some(e) = failure {
        return Err(e);
    }
    let summary = FindMax::from_outcome(&a.model, &a.slo, &outcome, started.elapsed());
    let Some(mut record) = best.map(|(_, r)| r).or(first) else {
        anyhow::bail!(
            "no step could run within the budget of {}",
            humantime::format_duration(a.budget)
        );
    };
    record.name = format!("{}-find-max", record.name);
    record.find_max = Some(summary.clone());
    if interrupted {
        record.interrupted.get_or_insert_with(|| "SIGINT".into());
    }
    if !a.quiet {
        print!("{}", volley::report::text::render(&record));
    }
    if let Some(path) = &a.json {
        volley::record::write_record(path, &record)?;
    }
    let files = volley::report::write_results(&a.out, &record)?;
    if !a.quiet {
        super::print_results(&files);
    }
    Ok(if interrupted {
        super::EXIT_INTERRUPTED
    } else if summary.max_sustainable_rps.is_none() || summary.generator_limited {
        super::EXIT_FAILED
    } else {
        super::EXIT_OK
    })
}

fn level_text(level: f64, open: bool) -> String {
    if open {
        format!("{level:.1}/s")
    } else {
        format!("{level:.0} VUs")
    }
}

fn stopped_step(level: f64, why: &str) -> Step {
    Step {
        level,
        rps: 0.0,
        p50_ms: None,
        p99_ms: None,
        error_rate: 0.0,
        held: false,
        reason: why.into(),
        generator_limited: true,
    }
}

/// The test the search varies: a URL as quick mode would run it, or a plan file.
fn base_plan(a: &FindMaxArgs) -> anyhow::Result<Plan> {
    let target = &a.target;
    if Path::new(target).is_file() {
        return Ok(load(
            Path::new(target),
            &LoadOptions {
                sets: a.sets.clone(),
                time_scale: 1.0,
                threads: a.threads,
            },
        )?);
    }
    let mut input = RunInput::new(target.clone());
    input.name = "find-max".into();
    input.method = a.method.clone();
    input.headers = a.headers.clone();
    input.body = a.body.clone().unwrap_or_default().into_bytes();
    input.timeout = a.timeout;
    input.threads = a.threads;
    input.duration = Some(a.step);
    if a.model == "open" {
        input.rate_per_sec = Some(1.0);
    }
    Ok(input.validate()?)
}

/// The base plan at one load level: a constant rate (open) or VU count (closed) for one step.
fn at_level(base: &Plan, level: f64, open: bool, a: &FindMaxArgs) -> Plan {
    let mut plan = base.clone();
    plan.warmup = a.warmup;
    let sc = &mut plan.scenarios[0];
    sc.start_after = Duration::ZERO;
    sc.phases.clear();
    sc.profile = if open {
        Profile::Arrival {
            ramp: Ramp::constant(level, a.warmup + a.step),
            max_vus: a.max_in_flight,
            limit: None,
        }
    } else {
        Profile::Vus {
            ramp: Ramp::constant(level, a.warmup + a.step),
            iterations: Iterations::Unlimited,
            max_duration: None,
        }
    };
    let vus = sc.max_vus() as usize;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    plan.threads = a.threads.unwrap_or(cores).min(vus.max(1));
    plan
}
