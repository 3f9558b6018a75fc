//! [`ErrorKind`]: why a request did not produce a successful response — the keys of every error
//! count in the record.

use std::io;

/// Why a request did not produce a successful response.
///
/// Transport failures and HTTP error statuses (4xx, 5xx) share one enum so a run can be summarised as
/// "errors by kind". The discriminant indexes per-worker counter arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// The target refused the TCP connection (nothing listening: ECONNREFUSED).
    ConnectRefused,
    /// The client could not bind a local address (EADDRNOTAVAIL): ephemeral ports ran out.
    AddrNotAvailable,
    /// The client ran out of file descriptors (EMFILE/ENFILE).
    TooManyOpenFiles,
    /// No route to the target (ENETUNREACH/EHOSTUNREACH).
    Unreachable,
    /// The connection was not established within the request timeout.
    ConnectTimeout,
    /// The response did not complete within the request timeout.
    Timeout,
    /// The peer reset the connection (ECONNRESET/EPIPE).
    Reset,
    /// The peer closed the connection before the response was complete.
    Closed,
    /// The bytes received were not a valid HTTP/1.1 response.
    InvalidResponse,
    /// The response head was larger than the client accepts.
    HeaderTooLarge,
    /// Any other I/O failure.
    Io,
    /// The response had a 4xx status.
    Http4xx,
    /// The response had a 5xx status.
    Http5xx,
    /// The request could not be built: a template failed (e.g. it uses a variable whose
    /// extraction failed in an earlier step). Nothing was sent.
    Template,
    /// The TLS handshake failed for a reason other than the certificate.
    Tls,
    /// The server's TLS certificate was not trusted.
    TlsCertificate,
    /// The server broke the HTTP/2 or gRPC protocol (or ended the connection with an error code).
    Protocol,
    /// The HTTP/2 server refused the stream (REFUSED_STREAM): too many streams at once.
    StreamRefused,
    /// The gRPC call ended with a status the caller caused (INVALID_ARGUMENT, NOT_FOUND, …).
    GrpcClientError,
    /// The gRPC call ended with a status the server caused (UNAVAILABLE, INTERNAL, …).
    GrpcServerError,
    /// The response body was larger than the client accepts (a limit the user set).
    BodyTooLarge,
    /// The TCP connection was open but the TLS handshake did not complete within the timeout.
    TlsHandshakeTimeout,
    /// The response's status code is outside 100–599: not an HTTP status.
    InvalidStatus,
    /// The WebSocket peer closed the stream with a code other than 1000 (normal closure) or
    /// 1001 (going away), or with none before the stream was done.
    WebSocketClose,
    /// A streaming request side's message (a template, rendered per message) could not be
    /// rendered: the stream, already open, was closed before all its messages were sent.
    MessageTemplate,
    /// HTTP/3: the QUIC handshake did not complete: no answer over UDP before the idle timeout,
    /// no common QUIC version, or a transport error during the handshake (TLS alerts count as
    /// [`Tls`](Self::Tls) and [`TlsCertificate`](Self::TlsCertificate)).
    QuicHandshake,
    /// HTTP/3: an established QUIC connection went silent for longer than its idle timeout.
    QuicIdleTimeout,
    /// HTTP/3: the server ended the request's stream with an HTTP/3 error code (other than
    /// H3_REQUEST_REJECTED, which is [`StreamRefused`](Self::StreamRefused)).
    H3Stream,
    /// HTTP/3: the connection was closed with a QUIC transport or HTTP/3 error code (a close
    /// with H3_NO_ERROR is [`Closed`](Self::Closed)).
    H3Connection,
}

impl ErrorKind {
    /// Number of kinds: the length of per-kind counter arrays.
    pub const COUNT: usize = 29;

    /// Every kind, in discriminant order.
    pub const ALL: [ErrorKind; Self::COUNT] = [
        Self::ConnectRefused,
        Self::AddrNotAvailable,
        Self::TooManyOpenFiles,
        Self::Unreachable,
        Self::ConnectTimeout,
        Self::Timeout,
        Self::Reset,
        Self::Closed,
        Self::InvalidResponse,
        Self::HeaderTooLarge,
        Self::Io,
        Self::Http4xx,
        Self::Http5xx,
        Self::Template,
        Self::Tls,
        Self::TlsCertificate,
        Self::Protocol,
        Self::StreamRefused,
        Self::GrpcClientError,
        Self::GrpcServerError,
        Self::BodyTooLarge,
        Self::TlsHandshakeTimeout,
        Self::InvalidStatus,
        Self::WebSocketClose,
        Self::MessageTemplate,
        Self::QuicHandshake,
        Self::QuicIdleTimeout,
        Self::H3Stream,
        Self::H3Connection,
    ];

