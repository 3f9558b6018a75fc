//! The protocol-neutral client seam: what the engine builds once per run and drives per request.
//!
//! ```text
//! Client::new(ClientConfig)            once per run: TLS config, source addresses, protocol
//!   ├─ Client::probe()                 optional: one connection now, failure explained in words
//!   ├─ Client::prepare(&Request)       once per distinct request → PreparedRequest
//!   └─ Client::connection()            once per connection → Connection
//!        └─ Connection::share()        HTTP/2: one more stream handle on the same connection
//! Connection::exchange(&PreparedRequest) per request, inside the engine's timeout
//! Connection::discard()                after a timeout
//! ```
//!
//! A [`Connection`] is owned by one task and runs one exchange at a time. HTTP/1.1: one TCP (or
//! TLS) connection, reopened as needed. HTTP/2: one stream at a time on a connection that
//! [`Connection::share`]d handles use together, so `connections × streams` requests are in flight.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use http::{HeaderName, HeaderValue};

use super::ErrorKind;
pub use super::client_errors::{ClientError, ConnectError};
use super::conn::{ConnPhase, Limits};
use super::dial::{ConnectTiming, Dial, TcpDialer, TlsDialer};
use super::http1::{self, RequestBytes};
use super::http2::{Http2Request, SharedConnection, StreamHandle};
use super::http3::{self, QuicDialer};
use super::message::{BodyTap, Capture, Request, RequestKind, Response};
use super::pick::{PickNames, Picked};
use super::source::SourceAddrs;
use super::tls::{self, TlsOptions};
use crate::record::model::WireProtocol;

/// The protocol requests are sent with; plans and flags name it by [`Protocol::name`].
// The one enum a new protocol adds a variant to, with its arms in [`Wire`] and [`Connection`]
// beside it in this file: `tests/architecture.rs` keeps every variant's name here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")] // for the schema: the names `Protocol::name` gives (tested)
pub enum Protocol {
    /// HTTP/1.1 (ALPN `http/1.1` over TLS).
    #[default]
    Http1,
    /// HTTP/2: prior knowledge (h2c) over TCP, ALPN `h2` over TLS. gRPC needs it.
    Http2,
    /// HTTP/3 over QUIC (UDP), ALPN `h3`; `https://` only.
    Http3,
}

/// A protocol name that is none of [`Protocol::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown protocol `{0}`: expected one of {names}", names = Protocol::names())]
pub struct UnknownProtocol(pub String);

impl Protocol {
    /// Every protocol, in the order help texts list them.
    pub const ALL: &[Protocol] = &[Self::Http1, Self::Http2, Self::Http3];

    /// Its name in plans (`[target] protocol`) and flags (`--protocol`): `http1`, `http2`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Http1 => "http1",
            Self::Http2 => "http2",
            Self::Http3 => "http3",
        }
    }

    /// The version as a request line writes it: `HTTP/1.1`, `HTTP/2`, `HTTP/3`.
    pub fn version_name(self) -> &'static str {
        match self {
            Self::Http1 => "HTTP/1.1",
            Self::Http2 => "HTTP/2",
            Self::Http3 => "HTTP/3",
        }
    }

    /// The names of [`Protocol::ALL`], comma-separated, for error messages.
    pub fn names() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
        names.join(", ")
    }

    /// What the deprecated `http2` switch (`[target] http2`, `--http2`) chooses: HTTP/2 when
    /// `on`, the default otherwise.
    pub fn from_http2_switch(on: bool) -> Self {
        if on { Self::Http2 } else { Self::default() }
    }

    /// The protocol gRPC calls use when the run speaks this one: itself if it can carry gRPC,
    /// otherwise HTTP/2 (gRPC over HTTP/3 is not standardised).
    pub fn for_grpc(self) -> Self {
        match self {
            Self::Http1 | Self::Http3 => Self::Http2,
            Self::Http2 => self,
        }
    }

    /// Whether several requests share one connection at once (`streams` above 1).
    pub fn multiplexes(self) -> bool {
        matches!(self, Self::Http2 | Self::Http3)
    }

    /// Its name in `run.json` when spoken over TLS (`tls`) or plain TCP: `http/1.1`, `h2c`,
    /// `h2` or `h3`.
    pub fn wire_name(self, tls: bool) -> WireProtocol {
        match (self, tls) {
            (Self::Http1, _) => WireProtocol::Http1,
            (Self::Http2, false) => WireProtocol::H2c,
            (Self::Http2, true) => WireProtocol::H2,
            (Self::Http3, _) => WireProtocol::H3,
        }
    }

    /// Whether a request goes out as the HTTP/1.1 bytes of its head and body; otherwise as a
    /// head and a body handed to the connection (HTTP/2 frames them).
    pub fn sends_http1_bytes(self) -> bool {
        self == Self::Http1
    }

    /// The ALPN protocol offered over TLS.
    fn alpn(self) -> &'static [u8] {
        match self {
            Self::Http1 => b"http/1.1",
            Self::Http2 => b"h2",
            Self::Http3 => http3::ALPN,
        }
    }
}

