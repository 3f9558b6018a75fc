//! Opening connections: TCP (optionally bound to the next source address) and TLS over it.
//!
//! The protocol clients are generic over [`Dial`], so plain TCP keeps its own monomorphised hot
//! path (reads and writes on a bare `TcpStream`, no enum dispatch) and TLS gets another.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use nix::sys::socket::{setsockopt, sockopt};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpSocket, TcpStream};
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use super::ErrorKind;
use super::source::SourceAddrs;
use super::tls;

/// How long opening one connection took, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnectTiming {
    /// TCP connect (SYN to established), µs.
    pub connect_us: u64,
    /// TLS handshake after the TCP connect, µs; 0 without TLS.
    pub tls_us: u64,
    /// What the TLS handshake settled on (`None` without TLS).
    pub tls: Option<tls::Negotiated>,
}

/// A failed dial, with the error kept for a readable message (see [`Dial::dial_verbose`]).
#[derive(Debug)]
pub struct DialFailure {
    /// How the failure counts.
    pub kind: ErrorKind,
    /// What went wrong, for people.
    pub message: String,
}

/// Opens one connection of some kind.
pub trait Dial: Clone + Send + Sync + 'static {
    /// The connected stream.
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;

    /// Opens a connection; the error is only classified (no string is built).
    fn dial(&self)
    -> impl Future<Output = Result<(Self::Stream, ConnectTiming), ErrorKind>> + Send;

    /// The first part of [`dial`](Self::dial): the TCP connection.
    fn connect(&self)
    -> impl Future<Output = Result<(TcpStream, ConnectTiming), ErrorKind>> + Send;

    /// The second part of [`dial`](Self::dial), over the TCP connection [`connect`](Self::connect)
    /// opened: the TLS handshake (nothing for plain TCP). A connection that times out here was
    /// accepted, so the timeout is the handshake's, not the connect's.
    fn handshake(
        &self,
        tcp: TcpStream,
        timing: ConnectTiming,
    ) -> impl Future<Output = Result<(Self::Stream, ConnectTiming), ErrorKind>> + Send;

    /// Opens a connection, explaining a failure in words (for a check before the run).
    fn dial_verbose(
        &self,
    ) -> impl Future<Output = Result<(Self::Stream, ConnectTiming), DialFailure>> + Send;

    /// The ALPN protocol the server chose, if the stream negotiated one.
    fn alpn(stream: &Self::Stream) -> Option<&[u8]>;
}

/// Plain TCP to one address, `TCP_NODELAY` set, optionally bound to rotating source addresses.
#[derive(Debug, Clone)]
pub struct TcpDialer {
    addr: SocketAddr,
    source: Option<Arc<SourceAddrs>>,
}

impl TcpDialer {
    /// Dials `addr`, binding each new socket to the next of `source` when given.
    pub fn new(addr: SocketAddr, source: Option<Arc<SourceAddrs>>) -> Self {
        Self { addr, source }
    }

    /// The target address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    async fn open(&self) -> io::Result<(TcpStream, ConnectTiming)> {
        let start = Instant::now();
        let stream = match &self.source {
            None => TcpStream::connect(self.addr).await?,
            Some(source) => {
                let local = SocketAddr::new(source.next_addr(), 0);
                let socket = match local {
                    SocketAddr::V4(_) => TcpSocket::new_v4()?,
                    SocketAddr::V6(_) => TcpSocket::new_v6()?,
                };
                // Without this, bind() reserves a port for the source IP alone (against every
                // destination), which would halve what spreading is for; with it the port is
                // chosen at connect() and only the 4-tuple has to be unique. Best effort.
                let _ = setsockopt(&socket, sockopt::IpBindAddressNoPort, &true);
                socket.bind(local)?;
                socket.connect(self.addr).await?
            }
        };
        // Nagle would hold small requests back; a load generator must send at once.
        stream.set_nodelay(true)?;
        let timing = ConnectTiming {
            connect_us: micros_since(start),
            tls_us: 0,
            tls: None,
        };
        Ok((stream, timing))
    }
}

