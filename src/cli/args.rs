//! Argument definitions (clap derive).

use std::path::PathBuf;
use std::time::Duration;

use super::command_args::{CompareArgs, DemoArgs, ReportArgs, ServeArgs};
use super::proto_args::{ConnectArgs, GrpcArgs};
use clap::{Args, Parser, Subcommand};
use volley::findmax::run::{MAX_VALIDATION_STEPS, VALIDATION_STEPS};
pub use volley::plan::flags::{parse_duration, parse_rate, parse_set, parse_time_scale};
use volley::record::model::LoadModel;

/// volley — load testing and benchmarking for HTTP services, with honest numbers.
///
/// Quick mode: `volley URL [OPTIONS]`. Closed model by default (-c connections, each sending its
/// next request when the previous response is complete); `--rate` switches to the open model
/// (requests fall due on a fixed schedule; latency is measured from when each was due).
#[derive(Debug, Parser)]
#[command(
    name = "volley",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "Exit codes: 0 ok; 1 every request failed or the run could not be done; \
                  2 invalid input; 99 a threshold failed (or ended the run: abort_on_fail); \
                  130 interrupted (record still written).\n\n\
                  Documentation (in the source tree, README.md first): docs/outputs.md (results, \
                  run.json, live metrics, verify), docs/plans.md (run, check), docs/reports.md \
                  (report, compare), docs/find-max.md, docs/suites.md (suite, --watch), \
                  docs/target.md (serve), docs/flags.md (which command takes which flag), docs/protocols.md, docs/distributed.md (merge, \
                  coordinate, k8s), docs/signals.md, docs/measurement.md (every figure), docs/architecture.md, \
                  docs/benchmarks.md."
)]
pub struct Cli {
    /// A subcommand instead of quick mode.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Quick-mode options.
    #[command(flatten)]
    pub quick: QuickArgs,
    /// Colour in terminal output: auto (only into a terminal, and not when NO_COLOR is set),
    /// always or never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto",
          value_parser = ["auto", "always", "never"], help_heading = "Terminal")]
    pub color: String,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
// Parsed once per process; boxing the larger arguments would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Run the built-in target server.
    Serve(ServeArgs),
    /// Start the built-in target, run a closed and an open test against it, write the reports.
    Demo(DemoArgs),
    /// Run a test plan (TOML): scenarios, load profiles, steps, checks, thresholds.
    Run(RunArgs),
    /// Validate a plan and print one rendered example request per step; sends nothing.
    Check(CheckArgs),
    /// Search for the highest load whose steady state meets an SLO.
    #[command(name = "find-max")]
    FindMax(Box<FindMaxArgs>),
    /// Render a report (Markdown, HTML or text) from a run's or a suite's record alone.
    Report(ReportArgs),
    /// Compare runs (or folders of repeated runs): a column per run, the change against the
    /// first, and whether it is more than noise.
    Compare(CompareArgs),
    /// Run one test against several targets, one after the other (start, health check, reset,
    /// smoke gate, runs, stop), then compare them.
    Suite(SuiteArgs),
    /// Write a commented starter plan for a URL or a curl command line.
    New(super::new::NewArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(super::completions::CompletionsArgs),
    /// Print the manual page (roff), or write one per subcommand into a folder.
    Man(super::completions::ManArgs),
    /// Merge the records of the shares of one test (`--segment i/N` runs) into one, exactly.
    Merge(super::distributed::MergeArgs),
    /// Coordinate a distributed test: wait for N generators (`run --join`), start them
    /// together, follow and judge the whole test live, merge their records.
    Coordinate(super::coordinate::CoordinateArgs),
    /// Print Kubernetes manifests that run a plan on N generators (an Indexed Job).
    #[command(name = "k8s")]
    K8s(super::distributed::K8sArgs),
    /// Check that records hold their invariants: counts add up, every rate is its count over
    /// its own window, percentiles are ordered, the verdict agrees with the figures.
    Verify(super::verify::VerifyArgs),
    /// A/B until decided: short runs of A and B by turns until the chosen metrics are decided
    /// (faster, slower or equivalent; a sequential test), then their comparison.
    #[command(mut_args(volley::suite::ab::ab_arg))]
    Ab(Box<super::ab::AbArgs>),
}

