//! Reading `/chaos/` requests: the head (parsed with `httparse`) and a body to skip.

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// Largest accepted request head, in bytes.
const MAX_HEAD: usize = 16 * 1024;

/// The parts of a request head the chaos handler needs.
#[derive(Debug)]
pub(super) struct Head {
    pub(super) path: String,
    pub(super) query: Option<String>,
    pub(super) keep_alive: bool,
    pub(super) content_length: u64,
    pub(super) chunked: bool,
}

/// Why no request head could be read.
#[derive(Debug)]
pub(super) enum HeadError {
    /// Not HTTP/1, or too large: answer 400 and close.
    Invalid,
    /// The connection failed or closed mid-request: just drop it.
    Io,
}

/// Reads and parses the next request head from `stream`, leaving any bytes
/// after it in `buf`. `Ok(None)`: the client closed between requests.
pub(super) async fn read_head(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> Result<Option<Head>, HeadError> {
    loop {
        if !buf.is_empty() {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut req = httparse::Request::new(&mut headers);
            match req.parse(buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let head = head_of(&req)?;
                    buf.drain(..len);
                    return Ok(Some(head));
                }
                Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => {}
                Ok(httparse::Status::Partial) | Err(_) => return Err(HeadError::Invalid),
            }
        }
        buf.reserve(4096);
        match stream.read_buf(buf).await {
            Ok(0) if buf.is_empty() => return Ok(None),
            Ok(0) | Err(_) => return Err(HeadError::Io),
            Ok(_) => {}
        }
    }
}

fn head_of(req: &httparse::Request<'_, '_>) -> Result<Head, HeadError> {
    let target = req.path.ok_or(HeadError::Invalid)?;
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query.to_owned())),
        None => (target, None),
    };
    let mut keep_alive = req.version == Some(1);
    let mut content_length = 0;
    let mut chunked = false;
    for header in req.headers.iter() {
        let value = std::str::from_utf8(header.value).map_err(|_| HeadError::Invalid)?;
        if header.name.eq_ignore_ascii_case("connection") {
            for token in value.split(',').map(str::trim) {
                if token.eq_ignore_ascii_case("close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case("keep-alive") {
                    keep_alive = true;
                }
            }
        } else if header.name.eq_ignore_ascii_case("content-length") {
            content_length = value.trim().parse().map_err(|_| HeadError::Invalid)?;
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = true;
        }
    }
    Ok(Head {
        path: path.to_owned(),
        query,
        keep_alive,
        content_length,
        chunked,
    })
}

/// Skips a `len`-byte request body (part of which may already be in `buf`).
pub(super) async fn discard_body(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    len: u64,
) -> std::io::Result<()> {
    let buffered = buf.len().min(usize::try_from(len).unwrap_or(usize::MAX));
    buf.drain(..buffered);
    let rest = len - buffered as u64;
    if rest > 0 {
        let copied =
            tokio::io::copy(&mut (&mut *stream).take(rest), &mut tokio::io::sink()).await?;
        if copied < rest {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_heads() {
        let mut headers = [httparse::EMPTY_HEADER; 8];
        let mut req = httparse::Request::new(&mut headers);
        req.parse(b"POST /chaos/slow?bytes_per_sec=5 HTTP/1.1\r\nConnection: close\r\nContent-Length: 3\r\n\r\n")
            .unwrap();
        let head = head_of(&req).unwrap();
        assert_eq!(head.path, "/chaos/slow");
        assert_eq!(head.query.as_deref(), Some("bytes_per_sec=5"));
        assert!(!head.keep_alive);
        assert_eq!(head.content_length, 3);

        let mut headers = [httparse::EMPTY_HEADER; 8];
        let mut req = httparse::Request::new(&mut headers);
        req.parse(b"GET /chaos/hang HTTP/1.0\r\n\r\n").unwrap();
        assert!(!head_of(&req).unwrap().keep_alive);
    }
}
