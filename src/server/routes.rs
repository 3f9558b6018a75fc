//! The hyper service: routing, capacity limiting and per-route handlers.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::server::incoming::ReqBody;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio::sync::Notify;

use super::backends::{Backends, Front, metrics_page};
use super::body::TargetBody;
use super::capacity::Limiter;
use super::cookies::CookieRoute;
use super::metrics::{Metrics, RouteId};
use super::oracle::{HandlerTimer, HandlerTimes, TimedBody};
use super::respond::{bad_request, empty, json, method_not_allowed, static_text, text, with_type};
use super::stall::{self, Stall};
use super::tasks::TaskStore;
use super::{Capacity, Faults};

/// Largest `/bytes/N` body, in bytes (100 MiB).
pub(crate) const MAX_BYTES: u64 = 100 * 1024 * 1024;
/// Longest `/delay`, in milliseconds (10 minutes).
const MAX_DELAY_MS: f64 = 600_000.0;

const OCTETS: HeaderValue = HeaderValue::from_static("application/octet-stream");
const PROMETHEUS: HeaderValue =
    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");

/// State shared by every connection of one target.
#[derive(Debug)]
pub(crate) struct ServerState {
    /// Request counters.
    pub(crate) metrics: Metrics,
    /// The task collection, shared by REST `/tasks` and the gRPC Tasks service.
    pub(crate) tasks: TaskStore,
    pub(crate) capacity: Option<Limiter>,
    /// [`super::Faults::close_after_requests`]: counts answers towards it.
    pub(crate) close_after: Option<RequestCountdown>,
    /// [`super::Faults::stall`]: freezes every route but `/metrics` and `/stats`.
    stall: Option<Stall>,
    /// [`super::Faults::close_after`], on the target's clock.
    close_at: Option<Duration>,
    /// The start of the target's clock, on which stalls are aligned.
    epoch: Instant,
    /// The oracle: every timed request's handler time.
    pub(crate) handler_times: HandlerTimes,
    /// `--backends`: the round-robin front, when the target pretends to be several backends.
    pub(crate) front: Option<Front>,
}

/// Counts the requests answered and wakes the server when a limit is reached.
#[derive(Debug)]
pub(crate) struct RequestCountdown {
    limit: u64,
    answered: AtomicU64,
    /// Notified once, when `answered` reaches `limit`.
    pub(crate) reached: Notify,
}

impl RequestCountdown {
    /// Whether `limit` requests have been answered: the target has gone away, and a request
    /// that reaches an open connection after that is not answered ([`Gone`]).
    fn spent(&self) -> bool {
        self.answered.load(Ordering::Relaxed) >= self.limit
    }

    fn answered(&self) {
        if self.answered.fetch_add(1, Ordering::Relaxed) + 1 == self.limit {
            // Stores a permit if the server is not waiting yet: the wake-up is never lost.
            self.reached.notify_one();
        }
    }
}

impl ServerState {
    /// Fresh state, its clock starting now; `capacity.workers` must be in
    /// 1..=`Semaphore::MAX_PERMITS`.
    pub(crate) fn new(
        capacity: Option<Capacity>,
        faults: &Faults,
        backends: Option<&Backends>,
    ) -> Self {
        ServerState {
            metrics: Metrics::default(),
            tasks: TaskStore::default(),
            capacity: capacity.map(Limiter::new),
            close_after: faults.close_after_requests.map(|limit| RequestCountdown {
                limit,
                answered: AtomicU64::new(0),
                reached: Notify::new(),
            }),
            stall: faults.stall,
            close_at: faults.close_after,
            epoch: Instant::now(),
            handler_times: HandlerTimes::default(),
            front: backends.map(Front::new),
        }
    }

    /// Whether a fault has closed the target ([`Gone`]): its answers are spent or its time is
    /// up. The listener's task closes the listener and the open connections when it next runs;
    /// until then this keeps a connection opened before from being answered after the close.
    fn gone(&self) -> bool {
        self.close_after
            .as_ref()
            .is_some_and(RequestCountdown::spent)
            || self.close_at.is_some_and(|d| self.epoch.elapsed() >= d)
    }
}

