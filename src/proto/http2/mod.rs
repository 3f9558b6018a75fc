//! HTTP/2 on the `h2` crate: h2c with prior knowledge, or h2 negotiated by ALPN over TLS.
//!
//! One [`SharedConnection`] is one TCP (or TLS) connection that several [`StreamHandle`]s use at
//! once, one stream each: connections × streams = requests in flight. Every handle keeps its own
//! clone of the connection's `SendRequest`, so the per-request path takes no lock; the async mutex
//! inside is only taken to (re)connect, so that handles that find the connection gone open one new
//! connection between them, not one each.
//!
//! Why `h2` and not `hyper::client::conn::http2` (which runs on the same `h2`): measured with
//! `bench/grpc.sh` (modes `h2c` and `hyper-h2c`, same request head, 4 connections × 16 streams),
//! both cost the same client CPU per request within noise (6.77 vs 6.77 µs). The bare `h2` API
//! gives what the load generator needs without hyper's body types: the stream is reset when the
//! exchange future is dropped (timeouts), stream resets are told apart from lost connections,
//! flow-control capacity is released as data is counted and discarded, and gRPC trailers are
//! read directly.
//!
//! The connection's frames are driven by a task spawned with `tokio::spawn` on the current
//! runtime; it ends when every handle is dropped (or the connection fails).

use std::future::poll_fn;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use h2::Reason;
use h2::client::SendRequest;
use http::{HeaderMap, Method, Uri};

mod duplex;
mod head;
mod read;

use self::duplex::{Sending, head_while_sending};
use self::read::{Capturing, Reading, read_body};
use super::pick::{PickNames, Picked};

use super::ErrorKind;
use super::conn::{ConnPhase, Failure, Limits, MAX_HEADERS, header_bytes};
use super::dial::{ConnectTiming, Dial, micros_since};
use super::grpc::{self, GrpcCode};
use super::message::{BodyTap, Capture, Captured, Response, Tapped, Timing};

/// Per-stream receive window the client announces, bytes (the protocol default, 64 KiB, stalls
/// large bodies on a fast network).
const STREAM_WINDOW_BYTES: u32 = 1 << 20;
/// Connection receive window, bytes.
const CONNECTION_WINDOW_BYTES: u32 = 16 << 20;

/// The HTTP/2 (and HTTP/3) form of a request: head parts cloned per send, body shared.
#[derive(Debug, Clone)]
pub struct Http2Request {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
    grpc: bool,
}

impl Http2Request {
    /// A request to `uri` (absolute: scheme and authority become `:scheme` and `:authority`).
    /// For gRPC, `body` must already be framed ([`grpc::frame`]).
    pub fn new(method: Method, uri: Uri, headers: HeaderMap, body: Bytes, grpc: bool) -> Self {
        Self {
            method,
            uri,
            headers,
            body,
            grpc,
        }
    }

    /// Bytes one send carries before HPACK: pseudo-headers, header names and values, and body.
    pub fn size(&self) -> u64 {
        let pseudo = self.method.as_str().len()
            + self.uri.path_and_query().map_or(1, |p| p.as_str().len())
            + self.uri.authority().map_or(0, |a| a.as_str().len())
            + self.uri.scheme_str().map_or(0, str::len);
        (pseudo + header_bytes(&self.headers) + self.body.len()) as u64
    }

    /// The body's length, bytes.
    pub fn body_len(&self) -> u64 {
        self.body.len() as u64
    }

    /// The body (gRPC: framed).
    pub(crate) fn body(&self) -> &Bytes {
        &self.body
    }

    /// Whether it is a gRPC call.
    pub(crate) fn grpc(&self) -> bool {
        self.grpc
    }

    /// The head, cloned for one send.
    pub(crate) fn head(&self) -> http::Request<()> {
        let mut req = http::Request::new(());
        *req.method_mut() = self.method.clone();
        *req.uri_mut() = self.uri.clone();
        *req.headers_mut() = self.headers.clone();
        req
    }
}

/// One HTTP/2 connection shared by several stream handles; reconnects when it is lost.
pub struct SharedConnection<D: Dial> {
    shared: Arc<Shared<D>>,
}

impl<D: Dial> Clone for SharedConnection<D> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<D: Dial> std::fmt::Debug for SharedConnection<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedConnection").finish_non_exhaustive()
    }
}

