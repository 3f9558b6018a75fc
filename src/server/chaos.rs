//! The raw HTTP/1.1 handler for `/chaos/` connections (see the module docs of
//! [`super`] for why these are served below hyper).
//!
//! - `/chaos/reset`: reads the request, then closes with a TCP RST (`SO_LINGER 0`).
//! - `/chaos/hang`: reads the request and never answers; the socket stays open
//!   until the client closes it or the server stops.
//! - `/chaos/garbage`: answers `NOT-HTTP garbage\r\n\r\n`, then closes.
//! - `/chaos/close`: sends a 200 head announcing `Content-Length: 100`, then
//!   closes without the body.
//! - `/chaos/slow?bytes_per_sec=N[&bytes=TOTAL]`: 200 with a `TOTAL`-byte body
//!   (default 1024) trickled at N bytes/s, then keeps the connection alive for
//!   further `/chaos/` requests; a non-chaos request on it gets 421 and a close.
//! - `/chaos/reset-body`: a 200 head announcing a 1 MiB body, 64 KiB of it, then
//!   a TCP RST in the middle of the body.
//! - `/chaos/headers[?count=N]`: a 200 with N header fields (default 1000, at
//!   most 100 000), then closes.
//! - `/chaos/long-header[?bytes=N]`: a 200 whose one header line holds N bytes
//!   (default 1 MiB, at most 100 MiB), streamed, then closes.
//! - `/chaos/bad-chunked`: a 200 with `Transfer-Encoding: chunked` whose second
//!   chunk-size line is not hexadecimal, then closes.
//! - Over HTTP/2 (which hyper serves, see [`big_head_h2`]), `/chaos/headers` and
//!   `/chaos/long-header` send the same heads, as HEADERS and CONTINUATION frames; the long
//!   header is at most [`MAX_H2_HEADER_BYTES`] there, as it is built in memory.
//! - `/chaos/deaf`: never reads the request (not even its head: the connection
//!   was routed by peeking, see `server.rs`) and never answers. Unlike `hang`,
//!   the client's send blocks once the socket buffers are full.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::body::{PATTERN_LEN, pattern_slice};
use super::listen::stopped;
use super::metrics::{ChaosKind, Metrics};
use super::routes::MAX_BYTES;

/// Largest accepted request head, in bytes.
const MAX_HEAD: usize = 16 * 1024;
/// How long a closing connection waits for the client to close its side.
const LINGER: Duration = Duration::from_secs(2);
/// Shortest pause between two writes of a `/chaos/slow` body.
const SLOW_TICK: Duration = Duration::from_millis(10);
/// `/chaos/reset-body`: the body announced, and the part sent before the reset, bytes.
const RESET_BODY_ANNOUNCED: u64 = 1024 * 1024;
const RESET_BODY_SENT: u64 = 64 * 1024;
/// `/chaos/reset-body`: how long the part sent gets to reach the client before the reset
/// (an RST discards whatever is still in the server's send buffer).
const RESET_BODY_PAUSE: Duration = Duration::from_millis(50);
/// Most header fields `/chaos/headers` sends.
const MAX_CHAOS_HEADERS: u64 = 100_000;
/// Longest header line `/chaos/long-header` sends over HTTP/2, bytes (16 MiB).
pub(super) const MAX_H2_HEADER_BYTES: u64 = 16 << 20;
/// `/chaos/deaf`: how often to look whether the client has gone, and the longest hold.
const DEAF_POLL: Duration = Duration::from_millis(100);
const DEAF_HOLD: Duration = Duration::from_secs(600);

/// The parts of a request head the chaos handler needs.
#[derive(Debug)]
struct Head {
    path: String,
    query: Option<String>,
    keep_alive: bool,
    content_length: u64,
    chunked: bool,
}

/// Why no request head could be read.
#[derive(Debug)]
enum HeadError {
    /// Not HTTP/1, or too large: answer 400 and close.
    Invalid,
    /// The connection failed or closed mid-request: just drop it.
    Io,
}

