//! HTTP/1.1 over plain TCP, written for the load generator's hot path.
//!
//! Why not hyper's client: hyper allocates a request and header map per call and runs a connection
//! task beside each request future. oha, which uses it, measured 7.4 CPU µs per request on this
//! project's 2-core bench machine against wrk's 4.8; volley's acceptance bound is 1.2 × wrk. Here the
//! request bytes are built once per run, the response head is parsed in place with `httparse`
//! (a stack array of headers), and the body is read into a per-connection buffer and discarded,
//! counted but never copied. Nothing on this path allocates after the connection's first request.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::ErrorKind;

/// Most headers a response may carry before it counts as [`ErrorKind::HeaderTooLarge`].
const MAX_HEADERS: usize = 128;
/// Initial size of a connection's read buffer, bytes.
const READ_BUF_BYTES: usize = 16 * 1024;
/// Largest response head accepted, bytes.
const MAX_HEAD_BYTES: usize = 64 * 1024;

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

/// What one successful exchange produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status code.
    pub status: u16,
    /// Bytes read from the socket for this response (head and body), bytes.
    pub bytes_received: u64,
}

/// Where an exchange was when it stopped; tells a connect timeout from a response timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Establishing the TCP connection.
    Connecting,
    /// Writing the request or reading the response.
    Exchanging,
}

/// One client connection, owned by one task, reconnecting as needed.
#[derive(Debug)]
pub struct Connection {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
    keepalive: bool,
    phase: Phase,
    /// Bytes read by the current exchange, kept here so a failed exchange still reports them.
    received: u64,
    /// TCP connections this exchange opened (0, 1, or 2 after a stale keep-alive retry).
    opened: u32,
    /// With capture on: the last response's head.
    head: Vec<u8>,
    /// With capture on: the last response's body (at most [`MAX_CAPTURE_BYTES`]).
    body: Vec<u8>,
}

impl Connection {
    /// A connection to `addr`; nothing is opened until the first exchange.
    pub fn new(addr: SocketAddr, keepalive: bool) -> Self {
        Self {
            addr,
            stream: None,
            buf: Vec::new(),
            keepalive,
            phase: Phase::Connecting,
            received: 0,
            opened: 0,
            head: Vec::new(),
            body: Vec::new(),
        }
    }

    /// The phase the last exchange reached (read it after a timeout).
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Bytes received by the last exchange, complete or not.
    pub fn bytes_received(&self) -> u64 {
        self.received
    }

    /// TCP connections opened by the last exchange.
    pub fn connections_opened(&self) -> u32 {
        self.opened
    }

    /// The last captured response head (empty without capture).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The last captured response body (empty without capture).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// Drops the TCP connection (after an error or timeout); the next exchange reconnects.
    pub fn discard(&mut self) {
        self.stream = None;
    }

    /// Sends `req` and reads the whole response.
    ///
    /// A reused keep-alive connection that the server had already closed is retried once on a
    /// fresh connection, as browsers and proxies do, when no response byte had arrived.
    /// Cancel-safe in the sense the engine needs: dropping the future mid-way leaves the
    /// connection to be [`discard`](Self::discard)ed.
    /// With `capture`, the response head and body (up to [`MAX_CAPTURE_BYTES`]) are kept for
    /// [`head`](Self::head) and [`body`](Self::body).
    pub async fn exchange(
        &mut self,
        req: &[u8],
        expects_body: bool,
        capture: bool,
    ) -> Result<Response, ErrorKind> {
        self.received = 0;
        self.opened = 0;
        if capture {
            self.head.clear();
            self.body.clear();
        }
        let reused = self.stream.is_some();
        match self.exchange_once(req, expects_body, capture).await {
            Err(ErrorKind::Reset | ErrorKind::Closed) if reused && self.received == 0 => {
                self.stream = None;
                self.exchange_once(req, expects_body, capture).await
            }
            other => other,
        }
    }