impl std::str::FromStr for Protocol {
    type Err = UnknownProtocol;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownProtocol(s.into()))
    }
}

/// By [`Protocol::name`], so that an unknown name gets the list of known ones.
impl<'de> serde::Deserialize<'de> for Protocol {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// A request in the wire form of one client's protocol, built once by [`Client::prepare`] and
/// sent many times.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    wire: Wire,
    capture: Capture,
    bytes_sent: u64,
}

/// The protocol-specific form of a [`PreparedRequest`].
#[derive(Debug, Clone)]
enum Wire {
    Http1(RequestBytes),
    Http2(Box<Http2Request>),
}

impl PreparedRequest {
    /// Bytes one send puts on the connection, bytes (HTTP/2: head names and values plus the
    /// body, before HPACK compression).
    pub fn bytes_sent(&self) -> u64 {
        self.bytes_sent
    }

    /// The body's length, bytes (gRPC: the framed message, what each message of a streaming
    /// request side carries).
    pub fn body_len(&self) -> u64 {
        match &self.wire {
            Wire::Http1(_) => 0,
            Wire::Http2(r) => r.body_len(),
        }
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

/// How to reach the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// The target's address (resolved once, before the run).
    pub addr: SocketAddr,
    /// TLS (an `https://` or `grpcs://` URL), or `None` for plain TCP. An empty
    /// [`TlsOptions::server_name`] must be filled with the URL's host by the caller.
    pub tls: Option<TlsOptions>,
    /// HTTP/1.1 or HTTP/2.
    pub protocol: Protocol,
    /// Reuse connections (`false`: a new connection for every request).
    pub keepalive: bool,
    /// Bind new connections to these local addresses, round-robin; empty: let the kernel choose.
    pub source_addrs: Vec<IpAddr>,
}

impl ClientConfig {
    /// Plain HTTP/1.1 to `addr`, keep-alive on.
    pub fn http1(addr: SocketAddr) -> Self {
        Self {
            addr,
            tls: None,
            protocol: Protocol::Http1,
            keepalive: true,
            source_addrs: Vec::new(),
        }
    }
}

#[derive(Debug, Clone)]
enum Dialer {
    Plain(TcpDialer),
    Tls(TlsDialer),
    Quic(QuicDialer),
}

/// Everything a run's connections share: built once, cheap to clone.
#[derive(Debug, Clone)]
pub struct Client {
    dialer: Dialer,
    protocol: Protocol,
    keepalive: bool,
    scheme: &'static str,
    /// Response size limits (HTTP/1.1 and HTTP/2).
    limits: Limits,
    /// Response headers whose values every connection picks (`--group-by header:NAME`).
    pick: PickNames,
}

impl Client {
    /// Builds the TLS configuration (reading CA and client-certificate files) and the dialer.
    pub fn new(config: ClientConfig) -> Result<Self, ClientError> {
        for &ip in &config.source_addrs {
            if ip.is_ipv4() != config.addr.is_ipv4() {
                return Err(ClientError::SourceFamily {
                    source_addr: ip,
                    target: config.addr,
                });
            }
        }
        let source = SourceAddrs::new(config.source_addrs).map(Arc::new);
        let tcp = TcpDialer::new(config.addr, source.clone());
        let dialer = match &config.tls {
            None if config.protocol == Protocol::Http3 => return Err(ClientError::Http3NeedsTls),
            None => Dialer::Plain(tcp),
            Some(options) if config.protocol == Protocol::Http3 => {
                let tls_config = http3::tls_config(options)?;
                let name = if options.server_name.is_empty() {
                    config.addr.ip().to_string()
                } else {
                    options.server_name.clone()
                };
                Dialer::Quic(
                    QuicDialer::new(config.addr, name, tls_config, source)
                        .map_err(http3::Http3TlsError::from)?,
                )
            }
            Some(options) => {
                let tls_config = tls::client_config(options, &[config.protocol.alpn()])?;
                let name = if options.server_name.is_empty() {
                    config.addr.ip().to_string()
                } else {
                    options.server_name.clone()
                };
                Dialer::Tls(TlsDialer::new(tcp, tls_config, tls::server_name(&name)?))
            }
        };
        Ok(Self {
            scheme: if config.tls.is_some() {
                "https"
            } else {
                "http"
            },
            dialer,
            protocol: config.protocol,
            keepalive: config.keepalive,
            limits: Limits::default(),
            pick: PickNames::default(),
        })
    }

