//! `GET /ws?delay_ms=D[&close_after=N&code=C]`: a WebSocket echo. Each text or binary message
//! is sent back D ms after it arrived (0 by default), whatever else is in flight: a reader
//! stamps each arrival and a writer sends each echo on its own schedule, so paced messages come
//! back on time even when D is longer than their interval. Pings are answered and a close is
//! echoed. With `close_after`, the target closes with code C (default 1000) after its N-th
//! echo: a stream the server ends, normally or with an error code.

use std::time::{Duration, Instant};

use crate::server::incoming::ReqBody;
use fastwebsockets::{Frame, OpCode, Payload, WebSocketError};
use hyper::Request;
use tokio::sync::mpsc;

use super::body::TargetBody;
use super::respond::bad_request;
use super::streams::{millis, query_pairs};

/// A frame to send, and when.
type Due = (Instant, Frame<'static>);

/// Answers an upgrade request with `101` and serves the WebSocket on its own task.
pub(crate) fn upgrade(mut req: Request<ReqBody>) -> hyper::Response<TargetBody> {
    let mut echo = Echo {
        delay: Duration::ZERO,
        close_after: None,
        code: 1000,
    };
    for (key, value) in query_pairs(req.uri().query()) {
        let parsed = match key {
            "delay_ms" => millis(key, value).map(|d| echo.delay = d),
            "close_after" => value
                .parse()
                .map(|n| echo.close_after = Some(n))
                .map_err(|_| "close_after must be a count".to_string()),
            "code" => match value.parse() {
                Ok(c @ 1000..=4999) => {
                    echo.code = c;
                    Ok(())
                }
                _ => Err("code must be a close code in 1000..=4999".to_string()),
            },
            _ => Ok(()),
        };
        if let Err(why) = parsed {
            return bad_request(why);
        }
    }
    if !fastwebsockets::upgrade::is_upgrade_request(&req) {
        return bad_request("/ws is a WebSocket: send Upgrade: websocket and Connection: Upgrade");
    }
    let (response, upgraded) = match fastwebsockets::upgrade::upgrade(&mut req) {
        Ok(pair) => pair,
        Err(e) => return bad_request(format_args!("/ws: {e}")),
    };
    tokio::spawn(async move {
        if let Ok(ws) = upgraded.await {
            // A client that goes away mid-stream is no error of the target's.
            let _ = echo.serve(ws).await;
        }
    });
    response.map(|_| TargetBody::empty())
}

/// How `/ws` echoes.
#[derive(Debug, Clone, Copy)]
struct Echo {
    /// Each echo this long after its message arrived.
    delay: Duration,
    /// Close after this many echoes.
    close_after: Option<u64>,
    /// With this code.
    code: u16,
}

impl Echo {
    /// Echoes every message `delay` after its arrival until the client closes (or, with
    /// `close_after`, closes itself).
    async fn serve<S>(self, ws: fastwebsockets::WebSocket<S>) -> Result<(), WebSocketError>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let (mut rx, mut tx) = ws.split(tokio::io::split);
        let (out, mut queue) = mpsc::unbounded_channel::<Due>();
        let reader = async move {
            // Pongs and the close's answer, owed by the read half, go out at once.
            let mut obligated = |frame: Frame<'_>| {
                let sent = out.send((Instant::now(), owned(&frame)));
                std::future::ready(sent.map_err(|_| std::io::Error::other("writer gone")))
            };
            let mut echoed = 0;
            loop {
                let frame = rx.read_frame(&mut obligated).await?;
                let due = Instant::now() + self.delay;
                match frame.opcode {
                    OpCode::Close => return Ok::<(), WebSocketError>(()),
                    _ if self.close_after.is_some_and(|n| echoed >= n) => {}
                    OpCode::Text | OpCode::Binary | OpCode::Continuation => {
                        let _ = out.send((due, owned(&frame)));
                        echoed += u64::from(frame.fin);
                        if self.close_after == Some(echoed) {
                            let _ = out.send((due, Frame::close(self.code, b"")));
                        }
                    }
                    _ => {}
                }
            }
        };
        let writer = async move {
            while let Some((due, frame)) = queue.recv().await {
                crate::timer::sleep_until(due).await;
                let close = frame.opcode == OpCode::Close;
                tx.write_frame(frame).await?;
                if close {
                    break;
                }
            }
            Ok(())
        };
        tokio::try_join!(reader, writer).map(|_| ())
    }
}

/// `frame` with a payload of its own.
fn owned(frame: &Frame<'_>) -> Frame<'static> {
    Frame::new(
        frame.fin,
        frame.opcode,
        None,
        Payload::Owned(frame.payload.to_vec()),
    )
}
