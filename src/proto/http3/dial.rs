//! Opening QUIC connections for HTTP/3: one UDP socket (a quinn client endpoint) per
//! connection, so that `-c N` is N sockets and N 4-tuples as with TCP, and the handshake timed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::crypto::rustls::QuicClientConfig;

use super::errors::connection_kind;
use crate::proto::ErrorKind;
use crate::proto::conn::ConnPhase;
use crate::proto::dial::{ConnectTiming, DialFailure, micros_since};
use crate::proto::source::SourceAddrs;
use crate::proto::tls::{self, Alpn, Negotiated, SessionVersion};

/// The ALPN protocol HTTP/3 is offered as.
pub const ALPN: &[u8] = b"h3";

/// How long a connection may stay silent before quinn gives it up (and its handshake, before
/// it completes), s. The request timeout usually ends a wait first.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Per-stream receive window, bytes (as HTTP/2's: large bodies do not stall on loopback).
const STREAM_WINDOW_BYTES: u32 = 1 << 20;
/// Connection receive window, bytes.
const CONNECTION_WINDOW_BYTES: u32 = 16 << 20;

/// Opens QUIC connections to one address with one TLS configuration (ALPN `h3`).
#[derive(Clone)]
pub struct QuicDialer {
    addr: SocketAddr,
    server_name: String,
    config: quinn::ClientConfig,
    source: Option<Arc<SourceAddrs>>,
}

impl std::fmt::Debug for QuicDialer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuicDialer")
            .field("addr", &self.addr)
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

/// A TLS configuration QUIC cannot use: it has no TLS 1.3 (QUIC's handshake is TLS 1.3 only).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("HTTP/3 needs TLS 1.3 (QUIC carries no other version); drop --tls-version 1.2")]
pub struct NeedsTls13;

impl QuicDialer {
    /// Dials `addr` over UDP, verifying the server as `server_name` with `tls` (made by
    /// [`tls_config`], which refuses TLS 1.2 alone), binding each new socket to the next of
    /// `source` when given.
    pub fn new(
        addr: SocketAddr,
        server_name: String,
        tls: Arc<rustls::ClientConfig>,
        source: Option<Arc<SourceAddrs>>,
    ) -> Result<Self, NeedsTls13> {
        let crypto = QuicClientConfig::try_from(tls).map_err(|_| NeedsTls13)?;
        let mut config = quinn::ClientConfig::new(Arc::new(crypto));
        let mut transport = quinn::TransportConfig::default();
        transport
            .max_idle_timeout(IDLE_TIMEOUT.try_into().ok())
            .stream_receive_window(STREAM_WINDOW_BYTES.into())
            .receive_window(CONNECTION_WINDOW_BYTES.into())
            // Requests are client-initiated bidirectional streams; the server opens its
            // control and QPACK streams (unidirectional) only.
            .max_concurrent_bidi_streams(0u32.into())
            .max_concurrent_uni_streams(16u32.into());
        config.transport_config(Arc::new(transport));
        Ok(Self {
            addr,
            server_name,
            config,
            source,
        })
    }

    /// The target's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Opens a connection: a new UDP socket, the QUIC handshake (TLS 1.3 inside it, 1-RTT).
    /// The timing's `tls_us` is the whole handshake; there is no TCP connect (`connect_us` 0).
    /// `phase` is [`ConnPhase::Connecting`] until the handshake completes (a timeout reads it).
    pub async fn connect(
        &self,
        phase: &mut ConnPhase,
    ) -> Result<(quinn::Connection, ConnectTiming), DialFailure> {
        *phase = ConnPhase::Connecting;
        let local = match &self.source {
            Some(source) => SocketAddr::new(source.next_addr(), 0),
            None if self.addr.is_ipv4() => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
            None => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
        };
        let endpoint = quinn::Endpoint::client(local).map_err(|e| DialFailure {
            kind: ErrorKind::from_io(&e),
            message: format!("cannot open a UDP socket on {local}: {e}"),
        })?;
        let started = Instant::now();
        let connecting = endpoint
            .connect_with(self.config.clone(), self.addr, &self.server_name)
            .map_err(|e| DialFailure {
                kind: ErrorKind::QuicHandshake,
                message: format!("cannot start a QUIC connection to {}: {e}", self.addr),
            })?;
        // No TCP connection is accepted first: until the handshake completes the connection
        // is not established, and a timeout meanwhile is a connect timeout.
        let conn = connecting.await.map_err(|e| DialFailure {
            kind: connection_kind(&e, true),
            message: handshake_message(self.addr, &e),
        })?;
        let timing = ConnectTiming {
            connect_us: 0,
            tls_us: micros_since(started),
            tls: Some(negotiated(&conn)),
        };
        *phase = ConnPhase::Exchanging;
        Ok((conn, timing))
    }
}

/// What the handshake settled on: TLS 1.3 always, and the ALPN protocol.
fn negotiated(conn: &quinn::Connection) -> Negotiated {
    let alpn = conn
        .handshake_data()
        .and_then(|d| d.downcast::<quinn::crypto::rustls::HandshakeData>().ok())
        .and_then(|d| d.protocol);
    Negotiated {
        version: SessionVersion::Tls13,
        alpn: match alpn.as_deref() {
            None => Alpn::None,
            Some(ALPN) => Alpn::H3,
            Some(b"h2") => Alpn::H2,
            Some(b"http/1.1") => Alpn::Http11,
            Some(_) => Alpn::Other,
        },
    }
}

/// No answer to the handshake from `addr` within `waited`, in words.
pub(super) fn no_answer(addr: SocketAddr, waited: Duration) -> DialFailure {
    DialFailure {
        kind: ErrorKind::QuicHandshake,
        message: format!(
            "no QUIC answer from {addr} (UDP) within {}: is an HTTP/3 server listening on that UDP port? (a TCP port that serves HTTPS usually does not serve QUIC too; see the server's Alt-Svc header)",
            humantime::format_duration(waited)
        ),
    }
}

/// A failed handshake in words: what it means and what to try.
fn handshake_message(addr: SocketAddr, e: &quinn::ConnectionError) -> String {
    match e {
        quinn::ConnectionError::TimedOut => no_answer(addr, IDLE_TIMEOUT).message,
        other => {
            let hint = match connection_kind(other, true) {
                ErrorKind::TlsCertificate => {
                    "; pass --cacert FILE with the CA that signed it, --sni NAME, or --insecure"
                }
                ErrorKind::Tls => "; does the server offer `h3` by ALPN?",
                _ => "",
            };
            format!("the QUIC handshake with {addr} failed: {other}{hint}")
        }
    }
}

/// Why no TLS configuration for HTTP/3 could be made.
#[derive(Debug, thiserror::Error)]
pub enum Http3TlsError {
    /// TLS 1.2 alone was asked for.
    #[error(transparent)]
    NeedsTls13(#[from] NeedsTls13),
    /// The TLS options failed.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
}

/// The TLS options' client configuration for HTTP/3: ALPN `h3`, TLS 1.3.
pub fn tls_config(options: &tls::TlsOptions) -> Result<Arc<rustls::ClientConfig>, Http3TlsError> {
    if options.version == tls::TlsVersion::Tls12 {
        return Err(NeedsTls13.into());
    }
    Ok(tls::client_config(options, &[ALPN])?)
}