    async fn exchange_once(
        &mut self,
        req: &[u8],
        expects_body: bool,
        capture: bool,
    ) -> Result<Response, ErrorKind> {
        if self.stream.is_none() {
            self.phase = Phase::Connecting;
            self.opened += 1;
            let stream = TcpStream::connect(self.addr)
                .await
                .map_err(|e| ErrorKind::from_io(&e))?;
            // Nagle would hold small requests back; a load generator must send at once.
            stream
                .set_nodelay(true)
                .map_err(|e| ErrorKind::from_io(&e))?;
            self.stream = Some(stream);
            if self.buf.is_empty() {
                self.buf.resize(READ_BUF_BYTES, 0);
            }
        }
        self.phase = Phase::Exchanging;
        let result = self.write_and_read(req, expects_body, capture).await;
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
        capture: bool,
    ) -> Result<(Response, bool), ErrorKind> {
        let Self {
            stream,
            buf,
            received,
            head: head_out,
            body: body_out,
            ..
        } = self;
        let stream = stream.as_mut().expect("connected above");
        stream
            .write_all(req)
            .await
            .map_err(|e| ErrorKind::from_io(&e))?;

        let mut filled = 0usize;
        loop {
            // Read until a complete head is buffered.
            let head = loop {
                if filled > 0 {
                    match parse_head(&buf[..filled])? {
                        Some(head) => break head,
                        None if filled == buf.len() => {
                            if buf.len() >= MAX_HEAD_BYTES {
                                return Err(ErrorKind::HeaderTooLarge);
                            }
                            buf.resize(buf.len() * 2, 0);
                        }
                        None => {}
                    }
                }
                let n = read_some(stream, &mut buf[filled..]).await?;
                if n == 0 {
                    return Err(ErrorKind::Closed);
                }
                *received += n as u64;
                filled += n;
            };
            // Interim responses (100 Continue, 103 Early Hints) precede the real one.
            if (100..200).contains(&head.status) && head.status != 101 {
                buf.copy_within(head.len..filled, 0);
                filled -= head.len;
                continue;
            }
            let no_body = !expects_body || head.status == 204 || head.status == 304;
            if capture {
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
            let leftover = if capture {
                let mut sink = |bytes: &[u8]| {
                    let room = MAX_CAPTURE_BYTES.saturating_sub(body_out.len());
                    body_out.extend_from_slice(&bytes[..bytes.len().min(room)]);
                };
                read_body(
                    stream, buf, body_start, filled, framing, received, &mut sink,
                )
                .await?
            } else {
                read_body(
                    stream,
                    buf,
                    body_start,
                    filled,
                    framing,
                    received,
                    &mut |_| {},
                )
                .await?
            };
            if leftover {
                // Bytes beyond the response: the server pipelined or misbehaved; start afresh.
                reusable = false;
            }
            return Ok((
                Response {
                    status: head.status,
                    bytes_received: *received,
                },
                reusable,
            ));
        }
    }
}

/// Reads at least one byte (or 0 at end of stream).
async fn read_some(stream: &mut TcpStream, buf: &mut [u8]) -> Result<usize, ErrorKind> {
    stream.read(buf).await.map_err(|e| ErrorKind::from_io(&e))
}

/// The parts of a response head that decide how to read the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Head {
    status: u16,
    len: usize,
    content_length: Option<u64>,
    chunked: bool,
    close: bool,
}

/// Parses a response head; `Ok(None)` when more bytes are needed.
fn parse_head(bytes: &[u8]) -> Result<Option<Head>, ErrorKind> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let len = match response.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(ErrorKind::HeaderTooLarge),
        Err(_) => return Err(ErrorKind::InvalidResponse),
    };
    let status = response.code.ok_or(ErrorKind::InvalidResponse)?;
    let mut head = Head {
        status,
        len,
        content_length: None,
        chunked: false,
        close: response.version == Some(0),
    };
    for header in response.headers.iter() {
        let name = header.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let text = std::str::from_utf8(header.value).map_err(|_| ErrorKind::InvalidResponse)?;
            let value = text
                .trim()
                .parse::<u64>()
                .map_err(|_| ErrorKind::InvalidResponse)?;
            if head.content_length.is_some_and(|v| v != value) {
                return Err(ErrorKind::InvalidResponse);
            }
            head.content_length = Some(value);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            head.chunked = contains_token(header.value, b"chunked");
        } else if name.eq_ignore_ascii_case(b"connection") {
            if contains_token(header.value, b"close") {
                head.close = true;
            } else if contains_token(header.value, b"keep-alive") {
                head.close = false;
            }
        }
    }
    Ok(Some(head))
}

