//! Header names, methods and `Name: value` lines: what may go into a request head (RFC 9110
//! tokens, no line breaks), checked the same way for flags and plan files.

use crate::error::Error;
use crate::redact::Secrets;

/// RFC 9110 token characters (header names, methods).
pub(crate) fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Whether `name` is a valid header name (a non-empty token).
pub(crate) fn is_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(is_token_byte)
}

/// Parses `Name: value` into a header pair, rejecting what would corrupt the request. Errors
/// show the line with a secret header's value redacted.
pub fn parse_header(line: &str, secrets: &Secrets) -> Result<(String, String), Error> {
    let invalid = |why: &str| Error::Invalid {
        what: "header (-H)".into(),
        why: format!("`{}`: {why}", secrets.header_line(line)),
    };
    let (name, value) = line
        .split_once(':')
        .ok_or_else(|| invalid("expected `Name: value`"))?;
    let name = name.trim();
    let value = value.trim();
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        return Err(invalid(
            "the header name is empty or has invalid characters",
        ));
    }
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(invalid("the value contains a line break or NUL"));
    }
    Ok((name.to_string(), value.to_string()))
}
