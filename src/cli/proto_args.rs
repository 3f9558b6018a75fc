//! Flags shared by quick mode and `volley find-max`: protocol, TLS, connections, and gRPC calls.

use std::path::PathBuf;

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use volley::plan::ConnectOptions;
use volley::plan::quick::GrpcInput;
use volley::proto::client::Protocol;

/// How to connect.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Protocol, TLS and connections")]
pub struct ConnectArgs {
    /// The protocol of HTTP requests; http2 is prior knowledge (h2c) over http://, ALPN h2 over
    /// https://; http3 is QUIC, https:// only. gRPC calls use HTTP/2 whatever this says.
    #[arg(long, value_name = "NAME", default_value = Protocol::default().name(),
          value_parser = protocol_parser())]
    pub protocol: Protocol,
    /// Deprecated alias of --protocol http2.
    #[arg(long, conflicts_with = "protocol")]
    pub http2: bool,
    /// HTTP/2 or HTTP/3 streams per connection: -c connections × --streams requests in flight.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub streams: u32,
    /// Open a new connection for every request.
    #[arg(long)]
    pub no_keepalive: bool,
    /// Spread connections over these local addresses (e.g. 127.0.0.2-127.0.0.40): no port exhaustion.
    #[arg(long, value_name = "ADDRS")]
    pub source_addrs: Option<String>,
    /// Accept any server certificate (self-signed, expired, other name); still encrypted.
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// Trust the CA certificates of this PEM file instead of the built-in Mozilla roots.
    #[arg(long, value_name = "PEM")]
    pub cacert: Option<PathBuf>,
    /// Client certificate (PEM) for mutual TLS; needs --key.
    #[arg(long, value_name = "PEM", requires = "key")]
    pub cert: Option<PathBuf>,
    /// Client private key (PEM) for mutual TLS; needs --cert.
    #[arg(long, value_name = "PEM", requires = "cert")]
    pub key: Option<PathBuf>,
    /// Server name to send (SNI) and verify, instead of the URL's host.
    #[arg(long, value_name = "NAME")]
    pub sni: Option<String>,
    /// Offer only this TLS version: 1.2 or 1.3 (default: either).
    #[arg(long, value_name = "VERSION")]
    pub tls_version: Option<String>,
    /// HTTP/3: resumed connections send their first requests as 0-RTT early data (replayable).
    #[arg(long)]
    pub zero_rtt: bool,
}

/// `--protocol`'s values: every [`Protocol::ALL`] by its [`Protocol::name`], so that a new
/// protocol needs no edit here.
fn protocol_parser() -> impl TypedValueParser<Value = Protocol> {
    PossibleValuesParser::new(Protocol::ALL.iter().map(|p| p.name()))
        .map(|name| name.parse::<Protocol>().unwrap_or_default())
}

impl ConnectArgs {
    /// The library's form.
    pub fn options(&self) -> ConnectOptions {
        ConnectOptions {
            protocol: if self.http2 {
                Protocol::from_http2_switch(true)
            } else {
                self.protocol
            },
            streams: self.streams,
            keepalive: !self.no_keepalive,
            insecure: self.insecure,
            cacert: self.cacert.clone(),
            cert: self.cert.clone(),
            key: self.key.clone(),
            sni: self.sni.clone(),
            tls_version: self.tls_version.clone(),
            source_addrs: self.source_addrs.clone(),
            zero_rtt: self.zero_rtt,
        }
    }
}

/// A unary gRPC call instead of an HTTP request.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "gRPC")]
pub struct GrpcArgs {
    /// Call this method, package.Service/Method (HTTP/2; -H adds metadata; a server stream is
    /// measured per message); without --proto, the schema comes by gRPC server reflection.
    #[arg(long, value_name = "METHOD")]
    pub call: Option<String>,
    /// .proto file declaring the service (repeatable), compiled in process; leave it out to ask
    /// the server by reflection.
    #[arg(long, value_name = "FILE", requires = "call")]
    pub proto: Vec<PathBuf>,
    /// Folder searched for the .proto files' imports (repeatable).
    #[arg(long, value_name = "DIR")]
    pub import_path: Vec<PathBuf>,
    /// The request message as JSON (proto3 JSON mapping), e.g. '{"name": "x"}'.
    #[arg(long, value_name = "JSON", requires = "call")]
    pub data: Option<String>,
}

impl GrpcArgs {
    /// The library's form, when a call was asked for.
    pub fn input(&self) -> Option<GrpcInput> {
        self.call.as_ref().map(|call| GrpcInput {
            protos: self.proto.clone(),
            import_paths: self.import_path.clone(),
            call: call.clone(),
            data: self.data.clone().unwrap_or_default(),
        })
    }
}
