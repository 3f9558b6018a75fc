//! HTTP/3 on hyperium's `h3` over quinn's QUIC (ALPN `h3`, TLS 1.3 inside the QUIC handshake).
//!
//! Shaped as HTTP/2 ([`super::http2`]): one [`SharedConnection`] is one QUIC connection — its
//! own UDP socket — that several [`StreamHandle`]s use at once, one request stream each, so
//! connections × streams requests are in flight. Each handle keeps its own clone of the
//! connection's `SendRequest`; the async mutex inside is only taken to (re)connect.
//!
//! Requests go out as HTTP/2's do ([`Http2Request`]: a head and a body; h3 encodes the head
//! with QPACK's static table). The connection's control streams are driven by a task spawned on
//! the current runtime; it ends when every handle is dropped or the connection fails.
//!
//! What HTTP/3 does not carry here: gRPC (it runs over HTTP/2 beside, see
//! [`super::client::Protocol::for_grpc`]), WebSocket and duplex streams (refused at plan load).

mod dial;
mod early;
mod errors;
mod exchange;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

pub use self::dial::{ALPN, Http3TlsError, NeedsTls13, QuicDialer, tls_config};
use self::early::{Answer, EarlyData};
use self::errors::h3_connection_kind;
use self::exchange::{Reading, send_and_read};
use super::ErrorKind;
use super::conn::{ConnPhase, Failure, Limits};
use super::dial::{ConnectTiming, DialFailure};
use super::http2::Http2Request;
use super::message::{BodyTap, Capture, Response};
use super::pick::{PickNames, Picked};
use crate::record::model::QuicFigures;

/// The h3 request sender of one QUIC connection.
type Sender = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// How long the check before a run waits for the QUIC handshake (UDP says nothing when no
/// one listens: only silence tells).
pub const PROBE_LIMIT: Duration = Duration::from_secs(5);

/// Timeouts in a row after which a handle gives up on its connection (as HTTP/2's).
const TIMEOUTS_BEFORE_RECONNECT: u32 = 2;

/// One QUIC connection shared by several stream handles; reconnects when it is lost.
#[derive(Clone)]
pub struct SharedConnection {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for SharedConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedConnection").finish_non_exhaustive()
    }
}

struct Shared {
    dialer: QuicDialer,
    /// Whether a connection outlives one exchange (`false`: a new connection per request).
    keepalive: bool,
    /// Response size limits.
    limits: Limits,
    slot: tokio::sync::Mutex<Slot>,
    /// The connections opened, for their figures (taken when one is opened and once at the
    /// end, never per request).
    quic: std::sync::Mutex<Opened>,
}

/// The current connection, numbered so that a handle can tell whether the connection it lost
/// has already been replaced.
#[derive(Default)]
struct Slot {
    generation: u64,
    sender: Option<Sender>,
    /// The current connection's early data, when it was opened in 0-RTT.
    early: Option<EarlyData>,
}

impl SharedConnection {
    /// A connection opened by `dialer` on first use; responses beyond `limits` fail.
    pub fn new(dialer: QuicDialer, keepalive: bool, limits: Limits) -> Self {
        Self {
            shared: Arc::new(Shared {
                dialer,
                keepalive,
                limits,
                slot: tokio::sync::Mutex::new(Slot::default()),
                quic: std::sync::Mutex::new(Opened::default()),
            }),
        }
    }

    /// A new handle for one more concurrent stream on this connection.
    pub fn handle(&self) -> StreamHandle {
        StreamHandle {
            shared: self.shared.clone(),
            sender: None,
            early: None,
            generation: 0,
            phase: ConnPhase::Connecting,
            received: 0,
            opened: 0,
            timeouts: 0,
            pick: PickNames::default(),
            picked: Picked::default(),
        }
    }

    /// Opens one connection now and closes it: the handshake's timing, or why it failed in
    /// words (no answer within [`PROBE_LIMIT`] is a failure).
    pub async fn probe(dialer: &QuicDialer) -> Result<ConnectTiming, DialFailure> {
        let mut phase = ConnPhase::Connecting;
        let dialled = tokio::time::timeout(PROBE_LIMIT, dialer.connect(&mut phase, false))
            .await
            .map_err(|_| dial::no_answer(dialer.addr(), PROBE_LIMIT))??;
        let timing = dialled.timing;
        dialled.conn.close(
            h3::error::Code::H3_NO_ERROR
                .value()
                .try_into()
                .unwrap_or_default(),
            b"",
        );
        Ok(timing)
    }
}