/// `volley suite`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 every target ran and met its thresholds; 1 one or more \
                        failed a step (start, health check, reset, smoke or run; the report says \
                        why); 2 invalid suite file or plan; 99 a target's thresholds failed or \
                        ended its run (abort_on_fail); 130 interrupted (what was measured is \
                        still reported)."
)]
pub struct SuiteArgs {
    /// The suite file (TOML).
    pub suite: PathBuf,
    /// Multiply every load-profile duration of the plans (smoke included) by this factor.
    #[arg(long, default_value_t = 1.0, value_parser = parse_time_scale)]
    pub time_scale: f64,
    /// Override a value of every target's plan: `NAME=value` or `vars.NAME=value` (a plan
    /// variable, over the target's own `vars`), `target.timeout=5s`, `target.protocol=http2`,
    /// `target.tls.insecure=true`, `target.tls.sni=NAME` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_set)]
    pub sets: Vec<(volley::plan::set_key::SetKey, String)>,
    /// Tag every run (repeatable), e.g. --tag testid=pr-123; adds to the suite's `[tags]`.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = volley::plan::flags::parse_tag)]
    pub tags: Vec<(String, String)>,
    /// Run only this target (repeatable, or a comma-separated list).
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Parent folder of the suite's results folder (<out>/<suite>-<UTC time>/).
    #[arg(long, value_name = "DIR", default_value = "volley-results")]
    pub out: PathBuf,
    /// No progress lines and no report on stdout (errors, and each target that did not run and
    /// why, still go to stderr).
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

/// `volley run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The plan file.
    pub plan: PathBuf,
    /// Override a value: `NAME=value` or `vars.NAME=value` (a plan variable),
    /// `target.base_url=URL`, `target.timeout=5s`, `target.protocol=http2`,
    /// `target.tls.insecure=true`, `target.tls.sni=NAME` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_set)]
    pub sets: Vec<(volley::plan::set_key::SetKey, String)>,
    /// Tag the run, `KEY=VALUE` (repeatable): in run.json, the reports and every exported
    /// series' labels (with `run_id`), e.g. --tag testid=pr-123. Adds to the plan's `[tags]`.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = volley::plan::flags::parse_tag)]
    pub tags: Vec<(String, String)>,
    /// A header whose value is secret (repeatable): redacted in the summary, run.json and the
    /// reports, as Authorization, Proxy-Authorization, Cookie and Set-Cookie always are.
    #[arg(long = "secret-header", value_name = "NAME")]
    pub secret_headers: Vec<String>,
    /// Multiply every profile duration (stages, phases, durations) by this factor, e.g. 0.1.
    #[arg(long, default_value_t = 1.0, value_parser = parse_time_scale)]
    pub time_scale: f64,
    /// Seed of the Poisson arrivals (`arrivals = "poisson"`), over the plan's `seed`.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Worker threads at most (default: the plan's, or one per core). A run starts only those its
    /// scenarios use: one per VU at most, and for an open-model scenario one per 10 000 req/s.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write the run record (run.json) to this path too.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Parent folder of the results folder (<out>/<name>-<UTC time>/).
    #[arg(long, value_name = "DIR", default_value = "volley-results")]
    pub out: PathBuf,
    /// Run only share i of N (0-based: 0/3, 1/3, 2/3) of the test, so that N generators
    /// together send exactly the whole; merge their records with `volley merge`.
    #[arg(long, value_name = "i/N")]
    pub segment: Option<volley::schedule::Segment>,
    /// Largest data file (`[data.NAME]`) read, e.g. 2GiB (default 1GiB, at most 4GiB): a larger
    /// file, or one that is not a regular file, is refused before the run.
    #[arg(long, value_name = "SIZE", value_parser = volley::proto::conn::parse_size)]
    pub max_data_size: Option<u64>,
    /// Live metrics for Prometheus.
    #[command(flatten)]
    pub export: super::export::ExportArgs,
    /// Success statuses, groups and buckets.
    #[command(flatten)]
    pub results: ResultArgs,
    /// Run the plan N times, back to back (repeat-1/ … repeat-N/), for `volley compare`.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// With --repeat N: stop once FIGURE's 95 % interval over the runs is within SHARE of it,
    /// e.g. p50=1%, p50{step=pay}=1% (repeatable; as --precision); at least 3 runs, at most N.
    #[arg(long, value_name = "FIGURE=SHARE", value_parser = volley::plan::flags::parse_precision)]
    pub repeat_until: Vec<volley::record::model::PrecisionGoal>,
    /// One generator of a distributed test.
    #[command(flatten)]
    pub join: super::coordinate::JoinArgs,
    /// No progress line and no summary.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Generator tuning: the open model's send grid.
    #[command(flatten)]
    pub tuning: super::tuning::TuningArgs,
    /// Watching the target.
    #[command(flatten)]
    pub watch: super::watch_args::WatchArgs,
    /// The one-line progress instead of the live terminal view (which is shown when stderr is
    /// a terminal, CI is not set and the run lasts 3 s or more; `q` or Ctrl-C stops it).
    #[arg(long)]
    pub no_tui: bool,
}