    /// Whether an attempt that failed this way was never sent: the generator could not make it
    /// (see [`is_generator_limit`](Self::is_generator_limit)) or no connection to the target
    /// could be opened (see [`is_unconnected`](Self::is_unconnected)). Such a failure is an
    /// attempt and an error, never a request, and never in a throughput (docs/measurement.md).
    pub fn never_sent(self) -> bool {
        self.is_generator_limit() || self.is_unconnected()
    }

    /// Whether the generator itself could not make the attempt: no ephemeral port, no file
    /// descriptor, or a request it could not build. The target is not charged with these: they
    /// are in no error rate (docs/measurement.md, "Error rate"). (A stream's message that
    /// could not be built, [`MessageTemplate`](Self::MessageTemplate), fails a request that was
    /// sent: it is an error of that request.)
    pub fn is_generator_limit(self) -> bool {
        matches!(
            self,
            Self::AddrNotAvailable | Self::TooManyOpenFiles | Self::Template
        )
    }

    /// Whether no connection to the target could be opened: refused, no route, not
    /// established within the timeout, or its TLS handshake failed or did not finish. The
    /// request was never sent, but the target (or the way to it) failed: these are in the
    /// error rate.
    pub fn is_unconnected(self) -> bool {
        matches!(
            self,
            Self::ConnectRefused
                | Self::Unreachable
                | Self::ConnectTimeout
                | Self::TlsHandshakeTimeout
                | Self::Tls
                | Self::TlsCertificate
                | Self::QuicHandshake
        )
    }

    /// Whether the failure is of the connection rather than of one request: no connection
    /// could be opened ([`is_unconnected`](Self::is_unconnected)), or the server broke the
    /// protocol (HTTP/2 prior knowledge against an HTTP/1.1 server). A run in which every
    /// attempt failed so, without a single response, measured nothing of the service.
    pub fn is_connection_failure(self) -> bool {
        self.is_unconnected() || self == Self::Protocol
    }

    /// Whether a VU waits before its next try after this failure: the generator ran out of a
    /// local resource (ports, file descriptors), or the connection failed. Without the wait
    /// such a VU retries in a tight loop.
    pub fn backs_off(self) -> bool {
        matches!(self, Self::AddrNotAvailable | Self::TooManyOpenFiles)
            || self.is_connection_failure()
    }

    /// Whether a failure of this kind still got a response, and so is counted under its status
    /// too (and its latency in the histograms): an error status. Every other kind is a failure
    /// of the exchange itself, with no response.
    pub fn has_response(self) -> bool {
        matches!(
            self,
            Self::Http4xx
                | Self::Http5xx
                | Self::InvalidStatus
                | Self::GrpcClientError
                | Self::GrpcServerError
        )
    }

