//! `volley coordinate` (the coordinator of a distributed test) and `--join` (one of its
//! generators, from `volley run` or quick mode).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use volley::distributed::coordinate::{CoordinateError, CoordinatorOptions, coordinate};
use volley::distributed::join::client::CoordinatorClient;
use volley::distributed::join::{JoinError, JoinOptions, Worker};
use volley::distributed::k8s::TOKEN_ENV;
use volley::plan::Plan;
use volley::plan::read::{ReadOptions, read_file};
use volley::run::output::ResultsFolder;
use volley::run::{Options, Outputs};
use volley::schedule::Segment;

use super::args::{parse_duration, parse_set, parse_time_scale};
use super::export::ExportArgs;

/// `volley coordinate`.
#[derive(Debug, Args)]
#[command(
    after_help = "Shares: a generator runs the share it asks for (--segment i/N, \
                  $JOB_COMPLETION_INDEX) or, asking for none, the first free one when it \
                  registers. A share is never given twice: a generator asking for a share \
                  already taken (asked for twice, or given earlier to one that asked for none) \
                  is refused, saying by whom. Give every generator its share, or none of them.\n\n\
                  Exit codes as `volley run`, for the merged record; 1 also when the \
                  generators did not all register in time (--wait) or none sent its record."
)]
pub struct CoordinateArgs {
    /// The plan the generators run: its hash must match theirs, and its `abort_on_fail`
    /// thresholds are judged live on the whole test. Without it, the coordinator takes the
    /// test of the first generator (quick mode) and judges thresholds only in the merged record.
    pub plan: Option<PathBuf>,
    /// Generators (shares of the test) to wait for.
    #[arg(long, value_name = "N")]
    pub workers: u32,
    /// Address to listen on. Loopback unless told otherwise: 0.0.0.0:7070 in a cluster.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7070")]
    pub listen: SocketAddr,
    /// The token every generator must send (default: $VOLLEY_TOKEN, else a random one, printed).
    #[arg(long)]
    pub token: Option<String>,
    /// How long to wait for every generator to register.
    #[arg(long, value_parser = parse_duration, default_value = "5m")]
    pub wait: Duration,
    /// Parent folder of the merged results folder (<out>/<name>-<UTC time>/).
    #[arg(long, value_name = "DIR", default_value = "volley-results")]
    pub out: PathBuf,
    /// After the test, keep running this long (so `kubectl cp` can fetch the results).
    #[arg(long, value_parser = parse_duration, default_value = "0s", value_name = "DURATION")]
    pub keep_for: Duration,
    /// As `volley run --set` (the generators must be given the same).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_set)]
    pub sets: Vec<(volley::plan::set_key::SetKey, String)>,
    /// As `volley run --time-scale` (the generators must be given the same).
    #[arg(long, default_value_t = 1.0, value_parser = parse_time_scale)]
    pub time_scale: f64,
    /// No progress lines and no summary.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// The whole test's live metrics: the generators' snapshots summed, as a single run's page.
    #[command(flatten)]
    pub export: ExportArgs,
}

/// `--join` and its companions, for `volley run` and quick mode.
#[derive(Debug, Clone, Args)]
pub struct JoinArgs {
    /// Run as one generator of a distributed test: the coordinator (`volley coordinate`) at
    /// http://HOST:PORT gives the share (unless --segment or $JOB_COMPLETION_INDEX does) and
    /// the common start. A share is never given twice: asking for one the coordinator already
    /// gave to a generator that asked for none is refused, so give every generator its share
    /// or none of them.
    #[arg(long, value_name = "URL", help_heading = "Distributed tests")]
    pub join: Option<String>,
    /// The coordinator's token (default: $VOLLEY_TOKEN).
    #[arg(long, requires = "join", help_heading = "Distributed tests")]
    pub token: Option<String>,
    /// How long to wait for the coordinator and for the test to start.
    #[arg(long, requires = "join", value_parser = parse_duration, default_value = "5m",
          value_name = "DURATION", help_heading = "Distributed tests")]
    pub join_wait: Duration,
}

