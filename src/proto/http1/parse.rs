//! Parsing of HTTP/1.1 response heads and chunked bodies, in place and without allocating.

use std::mem::MaybeUninit;

use crate::proto::ErrorKind;
use crate::proto::conn::MAX_HEADERS;
use crate::proto::pick::{PickNames, Picked};

/// The parts of a response head that decide how to read the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Head {
    pub(super) status: u16,
    pub(super) len: usize,
    pub(super) content_length: Option<u64>,
    pub(super) chunked: bool,
    pub(super) close: bool,
}

/// Room for [`MAX_HEADERS`] parsed header fields, left uninitialised: filling 128 empty fields
/// (4 KiB) before every parse was 460 of the 7 291 user-space instructions of a closed-model
/// request (callgrind, bench/README.md).
fn header_slots<'b>() -> [MaybeUninit<httparse::Header<'b>>; MAX_HEADERS] {
    [const { MaybeUninit::uninit() }; MAX_HEADERS]
}

/// Parses `bytes` as a response head into `response`, its fields in `slots`.
fn parse_into<'h, 'b>(
    response: &mut httparse::Response<'h, 'b>,
    bytes: &'b [u8],
    slots: &'h mut [MaybeUninit<httparse::Header<'b>>],
) -> httparse::Result<usize> {
    httparse::ParserConfig::default().parse_response_with_uninit_headers(response, bytes, slots)
}

/// Parses a response head; `Ok(None)` when more bytes are needed.
fn parse_head(bytes: &[u8]) -> Result<Option<Head>, ErrorKind> {
    let mut slots = header_slots();
    let mut response = httparse::Response::new(&mut []);
    let len = match parse_into(&mut response, bytes, &mut slots) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(ErrorKind::HeaderTooLarge),
        Err(_) => return Err(ErrorKind::InvalidResponse),
    };
    let status = response.code.ok_or(ErrorKind::InvalidResponse)?;
    let mut head = Head {
        status,
        len,
        content_length: None,
        chunked: false,
        close: response.version == Some(0),
    };
    for header in response.headers.iter() {
        let name = header.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let text = std::str::from_utf8(header.value).map_err(|_| ErrorKind::InvalidResponse)?;
            let value = text
                .trim()
                .parse::<u64>()
                .map_err(|_| ErrorKind::InvalidResponse)?;
            if head.content_length.is_some_and(|v| v != value) {
                return Err(ErrorKind::InvalidResponse);
            }
            head.content_length = Some(value);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            head.chunked = contains_token(header.value, b"chunked");
        } else if name.eq_ignore_ascii_case(b"connection") {
            if contains_token(header.value, b"close") {
                head.close = true;
            } else if contains_token(header.value, b"keep-alive") {
                head.close = false;
            }
        }
    }
    Ok(Some(head))
}

/// Longest response head a [`HeadCache`] keeps, bytes: far above a typical head (nginx's is
/// ~150), small beside a connection's read buffer.
const CACHED_HEAD_BYTES: usize = 512;

/// A connection's last parsed response head, bytes and result. A server answering one request
/// over and over sends the same head each time but for its `Date` once a second, and parsing it
/// was ~2 000 of the ~6 800 user-space instructions of a closed-model request (callgrind,
/// bench/README.md): comparing the bytes costs a few dozen.
#[derive(Debug, Default)]
pub(super) struct HeadCache {
    bytes: Vec<u8>,
    head: Option<Head>,
}

impl HeadCache {
    /// [`parse_head`], without parsing a head byte for byte equal to the last one: parsing stops
    /// at the head's end, so bytes that start with the same complete head give the same result.
    pub(super) fn parse(&mut self, bytes: &[u8]) -> Result<Option<Head>, ErrorKind> {
        if let Some(head) = self.head
            && bytes.starts_with(&self.bytes)
        {
            return Ok(Some(head));
        }
        let parsed = parse_head(bytes)?;
        if let Some(head) = parsed
            && head.len <= CACHED_HEAD_BYTES
        {
            self.bytes.clear();
            self.bytes.extend_from_slice(&bytes[..head.len]);
            self.head = Some(head);
        }
        Ok(parsed)
    }
}