/// Serves one connection whose first request targets `/chaos/`.
pub(crate) async fn serve(
    mut stream: TcpStream,
    metrics: &Metrics,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut buf = Vec::with_capacity(4096);
    loop {
        let head = tokio::select! {
            head = read_head(&mut stream, &mut buf) => head,
            _ = stopped(&mut shutdown) => return,
        };
        let mut head = match head {
            Ok(Some(head)) => head,
            Ok(None) | Err(HeadError::Io) => return,
            Err(HeadError::Invalid) => {
                metrics.record_chaos(ChaosKind::Invalid);
                let _ = respond(&mut stream, "400 Bad Request", b"bad request\n", false).await;
                return close(stream, shutdown).await;
            }
        };
        if head.chunked {
            // Bodies are only skipped by length; a chunked one ends the
            // connection after this request.
            head.keep_alive = false;
        } else if discard_body(&mut stream, &mut buf, head.content_length)
            .await
            .is_err()
        {
            return;
        }
        let keep_alive = head.keep_alive;
        match head.path.as_str() {
            "/chaos/reset" => {
                metrics.record_chaos(ChaosKind::Reset);
                let _ = stream.set_zero_linger();
                return drop(stream);
            }
            "/chaos/hang" => {
                metrics.record_chaos(ChaosKind::Hang);
                return hang(stream, shutdown).await;
            }
            "/chaos/garbage" => {
                metrics.record_chaos(ChaosKind::Garbage);
                let _ = stream.write_all(b"NOT-HTTP garbage\r\n\r\n").await;
                return close(stream, shutdown).await;
            }
            "/chaos/close" => {
                metrics.record_chaos(ChaosKind::Close);
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n",
                    )
                    .await;
                return close(stream, shutdown).await;
            }
            "/chaos/reset-body" => {
                metrics.record_chaos(ChaosKind::ResetBody);
                let _ = reset_mid_body(&mut stream).await;
                let _ = stream.set_zero_linger();
                return drop(stream);
            }
            "/chaos/headers" | "/chaos/long-header" => {
                let Some(big) = BigHead::parse(&head.path, head.query.as_deref(), MAX_BYTES) else {
                    return; // not reached: the arm matched one of its paths
                };
                match big {
                    Ok(big) => {
                        metrics.record_chaos(big.kind());
                        let sent = tokio::select! {
                            sent = big_head(&mut stream, big) => sent,
                            _ = stopped(&mut shutdown) => return,
                        };
                        if sent.is_ok() {
                            close(stream, shutdown).await;
                        }
                        return;
                    }
                    Err(message) => {
                        metrics.record_chaos(ChaosKind::Invalid);
                        let body = format!("bad request: {message}\n");
                        let _ =
                            respond(&mut stream, "400 Bad Request", body.as_bytes(), false).await;
                        return close(stream, shutdown).await;
                    }
                }
            }
            "/chaos/bad-chunked" => {
                metrics.record_chaos(ChaosKind::BadChunked);
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n\
                          5\r\nhello\r\nzz\r\nnot a chunk\r\n0\r\n\r\n",
                    )
                    .await;
                return close(stream, shutdown).await;
            }
            "/chaos/slow" => match slow_params(head.query.as_deref()) {
                Ok((rate, total)) => {
                    metrics.record_chaos(ChaosKind::Slow);
                    let sent = tokio::select! {
                        sent = trickle(&mut stream, rate, total, keep_alive) => sent,
                        _ = stopped(&mut shutdown) => return,
                    };
                    if sent.is_err() {
                        return;
                    }
                }
                Err(message) => {
                    metrics.record_chaos(ChaosKind::Invalid);
                    let body = format!("bad request: {message}\n");
                    if respond(&mut stream, "400 Bad Request", body.as_bytes(), keep_alive)
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            },
            path if path.starts_with("/chaos/") => {
                metrics.record_chaos(ChaosKind::Invalid);
                let body = b"unknown chaos path (reset, hang, garbage, close, slow, reset-body, \
                             headers, long-header, bad-chunked, deaf)\n";
                if respond(&mut stream, "404 Not Found", body, keep_alive)
                    .await
                    .is_err()
                {
                    return;
                }
            }
            _ => {
                metrics.record_chaos(ChaosKind::Invalid);
                let body = b"this connection serves only /chaos/ paths\n";
                let _ = respond(&mut stream, "421 Misdirected Request", body, false).await;
                return close(stream, shutdown).await;
            }
        }
        if !keep_alive {
            return close(stream, shutdown).await;
        }
    }
}

