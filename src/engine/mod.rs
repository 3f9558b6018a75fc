//! The engine: runs a [`Plan`] and returns what was measured.
//!
//! Layout: one OS thread per worker, each with its own current-thread tokio runtime and its own
//! connections and recorder (share-nothing, like wrk); the calling thread is the control thread. It
//! merges the workers' per-second snapshots into the series, draws the progress line and enforces
//! the hard deadline (duration + timeout) so a run always ends. SIGINT and SIGTERM are watched by
//! a thread of their own (`signals`) that stops the run cleanly.

mod backoff;
mod clock;
mod connections;
mod control;
mod cookies;
mod gate;
mod grouping;
mod messages;
mod pacer;
mod request;
mod signals;
mod stream;
mod vu;
mod window;

pub(crate) use signals::{SignalError, signal_runtime};
pub use signals::{hold_signals, release_signals};

/// The first signal (SIGINT, SIGTERM, SIGHUP) the process's watcher received, if it runs and
/// one came: what a wait outside a run (a generator waiting to join, the coordinator) checks.
pub fn signal_received() -> Option<&'static str> {
    signals::received()
}
mod steal;
mod usage;
mod worker;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::{mpsc, watch};

use crate::error::Error;
use crate::plan::Plan;
use crate::proto::ErrorKind;
use crate::record::batches::Batches;
use crate::record::group_series::GroupSeries;
use crate::record::recorder::{IntervalSnapshot, Recorder};
use crate::record::series::{SecondStats, fit_to_window};

pub use steal::{CpuTimes, StealShare};
pub use usage::{
    CpuShare, ThreadUsage, UsageShares, peak_rss_bytes, process_cpu, raise_open_files,
};

mod observe;

pub use observe::{Clock, Live, Observer, TICK};
pub use pacer::DEFAULT_GRID_TICK as DEFAULT_SEND_GRID;

/// How long before the schedule's origin the workers are started, so the first due requests are
/// not late because threads were still being created.
pub const START_LEAD: Duration = Duration::from_millis(30);

/// Options of a run that are not part of the test itself.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Stop cleanly on SIGINT/SIGTERM (a second SIGINT exits the process at once, also after
    /// the run: see the `signals` module). Off for callers that watch signals themselves.
    pub handle_signals: bool,
    /// The tick of the open model's send grid (`schedule::Grid`): each worker sends its arrivals
    /// at the grid's points, several per wake-up ([`DEFAULT_SEND_GRID`] when none; zero: each at
    /// its own instant, one wake-up per request).
    pub send_grid: Option<Duration>,
}

/// Installs the process's SIGINT/SIGTERM watcher now, before a plan is read, so that a signal
/// that arrives while volley starts up is not fatal: the run that follows is stopped at once and
/// still writes its (empty) record. Runs with [`RunOptions::handle_signals`] would install it
/// anyway when they start; this only moves that moment earlier. Idempotent.
pub fn watch_signals() -> Result<(), Error> {
    signals::watcher().map(|_| ())
}

/// A stop request that can be sent from another thread while a run is going on.
#[derive(Clone)]
pub struct StopHandle {
    stop: Arc<Stop>,
}

impl StopHandle {
    /// Stops the run as if interrupted: requests in flight are abandoned, the rest is kept.
    pub fn interrupt(&self) {
        self.stop.abort();
    }

    /// Like [`interrupt`](Self::interrupt), for a signal the caller received (e.g. "SIGINT"):
    /// the record then says that signal ended the run. For callers that handle signals
    /// themselves ([`RunOptions::handle_signals`] off), such as a suite of runs.
    pub fn interrupt_by(&self, signal: &'static str) {
        let _ = self.stop.signal.set(signal);
        self.stop.abort();
    }

