//! One worker thread: a current-thread runtime running its share of every scenario's VUs.
//!
//! Every VU is one task running [`vu_loop`], the single iteration loop of volley; the load model
//! only changes which gate hands it tickets. The worker's recorder lives in an `Rc<RefCell<_>>`:
//! all its tasks run on this thread, so recording needs neither lock nor atomic.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Sleep;

use super::gate::{ClosedGate, HandOut, OpenDispatch, Ticket};
use super::usage::thread_cpu;
use super::{RunShared, WorkerMessage, WorkerResult};
use bytes::Bytes;

use crate::plan::check::Captured;
use crate::plan::read::step_capture;
use crate::plan::{Body, DynamicRequest, Flow, Plan, Profile, Scenario, Step, StepRequest};
use crate::proto::ErrorKind;
use crate::proto::client::{Client, Connection, Protocol};
use crate::proto::grpc::GrpcCode;
use crate::proto::http1::Phase;
use crate::proto::message::{PreparedRequest, Request, RequestKind, Timing};
use crate::record::recorder::{IntervalSnapshot, Recorder, Sample, Window};
use crate::timer::PreciseTimer;

/// The gate of one scenario on this worker.
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

/// The workers that take part in a scenario: no more than it has VUs.
pub(super) fn participants(scenario: &Scenario, workers: usize) -> usize {
    workers.min(scenario.max_vus() as usize).max(1)
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
        recorder: RefCell::new(Recorder::with_groups(
            plan.groups.len(),
            run.check_count,
            run.live_groups,
        )),
        in_flight: Cell::new(0),
        next_second: Cell::new(0),
    });
    let mut stop = run.stop.subscribe();

    // Everyone starts together, at the schedule's origin.
    tokio::time::sleep_until(run.start.into()).await;

    let mut vus = Vec::new();
    for (si, scenario) in plan.scenarios.iter().enumerate() {
        let stride = participants(scenario, plan.threads);
        if index >= stride {
            continue;
        }
        // This worker's VUs: global VU numbers index, index + stride, …
        let mine = (index as u32..scenario.max_vus()).step_by(stride);
        let gate = Rc::new(match scenario.profile {
            Profile::Vus { .. } => Gate::Closed(ClosedGate::new(run.clone(), si)),
            Profile::Arrival { .. } => Gate::Open(OpenDispatch::new(mine.len())),
        });
        let connect = &plan.target.connect;
        let mut conns = VuConnections {
            http: Connections::new(&connect.client, connect.streams),
            grpc: connect
                .grpc_client
                .as_ref()
                .map(|c| Connections::new(c, connect.streams)),
        };
        match *gate {
            Gate::Closed(_) => {
                for (slot, vu) in mine.enumerate() {
                    vus.push(tokio::task::spawn_local(vu_loop(
                        Vu {
                            scenario: si,
                            vu,
                            slot,
                        },
                        conns.next(),
                        state.clone(),
                        gate.clone(),
                        run.clone(),
                    )));
                }
            }
            // Open model: the pacer starts VUs as the load needs them.
            Gate::Open(_) => vus.push(tokio::task::spawn_local(pacer(
                state.clone(),
                gate,
                run.clone(),
                si,
                stride,
                conns,
            ))),
        }
    }
    tokio::task::spawn_local(ticker(state.clone(), run.clone(), tx));

    tokio::select! {
        _ = async { for v in vus { let _ = v.await; } } => {}
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

/// Which VU a task is.
#[derive(Clone, Copy)]
struct Vu {
    scenario: usize,
    /// Global VU number within the scenario (0-based).
    vu: u32,
    /// Index among this worker's VUs of the scenario.
    slot: usize,
}

/// Per-VU state carried across requests.
struct VuRun<'a> {
    plan: &'a Plan,
    scenario: &'a Scenario,
    start: Instant,
    /// The scenario's scheduled end (none: it ends when its iterations are done).
    end: Option<Instant>,
    /// When the current iteration was due (or started): its requests belong to the ladder
    /// phase it fell in, even a later step sent after that phase ended.
    iteration_at: Instant,
    /// The connection (HTTP/2: stream handle) of HTTP steps.
    conn: Connection,
    /// The HTTP/2 connection of gRPC steps when HTTP steps speak HTTP/1.1.
    grpc_conn: Option<Connection>,
    deadline: Pin<&'a mut Sleep>,
    /// Variables extracted so far.
    vars: BTreeMap<String, minijinja::Value>,
    /// The template context for the current iteration (rebuilt after extractions).
    ctx: Option<minijinja::Value>,
    /// Dynamic requests are built here (reused).
    buf: Vec<u8>,
    body_buf: Vec<u8>,
    /// Rendered path and header values of a dynamic request (reused).
    scratch: Vec<u8>,
    /// Per header: where its value lies in `scratch`.
    header_at: Vec<std::ops::Range<usize>>,
}

