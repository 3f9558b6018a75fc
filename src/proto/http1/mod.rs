//! HTTP/1.1, written for the load generator's hot path, over plain TCP or TLS.
//!
//! Why not hyper's client: hyper allocates a request and header map per call and runs a connection
//! task beside each request future. oha, which uses it, measured 7.4 CPU µs per request on this
//! project's 2-core bench machine against wrk's 4.8; volley's acceptance bound is 1.2 × wrk. Here the
//! request bytes are built once per run, the response head is parsed in place with `httparse`
//! (a stack array of headers), and the body is read into a per-connection buffer and discarded,
//! counted but never copied. Nothing on this path allocates after the connection's first request
//! unless the request asks to [`Capture`] part of the response.
//!
//! `Connection` is generic over how it connects ([`Dial`]): plain TCP and TLS each get their own
//! compiled copy of the loop, so TLS costs plain TCP nothing.

mod body;
mod parse;
mod request;

use std::net::SocketAddr;
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use self::body::{Body, Capturing};
use self::parse::{Framing, Head, HeadCache, pick_headers};
use super::ErrorKind;
use super::conn::{ConnPhase, Limits};
use super::dial::{ConnectTiming, Dial, TcpDialer, micros_since};
use super::message::{BodyTap, Capture, Response, Timing};
use super::pick::{PickNames, Picked};
pub use request::{RequestBytes, write_request};

/// Initial size of a connection's read buffer, bytes: room for a typical response head and a
/// small body. At 16 KiB it was most of a connection's memory (bench/README.md, "Memory per
/// connection"), so it starts small and grows only for the responses that need it.
const READ_BUF_BYTES: usize = 1024;

/// Size, bytes, that a read buffer grows to (doubling each time a read fills it) while reading
/// bodies that do not fit: large bodies are then read in reads this big. A head larger than the
/// buffer grows it too, up to the head limit.
const BODY_BUF_BYTES: usize = 16 * 1024;

/// One client connection, owned by one task, reconnecting as needed.
#[derive(Debug)]
pub struct Http1Connection<D: Dial = TcpDialer> {
    dialer: D,
    stream: Option<D::Stream>,
    buf: Vec<u8>,
    /// The last response head parsed, to skip parsing the same head again.
    heads: HeadCache,
    keepalive: bool,
    /// Response size limits.
    limits: Limits,
    phase: ConnPhase,
    /// Bytes read by the current exchange, kept here so a failed exchange still reports them.
    received: u64,
    /// Connections this exchange opened (0, 1, or 2 after a stale keep-alive retry).
    opened: u32,
    /// How opening the last connection of this exchange went (zero when none was opened).
    connect: ConnectTiming,
    /// With raw capture on ([`exchange`](Connection::exchange)): the last response's head.
    head: Vec<u8>,
    /// With raw capture on: the last response's body (at most [`MAX_CAPTURE_BYTES`](super::conn::MAX_CAPTURE_BYTES)).
    body: Vec<u8>,
    /// Response headers whose values are picked (`--group-by header:NAME`); usually none.
    pick: PickNames,
    /// The values picked from the last response.
    picked: Picked,
}

impl Http1Connection<TcpDialer> {
    /// A plain-TCP connection to `addr`; nothing is opened until the first exchange.
    pub fn new(addr: SocketAddr, keepalive: bool) -> Self {
        Self::with_dialer(TcpDialer::new(addr, None), keepalive)
    }
}

impl<D: Dial> Http1Connection<D> {
    /// A connection opened by `dialer`; nothing is opened until the first exchange.
    pub fn with_dialer(dialer: D, keepalive: bool) -> Self {
        Self {
            dialer,
            stream: None,
            buf: Vec::new(),
            heads: HeadCache::default(),
            keepalive,
            limits: Limits::default(),
            phase: ConnPhase::Connecting,
            received: 0,
            opened: 0,
            connect: ConnectTiming::default(),
            head: Vec::new(),
            body: Vec::new(),
            pick: PickNames::default(),
            picked: Picked::default(),
        }
    }

    /// The same connection with these response size limits (default: [`Limits::default`]).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The same connection picking these response headers' values ([`picked`](Self::picked)).
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

    /// Bytes received by the last exchange, complete or not.
    pub fn bytes_received(&self) -> u64 {
        self.received
    }

    /// Connections opened by the last exchange.
    pub fn connections_opened(&self) -> u32 {
        self.opened
    }

    /// The last raw-captured response head (empty without capture).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The last raw-captured response body (empty without capture).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// Drops the connection (after an error or timeout); the next exchange reconnects.
    pub fn discard(&mut self) {
        self.stream = None;
    }

