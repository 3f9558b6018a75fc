//! Protocols: how one request is sent and its response read, and how failures are classified.
//!
//! Failures are an enum ([`ErrorKind`]), never strings, so the hot path can count them in a fixed
//! array and the report can explain each one with a hint.
//!
//! # Layout
//!
//! - [`client`]: the protocol-neutral seam the engine drives: [`client::Client`] (built once per
//!   run), [`client::Connection`] (one per task; HTTP/2 handles share a connection),
//!   [`message::Request`] → [`client::PreparedRequest`] → [`message::Response`].
//! - [`conn`]: what every protocol's connection shares: its phase ([`conn::ConnPhase`]),
//!   response size [`conn::Limits`], the default timeout.
//! - [`http1`]: the hand-written HTTP/1.1 client (hot path), generic over how it connects.
//! - [`http2`]: HTTP/2 (h2c prior knowledge, or h2 by ALPN over TLS) on the `h2` crate, one
//!   connection shared by several stream handles.
//! - [`http3`]: HTTP/3 over QUIC (ALPN `h3`) on `h3` and quinn, shaped as HTTP/2: one
//!   connection (one UDP socket) shared by several stream handles.
//! - [`grpc`]: unary gRPC without generated code: `.proto` files compiled in process, JSON → protobuf,
//!   framing, status codes.
//! - [`pick`]: response header values picked for `--group-by`, into a reused buffer.
//! - [`dial`]: opening TCP (and TLS) connections, with source-address spreading.
//! - [`tls`]: rustls client configuration: verification, CA file, client certificate, versions.
//! - [`source`]: parsing source-address lists and ranges (`127.0.0.2-127.0.0.40`).
//! - [`stream`]: streaming steps: a response body read as messages as it arrives, traced per
//!   stream and per message; its protocols ([`stream::sse`]) live under it.

pub mod client;
mod client_errors;
pub mod conn;
pub mod dial;
pub mod grpc;
pub mod http1;
pub mod http2;
pub mod http3;
pub mod message;
pub mod pick;
pub mod reflection;
pub mod source;
pub mod stream;
pub mod tls;

pub use crate::record::error_kind::ErrorKind;