    /// The same client whose connections pick these response headers' values (read them with
    /// [`Connection::picked`] after each exchange). Default: none, at no cost.
    pub fn with_pick(mut self, names: PickNames) -> Self {
        self.pick = names;
        self
    }

    /// The same client sending the first requests of every resumed connection as 0-RTT early
    /// data (HTTP/3 only: [`QuicDialer::with_zero_rtt`]).
    pub fn with_zero_rtt(mut self) -> Result<Self, ClientError> {
        match self.dialer {
            Dialer::Quic(d) => self.dialer = Dialer::Quic(d.with_zero_rtt()),
            _ => return Err(ClientError::ZeroRttNeedsHttp3),
        }
        Ok(self)
    }

    /// The same client with these response size limits, for every protocol (default:
    /// [`Limits::default`]: a 64 KiB head, a body of any size).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The protocol spoken.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Turns `req` into this client's wire form, once; send it any number of times.
    pub fn prepare(&self, req: &Request) -> Result<PreparedRequest, ClientError> {
        let (wire, bytes_sent) = match self.protocol {
            Protocol::Http1 => {
                if req.kind == RequestKind::Grpc {
                    return Err(ClientError::GrpcNeedsHttp2);
                }
                for (name, value) in &req.headers {
                    check_header(name, value)?;
                }
                let bytes = RequestBytes::build(
                    req.method.as_str(),
                    &req.authority,
                    &req.path_and_query,
                    &req.headers,
                    &req.body,
                    self.keepalive,
                );
                let len = bytes.len() as u64;
                (Wire::Http1(bytes), len)
            }
            Protocol::Http2 | Protocol::Http3 => {
                let h2 = Http2Request::build(req, self.scheme)?;
                let size = h2.size();
                (Wire::Http2(Box::new(h2)), size)
            }
        };
        Ok(PreparedRequest {
            wire,
            capture: req.capture,
            bytes_sent,
        })
    }

    /// A new connection (opened lazily by its first exchange). For HTTP/2, a new connection's
    /// first stream handle; [`Connection::share`] makes more.
    pub fn connection(&self) -> Connection {
        let http1 = self.protocol == Protocol::Http1;
        match &self.dialer {
            Dialer::Plain(d) if http1 => Connection::Http1(
                http1::Http1Connection::with_dialer(d.clone(), self.keepalive)
                    .with_limits(self.limits)
                    .with_pick(self.pick.clone()),
            ),
            Dialer::Tls(d) if http1 => Connection::Http1Tls(Box::new(
                http1::Http1Connection::with_dialer(d.clone(), self.keepalive)
                    .with_limits(self.limits)
                    .with_pick(self.pick.clone()),
            )),
            Dialer::Plain(d) => Connection::Http2(
                SharedConnection::new(d.clone(), self.keepalive, false, self.limits)
                    .handle()
                    .with_pick(self.pick.clone()),
            ),
            Dialer::Tls(d) => Connection::Http2Tls(
                SharedConnection::new(d.clone(), self.keepalive, true, self.limits)
                    .handle()
                    .with_pick(self.pick.clone()),
            ),
            // `Client::new` makes a QUIC dialer for HTTP/3 and for nothing else.
            Dialer::Quic(d) => Connection::Http3(
                http3::SharedConnection::new(d.clone(), self.keepalive, self.limits)
                    .handle()
                    .with_pick(self.pick.clone()),
            ),
        }
    }

