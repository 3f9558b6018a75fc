//! The request body the routes read: hyper's (HTTP/1.1 and HTTP/2, streamed as it arrives), or
//! one buffer (HTTP/3: `h3` hands the body over as it comes, and the target reads it whole
//! before its route runs, see `h3.rs`).

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};

/// A request's body, from whichever protocol carried it.
#[derive(Debug)]
pub(crate) enum ReqBody {
    /// As hyper reads it.
    Hyper(Incoming),
    /// Read whole already (taken when polled).
    Full(Option<Bytes>),
}

impl From<Incoming> for ReqBody {
    fn from(incoming: Incoming) -> Self {
        Self::Hyper(incoming)
    }
}

impl Body for ReqBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        match self.get_mut() {
            Self::Hyper(incoming) => Pin::new(incoming).poll_frame(cx),
            Self::Full(bytes) => Poll::Ready(
                bytes
                    .take()
                    .filter(|b| !b.is_empty())
                    .map(|b| Ok(Frame::data(b))),
            ),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Self::Hyper(incoming) => incoming.is_end_stream(),
            Self::Full(bytes) => bytes.as_ref().is_none_or(Bytes::is_empty),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Self::Hyper(incoming) => incoming.size_hint(),
            Self::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
        }
    }
}