/// Whether a comma-separated header value contains `token` (ASCII case-insensitive).
fn contains_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|part| part.trim_ascii().eq_ignore_ascii_case(token))
}

/// How the body's end is known.
#[derive(Debug, Clone, Copy)]
enum Framing {
    Length(u64),
    Chunked,
    UntilClose,
}

/// Reads and discards the body. `buf[start..filled]` holds body bytes already read.
/// Returns true when bytes beyond the body were received.
async fn read_body(
    stream: &mut TcpStream,
    buf: &mut [u8],
    start: usize,
    filled: usize,
    framing: Framing,
    received: &mut u64,
    sink: &mut impl FnMut(&[u8]),
) -> Result<bool, ErrorKind> {
    match framing {
        Framing::Length(len) => {
            let buffered = (filled - start) as u64;
            if buffered >= len {
                sink(&buf[start..start + len as usize]);
                return Ok(buffered > len);
            }
            sink(&buf[start..filled]);
            let mut remaining = len - buffered;
            while remaining > 0 {
                let n = read_some(stream, buf).await?;
                if n == 0 {
                    return Err(ErrorKind::Closed);
                }
                *received += n as u64;
                if n as u64 > remaining {
                    sink(&buf[..remaining as usize]);
                    return Ok(true);
                }
                sink(&buf[..n]);
                remaining -= n as u64;
            }
            Ok(false)
        }
        Framing::UntilClose => {
            sink(&buf[start..filled]);
            loop {
                let n = read_some(stream, buf).await?;
                if n == 0 {
                    return Ok(false);
                }
                *received += n as u64;
                sink(&buf[..n]);
            }
        }
        Framing::Chunked => {
            let mut decoder = ChunkedDecoder::default();
            let mut pending = start..filled;
            loop {
                match decoder.feed(&buf[pending.clone()], sink)? {
                    Feed::Done { consumed } => return Ok(consumed < pending.len()),
                    Feed::NeedMore { consumed } => {
                        // Keep an unconsumed partial size line at the front of the buffer.
                        let keep = pending.start + consumed..pending.end;
                        let kept = keep.len();
                        buf.copy_within(keep, 0);
                        if kept == buf.len() {
                            return Err(ErrorKind::InvalidResponse);
                        }
                        let n = read_some(stream, &mut buf[kept..]).await?;
                        if n == 0 {
                            return Err(ErrorKind::Closed);
                        }
                        *received += n as u64;
                        pending = 0..kept + n;
                    }
                }
            }
        }
    }
}

/// Outcome of feeding bytes to the chunked decoder.
#[derive(Debug, PartialEq, Eq)]
enum Feed {
    /// The body ended after `consumed` bytes of this slice.
    Done { consumed: usize },
    /// All of the first `consumed` bytes were used; the rest (a partial line) must be fed again with
    /// more bytes after it.
    NeedMore { consumed: usize },
}

/// Incremental decoder for `Transfer-Encoding: chunked` that only finds the body's end.
#[derive(Debug, Default)]
struct ChunkedDecoder {
    state: ChunkState,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    /// Expecting a chunk-size line.
    #[default]
    Size,
    /// Inside chunk data with this many bytes left.
    Data(u64),
    /// Expecting the CRLF after chunk data.
    DataEnd,
    /// After the last chunk: expecting trailer lines up to an empty line.
    Trailer,
}

