//! Values every reader shares: durations (parsed, scaled by `--time-scale`, bounded) and how host
//! names are resolved (the system's resolver, or the caller's, e.g. a fuzzer's).

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Turns a host (a name, or an IP address without brackets) and a port into an address.
pub type Resolve = fn(host: &str, port: u16) -> Result<SocketAddr, ResolveError>;

/// Why a host name gives no address.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The resolver failed.
    #[error("cannot resolve host `{host}`: {cause}")]
    Failed {
        /// The host.
        host: String,
        /// Why.
        cause: std::io::Error,
    },
    /// The resolver answered with no address.
    #[error("host `{0}` resolves to no address")]
    NoAddress(String),
}

/// The system's resolver (`/etc/hosts`, DNS): the first address of `host`.
pub fn system_resolve(host: &str, port: u16) -> Result<SocketAddr, ResolveError> {
    (host, port)
        .to_socket_addrs()
        .map_err(|cause| ResolveError::Failed {
            host: host.into(),
            cause,
        })?
        .next()
        .ok_or_else(|| ResolveError::NoAddress(host.into()))
}

/// The longest duration volley accepts anywhere (a run, a stage, a timeout, a pause): 366 days.
/// Anything longer is a typo, and would overflow the arithmetic of the clocks that time a run.
pub const MAX_DURATION: Duration = Duration::from_secs(366 * 24 * 3600);

/// What is too long about a duration.
const TOO_LONG: &str = "is longer than the longest duration volley accepts, 366 days";

/// Why a duration is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// A duration below 0.
    #[error("`{0}` is negative; durations are ≥ 0")]
    Negative(String),
    /// A number of seconds out of a duration's range.
    #[error("`{0}` is not a valid number of seconds")]
    NotSeconds(String),
    /// Text that is not a duration.
    #[error("`{text}` is not a duration like 10s, 1m30s or 500ms ({cause})")]
    NotADuration {
        /// The text.
        text: String,
        /// What the parser said.
        cause: String,
    },
    /// A duration above [`MAX_DURATION`], as written.
    #[error("`{0}` {TOO_LONG}")]
    TooLong(String),
    /// A duration × `--time-scale` above [`MAX_DURATION`].
    #[error("{duration} × {factor} (--time-scale) {TOO_LONG}")]
    ScaledTooLong {
        /// The duration before scaling, as humantime writes it.
        duration: String,
        /// The factor as written in the message.
        factor: String,
    },
}

/// Parses `30s`, `1m30s`, `500ms`, or a bare number of seconds; negative values, and values
/// above [`MAX_DURATION`], are refused.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(DurationError::Negative(text.into()));
    }
    let d = if let Ok(secs) = t.parse::<f64>() {
        Duration::try_from_secs_f64(secs).map_err(|_| DurationError::NotSeconds(text.into()))?
    } else {
        humantime::parse_duration(t).map_err(|e| DurationError::NotADuration {
            text: text.into(),
            cause: e.to_string(),
        })?
    };
    if d > MAX_DURATION {
        return Err(DurationError::TooLong(text.into()));
    }
    Ok(d)
}

/// `d` × `factor` (a `--time-scale`), refused above [`MAX_DURATION`].
pub fn scale_duration(d: Duration, factor: f64) -> Result<Duration, DurationError> {
    // A product too large for a Duration is too long, like one above the maximum.
    let scaled = Duration::try_from_secs_f64(d.as_secs_f64() * factor).unwrap_or(Duration::MAX);
    if scaled <= MAX_DURATION {
        return Ok(scaled);
    }
    let factor = if (1e-6..1e6).contains(&factor) {
        factor.to_string()
    } else {
        format!("{factor:e}")
    };
    Err(DurationError::ScaledTooLong {
        duration: humantime::format_duration(d).to_string(),
        factor,
    })
}