/// The connections a scenario's VUs on one worker get: for HTTP steps, and for gRPC steps when
/// those need a client of their own.
struct VuConnections {
    http: Connections,
    grpc: Option<Connections>,
}

impl VuConnections {
    /// The next VU's pair.
    fn next(&mut self) -> (Connection, Option<Connection>) {
        (self.http.next(), self.grpc.as_mut().map(Connections::next))
    }
}

/// The VUs' connections of one scenario on one worker: with HTTP/2, `streams` VUs share each.
struct Connections {
    client: Client,
    streams: u32,
    handed: u32,
    last: Option<Connection>,
}

impl Connections {
    fn new(client: &Client, streams: u32) -> Self {
        Self {
            client: client.clone(),
            streams: streams.max(1),
            handed: 0,
            last: None,
        }
    }

    /// The next VU's connection: a share of the current one until it carries `streams` VUs.
    fn next(&mut self) -> Connection {
        let shared = if self.handed % self.streams == 0 {
            None
        } else {
            self.last.as_ref().and_then(Connection::share)
        };
        self.handed += 1;
        let conn = shared.unwrap_or_else(|| self.client.connection());
        self.last = conn.share();
        conn
    }
}

/// The single iteration loop: take a ticket, run the scenario's flow, until the gate says stop.
async fn vu_loop(
    who: Vu,
    conns: (Connection, Option<Connection>),
    state: Rc<WorkerState>,
    gate: Rc<Gate>,
    run: Arc<RunShared>,
) {
    let plan = &run.plan;
    let scenario = &plan.scenarios[who.scenario];
    let templated = scenario
        .steps
        .iter()
        .any(|s| matches!(s.request, StepRequest::Dynamic(_)));
    let deadline = pin!(tokio::time::sleep(Duration::ZERO));
    let mut vu = VuRun {
        plan,
        scenario,
        start: run.scenarios[who.scenario].start,
        end: run.scenarios[who.scenario].end,
        iteration_at: run.scenarios[who.scenario].start,
        conn: conns.0,
        grpc_conn: conns.1,
        deadline,
        vars: BTreeMap::new(),
        ctx: None,
        buf: Vec::new(),
        body_buf: Vec::new(),
        scratch: Vec::new(),
        header_at: Vec::new(),
    };
    let mut iteration = 0u64;
    let mut backoff = Backoff::default();
    loop {
        let ticket = match &*gate {
            Gate::Closed(g) => g.next(who.vu, iteration).await,
            Gate::Open(d) => d.next(who.slot).await,
        };
        let Some(ticket) = ticket else { break };
        vu.iteration_at = ticket.due;
        if ticket.measured {
            state.recorder.borrow_mut().record_iteration(scenario.group);
        }
        if templated {
            vu.ctx = Some(
                plan.templates
                    .context(who.vu, iteration, &scenario.name, &vu.vars),
            );
        }
        match &scenario.flow {
            Flow::Sequential => {
                let mut due = Some(ticket.due);
                for step in &scenario.steps {
                    let error = run_step(
                        &mut vu,
                        step,
                        due.take(),
                        ticket.measured,
                        &state,
                        &run,
                        who.vu,
                        iteration,
                    )
                    .await;
                    // Out of ports or descriptors: the rest of the iteration would fail the
                    // same way; wait before the next try instead of spinning.
                    if backoff.after(error, vu.end).await || run.stop.is_aborted() {
                        break;
                    }
                }
            }
            Flow::Weighted(cumulative) => {
                let total = cumulative.last().copied().unwrap_or(1);
                let pick = fastrand::u64(0..total);
                let i = cumulative.partition_point(|&c| c <= pick);
                let step = &scenario.steps[i.min(scenario.steps.len() - 1)];
                let error = run_step(
                    &mut vu,
                    step,
                    Some(ticket.due),
                    ticket.measured,
                    &state,
                    &run,
                    who.vu,
                    iteration,
                )
                .await;
                backoff.after(error, vu.end).await;
            }
        }
        if ticket.measured && vu.end.is_none_or(|end| Instant::now() <= end) {
            state.recorder.borrow_mut().record_completed(scenario.group);
        }
        iteration += 1;
    }
}