    /// Whether a stop was requested.
    pub fn is_interrupted(&self) -> bool {
        self.stop.is_aborted()
    }
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// All workers' recorders, merged.
    pub totals: Recorder,
    /// The per-second series.
    pub series: Vec<SecondStats>,
    /// The latency in batches of whole seconds (the uncertainty's input).
    pub batches: Batches,
    /// Each result group's latency in batches and requests per second, by group id, when
    /// the load was steady (the groups' intervals' input); else empty.
    pub group_series: Vec<GroupSeries>,
    /// When a run asked to last until precise met its goals and stopped, since measuring
    /// began.
    pub precise_at: Option<Duration>,
    /// Wall-clock start of the run (warm-up included).
    pub started_at: SystemTime,
    /// Wall-clock end of the run.
    pub ended_at: SystemTime,
    /// The measured window: from the end of warm-up to the scheduled end of the load (or the
    /// moment the run was stopped, or, for runs limited by counts, the last completion).
    /// Every rate's denominator (docs/measurement.md, "Windows").
    pub window: Duration,
    /// The drain: from the window's end until the last in-flight request finished or was
    /// abandoned. Responses that complete here are counted, but the time is in no rate.
    pub drain: Duration,
    /// The signal that interrupted the run, if one did.
    pub interrupted: Option<&'static str>,
    /// Per worker thread.
    pub threads: Vec<ThreadUsage>,
    /// CPU time of the whole process during the run.
    pub process_cpu: Duration,
    /// The share of the machine's CPU time the hypervisor took during the run (CPU steal,
    /// [`CpuTimes`]), 0–1; `None` where it cannot be read.
    pub steal_share: Option<f64>,
    /// Peak resident set size of the process, bytes.
    pub peak_rss_bytes: u64,
    /// The tick of the open model's send grid (`schedule::Grid`) the workers used.
    pub send_grid: Duration,
    /// When thresholds with `abort_on_fail` failed during the run and stopped it.
    pub abort: Option<Abort>,
}

/// Thresholds with `abort_on_fail` that failed during a run and stopped it.
#[derive(Debug, Clone, PartialEq)]
pub struct Abort {
    /// When: time since measuring began.
    pub at: Duration,
    /// Which (indices into the plan's thresholds), each with the value it failed with then.
    pub thresholds: Vec<(usize, Option<f64>)>,
}

/// Everything the workers share; read-only but for the atomics.
pub(crate) struct RunShared {
    plan: Plan,
    /// Origin of the schedule.
    start: Instant,
    /// End of warm-up: results count from here.
    measure_start: Instant,
    /// When the last scenario ends (none if one runs until its iterations are done).
    end: Option<Instant>,
    /// When the last scenario that runs until a time, not a count, ends: the measured window
    /// reaches at least this far (see [`window::window_end`]).
    held_until: Option<Instant>,
    /// Per scenario.
    scenarios: Vec<ScenarioShared>,
    /// Checks in the plan.
    check_count: usize,
    /// Keep per-group interval figures (thresholds judged during the run, exporters, the
    /// groups' intervals).
    live_groups: bool,
    /// Gather each result group's seconds for its intervals: a steady load with groups
    /// (docs/measurement.md, "Uncertainty").
    group_intervals: bool,
    /// Give the `--group-by` tables' figures per value in each interval (a live view).
    live_values: bool,
    /// Each interval's snapshot carries the latencies of the streams it ended (a live view
    /// shows them).
    live_streams: bool,
    stop: Arc<Stop>,
    live: Box<[LiveCounters]>,
    /// The tick of the open model's send grid (see `pacer::pace`).
    send_grid: Duration,
}

/// Run-time facts of one scenario.
struct ScenarioShared {
    /// When it starts.
    start: Instant,
    /// No iteration starts at or after this.
    end: Option<Instant>,
    /// Measured iterations left (shared iteration count).
    remaining: Option<AtomicU64>,
}

/// Run-wide stop flag, checked before each request and awaited by each worker.
struct Stop {
    aborted: AtomicBool,
    tx: watch::Sender<bool>,
    /// The signal behind a stop request made through [`StopHandle::interrupt_by`].
    signal: std::sync::OnceLock<&'static str>,
    /// When the first stop request came.
    at: std::sync::OnceLock<Instant>,
}

impl Stop {
    fn new() -> Self {
        Self {
            aborted: AtomicBool::new(false),
            tx: watch::channel(false).0,
            signal: std::sync::OnceLock::new(),
            at: std::sync::OnceLock::new(),
        }
    }