/// `volley find-max`.
#[derive(Debug, Args)]
pub struct FindMaxArgs {
    /// A URL (searched like quick mode) or a plan file with one scenario.
    pub target: String,
    /// The service-level objective, e.g. 'p99<50ms,errors<1%'.
    #[arg(long)]
    pub slo: String,
    /// Vary the arrival rate (open, the default) or the number of VUs (closed).
    #[arg(long, value_parser = volley::plan::flags::model_parser(), default_value = "open")]
    pub model: LoadModel,
    /// Stop searching after this long.
    #[arg(long, value_parser = parse_duration, default_value = "3m")]
    pub budget: Duration,
    /// Measured length of each step.
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    pub step: Duration,
    /// Warm-up of each step, discarded.
    #[arg(long, value_parser = parse_duration, default_value = "1s")]
    pub warmup: Duration,
    /// First level (default 50 req/s, or 1 VU).
    #[arg(long)]
    pub start: Option<f64>,
    /// Highest level tried (default 1 000 000 req/s, or 10 000 VUs).
    #[arg(long)]
    pub max: Option<f64>,
    /// Open model: most requests in flight.
    #[arg(short = 'c', long = "max-in-flight", default_value_t = 1000)]
    pub max_in_flight: u32,
    /// Bisect until the bracket is within this share of the level that held.
    #[arg(long, value_name = "SHARE", value_parser = volley::plan::flags::parse_share, default_value = "1%")]
    pub resolution: f64,
    /// Length of the validation run at the level found, in steps (0: none).
    #[arg(long, value_name = "N", default_value_t = VALIDATION_STEPS, value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_VALIDATION_STEPS)))]
    pub validation_steps: u32,
    /// HTTP method (URL targets).
    #[arg(short = 'm', long, default_value = "GET")]
    pub method: String,
    /// Request header (URL targets, repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// A header whose value is secret (repeatable): redacted in the summary, run.json and the
    /// reports, as Authorization, Proxy-Authorization, Cookie and Set-Cookie always are.
    #[arg(long = "secret-header", value_name = "NAME")]
    pub secret_headers: Vec<String>,
    /// Request body (URL targets).
    #[arg(long)]
    pub body: Option<String>,
    /// Per-request timeout.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub timeout: Duration,
    /// Plan overrides, as for `run`.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_set)]
    pub sets: Vec<(volley::plan::set_key::SetKey, String)>,
    /// Worker threads at most (default: one per core); each step starts only those it uses.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write the record (the best step, with every step under `find_max`) to this path too.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Parent folder of the results folder.
    #[arg(long, value_name = "DIR", default_value = "volley-results")]
    pub out: PathBuf,
    /// Only the result: the maximum on one line (a search that ends badly says why on stderr).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Success statuses, groups and buckets.
    #[command(flatten)]
    pub results: ResultArgs,
    /// Protocol, TLS and connections (URL targets).
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// gRPC (URL targets).
    #[command(flatten)]
    pub grpc: GrpcArgs,
}

