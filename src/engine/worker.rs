//! One worker thread: a current-thread runtime running its share of every scenario's VUs.
//!
//! Every VU is one task running [`vu_loop`], the single iteration loop of volley; the load model
//! only changes which gate hands it tickets: the closed model's VUs are all started here, the open
//! model's by its [`pacer`]. The worker's recorder lives in an `Rc<RefCell<_>>`: all its tasks run
//! on this thread, so recording needs neither lock nor atomic.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;

use super::connections::VuConnections;
use super::gate::{ClosedGate, Gate, OpenDispatch};
use super::pacer::pacer;
use super::usage::thread_cpu;
use super::vu::{Vu, vu_loop};
use super::{RunShared, WorkerMessage, WorkerResult};
use crate::record::model::LoadModel;
use crate::record::recorder::{IntervalSnapshot, Recorder};
use crate::schedule::Interleave;

/// State shared by the tasks of one worker (single thread).
pub(super) struct WorkerState {
    /// The worker's number, 0-based.
    pub index: usize,
    /// What this worker measured so far.
    pub recorder: RefCell<Recorder>,
    /// Requests sent and not yet answered (or timed out).
    pub in_flight: Cell<u64>,
    /// The next second of the series to flush.
    next_second: Cell<u64>,
}

/// Runs worker `index` on the current thread until its share of the run is done or aborted.
pub(super) fn run_worker(index: usize, run: Arc<RunShared>, tx: UnboundedSender<WorkerMessage>) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = tx.send(WorkerMessage::Failed(format!(
                "worker {index} runtime: {e}"
            )));
            return;
        }
    };
    // Linux delays timer wake-ups by up to the thread's timer slack (50 µs by default) to batch
    // them; a pacer wants them on time. Best effort: without it only precision suffers.
    let _ = nix::sys::prctl::set_timerslack(1);
    let local = tokio::task::LocalSet::new();
    let result = local.block_on(&rt, worker_main(index, run, tx.clone()));
    // Dropping the LocalSet here abandons requests still in flight after an abort.
    drop(local);
    let _ = tx.send(WorkerMessage::Done(Box::new(result)));
}

async fn worker_main(
    index: usize,
    run: Arc<RunShared>,
    tx: UnboundedSender<WorkerMessage>,
) -> WorkerResult {
    let cpu_start = thread_cpu();
    let wall_start = Instant::now();
    let plan = &run.plan;
    let state = Rc::new(WorkerState {
        index,
        recorder: RefCell::new(
            Recorder::with_groups(plan.groups.len(), run.check_count, run.live_groups)
                .with_group_tables(plan.target.group_by.len())
                .with_live_values(run.live_values && !plan.target.group_by.is_empty())
                .with_live_streams(run.live_streams)
                .with_service(plan.model()),
        ),
        in_flight: Cell::new(0),
        next_second: Cell::new(0),
    });
    let mut stop = run.stop.subscribe();

    // Everyone starts together, at the schedule's origin.
    tokio::time::sleep_until(run.start.into()).await;

    let mut vus = Vec::new();
    for (si, scenario) in plan.scenarios.iter().enumerate() {
        let stride = scenario.profile.workers(plan.threads);
        if index >= stride {
            continue;
        }
        let conns = VuConnections::new(&plan.target.connect);
        // The profile's model says how its iterations start: VUs in a loop, or a pacer.
        match scenario.profile.model() {
            LoadModel::Closed => {
                let gate = Rc::new(Gate::Closed(ClosedGate::new(run.clone(), si)));
                start_closed(&mut vus, &state, &gate, &run, si, stride, conns);
            }
            // Open model: the pacer starts VUs as the load needs them.
            LoadModel::Open => {
                // This worker's VUs: global VU numbers index, index + stride, … below the cap.
                let mine = (index as u32..scenario.max_vus()).step_by(stride);
                let gate = Rc::new(Gate::Open(OpenDispatch::new(mine.len())));
                vus.push(tokio::task::spawn_local(pacer(
                    state.clone(),
                    gate,
                    run.clone(),
                    si,
                    stride,
                    conns,
                )));
            }
        }
    }
    tokio::task::spawn_local(ticker(state.clone(), run.clone(), tx));

    tokio::select! {
        _ = async { for v in vus { let _ = v.await; } } => {}
        _ = stop.wait_for(|aborted| *aborted) => {}
    }

    let finished = Instant::now();
    let mut recorder = state.recorder.borrow_mut();
    let last_intervals = final_intervals(&state, &mut recorder, &run, finished);
    WorkerResult {
        recorder: std::mem::take(&mut *recorder),
        last_intervals,
        cpu: thread_cpu().saturating_sub(cpu_start),
        wall: finished - wall_start,
        finished,
    }
}

/// Starts every VU of closed scenario `scenario` that this worker (one of `stride` taking part)
/// runs: global VU numbers interleaved as the schedule's events are.
fn start_closed(
    vus: &mut Vec<tokio::task::JoinHandle<()>>,
    state: &Rc<WorkerState>,
    gate: &Rc<Gate>,
    run: &Arc<RunShared>,
    scenario: usize,
    stride: usize,
    mut conns: VuConnections,
) {
    let share = Interleave {
        worker: state.index,
        workers: stride,
    };
    let max_vus = u64::from(run.plan.scenarios[scenario].max_vus());
    for (slot, vu) in (0..)
        .map(|k| share.index(k))
        .take_while(|&n| n < max_vus)
        .enumerate()
    {
        vus.push(tokio::task::spawn_local(vu_loop(
            Vu {
                scenario,
                vu: vu as u32,
                slot,
            },
            conns.next(),
            state.clone(),
            gate.clone(),
            run.clone(),
        )));
    }
}

/// Sends this worker's interval figures to the control thread once per second.
async fn ticker(state: Rc<WorkerState>, run: Arc<RunShared>, tx: UnboundedSender<WorkerMessage>) {
    loop {
        let second = state.next_second.get();
        let at = run.measure_start + Duration::from_secs(second + 1);
        tokio::time::sleep_until(at.into()).await;
        let snapshot =
            state
                .recorder
                .borrow_mut()
                .take_interval(second, 1.0, state.in_flight.get());
        state.next_second.set(second + 1);
        if tx
            .send(WorkerMessage::Interval(Box::new(snapshot)))
            .is_err()
        {
            return;
        }
    }
}

/// The intervals the ticker had not taken when the worker finished at `now`: the whole seconds
/// it was late for (its wake-up raced the last responses), then the last, usually partial, one.
fn final_intervals(
    state: &WorkerState,
    recorder: &mut Recorder,
    run: &RunShared,
    now: Instant,
) -> Vec<IntervalSnapshot> {
    let in_flight = state.in_flight.get();
    let mut out = Vec::new();
    let mut second = state.next_second.get();
    let mut from = run.measure_start + Duration::from_secs(second);
    while now >= from + Duration::from_secs(1) {
        out.push(recorder.take_interval(second, 1.0, in_flight));
        second += 1;
        from += Duration::from_secs(1);
    }
    if now > from {
        let span = (now - from).as_secs_f64();
        out.push(recorder.take_last_interval(second, span, in_flight));
    }
    out
}