/// A VU's wait after the generator ran out of a local resource (ephemeral ports, file
/// descriptors): bounded exponential, from [`BACKOFF_MIN`] to [`BACKOFF_MAX`], reset by any
/// attempt that did not fail that way. Without it a VU whose connect fails at once retries in a
/// tight loop, burning the CPU and counting millions of failed attempts.
#[derive(Default)]
struct Backoff {
    next: Duration,
}

/// First wait after a local resource failure.
const BACKOFF_MIN: Duration = Duration::from_millis(1);
/// Longest wait between two tries.
const BACKOFF_MAX: Duration = Duration::from_millis(500);

impl Backoff {
    /// After an attempt that ended with `error`: waits (never past `end`) and returns true when
    /// it was a local resource failure.
    async fn after(&mut self, error: Option<ErrorKind>, end: Option<Instant>) -> bool {
        if !error.is_some_and(ErrorKind::is_local_resource) {
            self.next = Duration::ZERO;
            return false;
        }
        self.next = (self.next * 2).clamp(BACKOFF_MIN, BACKOFF_MAX);
        let mut wake = Instant::now() + self.next;
        if let Some(end) = end {
            wake = wake.min(end);
        }
        tokio::time::sleep_until(wake.into()).await;
        true
    }
}

/// How one step's request goes out this time.
enum Outgoing<'a> {
    /// Prepared before the run.
    Prepared(&'a PreparedRequest),
    /// Rendered and prepared now (HTTP/2, gRPC).
    Owned(PreparedRequest),
    /// Rendered now into the VU's buffer as HTTP/1.1 bytes; `true` when a body is expected.
    Bytes(bool),
}

/// What one exchange came to, as recorded.
struct Outcome {
    status: Option<u16>,
    error: Option<ErrorKind>,
    grpc: Option<GrpcCode>,
    timing: Timing,
    bytes_sent: u64,
    bytes_received: u64,
    connections_opened: u32,
}

impl Outcome {
    fn failed(error: ErrorKind) -> Self {
        Self {
            status: None,
            error: Some(error),
            grpc: None,
            timing: Timing::default(),
            bytes_sent: 0,
            bytes_received: 0,
            connections_opened: 0,
        }
    }
}

