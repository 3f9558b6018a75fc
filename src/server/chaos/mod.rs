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
//! - Over HTTP/2 (which hyper serves, see [`big_head_h2`](write::big_head_h2)), `/chaos/headers` and
//!   `/chaos/long-header` send the same heads, as HEADERS and CONTINUATION frames; the long
//!   header is at most [`MAX_H2_HEADER_BYTES`](write::MAX_H2_HEADER_BYTES) there, as it is built in memory.
//! - `/chaos/deaf`: never reads the request (not even its head: the connection
//!   was routed by peeking, see `listen.rs`) and never answers. Unlike `hang`,
//!   the client's send blocks once the socket buffers are full.

mod head;
mod params;
mod write;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::listen::stopped;
use super::metrics::{ChaosKind, Metrics};
use super::routes::MAX_BYTES;
use head::{Head, HeadError, discard_body, read_head};
use params::{BigHead, slow_params};
use write::{big_head, close, hang, reset_mid_body, respond, trickle};

pub(crate) use write::{big_head_h2, deaf};

/// How a connection goes on once a request is answered.
enum After {
    /// The next request, if the connection is kept alive; closed otherwise.
    Next,
    /// Closed with a FIN (see [`close`]).
    Close,
    /// Closed with a TCP RST.
    Reset,
    /// Held open, unanswered (see [`hang`]).
    Hang,
    /// Dropped: the client is gone, or the server stops.
    Drop,
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
        match answer(&mut stream, &head, metrics, &mut shutdown).await {
            After::Next if head.keep_alive => {}
            After::Next | After::Close => return close(stream, shutdown).await,
            After::Reset => {
                let _ = stream.set_zero_linger();
                return drop(stream);
            }
            After::Hang => return hang(stream, shutdown).await,
            After::Drop => return,
        }
    }
}

/// Answers one request (its body already skipped) as its path says.
async fn answer(
    stream: &mut TcpStream,
    head: &Head,
    metrics: &Metrics,
    shutdown: &mut watch::Receiver<bool>,
) -> After {
    let keep_alive = head.keep_alive;
    match head.path.as_str() {
        "/chaos/reset" => {
            metrics.record_chaos(ChaosKind::Reset);
            After::Reset
        }
        "/chaos/hang" => {
            metrics.record_chaos(ChaosKind::Hang);
            After::Hang
        }
        "/chaos/garbage" => {
            metrics.record_chaos(ChaosKind::Garbage);
            let _ = stream.write_all(b"NOT-HTTP garbage\r\n\r\n").await;
            After::Close
        }
        "/chaos/close" => {
            metrics.record_chaos(ChaosKind::Close);
            let _ = stream
                .write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n",
                )
                .await;
            After::Close
        }
        "/chaos/reset-body" => {
            metrics.record_chaos(ChaosKind::ResetBody);
            let _ = reset_mid_body(stream).await;
            After::Reset
        }
        "/chaos/headers" | "/chaos/long-header" => {
            match BigHead::parse(&head.path, head.query.as_deref(), MAX_BYTES) {
                Some(Ok(big)) => {
                    metrics.record_chaos(big.kind());
                    let sent = tokio::select! {
                        sent = big_head(stream, big) => sent,
                        _ = stopped(shutdown) => return After::Drop,
                    };
                    if sent.is_ok() {
                        After::Close
                    } else {
                        After::Drop
                    }
                }
                Some(Err(message)) => {
                    metrics.record_chaos(ChaosKind::Invalid);
                    let body = format!("bad request: {message}\n");
                    let _ = respond(stream, "400 Bad Request", body.as_bytes(), false).await;
                    After::Close
                }
                None => After::Drop, // not reached: the arm matched one of its paths
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
            After::Close
        }
        "/chaos/slow" => slow(stream, head, metrics, shutdown).await,
        path if path.starts_with("/chaos/") => {
            metrics.record_chaos(ChaosKind::Invalid);
            let body = b"unknown chaos path (reset, hang, garbage, close, slow, reset-body, \
                         headers, long-header, bad-chunked, deaf)\n";
            match respond(stream, "404 Not Found", body, keep_alive).await {
                Ok(()) => After::Next,
                Err(_) => After::Drop,
            }
        }
        _ => {
            metrics.record_chaos(ChaosKind::Invalid);
            let body = b"this connection serves only /chaos/ paths\n";
            let _ = respond(stream, "421 Misdirected Request", body, false).await;
            After::Close
        }
    }
}

/// `/chaos/slow`: the body trickled at the asked rate, or a 400 saying why not.
async fn slow(
    stream: &mut TcpStream,
    head: &Head,
    metrics: &Metrics,
    shutdown: &mut watch::Receiver<bool>,
) -> After {
    let sent = match slow_params(head.query.as_deref()) {
        Ok((rate, total)) => {
            metrics.record_chaos(ChaosKind::Slow);
            tokio::select! {
                sent = trickle(stream, rate, total, head.keep_alive) => sent,
                _ = stopped(shutdown) => return After::Drop,
            }
        }
        Err(message) => {
            metrics.record_chaos(ChaosKind::Invalid);
            let body = format!("bad request: {message}\n");
            respond(stream, "400 Bad Request", body.as_bytes(), head.keep_alive).await
        }
    };
    match sent {
        Ok(()) => After::Next,
        Err(_) => After::Drop,
    }
}
