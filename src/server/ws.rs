//! `GET /ws?delay_ms=D`: a WebSocket echo. Each text or binary message is sent back D ms after
//! it arrived (0 by default), whatever else is in flight: a reader stamps each arrival and a
//! writer sends each echo on its own schedule, so paced messages come back on time even when
//! D is longer than their interval. Pings are answered and a close is echoed.

use std::time::{Duration, Instant};

use fastwebsockets::{Frame, OpCode, Payload, WebSocketError};
use hyper::Request;
use hyper::body::Incoming;
use tokio::sync::mpsc;

use super::body::TargetBody;
use super::respond::bad_request;
use super::streams::{millis, query_pairs};

/// A frame to send, and when.
type Due = (Instant, Frame<'static>);

/// Answers an upgrade request with `101` and serves the WebSocket on its own task.
pub(crate) fn upgrade(mut req: Request<Incoming>) -> hyper::Response<TargetBody> {
    let mut delay = Duration::ZERO;
    for (key, value) in query_pairs(req.uri().query()) {
        if key == "delay_ms" {
            match millis(key, value) {
                Ok(d) => delay = d,
                Err(why) => return bad_request(why),
            }
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
            let _ = echo(ws, delay).await;
        }
    });
    response.map(|_| TargetBody::empty())
}

/// Echoes every message `delay` after its arrival until the client closes.
async fn echo<S>(ws: fastwebsockets::WebSocket<S>, delay: Duration) -> Result<(), WebSocketError>
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
        loop {
            let frame = rx.read_frame(&mut obligated).await?;
            let arrived = Instant::now();
            match frame.opcode {
                OpCode::Text | OpCode::Binary | OpCode::Continuation => {
                    let _ = out.send((arrived + delay, owned(&frame)));
                }
                OpCode::Close => return Ok::<(), WebSocketError>(()),
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

/// `frame` with a payload of its own.
fn owned(frame: &Frame<'_>) -> Frame<'static> {
    Frame::new(
        frame.fin,
        frame.opcode,
        None,
        Payload::Owned(frame.payload.to_vec()),
    )
}