    #[inline]
    fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
    }

    fn abort(&self) {
        let _ = self.at.set(Instant::now());
        self.aborted.store(true, Ordering::Relaxed);
        self.tx.send_replace(true);
    }

    fn subscribe(&self) -> watch::Receiver<bool> {
        self.tx.subscribe()
    }
}

/// A worker's running totals for the progress line; written only by that worker.
#[derive(Default)]
#[repr(align(64))]
struct LiveCounters {
    requests: AtomicU64,
    errors: AtomicU64,
}

impl LiveCounters {
    #[inline]
    fn publish(&self, requests: u64, errors: u64) {
        self.requests.store(requests, Ordering::Relaxed);
        self.errors.store(errors, Ordering::Relaxed);
    }
}

/// What a worker tells the control thread.
enum WorkerMessage {
    Interval(Box<IntervalSnapshot>),
    Done(Box<WorkerResult>),
    Failed(String),
}

struct WorkerResult {
    recorder: Recorder,
    /// The intervals its ticker had not taken when it finished, in order.
    last_intervals: Vec<IntervalSnapshot>,
    cpu: Duration,
    wall: Duration,
    finished: Instant,
}

/// A handle to stop the next run from another thread; create it before calling [`run_with`].
pub fn stop_handle() -> StopHandle {
    StopHandle {
        stop: Arc::new(Stop::new()),
    }
}

/// Runs `plan` to its end and returns what was measured; `observers` watch it as it goes (see
/// [`Observer`]).
pub fn run(
    plan: &Plan,
    options: &RunOptions,
    observers: &mut [&mut dyn Observer],
) -> Result<RunOutcome, Error> {
    run_with(plan, options, stop_handle(), observers)
}

/// Over TLS, opens one connection before the run: a certificate the client does not trust, a
/// handshake that fails or a server that will not speak HTTP/2 is a setup error with a clear
/// message, not a run full of identical failures. Other failures (refused, timeouts) are left
/// for the run to measure and classify.
fn preflight(plan: &Plan) -> Result<(), Error> {
    let connect = &plan.target.connect;
    if connect.tls.is_none() {
        return Ok(());
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Engine(format!("runtime: {e}")))?;
    let clients = std::iter::once(&connect.client).chain(connect.grpc_client.as_ref());
    for client in clients {
        let probe =
            rt.block_on(async { tokio::time::timeout(plan.target.timeout, client.probe()).await });
        if let Ok(Err(e)) = probe
            && matches!(e.kind, ErrorKind::Tls | ErrorKind::TlsCertificate)
        {
            return Err(Error::Connect {
                target: plan.target.base_url.clone(),
                why: e.message,
            });
        }
    }
    Ok(())
}

