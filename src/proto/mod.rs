//! Protocols: how one request is sent and its response read, and how failures are classified.
//!
//! Failures are an enum ([`ErrorKind`]), never strings, so the hot path can count them in a fixed
//! array and the report can explain each one with a hint.

pub mod http1;

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
}

impl ErrorKind {
    /// Number of kinds: the length of per-kind counter arrays.
    pub const COUNT: usize = 14;

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
    ];

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
                "the client ran out of ephemeral ports (a load-generator limit, not a server result); use keep-alive, fewer new connections, or more source addresses"
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
            Self::HeaderTooLarge => "the response head exceeded the client's header size limit",
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
        }
    }

    /// True for failures that happen before any request byte reaches the target and are caused by
    /// the client machine itself.
    pub fn is_generator_side(self) -> bool {
        matches!(self, Self::AddrNotAvailable | Self::TooManyOpenFiles)
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

    /// The error kind an HTTP status counts as, if it is an error.
    pub fn from_status(status: u16) -> Option<Self> {
        match status {
            400..=499 => Some(Self::Http4xx),
            500..=599 => Some(Self::Http5xx),
            _ => None,
        }
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
