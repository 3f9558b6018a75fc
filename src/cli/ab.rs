//! `volley ab A B [test flags]`: short runs A B A B … until the comparison is decided
//! (`volley::suite::ab`), then the comparison as `volley compare` writes it.

use std::path::PathBuf;
use std::time::Duration;

use volley::plan::Plan;

use super::args::{QuickArgs, parse_duration, parse_set};

/// `volley ab`: its own flags under a heading of their own, the test's flags, and B.
#[derive(Debug, clap::Args)]
pub struct AbArgs {
    /// A and B are variants of this plan, which is the test: of the test's flags only
    /// --threads, --send-grid and the Results flags act on it; any other is refused.
    #[arg(long, value_name = "PLAN", help_heading = AB)]
    pub plan: Option<PathBuf>,
    /// Metric to decide (repeatable, comma-separated): p50, p90, p95, p99, p99.9, mean,
    /// throughput, errors; with streams ttft, ttft-p99, gap-p99, tpot, rtt, goodput (default:
    /// throughput in the closed model, p50 in the open); `p50{step=pay}` decides one step of a
    /// plan's runs (also scenario=, phase=).
    #[arg(long = "metric", value_delimiter = ',', value_name = "METRIC", help_heading = AB)]
    pub decide: Vec<String>,
    /// Practical threshold, %: a change is decided beyond ±PCT, equivalence within.
    #[arg(long, value_name = "PCT", default_value_t = 2.0, help_heading = AB)]
    pub threshold: f64,
    /// Most runs per side: the horizon the sequence's α is spent over.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(3..=500), help_heading = AB)]
    pub max_runs: u32,
    /// Start no pair that would end after this long, e.g. 10m.
    #[arg(long, value_parser = parse_duration, help_heading = AB)]
    pub max_time: Option<Duration>,
    /// The test, as quick mode takes it; its URL is A.
    #[command(flatten)]
    pub quick: QuickArgs,
    /// B: as A, the other side.
    #[arg(value_name = "B", help_heading = None)]
    pub b: String,
    /// The flags given on the command line.
    #[arg(skip)]
    pub given: Vec<volley::plan::flags::GivenFlag>,
}

/// The help heading of `volley ab`'s own flags (else they take the test flags' last heading).
const AB: &str = "A/B until decided";

/// Runs the sequence (or replays two folders of runs); returns the exit code.
pub fn run(a: AbArgs, argv: &volley::redact::Argv) -> anyhow::Result<u8> {
    let sides = [a.quick.url.clone().unwrap_or_default(), a.b.clone()];
    let kind = volley::suite::ab::sides(&sides, a.plan.as_deref())?;
    volley::suite::ab::refuse_flags(&a.given, kind)?;
    let design = |open| volley::suite::ab::design(&a.decide, a.threshold, a.max_runs, open);
    let outcome = if kind.replays() {
        volley::suite::ab::replay(&sides.clone().map(PathBuf::from), design, &a.quick.out)?
    } else {
        let plans = [plan_of(&a, &sides[0])?, plan_of(&a, &sides[1])?];
        let (quiet, tuning) = (a.quick.quiet, a.quick.tuning);
        let execute = |plan: &Plan, outputs: &mut volley::run::Outputs| {
            super::runs::execute(plan, argv, volley::run::Shown::Nothing, tuning, outputs)
        };
        let say = |line: &str| {
            if !quiet {
                eprintln!("{line}");
            }
        };
        let budget = (a.quick.out.as_path(), a.max_time);
        let design = design(plans[0].model().has_open())?;
        volley::suite::ab::run(&plans, design, budget, execute, say)?
    };
    println!("{}", volley::suite::ab::comparison(&outcome, a.threshold)?);
    if let Some(written) = outcome.written() {
        println!("{written}");
    }
    // Decided or not, the sequence ran its course; a signal is the exit code's to say.
    Ok([super::EXIT_OK, super::EXIT_INTERRUPTED][usize::from(outcome.interrupted())])
}

/// The plan of one side: quick mode against URL `side`, or the plan with `side`'s overrides.
fn plan_of(a: &AbArgs, side: &str) -> anyhow::Result<Plan> {
    let Some(path) = &a.plan else {
        let mut quick = a.quick.clone();
        quick.url = Some(side.into());
        return Ok(super::quick::input_from(quick)?.validate()?.prepare()?);
    };
    let mut sets = Vec::new();
    for set in side.split(',').filter(|s| !s.trim().is_empty()) {
        sets.push(parse_set(set.trim()).map_err(|e| anyhow::anyhow!("{side}: {e}"))?);
    }
    let mut options = volley::plan::read::ReadOptions {
        sets,
        threads: a.quick.threads,
        ..Default::default()
    };
    a.quick.results.clone().apply(&mut options);
    Ok(volley::plan::read::read_file(path, &options)?.prepare()?)
}
