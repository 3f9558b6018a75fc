//! The VU loop: the single iteration loop of volley. A VU takes a ticket from its gate, runs the
//! scenario's flow (each step: send, record, checks, extraction, think time), until the gate
//! says stop. The load model only changes which gate hands it tickets.

use std::collections::BTreeMap;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::time::Sleep;

use super::RunShared;
use super::backoff::Backoff;
use super::cookies::Jar;
use super::gate::Gate;
use super::messages;
use super::request::{Outgoing, RenderFailed, Scratch, outgoing, request_url};
use super::stream;
use super::worker::WorkerState;
use crate::plan::check::ResponseView;
use crate::plan::read::step_capture;
use crate::plan::{Flow, Scenario, Step, StepRequest};
use crate::proto::ErrorKind;
use crate::proto::client::{Connection, Tappable};
use crate::proto::conn::ConnPhase;
use crate::proto::grpc::GrpcCode;
use crate::proto::message::{Messages, Response, Timing};
use crate::record::recorder::{RequestSample, Send, Window};

/// Which VU a task is.
#[derive(Clone, Copy)]
pub(super) struct Vu {
    /// Index of its scenario in the plan.
    pub scenario: usize,
    /// Global VU number within the scenario (0-based).
    pub vu: u32,
    /// Index among this worker's VUs of the scenario.
    pub slot: usize,
}

/// Per-VU state carried across requests.
struct VuRun<'a> {
    run: &'a RunShared,
    state: &'a WorkerState,
    scenario: &'a Scenario,
    /// The scenario's index in the plan.
    scenario_index: usize,
    /// Global VU number within the scenario (0-based).
    number: u32,
    /// Iterations started before the current one.
    iteration: u64,
    start: Instant,
    /// The scenario's scheduled end (none: it ends when its iterations are done).
    end: Option<Instant>,
    /// When the schedule put the current iteration (its arrival, or its start): its requests
    /// belong to the ladder phase it fell in, even a later step sent after that phase ended.
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
    /// Templated requests are rendered here (reused).
    scratch: Scratch,
    /// The VU's cookies (none when its scenario keeps none).
    jar: Option<Jar>,
    /// The parsers and traces of its streaming steps.
    streams: crate::proto::stream::State,
}

impl VuRun<'_> {
    /// The result groups a request of `step` in the current iteration belongs to: its
    /// scenario's, its own, and the ladder phase the iteration fell in.
    fn groups(&self, step: &Step) -> [Option<usize>; 3] {
        let phases = &self.scenario.phases;
        let phase = if phases.is_empty() {
            None
        } else {
            let t = self.iteration_at.saturating_duration_since(self.start);
            phases
                .get(phases.partition_point(|p| p.end <= t))
                .map(|p| p.group)
        };
        [self.scenario.group, step.group, phase]
    }

    /// Rebuilds the template context from the VU, the iteration and the variables.
    fn refresh_context(&mut self) {
        self.ctx = Some(self.run.plan.templates.context(
            self.number,
            self.iteration,
            &self.scenario.name,
            &self.vars,
        ));
    }
}

