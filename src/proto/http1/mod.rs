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
//! [`Connection`] is generic over how it connects ([`Dial`]): plain TCP and TLS each get their own
//! compiled copy of the loop, so TLS costs plain TCP nothing.

mod limits;
mod parse;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use self::parse::{ChunkedDecoder, Feed, Framing, parse_head};
use super::ErrorKind;
use super::dial::{ConnectTiming, Dial, TcpDialer, micros_since};
use super::message::{Capture, Captured, Response, Timing};
pub use limits::{
    DEFAULT_MAX_HEAD_BYTES, Limits, MAX_HEAD_LIMIT_BYTES, MAX_HEADERS, MIN_HEAD_LIMIT_BYTES,
    parse_size,
};

/// Initial size of a connection's read buffer, bytes: room for a typical response head and a
/// small body. At 16 KiB it was most of a connection's memory (bench/README.md, "Memory per
/// connection"), so it starts small and grows only for the responses that need it.
const READ_BUF_BYTES: usize = 1024;

/// Size, bytes, that a read buffer grows to (doubling each time a read fills it) while reading
/// bodies that do not fit: large bodies are then read in reads this big. A head larger than the
/// buffer grows it too, up to the head limit.
const BODY_BUF_BYTES: usize = 16 * 1024;

/// The static bytes of one request, built once per run and shared by every connection.
#[derive(Debug, Clone)]
pub struct RequestBytes {
    bytes: bytes::Bytes,
    expects_body: bool,
}

impl RequestBytes {
    /// Serialises a request.
    ///
    /// `host_header` is the `Host` value (host, plus `:port` when not 80); `path_and_query` starts
    /// with `/`. A `Host` or `User-Agent` among `headers` replaces the default. `keepalive = false`
    /// adds `Connection: close`. `Content-Length` is set when there is a body or the method usually
    /// carries one.
    pub fn build(
        method: &str,
        host_header: &str,
        path_and_query: &str,
        headers: &[(String, String)],
        body: &[u8],
        keepalive: bool,
    ) -> Self {
        let mut out = Vec::with_capacity(128 + body.len());
        write_request(
            &mut out,
            method,
            host_header,
            path_and_query.as_bytes(),
            headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())),
            body,
            keepalive,
        );
        Self {
            bytes: out.into(),
            expects_body: method != "HEAD",
        }
    }

    /// Whether a response to this request has a body (not for HEAD).
    pub fn expects_body(&self) -> bool {
        self.expects_body
    }

    /// The serialised request.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Size on the wire, bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True when the request has no bytes (never, for a built request).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// Serialises a request into `out` (appending). A `Host` or `User-Agent` among `headers` replaces
/// the default; `Content-Length` is added for a body or a method that usually has one;
/// `keepalive = false` adds `Connection: close`.
pub fn write_request<'a>(
    out: &mut Vec<u8>,
    method: &str,
    host_header: &str,
    path_and_query: &[u8],
    headers: impl Iterator<Item = (&'a str, &'a [u8])> + Clone,
    body: &[u8],
    keepalive: bool,
) {
    let has = |name: &str| headers.clone().any(|(n, _)| n.eq_ignore_ascii_case(name));
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(path_and_query);
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let push = |out: &mut Vec<u8>, name: &str, value: &[u8]| {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    };
    if !has("host") {
        push(out, "Host", host_header.as_bytes());
    }
    if !has("user-agent") {
        push(
            out,
            "User-Agent",
            concat!("volley/", env!("CARGO_PKG_VERSION")).as_bytes(),
        );
    }
    for (name, value) in headers.clone() {
        push(out, name, value);
    }
    let method_has_body = matches!(method, "POST" | "PUT" | "PATCH");
    if (!body.is_empty() || method_has_body) && !has("content-length") {
        let mut digits = itoa_buf(body.len());
        push(out, "Content-Length", digits.as_bytes_mut());
    }
    if !keepalive && !has("connection") {
        push(out, "Connection", b"close");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}

/// A decimal number formatted on the stack.
struct Digits {
    buf: [u8; 20],
    start: usize,
}

impl Digits {
    fn as_bytes_mut(&mut self) -> &[u8] {
        &self.buf[self.start..]
    }
}

fn itoa_buf(mut n: usize) -> Digits {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    Digits { buf, start: i }
}

/// Most body bytes kept for checks and extraction; the rest is counted but not kept.
pub const MAX_CAPTURE_BYTES: usize = 1024 * 1024;

/// Where an exchange was when it stopped; tells a connect timeout from a response timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Establishing the connection (TCP, then TLS when used).
    Connecting,
    /// Writing the request or reading the response.
    Exchanging,
}

