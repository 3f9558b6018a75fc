//! A request in the wire form of one client's protocol ([`Wire`]: the one enum a new protocol
//! adds a variant to), built once by [`Client::prepare`](super::client::Client::prepare) and
//! sent many times.

use super::http1::RequestBytes;
use super::http2::Http2Request;
use super::message::Capture;

/// A request in the wire form of one client's protocol, built once and sent many times.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    pub(crate) wire: Wire,
    pub(crate) capture: Capture,
    pub(crate) bytes_sent: u64,
}

/// The protocol-specific form.
#[derive(Debug, Clone)]
pub(crate) enum Wire {
    Http1(RequestBytes),
    Http2(Box<Http2Request>),
}

impl PreparedRequest {
    /// Bytes one send puts on the connection, bytes (HTTP/2: head names and values plus the
    /// body, before HPACK compression).
    pub fn bytes_sent(&self) -> u64 {
        self.bytes_sent
    }

    /// What the response keeps.
    pub fn capture(&self) -> Capture {
        self.capture
    }

    /// The serialised request, for an HTTP/1.1 client's request (for display).
    pub fn http1_bytes(&self) -> Option<&[u8]> {
        match &self.wire {
            Wire::Http1(b) => Some(b.as_bytes()),
            Wire::Http2(_) => None,
        }
    }
}