/// The single iteration loop: take a ticket, run the scenario's flow, until the gate says stop.
pub(super) async fn vu_loop(
    who: Vu,
    conns: (Connection, Option<Connection>),
    state: Rc<WorkerState>,
    gate: Rc<Gate>,
    run: Arc<RunShared>,
) {
    let scenario = &run.plan.scenarios[who.scenario];
    let timing = &run.scenarios[who.scenario];
    let templated = scenario.steps.iter().any(|s| {
        matches!(s.request, StepRequest::Dynamic(_))
            || s.stream.as_ref().is_some_and(|st| st.message.is_some())
    });
    let mut vu = VuRun {
        run: &run,
        state: &state,
        scenario,
        scenario_index: who.scenario,
        number: who.vu,
        iteration: 0,
        start: timing.start,
        end: timing.end,
        iteration_at: timing.start,
        conn: conns.0,
        grpc_conn: conns.1,
        deadline: pin!(tokio::time::sleep(Duration::ZERO)),
        vars: BTreeMap::new(),
        ctx: None,
        scratch: Scratch::default(),
        jar: Jar::new(scenario.cookies),
        streams: Default::default(),
    };
    let mut backoff = Backoff::default();
    while let Some(ticket) = gate.next(who.vu, who.slot, vu.iteration).await {
        let began = Instant::now();
        vu.iteration_at = ticket.arrival;
        if let Some(jar) = &mut vu.jar {
            jar.new_iteration();
        }
        if ticket.measured {
            state.recorder.borrow_mut().record_iteration(scenario.group);
        }
        if templated {
            vu.refresh_context();
        }
        match &scenario.flow {
            Flow::Sequential => {
                let mut due = ticket.due;
                for step in &scenario.steps {
                    let error = run_step(&mut vu, step, due.take(), ticket.measured).await;
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
                let error = run_step(&mut vu, step, ticket.due, ticket.measured).await;
                backoff.after(error, vu.end).await;
            }
        }
        if ticket.measured && vu.end.is_none_or(|end| Instant::now() <= end) {
            state.recorder.borrow_mut().record_completed(scenario.group);
        }
        vu.iteration += 1;
        if let Some(pace) = scenario.pace {
            keep_pace(&vu, began + pace, ticket.measured).await;
        }
    }
    // HTTP/3: what this VU's QUIC connections carried since a VU sharing them last asked; the
    // last VU on them to finish takes the rest.
    for conn in std::iter::once(&vu.conn).chain(vu.grpc_conn.as_ref()) {
        if let Some(figures) = conn.quic_figures() {
            state.recorder.borrow_mut().record_quic(&figures);
        }
    }
}

/// Waits until `next` (not past the scenario's end), the start a VU's `pace` allows its next
/// iteration; the wait is counted when the iteration was measured.
async fn keep_pace(vu: &VuRun<'_>, next: Instant, measured: bool) {
    let until = vu.end.map_or(next, |end| next.min(end));
    let now = Instant::now();
    if until <= now {
        return;
    }
    if measured {
        let us = (until - now).as_micros() as u64;
        vu.state
            .recorder
            .borrow_mut()
            .record_pacing(vu.scenario.group, us);
    }
    tokio::time::sleep_until(until.into()).await;
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

/// One exchange as it happened: its result and when it was sent and done.
struct Exchanged {
    result: Result<Response, ErrorKind>,
    sent: Instant,
    done: Instant,
}

/// Sends one step's request and records it; runs its checks, extraction and think time.
/// Returns the failure, if the attempt failed.
async fn run_step(
    vu: &mut VuRun<'_>,
    step: &Step,
    due: Option<Instant>,
    measured: bool,
) -> Option<ErrorKind> {
    let run = vu.run;
    let jar = vu.jar.as_ref();
    let outgoing = match outgoing(&run.plan, step, vu.ctx.as_ref(), &mut vu.scratch, jar) {
        Ok(o) => o,
        Err(RenderFailed) => {
            let now = Instant::now();
            let outcome = Outcome::failed(ErrorKind::Template);
            let sample = record(vu, step, measured, now, now, due, &outcome);
            record_groups(vu, step, &vu.conn, None, sample.as_ref());
            return outcome.error;
        }
    };
    let exchanged = exchange(vu, step, &outgoing).await;
    let conn = match (&vu.grpc_conn, step.grpc.is_some()) {
        (Some(c), true) => c,
        _ => &vu.conn,
    };
    // A stream cut short by its message's template had been opened and sent.
    let reached_server = exchanged.result.is_ok()
        || conn.phase() == ConnPhase::Exchanging
        || matches!(exchanged.result, Err(ErrorKind::MessageTemplate));
    let bytes_sent = if reached_server {
        outgoing.bytes_sent(&vu.scratch, messages_sent(vu, step)) + stream_wire(vu, step)
    } else {
        0
    };
    let bytes_received = conn.bytes_received();
    let connections_opened = conn.connections_opened();
    let Exchanged { result, sent, done } = exchanged;
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
    let sample = record(vu, step, measured, sent, done, due, &outcome);
    record_groups(vu, step, conn, response.as_ref(), sample.as_ref());
    if let (Some(s), Some(sample)) = (&step.stream, &sample) {
        let times = stream::Times {
            due,
            sent,
            done,
            ok: outcome.error.is_none(),
            window: sample.window,
        };
        let groups = vu.groups(step);
        let mut rec = vu.state.recorder.borrow_mut();
        stream::record(&mut rec, &vu.streams, s, &times, &groups);
    }
    if let (Some(jar), Some(_)) = (vu.jar.as_mut(), &response) {
        let mut set = conn.picked().set_cookies().peekable();
        if set.peek().is_some()
            && let Some(url) = request_url(step, &vu.scratch)
        {
            jar.store(set, &url);
        }
    }
    if !step.checks.is_empty() || !step.extract.is_empty() {
        check_and_extract(vu, step, measured, response.as_ref(), &outcome, done - sent);
    }
    if !step.think.is_none() {
        let think = step.think.draw();
        if measured && sample.is_some() {
            let groups = [step.group, vu.scenario.group];
            let us = think.as_micros() as u64;
            vu.state.recorder.borrow_mut().record_think(groups, us);
        }
        tokio::time::sleep(think).await;
    }
    outcome.error
}

/// How many times the step's last exchange sent its body: a streaming request side counts the
/// messages it sent (none, when it failed first); any other exchange once.
fn messages_sent(vu: &VuRun<'_>, step: &Step) -> u64 {
    match &step.stream {
        // Messages rendered per send count in the protocol's bytes ([`stream_wire`]).
        Some(s) if s.message.is_some() => 0,
        Some(s) if s.spec.streams_request() => vu.streams.trace(&s.spec).sent,
        _ => 1,
    }
}

/// Bytes a streaming step's protocol sent beyond its request (WebSocket frames, messages
/// rendered per send).
fn stream_wire(vu: &VuRun<'_>, step: &Step) -> u64 {
    step.stream
        .as_ref()
        .map_or(0, |s| vu.streams.trace(&s.spec).wire_sent)
}

/// Sends `outgoing` on the step's connection and waits for the response, at most the target's
/// timeout (a timeout while connecting counts as a connect timeout).
async fn exchange(vu: &mut VuRun<'_>, step: &Step, outgoing: &Outgoing<'_>) -> Exchanged {
    let timeout = vu.run.plan.target.timeout;
    let capture = step_capture(step.capture);
    let conn = match (&mut vu.grpc_conn, step.grpc.is_some()) {
        (Some(c), true) => c,
        _ => &mut vu.conn,
    };
    let wire = &vu.scratch.wire;
    let mut rendered = messages::rendered(&vu.run.plan.templates, step, vu.ctx.as_ref());
    let source = rendered.as_mut().map(|r| r as &mut dyn Messages);
    let mut tap = step
        .stream
        .as_ref()
        .map(|s| vu.streams.start(&s.spec, source));
    let in_flight = &vu.state.in_flight;
    in_flight.set(in_flight.get() + 1);
    let sent = Instant::now();
    vu.deadline.as_mut().reset((sent + timeout).into());
    let result = tokio::select! {
        biased;
        r = async {
            match (outgoing, &mut tap) {
                (Outgoing::Prepared(p), None) => conn.exchange(p).await,
                (Outgoing::Owned(p), None) => conn.exchange(p).await,
                (Outgoing::Bytes(expects_body), None) => {
                    conn.exchange_bytes(wire, *expects_body, capture).await
                }
                (Outgoing::Prepared(p), Some(tap)) => {
                    conn.exchange_tapped(Tappable::Prepared(p), p.capture(), tap).await
                }
                (Outgoing::Owned(p), Some(tap)) => {
                    conn.exchange_tapped(Tappable::Prepared(p), p.capture(), tap).await
                }
                (Outgoing::Bytes(expects_body), Some(tap)) => {
                    let bytes = Tappable::Bytes(wire, *expects_body);
                    conn.exchange_tapped(bytes, capture, tap).await
                }
            }
        } => r,
        _ = &mut vu.deadline => {
            conn.discard();
            Err(match conn.phase() {
                ConnPhase::Connecting => ErrorKind::ConnectTimeout,
                ConnPhase::Handshaking => ErrorKind::TlsHandshakeTimeout,
                ConnPhase::Exchanging => ErrorKind::Timeout,
            })
        }
    };
    let done = Instant::now();
    in_flight.set(in_flight.get() - 1);
    // A message that could not be rendered ended the stream early: the attempt failed.
    let result = match rendered {
        Some(r) if r.failed => Err(ErrorKind::MessageTemplate),
        _ => result,
    };
    Exchanged { result, sent, done }
}

/// Runs the step's checks (measured iterations only) and extractions on the response.
fn check_and_extract(
    vu: &mut VuRun<'_>,
    step: &Step,
    measured: bool,
    response: Option<&Response>,
    outcome: &Outcome,
    took: Duration,
) {
    let kept = response.and_then(|r| r.captured.as_deref());
    let empty = http::HeaderMap::new();
    let headers = kept.map_or(&empty, |k| &k.headers);
    let body = kept.map_or(&[][..], |k| &k.body[..]);
    let mut view = ResponseView::new(outcome.status, headers, body, took);
    if let (Some(method), true) = (&step.grpc, !body.is_empty()) {
        // gRPC responses are protobuf: checks and extraction read them as JSON.
        if let Ok(json) = method.decode_json(body) {
            view = view.with_json(json);
        }
    }
    if measured && !step.checks.is_empty() {
        let mut rec = vu.state.recorder.borrow_mut();
        for (i, check) in step.checks.iter().enumerate() {
            rec.record_check(step.first_check + i, check.passes(&view));
        }
    }
    if !step.extract.is_empty() {
        for e in &step.extract {
            // A failed extraction must not leave a stale value from an earlier iteration.
            match e.apply(&view) {
                Some(v) => vu.vars.insert(e.var.clone(), v),
                None => vu.vars.remove(&e.var),
            };
        }
        vu.refresh_context();
    }
}

/// Records a measured exchange in the step's group-by tables, if it has any.
#[inline]
fn record_groups(
    vu: &VuRun<'_>,
    step: &Step,
    conn: &Connection,
    response: Option<&Response>,
    sample: Option<&RequestSample>,
) {
    if let (Some(sample), false) = (sample, step.group_by.is_empty()) {
        let mut rec = vu.state.recorder.borrow_mut();
        let tables = &vu.run.plan.target.group_by;
        super::grouping::record_groups(&mut rec, tables, step, conn, response, sample);
    }
}

/// Records one request in the worker's recorder, with its scenario, step and phase groups;
/// returns what was recorded when it was measured.
fn record(
    vu: &VuRun<'_>,
    step: &Step,
    measured: bool,
    sent: Instant,
    done: Instant,
    due: Option<Instant>,
    outcome: &Outcome,
) -> Option<RequestSample> {
    let (run, state) = (vu.run, vu.state);
    let mut rec = state.recorder.borrow_mut();
    if !measured {
        rec.record_warmup(&outcome.timing, outcome.connections_opened);
        return None;
    }
    // The run's drain begins at its scheduled end. A timed scenario's requests drain after the
    // timed scenarios' end, which holds the window (`window::window_end`), even beside a
    // scenario that ends by a count, whose time limit (`max_duration`) is only a bound.
    let run_end = match vu.scenario.profile.ends_by_count() {
        true => run.end,
        false => run.held_until.or(run.end),
    };
    let window = match (run_end, vu.end) {
        (Some(end), _) if done > end => Window::RunDrain,
        (_, Some(end)) if done > end => Window::ScenarioDrain,
        _ => Window::Inside,
    };
    let service_us = micros(done - sent);
    let sample = RequestSample {
        latency_us: due.map_or(service_us, |due| {
            micros(done.saturating_duration_since(due))
        }),
        service_us,
        lag_us: due.map(|due| micros(sent.saturating_duration_since(due))),
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
    rec.record_in(&sample, &vu.groups(step));
    if let Some(due) = due {
        let at = |t: Instant| micros(t.saturating_duration_since(run.measure_start));
        let send = Send {
            due_us: at(due),
            sent_us: Some(at(sent)),
        };
        rec.record_send(vu.scenario_index, send);
    }
    let live = &run.live[state.index];
    live.publish(rec.counters.requests, rec.counters.errors);
    Some(sample)
}

/// A duration in whole microseconds, saturating.
pub(super) fn micros(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}