/// Like [`run`], stoppable through `stop`.
pub fn run_with(
    plan: &Plan,
    options: &RunOptions,
    stop: StopHandle,
    observers: &mut [&mut dyn Observer],
) -> Result<RunOutcome, Error> {
    preflight(plan)?;
    let started_at = SystemTime::now();
    let cpu_before = process_cpu();
    let steal_before = CpuTimes::now();
    let start = Instant::now() + START_LEAD;
    let wants = observe::Wants::of(observers);
    let tick = options.send_grid.unwrap_or(DEFAULT_SEND_GRID);
    let run = Arc::new(RunShared::new(plan, start, &stop, wants, tick));
    let (measure_start, end) = (run.measure_start, run.end);
    // Before any worker starts: from the first request on, a signal stops the run cleanly.
    let watcher = if options.handle_signals {
        let watcher = signals::watcher()?;
        watcher.begin_run(&stop.stop);
        Some(watcher)
    } else {
        None
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let handles = spawn_workers(&run, tx)?;

    let control = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Engine(format!("cannot start control runtime: {e}")))?;
    let mut all = observe::Observers(Vec::with_capacity(observers.len()));
    for o in observers.iter_mut() {
        all.0.push(&mut **o);
    }
    let clock = Clock {
        start,
        measure_start,
        measured: end.map(|e| e.saturating_duration_since(measure_start)),
    };
    all.each(|o| o.start(&clock));
    let collected = control.block_on(control::control_loop(&run, &mut all, rx));
    for h in handles {
        let _ = h.join();
    }
    if let Some(watcher) = watcher {
        watcher.end_run();
    }
    let collected = collected?;

    // The last worker's finish, after its drain.
    let last = collected.last_finish.unwrap_or(measure_start);
    let ends_window = match run.held_until {
        // Timed scenarios hold the window: what ends it later is a counted scenario's last
        // completion, not a timed one's drain (which still ends the run: `drain` below).
        Some(_) => {
            window::counted_finish(&run.plan, &collected.totals, measure_start).unwrap_or(last)
        }
        None => last,
    };
    let stopped = run.stop.at.get().copied();
    let window_end = window::window_end(ends_window, run.end, run.held_until, stopped);
    let window = window_end.saturating_duration_since(measure_start);
    let mut series = collected.series;
    fit_to_window(&mut series, window.as_secs_f64());
    Ok(RunOutcome {
        totals: collected.totals,
        series,
        batches: collected.batches,
        group_series: collected.groups,
        precise_at: collected.precise_at,
        started_at,
        ended_at: SystemTime::now(),
        window,
        drain: last.saturating_duration_since(window_end),
        interrupted: collected.interrupted,
        threads: collected.threads,
        process_cpu: process_cpu().saturating_sub(cpu_before),
        steal_share: CpuTimes::now()
            .zip(steal_before)
            .and_then(|(now, before)| now.steal_share_since(&before)),
        peak_rss_bytes: peak_rss_bytes(),
        send_grid: tick,
        abort: collected.abort,
    })
}

impl RunShared {
    /// The run's shared state: scenarios placed on the timeline that starts at `start`;
    /// `wants`: what the observers need in the snapshots; `send_grid`: the tick of the open
    /// model's send grid.
    fn new(
        plan: &Plan,
        start: Instant,
        stop: &StopHandle,
        wants: observe::Wants,
        send_grid: Duration,
    ) -> Self {
        // A load that changes has no intervals, its groups' neither.
        let group_intervals =
            !plan.groups.is_empty() && !plan.unsteady().is_some_and(|u| u.mixes_loads());
        let scenarios: Vec<ScenarioShared> = plan
            .scenarios
            .iter()
            .map(|sc| {
                let sc_start = start + sc.start_after;
                let remaining = sc.profile.shared_iterations().map(AtomicU64::new);
                ScenarioShared {
                    start: sc_start,
                    end: sc.duration().map(|d| sc_start + d),
                    remaining,
                }
            })
            .collect();
        let end = scenarios
            .iter()
            .map(|s| s.end)
            .try_fold(start, |acc, e| e.map(|e| acc.max(e)));
        let held_until = scenarios
            .iter()
            .zip(&plan.scenarios)
            .filter(|(_, sc)| !sc.profile.ends_by_count())
            .filter_map(|(s, _)| s.end)
            .max();
        Self {
            plan: plan.clone(),
            start,
            measure_start: start + plan.warmup,
            end,
            held_until,
            scenarios,
            check_count: crate::plan::check_list(plan).len(),
            live_groups: wants.groups || group_intervals,
            group_intervals,
            live_values: wants.values,
            live_streams: wants.streams,
            stop: stop.stop.clone(),
            live: (0..plan.threads).map(|_| LiveCounters::default()).collect(),
            send_grid,
        }
    }
}

/// Starts one OS thread per worker.
fn spawn_workers(
    run: &Arc<RunShared>,
    tx: mpsc::UnboundedSender<WorkerMessage>,
) -> Result<Vec<std::thread::JoinHandle<()>>, Error> {
    (0..run.plan.threads)
        .map(|index| {
            let (run, tx) = (run.clone(), tx.clone());
            std::thread::Builder::new()
                .name(format!("volley-worker-{index}"))
                .spawn(move || worker::run_worker(index, run, tx))
                .map_err(|e| Error::Engine(format!("cannot start worker thread: {e}")))
        })
        .collect()
}