/// Reads and parses the next request head from `stream`, leaving any bytes
/// after it in `buf`. `Ok(None)`: the client closed between requests.
async fn read_head(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<Option<Head>, HeadError> {
    loop {
        if !buf.is_empty() {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut req = httparse::Request::new(&mut headers);
            match req.parse(buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let head = head_of(&req)?;
                    buf.drain(..len);
                    return Ok(Some(head));
                }
                Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => {}
                Ok(httparse::Status::Partial) | Err(_) => return Err(HeadError::Invalid),
            }
        }
        buf.reserve(4096);
        match stream.read_buf(buf).await {
            Ok(0) if buf.is_empty() => return Ok(None),
            Ok(0) | Err(_) => return Err(HeadError::Io),
            Ok(_) => {}
        }
    }
}

fn head_of(req: &httparse::Request<'_, '_>) -> Result<Head, HeadError> {
    let target = req.path.ok_or(HeadError::Invalid)?;
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query.to_owned())),
        None => (target, None),
    };
    let mut keep_alive = req.version == Some(1);
    let mut content_length = 0;
    let mut chunked = false;
    for header in req.headers.iter() {
        let value = std::str::from_utf8(header.value).map_err(|_| HeadError::Invalid)?;
        if header.name.eq_ignore_ascii_case("connection") {
            for token in value.split(',').map(str::trim) {
                if token.eq_ignore_ascii_case("close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case("keep-alive") {
                    keep_alive = true;
                }
            }
        } else if header.name.eq_ignore_ascii_case("content-length") {
            content_length = value.trim().parse().map_err(|_| HeadError::Invalid)?;
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = true;
        }
    }
    Ok(Head {
        path: path.to_owned(),
        query,
        keep_alive,
        content_length,
        chunked,
    })
}

/// Skips a `len`-byte request body (part of which may already be in `buf`).
async fn discard_body(stream: &mut TcpStream, buf: &mut Vec<u8>, len: u64) -> std::io::Result<()> {
    let buffered = buf.len().min(usize::try_from(len).unwrap_or(usize::MAX));
    buf.drain(..buffered);
    let rest = len - buffered as u64;
    if rest > 0 {
        let copied =
            tokio::io::copy(&mut (&mut *stream).take(rest), &mut tokio::io::sink()).await?;
        if copied < rest {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
    }
    Ok(())
}

/// Writes a small complete response.
async fn respond(
    stream: &mut TcpStream,
    status: &str,
    body: &[u8],
    keep_alive: bool,
) -> std::io::Result<()> {
    let connection = if keep_alive {
        ""
    } else {
        "Connection: close\r\n"
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n{connection}\r\n",
        body.len()
    );
    let mut message = head.into_bytes();
    message.extend_from_slice(body);
    stream.write_all(&message).await
}

/// Closes with a FIN, then waits (briefly) for the client to close its side so
/// that late client bytes do not turn the close into a reset.
async fn close(mut stream: TcpStream, mut shutdown: watch::Receiver<bool>) {
    let _ = stream.shutdown().await;
    let mut scratch = [0u8; 1024];
    let drain = async {
        while let Ok(n) = stream.read(&mut scratch).await {
            if n == 0 {
                break;
            }
        }
    };
    tokio::select! {
        _ = tokio::time::timeout(LINGER, drain) => {}
        _ = stopped(&mut shutdown) => {}
    }
}

/// Never answers; returns when the client closes or the server stops.
async fn hang(mut stream: TcpStream, mut shutdown: watch::Receiver<bool>) {
    let mut scratch = [0u8; 1024];
    let drain = async {
        while let Ok(n) = stream.read(&mut scratch).await {
            if n == 0 {
                break;
            }
        }
    };
    tokio::select! {
        _ = drain => {}
        _ = stopped(&mut shutdown) => {}
    }
}

/// Serves `/chaos/deaf`: reads nothing, answers nothing. Returns when the client has closed
/// its side (seen without reading: the socket reports a read hang-up), the server stops, or
/// after [`DEAF_HOLD`]. The bytes the client sent stay unread in the socket.
pub(crate) async fn deaf(
    stream: TcpStream,
    metrics: &Metrics,
    mut shutdown: watch::Receiver<bool>,
) {
    metrics.record_chaos(ChaosKind::Deaf);
    let held = async {
        loop {
            // Readiness stays set while unread bytes wait, so this polls rather than waits.
            match stream.ready(tokio::io::Interest::READABLE).await {
                Ok(ready) if ready.is_read_closed() || ready.is_error() => return,
                Ok(_) => tokio::time::sleep(DEAF_POLL).await,
                Err(_) => return,
            }
        }
    };
    tokio::select! {
        _ = tokio::time::timeout(DEAF_HOLD, held) => {}
        _ = stopped(&mut shutdown) => {}
    }
}

/// Sends a 200 head announcing [`RESET_BODY_ANNOUNCED`] bytes and the first
/// [`RESET_BODY_SENT`] of them; the caller then resets the connection.
async fn reset_mid_body(stream: &mut TcpStream) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {RESET_BODY_ANNOUNCED}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await?;
    let mut sent = 0;
    while sent < RESET_BODY_SENT {
        let chunk = pattern_slice(
            sent,
            (RESET_BODY_SENT - sent).min(PATTERN_LEN as u64) as usize,
        );
        stream.write_all(&chunk).await?;
        sent += chunk.len() as u64;
    }
    stream.flush().await?;
    tokio::time::sleep(RESET_BODY_PAUSE).await;
    Ok(())
}

