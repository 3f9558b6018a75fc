//! How a run connects: protocol, TLS, keep-alive, streams and source addresses, from flags or a
//! plan's `[target]`, turned into the [`Client`]s the engine drives.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use crate::proto::client::{Client, ClientConfig, ClientError, Protocol};
use crate::proto::conn::Limits;
use crate::proto::source::{SourceAddrError, parse_source_addrs};
use crate::proto::tls::{ClientCert, TlsOptions, TlsVersion};
use crate::record::model::WireProtocol;

/// The user's connection choices, before validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectOptions {
    /// The protocol of HTTP steps (gRPC steps use [`Protocol::for_grpc`] of it).
    pub protocol: Protocol,
    /// HTTP/2 streams per connection: this many VUs share one connection.
    pub streams: u32,
    /// Reuse connections (`false`: a new connection per request).
    pub keepalive: bool,
    /// Accept any server certificate.
    pub insecure: bool,
    /// Trust only the CA certificates of this PEM file.
    pub cacert: Option<PathBuf>,
    /// Client certificate (PEM), for mutual TLS; needs `key`.
    pub cert: Option<PathBuf>,
    /// Client private key (PEM); needs `cert`.
    pub key: Option<PathBuf>,
    /// Server name sent as SNI and verified, instead of the URL's host.
    pub sni: Option<String>,
    /// TLS version: `1.2`, `1.3`, or `None` for either.
    pub tls_version: Option<String>,
    /// Local addresses to spread connections over, e.g. `127.0.0.2-127.0.0.40`.
    pub source_addrs: Option<String>,
    /// Send the first requests of a resumed connection as 0-RTT early data (HTTP/3 only).
    pub zero_rtt: bool,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            protocol: Protocol::default(),
            streams: 1,
            keepalive: true,
            insecure: false,
            cacert: None,
            cert: None,
            key: None,
            sni: None,
            tls_version: None,
            source_addrs: None,
            zero_rtt: false,
        }
    }
}

/// Validated connection settings of a target, with the clients built from them.
#[derive(Debug, Clone)]
pub struct Connect {
    /// HTTP/1.1 or HTTP/2, for HTTP steps.
    pub protocol: Protocol,
    /// TLS settings when the URL is `https://` (or `grpcs://`).
    pub tls: Option<TlsOptions>,
    /// VUs per connection (HTTP/2 streams); 1 for HTTP/1.1.
    pub streams: u32,
    /// Reuse connections.
    pub keepalive: bool,
    /// Resumed HTTP/3 connections send their first requests as 0-RTT early data.
    pub zero_rtt: bool,
    /// Local source addresses (empty: the kernel chooses).
    pub source_addrs: Vec<IpAddr>,
    /// The client of HTTP steps.
    pub client: Client,
    /// The client of gRPC steps when HTTP steps speak HTTP/1.1 (gRPC needs HTTP/2); `None` when
    /// `client` speaks HTTP/2 or the plan has no gRPC step.
    pub grpc_client: Option<Client>,
}

impl Connect {
    /// The protocol spoken by HTTP steps: `http/1.1`, `h2c` or `h2`.
    pub fn protocol_name(&self) -> WireProtocol {
        self.protocol.wire_name(self.tls.is_some())
    }

    /// These settings with HTTP/1.1 responses held to `limits`.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.client = self.client.with_limits(limits);
        self.grpc_client = self.grpc_client.map(|c| c.with_limits(limits));
        self
    }

    /// The same clients, their connections picking these response headers' values.
    pub fn with_pick(mut self, names: crate::proto::pick::PickNames) -> Self {
        self.client = self.client.with_pick(names.clone());
        self.grpc_client = self.grpc_client.map(|c| c.with_pick(names));
        self
    }

    /// The client for a step: gRPC steps need HTTP/2.
    pub fn client_for(&self, grpc: bool) -> &Client {
        match (&self.grpc_client, grpc) {
            (Some(c), true) => c,
            _ => &self.client,
        }
    }
}

/// Why connection options cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConnectOptionsError {
    /// `streams = 0`.
    #[error("streams must be at least 1")]
    NoStreams,
    /// Several streams over HTTP/1.1.
    #[error(
        "{0} streams per connection need HTTP/2 (--protocol http2, or `protocol = \"http2\"` in [target])"
    )]
    StreamsNeedHttp2(u32),
    /// A TLS version other than 1.2 and 1.3.
    #[error("TLS version `{0}` is not 1.2 or 1.3")]
    TlsVersion(String),
    /// A client certificate without its key, or the reverse.
    #[error("a client certificate needs both a certificate and a key file")]
    HalfClientCert,
    /// TLS options for a plain-text URL.
    #[error(
        "TLS options (insecure, cacert, cert/key, sni, tls version, zero_rtt) need an https:// URL"
    )]
    TlsNeedsHttps,
    /// Source addresses that do not parse.
    #[error("{0}")]
    SourceAddrs(#[from] SourceAddrError),
    /// The client cannot be built (a TLS file, a source address of the wrong family…).
    #[error("{0}")]
    Client(#[from] ClientError),
}

impl ConnectOptionsError {
    /// The flag (quick mode) the error is about: `--streams`, `--tls-version`, …
    pub fn flag(&self) -> &'static str {
        match self {
            Self::NoStreams | Self::StreamsNeedHttp2(_) => "--streams",
            Self::TlsVersion(_) => "--tls-version",
            Self::HalfClientCert => "--cert/--key",
            Self::TlsNeedsHttps => {
                "TLS options (-k, --cacert, --cert, --key, --sni, --tls-version, --zero-rtt)"
            }
            Self::SourceAddrs(_) => "--source-addrs",
            Self::Client(ClientError::SourceFamily { .. }) => "--source-addrs",
            Self::Client(ClientError::Tls(_)) => "TLS options (--cacert, --cert, --key, --sni)",
            Self::Client(ClientError::ZeroRttNeedsHttp3) => "--zero-rtt",
            Self::Client(_) => "URL",
        }
    }
}

