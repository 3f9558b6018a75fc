//! What the engine asks for and what it gets back, whatever the protocol.
//!
//! A [`Request`] is the protocol-neutral description (owned strings, easy to build from a plan);
//! [`crate::proto::client::Client::prepare`] turns it once into a
//! [`PreparedRequest`](super::client::PreparedRequest) in the wire
//! form of the client's protocol (HTTP/1.1 bytes, or HTTP/2 head + body, gRPC-framed), which every
//! connection then sends as many times as needed without rebuilding it.

use bytes::Bytes;

use super::ErrorKind;
use super::grpc::GrpcCode;

/// Whether a request is a plain HTTP request or a gRPC call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RequestKind {
    /// HTTP: the status decides success.
    #[default]
    Http,
    /// Unary gRPC: `body` is the protobuf message (unframed), `headers` the metadata; the
    /// `grpc-status` decides success. Needs HTTP/2.
    Grpc,
}

/// What to keep of a response, for checks and extraction. Capturing costs an allocation per
/// response, so the default keeps nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capture {
    /// Keep up to this many body bytes (for gRPC: of the response message); 0 keeps none.
    pub body_limit: usize,
    /// Keep the response headers (and, for HTTP/2, the trailers).
    pub headers: bool,
}

impl Capture {
    /// True when anything is kept.
    pub fn any(&self) -> bool {
        self.body_limit > 0 || self.headers
    }
}

/// One request, protocol-neutral.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`, … (gRPC: `POST`).
    pub method: http::Method,
    /// `host[:port]`: the `Host` header of HTTP/1.1, the `:authority` of HTTP/2.
    pub authority: String,
    /// Path and query, starting with `/` (gRPC: `/package.Service/Method`).
    pub path_and_query: String,
    /// Extra headers (gRPC: metadata), in order. A `Host` or `User-Agent` replaces the default.
    pub headers: Vec<(String, String)>,
    /// The body (gRPC: the encoded protobuf message, without the 5-byte gRPC frame header).
    pub body: Bytes,
    /// HTTP or gRPC.
    pub kind: RequestKind,
    /// What to keep of the response.
    pub capture: Capture,
}

impl Request {
    /// A `GET` of `path_and_query` with no extra headers.
    pub fn get(authority: impl Into<String>, path_and_query: impl Into<String>) -> Self {
        Self {
            method: http::Method::GET,
            authority: authority.into(),
            path_and_query: path_and_query.into(),
            headers: Vec::new(),
            body: Bytes::new(),
            kind: RequestKind::Http,
            capture: Capture::default(),
        }
    }

    /// A unary gRPC call of `method` (its path is `/package.Service/Method`) carrying `message`,
    /// the encoded request (see [`crate::proto::grpc::GrpcMethod::encode_json`]).
    pub fn grpc(
        authority: impl Into<String>,
        method: &super::grpc::GrpcMethod,
        message: Bytes,
    ) -> Self {
        Self {
            method: http::Method::POST,
            authority: authority.into(),
            path_and_query: method.path().to_owned(),
            headers: Vec::new(),
            body: message,
            kind: RequestKind::Grpc,
            capture: Capture::default(),
        }
    }
}

pub use crate::record::timing::Timing;

/// The parts of a response kept by [`Capture`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// Response headers (HTTP/2: then the trailers) when asked for; else empty.
    pub headers: http::HeaderMap,
    /// The first `body_limit` bytes of the body (gRPC: of the response message, unframed).
    pub body: Bytes,
    /// True when the body was longer than the limit.
    pub truncated: bool,
}

/// What one completed exchange produced. An HTTP 4xx/5xx or a non-OK gRPC status is still a
/// `Response`; [`Response::error`] says how it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status code (gRPC: normally 200).
    pub status: u16,
    /// The gRPC status of a gRPC call.
    pub grpc_status: Option<GrpcCode>,
    /// Bytes received for this response, bytes. HTTP/1.1: as read from the socket (head and
    /// body). HTTP/2: body bytes plus the decoded size of the header and trailer names and
    /// values (HPACK-compressed frames are smaller on the wire).
    pub bytes_received: u64,
    /// Connect, TLS and waiting times.
    pub timing: Timing,
    /// What [`Capture`] asked to keep.
    pub captured: Option<Box<Captured>>,
}