    /// Index into per-kind arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Stable snake_case name, used as the key in `run.json`.
    pub fn name(self) -> &'static str {
        match self {
            Self::ConnectRefused => "connection_refused",
            Self::AddrNotAvailable => "address_not_available",
            Self::TooManyOpenFiles => "too_many_open_files",
            Self::Unreachable => "unreachable",
            Self::ConnectTimeout => "connect_timeout",
            Self::Timeout => "timeout",
            Self::Reset => "connection_reset",
            Self::Closed => "connection_closed",
            Self::InvalidResponse => "invalid_response",
            Self::HeaderTooLarge => "header_too_large",
            Self::Io => "io_error",
            Self::Http4xx => "http_4xx",
            Self::Http5xx => "http_5xx",
            Self::Template => "template_error",
            Self::Tls => "tls_error",
            Self::TlsCertificate => "tls_certificate",
            Self::Protocol => "protocol_error",
            Self::StreamRefused => "stream_refused",
            Self::GrpcClientError => "grpc_client_error",
            Self::GrpcServerError => "grpc_server_error",
            Self::BodyTooLarge => "body_too_large",
            Self::TlsHandshakeTimeout => "tls_handshake_timeout",
            Self::InvalidStatus => "invalid_status",
            Self::WebSocketClose => "websocket_close",
            Self::MessageTemplate => "message_template",
            Self::QuicHandshake => "quic_handshake",
            Self::QuicIdleTimeout => "quic_idle_timeout",
            Self::H3Stream => "h3_stream_error",
            Self::H3Connection => "h3_connection_error",
        }
    }

    /// Parses a name written by [`ErrorKind::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// One line that says what the error means and what to do about it.
    pub fn hint(self) -> &'static str {
        match self {
            Self::ConnectRefused => {
                "nothing listens at the target address, or its accept queue overflowed; check the URL and that the server is up"
            }
            Self::AddrNotAvailable => {
                "the client ran out of ephemeral ports (a load-generator limit, not a server result); use keep-alive, fewer new connections, or spread connections over local addresses with --source-addrs 127.0.0.2-127.0.0.40 (plans: [target] source_addrs)"
            }
            Self::TooManyOpenFiles => {
                "the client hit its file-descriptor limit; raise `ulimit -n` or lower the connection count"
            }
            Self::Unreachable => "no route to the target host; check the address and the network",
            Self::ConnectTimeout => {
                "the TCP connection was not accepted within the timeout; the server's accept backlog may be full"
            }
            Self::Timeout => {
                "no complete response within the timeout; the server is overloaded or stuck (raise --timeout to see the real latency)"
            }
            Self::Reset => {
                "the server reset the connection (crash, connection limit, or a proxy dropping it)"
            }
            Self::Closed => "the server closed the connection before the response was complete",
            Self::InvalidResponse => "the server sent bytes that are not valid HTTP/1.1",
            Self::HeaderTooLarge => {
                "the response head exceeded the client's limit (--max-header-size / max_header_size, default 64 KiB, or more than 128 header fields)"
            }
            Self::Io => "an unclassified I/O error on the client socket",
            Self::Http4xx => {
                "the server answered with a client-error status (see the status table)"
            }
            Self::Http5xx => {
                "the server answered with a server-error status (see the status table)"
            }
            Self::Template => {
                "the request could not be built: a template failed, usually because an earlier step's extraction failed"
            }
            Self::Tls => {
                "the TLS handshake failed (version or cipher mismatch, an alert from the server, no h2 by ALPN, or the server does not speak TLS); check https:// vs http:// and --tls-version"
            }
            Self::TlsCertificate => {
                "the server's certificate is not trusted (self-signed, unknown CA, wrong host name, or expired); pass --cacert FILE with the CA that signed it, --sni NAME for the name it was issued to, or --insecure to skip verification"
            }
            Self::Protocol => {
                "the server broke the HTTP/2 or gRPC protocol, or closed the connection with an error (GOAWAY/RST_STREAM), or sent a response head over --max-header-size; is it really an HTTP/2 (or gRPC) server?"
            }
            Self::StreamRefused => {
                "the HTTP/2 server refused streams beyond its concurrency limit; lower --streams or add connections"
            }
            Self::GrpcClientError => {
                "the gRPC call failed with a caller-side status (INVALID_ARGUMENT, NOT_FOUND, UNAUTHENTICATED, …; see the gRPC status table)"
            }
            Self::GrpcServerError => {
                "the gRPC call failed with a server-side status (UNAVAILABLE, INTERNAL, DEADLINE_EXCEEDED, …; see the gRPC status table)"
            }
            Self::BodyTooLarge => {
                "the response body exceeded the limit set with --max-body-size / max_body_size (no limit by default)"
            }
            Self::TlsHandshakeTimeout => {
                "the TCP connection was accepted but the TLS handshake did not finish within the timeout; does this port speak TLS (https:// vs http://)?"
            }
            Self::InvalidStatus => {
                "the response's status code is outside 100–599, so it is no HTTP status (see the status table); a plan step may accept it with checks.status"
            }
            Self::WebSocketClose => {
                "the WebSocket server closed the stream with an error code (1002 protocol error, 1011 internal error, …), or closed it before the stream was done"
            }
            Self::MessageTemplate => {
                "a stream's message template failed to render for one of its messages, so the stream was closed early; `volley check` shows the first message"
            }
            Self::QuicHandshake => {
                "the QUIC handshake did not complete: nothing answered on the UDP port (an HTTPS server's TCP port often has no QUIC beside it; look for its Alt-Svc header), no common QUIC version, or a transport error"
            }
            Self::QuicIdleTimeout => {
                "the QUIC connection went silent past its idle timeout (30 s): the server or the path dropped it without a close"
            }
            Self::H3Stream => {
                "the HTTP/3 server ended the request's stream with an error code (H3_INTERNAL_ERROR, H3_REQUEST_CANCELLED, …)"
            }
            Self::H3Connection => {
                "the HTTP/3 connection was closed with an error code (a QUIC transport error, or an HTTP/3 one such as H3_EXCESSIVE_LOAD)"
            }
        }
    }

    /// Classifies an I/O error by its OS error code.
    pub fn from_io(err: &io::Error) -> Self {
        use nix::errno::Errno;
        if let Some(code) = err.raw_os_error() {
            return match Errno::from_raw(code) {
                Errno::ECONNREFUSED => Self::ConnectRefused,
                Errno::EADDRNOTAVAIL => Self::AddrNotAvailable,
                Errno::EMFILE | Errno::ENFILE => Self::TooManyOpenFiles,
                Errno::ENETUNREACH | Errno::EHOSTUNREACH => Self::Unreachable,
                Errno::ECONNRESET | Errno::EPIPE | Errno::ECONNABORTED => Self::Reset,
                Errno::ETIMEDOUT => Self::Timeout,
                _ => Self::Io,
            };
        }
        match err.kind() {
            io::ErrorKind::ConnectionRefused => Self::ConnectRefused,
            io::ErrorKind::AddrNotAvailable => Self::AddrNotAvailable,
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted => Self::Reset,
            io::ErrorKind::UnexpectedEof => Self::Closed,
            io::ErrorKind::TimedOut => Self::Timeout,
            _ => Self::Io,
        }
    }

    /// The error kind an HTTP status counts as, if it is an error: 4xx, 5xx, and any code
    /// outside 100–599.
    pub fn from_status(status: u16) -> Option<Self> {
        match status {
            400..=499 => Some(Self::Http4xx),
            500..=599 => Some(Self::Http5xx),
            100..=399 => None,
            _ => Some(Self::InvalidStatus),
        }
    }
}