/// Validates `o` for a target at `addr` whose URL host is `host`, `tls` when the scheme asks for
/// it (a `grpc://` scheme sets `o.protocol` to [`Protocol::for_grpc`]), and `grpc` when some step is a gRPC call. The caller
/// says where an error is.
pub fn build(
    o: &ConnectOptions,
    addr: SocketAddr,
    host: &str,
    tls: bool,
    grpc: bool,
) -> Result<Connect, ConnectOptionsError> {
    if o.streams == 0 {
        return Err(ConnectOptionsError::NoStreams);
    }
    if o.streams > 1 && !o.protocol.multiplexes() {
        return Err(ConnectOptionsError::StreamsNeedHttp2(o.streams));
    }
    let version = match o.tls_version.as_deref() {
        None => TlsVersion::Any,
        Some("1.2") => TlsVersion::Tls12,
        Some("1.3") => TlsVersion::Tls13,
        Some(other) => return Err(ConnectOptionsError::TlsVersion(other.into())),
    };
    let client_cert = match (&o.cert, &o.key) {
        (Some(cert), Some(key)) => Some(ClientCert {
            cert_file: cert.clone(),
            key_file: key.clone(),
        }),
        (None, None) => None,
        _ => return Err(ConnectOptionsError::HalfClientCert),
    };
    let tls_asked = o.insecure
        || o.cacert.is_some()
        || client_cert.is_some()
        || o.sni.is_some()
        || o.tls_version.is_some()
        || o.zero_rtt;
    if tls_asked && !tls {
        return Err(ConnectOptionsError::TlsNeedsHttps);
    }
    let tls = tls.then(|| TlsOptions {
        server_name: o
            .sni
            .clone()
            .unwrap_or_else(|| host.trim_start_matches('[').trim_end_matches(']').into()),
        insecure: o.insecure,
        ca_file: o.cacert.clone(),
        client_cert,
        version,
    });
    let source_addrs = match &o.source_addrs {
        Some(text) => parse_source_addrs(text)?,
        None => Vec::new(),
    };
    let protocol = o.protocol;
    let config = |protocol| ClientConfig {
        addr,
        tls: tls.clone(),
        protocol,
        keepalive: o.keepalive,
        source_addrs: source_addrs.clone(),
    };
    let client = Client::new(config(protocol))?;
    let client = if o.zero_rtt {
        client.with_zero_rtt()?
    } else {
        client
    };
    let grpc_client = if grpc && protocol.for_grpc() != protocol {
        Some(Client::new(config(protocol.for_grpc()))?)
    } else {
        None
    };
    Ok(Connect {
        protocol,
        tls,
        streams: o.streams,
        keepalive: o.keepalive,
        zero_rtt: o.zero_rtt,
        source_addrs,
        client,
        grpc_client,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr() -> SocketAddr {
        "127.0.0.1:9".parse().unwrap()
    }

    #[test]
    fn choices_are_validated_with_reasons() {
        let o = ConnectOptions::default();
        let c = build(&o, addr(), "127.0.0.1", false, false).unwrap();
        assert_eq!(c.protocol_name(), WireProtocol::Http1);
        assert!(c.grpc_client.is_none());
        let c = build(&o, addr(), "127.0.0.1", false, true).unwrap();
        // gRPC steps get a client of their own, speaking the protocol that carries them.
        let grpc = c.client_for(true).protocol();
        assert_eq!(grpc, o.protocol.for_grpc());
        assert_ne!(grpc, o.protocol);
        assert_eq!(grpc.wire_name(false), WireProtocol::H2c);
        assert_eq!(c.client_for(false).protocol(), o.protocol);

        let streams = ConnectOptions {
            streams: 8,
            ..o.clone()
        };
        assert!(
            build(&streams, addr(), "h", false, false)
                .unwrap_err()
                .to_string()
                .contains("need HTTP/2")
        );
        let insecure = ConnectOptions {
            insecure: true,
            ..o.clone()
        };
        assert!(
            build(&insecure, addr(), "h", false, false)
                .unwrap_err()
                .to_string()
                .contains("https://")
        );
        let c = build(&insecure, addr(), "localhost", true, false).unwrap();
        assert_eq!(c.tls.as_ref().unwrap().server_name, "localhost");
        let version = ConnectOptions {
            tls_version: Some("1.1".into()),
            ..o.clone()
        };
        assert!(
            build(&version, addr(), "h", true, false)
                .unwrap_err()
                .to_string()
                .contains("1.1")
        );
        let half = ConnectOptions {
            cert: Some("c.pem".into()),
            ..o.clone()
        };
        assert!(
            build(&half, addr(), "h", true, false)
                .unwrap_err()
                .to_string()
                .contains("both")
        );
        let missing = ConnectOptions {
            cacert: Some("/nonexistent/ca.pem".into()),
            ..o.clone()
        };
        assert!(
            build(&missing, addr(), "h", true, false)
                .unwrap_err()
                .to_string()
                .contains("/nonexistent/ca.pem")
        );
        let sources = ConnectOptions {
            source_addrs: Some("127.0.0.2-127.0.0.4".into()),
            ..o
        };
        assert_eq!(
            build(&sources, addr(), "h", false, false)
                .unwrap()
                .source_addrs
                .len(),
            3
        );
    }
}