    /// Sends the serialised request `req` and reads the whole response (the engine's form).
    ///
    /// `expects_body` is false for HEAD. With `capture`, the response head and body (up to
    /// [`MAX_CAPTURE_BYTES`](super::conn::MAX_CAPTURE_BYTES)) are kept for [`head`](Self::head) and [`body`](Self::body).
    ///
    /// A reused keep-alive connection that the server had already closed is retried once on a
    /// fresh connection, as browsers and proxies do, when no response byte had arrived.
    /// Cancel-safe in the sense the engine needs: dropping the future mid-way leaves the
    /// connection to be [`discard`](Self::discard)ed.
    pub async fn exchange(
        &mut self,
        req: &[u8],
        expects_body: bool,
        capture: bool,
    ) -> Result<Response, ErrorKind> {
        if capture {
            self.head.clear();
            self.body.clear();
        }
        self.exchange_with(req, expects_body, Capture::default(), capture, None)
            .await
    }

    /// Like [`exchange`](Self::exchange) for a built request, keeping what `capture` asks for
    /// in the returned [`Response`].
    pub async fn exchange_capturing(
        &mut self,
        req: &RequestBytes,
        capture: Capture,
    ) -> Result<Response, ErrorKind> {
        self.exchange_with(req.as_bytes(), req.expects_body(), capture, false, None)
            .await
    }

    /// Like [`exchange_capturing`](Self::exchange_capturing) for serialised request bytes (a
    /// request rendered per send); `expects_body` is false for HEAD.
    pub async fn exchange_bytes(
        &mut self,
        req: &[u8],
        expects_body: bool,
        capture: Capture,
    ) -> Result<Response, ErrorKind> {
        self.exchange_with(req, expects_body, capture, false, None)
            .await
    }

    /// Like [`exchange_bytes`](Self::exchange_bytes), handing the body to `tap` as it arrives
    /// (a streaming step); the connection is closed after a body the tap stopped early.
    pub async fn exchange_tapped(
        &mut self,
        req: &[u8],
        expects_body: bool,
        capture: Capture,
        tap: &mut dyn BodyTap,
    ) -> Result<Response, ErrorKind> {
        self.exchange_with(req, expects_body, capture, false, Some(tap))
            .await
    }

    async fn exchange_with(
        &mut self,
        req: &[u8],
        expects_body: bool,
        capture: Capture,
        raw: bool,
        mut tap: Option<&mut dyn BodyTap>,
    ) -> Result<Response, ErrorKind> {
        self.received = 0;
        self.opened = 0;
        self.connect = ConnectTiming::default();
        if !self.pick.is_empty() {
            self.picked.clear();
        }
        let reused = self.stream.is_some();
        let first = self
            .exchange_once(req, expects_body, capture, raw, reborrow(&mut tap))
            .await;
        match first {
            Err(ErrorKind::Reset | ErrorKind::Closed) if reused && self.received == 0 => {
                self.stream = None;
                self.exchange_once(req, expects_body, capture, raw, tap)
                    .await
            }
            other => other,
        }
    }

    async fn exchange_once(
        &mut self,
        req: &[u8],
        expects_body: bool,
        capture: Capture,
        raw: bool,
        tap: Option<&mut dyn BodyTap>,
    ) -> Result<Response, ErrorKind> {
        if self.stream.is_none() {
            self.phase = ConnPhase::Connecting;
            // Boxed: the dial future (a TLS handshake's is large) would otherwise sit inline in
            // every exchange's future, in each VU task, for the connection's whole life; this is
            // one allocation per connection, none per request.
            let (tcp, timing) = Box::pin(self.dialer.connect()).await?;
            self.phase = ConnPhase::Handshaking;
            let (stream, timing) = Box::pin(self.dialer.handshake(tcp, timing)).await?;
            self.opened += 1;
            self.stream = Some(stream);
            self.connect = timing;
            if self.buf.is_empty() {
                self.buf.resize(READ_BUF_BYTES, 0);
            }
        }
        self.phase = ConnPhase::Exchanging;
        let result = self
            .write_and_read(req, expects_body, capture, raw, tap)
            .await;
        match result {
            Ok((response, reusable)) => {
                if !reusable || !self.keepalive {
                    self.stream = None;
                }
                Ok(response)
            }
            Err(kind) => {
                self.stream = None;
                Err(kind)
            }
        }
    }