/// `volley check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The plan file.
    pub plan: PathBuf,
    /// Overrides, as for `run`.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_set)]
    pub sets: Vec<(volley::plan::set_key::SetKey, String)>,
    /// As for `run`: its value is shown as [redacted] in the rendered requests.
    #[arg(long = "secret-header", value_name = "NAME")]
    pub secret_headers: Vec<String>,
    /// As for `run`.
    #[arg(long, default_value_t = 1.0, value_parser = parse_time_scale)]
    pub time_scale: f64,
    /// Show share i of N of the test (as `run --segment i/N` would run it).
    #[arg(long, value_name = "i/N")]
    pub segment: Option<volley::schedule::Segment>,
    /// Largest data file (`[data.NAME]`) read, e.g. 2GiB (default 1GiB, at most 4GiB): a larger
    /// file, or one that is not a regular file, is refused before the run.
    #[arg(long, value_name = "SIZE", value_parser = volley::proto::conn::parse_size)]
    pub max_data_size: Option<u64>,
    /// As for `run`: checked against the plan, and the precision goals shown.
    #[command(flatten)]
    pub results: ResultArgs,
}

/// Quick mode: one URL, flags like oha, wrk and hey.
#[derive(Debug, Clone, Args)]
pub struct QuickArgs {
    /// Target URL, e.g. http://127.0.0.1:8080/
    #[arg(required = true)]
    pub url: Option<String>,
    /// Connections (closed model; default 50) or the most requests in flight (open model;
    /// default 1000).
    #[arg(short = 'c', long = "connections", value_name = "N")]
    pub connections: Option<u32>,
    /// Run for this long after warm-up, e.g. 10s, 1m30s (default 10s).
    #[arg(short = 'd', long, value_parser = parse_duration, conflicts_with = "requests")]
    pub duration: Option<Duration>,
    /// Stop after exactly this many requests.
    #[arg(short = 'n', long, value_name = "N")]
    pub requests: Option<u64>,
    /// Open model: requests per second, e.g. 2000, 2000/s, 600/m.
    #[arg(long, value_parser = parse_rate, allow_negative_numbers = true)]
    pub rate: Option<f64>,
    /// Open model: arrivals evenly spaced (uniform) or a Poisson process of the rate.
    #[arg(long, value_parser = volley::plan::flags::arrivals_parser())]
    pub arrivals: Option<volley::schedule::ArrivalProcess>,
    /// Seed of the Poisson arrivals (default: drawn, and recorded to run it again).
    #[arg(long, value_name = "N", requires = "arrivals")]
    pub seed: Option<u64>,
    /// HTTP method.
    #[arg(short = 'm', long, default_value = "GET")]
    pub method: String,
    /// Request header `Name: value` (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// A header whose value is secret (repeatable): redacted in the summary, run.json and the
    /// reports, as Authorization, Proxy-Authorization, Cookie and Set-Cookie always are.
    #[arg(long = "secret-header", value_name = "NAME")]
    pub secret_headers: Vec<String>,
    /// Tag the run, `KEY=VALUE` (repeatable): in run.json, the reports and every exported
    /// series' labels (with `run_id`), e.g. --tag testid=pr-123.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = volley::plan::flags::parse_tag)]
    pub tags: Vec<(String, String)>,
    /// Request body.
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Request body read from a file.
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// Read the response as a Server-Sent Events stream: time to first message, gaps, streams/s.
    #[arg(long)]
    pub sse: bool,
    /// Read the stream as this LLM API's chunks (openai): tokens, TPOT; implies --sse.
    #[arg(long, value_name = "API")]
    pub llm: Option<String>,
    /// Per-request timeout, connect included, e.g. 5s, 500ms.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub timeout: Duration,
    /// Send load for this long first and discard its results, e.g. 2s.
    #[arg(long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,
    /// Also write the run record (run.json) to this path.
    #[arg(long, value_name = "PATH", conflicts_with = "repeat")]
    pub json: Option<PathBuf>,
    /// Parent folder of the results folder (<out>/<name>-<UTC time>/ with run.json,
    /// summary.txt, report.md, report.html).
    #[arg(long, value_name = "DIR", default_value = "volley-results")]
    pub out: PathBuf,
    /// Run the same test N times, back to back (repeat-1/ … repeat-N/ in the results folder),
    /// so that `volley compare` can tell a real difference from noise.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// With --repeat N: stop once FIGURE's 95 % interval over the runs is within SHARE of it,
    /// e.g. p50=1% (repeatable; rps, mean, p50, p90, p95, p99, p99.9); at least 3 runs, at most N.
    #[arg(long, value_name = "FIGURE=SHARE", value_parser = volley::plan::flags::parse_precision)]
    pub repeat_until: Vec<volley::record::model::PrecisionGoal>,
    /// No progress line and no summary (errors still go to stderr).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// The one-line progress instead of the live terminal view (which is shown when stderr is
    /// a terminal, CI is not set and the run lasts 3 s or more; `q` or Ctrl-C stops it).
    #[arg(long)]
    pub no_tui: bool,
    /// Worker threads at most (default: one per core). A run starts only those it uses: one per
    /// connection at most, and in the open model one per 10 000 req/s.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Protocol, TLS and connections.
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// gRPC.
    #[command(flatten)]
    pub grpc: GrpcArgs,
    /// Live metrics for Prometheus.
    #[command(flatten)]
    pub export: super::export::ExportArgs,
    /// Largest response head accepted (status line and headers), e.g. 64KiB, 1MiB; a larger
    /// one fails as header_too_large. 1KiB to 16MiB (default 64KiB).
    #[arg(
        long,
        value_name = "SIZE",
        value_parser = volley::proto::conn::parse_size,
        help_heading = "Response limits"
    )]
    pub max_header_size: Option<u64>,
    /// Largest response body accepted, e.g. 10MB, 64MiB; a larger one fails as body_too_large
    /// (default: no limit; bodies are counted and discarded, never held in memory).
    #[arg(
        long,
        value_name = "SIZE",
        value_parser = volley::proto::conn::parse_size,
        help_heading = "Response limits"
    )]
    pub max_body_size: Option<u64>,
    /// Run only share i of N (0-based: 0/3, 1/3, 2/3) of the test, so that N generators
    /// together send exactly the whole; merge their records with `volley merge`.
    #[arg(long, value_name = "i/N")]
    pub segment: Option<volley::schedule::Segment>,
    /// Success statuses, groups and buckets.
    #[command(flatten)]
    pub results: ResultArgs,
    /// Generator tuning: the open model's send grid.
    #[command(flatten)]
    pub tuning: super::tuning::TuningArgs,
    /// Watching the target.
    #[command(flatten)]
    pub watch: super::watch_args::WatchArgs,
    /// One generator of a distributed test.
    #[command(flatten)]
    pub join: super::coordinate::JoinArgs,
}