/// A parsed request path.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Route {
    Root,
    Delay,
    /// The code, if it parsed as an integer.
    Status(Option<u16>),
    /// The length, if it parsed as an integer.
    Bytes(Option<u64>),
    Echo,
    Headers,
    Tasks,
    /// The id, if it parsed as an integer.
    TaskById(Option<u64>),
    Metrics,
    /// `GET /stats` (the oracle's figures).
    Stats,
    /// `POST /stats/reset`.
    StatsReset,
    Chaos,
    /// `/cookies`, `/cookies/set`, `/cookies/need`.
    Cookies(CookieRoute),
    /// `/sse` (a `text/event-stream`).
    Sse,
    /// `/ws`: a WebSocket echo.
    Ws,
    /// `/v1/chat/completions` (`true`) or `/v1/completions`: an OpenAI-compatible stream.
    Completions(bool),
    /// A gRPC call (`content-type: application/grpc`), whatever its path.
    Grpc,
    Unmatched,
}

impl Route {
    fn parse(path: &str) -> Route {
        match path {
            "/" => return Route::Root,
            "/delay" => return Route::Delay,
            "/echo" => return Route::Echo,
            "/headers" => return Route::Headers,
            "/tasks" => return Route::Tasks,
            "/metrics" => return Route::Metrics,
            "/stats" => return Route::Stats,
            "/stats/reset" => return Route::StatsReset,
            "/cookies" => return Route::Cookies(CookieRoute::Show),
            "/cookies/set" => return Route::Cookies(CookieRoute::Set),
            "/cookies/need" => return Route::Cookies(CookieRoute::Need),
            "/sse" => return Route::Sse,
            "/ws" => return Route::Ws,
            "/v1/chat/completions" => return Route::Completions(true),
            "/v1/completions" => return Route::Completions(false),
            _ => {}
        }
        if let Some(code) = path.strip_prefix("/status/") {
            Route::Status(code.parse().ok())
        } else if let Some(n) = path.strip_prefix("/bytes/") {
            Route::Bytes(n.parse().ok())
        } else if let Some(id) = path.strip_prefix("/tasks/") {
            Route::TaskById(id.parse().ok())
        } else if path.starts_with("/chaos/") {
            Route::Chaos
        } else {
            Route::Unmatched
        }
    }

    fn id(self) -> RouteId {
        match self {
            Route::Root => RouteId::Root,
            Route::Delay => RouteId::Delay,
            Route::Status(_) => RouteId::Status,
            Route::Bytes(_) => RouteId::Bytes,
            Route::Echo => RouteId::Echo,
            Route::Headers => RouteId::Headers,
            Route::Tasks => RouteId::Tasks,
            Route::TaskById(_) => RouteId::TaskById,
            Route::Metrics => RouteId::Metrics,
            Route::Stats | Route::StatsReset => RouteId::Stats,
            Route::Chaos => RouteId::Chaos,
            Route::Grpc => RouteId::Grpc,
            Route::Sse => RouteId::Sse,
            Route::Ws => RouteId::Ws,
            Route::Completions(_) => RouteId::Completions,
            Route::Cookies(CookieRoute::Show) => RouteId::Cookies,
            Route::Cookies(CookieRoute::Set) => RouteId::CookiesSet,
            Route::Cookies(CookieRoute::Need) => RouteId::CookiesNeed,
            Route::Unmatched => RouteId::Unmatched,
        }
    }

    /// The routes that observe the target: never stalled, queued, timed or counted as answers.
    fn observes(self) -> bool {
        matches!(self, Route::Metrics | Route::Stats | Route::StatsReset)
    }
}

/// Why a request is not answered: a fault has closed the target
/// ([`super::Faults::close_after_requests`], [`super::Faults::close_after`]). The request
/// arrived on a connection opened before, after the close; the service's error closes that
/// connection (HTTP/1) or resets the stream (HTTP/2, HTTP/3) without a response, as a server
/// that went away would. Requests already in a handler at the close are answered.
#[derive(Debug, thiserror::Error)]
#[error("the target has closed (a fault): no more answers")]
pub(crate) struct Gone;

