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
    /// The TLS configuration `config` was made from (to make it again with early data on);
    /// its `enable_early_data` says whether resumed connections send 0-RTT.
    tls: Arc<rustls::ClientConfig>,
    source: Option<Arc<SourceAddrs>>,
}

/// A new connection: the handshake's timing, and when its first requests go as 0-RTT early
/// data, the future that says whether the server accepted them.
pub(super) struct Dialled {
    pub(super) conn: quinn::Connection,
    pub(super) timing: ConnectTiming,
    pub(super) early: Option<quinn::ZeroRttAccepted>,
}

impl std::fmt::Debug for QuicDialer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuicDialer")
            .field("addr", &self.addr)
            .field("server_name", &self.server_name)
            .field("zero_rtt", &self.tls.enable_early_data)
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
        Ok(Self {
            addr,
            server_name,
            config: quic_config(tls.clone())?,
            tls,
            source,
        })
    }

    /// The same dialer sending the first requests of every connection that resumes a TLS
    /// session (a ticket from an earlier connection to the same server) as 0-RTT early data,
    /// before the handshake completes; connections without a ticket do the 1-RTT handshake.
    pub fn with_zero_rtt(mut self) -> Self {
        let mut tls = Arc::unwrap_or_clone(self.tls);
        tls.enable_early_data = true;
        self.tls = Arc::new(tls);
        self.config = quic_config(self.tls.clone()).expect("made from this TLS configuration");
        self
    }

    /// The target's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Opens a connection: a new UDP socket, the QUIC handshake (TLS 1.3 inside it, 1-RTT).
    /// The timing's `tls_us` is the whole handshake; there is no TCP connect (`connect_us` 0).
    /// `phase` is [`ConnPhase::Connecting`] until the handshake completes (a timeout reads it).
    ///
    /// With [`Self::with_zero_rtt`] and `early` on, a connection that resumes a session is
    /// returned at once, before the handshake: `tls_us` is 0 (nothing was waited for) and
    /// [`Dialled::early`] resolves when the server has accepted or rejected the early data.
    pub(super) async fn connect(
        &self,
        phase: &mut ConnPhase,
        early: bool,
    ) -> Result<Dialled, DialFailure> {
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
        let mut connecting = endpoint
            .connect_with(self.config.clone(), self.addr, &self.server_name)
            .map_err(|e| DialFailure {
                kind: ErrorKind::QuicHandshake,
                message: format!("cannot start a QUIC connection to {}: {e}", self.addr),
            })?;
        if self.tls.enable_early_data && early {
            match connecting.into_0rtt() {
                Ok((conn, accepted)) => {
                    *phase = ConnPhase::Exchanging;
                    return Ok(Dialled {
                        conn,
                        // Only `h3` is offered, and the resumed session is an `h3` one.
                        timing: ConnectTiming {
                            connect_us: 0,
                            tls_us: 0,
                            tls: Some(Negotiated {
                                version: SessionVersion::Tls13,
                                alpn: Alpn::H3,
                            }),
                        },
                        early: Some(accepted),
                    });
                }
                // No ticket to resume with: the 1-RTT handshake.
                Err(back) => connecting = back,
            }
        }
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
        Ok(Dialled {
            conn,
            timing,
            early: None,
        })
    }
}

/// quinn's client configuration for `tls` (which must offer TLS 1.3): HTTP/3's windows and
/// stream limits.
fn quic_config(tls: Arc<rustls::ClientConfig>) -> Result<quinn::ClientConfig, NeedsTls13> {
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
    Ok(config)
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
