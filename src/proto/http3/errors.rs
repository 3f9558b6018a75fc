//! How QUIC and HTTP/3 failures count (docs/measurement.md, "Errors"): TLS failures inside the
//! QUIC handshake as over TCP, a refused request as HTTP/2's refused stream, a graceful close
//! as a closed connection, and the rest by what failed: the handshake, an idle connection, one
//! stream, or the whole connection.

use h3::error::{Code, ConnectionError, StreamError};
use h3::quic::ConnectionErrorIncoming;

use crate::proto::ErrorKind;
use crate::proto::conn::Failure;

/// QUIC's first TLS alert code (`CRYPTO_ERROR` 0x0100 + the alert).
const CRYPTO_ERROR: u64 = 0x0100;
/// The TLS alerts about the certificate: bad_certificate (42) through unknown_ca (48), and
/// certificate_required (116).
const CERTIFICATE_ALERTS: [u64; 7] = [42, 43, 44, 45, 46, 48, 116];

impl From<StreamError> for Failure {
    fn from(e: StreamError) -> Self {
        match e {
            StreamError::ConnectionError(c) => Self {
                kind: h3_connection_kind(&c),
                connection_lost: true,
            },
            StreamError::RemoteTerminate { code, .. } => Self::stream(stream_kind(code)),
            StreamError::StreamError { code, .. } => Self::stream(stream_kind(code)),
            StreamError::HeaderTooBig { .. } => Self::stream(ErrorKind::HeaderTooLarge),
            StreamError::RemoteClosing => Self {
                kind: ErrorKind::Closed,
                connection_lost: true,
            },
            _ => Self::stream(ErrorKind::H3Stream),
        }
    }
}

/// How a request stream the server ended with `code` counts.
fn stream_kind(code: Code) -> ErrorKind {
    if code == Code::H3_REQUEST_REJECTED {
        // Not processed at all: HTTP/3's refused stream.
        ErrorKind::StreamRefused
    } else {
        ErrorKind::H3Stream
    }
}

/// How an h3 connection failure counts.
pub(super) fn h3_connection_kind(e: &ConnectionError) -> ErrorKind {
    match e {
        ConnectionError::Remote(incoming) => incoming_kind(incoming),
        ConnectionError::Timeout => ErrorKind::QuicIdleTimeout,
        ConnectionError::Local { .. } => ErrorKind::Closed,
        _ => ErrorKind::H3Connection,
    }
}

fn incoming_kind(e: &ConnectionErrorIncoming) -> ErrorKind {
    match e {
        ConnectionErrorIncoming::ApplicationClose { error_code } => application_kind(*error_code),
        ConnectionErrorIncoming::Timeout => ErrorKind::QuicIdleTimeout,
        ConnectionErrorIncoming::Undefined(inner) => inner
            .downcast_ref::<quinn::ConnectionError>()
            .map_or(ErrorKind::H3Connection, |q| connection_kind(q, false)),
        _ => ErrorKind::H3Connection,
    }
}

/// A connection closed by the application with `code`: H3_NO_ERROR is a graceful close.
fn application_kind(code: u64) -> ErrorKind {
    if Code::H3_NO_ERROR == code {
        ErrorKind::Closed
    } else {
        ErrorKind::H3Connection
    }
}

/// How a quinn connection failure counts; `handshake` while the connection was being opened.
pub(crate) fn connection_kind(e: &quinn::ConnectionError, handshake: bool) -> ErrorKind {
    use quinn::ConnectionError as E;
    match e {
        E::TransportError(t) => transport_kind(u64::from(t.code), handshake),
        E::ConnectionClosed(c) => transport_kind(u64::from(c.error_code), handshake),
        E::ApplicationClosed(a) => application_kind(a.error_code.into_inner()),
        E::TimedOut if handshake => ErrorKind::QuicHandshake,
        E::TimedOut => ErrorKind::QuicIdleTimeout,
        E::VersionMismatch => ErrorKind::QuicHandshake,
        E::Reset => ErrorKind::Reset,
        E::LocallyClosed => ErrorKind::Closed,
        E::CidsExhausted => ErrorKind::H3Connection,
    }
}

/// A QUIC transport error `code`: a TLS alert counts as over TCP; any other fails the
/// handshake, or, once established, the connection.
fn transport_kind(code: u64, handshake: bool) -> ErrorKind {
    if (CRYPTO_ERROR..CRYPTO_ERROR + 0x100).contains(&code) {
        if CERTIFICATE_ALERTS.contains(&(code - CRYPTO_ERROR)) {
            ErrorKind::TlsCertificate
        } else {
            ErrorKind::Tls
        }
    } else if code == 0 {
        ErrorKind::Closed
    } else if handshake {
        ErrorKind::QuicHandshake
    } else {
        ErrorKind::H3Connection
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_alerts_inside_quic_count_as_over_tcp() {
        // unknown_ca (48), no_application_protocol (120), a flow-control error (0x3).
        assert_eq!(transport_kind(0x0130, true), ErrorKind::TlsCertificate);
        assert_eq!(transport_kind(0x0178, true), ErrorKind::Tls);
        assert_eq!(transport_kind(0x3, true), ErrorKind::QuicHandshake);
        assert_eq!(transport_kind(0x3, false), ErrorKind::H3Connection);
        assert_eq!(transport_kind(0x0, false), ErrorKind::Closed);
    }

    #[test]
    fn h3_codes_count_by_what_they_say() {
        assert_eq!(
            stream_kind(Code::H3_REQUEST_REJECTED),
            ErrorKind::StreamRefused
        );
        assert_eq!(stream_kind(Code::H3_INTERNAL_ERROR), ErrorKind::H3Stream);
        assert_eq!(
            application_kind(Code::H3_NO_ERROR.value()),
            ErrorKind::Closed
        );
        assert_eq!(
            application_kind(Code::H3_EXCESSIVE_LOAD.value()),
            ErrorKind::H3Connection
        );
    }
}