/// Runs the coordinator; returns the exit code of the merged run.
pub fn run(a: CoordinateArgs) -> anyhow::Result<u8> {
    let plan = match &a.plan {
        Some(path) => {
            let options = ReadOptions {
                sets: a.sets.clone(),
                time_scale: a.time_scale,
                segment: Some(Segment::WHOLE),
                ..Default::default()
            };
            Some(Arc::new(read_file(path, &options)?.prepare()?))
        }
        None => None,
    };
    volley::distributed::coordinate::check_workers(a.workers, plan.as_deref())?;
    let (token, generated) = match a
        .token
        .clone()
        .or_else(volley::distributed::k8s::token_from_env)
    {
        Some(t) => (t, false),
        None => (volley::distributed::k8s::random_token(), true),
    };
    let mut outputs = a
        .export
        .add_to(volley::run::Outputs::none().with(ResultsFolder::new(&a.out)));
    let listener = std::net::TcpListener::bind(a.listen)
        .with_context(|| format!("cannot listen on {}", a.listen))?;
    let at = listener.local_addr()?;
    eprintln!(
        "volley coordinate: listening on http://{at} for {} generator(s)",
        a.workers
    );
    if generated {
        eprintln!("volley coordinate: token (give it to the generators): {TOKEN_ENV}={token}");
    }
    super::export::start(&mut outputs, plan.as_deref(), "volley coordinate")?;
    let options = CoordinatorOptions {
        count: a.workers,
        settings: plan.as_ref().map(|p| p.distributed).unwrap_or_default(),
        plan,
        token,
        wait: a.wait,
    };
    let quiet = a.quiet;
    let mut say = |line: &str| {
        if !quiet {
            eprintln!("coordinator: {line}");
        }
    };
    let merged = match coordinate(listener, options, &mut outputs, &mut say) {
        Err(CoordinateError::Interrupted(signal)) => {
            eprintln!("volley coordinate: {signal} before the test started: nothing was run");
            return Ok(super::EXIT_INTERRUPTED);
        }
        other => other?,
    };
    let (written, code) = super::finish(&merged, &mut outputs, a.quiet);
    if !a.keep_for.is_zero() {
        eprintln!(
            "volley coordinate: keeping {} for {} (kubectl cp), then exiting",
            written.kept_text(),
            humantime::format_duration(a.keep_for)
        );
        // A signal ends the wait: the results are written already.
        let until = std::time::Instant::now() + a.keep_for;
        while std::time::Instant::now() < until && volley::run::signal_received().is_none() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    outputs.close();
    Ok(code)
}

/// A generator stopped by `signal` before its run: nothing was measured; exit 130.
fn interrupted_while_waiting(signal: &str) -> u8 {
    eprintln!("volley: {signal} while waiting for the coordinator: nothing was run");
    super::EXIT_INTERRUPTED
}

/// On a generator: `--repeat` and `--repeat-until` (`until`) refused (it runs once), and
/// `--metrics-listen`/`--prometheus-rw`/`--otlp` (its run would not feed them), pointing at the
/// coordinator's.
pub fn refuse_with_join(export: &ExportArgs, repeat: u32, until: bool) -> anyhow::Result<()> {
    if repeat > 1 || until {
        anyhow::bail!(volley::Error::Invalid {
            what: "--repeat".into(),
            why: "a generator of a distributed test (--join) runs once".into(),
        });
    }
    if export.any() {
        anyhow::bail!(volley::Error::Invalid {
            what: "--metrics-listen/--prometheus-rw/--otlp".into(),
            why: "a generator of a distributed test (--join) exports nothing itself: give them \
                  to `volley coordinate`, whose page shows the whole test"
                .into(),
        });
    }
    Ok(())
}

/// Runs one generator of a distributed test: `load` reads the plan as a given share (share
/// 0/1 for the test's hash). Writes the share's own results folder first, then sends the
/// record to the coordinator; returns the exit code of the share's run.
pub fn join(
    a: &JoinArgs,
    segment: Option<Segment>,
    load: impl Fn(Segment) -> anyhow::Result<Plan>,
    mut outputs: Outputs,
    argv: &volley::redact::Argv,
    quiet: bool,
) -> anyhow::Result<u8> {
    super::export::start(&mut outputs, None, "volley")?;
    let url = a.join.clone().unwrap_or_default();
    let token = a
        .token
        .clone()
        .or_else(volley::distributed::k8s::token_from_env)
        .ok_or_else(|| {
            anyhow::Error::from(volley::Error::Invalid {
                what: "--token".into(),
                why: format!("--join needs the coordinator's token: --token or ${TOKEN_ENV}"),
            })
        })?;
    // A URL that cannot be the coordinator's is a mistake on the command line (exit 2).
    CoordinatorClient::new(&url, "").map_err(|e| volley::Error::Invalid {
        what: "--join".into(),
        why: e.to_string(),
    })?;
    let (index, count) = volley::distributed::join::asked_share(segment)?;
    let first = load(segment.unwrap_or(Segment::WHOLE))?;
    let hash = first
        .share
        .as_ref()
        .map(|s| s.plan_hash.clone())
        .unwrap_or_default();
    let options = JoinOptions {
        url: url.clone(),
        token,
        index,
        count,
        wait: a.join_wait,
    };
    // The whole test as one generator would run it: the coordinator states it when a
    // generator is lost.
    let whole = load(Segment::WHOLE)
        .ok()
        .map(|p| volley::run::run_config(&p));
    // Said once, even under -q: a generator that waits says for what.
    eprintln!(
        "volley: waiting for the coordinator at {url} (up to {}; Ctrl-C to leave)",
        humantime::format_duration(a.join_wait)
    );
    let mut worker = match Worker::register(&options, &hash, whole) {
        Err(JoinError::Interrupted(signal)) => return Ok(interrupted_while_waiting(signal)),
        other => other?,
    };
    let plan = match segment {
        Some(_) => first,
        None => load(worker.segment())?,
    };
    super::runs::open_files(&plan);
    if !quiet {
        eprintln!("{}", volley::run::show::banner(&plan));
        eprintln!("volley: joined {url} as share {}", worker.segment());
    }
    let run_options = Options {
        progress: !quiet,
        handle_signals: true,
        command: argv.clone(),
        ..Default::default()
    };
    let record = match worker.run(&plan, &run_options) {
        Err(JoinError::Interrupted(signal)) => return Ok(interrupted_while_waiting(signal)),
        other => other?,
    };
    let (written, code) = super::finish(&record, &mut outputs, quiet);
    if let Err(e) = worker.send_record(&record) {
        eprintln!(
            "volley: the record did not reach the coordinator ({e}); kept: {}",
            written.kept_text()
        );
    }
    Ok(code)
}