struct Shared<D: Dial> {
    dialer: D,
    /// Whether a connection outlives one exchange (`false`: a new connection per request).
    keepalive: bool,
    /// ALPN `h2` is required (TLS); h2c has no negotiation.
    require_alpn: bool,
    /// Response size limits: the head's is announced to the server as
    /// `SETTINGS_MAX_HEADER_LIST_SIZE` and checked on every response, the body's is counted.
    limits: Limits,
    slot: tokio::sync::Mutex<Slot>,
}

/// The current connection, numbered so that a handle can tell whether the connection it lost has
/// already been replaced.
#[derive(Default)]
struct Slot {
    generation: u64,
    sender: Option<SendRequest<Bytes>>,
}

impl<D: Dial> SharedConnection<D> {
    /// A connection opened by `dialer` on first use; `require_alpn` for TLS (the server must
    /// choose `h2`); responses beyond `limits` fail.
    pub fn new(dialer: D, keepalive: bool, require_alpn: bool, limits: Limits) -> Self {
        Self {
            shared: Arc::new(Shared {
                dialer,
                keepalive,
                require_alpn,
                limits,
                slot: tokio::sync::Mutex::new(Slot::default()),
            }),
        }
    }

    /// A new handle for one more concurrent stream on this connection.
    pub fn handle(&self) -> StreamHandle<D> {
        StreamHandle {
            shared: self.shared.clone(),
            sender: None,
            generation: 0,
            phase: ConnPhase::Connecting,
            received: 0,
            opened: 0,
            timeouts: 0,
            pick: PickNames::default(),
            picked: Picked::default(),
        }
    }
}

/// One stream's worth of a [`SharedConnection`], owned by one task: one request at a time.
pub struct StreamHandle<D: Dial> {
    shared: Arc<Shared<D>>,
    sender: Option<SendRequest<Bytes>>,
    generation: u64,
    phase: ConnPhase,
    received: u64,
    opened: u32,
    /// Timeouts in a row ([`Self::discard`] calls without a completed exchange between).
    timeouts: u32,
    /// Response headers whose values are picked (`--group-by header:NAME`); usually none.
    pick: PickNames,
    /// The values picked from the last response.
    picked: Picked,
}

/// Timeouts in a row after which a handle gives up on its connection (a connection that went
/// silent without closing — the `h2` crate sends no keep-alive pings — would otherwise keep
/// failing every stream).
const TIMEOUTS_BEFORE_RECONNECT: u32 = 2;

impl<D: Dial> std::fmt::Debug for StreamHandle<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamHandle")
            .field("generation", &self.generation)
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

impl<D: Dial> StreamHandle<D> {
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

    /// Bytes received by the last exchange, complete or not.
    pub fn bytes_received(&self) -> u64 {
        self.received
    }

    /// Connections the last exchange opened (0 or 1; 2 after a retry on a lost connection).
    pub fn connections_opened(&self) -> u32 {
        self.opened
    }

    /// After a timeout: the stream was reset when the exchange future was dropped; the connection
    /// stays, shared as before (one slow stream says nothing about the others) — unless this
    /// handle timed out twice in a row: then its next exchange
    /// opens a new connection (which later-failing handles pick up too).
    pub fn discard(&mut self) {
        self.timeouts += 1;
        if self.timeouts >= TIMEOUTS_BEFORE_RECONNECT {
            self.timeouts = 0;
            self.sender = None;
        }
    }

    /// Sends `req` on a new stream and reads the whole response.
    ///
    /// A connection found closed before the request could be sent (GOAWAY, idle close) is
    /// replaced and the request sent once more. Cancel-safe: dropping the future resets the stream.
    pub async fn exchange(
        &mut self,
        req: &Http2Request,
        capture: Capture,
    ) -> Result<Response, ErrorKind> {
        self.exchange_tapped(req, capture, None).await
    }