/// Picks the header values `names` asks for from a complete response head (parsed again:
/// only connections that pick anything pay for it).
pub(super) fn pick_headers(head: &[u8], names: &PickNames, picked: &mut Picked) {
    // A cookie jar alone: most responses set no cookie, and a scan of the head's line starts
    // costs less than parsing it again.
    if names.names().is_empty() && !has_set_cookie(head) {
        return;
    }
    let mut slots = header_slots();
    let mut response = httparse::Response::new(&mut []);
    if let Ok(httparse::Status::Complete(_)) = parse_into(&mut response, head, &mut slots) {
        picked.pick_from(
            names,
            response
                .headers
                .iter()
                .map(|h| (h.name.as_bytes(), h.value)),
        );
    }
}

/// Whether a response head has a line that starts with `Set-Cookie:` (any case).
fn has_set_cookie(head: &[u8]) -> bool {
    const NAME: &[u8] = b"set-cookie:";
    head.split(|&b| b == b'\n')
        .any(|line| line.len() > NAME.len() && line[..NAME.len()].eq_ignore_ascii_case(NAME))
}

/// Whether a comma-separated header value contains `token` (ASCII case-insensitive).
fn contains_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|part| part.trim_ascii().eq_ignore_ascii_case(token))
}

/// How the body's end is known.
#[derive(Debug, Clone, Copy)]
pub(super) enum Framing {
    /// Exactly this many bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the server closes the connection.
    UntilClose,
}

/// Outcome of feeding bytes to the chunked decoder.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Feed {
    /// The body ended after `consumed` bytes of this slice.
    Done {
        /// Bytes of the slice that belonged to the body.
        consumed: usize,
    },
    /// All of the first `consumed` bytes were used; the rest (a partial line) must be fed again with
    /// more bytes after it.
    NeedMore {
        /// Bytes of the slice used.
        consumed: usize,
    },
}

/// Incremental decoder for `Transfer-Encoding: chunked` that only finds the body's end.
#[derive(Debug, Default)]
pub(super) struct ChunkedDecoder {
    state: ChunkState,
    /// Chunk data seen so far (the decoded body size), bytes.
    data: u64,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    /// Expecting a chunk-size line.
    #[default]
    Size,
    /// Inside chunk data with this many bytes left.
    Data(u64),
    /// Expecting the CRLF after chunk data.
    DataEnd,
    /// After the last chunk: expecting trailer lines up to an empty line.
    Trailer,
}

impl ChunkedDecoder {
    /// The decoded body size so far, bytes (chunk data only, counted when announced by a chunk
    /// size line: a body announcing more than a limit fails before it is sent).
    pub(super) fn data_bytes(&self) -> u64 {
        self.data
    }