/// One stream's worth of a [`SharedConnection`], owned by one task: one request at a time.
pub struct StreamHandle {
    shared: Arc<Shared>,
    sender: Option<Sender>,
    /// The early data of the connection `sender` is on, when it was opened in 0-RTT.
    early: Option<EarlyData>,
    generation: u64,
    phase: ConnPhase,
    received: u64,
    opened: u32,
    /// Timeouts in a row ([`Self::discard`] calls without a completed exchange between).
    timeouts: u32,
    pick: PickNames,
    picked: Picked,
}

/// The QUIC connections a shared connection has had: the current one, and the figures of those
/// before it.
#[derive(Default)]
struct Opened {
    current: Option<(quinn::Connection, Option<EarlyData>)>,
    before: QuicFigures,
    /// What the handles have taken so far.
    taken: QuicFigures,
}

impl Opened {
    /// A new connection: the one before it is counted as it stands (closed or being closed).
    fn replace(&mut self, conn: quinn::Connection, early: Option<EarlyData>) {
        if let Some((old, early)) = self.current.replace((conn, early)) {
            self.before.add(&figures_of(&old, early.as_ref()));
        }
    }

    /// What every connection carried since the last take; `None` when none was opened.
    fn take(&mut self) -> Option<QuicFigures> {
        let mut sum = self.before;
        if let Some((conn, early)) = &self.current {
            sum.add(&figures_of(conn, early.as_ref()));
        }
        let new = sum.since(&self.taken);
        self.taken = sum;
        (sum.connections > 0).then_some(new)
    }
}

/// One connection's figures, as quinn counts them; `early` when it was opened in 0-RTT.
fn figures_of(conn: &quinn::Connection, early: Option<&EarlyData>) -> QuicFigures {
    let s = conn.stats();
    let answer = early.and_then(EarlyData::answer);
    QuicFigures {
        connections: 1,
        datagrams_sent: s.udp_tx.datagrams,
        udp_bytes_sent: s.udp_tx.bytes,
        send_calls: s.udp_tx.ios,
        datagrams_received: s.udp_rx.datagrams,
        udp_bytes_received: s.udp_rx.bytes,
        receive_calls: s.udp_rx.ios,
        packets_sent: s.path.sent_packets,
        packets_lost: s.path.lost_packets,
        bytes_lost: s.path.lost_bytes,
        congestion_events: s.path.congestion_events,
        zero_rtt_sent: early.is_some().into(),
        zero_rtt_accepted: (answer == Some(Answer::Accepted)).into(),
        zero_rtt_rejected: (answer == Some(Answer::Rejected)).into(),
    }
}

impl std::fmt::Debug for StreamHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamHandle")
            .field("generation", &self.generation)
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

impl StreamHandle {
    /// Another handle on the same connection.
    pub fn share(&self) -> Self {
        SharedConnection {
            shared: self.shared.clone(),
        }
        .handle()
        .with_pick(self.pick.clone())
    }

    /// The same handle picking these response headers' values ([`picked`](Self::picked)).
    pub fn with_pick(mut self, names: PickNames) -> Self {
        self.pick = names;
        self
    }

    /// The header values picked from the last response (none when it failed).
    pub fn picked(&self) -> &Picked {
        &self.picked
    }

    /// The phase the last exchange reached (read it after a timeout).
    pub fn phase(&self) -> ConnPhase {
        self.phase
    }

    /// Bytes received by the last exchange, complete or not (decoded head and body).
    pub fn bytes_received(&self) -> u64 {
        self.received
    }

    /// Connections the last exchange opened (0 or 1; 2 after a retry on a lost connection).
    pub fn connections_opened(&self) -> u32 {
        self.opened
    }

