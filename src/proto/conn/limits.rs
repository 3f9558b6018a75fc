//! How large a response may be before the client gives up on it — over HTTP/1.1 and HTTP/2
//! alike.
//!
//! Why these defaults:
//!
//! - **Head: 64 KiB, and at most [`MAX_HEADERS`] header fields.** The head is the one part that
//!   must be buffered whole (it is parsed in place), so its size sets each connection's read
//!   buffer. 64 KiB is well above what real services send (nginx's default buffer for a
//!   request head is 1 KiB, with 8 KiB for large ones) and bounds memory to 64 KiB per
//!   connection however hostile the server. hyper's client stops at 100 header fields; 128 here.
//! - **Body: no limit.** A body is counted and discarded as it arrives, through the connection's
//!   read buffer: a 10 GB body costs no more memory than a 10 byte one, and the request timeout
//!   bounds how long it may take. Bodies kept for checks and extraction are capped apart
//!   ([`super::MAX_CAPTURE_BYTES`]). A limit is there for those who want a large response to
//!   count as a failure ([`ErrorKind::BodyTooLarge`](crate::proto::ErrorKind::BodyTooLarge)).

/// Most header fields a response may carry before it counts as
/// [`ErrorKind::HeaderTooLarge`](crate::proto::ErrorKind::HeaderTooLarge).
pub const MAX_HEADERS: usize = 128;
/// Default largest response head (status line and header fields), bytes: 64 KiB.
pub const DEFAULT_MAX_HEAD_BYTES: usize = 64 * 1024;
/// Smallest head limit accepted, bytes (1 KiB): below it ordinary responses would fail.
pub const MIN_HEAD_LIMIT_BYTES: u64 = 1024;
/// Largest head limit accepted, bytes (16 MiB): each connection may buffer this much.
pub const MAX_HEAD_LIMIT_BYTES: u64 = 16 * 1024 * 1024;

/// Limits on one response; exceeding one fails the request and, over HTTP/1.1, drops the
/// connection (over HTTP/2 only the stream is reset).
///
/// Over HTTP/2 the head limit is also announced to the server (`SETTINGS_MAX_HEADER_LIST_SIZE`)
/// and enforced by the `h2` crate while decoding, so an oversized head is never held whole. h2
/// counts 32 bytes more per field than the decoded names and values, and reports a head it
/// refused as a protocol error (stream reset), or, for a head spread over more CONTINUATION
/// frames than the limit needs, ends the connection: those count as `protocol`, not
/// `header_too_large` — h2 does not say why it refused. Heads it lets through are checked here
/// against the same byte and field limits as HTTP/1.1 heads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest response head (status line and header fields), bytes; see [`MAX_HEADERS`] too.
    pub max_head_bytes: usize,
    /// Largest response body, bytes (decoded size for chunked bodies); `None`: no limit.
    pub max_body_bytes: Option<u64>,
}

impl Default for Limits {
    /// A 64 KiB head, a body of any size.
    fn default() -> Self {
        Self {
            max_head_bytes: DEFAULT_MAX_HEAD_BYTES,
            max_body_bytes: None,
        }
    }
}

impl Limits {
    /// Checks a head limit given by a user: within
    /// [`MIN_HEAD_LIMIT_BYTES`]..=[`MAX_HEAD_LIMIT_BYTES`]. The error says why, for a message
    /// that names the flag or key.
    pub fn check_head(bytes: u64) -> Result<usize, SizeError> {
        if (MIN_HEAD_LIMIT_BYTES..=MAX_HEAD_LIMIT_BYTES).contains(&bytes) {
            Ok(bytes as usize)
        } else {
            Err(SizeError::HeadLimit(bytes))
        }
    }

    /// Checks a body limit given by a user: at least 1 byte.
    pub fn check_body(bytes: u64) -> Result<u64, SizeError> {
        if bytes == 0 {
            Err(SizeError::NoBody)
        } else {
            Ok(bytes)
        }
    }

    /// The body limit as a number to compare with (`u64::MAX` for none).
    pub(crate) fn body_cap(&self) -> u64 {
        self.max_body_bytes.unwrap_or(u64::MAX)
    }
}

/// A size or size limit a user gave that cannot be used; the message completes a sentence that
/// names the flag or key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// A head limit outside [`MIN_HEAD_LIMIT_BYTES`]..=[`MAX_HEAD_LIMIT_BYTES`], bytes.
    #[error("must be between 1KiB and 16MiB (each connection may buffer that much), not {0} bytes")]
    HeadLimit(u64),
    /// A body limit of 0 bytes.
    #[error("must be at least 1 byte (leave it out for no limit)")]
    NoBody,
    /// Text that is not a size.
    #[error("`{0}` is not a size like 65536, 64KiB or 10MB")]
    NotASize(String),
    /// A size beyond `u64` bytes.
    #[error("`{0}` is too large")]
    TooLarge(String),
}

/// Parses a size: bytes (`65536`), or a number with a unit: `KiB`, `MiB`, `GiB` (or `K`, `M`,
/// `G`: powers of 1024) or `kB`, `MB`, `GB` (powers of 1000), case-insensitive, e.g. `64KiB`,
/// `10MB`, `1.5MiB`.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        _ => return Err(SizeError::NotASize(text.to_owned())),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| SizeError::NotASize(text.to_owned()))?;
    let bytes = value * factor as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(SizeError::TooLarge(text.to_owned()));
    }
    Ok(bytes.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("64KiB"), Ok(65536));
        assert_eq!(parse_size("64k"), Ok(65536));
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size(" 1.5 MiB "), Ok(1_572_864));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("7b"), Ok(7));
        assert!(parse_size("").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("ten MB").is_err());
        assert!(parse_size("5 parsecs").is_err());
        assert!(parse_size("1e30GiB").is_err());
    }

    #[test]
    fn limits_are_validated() {
        assert_eq!(Limits::check_head(8192), Ok(8192));
        assert_eq!(Limits::check_head(1024), Ok(1024));
        assert!(
            Limits::check_head(1023)
                .unwrap_err()
                .to_string()
                .contains("1KiB")
        );
        assert!(
            Limits::check_head(1 << 30)
                .unwrap_err()
                .to_string()
                .contains("16MiB")
        );
        assert_eq!(Limits::check_body(1), Ok(1));
        assert!(
            Limits::check_body(0)
                .unwrap_err()
                .to_string()
                .contains("at least 1 byte")
        );
        assert_eq!(Limits::default().body_cap(), u64::MAX);
    }
}
