//! One worker thread: a current-thread runtime running its share of the connections.
//!
//! Every connection is one task running [`connection_loop`], the single request loop of volley;
//! the load model only changes which [`Gate`] hands it tickets. The worker's recorder lives in an
//! `Rc<RefCell<_>>`: all its tasks run on this thread, so recording needs neither lock nor atomic.

use std::cell::{Cell, RefCell};
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;

use super::gate::{ClosedGate, OpenDispatch, Ticket};
use super::usage::thread_cpu;
use super::{RunShared, WorkerMessage, WorkerResult};
use crate::plan::{Limit, Load};
use crate::proto::ErrorKind;
use crate::proto::http1::{Connection, Phase};
use crate::record::recorder::{Recorder, Sample};
use crate::schedule::{OpenSchedule, split_evenly};
use crate::timer::PreciseTimer;

/// The gate of this worker's load model.
enum Gate {
    Closed(ClosedGate),
    Open(OpenDispatch),
}

/// State shared by the tasks of one worker (single thread).
struct WorkerState {
    index: usize,
    recorder: RefCell<Recorder>,
    in_flight: Cell<u64>,
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
    let workers = run.spec.threads;
    let slots = split_evenly(u64::from(run.spec.load.concurrency()), workers, index) as usize;
    let state = Rc::new(WorkerState {
        index,
        recorder: RefCell::new(Recorder::new()),
        in_flight: Cell::new(0),
        next_second: Cell::new(0),
    });
    let gate = Rc::new(match run.spec.load {
        Load::Closed { .. } => Gate::Closed(ClosedGate::new(run.clone())),
        Load::Open { .. } => Gate::Open(OpenDispatch::new(slots)),
    });
    let mut stop = run.stop.subscribe();

    // Everyone starts together, at the schedule's origin.
    tokio::time::sleep_until(run.start.into()).await;

    let connections: Vec<_> = (0..slots)
        .map(|slot| {
            tokio::task::spawn_local(connection_loop(
                slot,
                state.clone(),
                gate.clone(),
                run.clone(),
            ))
        })
        .collect();
    tokio::task::spawn_local(ticker(state.clone(), run.clone(), tx));
    if let Load::Open { rate_per_sec, .. } = run.spec.load {
        tokio::task::spawn_local(pacer(
            state.clone(),
            gate.clone(),
            run.clone(),
            rate_per_sec,
        ));
    }

    tokio::select! {
        _ = async { for c in connections { let _ = c.await; } } => {}
        _ = stop.wait_for(|aborted| *aborted) => {}
    }

    let finished = Instant::now();
    let mut recorder = state.recorder.borrow_mut();
    let last = final_interval(&state, &mut recorder, &run, finished);
    WorkerResult {
        recorder: std::mem::take(&mut *recorder),
        last_interval: last,
        cpu: thread_cpu().saturating_sub(cpu_start),
        wall: finished - wall_start,
        finished,
    }
}

/// The single request loop: take a ticket, send, read, record; until the gate says stop.
async fn connection_loop(slot: usize, state: Rc<WorkerState>, gate: Rc<Gate>, run: Arc<RunShared>) {
    let spec = &run.spec;
    let request = spec.request_bytes.clone();
    let mut conn = Connection::new(spec.addr, spec.keepalive);
    let live = &run.live[state.index];
    let mut deadline = pin!(tokio::time::sleep(Duration::ZERO));
    loop {
        let ticket: Option<Ticket> = match &*gate {
            Gate::Closed(g) => g.next(),
            Gate::Open(d) => d.next(slot).await,
        };
        let Some(ticket) = ticket else { break };
        state.in_flight.set(state.in_flight.get() + 1);
        let sent = Instant::now();
        deadline.as_mut().reset((sent + spec.timeout).into());
        let result = tokio::select! {
            biased;
            r = conn.exchange(&request) => r,
            _ = &mut deadline => {
                conn.discard();
                Err(match conn.phase() {
                    Phase::Connecting => ErrorKind::ConnectTimeout,
                    Phase::Exchanging => ErrorKind::Timeout,
                })
            }
        };
        let done = Instant::now();
        state.in_flight.set(state.in_flight.get() - 1);
        let mut rec = state.recorder.borrow_mut();
        if !ticket.measured {
            rec.record_warmup();
            continue;
        }
        let (status, error) = match result {
            Ok(r) => (Some(r.status), ErrorKind::from_status(r.status)),
            Err(kind) => (None, Some(kind)),
        };
        let reached_server = !matches!(conn.phase(), Phase::Connecting);
        rec.record(&Sample {
            latency_us: micros(done.saturating_duration_since(ticket.due)),
            service_us: micros(done - sent),
            lag_us: micros(sent.saturating_duration_since(ticket.due)),
            bytes_sent: if reached_server {
                request.len() as u64
            } else {
                0
            },
            bytes_received: conn.bytes_received(),
            connections_opened: conn.connections_opened(),
            status,
            error,
        });
        live.publish(rec.counters.requests, rec.counters.errors);
    }
}

fn micros(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}

/// Open model: hands each due request of this worker's share of the schedule to an idle
/// connection, or counts it dropped.
async fn pacer(state: Rc<WorkerState>, gate: Rc<Gate>, run: Arc<RunShared>, rate_per_sec: f64) {
    let Gate::Open(dispatch) = &*gate else {
        return;
    };
    let schedule = OpenSchedule { rate_per_sec };
    let workers = run.spec.threads;
    // With -n, exactly N measured requests fall due (sent or dropped), after the warm-up's.
    let index_bound = match run.spec.limit {
        Limit::Requests(n) => Some(schedule.due_before(run.spec.warmup) + n),
        Limit::Duration(_) => None,
    };
    let timer = PreciseTimer::new().ok();
    let mut k = 0u64;
    loop {
        let n = OpenSchedule::worker_index(state.index, workers, k);
        if index_bound.is_some_and(|bound| n >= bound) {
            break;
        }
        let due = run.start + schedule.due(n);
        if run.end.is_some_and(|end| due >= end) || run.stop.is_aborted() {
            break;
        }
        match &timer {
            Some(t) => {
                if t.sleep_until(due).await.is_err() {
                    tokio::time::sleep_until(due.into()).await;
                }
            }
            None => tokio::time::sleep_until(due.into()).await,
        }
        let measured = due >= run.measure_start;
        if !dispatch.hand_out(Ticket { due, measured }) && measured {
            state.recorder.borrow_mut().record_dropped();
        }
        k += 1;
        // Behind schedule, the next request is already due: let the connections run and the
        // reactor deliver finished responses first, so overdue requests go to connections that
        // are really free instead of bursting onto new ones.
        let next = run.start + schedule.due(OpenSchedule::worker_index(state.index, workers, k));
        if next <= Instant::now() {
            tokio::task::yield_now().await;
        }
    }
    dispatch.close();
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
        if tx.send(WorkerMessage::Interval(snapshot)).is_err() {
            return;
        }
    }
}

/// The last, usually partial, interval.
fn final_interval(
    state: &WorkerState,
    recorder: &mut Recorder,
    run: &RunShared,
    now: Instant,
) -> Option<crate::record::recorder::IntervalSnapshot> {
    let second = state.next_second.get();
    let from = run.measure_start + Duration::from_secs(second);
    if now <= from {
        return None;
    }
    let span = (now - from).as_secs_f64().min(1.0);
    Some(recorder.take_interval(second, span, state.in_flight.get()))
}
