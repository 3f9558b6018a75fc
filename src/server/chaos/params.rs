//! The query parameters of `/chaos/slow`, `/chaos/headers` and `/chaos/long-header`, and why
//! they can be wrong (the text of a 400 answer).

use super::super::metrics::ChaosKind;
use super::super::routes::MAX_BYTES;

/// Most header fields `/chaos/headers` sends.
const MAX_CHAOS_HEADERS: u64 = 100_000;

/// Why a `/chaos/` query cannot be served (the text of its 400 answer).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ParamError {
    /// An integer parameter is not one, or above its maximum.
    #[error("{name} must be an integer of at most {max}")]
    NotACount {
        /// The parameter.
        name: &'static str,
        /// Its maximum.
        max: u64,
    },
    /// `bytes_per_sec` is not a positive number.
    #[error("bytes_per_sec must be a positive number")]
    BadRate,
    /// `/chaos/slow` without `bytes_per_sec`.
    #[error("/chaos/slow needs ?bytes_per_sec=N")]
    NoRate,
    /// `/chaos/slow`'s `bytes` is not an integer of at most [`MAX_BYTES`].
    #[error("bytes must be an integer of at most {MAX_BYTES}")]
    BadTotal,
}

/// An oversized response head.
#[derive(Debug, Clone, Copy)]
pub(super) enum BigHead {
    /// This many header fields.
    Fields(u64),
    /// One header line of this many bytes.
    Line(u64),
}

impl BigHead {
    /// The head `/chaos/headers?count=N` (default 1000) or `/chaos/long-header?bytes=N` (default
    /// 1 MiB, at most `max_line`) asks for; `None` for other paths.
    pub(super) fn parse(
        path: &str,
        query: Option<&str>,
        max_line: u64,
    ) -> Option<Result<Self, ParamError>> {
        match path {
            "/chaos/headers" => {
                Some(count_param(query, "count", 1000, MAX_CHAOS_HEADERS).map(Self::Fields))
            }
            "/chaos/long-header" => {
                Some(count_param(query, "bytes", 1024 * 1024, max_line).map(Self::Line))
            }
            _ => None,
        }
    }

    /// How the metrics count it.
    pub(super) fn kind(self) -> ChaosKind {
        match self {
            Self::Fields(_) => ChaosKind::Headers,
            Self::Line(_) => ChaosKind::LongHeader,
        }
    }
}

/// An integer query parameter `name` (default `default`, at most `max`).
fn count_param(
    query: Option<&str>,
    name: &'static str,
    default: u64,
    max: u64,
) -> Result<u64, ParamError> {
    let mut value = default;
    for pair in query.unwrap_or("").split('&') {
        if let Some((key, v)) = pair.split_once('=')
            && key == name
        {
            value = v.parse().map_err(|_| ParamError::NotACount { name, max })?;
        }
    }
    if value > max {
        return Err(ParamError::NotACount { name, max });
    }
    Ok(value)
}

/// `bytes_per_sec` (required, > 0) and `bytes` (default 1024, at most
/// [`MAX_BYTES`]) from the query string.
pub(super) fn slow_params(query: Option<&str>) -> Result<(f64, u64), ParamError> {
    let mut rate = None;
    let mut total = Ok(1024);
    for pair in query.unwrap_or("").split('&') {
        match pair.split_once('=') {
            Some(("bytes_per_sec", v)) => rate = Some(v.parse::<f64>()),
            Some(("bytes", v)) => total = v.parse::<u64>(),
            _ => {}
        }
    }
    let rate = match rate {
        Some(Ok(rate)) if rate.is_finite() && rate > 0.0 => rate,
        Some(_) => return Err(ParamError::BadRate),
        None => return Err(ParamError::NoRate),
    };
    match total {
        Ok(total) if total <= MAX_BYTES => Ok((rate, total)),
        _ => Err(ParamError::BadTotal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_parameters() {
        assert_eq!(slow_params(Some("bytes_per_sec=100")), Ok((100.0, 1024)));
        assert_eq!(
            slow_params(Some("bytes=10&bytes_per_sec=2.5")),
            Ok((2.5, 10))
        );
        assert!(slow_params(None).is_err());
        assert!(slow_params(Some("bytes_per_sec=0")).is_err());
        assert!(slow_params(Some("bytes_per_sec=1&bytes=-1")).is_err());
        assert!(slow_params(Some(&format!("bytes_per_sec=1&bytes={}", MAX_BYTES + 1))).is_err());
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let message = |q| slow_params(Some(q)).unwrap_err().to_string();
        assert_eq!(
            message("bytes_per_sec=0"),
            "bytes_per_sec must be a positive number"
        );
        assert_eq!(message("bytes=1"), "/chaos/slow needs ?bytes_per_sec=N");
        assert_eq!(
            message("bytes_per_sec=1&bytes=x"),
            format!("bytes must be an integer of at most {MAX_BYTES}")
        );
        assert_eq!(
            count_param(Some("count=x"), "count", 1, 10)
                .unwrap_err()
                .to_string(),
            "count must be an integer of at most 10"
        );
    }

    #[test]
    fn count_parameters() {
        assert_eq!(count_param(None, "count", 5, 10), Ok(5));
        assert_eq!(count_param(Some("x=1&count=7"), "count", 1, 10), Ok(7));
        assert!(count_param(Some("count=11"), "count", 1, 10).is_err());
        assert!(count_param(Some("count=-1"), "count", 1, 10).is_err());
    }
}
