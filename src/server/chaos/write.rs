//! Writing `/chaos/` answers: well-formed ones, broken ones, and the ways a connection ends.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::super::body::{PATTERN_LEN, TargetBody, pattern_slice};
use super::super::listen::stopped;
use super::super::metrics::{ChaosKind, Metrics};
use super::params::{BigHead, ParamError};

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
/// Longest header line `/chaos/long-header` sends over HTTP/2, bytes (16 MiB).
pub(crate) const MAX_H2_HEADER_BYTES: u64 = 16 << 20;
/// `/chaos/deaf`: how often to look whether the client has gone, and the longest hold.
const DEAF_POLL: Duration = Duration::from_millis(100);
const DEAF_HOLD: Duration = Duration::from_secs(600);

/// Writes a small complete response.
pub(super) async fn respond(
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
pub(super) async fn close(mut stream: TcpStream, mut shutdown: watch::Receiver<bool>) {
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
pub(super) async fn hang(mut stream: TcpStream, mut shutdown: watch::Receiver<bool>) {
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
pub(super) async fn reset_mid_body(stream: &mut TcpStream) -> std::io::Result<()> {
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

/// Streams a 200 response whose head is `big`, with a 3-byte body; no buffer of the head's size
/// is ever built.
pub(super) async fn big_head(stream: &mut TcpStream, big: BigHead) -> std::io::Result<()> {
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
pub(crate) fn big_head_h2(
    path: &str,
    query: Option<&str>,
    metrics: &Metrics,
) -> Option<Result<hyper::Response<TargetBody>, ParamError>> {
    let big = BigHead::parse(path, query, MAX_H2_HEADER_BYTES)?;
    Some(big.map(|big| {
        metrics.record_chaos(big.kind());
        let mut response = hyper::Response::new(TargetBody::from_static(b"ok\n"));
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

/// Sends a 200 head for `total` bytes, then the body at `rate` bytes/s.
pub(super) async fn trickle(
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
