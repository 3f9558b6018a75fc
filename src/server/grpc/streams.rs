//! The target's streaming gRPC methods (`volley.target.v1.Streams`): a server stream on an
//! absolute schedule (`Ticks`), a client stream answered at its end (`Collect`) and a
//! bidirectional echo with a delay (`Chat`). Each call is a task that reads the request body as
//! it arrives and sends framed messages, then the `grpc-status` trailers, through a channel the
//! response body drains ([`TargetBody::Frames`]).

use std::time::{Duration, Instant};

use crate::server::incoming::ReqBody;
use bytes::{Buf, Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Frame;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{HeaderMap, Response};
use prost::Message;
use tokio::sync::mpsc;

use super::messages::{CollectReply, EchoReply, EchoRequest, Tick, TicksRequest};
use super::{GRPC, MAX_DELAY_MS, MAX_MESSAGE_BYTES, Status};
use crate::proto::grpc::{GrpcCode, frame};
use crate::server::body::{PATTERN, TargetBody};

/// Most ticks one `Ticks` call sends.
const MAX_TICKS: u64 = 1_000_000;
/// Largest tick payload, bytes.
const MAX_TICK_PAYLOAD: u32 = 64 * 1024;

/// The streaming methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StreamMethod {
    /// Server streaming.
    Ticks,
    /// Client streaming.
    Collect,
    /// Bidirectional.
    Chat,
}

impl StreamMethod {
    /// The method at `path`, if it is one of these.
    pub(super) fn parse(path: &str) -> Option<Self> {
        Some(match path {
            "/volley.target.v1.Streams/Ticks" => Self::Ticks,
            "/volley.target.v1.Streams/Collect" => Self::Collect,
            "/volley.target.v1.Streams/Chat" => Self::Chat,
            _ => return None,
        })
    }
}

/// Serves one streaming call that arrived at `started`.
pub(super) fn handle(
    method: StreamMethod,
    body: ReqBody,
    started: Instant,
) -> Response<TargetBody> {
    let (tx, rx) = mpsc::channel(16);
    let out = Out(tx);
    tokio::spawn(async move {
        let mut incoming = Messages::new(body);
        let call = async {
            match method {
                StreamMethod::Ticks => ticks(&mut incoming, &out, started).await,
                StreamMethod::Collect => collect(&mut incoming, &out).await,
                StreamMethod::Chat => chat(incoming, &out).await,
            }
        };
        // A client that goes away ends the call at once, not at its next due message.
        let result = tokio::select! {
            result = call => result,
            () = out.0.closed() => return,
        };
        let Status(code, message) = result.err().unwrap_or(Status(GrpcCode::Ok, ""));
        out.end(code, message).await;
    });
    let mut response = Response::new(TargetBody::Frames(rx));
    response.headers_mut().insert(CONTENT_TYPE, GRPC);
    response
}

/// The response side of a call.
struct Out(mpsc::Sender<Frame<Bytes>>);

impl Out {
    /// Sends one message; an error when the client has gone.
    async fn send(&self, message: &impl Message) -> Result<(), Status> {
        let framed = frame(&message.encode_to_vec());
        self.0
            .send(Frame::data(framed))
            .await
            .map_err(|_| Status(GrpcCode::Cancelled, "the client went away"))
    }

    /// Ends the call with `code`.
    async fn end(&self, code: GrpcCode, message: &'static str) {
        let mut trailers = HeaderMap::new();
        trailers.insert("grpc-status", HeaderValue::from(code.as_u32()));
        if !message.is_empty() {
            trailers.insert("grpc-message", HeaderValue::from_static(message));
        }
        let _ = self.0.send(Frame::trailers(trailers)).await;
    }
}

/// The request side of a call: whole messages as they arrive.
struct Messages {
    body: ReqBody,
    pending: BytesMut,
    ended: bool,
}

impl Messages {
    fn new(body: ReqBody) -> Self {
        Self {
            body,
            pending: BytesMut::new(),
            ended: false,
        }
    }

    /// The next whole message and when its last byte arrived; `None` once the client has closed
    /// its side.
    async fn next(&mut self) -> Result<Option<(Bytes, Instant)>, Status> {
        loop {
            if let Some(message) = self.whole()? {
                return Ok(Some((message, Instant::now())));
            }
            if self.ended {
                return match self.pending.is_empty() {
                    true => Ok(None),
                    false => Err(Status(
                        GrpcCode::Internal,
                        "the request ended inside a message",
                    )),
                };
            }
            match self.body.frame().await {
                None => self.ended = true,
                Some(Err(_)) => return Err(Status(GrpcCode::Cancelled, "request not received")),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.pending.extend_from_slice(&data);
                    }
                }
            }
        }
    }

    /// A whole message from what has arrived, if there is one.
    fn whole(&mut self) -> Result<Option<Bytes>, Status> {
        let p = &self.pending;
        if p.len() < 5 {
            return Ok(None);
        }
        if p[0] != 0 {
            return Err(Status(
                GrpcCode::Unimplemented,
                "compressed messages are not supported",
            ));
        }
        let len = u32::from_be_bytes([p[1], p[2], p[3], p[4]]) as usize;
        if len > MAX_MESSAGE_BYTES {
            return Err(Status(
                GrpcCode::ResourceExhausted,
                "message larger than 4 MiB",
            ));
        }
        if p.len() < 5 + len {
            return Ok(None);
        }
        self.pending.advance(5);
        Ok(Some(self.pending.split_to(len).freeze()))
    }
}