impl Response {
    /// How this response counts as an error, if it does: a non-OK gRPC status, or an HTTP 4xx/5xx.
    pub fn error(&self) -> Option<ErrorKind> {
        match self.grpc_status {
            Some(code) => code.error_kind(),
            None => ErrorKind::from_status(self.status),
        }
    }
}

/// Receives a response body's bytes as they arrive: a streaming step's parser
/// ([`crate::proto::stream::sse`]). The connection calls it once per read, with the body bytes of that
/// read (HTTP/1.1 chunked framing removed) and when the read returned.
pub trait BodyTap: Send {
    /// Takes `data`, read at `at`; returns [`Tapped::Stop`] to stop reading the body early (the
    /// connection is then closed rather than reused: the rest of the body is unread).
    fn data(&mut self, data: &[u8], at: std::time::Instant) -> Tapped;

    /// Whether the request side is a stream too (gRPC client and bidirectional streaming):
    /// the request's body is then one message, sent as [`next_send`](Self::next_send) says,
    /// while the response is read. Default: no (the body is sent once, whole).
    fn duplex(&self) -> bool {
        false
    }

    /// A duplex stream: when its next message is due, asked at `now` (after each send and
    /// each read).
    fn next_send(&mut self, _now: std::time::Instant) -> NextSend {
        NextSend::Done
    }

    /// A duplex stream: a message was handed to the connection at `at`.
    fn sent(&mut self, _at: std::time::Instant) {}

    /// A duplex stream: what its next message is. Default: the request's own message.
    fn message(&mut self) -> NextMessage {
        NextMessage::Request
    }

    /// A stream that asks the HTTP/1.1 connection to switch protocols (WebSocket): what runs
    /// on the connection after a `101 Switching Protocols`. Default: none (a 101 is then a
    /// protocol error).
    fn upgrade(&mut self) -> Option<&mut dyn Upgrade> {
        None
    }
}

/// What a duplex stream sends as its next message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextMessage {
    /// The request's own message (its body), as every time.
    Request,
    /// This one, rendered for this send (gRPC: framed).
    Rendered(bytes::Bytes),
    /// It could not be rendered: the request side closes, sending nothing more.
    Failed,
}

/// The messages of a streaming request side whose message is a template, rendered per send by
/// the layer that holds the templates (the engine).
pub trait Messages: Send + Sync {
    /// Message `k` (from 0), ready to send (gRPC: framed), and the id it carries when replies
    /// are matched by id; none when it could not be rendered.
    fn message(&mut self, k: u64) -> Option<(bytes::Bytes, Option<u64>)>;
}

/// A connection's byte stream, whatever is under it (TCP or TLS), for an [`Upgrade`].
pub trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}

impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Io for T {}

/// What an upgraded HTTP/1.1 connection runs (a WebSocket session): the connection hands it
/// over after the `101` response head and closes it afterwards.
pub trait Upgrade: Send {
    /// Checks the `101` response `head` (its bytes, e.g. `Sec-WebSocket-Accept`) and runs the
    /// protocol on `io` to its end; `early` are bytes the connection read after the head.
    /// Adds every byte it reads to `received` as it reads it (a session cut short still
    /// counts them).
    fn run<'a>(
        &'a mut self,
        io: &'a mut dyn Io,
        head: &'a [u8],
        early: &'a [u8],
        received: &'a mut u64,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<(), ErrorKind>> + Send + 'a>>;
}

/// When a duplex stream's next message is due ([`BodyTap::next_send`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextSend {
    /// Now.
    Now,
    /// At this instant.
    At(std::time::Instant),
    /// After the next message received (echo).
    AfterReply,
    /// No more: close the request side.
    Done,
}

/// What a [`BodyTap`] wants after a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tapped {
    /// Read on to the body's end.
    More,
    /// Enough: stop reading (an end sentinel or an event limit was reached).
    Stop,
}
