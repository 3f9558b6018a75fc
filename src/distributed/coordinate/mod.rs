//! The coordinator of a distributed test (`volley coordinate`): the start barrier, the live
//! aggregator and global judge, and the collector of the shares' records.
//!
//! 1. Generators register (`volley run … --join URL`), each for one share: the one it was
//!    told (`--segment`, `JOB_COMPLETION_INDEX`) or the first free one. When every share is
//!    taken, the test starts for all of them at one wall-clock instant, a whole second at least
//!    [`START_DELAY`] ahead. Shares still missing when the wait ends fail the test, by name.
//! 2. While it runs, each generator sends one snapshot per second (counters and HDR
//!    histograms) and a heartbeat when it has nothing to send. The coordinator sums them,
//!    shows the whole test's progress, and judges the plan's `abort_on_fail` thresholds on the
//!    whole; one failing stops every generator (told in the reply to its next request).
//! 3. A generator silent for `[distributed] lost_after` is lost: the test goes on without it
//!    (or stops, with `on_lost = "stop"`).
//! 4. Each generator sends its record when its run ends (after writing its own results
//!    folder); once every share is in or lost, the records are merged ([`super::merge`]),
//!    missing shares named.
//!
//! 5. With `--metrics-listen` (or `--prometheus-rw`), the snapshots also feed one exporter
//!    (`metrics`): the page shows the whole test under a single run's metric names.
//!
//! Layout: [`state`] (what the coordinator knows, no I/O), `http` (the routes), `metrics`
//! (the whole test's live metrics).

mod http;
mod metrics;
pub mod state;

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::plan::Plan;
use crate::plan::segment::Distributed;
use crate::record::RunRecord;

use super::merge::{Beside, Input, Lost, MergeError, merge_lost};
use crate::record::shares::LostShare;
use crate::run::Outputs;
pub use state::START_DELAY;
use state::{CoordinatorState, Event, ShareStatus};

/// How often the coordinator looks at its clock (lost generators, the wait's end).
const POLL: Duration = Duration::from_millis(100);
/// How long a coordinator whose wait failed keeps answering, so that its generators learn why.
const FAILED_GRACE: Duration = Duration::from_secs(3);

/// What a coordinator is asked to do.
pub struct CoordinatorOptions {
    /// Shares of the test: generators to wait for.
    pub count: u32,
    /// The whole plan (read as share 0/1, for its hash); `None`: the test of the first
    /// generator to register, whose thresholds are then judged in the merged record only.
    pub plan: Option<Arc<Plan>>,
    /// The shared token every request must carry.
    pub token: String,
    /// How long to wait for every share to register.
    pub wait: Duration,
    /// Lost generators: after how long, and what then.
    pub settings: Distributed,
}

/// `--workers N`: between 1 and [`crate::schedule::segment::MAX_SEGMENTS`] shares, and, with
/// the coordinator's plan, shares that each get some of its load
/// ([`crate::plan::segment::divides`]).
pub fn check_workers(count: u32, plan: Option<&Plan>) -> Result<(), crate::error::Error> {
    let most = crate::schedule::segment::MAX_SEGMENTS;
    if !(1..=most).contains(&count) {
        return Err(crate::error::Error::Invalid {
            what: "--workers".into(),
            why: format!("must be between 1 and {most}"),
        });
    }
    plan.map_or(Ok(()), |p| crate::plan::segment::divides(p, count))
}

