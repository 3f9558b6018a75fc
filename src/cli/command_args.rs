//! Argument definitions (clap derive) of the commands that read records or serve:
//! `volley serve`, `demo`, `report` and `compare`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::args::parse_duration;

/// `volley serve`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("secure").args(["tls", "http3"]).multiple(true)))]
pub struct ServeArgs {
    /// Port to listen on (0 = any free port).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Capacity mode: serve at most this many requests at once (the rest queue).
    #[arg(long, value_name = "WORKERS", requires = "service_time")]
    pub capacity: Option<usize>,
    /// Capacity mode: how long each request holds a worker, e.g. 10ms.
    #[arg(long, value_parser = parse_duration, requires = "capacity")]
    pub service_time: Option<Duration>,
    /// Server threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Serve TLS only, with a certificate signed by a throw-away CA (written to --ca-file).
    #[arg(long)]
    pub tls: bool,
    /// With --tls or --http3: where to write the CA certificate (PEM) for clients' --cacert.
    #[arg(
        long,
        value_name = "PATH",
        default_value = "volley-ca.pem",
        requires = "secure"
    )]
    pub ca_file: PathBuf,
    /// Also serve HTTP/3 on the UDP port of the same number (Alt-Svc advertises it); implies --tls.
    #[arg(long)]
    pub http3: bool,
    /// Fault: close the listener after this many requests have been answered (new connections
    /// are refused, open ones closed), as when a server goes away mid-run.
    #[arg(long, value_name = "N")]
    pub close_after_requests: Option<u64>,
    /// Fault: close the listener this long after start, e.g. 5s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub close_after: Option<Duration>,
    /// Fault: every route but /metrics and /stats freezes for this long at the start of every
    /// --stall-every of the target's clock, e.g. 500ms (requests and responses are held).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "stall_every")]
    pub stall: Option<Duration>,
    /// Fault: the period of --stall, e.g. 5s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "stall")]
    pub stall_every: Option<Duration>,
    /// Answer as N backends behind a round-robin front (response header X-Backend: b1..bN).
    #[arg(long, value_name = "N")]
    pub backends: Option<usize>,
    /// With --backends: each backend's delay, comma-separated (one for all, or one per backend),
    /// e.g. 1ms,5ms,20ms.
    #[arg(long, value_name = "D,…", value_delimiter = ',', value_parser = parse_duration, requires = "backends")]
    pub backend_delay: Vec<Duration>,
}

/// `volley demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Parent folder of the results folders.
    #[arg(long, default_value = "volley-results")]
    pub out: PathBuf,
    /// Length of each of the two runs, e.g. 8s, 1m.
    #[arg(long, value_parser = parse_duration, default_value = "8s")]
    pub duration: Duration,
}

/// `volley report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run record (run.json), or a results folder holding one; or a suite's record
    /// (suite.json), or its folder.
    #[arg(value_name = "RUN.json")]
    pub record: PathBuf,
    /// Output format: md, html or txt.
    #[arg(short = 'f', long, value_parser = volley::report::Format::parser(), default_value = "txt")]
    pub format: volley::report::Format,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Cut the latency buckets again at these upper bounds, e.g. 25ms,50ms,100ms,500ms (from
    /// the record's histogram; one more above the last).
    #[arg(long, value_name = "BOUNDS", value_parser = volley::plan::flags::parse_buckets)]
    pub buckets: Option<volley::plan::flags::Buckets>,
}

/// `volley compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Run records (run.json) or folders; a folder of repeated runs (repeat-*/run.json) is one
    /// variant measured several times. The first is the baseline.
    #[arg(value_name = "RUN", required_unless_present = "baseline", num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// The baseline: a stored run record or folder (e.g. a CI artifact), taken as the first
    /// variant before the RUNs.
    #[arg(long, value_name = "PATH")]
    pub baseline: Option<PathBuf>,
    /// Exit 1 when this rule is met: `METRIC > +N%` or `METRIC < -N%` (also `ms` for latency,
    /// `pp` for `errors`), METRIC one of p50, p90, p95, p99, p99.9, mean, max, throughput,
    /// errors, ttft, ttft-p99, gap-p99, tpot, goodput. Met only when the change is significant in that direction (verdict slower/faster
    /// after Holm's correction) and its estimate passes the amount. `p99{step=pay} > +5%`
    /// judges one step of plan runs (also scenario=, phase=). Repeatable.
    #[arg(long = "fail-on", value_name = "RULE", value_parser = clap::value_parser!(volley::analysis::gate::Rule))]
    pub fail_on: Vec<volley::analysis::gate::Rule>,
    /// With --fail-on: also exit 1 when a metric a rule names is inconclusive (or has too little
    /// data to test).
    #[arg(long, requires = "fail_on")]
    pub fail_on_inconclusive: bool,
    /// Names of the variants, comma-separated, in order (default: the run names, else the
    /// folder names).
    #[arg(long, value_delimiter = ',', value_name = "A,B,…")]
    pub labels: Vec<String>,
    /// Output format: md, html or txt.
    #[arg(short = 'f', long, value_parser = volley::report::Format::parser(), default_value = "txt")]
    pub format: volley::report::Format,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Practical threshold, %: a change is called only when its whole 95 % interval lies beyond
    /// ±PCT, and "no significant difference" only when it lies within (else: inconclusive).
    #[arg(long, value_name = "PCT", default_value_t = 2.0)]
    pub threshold: f64,
}