/// One client connection, owned by one task, reconnecting as needed.
#[derive(Debug)]
pub struct Connection<D: Dial = TcpDialer> {
    dialer: D,
    stream: Option<D::Stream>,
    buf: Vec<u8>,
    keepalive: bool,
    /// Response size limits.
    limits: Limits,
    phase: Phase,
    /// Bytes read by the current exchange, kept here so a failed exchange still reports them.
    received: u64,
    /// Connections this exchange opened (0, 1, or 2 after a stale keep-alive retry).
    opened: u32,
    /// How opening the last connection of this exchange went (zero when none was opened).
    connect: ConnectTiming,
    /// With raw capture on ([`exchange`](Connection::exchange)): the last response's head.
    head: Vec<u8>,
    /// With raw capture on: the last response's body (at most [`MAX_CAPTURE_BYTES`]).
    body: Vec<u8>,
}

impl Connection<TcpDialer> {
    /// A plain-TCP connection to `addr`; nothing is opened until the first exchange.
    pub fn new(addr: SocketAddr, keepalive: bool) -> Self {
        Self::with_dialer(TcpDialer::new(addr, None), keepalive)
    }
}

impl<D: Dial> Connection<D> {
    /// A connection opened by `dialer`; nothing is opened until the first exchange.
    pub fn with_dialer(dialer: D, keepalive: bool) -> Self {
        Self {
            dialer,
            stream: None,
            buf: Vec::new(),
            keepalive,
            limits: Limits::default(),
            phase: Phase::Connecting,
            received: 0,
            opened: 0,
            connect: ConnectTiming::default(),
            head: Vec::new(),
            body: Vec::new(),
        }
    }

    /// The same connection with these response size limits (default: [`Limits::default`]).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The phase the last exchange reached (read it after a timeout).
    pub fn phase(&self) -> Phase {
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
    /// [`MAX_CAPTURE_BYTES`]) are kept for [`head`](Self::head) and [`body`](Self::body).
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
        self.exchange_with(req, expects_body, Capture::default(), capture)
            .await
    }

    /// Like [`exchange`](Self::exchange) for a built request, keeping what `capture` asks for
    /// in the returned [`Response`].
    pub async fn exchange_capturing(
        &mut self,
        req: &RequestBytes,
        capture: Capture,
    ) -> Result<Response, ErrorKind> {
        self.exchange_with(req.as_bytes(), req.expects_body, capture, false)
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
        self.exchange_with(req, expects_body, capture, false).await
    }

