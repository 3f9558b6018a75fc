//! The response body type of the hyper routes, and the shared static pattern
//! buffer that `/bytes/N` and `/chaos/slow` bodies are cut from.

use std::pin::Pin;
use std::task::{Context, Poll};

use crate::server::incoming::ReqBody;
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

/// Size of [`PATTERN`], and of the largest frame a pattern body yields.
pub(crate) const PATTERN_LEN: usize = 64 * 1024;

/// 64 KiB of printable filler: lines of 63 characters and a newline.
pub(crate) static PATTERN: [u8; PATTERN_LEN] = make_pattern();

const fn make_pattern() -> [u8; PATTERN_LEN] {
    const LINE: &[u8; 64] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.\n";
    let mut out = [0u8; PATTERN_LEN];
    let mut i = 0;
    while i < PATTERN_LEN {
        out[i] = LINE[i % LINE.len()];
        i += 1;
    }
    out
}

/// The `len` bytes of the endless pattern starting at `offset` (`len` at most
/// [`PATTERN_LEN`]), without copying or allocating.
pub(crate) fn pattern_slice(offset: u64, len: usize) -> Bytes {
    // The pattern repeats every 64 bytes, so restart at the same phase.
    let start = (offset % 64) as usize;
    let len = len.min(PATTERN_LEN - start);
    Bytes::from_static(&PATTERN[start..start + len])
}

/// A response body: empty, one buffer, a run of pattern bytes, or a request
/// body streamed back. One enum instead of a boxed body, so hot routes do not
/// allocate for it.
#[derive(Debug)]
pub(crate) enum TargetBody {
    /// A single buffer, sent as one frame (taken when sent).
    Full(Option<Bytes>),
    /// `remaining` more bytes of [`PATTERN`], sent in frames of up to 64 KiB.
    Pattern {
        /// Bytes still to send.
        remaining: u64,
        /// Bytes already sent.
        sent: u64,
    },
    /// A request body streamed back unchanged (`/echo`).
    Echo(ReqBody),
    /// A gRPC reply: one framed message, then the trailers (`grpc-status`), each taken when sent.
    Grpc {
        /// The framed message.
        message: Option<Bytes>,
        /// The trailers.
        trailers: Option<hyper::HeaderMap>,
    },
    /// A gRPC server-reflection call: answers as the questions arrive.
    Reflection(Box<super::grpc::reflection::Conversation>),
    /// A stream's events, sent by a task on their schedule (`/sse`, `/v1/chat/completions`).
    Events(tokio::sync::mpsc::Receiver<Bytes>),
    /// A streaming gRPC call's messages and then trailers, sent by its task.
    Frames(tokio::sync::mpsc::Receiver<Frame<Bytes>>),
}

impl TargetBody {
    /// An empty body.
    pub(crate) fn empty() -> Self {
        TargetBody::Full(None)
    }

    /// A body of static bytes.
    pub(crate) fn from_static(bytes: &'static [u8]) -> Self {
        TargetBody::Full(Some(Bytes::from_static(bytes)))
    }

    /// `len` bytes of the shared pattern.
    pub(crate) fn pattern(len: u64) -> Self {
        TargetBody::Pattern {
            remaining: len,
            sent: 0,
        }
    }
}

impl From<String> for TargetBody {
    fn from(s: String) -> Self {
        TargetBody::Full(Some(Bytes::from(s)))
    }
}

impl From<Vec<u8>> for TargetBody {
    fn from(v: Vec<u8>) -> Self {
        TargetBody::Full(Some(Bytes::from(v)))
    }
}

impl From<Bytes> for TargetBody {
    fn from(b: Bytes) -> Self {
        TargetBody::Full(Some(b))
    }
}

impl Body for TargetBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        match self.get_mut() {
            TargetBody::Full(bytes) => Poll::Ready(
                bytes
                    .take()
                    .filter(|b| !b.is_empty())
                    .map(|b| Ok(Frame::data(b))),
            ),
            TargetBody::Pattern { remaining, sent } => {
                if *remaining == 0 {
                    return Poll::Ready(None);
                }
                let chunk = pattern_slice(*sent, (*remaining).min(PATTERN_LEN as u64) as usize);
                *remaining -= chunk.len() as u64;
                *sent += chunk.len() as u64;
                Poll::Ready(Some(Ok(Frame::data(chunk))))
            }
            TargetBody::Echo(incoming) => Pin::new(incoming).poll_frame(cx),
            TargetBody::Grpc { message, trailers } => Poll::Ready(match message.take() {
                Some(message) => Some(Ok(Frame::data(message))),
                None => trailers.take().map(|t| Ok(Frame::trailers(t))),
            }),
            TargetBody::Reflection(conversation) => conversation.poll_frame(cx),
            TargetBody::Events(rx) => rx.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b)))),
            TargetBody::Frames(rx) => rx.poll_recv(cx).map(|f| f.map(Ok)),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            TargetBody::Full(bytes) => bytes.as_ref().is_none_or(|b| b.is_empty()),
            TargetBody::Pattern { remaining, .. } => *remaining == 0,
            TargetBody::Echo(incoming) => incoming.is_end_stream(),
            TargetBody::Grpc { message, trailers } => message.is_none() && trailers.is_none(),
            TargetBody::Reflection(conversation) => conversation.is_end_stream(),
            TargetBody::Events(_) | TargetBody::Frames(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            TargetBody::Full(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            TargetBody::Pattern { remaining, .. } => SizeHint::with_exact(*remaining),
            TargetBody::Echo(incoming) => incoming.size_hint(),
            TargetBody::Grpc { message, .. } => {
                SizeHint::with_exact(message.as_ref().map_or(0, |m| m.len() as u64))
            }
            TargetBody::Reflection(_) | TargetBody::Events(_) | TargetBody::Frames(_) => {
                SizeHint::default()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[test]
    fn pattern_slices_continue_the_pattern() {
        let a = pattern_slice(0, 100);
        let b = pattern_slice(100, 100);
        assert_eq!(&a[..], &PATTERN[..100]);
        assert_eq!(&b[..], &PATTERN[100..200]);
        // Near the end of the buffer the slice restarts at the same phase.
        let c = pattern_slice(PATTERN_LEN as u64 - 10, 64);
        assert_eq!(c.len(), 64);
        assert_eq!(&c[..], &PATTERN[(PATTERN_LEN - 10) % 64..][..64]);
    }

    #[tokio::test]
    async fn pattern_body_yields_exact_length() {
        let n = 3 * PATTERN_LEN as u64 + 17;
        let body = TargetBody::pattern(n);
        assert_eq!(body.size_hint().exact(), Some(n));
        let bytes = body.collect().await.unwrap().to_bytes();
        assert_eq!(bytes.len() as u64, n);
        // The content is the endless 64-byte-periodic pattern.
        assert!(bytes.iter().enumerate().all(|(i, &b)| b == PATTERN[i % 64]));
    }

    #[tokio::test]
    async fn full_and_empty_bodies() {
        assert!(TargetBody::empty().is_end_stream());
        let body = TargetBody::from_static(b"ok\n");
        assert_eq!(body.size_hint().exact(), Some(3));
        assert_eq!(&body.collect().await.unwrap().to_bytes()[..], b"ok\n");
    }
}