/// Serves one request (the hyper service function).
pub(crate) async fn handle(
    state: Arc<ServerState>,
    req: Request<ReqBody>,
) -> Result<Response<TimedBody>, Gone> {
    // The oracle's handler time starts here, with the request head parsed.
    let started = Instant::now();
    let _in_flight = state.metrics.in_flight();
    let route = if super::grpc::is_grpc(&req) {
        Route::Grpc
    } else {
        Route::parse(req.uri().path())
    };
    if !route.observes() && state.gone() {
        return Err(Gone);
    }
    if !route.observes() {
        stall::wait_out(&[state.stall], state.epoch).await;
    }
    // Capacity mode: hold a worker for the service time plus the route's work.
    let _worker = match &state.capacity {
        Some(limiter) if !route.observes() => Some(limiter.hold().await),
        _ => None,
    };
    let visit = match &state.front {
        Some(front) if !route.observes() => Some(front.enter().await),
        _ => None,
    };
    let mut response = match route {
        Route::Grpc => super::grpc::handle(&state, req, started).await,
        Route::Sse if get(&req) => super::streams::sse(req.uri().query(), started),
        Route::Sse => method_not_allowed("GET, HEAD"),
        Route::Ws if *req.method() == Method::GET => super::ws::upgrade(req),
        Route::Ws => method_not_allowed("GET"),
        Route::Completions(chat) if req.method() == Method::POST => {
            super::streams::chat(req, started, chat).await
        }
        Route::Completions(_) => method_not_allowed("POST"),
        _ => respond(&state, route, req).await,
    };
    if let Some(visit) = visit {
        visit.leave(started, &mut response);
    }
    if !route.observes() {
        // Frozen, the endpoint sends nothing either.
        stall::wait_out(&[state.stall], state.epoch).await;
    }
    state.metrics.record(route.id(), response.status().as_u16());
    if let Some(countdown) = &state.close_after
        && !route.observes()
    {
        countdown.answered();
    }
    // Reflection streams last as long as the client keeps them: not a request's handler time.
    let timed = !route.observes() && !matches!(response.body(), TargetBody::Reflection(_));
    let timer = timed.then(|| HandlerTimer::new(Arc::clone(&state), started));
    Ok(response.map(|body| TimedBody::new(body, timer)))
}

async fn respond(state: &ServerState, route: Route, req: Request<ReqBody>) -> Response<TargetBody> {
    let get = get(&req);
    match route {
        Route::Root if get => static_text(StatusCode::OK, b"ok\n"),
        Route::Delay => match delay_of(req.uri().query()) {
            Ok((delay, stall)) => {
                stall::wait_out(&[stall], state.epoch).await;
                crate::timer::sleep(delay).await;
                stall::wait_out(&[stall], state.epoch).await;
                static_text(StatusCode::OK, b"ok\n")
            }
            Err(message) => bad_request(message),
        },
        Route::Status(code) => status(code),
        Route::Bytes(Some(n)) if get && n <= MAX_BYTES => {
            with_type(StatusCode::OK, OCTETS, TargetBody::pattern(n))
        }
        Route::Bytes(_) if get => bad_request(format_args!(
            "/bytes/N takes an integer N of at most {MAX_BYTES}"
        )),
        Route::Echo if *req.method() == Method::POST => echo(req),
        Route::Echo => method_not_allowed("POST"),
        Route::Headers if get => headers(&req),
        Route::Cookies(c) if get => super::cookies::respond(c, &req),
        Route::Tasks => state.tasks.collection(req).await,
        Route::TaskById(id) => state.tasks.item(id, req).await,
        Route::Metrics if get => with_type(StatusCode::OK, PROMETHEUS, metrics_page(state)),
        Route::Stats if get => stats(state, wants_reset(req.uri().query())),
        Route::StatsReset if *req.method() == Method::POST => stats(state, true),
        Route::StatsReset => method_not_allowed("POST"),
        Route::Root
        | Route::Bytes(_)
        | Route::Metrics
        | Route::Stats
        | Route::Headers
        | Route::Cookies(_) => method_not_allowed("GET, HEAD"),
        Route::Chaos if req.version() == http::Version::HTTP_2 => {
            match super::chaos::big_head_h2(req.uri().path(), req.uri().query(), &state.metrics) {
                Some(Ok(response)) => response,
                Some(Err(message)) => bad_request(message),
                None => static_text(
                    StatusCode::MISDIRECTED_REQUEST,
                    b"over HTTP/2 only /chaos/headers and /chaos/long-header are served\n",
                ),
            }
        }
        Route::Chaos => static_text(
            StatusCode::MISDIRECTED_REQUEST,
            b"/chaos/ paths must be the first request on a new connection\n",
        ),
        Route::Grpc | Route::Sse | Route::Ws | Route::Completions(_) | Route::Unmatched => {
            static_text(StatusCode::NOT_FOUND, b"not found\n")
        }
    }
}

/// Whether the request is a GET or HEAD.
fn get(req: &Request<ReqBody>) -> bool {
    matches!(*req.method(), Method::GET | Method::HEAD)
}