/// What counts as a success and how results are cut: quick mode, `run`, `check` and `find-max`.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Results")]
pub struct ResultArgs {
    /// Statuses that are a success, e.g. 2xx,422 (k6's expected statuses): a check; no error.
    /// Plans: every HTTP step without a `checks.status` of its own.
    #[arg(long, value_name = "LIST", value_parser = volley::plan::flags::parse_statuses)]
    pub expect_status: Option<volley::plan::flags::Statuses>,
    /// Group responses by header:NAME, json:$.path or status (repeatable): figures per value.
    #[arg(long = "group-by", value_name = "SELECTOR")]
    pub group_by: Vec<String>,
    /// Latency buckets' upper bounds, e.g. 25ms,50ms,100ms,500ms (one more above the last;
    /// default 1-2-5). Plans: over `[report] buckets`.
    #[arg(long, value_name = "BOUNDS", value_parser = volley::plan::flags::parse_buckets)]
    pub buckets: Option<volley::plan::flags::Buckets>,
    /// Run until FIGURE's 95 % interval is within SHARE of it, e.g. p99=2% (repeatable; rps,
    /// mean, p50…p99.9; a plan's part: p99{step=NAME}=2%); -d (find-max: each --step) is the
    /// most it runs.
    #[arg(long, value_name = "FIGURE=SHARE", value_parser = volley::plan::flags::parse_precision)]
    pub precision: Vec<volley::record::model::PrecisionGoal>,
}

