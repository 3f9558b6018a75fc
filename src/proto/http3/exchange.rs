//! One HTTP/3 request: its stream opened, the head and body sent, the response read (its body
//! counted against its cap, kept as asked, handed to a streaming step's tap).

use std::time::Instant;

use bytes::{Buf, Bytes};
use h3::error::Code;
use http::HeaderMap;

use super::Sender;
use crate::proto::ErrorKind;
use crate::proto::conn::{Failure, Limits, MAX_HEADERS, header_bytes};
use crate::proto::dial::micros_since;
use crate::proto::http2::Http2Request;
use crate::proto::message::{BodyTap, Capture, Captured, Response, Tapped, Timing};
use crate::proto::pick::{PickNames, Picked};

/// A request stream of one QUIC connection.
pub(super) type Stream = h3::client::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;

/// Opens the request's stream and sends its head (nothing of the request is sent if this
/// fails: a connection found closing can be replaced and the request sent on the new one).
pub(super) async fn open(sender: &mut Sender, req: &Http2Request) -> Result<Stream, Failure> {
    Ok(sender.send_request(req.head()).await?)
}

/// What a response is read for.
pub(super) struct Reading<'a, 't> {
    pub(super) capture: Capture,
    pub(super) limits: Limits,
    pub(super) picking: Option<(&'a PickNames, &'a mut Picked)>,
    pub(super) tap: Option<&'a mut (dyn BodyTap + 't)>,
}

/// Sends the body on the open `stream`, ends the request side, and reads the response.
/// `sent` is when the head was handed to the stream (the wait starts there).
pub(super) async fn send_and_read(
    stream: &mut Stream,
    req: &Http2Request,
    sent: Instant,
    r: Reading<'_, '_>,
    received: &mut u64,
) -> Result<Response, Failure> {
    if !req.body().is_empty() {
        stream.send_data(req.body().clone()).await?;
    }
    stream.finish().await?;
    let response = stream.recv_response().await?;
    let wait_us = micros_since(sent);
    let (head, ()) = response.into_parts();
    let head_bytes = header_bytes(&head.headers);
    *received += head_bytes as u64;
    if let Some((names, picked)) = r.picking {
        picked.pick_map(names, &head.headers);
    }
    // h3 refuses heads over the announced field-section size; this also holds HTTP/3 to
    // HTTP/1.1's field count.
    if head.headers.len() > MAX_HEADERS || head_bytes > r.limits.max_head_bytes {
        stream.stop_sending(Code::H3_REQUEST_CANCELLED);
        return Err(Failure::stream(ErrorKind::HeaderTooLarge));
    }
    let capture = r.capture;
    let mut kept = Kept {
        on: capture.any(),
        body: Vec::new(),
        limit: capture.body_limit,
        truncated: false,
    };
    read_body(stream, r.limits.body_cap(), &mut kept, r.tap, received).await?;
    let captured = kept.on.then(|| {
        Box::new(Captured {
            headers: if capture.headers {
                head.headers
            } else {
                HeaderMap::new()
            },
            body: Bytes::from(kept.body),
            truncated: kept.truncated,
        })
    });
    Ok(Response {
        status: head.status.as_u16(),
        grpc_status: None,
        bytes_received: *received,
        timing: Timing {
            wait_us,
            ..Timing::default()
        },
        captured,
    })
}

/// What a capturing exchange keeps of the body.
struct Kept {
    on: bool,
    body: Vec<u8>,
    limit: usize,
    truncated: bool,
}

impl Kept {
    fn keep(&mut self, chunk: &[u8]) {
        if !self.on || self.limit == 0 {
            return;
        }
        let room = self.limit - self.body.len();
        if chunk.len() > room {
            self.truncated = true;
        }
        self.body.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
}

/// Reads the body to its end, or until the tap stops it (the stream is then cancelled);
/// fails once it is over `max` bytes.
async fn read_body(
    stream: &mut Stream,
    max: u64,
    kept: &mut Kept,
    mut tap: Option<&mut (dyn BodyTap + '_)>,
    received: &mut u64,
) -> Result<(), Failure> {
    let mut length = 0u64;
    while let Some(mut data) = stream.recv_data().await? {
        let at = Instant::now();
        while data.has_remaining() {
            let chunk = data.chunk();
            let n = chunk.len();
            *received += n as u64;
            length += n as u64;
            if length > max {
                stream.stop_sending(Code::H3_REQUEST_CANCELLED);
                return Err(Failure::stream(ErrorKind::BodyTooLarge));
            }
            kept.keep(chunk);
            if let Some(tap) = tap.as_deref_mut()
                && tap.data(chunk, at) == Tapped::Stop
            {
                stream.stop_sending(Code::H3_REQUEST_CANCELLED);
                return Ok(());
            }
            data.advance(n);
        }
    }
    Ok(())
}