fn status(code: Option<u16>) -> Response<TargetBody> {
    // Up to 999, what HTTP/1.1's three digits allow: clients must cope with a code outside
    // 100–599 (volley counts one as `invalid_status`).
    let Some(code) = code.filter(|c| (100..=999).contains(c)) else {
        return bad_request("/status/CODE takes a code in 100..=999");
    };
    if code < 200 {
        return bad_request("a 1xx status cannot be a final response (hyper refuses to send one)");
    }
    let Ok(status) = StatusCode::from_u16(code) else {
        return bad_request("/status/CODE takes a code in 100..=999");
    };
    match code {
        // These statuses never carry a body.
        204 | 205 | 304 => empty(status),
        _ => text(
            status,
            format!("{code} {}\n", status.canonical_reason().unwrap_or("")),
        ),
    }
}

fn echo(req: Request<ReqBody>) -> Response<TargetBody> {
    let content_type = req.headers().get(CONTENT_TYPE).cloned();
    let mut response = Response::new(TargetBody::Echo(req.into_body()));
    if let Some(content_type) = content_type {
        response.headers_mut().insert(CONTENT_TYPE, content_type);
    }
    response
}

/// `GET /headers`: the request's headers as a JSON object, names in lower case, repeated
/// headers joined with `, ` — what a client really sent.
fn headers(req: &Request<ReqBody>) -> Response<TargetBody> {
    let mut seen = serde_json::Map::new();
    for (name, value) in req.headers() {
        let value = String::from_utf8_lossy(value.as_bytes());
        match seen.get_mut(name.as_str()) {
            Some(serde_json::Value::String(s)) => {
                s.push_str(", ");
                s.push_str(&value);
            }
            _ => {
                seen.insert(name.as_str().to_string(), value.into_owned().into());
            }
        }
    }
    json(StatusCode::OK, serde_json::Value::Object(seen).to_string())
}

/// `/stats`: the oracle's figures (handler times since the last reset), taken out with `reset`.
fn stats(state: &ServerState, reset: bool) -> Response<TargetBody> {
    let h = state.handler_times.snapshot(reset);
    let uptime_us = u64::try_from(state.epoch.elapsed().as_micros()).unwrap_or(u64::MAX);
    json(StatusCode::OK, super::oracle::render(&h, uptime_us))
}

/// Whether a `/stats` query asks for a read-and-reset (`reset=1` or `reset=true`).
fn wants_reset(query: Option<&str>) -> bool {
    query
        .unwrap_or("")
        .split('&')
        .any(|pair| pair == "reset=1" || pair == "reset=true")
}

/// The share of `/delay?dist=bimodal` requests that take ten times `ms`.
const BIMODAL_SLOW_SHARE: f64 = 0.1;

/// Why a `/delay` query cannot be served (the text of its 400 answer).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum DelayError {
    /// `ms` is not a number of milliseconds in range.
    #[error("ms must be a number in 0..={MAX_DELAY_MS}")]
    BadDelay,
    /// No `ms`.
    #[error("/delay needs ?ms=MILLISECONDS")]
    NoDelay,
    /// A `dist` other than `fixed`, `uniform`, `exp` and `bimodal`.
    #[error("unknown dist {0:?} (fixed, uniform, exp or bimodal)")]
    UnknownDist(String),
    /// The stall the query asks for.
    #[error(transparent)]
    Stall(#[from] stall::StallError),
}