    /// What the QUIC connections behind this handle carried since any handle sharing them
    /// last asked: each handle asks once, when it is done, so the last one takes what the
    /// connections carried until it was; the takes add up to every count once. `None` when no
    /// connection was opened.
    pub fn quic_figures(&self) -> Option<QuicFigures> {
        self.shared
            .quic
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    /// After a timeout: the stream was abandoned when the exchange future was dropped; the
    /// connection stays shared — unless this handle timed out twice in a row.
    pub fn discard(&mut self) {
        self.timeouts += 1;
        if self.timeouts >= TIMEOUTS_BEFORE_RECONNECT {
            self.timeouts = 0;
            self.sender = None;
        }
    }

    /// Sends `req` on a new request stream and reads the response, handing the body to `tap`
    /// as it arrives (a streaming step; a body the tap stops early is cancelled with
    /// `H3_REQUEST_CANCELLED`). A connection found closing before the request was sent is
    /// replaced and the request sent once more; so is one whose 0-RTT early data, the request
    /// in it, the server rejected (on a full handshake then).
    pub async fn exchange_tapped(
        &mut self,
        req: &Http2Request,
        capture: Capture,
        mut tap: Option<&mut dyn BodyTap>,
    ) -> Result<Response, ErrorKind> {
        if req.grpc() || tap.as_deref().is_some_and(|t| t.duplex()) {
            // Neither reaches HTTP/3 (gRPC runs over HTTP/2; duplex streams are refused).
            return Err(ErrorKind::Protocol);
        }
        self.received = 0;
        self.opened = 0;
        if !self.pick.is_empty() {
            self.picked.clear();
        }
        let mut connect = ConnectTiming::default();
        let mut retried = false;
        loop {
            if self.sender.is_none() {
                // Boxed, as the other protocols' dials: once per connection. A request sent
                // again goes on a full handshake, certain to be read.
                if let Some(timing) = Box::pin(self.acquire(!retried)).await? {
                    connect = timing;
                }
            }
            self.phase = ConnPhase::Exchanging;
            let sender = self.sender.as_mut().expect("acquired above");
            let sent = Instant::now();
            let mut stream = match exchange::open(sender, req).await {
                Ok(stream) => stream,
                Err(f) if f.connection_lost && !retried => {
                    self.sender = None;
                    retried = true;
                    continue;
                }
                Err(f) => return self.finish(Err(f), connect),
            };
            let reading = Reading {
                capture,
                limits: self.shared.limits,
                picking: (!self.pick.is_empty()).then_some((&self.pick, &mut self.picked)),
                tap: tap.as_deref_mut(),
            };
            let result = send_and_read(&mut stream, req, sent, reading, &mut self.received).await;
            if result.is_err() && !retried && self.early_rejected().await {
                // The server dropped the early data unread: the request never reached it.
                self.sender = None;
                self.received = 0;
                retried = true;
                continue;
            }
            return self.finish(result, connect);
        }
    }

    /// Whether this handle's connection was opened in 0-RTT and the server rejected its early
    /// data (waits for the handshake to say so).
    async fn early_rejected(&mut self) -> bool {
        match &mut self.early {
            Some(early) => early.rejected().await,
            None => false,
        }
    }

    /// Keeps or drops the connection after an exchange, and stamps the handshake's timing on a
    /// response.
    fn finish(
        &mut self,
        result: Result<Response, Failure>,
        connect: ConnectTiming,
    ) -> Result<Response, ErrorKind> {
        match result {
            Ok(mut response) => {
                self.timeouts = 0;
                if !self.shared.keepalive {
                    self.sender = None;
                }
                response.timing.connect_us = connect.connect_us;
                response.timing.tls_us = connect.tls_us;
                response.timing.tls = connect.tls;
                Ok(response)
            }
            Err(failure) => {
                if failure.connection_lost || !self.shared.keepalive {
                    self.sender = None;
                }
                Err(failure.kind)
            }
        }
    }

    /// Takes the current connection, or opens one if it is missing or is the one this handle
    /// lost. Returns the timing when this call opened it.
    /// `early`: send the first requests of a resumed connection in 0-RTT (with `--zero-rtt`).
    async fn acquire(&mut self, early: bool) -> Result<Option<ConnectTiming>, ErrorKind> {
        let mut slot = self.shared.slot.lock().await;
        if self.shared.keepalive
            && slot.generation != self.generation
            && let Some(sender) = &slot.sender
        {
            self.sender = Some(sender.clone());
            self.early = slot.early.clone();
            self.generation = slot.generation;
            return Ok(None);
        }
        let dialled = self
            .shared
            .dialer
            .connect(&mut self.phase, early)
            .await
            .map_err(|f| f.kind)?;
        let conn = dialled.conn;
        self.opened += 1;
        let early = dialled
            .early
            .map(|accepted| EarlyData::follow(conn.clone(), accepted));
        self.shared
            .quic
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .replace(conn.clone(), early.clone());
        let (mut driver, sender) = h3::client::builder()
            .max_field_section_size(self.shared.limits.max_head_bytes as u64)
            .send_grease(false)
            .build::<_, _, Bytes>(h3_quinn::Connection::new(conn))
            .await
            .map_err(|e| h3_connection_kind(&e))?;
        tokio::spawn(async move {
            // The error, if any, reaches the handles through their next request.
            let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
        });
        slot.generation += 1;
        slot.sender = self.shared.keepalive.then(|| sender.clone());
        slot.early = early.clone();
        self.generation = slot.generation;
        self.sender = Some(sender);
        self.early = early;
        Ok(Some(dialled.timing))
    }
}
