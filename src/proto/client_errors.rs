//! What can go wrong setting up the client seam ([`super::client`]), before the run.

use std::net::{IpAddr, SocketAddr};

use super::ErrorKind;
use super::tls::TlsError;

/// Why a client or a request could not be set up (before the run, so with details).
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The TLS configuration failed.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// A source address is of another family than the target.
    #[error("source address {source_addr} cannot reach {target} (IPv4 and IPv6 mixed)")]
    SourceFamily {
        /// The source address.
        source_addr: IpAddr,
        /// The target.
        target: SocketAddr,
    },
    /// A header name or value is not valid HTTP.
    #[error("invalid header {name:?}")]
    Header {
        /// The header's name.
        name: String,
    },
    /// The authority and path do not make a valid URI.
    #[error("invalid request target {0:?}")]
    Uri(String),
    /// gRPC was asked of an HTTP/1.1 client.
    #[error("gRPC needs HTTP/2")]
    GrpcNeedsHttp2,
    /// HTTP/3 was asked for a plain `http://` target.
    #[error("HTTP/3 runs over QUIC, which is always encrypted: use an https:// URL")]
    Http3NeedsTls,
    /// 0-RTT early data was asked for a protocol other than HTTP/3.
    #[error(
        "0-RTT early data (--zero-rtt, `zero_rtt` in [target.tls]) is built for HTTP/3 only: add --protocol http3 and an https:// URL"
    )]
    ZeroRttNeedsHttp3,
    /// HTTP/3 was asked with a TLS configuration QUIC cannot use.
    #[error(transparent)]
    Http3Tls(#[from] super::http3::Http3TlsError),
}

/// A failed [`super::client::Client::probe`]: the kind it would count as, and what happened in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConnectError {
    /// How the failure counts.
    pub kind: ErrorKind,
    /// What went wrong and what to do.
    pub message: String,
}