/// What `/delay`'s query asks for: `ms` (float milliseconds) and `dist` (`fixed`, `uniform` in
/// [0, 2ms], `exp` with mean ms, or `bimodal`: ms for 90 % of the requests, 10·ms for the other
/// 10 %, drawn independently), and a stall of the endpoint, `stall_ms` every `every_ms`.
fn delay_of(query: Option<&str>) -> Result<(Duration, Option<Stall>), DelayError> {
    let mut ms = None;
    let mut dist = "fixed";
    let (mut stall_ms, mut every_ms) = (None, None);
    for pair in query.unwrap_or("").split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "ms" => ms = Some(value),
            "dist" => dist = value,
            "stall_ms" => stall_ms = Some(value),
            "every_ms" => every_ms = Some(value),
            _ => {}
        }
    }
    let stall = stall::from_query(stall_ms, every_ms)?;
    let ms: f64 = match ms.map(str::parse::<f64>) {
        Some(Ok(ms)) if ms.is_finite() && (0.0..=MAX_DELAY_MS).contains(&ms) => ms,
        Some(_) => return Err(DelayError::BadDelay),
        None => return Err(DelayError::NoDelay),
    };
    let ms = match dist {
        "fixed" => ms,
        "uniform" => fastrand::f64() * 2.0 * ms,
        // Inverse transform sampling; 1 - U is in (0, 1], so ln is finite.
        "exp" => -ms * (1.0 - fastrand::f64()).ln(),
        "bimodal" if fastrand::f64() < BIMODAL_SLOW_SHARE => ms * 10.0,
        "bimodal" => ms,
        other => return Err(DelayError::UnknownDist(other.to_string())),
    };
    Ok((
        Duration::from_secs_f64(ms.min(MAX_DELAY_MS * 10.0) / 1e3),
        stall,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_routes() {
        assert_eq!(Route::parse("/"), Route::Root);
        assert_eq!(Route::parse("/status/503"), Route::Status(Some(503)));
        assert_eq!(Route::parse("/status/x"), Route::Status(None));
        assert_eq!(Route::parse("/bytes/10"), Route::Bytes(Some(10)));
        assert_eq!(Route::parse("/tasks/7"), Route::TaskById(Some(7)));
        assert_eq!(Route::parse("/tasks/"), Route::TaskById(None));
        assert_eq!(Route::parse("/chaos/reset"), Route::Chaos);
        assert_eq!(Route::parse("/nope"), Route::Unmatched);
        assert_eq!(Route::parse("/delay"), Route::Delay);
        assert_eq!(Route::parse("/headers"), Route::Headers);
        assert_eq!(Route::parse("/stats"), Route::Stats);
        assert_eq!(Route::parse("/stats/reset"), Route::StatsReset);
    }

    #[test]
    fn parses_delays() {
        assert_eq!(
            delay_of(Some("ms=10")),
            Ok((Duration::from_millis(10), None))
        );
        assert_eq!(
            delay_of(Some("dist=fixed&ms=2.5")),
            Ok((Duration::from_micros(2500), None))
        );
        assert_eq!(
            delay_of(Some("ms=0&stall_ms=500&every_ms=5000")),
            Ok((
                Duration::ZERO,
                Some(Stall::new(Duration::from_millis(500), Duration::from_secs(5)).unwrap())
            ))
        );
        assert!(delay_of(Some("ms=0&stall_ms=500")).is_err());
        assert!(delay_of(Some("ms=0&stall_ms=5000&every_ms=500")).is_err());
        assert!(delay_of(None).is_err());
        assert!(delay_of(Some("ms=-1")).is_err());
        assert!(delay_of(Some("ms=NaN")).is_err());
        assert!(delay_of(Some("ms=inf")).is_err());
        assert!(delay_of(Some("ms=1&dist=gamma")).is_err());
        let slow = (0..2000)
            .filter(|_| delay_of(Some("ms=1&dist=bimodal")).unwrap().0 > Duration::from_millis(5))
            .count();
        assert!((100..=300).contains(&slow), "{slow} of 2000 slow");
        for _ in 0..1000 {
            let (d, _) = delay_of(Some("ms=10&dist=uniform")).unwrap();
            assert!(d <= Duration::from_millis(20));
        }
        let n = 20_000;
        let mean: f64 = (0..n)
            .map(|_| delay_of(Some("ms=10&dist=exp")).unwrap().0.as_secs_f64() * 1e3)
            .sum::<f64>()
            / n as f64;
        assert!((9.0..11.0).contains(&mean), "exp mean {mean}");
    }

    #[test]
    fn delay_errors_say_what_is_wrong() {
        let message = |q| delay_of(Some(q)).unwrap_err().to_string();
        assert_eq!(message("ms=-1"), "ms must be a number in 0..=600000");
        assert_eq!(message("x=1"), "/delay needs ?ms=MILLISECONDS");
        assert_eq!(
            message("ms=1&dist=gamma"),
            "unknown dist \"gamma\" (fixed, uniform, exp or bimodal)"
        );
        assert_eq!(
            message("ms=1&every_ms=5"),
            "stall_ms and every_ms go together"
        );
    }

    #[test]
    fn statuses() {
        assert_eq!(status(Some(503)).status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(status(Some(599)).status().as_u16(), 599);
        assert_eq!(status(Some(100)).status(), StatusCode::BAD_REQUEST);
        assert_eq!(status(Some(999)).status().as_u16(), 999);
        assert_eq!(status(Some(1000)).status(), StatusCode::BAD_REQUEST);
        assert_eq!(status(None).status(), StatusCode::BAD_REQUEST);
        assert!(matches!(
            status(Some(204)).into_body(),
            TargetBody::Full(None)
        ));
    }
}
