//! The engine: runs a [`Plan`] and returns what was measured.
//!
//! Layout: one OS thread per worker, each with its own current-thread tokio runtime and its own
//! connections and recorder (share-nothing, like wrk); the calling thread is the control thread. It
//! merges the workers' per-second snapshots into the series, draws the progress line and enforces
//! the hard deadline (duration + timeout) so a run always ends. SIGINT and SIGTERM are watched by
//! a thread of their own ([`signals`]) that stops the run cleanly.

mod gate;
mod signals;

pub(crate) use signals::signal_runtime;
mod usage;
mod worker;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::{mpsc, watch};

use crate::error::Error;
use crate::plan::{Iterations, Plan, Profile};
use crate::proto::ErrorKind;
use crate::record::recorder::{IntervalSnapshot, Recorder};
use crate::record::series::{SecondStats, SeriesBuilder};
use crate::report::progress::{Progress, ProgressView};

pub use usage::{peak_rss_bytes, process_cpu};

mod live;

/// How long before the schedule's origin the workers are started, so the first due requests are
/// not late because threads were still being created.
pub const START_LEAD: Duration = Duration::from_millis(30);
/// How often the progress line is redrawn.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// Options of a run that are not part of the test itself.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Draw a live progress line on stderr.
    pub progress: bool,
    /// Stop cleanly on SIGINT/SIGTERM (a second SIGINT exits the process at once, also after
    /// the run: see the `signals` module). Off for callers that watch signals themselves.
    pub handle_signals: bool,
}

/// Installs the process's SIGINT/SIGTERM watcher now, before a plan is loaded, so that a signal
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

/// CPU use of one worker thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThreadUsage {
    /// CPU time used (user + system).
    pub cpu: Duration,
    /// Wall time the worker ran.
    pub wall: Duration,
}

impl ThreadUsage {
    /// CPU time over wall time, 0.0–1.0.
    pub fn utilization(&self) -> f64 {
        if self.wall.is_zero() {
            0.0
        } else {
            (self.cpu.as_secs_f64() / self.wall.as_secs_f64()).min(1.0)
        }
    }
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// All workers' recorders, merged.
    pub totals: Recorder,
    /// The per-second series.
    pub series: Vec<SecondStats>,
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
    /// Peak resident set size of the process, bytes.
    pub peak_rss_bytes: u64,
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
    /// Per scenario.
    scenarios: Vec<ScenarioShared>,
    /// Checks in the plan.
    check_count: usize,
    /// Keep per-group interval figures (thresholds judged during the run).
    live_groups: bool,
    stop: Arc<Stop>,
    live: Box<[LiveCounters]>,
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
    Interval(IntervalSnapshot),
    Done(Box<WorkerResult>),
    Failed(String),
}