/// Why a coordinated test has no merged record.
#[derive(Debug, thiserror::Error)]
pub enum CoordinateError {
    /// The HTTP side could not run.
    #[error("coordinator: cannot serve: {0}")]
    Serve(#[from] std::io::Error),
    /// Not every share registered in time.
    #[error("the test did not start: {0}")]
    Barrier(String),
    /// No share's record arrived.
    #[error("no generator sent its record (lost: {0}); each keeps its own results folder")]
    NoRecords(String),
    /// The records do not merge.
    #[error("the shares' records do not merge: {0}")]
    Merge(#[from] MergeError),
    /// A signal came before the test started: nothing was run.
    #[error("{0} before the test started: nothing was run")]
    Interrupted(&'static str),
}

/// Runs a distributed test on `listener`: waits for the generators, follows the run, and
/// returns the merged record. `say` gets what a user follows (registrations, the start,
/// progress once a second, lost generators). `outputs` (started) get the whole test's live
/// figures, the generators' snapshots summed, and say what the merged record must (failed
/// pushes); the caller gives them the merged record.
pub fn coordinate(
    listener: TcpListener,
    options: CoordinatorOptions,
    outputs: &mut Outputs,
    say: &mut dyn FnMut(&str),
) -> Result<RunRecord, CoordinateError> {
    let now = Instant::now();
    let mut state = CoordinatorState::new(
        options.count,
        options.plan.clone(),
        options.wait,
        options.settings,
        now,
    );
    if let Some(live) = outputs.live() {
        state = state.with_metrics(live);
    }
    let shared = Arc::new(http::Shared {
        state: Mutex::new(state),
        token: options.token.clone(),
    });
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let server = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("volley-coordinator".into())
            .spawn(move || runtime.block_on(http::serve(listener, shared, stop_rx)))?
    };
    let outcome = follow(&shared, say);
    if outcome.is_err() {
        std::thread::sleep(FAILED_GRACE);
    }
    let _ = stop_tx.send(true);
    if let Ok(Err(e)) = server.join() {
        return Err(CoordinateError::Serve(e));
    }
    outcome?;
    let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    let beside = Beside {
        run_id: Some(outputs.run_id().to_string()),
        interrupted: state.interrupted.map(|s| format!("{s} at the coordinator")),
        warnings: outputs.run_ended(),
    };
    collect(&mut state, beside)
}

/// Follows the test until every share is done or lost.
fn follow(shared: &http::Shared, say: &mut dyn FnMut(&str)) -> Result<(), CoordinateError> {
    let mut next_progress = Instant::now() + Duration::from_secs(1);
    loop {
        std::thread::sleep(POLL);
        let now = Instant::now();
        let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(signal) = crate::run::signal_received() {
            state.interrupt(signal);
        }
        state.tick(now);
        for e in state.events() {
            say(&describe(&e, state.count));
        }
        if let Some(why) = &state.failed {
            if let (Some(signal), None) = (state.interrupted, state.start_at) {
                return Err(CoordinateError::Interrupted(signal));
            }
            return Err(CoordinateError::Barrier(why.clone()));
        }
        if state.finished() {
            return Ok(());
        }
        if now >= next_progress {
            next_progress += Duration::from_secs(1);
            if state.start_at.is_some() {
                say(&progress(&state));
            }
        }
    }
}

/// The merged record of the shares that sent theirs; the others are named missing.
fn collect(state: &mut CoordinatorState, beside: Beside) -> Result<RunRecord, CoordinateError> {
    let lost = Lost {
        shares: state
            .shares
            .iter()
            .enumerate()
            .filter(|(_, s)| s.record.is_none())
            .map(|(i, s)| LostShare {
                index: i as u32,
                seconds: s.seconds,
                requests: s.requests,
                errors: s.errors,
                connections_opened: s.connections,
            })
            .collect(),
        whole: state.whole.clone(),
    };
    let inputs: Vec<Input> = state
        .shares
        .iter_mut()
        .enumerate()
        .filter_map(|(i, s)| {
            s.record.take().map(|record| Input {
                source: format!("share {i}/{} ({})", state.count, s.host),
                record,
            })
        })
        .collect();
    if inputs.is_empty() {
        let lost: Vec<String> = (0..state.count)
            .map(|i| format!("{i}/{}", state.count))
            .collect();
        return Err(CoordinateError::NoRecords(lost.join(", ")));
    }
    Ok(merge_lost(&inputs, &lost, beside)?)
}

/// One line of the whole test's progress: the generators running, requests and errors so far,
/// and the last second every running generator has reported.
fn progress(state: &CoordinatorState) -> String {
    let (requests, errors) = state
        .shares
        .iter()
        .fold((0, 0), |(r, e), s| (r + s.requests, e + s.errors));
    let reporting = state
        .shares
        .iter()
        .filter(|s| matches!(s.status, ShareStatus::Running | ShareStatus::Done))
        .count() as u32;
    let last = state
        .seconds
        .iter()
        .rev()
        .find(|(_, (n, _))| *n >= reporting.max(1))
        .map_or_else(String::new, |(k, (_, r))| {
            format!(", {} req/s in second {k}", crate::units::thousands(*r))
        });
    format!(
        "{}/{} generators running, {} requests, {} errors{last}",
        state.running(),
        state.count,
        crate::units::thousands(requests),
        crate::units::thousands(errors),
    )
}

fn describe(e: &Event, count: u32) -> String {
    match e {
        Event::Registered(i, host) => format!("share {i}/{count}: registered ({host})"),
        Event::Starting(at) => format!(
            "all {count} generators registered: the test starts at {}",
            humantime::format_rfc3339_seconds(*at)
        ),
        Event::BarrierFailed(why) => format!("the test will not start: {why}"),
        Event::Lost(i, silent) => format!(
            "share {i}/{count}: LOST (silent for {:.1}s); the merged record will name it",
            silent.as_secs_f64()
        ),
        Event::Done(i) => format!("share {i}/{count}: record received"),
        Event::Stopping(order) => format!("stopping every generator: {}", order_text(order)),
    }
}

fn order_text(order: &super::wire::StopOrder) -> String {
    match order {
        super::wire::StopOrder::Abort { at_s, thresholds } => format!(
            "{} abort_on_fail threshold(s) failed on the whole test at {at_s:.1}s",
            thresholds.len()
        ),
        super::wire::StopOrder::Interrupt { why } => why.clone(),
    }
}