impl Dial for TcpDialer {
    type Stream = TcpStream;

    async fn dial(&self) -> Result<(TcpStream, ConnectTiming), ErrorKind> {
        self.open().await.map_err(|e| ErrorKind::from_io(&e))
    }

    async fn connect(&self) -> Result<(TcpStream, ConnectTiming), ErrorKind> {
        self.dial().await
    }

    async fn handshake(
        &self,
        tcp: TcpStream,
        timing: ConnectTiming,
    ) -> Result<(TcpStream, ConnectTiming), ErrorKind> {
        Ok((tcp, timing))
    }

    async fn dial_verbose(&self) -> Result<(TcpStream, ConnectTiming), DialFailure> {
        self.open().await.map_err(|e| DialFailure {
            kind: ErrorKind::from_io(&e),
            message: format!("cannot connect to {}: {e}", self.addr),
        })
    }

    fn alpn(_: &TcpStream) -> Option<&[u8]> {
        None
    }
}

/// TLS over [`TcpDialer`].
#[derive(Clone)]
pub struct TlsDialer {
    tcp: TcpDialer,
    connector: TlsConnector,
    name: ServerName<'static>,
}

impl std::fmt::Debug for TlsDialer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsDialer")
            .field("tcp", &self.tcp)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl TlsDialer {
    /// TLS with `config` to the server `name` (SNI and certificate check) over `tcp`.
    pub fn new(
        tcp: TcpDialer,
        config: Arc<rustls::ClientConfig>,
        name: ServerName<'static>,
    ) -> Self {
        Self {
            tcp,
            connector: TlsConnector::from(config),
            name,
        }
    }

    async fn open(&self) -> Result<(TlsStream<TcpStream>, ConnectTiming), (bool, io::Error)> {
        let (tcp, timing) = self.tcp.open().await.map_err(|e| (false, e))?;
        self.secure(tcp, timing).await.map_err(|e| (true, e))
    }

    /// The TLS handshake over `tcp`, timed.
    async fn secure(
        &self,
        tcp: TcpStream,
        mut timing: ConnectTiming,
    ) -> io::Result<(TlsStream<TcpStream>, ConnectTiming)> {
        let start = Instant::now();
        let stream = self.connector.connect(self.name.clone(), tcp).await?;
        timing.tls_us = micros_since(start);
        timing.tls = Some(tls::Negotiated::of(stream.get_ref().1));
        Ok((stream, timing))
    }
}

impl Dial for TlsDialer {
    type Stream = TlsStream<TcpStream>;

    async fn dial(&self) -> Result<(Self::Stream, ConnectTiming), ErrorKind> {
        self.open().await.map_err(|(handshake, e)| {
            if handshake {
                tls::classify(&e)
            } else {
                ErrorKind::from_io(&e)
            }
        })
    }

    async fn connect(&self) -> Result<(TcpStream, ConnectTiming), ErrorKind> {
        self.tcp.dial().await
    }

    async fn handshake(
        &self,
        tcp: TcpStream,
        timing: ConnectTiming,
    ) -> Result<(Self::Stream, ConnectTiming), ErrorKind> {
        self.secure(tcp, timing)
            .await
            .map_err(|e| tls::classify(&e))
    }

    async fn dial_verbose(&self) -> Result<(Self::Stream, ConnectTiming), DialFailure> {
        self.open().await.map_err(|(handshake, e)| {
            if handshake {
                DialFailure {
                    kind: tls::classify(&e),
                    message: format!("{}: {}", self.tcp.addr, tls::describe(&e)),
                }
            } else {
                DialFailure {
                    kind: ErrorKind::from_io(&e),
                    message: format!("cannot connect to {}: {e}", self.tcp.addr),
                }
            }
        })
    }

    fn alpn(stream: &Self::Stream) -> Option<&[u8]> {
        stream.get_ref().1.alpn_protocol()
    }
}

/// Microseconds since `start`.
pub(crate) fn micros_since(start: Instant) -> u64 {
    start.elapsed().as_micros().min(u128::from(u64::MAX)) as u64
}