struct WorkerResult {
    recorder: Recorder,
    last_interval: Option<IntervalSnapshot>,
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

/// Runs `plan` to its end and returns what was measured.
pub fn run(plan: &Plan, options: &RunOptions) -> Result<RunOutcome, Error> {
    run_with(plan, options, stop_handle())
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
pub fn run_with(plan: &Plan, options: &RunOptions, stop: StopHandle) -> Result<RunOutcome, Error> {
    preflight(plan)?;
    let started_at = SystemTime::now();
    let cpu_before = process_cpu();
    let start = Instant::now() + START_LEAD;
    let measure_start = start + plan.warmup;
    let scenarios: Vec<ScenarioShared> = plan
        .scenarios
        .iter()
        .map(|sc| {
            let sc_start = start + sc.start_after;
            let remaining = match &sc.profile {
                Profile::Vus {
                    iterations: Iterations::Shared(n),
                    ..
                } => Some(AtomicU64::new(*n)),
                _ => None,
            };
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
    let check_count = crate::plan::check_list(plan).len();
    // Before any worker starts: from the first request on, a signal stops the run cleanly.
    let watcher = if options.handle_signals {
        let watcher = signals::watcher()?;
        watcher.begin_run(&stop.stop);
        Some(watcher)
    } else {
        None
    };
    let run = Arc::new(RunShared {
        plan: plan.clone(),
        start,
        measure_start,
        end,
        scenarios,
        check_count,
        live_groups: plan.thresholds.iter().any(|t| t.abort_on_fail),
        stop: stop.stop.clone(),
        live: (0..plan.threads).map(|_| LiveCounters::default()).collect(),
    });

    let (tx, rx) = mpsc::unbounded_channel();
    let mut handles = Vec::with_capacity(plan.threads);
    for index in 0..plan.threads {
        let (run, tx) = (run.clone(), tx.clone());
        let handle = std::thread::Builder::new()
            .name(format!("volley-worker-{index}"))
            .spawn(move || worker::run_worker(index, run, tx))
            .map_err(|e| Error::Engine(format!("cannot start worker thread: {e}")))?;
        handles.push(handle);
    }
    drop(tx);

    let control = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Engine(format!("cannot start control runtime: {e}")))?;
    let collected = control.block_on(control_loop(&run, options, rx));
    for h in handles {
        let _ = h.join();
    }
    if let Some(watcher) = watcher {
        watcher.end_run();
    }
    let collected = collected?;

    let last = collected.last_finish.unwrap_or(measure_start);
    let window_end = [run.end, run.stop.at.get().copied()]
        .into_iter()
        .flatten()
        .fold(last, Instant::min);
    Ok(RunOutcome {
        totals: collected.totals,
        series: collected.series,
        started_at,
        ended_at: SystemTime::now(),
        window: window_end.saturating_duration_since(measure_start),
        drain: last.saturating_duration_since(window_end),
        interrupted: collected.interrupted,
        threads: collected.threads,
        process_cpu: process_cpu().saturating_sub(cpu_before),
        peak_rss_bytes: peak_rss_bytes(),
        abort: collected.abort,
    })
}

struct Collected {
    totals: Recorder,
    series: Vec<SecondStats>,
    threads: Vec<ThreadUsage>,
    interrupted: Option<&'static str>,
    last_finish: Option<Instant>,
    abort: Option<Abort>,
}

async fn control_loop(
    run: &RunShared,
    options: &RunOptions,
    mut rx: mpsc::UnboundedReceiver<WorkerMessage>,
) -> Result<Collected, Error> {
    let mut hard_deadline = run
        .end
        .map(|end| end + run.plan.target.timeout + Duration::from_secs(1));
    let total = run
        .end
        .map(|e| e.saturating_duration_since(run.measure_start));
    let mut progress = options.progress.then(|| Progress::new(total));
    let mut tick = tokio::time::interval(PROGRESS_EVERY);

    let workers = run.plan.threads;
    let mut series = SeriesBuilder::new(workers);
    let mut totals = Recorder::with_groups(run.plan.groups.len(), run.check_count, false);
    let mut judge = live::LiveJudge::new(&run.plan, run.check_count);
    let mut abort: Option<Abort> = None;
    let mut threads = Vec::with_capacity(workers);
    let mut last_finish: Option<Instant> = None;
    let mut failure = None;
    let mut deadline_hit = false;
    let mut done = 0;
    while done < workers {
        tokio::select! {
            msg = rx.recv() => match msg {
                Some(WorkerMessage::Interval(s)) => {
                    judge.add(&s);
                    series.add(s);
                    judge_now(run, &judge, &mut abort);
                }
                Some(WorkerMessage::Done(result)) => {
                    done += 1;
                    judge.worker_done();
                    if done < workers {
                        judge_now(run, &judge, &mut abort);
                    }
                    totals.merge(&result.recorder);
                    if let Some(last) = result.last_interval {
                        series.add(last);
                    }
                    threads.push(ThreadUsage { cpu: result.cpu, wall: result.wall });
                    last_finish = last_finish.max(Some(result.finished));
                }
                Some(WorkerMessage::Failed(why)) => {
                    failure = Some(why);
                    run.stop.abort();
                }
                None => break,
            },
            _ = tick.tick(), if progress.is_some() => {
                if let Some(p) = progress.as_mut() {
                    p.draw(&live_view(run));
                }
            }
            () = sleep_opt(hard_deadline) => {
                // Every request has its own timeout, so this only fires if something is stuck.
                deadline_hit = true;
                hard_deadline = None;
                run.stop.abort();
            }
        }
    }
    if let Some(p) = progress.as_mut() {
        p.finish();
    }
    if let Some(why) = failure {
        return Err(Error::Engine(why));
    }
    // A signal (see `signals`) or a stop request; not the hard deadline nor a threshold.
    let interrupted = run.stop.signal.get().copied().or_else(|| {
        (run.stop.is_aborted() && !deadline_hit && abort.is_none()).then_some("stop requested")
    });
    Ok(Collected {
        totals,
        series: series.finish(),
        threads,
        interrupted,
        last_finish,
        abort,
    })
}

/// Stops the run when an `abort_on_fail` threshold fails on the seconds judged so far (the first
/// such moment is kept).
fn judge_now(run: &RunShared, judge: &live::LiveJudge, abort: &mut Option<Abort>) {
    if abort.is_some() {
        return;
    }
    let elapsed = Instant::now().saturating_duration_since(run.measure_start);
    let failed = judge.failing(&run.plan, elapsed);
    if !failed.is_empty() {
        *abort = Some(Abort {
            at: elapsed,
            thresholds: failed,
        });
        run.stop.abort();
    }
}

fn live_view(run: &RunShared) -> ProgressView {
    let (requests, errors) = run.live.iter().fold((0, 0), |(r, e), l| {
        (
            r + l.requests.load(Ordering::Relaxed),
            e + l.errors.load(Ordering::Relaxed),
        )
    });
    ProgressView::at(
        Instant::now(),
        run.start,
        run.measure_start,
        requests,
        errors,
    )
}

async fn sleep_opt(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d.into()).await,
        None => std::future::pending().await,
    }
}
