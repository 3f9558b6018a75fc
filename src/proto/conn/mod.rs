//! Connection state every protocol shares: the phase an exchange reached (which tells a connect
//! timeout from a response timeout), the limits on a response's size, the default timeout and
//! the capture cap. A new protocol uses these as HTTP/1.1 and HTTP/2 do.

mod limits;

use std::time::Duration;

use http::HeaderMap;

use super::ErrorKind;

pub use limits::{
    DEFAULT_MAX_HEAD_BYTES, Limits, MAX_HEAD_LIMIT_BYTES, MAX_HEADERS, MIN_HEAD_LIMIT_BYTES,
    SizeError, parse_size,
};

/// Where an exchange was when it stopped; tells a connect timeout from a response timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnPhase {
    /// Establishing the TCP connection.
    Connecting,
    /// The TCP connection is open; its TLS handshake is under way.
    Handshaking,
    /// Writing the request or reading the response.
    Exchanging,
}

/// Default request timeout when the user gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Most body bytes kept for checks and extraction, bytes (1 MiB); the rest is counted but not
/// kept.
pub const MAX_CAPTURE_BYTES: usize = 1024 * 1024;

/// A failed exchange on a multiplexed connection (HTTP/2, HTTP/3): how it counts, and whether
/// the connection is lost with it (else only the stream failed and the connection stays shared).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Failure {
    /// How it counts.
    pub(crate) kind: ErrorKind,
    /// Whether the connection went with it.
    pub(crate) connection_lost: bool,
}

impl Failure {
    /// A failure of this stream only.
    pub(crate) fn stream(kind: ErrorKind) -> Self {
        Self {
            kind,
            connection_lost: false,
        }
    }
}

/// Decoded size of header names and values, bytes (HTTP/2 and HTTP/3 count heads so, before
/// HPACK or QPACK).
pub(crate) fn header_bytes(headers: &HeaderMap) -> usize {
    headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum()
}
