//! Values every loader shares: durations (parsed, scaled by `--time-scale`, bounded) and how host
//! names are resolved (the system's resolver, or the caller's, e.g. a fuzzer's).

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Turns a host (a name, or an IP address without brackets) and a port into an address; errors
/// are messages for the user.
pub type Resolve = fn(host: &str, port: u16) -> Result<SocketAddr, String>;

/// The system's resolver (`/etc/hosts`, DNS): the first address of `host`.
pub fn system_resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve host `{host}`: {e}"))?
        .next()
        .ok_or_else(|| format!("host `{host}` resolves to no address"))
}

/// The longest duration volley accepts anywhere (a run, a stage, a timeout, a pause): 366 days.
/// Anything longer is a typo, and would overflow the arithmetic of the clocks that time a run.
pub const MAX_DURATION: Duration = Duration::from_secs(366 * 24 * 3600);

/// Parses `30s`, `1m30s`, `500ms`, or a bare number of seconds; negative values, and values
/// above [`MAX_DURATION`], are refused.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("`{text}` is negative; durations are ≥ 0"));
    }
    let d = if let Ok(secs) = t.parse::<f64>() {
        Duration::try_from_secs_f64(secs)
            .map_err(|_| format!("`{text}` is not a valid number of seconds"))?
    } else {
        humantime::parse_duration(t)
            .map_err(|e| format!("`{text}` is not a duration like 10s, 1m30s or 500ms ({e})"))?
    };
    at_most_max(d).map_err(|why| format!("`{text}` {why}"))
}

/// `d` × `factor` (a `--time-scale`), refused above [`MAX_DURATION`].
pub fn scale_duration(d: Duration, factor: f64) -> Result<Duration, String> {
    // A product too large for a Duration is too long, like one above the maximum.
    let scaled = Duration::try_from_secs_f64(d.as_secs_f64() * factor).unwrap_or(Duration::MAX);
    at_most_max(scaled).map_err(|why| {
        let factor = if (1e-6..1e6).contains(&factor) {
            factor.to_string()
        } else {
            format!("{factor:e}")
        };
        format!("{} × {factor} (--time-scale) {why}", secs_text(d))
    })
}

fn at_most_max(d: Duration) -> Result<Duration, String> {
    if d > MAX_DURATION {
        Err("is longer than the longest duration volley accepts, 366 days".into())
    } else {
        Ok(d)
    }
}

fn secs_text(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}