/// Sends one step's request and records it; runs its checks, extraction and think time.
/// Returns the failure, if the attempt failed.
#[allow(clippy::too_many_arguments)]
async fn run_step(
    vu: &mut VuRun<'_>,
    step: &Step,
    due: Option<Instant>,
    measured: bool,
    state: &WorkerState,
    run: &RunShared,
    vu_number: u32,
    iteration: u64,
) -> Option<ErrorKind> {
    let timeout = vu.plan.target.timeout;
    let outgoing = match &step.request {
        StepRequest::Static(s) => Outgoing::Prepared(&s.prepared),
        StepRequest::Dynamic(d) => match build_dynamic(vu, step, d) {
            Ok(o) => o,
            Err(()) => {
                let now = Instant::now();
                let outcome = Outcome::failed(ErrorKind::Template);
                record(vu, step, state, run, measured, now, now, due, &outcome);
                return outcome.error;
            }
        },
    };
    let capture = step_capture(step.capture);
    let conn = match (&mut vu.grpc_conn, step.grpc.is_some()) {
        (Some(c), true) => c,
        _ => &mut vu.conn,
    };
    state.in_flight.set(state.in_flight.get() + 1);
    let sent = Instant::now();
    vu.deadline.as_mut().reset((sent + timeout).into());
    let result = tokio::select! {
        biased;
        r = async {
            match &outgoing {
                Outgoing::Prepared(p) => conn.exchange(p).await,
                Outgoing::Owned(p) => conn.exchange(p).await,
                Outgoing::Bytes(expects_body) => {
                    conn.exchange_bytes(&vu.buf, *expects_body, capture).await
                }
            }
        } => r,
        _ = &mut vu.deadline => {
            conn.discard();
            Err(match conn.phase() {
                Phase::Connecting => ErrorKind::ConnectTimeout,
                Phase::Exchanging => ErrorKind::Timeout,
            })
        }
    };
    let done = Instant::now();
    state.in_flight.set(state.in_flight.get() - 1);
    let reached_server = result.is_ok() || !matches!(conn.phase(), Phase::Connecting);
    let bytes_sent = if reached_server {
        match &outgoing {
            Outgoing::Prepared(p) => p.bytes_sent(),
            Outgoing::Owned(p) => p.bytes_sent(),
            Outgoing::Bytes(_) => vu.buf.len() as u64,
        }
    } else {
        0
    };
    let bytes_received = conn.bytes_received();
    let connections_opened = conn.connections_opened();
    let (outcome, response) = match result {
        Ok(r) => {
            let error = match r.grpc_status {
                Some(_) => r.error(),
                None if step.expected_status.contains(&r.status) => None,
                None => r.error(),
            };
            let outcome = Outcome {
                status: Some(r.status),
                error,
                grpc: r.grpc_status,
                timing: r.timing,
                bytes_sent,
                bytes_received,
                connections_opened,
            };
            (outcome, Some(r))
        }
        Err(kind) => (
            Outcome {
                bytes_sent,
                bytes_received,
                connections_opened,
                ..Outcome::failed(kind)
            },
            None,
        ),
    };
    record(vu, step, state, run, measured, sent, done, due, &outcome);

    if !step.checks.is_empty() || !step.extract.is_empty() {
        let kept = response.as_ref().and_then(|r| r.captured.as_deref());
        let empty = http::HeaderMap::new();
        let headers = kept.map_or(&empty, |k| &k.headers);
        let body = kept.map_or(&[][..], |k| &k.body[..]);
        let mut captured = Captured::new(outcome.status, headers, body, done - sent);
        if let (Some(method), true) = (&step.grpc, !body.is_empty()) {
            // gRPC responses are protobuf: checks and extraction read them as JSON.
            if let Ok(json) = method.decode_json(body) {
                captured = captured.with_json(json);
            }
        }
        if measured && !step.checks.is_empty() {
            let mut rec = state.recorder.borrow_mut();
            for (i, check) in step.checks.iter().enumerate() {
                rec.record_check(step.first_check + i, check.passes(&captured));
            }
        }
        if !step.extract.is_empty() {
            for e in &step.extract {
                // A failed extraction must not leave a stale value from an earlier iteration.
                match e.apply(&captured) {
                    Some(v) => vu.vars.insert(e.var.clone(), v),
                    None => vu.vars.remove(&e.var),
                };
            }
            vu.ctx = Some(vu.plan.templates.context(
                vu_number,
                iteration,
                &vu.scenario.name,
                &vu.vars,
            ));
        }
    }
    if !step.think.is_zero() {
        tokio::time::sleep(step.think).await;
    }
    outcome.error
}