impl ChunkedDecoder {
    fn feed(&mut self, bytes: &[u8], sink: &mut impl FnMut(&[u8])) -> Result<Feed, ErrorKind> {
        let mut pos = 0usize;
        loop {
            let rest = &bytes[pos..];
            match self.state {
                ChunkState::Size => match httparse::parse_chunk_size(rest) {
                    Ok(httparse::Status::Complete((used, 0))) => {
                        pos += used;
                        self.state = ChunkState::Trailer;
                    }
                    Ok(httparse::Status::Complete((used, size))) => {
                        pos += used;
                        self.state = ChunkState::Data(size);
                    }
                    Ok(httparse::Status::Partial) => return Ok(Feed::NeedMore { consumed: pos }),
                    Err(_) => return Err(ErrorKind::InvalidResponse),
                },
                ChunkState::Data(left) => {
                    let take = left.min(rest.len() as u64);
                    sink(&rest[..take as usize]);
                    pos += take as usize;
                    if take == left {
                        self.state = ChunkState::DataEnd;
                    } else {
                        self.state = ChunkState::Data(left - take);
                        return Ok(Feed::NeedMore { consumed: pos });
                    }
                }
                ChunkState::DataEnd => {
                    if rest.len() < 2 {
                        return Ok(Feed::NeedMore { consumed: pos });
                    }
                    if &rest[..2] != b"\r\n" {
                        return Err(ErrorKind::InvalidResponse);
                    }
                    pos += 2;
                    self.state = ChunkState::Size;
                }
                ChunkState::Trailer => {
                    let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
                        return Ok(Feed::NeedMore { consumed: pos });
                    };
                    pos += eol + 2;
                    if eol == 0 {
                        return Ok(Feed::Done { consumed: pos });
                    }
                }
            }
        }
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

    #[test]
    fn head_parsing() {
        let head =
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")
                .unwrap()
                .unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(head.content_length, Some(3));
        assert!(head.close);
        assert_eq!(head.len, 57);
        assert_eq!(parse_head(b"HTTP/1.1 200 OK\r\nConte").unwrap(), None);
        assert_eq!(
            parse_head(b"NOT-HTTP garbage\r\n\r\n"),
            Err(ErrorKind::InvalidResponse)
        );
        let head = parse_head(b"HTTP/1.0 200 OK\r\n\r\n").unwrap().unwrap();
        assert!(head.close, "HTTP/1.0 closes by default");
        assert_eq!(
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            Err(ErrorKind::InvalidResponse)
        );
    }

    #[test]
    fn chunked_decoder_handles_split_input() {
        let body = b"5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        // Whole at once.
        let mut d = ChunkedDecoder::default();
        assert_eq!(
            d.feed(body, &mut |_| {}).unwrap(),
            Feed::Done {
                consumed: body.len() - 4
            }
        );
        // Byte by byte, re-feeding what was not consumed, as the reader does.
        let mut d = ChunkedDecoder::default();
        let mut pending: Vec<u8> = Vec::new();
        let mut done = false;
        for &b in &body[..body.len() - 4] {
            pending.push(b);
            match d.feed(&pending, &mut |_| {}).unwrap() {
                Feed::Done { consumed } => {
                    assert_eq!(consumed, pending.len());
                    done = true;
                }
                Feed::NeedMore { consumed } => {
                    pending.drain(..consumed);
                }
            }
        }
        assert!(done);
        let mut data = Vec::new();
        ChunkedDecoder::default()
            .feed(body, &mut |b| data.extend_from_slice(b))
            .unwrap();
        assert_eq!(data, b"helloabc");
        let mut d = ChunkedDecoder::default();
        assert_eq!(
            d.feed(b"zz\r\n", &mut |_| {}),
            Err(ErrorKind::InvalidResponse)
        );
        let mut d = ChunkedDecoder::default();
        assert_eq!(
            d.feed(b"1\r\naXY", &mut |_| {}),
            Err(ErrorKind::InvalidResponse)
        );
    }
}