/// An oversized response head.
#[derive(Debug, Clone, Copy)]
enum BigHead {
    /// This many header fields.
    Fields(u64),
    /// One header line of this many bytes.
    Line(u64),
}

impl BigHead {
    /// The head `/chaos/headers?count=N` (default 1000) or `/chaos/long-header?bytes=N` (default
    /// 1 MiB, at most `max_line`) asks for; `None` for other paths.
    fn parse(path: &str, query: Option<&str>, max_line: u64) -> Option<Result<Self, String>> {
        match path {
            "/chaos/headers" => {
                Some(count_param(query, "count", 1000, MAX_CHAOS_HEADERS).map(Self::Fields))
            }
            "/chaos/long-header" => {
                Some(count_param(query, "bytes", 1024 * 1024, max_line).map(Self::Line))
            }
            _ => None,
        }
    }

    /// How the metrics count it.
    fn kind(self) -> ChaosKind {
        match self {
            Self::Fields(_) => ChaosKind::Headers,
            Self::Line(_) => ChaosKind::LongHeader,
        }
    }
}

/// Streams a 200 response whose head is `big`, with a 3-byte body; no buffer of the head's size
/// is ever built.
async fn big_head(stream: &mut TcpStream, big: BigHead) -> std::io::Result<()> {
    stream
        .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n")
        .await?;
    let mut out = Vec::with_capacity(64 * 1024);
    match big {
        BigHead::Fields(count) => {
            for i in 0..count {
                out.extend_from_slice(format!("X-Chaos-{i}: {i}\r\n").as_bytes());
                if out.len() >= 60 * 1024 {
                    stream.write_all(&out).await?;
                    out.clear();
                }
            }
        }
        BigHead::Line(bytes) => {
            stream.write_all(b"X-Chaos-Long: ").await?;
            let filler = [b'a'; 16 * 1024];
            let mut left = bytes;
            while left > 0 {
                let n = left.min(filler.len() as u64) as usize;
                stream.write_all(&filler[..n]).await?;
                left -= n as u64;
            }
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(b"Content-Length: 3\r\nConnection: close\r\n\r\nok\n");
    stream.write_all(&out).await
}

/// The HTTP/2 form of `/chaos/headers` and `/chaos/long-header`: a 200 whose head is built by
/// hyper (HTTP/2 has no raw form to write by hand; its HEADERS and CONTINUATION frames carry
/// whatever head is given). `None` for the other chaos paths, which are HTTP/1.1 only.
pub(super) fn big_head_h2(
    path: &str,
    query: Option<&str>,
    metrics: &Metrics,
) -> Option<Result<hyper::Response<super::body::TargetBody>, String>> {
    let big = BigHead::parse(path, query, MAX_H2_HEADER_BYTES)?;
    Some(big.map(|big| {
        metrics.record_chaos(big.kind());
        let mut response = hyper::Response::new(super::body::TargetBody::from_static(b"ok\n"));
        let headers = response.headers_mut();
        match big {
            BigHead::Fields(count) => {
                for i in 0..count {
                    let name = hyper::header::HeaderName::try_from(format!("x-chaos-{i}"))
                        .expect("a valid header name");
                    headers.insert(name, hyper::header::HeaderValue::from(i));
                }
            }
            BigHead::Line(bytes) => {
                let value = vec![b'a'; bytes as usize];
                headers.insert(
                    "x-chaos-long",
                    hyper::header::HeaderValue::from_bytes(&value).expect("a valid header value"),
                );
            }
        }
        response
    }))
}

/// An integer query parameter `name` (default `default`, at most `max`).
fn count_param(query: Option<&str>, name: &str, default: u64, max: u64) -> Result<u64, String> {
    let mut value = default;
    for pair in query.unwrap_or("").split('&') {
        if let Some((key, v)) = pair.split_once('=')
            && key == name
        {
            value = v
                .parse()
                .map_err(|_| format!("{name} must be an integer of at most {max}"))?;
        }
    }
    if value > max {
        return Err(format!("{name} must be an integer of at most {max}"));
    }
    Ok(value)
}

/// `bytes_per_sec` (required, > 0) and `bytes` (default 1024, at most
/// [`MAX_BYTES`]) from the query string.
fn slow_params(query: Option<&str>) -> Result<(f64, u64), String> {
    let mut rate = None;
    let mut total = Ok(1024);
    for pair in query.unwrap_or("").split('&') {
        match pair.split_once('=') {
            Some(("bytes_per_sec", v)) => rate = Some(v.parse::<f64>()),
            Some(("bytes", v)) => total = v.parse::<u64>(),
            _ => {}
        }
    }
    let rate = match rate {
        Some(Ok(rate)) if rate.is_finite() && rate > 0.0 => rate,
        Some(_) => return Err("bytes_per_sec must be a positive number".into()),
        None => return Err("/chaos/slow needs ?bytes_per_sec=N".into()),
    };
    match total {
        Ok(total) if total <= MAX_BYTES => Ok((rate, total)),
        _ => Err(format!("bytes must be an integer of at most {MAX_BYTES}")),
    }
}

/// Sends a 200 head for `total` bytes, then the body at `rate` bytes/s.
async fn trickle(
    stream: &mut TcpStream,
    rate: f64,
    total: u64,
    keep_alive: bool,
) -> std::io::Result<()> {
    let connection = if keep_alive {
        ""
    } else {
        "Connection: close\r\n"
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {total}\r\n{connection}\r\n"
    );
    stream.write_all(head.as_bytes()).await?;
    let start = Instant::now();
    let mut sent = 0u64;
    while sent < total {
        // Everything due by now, at `rate` bytes/s since the start.
        let due = ((start.elapsed().as_secs_f64() * rate) as u64).min(total);
        while sent < due {
            let chunk = pattern_slice(sent, (due - sent).min(PATTERN_LEN as u64) as usize);
            stream.write_all(&chunk).await?;
            sent += chunk.len() as u64;
        }
        if sent >= total {
            break;
        }
        let next_byte = start + Duration::from_secs_f64((sent + 1) as f64 / rate);
        let wake = next_byte.max(Instant::now() + SLOW_TICK);
        tokio::time::sleep_until(wake.into()).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_parameters() {
        assert_eq!(slow_params(Some("bytes_per_sec=100")), Ok((100.0, 1024)));
        assert_eq!(
            slow_params(Some("bytes=10&bytes_per_sec=2.5")),
            Ok((2.5, 10))
        );
        assert!(slow_params(None).is_err());
        assert!(slow_params(Some("bytes_per_sec=0")).is_err());
        assert!(slow_params(Some("bytes_per_sec=1&bytes=-1")).is_err());
        assert!(slow_params(Some(&format!("bytes_per_sec=1&bytes={}", MAX_BYTES + 1))).is_err());
    }

    #[test]
    fn count_parameters() {
        assert_eq!(count_param(None, "count", 5, 10), Ok(5));
        assert_eq!(count_param(Some("x=1&count=7"), "count", 1, 10), Ok(7));
        assert!(count_param(Some("count=11"), "count", 1, 10).is_err());
        assert!(count_param(Some("count=-1"), "count", 1, 10).is_err());
    }

    #[test]
    fn parses_heads() {
        let mut headers = [httparse::EMPTY_HEADER; 8];
        let mut req = httparse::Request::new(&mut headers);
        req.parse(b"POST /chaos/slow?bytes_per_sec=5 HTTP/1.1\r\nConnection: close\r\nContent-Length: 3\r\n\r\n")
            .unwrap();
        let head = head_of(&req).unwrap();
        assert_eq!(head.path, "/chaos/slow");
        assert_eq!(head.query.as_deref(), Some("bytes_per_sec=5"));
        assert!(!head.keep_alive);
        assert_eq!(head.content_length, 3);

        let mut headers = [httparse::EMPTY_HEADER; 8];
        let mut req = httparse::Request::new(&mut headers);
        req.parse(b"GET /chaos/hang HTTP/1.0\r\n\r\n").unwrap();
        assert!(!head_of(&req).unwrap().keep_alive);
    }
}