/// Records one request in the worker's recorder, with its scenario, step and phase groups.
#[allow(clippy::too_many_arguments)]
fn record(
    vu: &VuRun<'_>,
    step: &Step,
    state: &WorkerState,
    run: &RunShared,
    measured: bool,
    sent: Instant,
    done: Instant,
    due: Option<Instant>,
    outcome: &Outcome,
) {
    let mut rec = state.recorder.borrow_mut();
    if !measured {
        rec.record_warmup(&outcome.timing);
        return;
    }
    let due = due.unwrap_or(sent);
    let window = match (run.end, vu.end) {
        (Some(end), _) if done > end => Window::RunDrain,
        (_, Some(end)) if done > end => Window::ScenarioDrain,
        _ => Window::Inside,
    };
    let sample = Sample {
        latency_us: micros(done.saturating_duration_since(due)),
        service_us: micros(done - sent),
        lag_us: micros(sent.saturating_duration_since(due)),
        bytes_sent: outcome.bytes_sent,
        bytes_received: outcome.bytes_received,
        connections_opened: outcome.connections_opened,
        status: outcome.status,
        error: outcome.error,
        grpc: outcome.grpc,
        timing: outcome.timing,
        window,
        done_us: micros(done.saturating_duration_since(run.measure_start)),
    };
    let phase = if vu.scenario.phases.is_empty() {
        None
    } else {
        let t = vu.iteration_at.saturating_duration_since(vu.start);
        let i = vu.scenario.phases.partition_point(|p| p.end <= t);
        vu.scenario.phases.get(i).map(|p| p.group)
    };
    rec.record_in(&sample, &[vu.scenario.group, step.group, phase]);
    let live = &run.live[state.index];
    live.publish(rec.counters.requests, rec.counters.errors);
}

/// Renders a templated request (every buffer reused across requests): HTTP/1.1 into the VU's
/// byte buffer; HTTP/2 and gRPC into a request prepared now.
fn build_dynamic<'a>(
    vu: &mut VuRun<'_>,
    step: &Step,
    d: &DynamicRequest,
) -> Result<Outgoing<'a>, ()> {
    let templates = &vu.plan.templates;
    let empty = minijinja::Value::UNDEFINED;
    let ctx = vu.ctx.as_ref().unwrap_or(&empty);
    vu.body_buf.clear();
    match &d.body {
        Body::Empty => {}
        Body::Text(t) | Body::Json(t) => templates
            .render_into(t, ctx, &mut vu.body_buf)
            .map_err(|_| ())?,
    }
    vu.scratch.clear();
    vu.header_at.clear();
    templates
        .render_into(&d.path, ctx, &mut vu.scratch)
        .map_err(|_| ())?;
    let path_end = vu.scratch.len();
    // A rendered path with spaces or line breaks would corrupt the request line.
    if vu.scratch[..path_end]
        .iter()
        .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
    {
        return Err(());
    }
    for (_, value) in &d.headers {
        let start = vu.scratch.len();
        templates
            .render_into(value, ctx, &mut vu.scratch)
            .map_err(|_| ())?;
        if vu.scratch[start..]
            .iter()
            .any(|b| *b == b'\r' || *b == b'\n')
        {
            return Err(());
        }
        vu.header_at.push(start..vu.scratch.len());
    }
    let scratch = &vu.scratch;
    let connect = &vu.plan.target.connect;
    let client = connect.client_for(step.grpc.is_some());
    if client.protocol() == Protocol::Http1 {
        vu.buf.clear();
        crate::proto::http1::write_request(
            &mut vu.buf,
            &d.method,
            &vu.plan.target.host_header,
            &scratch[..path_end],
            d.headers
                .iter()
                .zip(&vu.header_at)
                .map(|((n, _), at)| (n.as_str(), &scratch[at.clone()])),
            &vu.body_buf,
            connect.keepalive,
        );
        return Ok(Outgoing::Bytes(d.method != "HEAD"));
    }
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|_| ());
    let body = match &step.grpc {
        Some(m) => {
            let json = std::str::from_utf8(&vu.body_buf).map_err(|_| ())?;
            m.encode_json(if json.is_empty() { "{}" } else { json })
                .map_err(|_| ())?
        }
        None => Bytes::copy_from_slice(&vu.body_buf),
    };
    let request = Request {
        method: http::Method::from_bytes(d.method.as_bytes()).map_err(|_| ())?,
        authority: vu.plan.target.host_header.clone(),
        path_and_query: text(&scratch[..path_end])?,
        headers: d
            .headers
            .iter()
            .zip(&vu.header_at)
            .map(|((n, _), at)| Ok((n.clone(), text(&scratch[at.clone()])?)))
            .collect::<Result<_, ()>>()?,
        body,
        kind: if step.grpc.is_some() {
            RequestKind::Grpc
        } else {
            RequestKind::Http
        },
        capture: step_capture(step.capture),
    };
    client
        .prepare(&request)
        .map(Outgoing::Owned)
        .map_err(|_| ())
}