    /// Opens one connection now and closes it: a failure comes back explained in words (refused,
    /// certificate not trusted and what to pass, no h2 by ALPN, …). Call it before a run.
    pub async fn probe(&self) -> Result<ConnectTiming, ConnectError> {
        let fail = |f: super::dial::DialFailure| ConnectError {
            kind: f.kind,
            message: f.message,
        };
        match &self.dialer {
            Dialer::Quic(d) => http3::SharedConnection::probe(d).await.map_err(fail),
            Dialer::Plain(d) => d.dial_verbose().await.map(|(_, t)| t).map_err(fail),
            Dialer::Tls(d) => {
                let (stream, timing) = d.dial_verbose().await.map_err(fail)?;
                let alpn = TlsDialer::alpn(&stream);
                if self.protocol == Protocol::Http2 && alpn != Some(b"h2") {
                    return Err(ConnectError {
                        kind: ErrorKind::Tls,
                        message: format!(
                            "the server did not agree to HTTP/2 by ALPN (it chose {}); drop --protocol http2 (or --http2) to use HTTP/1.1",
                            alpn.map_or("nothing".into(), |p| String::from_utf8_lossy(p)
                                .into_owned())
                        ),
                    });
                }
                Ok(timing)
            }
        }
    }
}

/// A header of a request, checked: a valid HTTP name and value.
pub(super) fn check_header(
    name: &str,
    value: &str,
) -> Result<(HeaderName, HeaderValue), ClientError> {
    let bad = || ClientError::Header { name: name.into() };
    let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
    let value = HeaderValue::from_str(value).map_err(|_| bad())?;
    Ok((name, value))
}

/// A request for [`Connection::exchange_tapped`]: prepared, or HTTP/1.1 bytes rendered now
/// (with whether a body is expected: false for HEAD).
#[derive(Debug, Clone, Copy)]
pub enum Tappable<'a> {
    /// Prepared by [`Client::prepare`].
    Prepared(&'a PreparedRequest),
    /// Serialised HTTP/1.1 bytes, and whether a body is expected.
    Bytes(&'a [u8], bool),
}

/// One task's connection (HTTP/1.1) or stream handle (HTTP/2). See the module docs.
#[derive(Debug)]
pub enum Connection {
    /// HTTP/1.1 over TCP.
    Http1(http1::Http1Connection<TcpDialer>),
    /// HTTP/1.1 over TLS (boxed: the TLS state is large).
    Http1Tls(Box<http1::Http1Connection<TlsDialer>>),
    /// HTTP/2 without TLS (h2c).
    Http2(StreamHandle<TcpDialer>),
    /// HTTP/2 over TLS.
    Http2Tls(StreamHandle<TlsDialer>),
    /// HTTP/3 over QUIC.
    Http3(http3::StreamHandle),
}

impl Connection {
    /// HTTP/2: another handle, for another task, on the same connection. HTTP/1.1: `None` (one
    /// request at a time per connection; make another with [`Client::connection`]).
    pub fn share(&self) -> Option<Connection> {
        match self {
            Self::Http1(_) | Self::Http1Tls(_) => None,
            Self::Http2(h) => Some(Self::Http2(h.share())),
            Self::Http2Tls(h) => Some(Self::Http2Tls(h.share())),
            Self::Http3(h) => Some(Self::Http3(h.share())),
        }
    }

    /// Sends `req` and reads the whole response. Wrap it in the request timeout; on timeout call
    /// [`discard`](Self::discard) and count [`ConnPhase::Connecting`] as a connect timeout.
    pub async fn exchange(&mut self, req: &PreparedRequest) -> Result<Response, ErrorKind> {
        match (self, &req.wire) {
            (Self::Http1(c), Wire::Http1(b)) => c.exchange_capturing(b, req.capture).await,
            (Self::Http1Tls(c), Wire::Http1(b)) => c.exchange_capturing(b, req.capture).await,
            (Self::Http2(h), Wire::Http2(r)) => h.exchange(r, req.capture).await,
            (Self::Http2Tls(h), Wire::Http2(r)) => h.exchange(r, req.capture).await,
            (Self::Http3(h), Wire::Http2(r)) => h.exchange_tapped(r, req.capture, None).await,
            // A request prepared by a client of the other protocol: a caller's bug.
            _ => Err(ErrorKind::Protocol),
        }
    }

    /// HTTP/1.1 only: sends serialised request bytes (rendered per request, so not prepared).
    /// HTTP/2 handles answer [`ErrorKind::Protocol`]: prepare a [`Request`] instead.
    pub async fn exchange_bytes(
        &mut self,
        req: &[u8],
        expects_body: bool,
        capture: Capture,
    ) -> Result<Response, ErrorKind> {
        match self {
            Self::Http1(c) => c.exchange_bytes(req, expects_body, capture).await,
            Self::Http1Tls(c) => c.exchange_bytes(req, expects_body, capture).await,
            Self::Http2(_) | Self::Http2Tls(_) | Self::Http3(_) => Err(ErrorKind::Protocol),
        }
    }

    /// Like [`exchange`](Self::exchange) (`req`) or [`exchange_bytes`](Self::exchange_bytes)
    /// (`bytes`, HTTP/1.1 only), handing the response body to `tap` as it arrives: a streaming
    /// step. A body the tap stops early closes the HTTP/1.1 connection, or resets the HTTP/2
    /// stream.
    pub async fn exchange_tapped(
        &mut self,
        req: Tappable<'_>,
        capture: Capture,
        tap: &mut dyn BodyTap,
    ) -> Result<Response, ErrorKind> {
        let (bytes, expects_body) = match req {
            Tappable::Prepared(p) => match &p.wire {
                Wire::Http1(b) => (b.as_bytes(), b.expects_body()),
                Wire::Http2(r) => {
                    return match self {
                        Self::Http2(h) => h.exchange_tapped(r, capture, Some(tap)).await,
                        Self::Http2Tls(h) => h.exchange_tapped(r, capture, Some(tap)).await,
                        Self::Http3(h) => h.exchange_tapped(r, capture, Some(tap)).await,
                        _ => Err(ErrorKind::Protocol),
                    };
                }
            },
            Tappable::Bytes(b, expects_body) => (b, expects_body),
        };
        match self {
            Self::Http1(c) => c.exchange_tapped(bytes, expects_body, capture, tap).await,
            Self::Http1Tls(c) => c.exchange_tapped(bytes, expects_body, capture, tap).await,
            Self::Http2(_) | Self::Http2Tls(_) | Self::Http3(_) => Err(ErrorKind::Protocol),
        }
    }

    /// After a timeout or error: HTTP/1.1 drops the connection (the next exchange reconnects);
    /// HTTP/2 only abandons the stream (already reset when the exchange future was dropped).
    pub fn discard(&mut self) {
        match self {
            Self::Http1(c) => c.discard(),
            Self::Http1Tls(c) => c.discard(),
            Self::Http2(h) => h.discard(),
            Self::Http2Tls(h) => h.discard(),
            Self::Http3(h) => h.discard(),
        }
    }

    /// The phase the last exchange reached.
    pub fn phase(&self) -> ConnPhase {
        match self {
            Self::Http1(c) => c.phase(),
            Self::Http1Tls(c) => c.phase(),
            Self::Http2(h) => h.phase(),
            Self::Http2Tls(h) => h.phase(),
            Self::Http3(h) => h.phase(),
        }
    }

    /// The response header values picked from the last exchange (see [`Client::with_pick`]).
    pub fn picked(&self) -> &Picked {
        match self {
            Self::Http1(c) => c.picked(),
            Self::Http1Tls(c) => c.picked(),
            Self::Http2(h) => h.picked(),
            Self::Http2Tls(h) => h.picked(),
            Self::Http3(h) => h.picked(),
        }
    }

    /// Bytes received by the last exchange, complete or not.
    pub fn bytes_received(&self) -> u64 {
        match self {
            Self::Http1(c) => c.bytes_received(),
            Self::Http1Tls(c) => c.bytes_received(),
            Self::Http2(h) => h.bytes_received(),
            Self::Http2Tls(h) => h.bytes_received(),
            Self::Http3(h) => h.bytes_received(),
        }
    }

    /// HTTP/3: what the QUIC connections behind this handle carried since a handle sharing
    /// them last asked (docs/measurement.md, "HTTP/3"); `None` for other protocols and before a
    /// connection was opened. Ask once per handle, when it is done: the answers add up.
    pub fn quic_figures(&self) -> Option<crate::record::model::QuicFigures> {
        match self {
            Self::Http3(h) => h.quic_figures(),
            _ => None,
        }
    }

    /// Connections opened by the last exchange.
    pub fn connections_opened(&self) -> u32 {
        match self {
            Self::Http1(c) => c.connections_opened(),
            Self::Http1Tls(c) => c.connections_opened(),
            Self::Http2(h) => h.connections_opened(),
            Self::Http2Tls(h) => h.connections_opened(),
            Self::Http3(h) => h.connections_opened(),
        }
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