/// Milliseconds as a duration, refused outside `0..=MAX_DELAY_MS`.
fn millis(ms: f64, what: &'static str) -> Result<Duration, Status> {
    if ms.is_finite() && (0.0..=MAX_DELAY_MS).contains(&ms) {
        Ok(Duration::from_secs_f64(ms / 1e3))
    } else {
        Err(Status(GrpcCode::InvalidArgument, what))
    }
}

/// Sleeps until `due` on the precise timer when there is one.
async fn sleep_until(timer: Option<&crate::timer::PreciseTimer>, due: Instant) {
    match timer {
        Some(t) if t.sleep_until(due).await.is_ok() => {}
        _ => crate::timer::sleep_until(due).await,
    }
}

const INVALID: Status = Status(GrpcCode::InvalidArgument, "message does not decode");

/// `Ticks`: tick k at `started + first + k·gap`.
async fn ticks(incoming: &mut Messages, out: &Out, started: Instant) -> Result<(), Status> {
    let (message, _) = incoming
        .next()
        .await?
        .ok_or(Status(GrpcCode::InvalidArgument, "no request message"))?;
    let req = TicksRequest::decode(message).map_err(|_| INVALID)?;
    let gap = millis(req.gap_ms, "gap_ms must be in 0..=600000")?;
    let first = millis(req.first_ms, "first_ms must be in 0..=600000")?;
    if req.count > MAX_TICKS || req.payload_bytes > MAX_TICK_PAYLOAD {
        return Err(Status(
            GrpcCode::InvalidArgument,
            "count is at most 1000000, payload_bytes at most 65536",
        ));
    }
    let payload = Bytes::from_static(&PATTERN[..req.payload_bytes as usize]);
    let timer = crate::timer::PreciseTimer::new().ok();
    for seq in 0..req.count {
        let due = started + first + gap.mul_f64(seq as f64);
        sleep_until(timer.as_ref(), due).await;
        let tick = Tick {
            seq,
            payload: payload.clone(),
        };
        out.send(&tick).await?;
    }
    Ok(())
}

/// `Collect`: counts the client's messages, answers at its end.
async fn collect(incoming: &mut Messages, out: &Out) -> Result<(), Status> {
    let mut reply = CollectReply::default();
    while let Some((message, _)) = incoming.next().await? {
        Tick::decode(message.clone()).map_err(|_| INVALID)?;
        reply.count += 1;
        reply.bytes += message.len() as u64;
    }
    out.send(&reply).await
}

/// `Chat`: each message echoed `delay_ms` after it arrived, a reply with a shorter delay
/// overtaking those before it (as a server that answers each message when it is done). A
/// reader stamps each message as it arrives, so that a reply waiting for its time does not
/// delay the next message's stamp; the writer sends each reply at its time.
async fn chat(mut incoming: Messages, out: &Out) -> Result<(), Status> {
    let (tx, mut rx) = mpsc::channel(1024);
    let reader = async move {
        loop {
            let next = incoming.next().await;
            let end = !matches!(next, Ok(Some(_)));
            if tx.send(next).await.is_err() || end {
                return;
            }
        }
    };
    let writer = async {
        let mut timer = crate::timer::Deadline::default();
        // Replies waiting for their time, earliest first (ties in arrival order).
        let mut waiting = std::collections::BTreeMap::new();
        let (mut arrivals, mut open) = (0u64, true);
        loop {
            let next = waiting.first_key_value().map(|(&(at, _), _)| at);
            if next.is_none() && !open {
                return Ok(());
            }
            tokio::select! {
                biased;
                () = async {
                    match next {
                        Some(at) => timer.until(at).await,
                        None => std::future::pending().await,
                    }
                } => {
                    if let Some((_, reply)) = waiting.pop_first() {
                        out.send(&reply).await?;
                    }
                }
                got = rx.recv(), if open => {
                    let Some((message, arrived)) = got.transpose()?.flatten() else {
                        open = false;
                        continue;
                    };
                    let req = EchoRequest::decode(message).map_err(|_| INVALID)?;
                    let delay = millis(req.delay_ms, "delay_ms must be in 0..=600000")?;
                    let reply = EchoReply {
                        message: req.message,
                        payload: req.payload,
                    };
                    waiting.insert((arrived + delay, arrivals), reply);
                    arrivals += 1;
                }
            }
        }
    };
    let (mut reader, mut writer) = (std::pin::pin!(reader), std::pin::pin!(writer));
    // The writer's error ends the call at once; the client's close, once the replies due are
    // sent.
    tokio::select! {
        written = &mut writer => written,
        () = &mut reader => writer.await,
    }
}