fn micros(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}

/// Open model: hands each due iteration of this worker's share of the schedule to an idle VU,
/// starts a VU for it (up to the cap), or counts it dropped.
///
/// Nothing is handed out once the scenario's end is [`LATE_LIMIT`] past: iterations still owed
/// then (the generator fell far behind its schedule) are not sent that late, which would
/// stretch a 1 s run asked for 10⁸ req/s into many seconds; the shortfall shows in the achieved
/// rate, the send lag and their warnings. A generator a little behind still sends every
/// iteration due (exact counts).
async fn pacer(
    state: Rc<WorkerState>,
    gate: Rc<Gate>,
    run: Arc<RunShared>,
    scenario: usize,
    stride: usize,
    mut conns: VuConnections,
) {
    let Gate::Open(dispatch) = &*gate else {
        return;
    };
    let mut vus = Vec::new();
    let Profile::Arrival { ramp, limit, .. } = &run.plan.scenarios[scenario].profile else {
        return;
    };
    let start = run.scenarios[scenario].start;
    let end = run.scenarios[scenario].end;
    // With a limit (quick mode -n), exactly N measured iterations fall due (sent or dropped),
    // after the warm-up's.
    let warmup_count = ramp.count_before(run.measure_start.saturating_duration_since(start));
    let bound = limit.map(|n| warmup_count + n);
    let timer = PreciseTimer::new().ok();
    let index = |k: u64| state.index as u64 + k * stride as u64;
    let mut k = 0u64;
    loop {
        let n = index(k);
        if bound.is_some_and(|b| n >= b) || run.stop.is_aborted() {
            break;
        }
        let Some(offset) = ramp.due(n) else { break };
        let due = start + offset;
        match &timer {
            Some(t) => {
                if t.sleep_until(due).await.is_err() {
                    tokio::time::sleep_until(due.into()).await;
                }
            }
            None => tokio::time::sleep_until(due.into()).await,
        }
        if end.is_some_and(|end| Instant::now() >= end + LATE_LIMIT) {
            break;
        }
        let measured = due >= run.measure_start;
        match dispatch.hand_out(Ticket { due, measured }) {
            HandOut::Handed => {}
            HandOut::Start(slot) => vus.push(tokio::task::spawn_local(vu_loop(
                Vu {
                    scenario,
                    // Global VU numbers: this worker's index, index + stride, …
                    vu: (state.index + slot * stride) as u32,
                    slot,
                },
                conns.next(),
                state.clone(),
                gate.clone(),
                run.clone(),
            ))),
            HandOut::Dropped if measured => state
                .recorder
                .borrow_mut()
                .record_dropped(run.plan.scenarios[scenario].group),
            HandOut::Dropped => {}
        }
        k += 1;
        // Behind schedule, the next iteration is already due: let the VUs run and the reactor
        // deliver finished responses first, so overdue iterations go to VUs that are really free
        // instead of bursting onto new connections.
        if ramp
            .due(index(k))
            .is_some_and(|next| start + next <= Instant::now())
        {
            tokio::task::yield_now().await;
        }
    }
    dispatch.close();
    for vu in vus {
        let _ = vu.await;
    }
}

/// How long after a scenario's end the open model still sends iterations that fell due before it.
const LATE_LIMIT: Duration = Duration::from_secs(1);

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

/// The last, usually partial, interval.
fn final_interval(
    state: &WorkerState,
    recorder: &mut Recorder,
    run: &RunShared,
    now: Instant,
) -> Option<IntervalSnapshot> {
    let second = state.next_second.get();
    let from = run.measure_start + Duration::from_secs(second);
    if now <= from {
        return None;
    }
    let span = (now - from).as_secs_f64().min(1.0);
    Some(recorder.take_interval(second, span, state.in_flight.get()))
}