    async fn exchange_with(
        &mut self,
        req: &[u8],
        expects_body: bool,
        capture: Capture,
        raw: bool,
    ) -> Result<Response, ErrorKind> {
        self.received = 0;
        self.opened = 0;
        self.connect = ConnectTiming::default();
        let reused = self.stream.is_some();
        match self.exchange_once(req, expects_body, capture, raw).await {
            Err(ErrorKind::Reset | ErrorKind::Closed) if reused && self.received == 0 => {
                self.stream = None;
                self.exchange_once(req, expects_body, capture, raw).await
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
    ) -> Result<Response, ErrorKind> {
        if self.stream.is_none() {
            self.phase = Phase::Connecting;
            let (stream, timing) = self.dialer.dial().await?;
            self.opened += 1;
            self.stream = Some(stream);
            self.connect = timing;
            if self.buf.is_empty() {
                self.buf.resize(READ_BUF_BYTES, 0);
            }
        }
        self.phase = Phase::Exchanging;
        let result = self.write_and_read(req, expects_body, capture, raw).await;
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
    ) -> Result<(Response, bool), ErrorKind> {
        let Self {
            stream,
            buf,
            received,
            connect,
            head: head_out,
            body: body_out,
            limits,
            ..
        } = self;
        let max_head = limits.max_head_bytes;
        let stream = stream.as_mut().expect("connected above");
        let sent = Instant::now();
        stream
            .write_all(req)
            .await
            .map_err(|e| ErrorKind::from_io(&e))?;
        // TLS buffers what it encrypts; plain TCP's flush does nothing.
        stream.flush().await.map_err(|e| ErrorKind::from_io(&e))?;

        let mut wait_us = None;
        let mut filled = 0usize;
        loop {
            // Read until a complete head is buffered.
            let head = loop {
                if filled > 0 {
                    match parse_head(&buf[..filled])? {
                        Some(head) if head.len > max_head => {
                            return Err(ErrorKind::HeaderTooLarge);
                        }
                        Some(head) => break head,
                        None if filled >= max_head => return Err(ErrorKind::HeaderTooLarge),
                        // Grows only on the way to the limit: memory stays bounded.
                        None if filled == buf.len() => {
                            buf.resize((buf.len() * 2).min(max_head), 0);
                        }
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
            };
            // Interim responses (100 Continue, 103 Early Hints) precede the real one.
            if (100..200).contains(&head.status) && head.status != 101 {
                buf.copy_within(head.len..filled, 0);
                filled -= head.len;
                continue;
            }
            let mut kept = capture.any().then(|| Kept::new(capture, &buf[..head.len]));
            let no_body = !expects_body || head.status == 204 || head.status == 304;
            if raw {
                head_out.extend_from_slice(&buf[..head.len]);
            }
            let body_start = head.len;
            let mut reusable = !head.close;
            let framing = if no_body {
                Framing::Length(0)
            } else if head.chunked {
                Framing::Chunked
            } else if let Some(len) = head.content_length {
                Framing::Length(len)
            } else {
                reusable = false;
                Framing::UntilClose
            };
            let mut body = Body {
                stream,
                full: filled == buf.len(),
                buf,
                received,
                kept: kept.as_mut(),
                raw: raw.then_some(body_out),
                max: limits.body_cap(),
            };
            let leftover = body.read(body_start, filled, framing).await?;
            if leftover {
                // Bytes beyond the response: the server pipelined or misbehaved; start afresh.
                reusable = false;
            }
            let response = Response {
                status: head.status,
                grpc_status: None,
                bytes_received: *received,
                timing: Timing {
                    connect_us: connect.connect_us,
                    tls_us: connect.tls_us,
                    wait_us: wait_us.unwrap_or_default(),
                    tls: connect.tls,
                },
                captured: kept.map(Kept::finish),
            };
            return Ok((response, reusable));
        }
    }
}

/// Reads at least one byte (or 0 at end of stream).
async fn read_some<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut [u8],
) -> Result<usize, ErrorKind> {
    stream.read(buf).await.map_err(|e| ErrorKind::from_io(&e))
}

/// What a capturing exchange keeps while reading.
struct Kept {
    captured: Captured,
    body: Vec<u8>,
    limit: usize,
}

impl Kept {
    fn new(capture: Capture, head: &[u8]) -> Self {
        let mut captured = Captured::default();
        if capture.headers {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut response = httparse::Response::new(&mut headers);
            if response.parse(head).is_ok() {
                for h in response.headers.iter() {
                    if let (Ok(name), Ok(value)) = (
                        http::HeaderName::from_bytes(h.name.as_bytes()),
                        http::HeaderValue::from_bytes(h.value),
                    ) {
                        captured.headers.append(name, value);
                    }
                }
            }
        }
        Self {
            captured,
            body: Vec::new(),
            limit: capture.body_limit,
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        if self.limit == 0 {
            return;
        }
        let room = self.limit - self.body.len();
        if bytes.len() > room {
            self.captured.truncated = true;
        }
        self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn finish(mut self) -> Box<Captured> {
        self.captured.body = self.body.into();
        Box::new(self.captured)
    }
}

/// Hands body bytes to whichever captures are on.
fn keep(kept: &mut Option<&mut Kept>, raw: &mut Option<&mut Vec<u8>>, bytes: &[u8]) {
    if let Some(kept) = kept.as_deref_mut() {
        kept.keep(bytes);
    }
    if let Some(out) = raw.as_deref_mut() {
        let room = MAX_CAPTURE_BYTES.saturating_sub(out.len());
        out.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// The body reader's borrowed state.
struct Body<'a, S> {
    stream: &'a mut S,
    /// The connection's read buffer; grows up to [`BODY_BUF_BYTES`] while `full`.
    buf: &'a mut Vec<u8>,
    /// The last read filled the buffer: the next one gets a bigger buffer.
    full: bool,
    received: &'a mut u64,
    kept: Option<&'a mut Kept>,
    /// The engine's raw capture: body bytes up to [`MAX_CAPTURE_BYTES`].
    raw: Option<&'a mut Vec<u8>>,
    /// Largest body accepted, bytes ([`Limits::max_body_bytes`], `u64::MAX` for none).
    max: u64,
}

impl<S: AsyncRead + Unpin> Body<'_, S> {
    /// Reads the body, keeping it only when capturing. `buf[start..filled]` holds body bytes
    /// already read. Returns true when bytes beyond the body were received.
    async fn read(
        &mut self,
        start: usize,
        filled: usize,
        framing: Framing,
    ) -> Result<bool, ErrorKind> {
        match framing {
            // Announced too large: fail before reading any of it.
            Framing::Length(len) if len > self.max => Err(ErrorKind::BodyTooLarge),
            Framing::Length(len) => {
                let buffered = (filled - start) as u64;
                let end = start + buffered.min(len) as usize;
                keep(&mut self.kept, &mut self.raw, &self.buf[start..end]);
                if buffered >= len {
                    return Ok(buffered > len);
                }
                let mut remaining = len - buffered;
                while remaining > 0 {
                    let n = self.read_more(0).await?;
                    if n == 0 {
                        return Err(ErrorKind::Closed);
                    }
                    keep(
                        &mut self.kept,
                        &mut self.raw,
                        &self.buf[..n.min(remaining as usize)],
                    );
                    if n as u64 > remaining {
                        return Ok(true);
                    }
                    remaining -= n as u64;
                }
                Ok(false)
            }
            Framing::UntilClose => {
                let mut total = (filled - start) as u64;
                keep(&mut self.kept, &mut self.raw, &self.buf[start..filled]);
                loop {
                    if total > self.max {
                        return Err(ErrorKind::BodyTooLarge);
                    }
                    let n = self.read_more(0).await?;
                    if n == 0 {
                        return Ok(false);
                    }
                    total += n as u64;
                    keep(&mut self.kept, &mut self.raw, &self.buf[..n]);
                }
            }
            Framing::Chunked => {
                let mut decoder = ChunkedDecoder::default();
                let mut pending = start..filled;
                loop {
                    let fed = if self.kept.is_none() && self.raw.is_none() {
                        decoder.feed(&self.buf[pending.clone()], |_| {})?
                    } else {
                        let (kept, raw) = (&mut self.kept, &mut self.raw);
                        decoder.feed(&self.buf[pending.clone()], |data| keep(kept, raw, data))?
                    };
                    if decoder.data_bytes() > self.max {
                        return Err(ErrorKind::BodyTooLarge);
                    }
                    match fed {
                        Feed::Done { consumed } => return Ok(consumed < pending.len()),
                        Feed::NeedMore { consumed } => {
                            // Keep an unconsumed partial size line at the front of the buffer.
                            let keep = pending.start + consumed..pending.end;
                            let kept = keep.len();
                            self.buf.copy_within(keep, 0);
                            if kept == self.buf.len() && kept >= BODY_BUF_BYTES {
                                return Err(ErrorKind::InvalidResponse);
                            }
                            let n = self.read_more(kept).await?;
                            if n == 0 {
                                return Err(ErrorKind::Closed);
                            }
                            pending = 0..kept + n;
                        }
                    }
                }
            }
        }
    }

    /// Reads into `buf[at..]`, counting the bytes; first doubles the buffer (up to
    /// [`BODY_BUF_BYTES`]) when the last read filled it or no room is left.
    async fn read_more(&mut self, at: usize) -> Result<usize, ErrorKind> {
        if (self.full || at == self.buf.len()) && self.buf.len() < BODY_BUF_BYTES {
            let len = (self.buf.len() * 2).clamp(READ_BUF_BYTES, BODY_BUF_BYTES);
            self.buf.resize(len, 0);
        }
        let n = read_some(self.stream, &mut self.buf[at..]).await?;
        self.full = n == self.buf.len() - at;
        *self.received += n as u64;
        Ok(n)
    }
}

/// Default request timeout when the user gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_bytes_have_defaults_and_length() {
        let r = RequestBytes::build(
            "POST",
            "127.0.0.1:8080",
            "/echo?x=1",
            &[("X-A".into(), "b".into())],
            b"hello",
            true,
        );
        let text = std::str::from_utf8(r.as_bytes()).unwrap();
        assert!(text.starts_with("POST /echo?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
        assert!(text.contains("X-A: b\r\n"));
        assert!(text.contains("Content-Length: 5\r\n"));
        assert!(!text.contains("Connection: close"));
        assert!(text.ends_with("\r\n\r\nhello"));
    }

    /// A one-shot server on 127.0.0.1: reads the request, writes `response`, closes.
    fn canned(response: Vec<u8>) -> SocketAddr {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            if let Ok((mut s, _)) = l.accept() {
                let mut buf = [0u8; 1024];
                let _ = std::io::Read::read(&mut s, &mut buf);
                let _ = std::io::Write::write_all(&mut s, &response);
            }
        });
        addr
    }

    /// The status of one exchange with a server sending `response`, the same with and without
    /// raw capture (two code paths).
    fn status_with(limits: Limits, response: &[u8]) -> Result<u16, ErrorKind> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let [plain, captured] = [false, true].map(|capture| {
            let addr = canned(response.to_vec());
            rt.block_on(async {
                let mut c = Connection::new(addr, true).with_limits(limits);
                let req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
                c.exchange(req, true, capture).await.map(|r| r.status)
            })
        });
        assert_eq!(plain, captured);
        plain
    }

    fn body_limit(bytes: u64) -> Limits {
        Limits {
            max_body_bytes: Some(bytes),
            ..Limits::default()
        }
    }

    #[test]
    fn body_limit_applies_to_every_framing() {
        let length = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789";
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                        5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n";
        let until_close = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n0123456789";
        for response in [&length[..], &chunked[..], &until_close[..]] {
            let text = String::from_utf8_lossy(response);
            assert_eq!(status_with(body_limit(10), response), Ok(200), "{text}");
            assert_eq!(status_with(Limits::default(), response), Ok(200), "{text}");
            assert_eq!(
                status_with(body_limit(9), response),
                Err(ErrorKind::BodyTooLarge),
                "{text}"
            );
        }
    }

    /// Bodies far larger than the initial read buffer, in every framing, arrive whole (the
    /// buffer grows while reads fill it), and a chunk-size line longer than the initial buffer
    /// is still read (as it was with the former 16 KiB buffer).
    #[test]
    fn bodies_larger_than_the_initial_buffer_are_read_whole() {
        let body: Vec<u8> = (0..40_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let mut length =
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
        length.extend_from_slice(&body);
        let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for part in body.chunks(5000) {
            chunked.extend_from_slice(
                format!("{:x};x={}\r\n", part.len(), "e".repeat(3000)).as_bytes(),
            );
            chunked.extend_from_slice(part);
            chunked.extend_from_slice(b"\r\n");
        }
        chunked.extend_from_slice(b"0\r\n\r\n");
        let mut until_close = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
        until_close.extend_from_slice(&body);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for response in [length, chunked, until_close] {
            let addr = canned(response.clone());
            rt.block_on(async {
                let mut c = Connection::new(addr, true);
                let req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
                let r = c.exchange(req, true, true).await.unwrap();
                assert_eq!(r.status, 200);
                assert_eq!(r.bytes_received, response.len() as u64);
                assert!(c.body() == &body[..], "body of {} bytes", c.body().len());
            });
        }
    }

    #[test]
    fn head_limits_count_bytes_and_fields() {
        let mut big = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
        big.extend(std::iter::repeat_n(b'a', 2000));
        big.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
        let small = Limits {
            max_head_bytes: 1024,
            ..Limits::default()
        };
        assert_eq!(status_with(small, &big), Err(ErrorKind::HeaderTooLarge));
        assert_eq!(status_with(Limits::default(), &big), Ok(200));
        // Past the default: the buffer grows to the limit, not beyond.
        let mut huge = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
        huge.extend(std::iter::repeat_n(b'a', 100_000));
        huge.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(
            status_with(Limits::default(), &huge),
            Err(ErrorKind::HeaderTooLarge)
        );
        let large = Limits {
            max_head_bytes: 128 * 1024,
            ..Limits::default()
        };
        assert_eq!(status_with(large, &huge), Ok(200));
        let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..=MAX_HEADERS {
            many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        many.extend_from_slice(b"Content-Length: 0\r\n\r\n");
        assert_eq!(
            status_with(Limits::default(), &many),
            Err(ErrorKind::HeaderTooLarge)
        );
    }

    #[test]
    fn user_headers_replace_defaults_and_close_without_keepalive() {
        let r = RequestBytes::build(
            "GET",
            "h",
            "/",
            &[("host".into(), "other".into())],
            b"",
            false,
        );
        let text = std::str::from_utf8(r.as_bytes()).unwrap();
        assert!(text.contains("host: other\r\n"));
        assert!(!text.contains("Host: h"));
        assert!(text.contains("Connection: close\r\n"));
        assert!(!text.contains("Content-Length"));
    }
}