/// Serialised as its [`ErrorKind::name`]: the keys of `errors_by_kind` in `run.json`.
impl serde::Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// Read back from its [`ErrorKind::name`]; any other name is an error that lists the known ones.
impl<'de> serde::Deserialize<'de> for ErrorKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Self::from_name(&name)
            .ok_or_else(|| serde::de::Error::unknown_variant(&name, known_names()))
    }
}

/// The known names, as the `'static` slice serde's error wants (built once).
fn known_names() -> &'static [&'static str] {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| ErrorKind::ALL.iter().map(|k| k.name()).collect())
}

impl schemars::JsonSchema for ErrorKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ErrorKind".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Self::ALL.iter().map(|k| k.name()).collect();
        schemars::json_schema!({
            "description": "Why a request did not produce a successful response (docs/measurement.md).",
            "type": "string",
            "enum": names,
        })
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_discriminant_order_and_names_round_trip() {
        for (i, kind) in ErrorKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.index(), i);
            assert_eq!(ErrorKind::from_name(kind.name()), Some(kind));
        }
    }

    #[test]
    fn os_errors_are_classified() {
        let e = io::Error::from_raw_os_error(nix::libc::EADDRNOTAVAIL);
        assert_eq!(ErrorKind::from_io(&e), ErrorKind::AddrNotAvailable);
        let e = io::Error::from_raw_os_error(nix::libc::ECONNREFUSED);
        assert_eq!(ErrorKind::from_io(&e), ErrorKind::ConnectRefused);
        let e = io::Error::from_raw_os_error(nix::libc::ECONNRESET);
        assert_eq!(ErrorKind::from_io(&e), ErrorKind::Reset);
        assert_eq!(ErrorKind::from_status(503), Some(ErrorKind::Http5xx));
        assert_eq!(ErrorKind::from_status(204), None);
    }
}