    /// Like [`exchange`](Self::exchange), handing the body to `tap` as it arrives (a streaming
    /// step); a body the tap stops early is cancelled (the stream is reset, the connection kept).
    pub async fn exchange_tapped(
        &mut self,
        req: &Http2Request,
        capture: Capture,
        tap: Option<&mut dyn BodyTap>,
    ) -> Result<Response, ErrorKind> {
        self.received = 0;
        self.opened = 0;
        if !self.pick.is_empty() {
            self.picked.clear();
        }
        let mut connect = ConnectTiming::default();
        let mut retried = false;
        let sender = loop {
            if self.sender.is_none() {
                self.phase = ConnPhase::Connecting;
                // Boxed, as HTTP/1.1's dial: once per connection, and it keeps the dial (and
                // TLS handshake) future out of every exchange's.
                if let Some(timing) = Box::pin(self.acquire()).await? {
                    connect = timing;
                }
            }
            self.phase = ConnPhase::Exchanging;
            let sender = self.sender.as_mut().expect("acquired above");
            match poll_fn(|cx| sender.poll_ready(cx)).await {
                Ok(()) => break sender,
                Err(e) => {
                    self.sender = None;
                    if retried {
                        return Err(classify(&e));
                    }
                    retried = true;
                }
            }
        };
        let picking = (!self.pick.is_empty()).then_some((&self.pick, &mut self.picked));
        let result = send_and_read(
            sender,
            req,
            capture,
            self.shared.limits,
            &mut self.received,
            picking,
            tap,
        )
        .await
        .map(|mut response| {
            response.timing.connect_us = connect.connect_us;
            response.timing.tls_us = connect.tls_us;
            response.timing.tls = connect.tls;
            response
        });
        match result {
            Ok(response) => {
                self.timeouts = 0;
                if !self.shared.keepalive {
                    self.sender = None;
                }
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
    async fn acquire(&mut self) -> Result<Option<ConnectTiming>, ErrorKind> {
        let mut slot = self.shared.slot.lock().await;
        if self.shared.keepalive
            && slot.generation != self.generation
            && let Some(sender) = &slot.sender
        {
            self.sender = Some(sender.clone());
            self.generation = slot.generation;
            return Ok(None);
        }
        let (tcp, timing) = self.shared.dialer.connect().await?;
        self.phase = ConnPhase::Handshaking;
        let (stream, timing) = self.shared.dialer.handshake(tcp, timing).await?;
        self.phase = ConnPhase::Exchanging;
        self.opened += 1;
        if self.shared.require_alpn && D::alpn(&stream) != Some(b"h2") {
            return Err(ErrorKind::Tls);
        }
        let (sender, connection) = h2::client::Builder::new()
            .enable_push(false)
            .initial_window_size(STREAM_WINDOW_BYTES)
            .initial_connection_window_size(CONNECTION_WINDOW_BYTES)
            .max_header_list_size(
                u32::try_from(self.shared.limits.max_head_bytes).unwrap_or(u32::MAX),
            )
            .handshake::<_, Bytes>(stream)
            .await
            .map_err(|e| classify(&e))?;
        tokio::spawn(async move {
            // The error, if any, reaches the handles through their next request.
            let _ = connection.await;
        });
        slot.generation += 1;
        slot.sender = self.shared.keepalive.then(|| sender.clone());
        self.generation = slot.generation;
        self.sender = Some(sender);
        Ok(Some(timing))
    }
}

/// Sends one request on a ready sender and reads its response (body discarded or captured).
async fn send_and_read(
    sender: &mut SendRequest<Bytes>,
    req: &Http2Request,
    capture: Capture,
    limits: Limits,
    received: &mut u64,
    picking: Option<(&PickNames, &mut Picked)>,
    mut tap: Option<&mut dyn BodyTap>,
) -> Result<Response, Failure> {
    let sent = Instant::now();
    let duplex = tap.as_deref().is_some_and(|t| t.duplex());
    let end_of_stream = req.body.is_empty() && !duplex;
    let (response, mut body_out) = sender.send_request(req.head(), end_of_stream)?;
    let mut sending = None;
    if duplex {
        sending = Some(Sending::new(body_out, req.body.clone()));
    } else if !end_of_stream {
        // Beyond the peer's window h2 buffers the rest and sends it as the window opens.
        body_out.send_data(req.body.clone(), true)?;
    }
    let response = match (sending.as_mut(), tap.as_deref_mut()) {
        (Some(sending), Some(tap)) => head_while_sending(response, sending, tap).await?,
        _ => response.await?,
    };
    let wait_us = micros_since(sent);
    let (head, mut body) = response.into_parts();
    let head_bytes = header_bytes(&head.headers);
    *received += head_bytes as u64;
    if let Some((names, picked)) = picking {
        picked.pick_map(names, &head.headers);
    }
    // h2 has refused heads over the limit already (counting 32 bytes more per field, as the
    // protocol does); this also holds HTTP/2 to HTTP/1.1's field count.
    if head.headers.len() > MAX_HEADERS || head_bytes > limits.max_head_bytes {
        return Err(Failure::stream(ErrorKind::HeaderTooLarge));
    }
    let mut kept = capture.any().then(|| Capturing {
        headers: if capture.headers {
            head.headers.clone()
        } else {
            HeaderMap::new()
        },
        body: Vec::new(),
        // gRPC keeps the message, so the 5-byte frame header too, stripped at the end.
        limit: match capture.body_limit {
            0 => 0,
            n if req.grpc => n + 5,
            n => n,
        },
        truncated: false,
    });
    let reading = Reading {
        max: limits.body_cap(),
        kept: kept.as_mut(),
        tap,
        sending: sending.as_mut(),
    };
    let read = read_body(&mut body, reading, received).await?;
    let trailers = match read {
        Tapped::More => poll_fn(|cx| body.poll_trailers(cx)).await?,
        // Stopped early: the stream is reset when `body` drops; there are no trailers to wait for.
        Tapped::Stop => None,
    };
    if let Some(trailers) = &trailers {
        *received += header_bytes(trailers) as u64;
    }
    let status = head.status.as_u16();
    let grpc_status = if req.grpc {
        grpc_status(trailers.as_ref(), &head.headers, status, read)?
    } else {
        None
    };
    let captured = kept.map(|mut kept| {
        if capture.headers
            && let Some(trailers) = trailers
        {
            kept.headers.extend(trailers);
        }
        let skip = if req.grpc { kept.body.len().min(5) } else { 0 };
        let body = Bytes::from(kept.body).slice(skip..);
        Box::new(Captured {
            headers: kept.headers,
            body,
            truncated: kept.truncated,
        })
    });
    Ok(Response {
        status,
        grpc_status,
        bytes_received: *received,
        timing: Timing {
            wait_us,
            ..Timing::default()
        },
        captured,
    })
}

/// A gRPC call's status: from the trailers, or the headers of a trailers-only response
/// (errors, usually), or the HTTP status; none for a stream stopped at its message limit
/// (reset before its status came).
fn grpc_status(
    trailers: Option<&HeaderMap>,
    headers: &HeaderMap,
    status: u16,
    read: Tapped,
) -> Result<Option<GrpcCode>, Failure> {
    let code = trailers
        .and_then(grpc::status_of)
        .or_else(|| grpc::status_of(headers));
    match code {
        Some(code) => Ok(Some(code)),
        None if status != 200 => Ok(Some(GrpcCode::from_http_status(status))),
        None if read == Tapped::Stop => Ok(None),
        None => Err(Failure::stream(ErrorKind::Protocol)),
    }
}

impl From<h2::Error> for Failure {
    fn from(e: h2::Error) -> Self {
        Self {
            kind: classify(&e),
            // RST_STREAM concerns one stream; GOAWAY, I/O errors and a finished connection
            // task concern them all.
            connection_lost: !e.is_reset(),
        }
    }
}

/// How an `h2` error counts.
fn classify(e: &h2::Error) -> ErrorKind {
    if let Some(io) = e.get_io() {
        return ErrorKind::from_io(io);
    }
    match e.reason() {
        Some(Reason::REFUSED_STREAM) => ErrorKind::StreamRefused,
        // A graceful GOAWAY: the server is closing the connection.
        Some(Reason::NO_ERROR) if e.is_go_away() => ErrorKind::Closed,
        Some(_) => ErrorKind::Protocol,
        // The connection task ended (the peer closed it).
        None => ErrorKind::Closed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_size_counts_pseudo_headers_and_body() {
        let mut headers = HeaderMap::new();
        headers.insert("x-a", "bc".parse().unwrap());
        let r = Http2Request::new(
            Method::POST,
            "http://h:1/p?q".parse().unwrap(),
            headers,
            Bytes::from_static(b"12345"),
            false,
        );
        // "POST" + "/p?q" + "h:1" + "http" + "x-a" "bc" + body
        assert_eq!(r.size(), 4 + 4 + 3 + 4 + 5 + 5);
        let head = r.head();
        assert_eq!(head.uri().authority().unwrap().as_str(), "h:1");
    }

    #[test]
    fn errors_are_classified() {
        assert_eq!(
            classify(&h2::Error::from(Reason::REFUSED_STREAM)),
            ErrorKind::StreamRefused
        );
        assert_eq!(
            classify(&h2::Error::from(Reason::PROTOCOL_ERROR)),
            ErrorKind::Protocol
        );
    }
}