impl ResultArgs {
    /// Into quick mode's input.
    pub fn apply_quick(self, i: &mut volley::plan::RunInput) {
        i.expect_status = self.expect_status.map_or_else(Vec::new, |s| s.0);
        (i.group_by, i.precision) = (self.group_by, self.precision);
        i.latency_buckets = self.buckets.map_or_else(Vec::new, |b| b.0);
    }

    /// Into the plan reader's options.
    pub fn apply(self, o: &mut volley::plan::read::ReadOptions) {
        o.expect_status = self.expect_status.map_or_else(Vec::new, |s| s.0);
        o.group_by = self.group_by;
        o.latency_buckets = self.buckets.map_or_else(Vec::new, |b| b.0);
        o.precision = self.precision;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn subcommands_and_quick_mode_parse() {
        let cli = Cli::try_parse_from(["volley", "serve", "--port", "0"]).unwrap();
        match &cli.command {
            // Loopback unless told otherwise: the target is not for the network by default.
            Some(Command::Serve(s)) => assert_eq!(s.bind, std::net::Ipv4Addr::LOCALHOST),
            other => panic!("{other:?}"),
        }
        let cli = Cli::try_parse_from(["volley", "http://127.0.0.1:1/", "-c", "4"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.quick.connections, Some(4));
        assert!(Cli::try_parse_from(["volley"]).is_err());
        assert!(Cli::try_parse_from(["volley", "http://x/", "-d", "1s", "-n", "5"]).is_err());
        assert!(Cli::try_parse_from(["volley", "http://x/", "--repeat", "0"]).is_err());
        assert!(
            Cli::try_parse_from(["volley", "http://x/", "--repeat", "3", "--json", "a"]).is_err()
        );
        let cli = Cli::try_parse_from(["volley", "compare", "a", "b", "--labels", "x,y"]).unwrap();
        match cli.command {
            Some(Command::Compare(c)) => assert_eq!(c.labels, ["x", "y"]),
            other => panic!("{other:?}"),
        }
        let cli = Cli::try_parse_from(["volley", "suite", "s.toml", "--time-scale", "0.1", "-q"])
            .unwrap();
        match cli.command {
            Some(Command::Suite(s)) => assert!(s.quiet && s.time_scale == 0.1),
            other => panic!("{other:?}"),
        }
        let cli = Cli::try_parse_from(["volley", "report", "run.json", "-f", "html"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Report(_))));
        assert!(Cli::try_parse_from(["volley", "report", "run.json", "-f", "pdf"]).is_err());
    }
}