    /// Feeds bytes; `on_data` sees each piece of chunk data (the decoded body) as it passes.
    pub(super) fn feed(
        &mut self,
        bytes: &[u8],
        mut on_data: impl FnMut(&[u8]),
    ) -> Result<Feed, ErrorKind> {
        let mut pos = 0usize;
        loop {
            let rest = &bytes[pos..];
            match self.state {
                ChunkState::Size => match httparse::parse_chunk_size(rest) {
                    Ok(httparse::Status::Complete((used, 0))) => {
                        pos += used;
                        self.state = ChunkState::Trailer;
                    }
                    Ok(httparse::Status::Complete((used, size))) => {
                        pos += used;
                        self.data = self.data.saturating_add(size);
                        self.state = ChunkState::Data(size);
                    }
                    Ok(httparse::Status::Partial) => return Ok(Feed::NeedMore { consumed: pos }),
                    Err(_) => return Err(ErrorKind::InvalidResponse),
                },
                ChunkState::Data(left) => {
                    let take = left.min(rest.len() as u64);
                    on_data(&rest[..take as usize]);
                    pos += take as usize;
                    if take == left {
                        self.state = ChunkState::DataEnd;
                    } else {
                        self.state = ChunkState::Data(left - take);
                        return Ok(Feed::NeedMore { consumed: pos });
                    }
                }
                ChunkState::DataEnd => {
                    if rest.len() < 2 {
                        return Ok(Feed::NeedMore { consumed: pos });
                    }
                    if &rest[..2] != b"\r\n" {
                        return Err(ErrorKind::InvalidResponse);
                    }
                    pos += 2;
                    self.state = ChunkState::Size;
                }
                ChunkState::Trailer => {
                    let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
                        return Ok(Feed::NeedMore { consumed: pos });
                    };
                    pos += eol + 2;
                    if eol == 0 {
                        return Ok(Feed::Done { consumed: pos });
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jar_alone_skips_heads_without_set_cookie() {
        let jar = PickNames::new(Vec::new()).with_cookies();
        let mut picked = Picked::default();
        let plain = b"HTTP/1.1 200 OK\r\nX-Set-Cookie: no\r\nContent-Length: 0\r\n\r\n";
        assert!(!has_set_cookie(plain));
        pick_headers(plain, &jar, &mut picked);
        assert_eq!(picked.set_cookies().count(), 0);
        let set = b"HTTP/1.1 200 OK\r\nSET-COOKIE: a=1\r\nset-cookie: b=2\r\n\r\n";
        assert!(has_set_cookie(set));
        pick_headers(set, &jar, &mut picked);
        assert_eq!(
            picked.set_cookies().collect::<Vec<_>>(),
            [&b"a=1"[..], b"b=2"]
        );
    }

    #[test]
    fn head_parsing() {
        let head =
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")
                .unwrap()
                .unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(head.content_length, Some(3));
        assert!(head.close);
        assert_eq!(head.len, 57);
        assert_eq!(parse_head(b"HTTP/1.1 200 OK\r\nConte").unwrap(), None);
        assert_eq!(
            parse_head(b"NOT-HTTP garbage\r\n\r\n"),
            Err(ErrorKind::InvalidResponse)
        );
        let head = parse_head(b"HTTP/1.0 200 OK\r\n\r\n").unwrap().unwrap();
        assert!(head.close, "HTTP/1.0 closes by default");
        assert_eq!(
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            Err(ErrorKind::InvalidResponse)
        );
    }

    #[test]
    fn a_remembered_head_gives_what_parsing_gives() {
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n";
        let with = |head: &[u8], rest: &[u8]| [head, rest].concat();
        let inputs: Vec<Vec<u8>> = vec![
            with(ok, b"abc"),
            with(ok, b"ab"),
            with(ok, b"HTTP/1.1 500"),
            ok[..20].to_vec(),
            with(b"HTTP/1.1 200 OK\r\nContent-Length: 30\r\n\r\n", b""),
            with(ok, b""),
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX: \x01\r\n\r\n".to_vec(),
            with(ok, b"abc"),
            b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".to_vec(),
            b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r".to_vec(),
            b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".to_vec(),
            format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n", "y".repeat(600)).into_bytes(),
            with(ok, b""),
        ];
        let mut cache = HeadCache::default();
        for bytes in &inputs {
            assert_eq!(
                cache.parse(bytes),
                parse_head(bytes),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
        assert_eq!(cache.bytes, ok, "the last head short enough is kept");
    }

    #[test]
    fn chunked_decoder_handles_split_input() {
        let body = b"5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        // Whole at once.
        let mut d = ChunkedDecoder::default();
        assert_eq!(
            d.feed(body, |_| {}).unwrap(),
            Feed::Done {
                consumed: body.len() - 4
            }
        );
        // Byte by byte, re-feeding what was not consumed, as the reader does.
        let mut d = ChunkedDecoder::default();
        let mut pending: Vec<u8> = Vec::new();
        let mut done = false;
        for &b in &body[..body.len() - 4] {
            pending.push(b);
            match d.feed(&pending, |_| {}).unwrap() {
                Feed::Done { consumed } => {
                    assert_eq!(consumed, pending.len());
                    done = true;
                }
                Feed::NeedMore { consumed } => {
                    pending.drain(..consumed);
                }
            }
        }
        assert!(done);
        let mut d = ChunkedDecoder::default();
        assert_eq!(d.feed(b"zz\r\n", |_| {}), Err(ErrorKind::InvalidResponse));
        let mut d = ChunkedDecoder::default();
        assert_eq!(d.feed(b"1\r\naXY", |_| {}), Err(ErrorKind::InvalidResponse));
    }
}