    /// Writes the request and reads one response; returns it and whether the connection may be
    /// reused.
    async fn write_and_read(
        &mut self,
        req: &[u8],
        expects_body: bool,
        capture: Capture,
        raw: bool,
        tap: Option<&mut dyn BodyTap>,
    ) -> Result<(Response, bool), ErrorKind> {
        let Self {
            stream,
            buf,
            heads,
            received,
            connect,
            head: head_out,
            body: body_out,
            limits,
            pick,
            picked,
            ..
        } = self;
        let stream = stream.as_mut().expect("connected above");
        let sent = Instant::now();
        write(stream, req).await?;
        let (head, filled, wait_us) =
            read_head(stream, buf, heads, received, limits.max_head_bytes, sent).await?;
        if !pick.is_empty() {
            pick_headers(&buf[..head.len], pick, picked);
        }
        let mut tap = tap;
        if head.status == 101 {
            // Switching protocols (WebSocket): the session takes the connection, then it closes.
            let upgrade = tap.as_mut().and_then(|t| t.upgrade());
            let Some(upgrade) = upgrade else {
                return Err(ErrorKind::InvalidResponse);
            };
            let (head_bytes, early) = buf[..filled].split_at(head.len);
            upgrade.run(stream, head_bytes, early, received).await?;
            let response = response(head.status, *received, connect, wait_us, None);
            return Ok((response, false));
        }
        let mut kept = capture
            .any()
            .then(|| Capturing::new(capture, &buf[..head.len]));
        if raw {
            head_out.extend_from_slice(&buf[..head.len]);
        }
        let (framing, mut reusable) = framing(&head, expects_body);
        let mut body = Body {
            stream,
            full: filled == buf.len(),
            buf,
            received,
            kept: kept.as_mut(),
            raw: raw.then_some(body_out),
            max: limits.body_cap(),
            at: tap.is_some().then(Instant::now),
            // Re-coerced to the body's shorter lifetime (see `reborrow`): `tap` as it is would
            // tie every other borrow of the body to the caller's.
            tap: match tap {
                Some(t) => Some(t),
                None => None,
            },
        };
        if body.read(head.len, filled, framing).await? {
            // Bytes beyond the response: the server pipelined or misbehaved; start afresh.
            reusable = false;
        }
        let captured = kept.map(Capturing::finish);
        let response = response(head.status, *received, connect, wait_us, captured);
        Ok((response, reusable))
    }
}

/// The response of an exchange that read `received` bytes, on a connection opened as
/// `connect` says, whose first byte came `wait_us` after the send.
fn response(
    status: u16,
    received: u64,
    connect: &ConnectTiming,
    wait_us: u64,
    captured: Option<Box<super::message::Captured>>,
) -> Response {
    Response {
        status,
        grpc_status: None,
        bytes_received: received,
        timing: Timing {
            connect_us: connect.connect_us,
            tls_us: connect.tls_us,
            wait_us,
            tls: connect.tls,
        },
        captured,
    }
}

/// The tap again, for one more exchange (a trait object behind `&mut` shortens its lifetime
/// only where it is coerced, never inside an `Option`).
fn reborrow<'s>(tap: &'s mut Option<&mut dyn BodyTap>) -> Option<&'s mut dyn BodyTap> {
    match tap {
        Some(t) => Some(&mut **t),
        None => None,
    }
}

/// Writes the whole request.
async fn write<S: AsyncWrite + Unpin>(stream: &mut S, req: &[u8]) -> Result<(), ErrorKind> {
    stream
        .write_all(req)
        .await
        .map_err(|e| ErrorKind::from_io(&e))?;
    // TLS buffers what it encrypts; plain TCP's flush does nothing.
    stream.flush().await.map_err(|e| ErrorKind::from_io(&e))
}

/// Reads until a complete final response head is buffered at the start of `buf`, skipping
/// interim responses (100 Continue, 103 Early Hints). Returns the head, the bytes buffered
/// (head and any body bytes after it) and the wait from `sent` to the first byte, µs. The
/// buffer grows only on the way to `max_head`: memory stays bounded.
async fn read_head<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
    heads: &mut HeadCache,
    received: &mut u64,
    max_head: usize,
    sent: Instant,
) -> Result<(Head, usize, u64), ErrorKind> {
    let mut wait_us = None;
    let mut filled = 0usize;
    loop {
        if filled > 0 {
            match heads.parse(&buf[..filled])? {
                Some(head) if head.len > max_head => return Err(ErrorKind::HeaderTooLarge),
                Some(head) if (100..200).contains(&head.status) && head.status != 101 => {
                    buf.copy_within(head.len..filled, 0);
                    filled -= head.len;
                    continue;
                }
                Some(head) => return Ok((head, filled, wait_us.unwrap_or_default())),
                None if filled >= max_head => return Err(ErrorKind::HeaderTooLarge),
                None if filled == buf.len() => buf.resize((buf.len() * 2).min(max_head), 0),
                None => {}
            }
        }
        let n = read_some(stream, &mut buf[filled..]).await?;
        if n == 0 {
            return Err(ErrorKind::Closed);
        }
        wait_us.get_or_insert_with(|| micros_since(sent));
        *received += n as u64;
        filled += n;
    }
}

/// How the body of a response with `head` is delimited, and whether the connection may be
/// reused after it (not when the body runs until the connection closes).
fn framing(head: &Head, expects_body: bool) -> (Framing, bool) {
    let reusable = !head.close;
    if !expects_body || head.status == 204 || head.status == 304 {
        (Framing::Length(0), reusable)
    } else if head.chunked {
        (Framing::Chunked, reusable)
    } else if let Some(len) = head.content_length {
        (Framing::Length(len), reusable)
    } else {
        (Framing::UntilClose, false)
    }
}

/// Reads at least one byte (or 0 at end of stream).
async fn read_some<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut [u8],
) -> Result<usize, ErrorKind> {
    stream.read(buf).await.map_err(|e| ErrorKind::from_io(&e))
}

#[cfg(test)]
mod tests;
