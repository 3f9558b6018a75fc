//! Reading a response body by its framing (length, chunked, until close): counted and discarded
//! through the connection's buffer, kept only where a capture asks for it.

use std::time::Instant;

use tokio::io::AsyncRead;

use super::parse::{ChunkedDecoder, Feed, Framing};
use super::{BODY_BUF_BYTES, READ_BUF_BYTES, read_some};
use crate::proto::ErrorKind;
use crate::proto::conn::{MAX_CAPTURE_BYTES, MAX_HEADERS};
use crate::proto::message::{BodyTap, Capture, Captured, Tapped};

/// What a capturing exchange keeps while reading.
pub(super) struct Capturing {
    captured: Captured,
    body: Vec<u8>,
    limit: usize,
}

impl Capturing {
    pub(super) fn new(capture: Capture, head: &[u8]) -> Self {
        let mut captured = Captured::default();
        if capture.headers {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut response = httparse::Response::new(&mut headers);
            if response.parse(head).is_ok() {
                for h in response.headers.iter() {
                    if let (Ok(name), Ok(value)) = (
                        http::HeaderName::from_bytes(h.name.as_bytes()),
                        http::HeaderValue::from_bytes(h.value),
                    ) {
                        captured.headers.append(name, value);
                    }
                }
            }
        }
        Self {
            captured,
            body: Vec::new(),
            limit: capture.body_limit,
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        if self.limit == 0 {
            return;
        }
        let room = self.limit - self.body.len();
        if bytes.len() > room {
            self.captured.truncated = true;
        }
        self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    pub(super) fn finish(mut self) -> Box<Captured> {
        self.captured.body = self.body.into();
        Box::new(self.captured)
    }
}

/// Hands body bytes read at `at` to the tap, if any; says whether it wants more.
fn tap(tap: &mut Option<&mut dyn BodyTap>, bytes: &[u8], at: Option<Instant>) -> Tapped {
    match (tap.as_deref_mut(), at) {
        (Some(tap), Some(at)) if !bytes.is_empty() => tap.data(bytes, at),
        _ => Tapped::More,
    }
}

/// Hands body bytes to whichever captures are on.
fn keep(kept: &mut Option<&mut Capturing>, raw: &mut Option<&mut Vec<u8>>, bytes: &[u8]) {
    if let Some(kept) = kept.as_deref_mut() {
        kept.keep(bytes);
    }
    if let Some(out) = raw.as_deref_mut() {
        let room = MAX_CAPTURE_BYTES.saturating_sub(out.len());
        out.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// The body reader's borrowed state.
pub(super) struct Body<'a, S> {
    pub stream: &'a mut S,
    /// The connection's read buffer; grows up to [`BODY_BUF_BYTES`] while `full`.
    pub buf: &'a mut Vec<u8>,
    /// The last read filled the buffer: the next one gets a bigger buffer.
    pub full: bool,
    pub received: &'a mut u64,
    pub kept: Option<&'a mut Capturing>,
    /// The engine's raw capture: body bytes up to [`MAX_CAPTURE_BYTES`].
    pub raw: Option<&'a mut Vec<u8>>,
    /// Largest body accepted, bytes ([`Limits::max_body_bytes`], `u64::MAX` for none).
    pub max: u64,
    /// A streaming step's parser, handed each read's body bytes as they arrive.
    pub tap: Option<&'a mut dyn BodyTap>,
    /// When the bytes in the buffer were read (the head's last read, then each body read);
    /// taken only when there is a tap.
    pub at: Option<Instant>,
}

impl<S: AsyncRead + Unpin> Body<'_, S> {
    /// Reads the body, keeping it only when capturing and handing it to the tap, if any.
    /// `buf[start..filled]` holds body bytes already read. Returns true when the connection
    /// cannot be reused: bytes beyond the body were received, or the tap stopped the read early.
    pub(super) async fn read(
        &mut self,
        start: usize,
        filled: usize,
        framing: Framing,
    ) -> Result<bool, ErrorKind> {
        match framing {
            // Announced too large: fail before reading any of it.
            Framing::Length(len) if len > self.max => Err(ErrorKind::BodyTooLarge),
            Framing::Length(len) => {
                let buffered = (filled - start) as u64;
                let end = start + buffered.min(len) as usize;
                keep(&mut self.kept, &mut self.raw, &self.buf[start..end]);
                if tap(&mut self.tap, &self.buf[start..end], self.at) == Tapped::Stop {
                    return Ok(buffered < len);
                }
                if buffered >= len {
                    return Ok(buffered > len);
                }
                let mut remaining = len - buffered;
                while remaining > 0 {
                    let n = self.read_more(0).await?;
                    if n == 0 {
                        return Err(ErrorKind::Closed);
                    }
                    let data = &self.buf[..n.min(remaining as usize)];
                    keep(&mut self.kept, &mut self.raw, data);
                    let tapped = tap(&mut self.tap, data, self.at);
                    if n as u64 > remaining {
                        return Ok(true);
                    }
                    remaining -= n as u64;
                    if tapped == Tapped::Stop {
                        return Ok(remaining > 0);
                    }
                }
                Ok(false)
            }
            Framing::UntilClose => {
                let mut total = (filled - start) as u64;
                keep(&mut self.kept, &mut self.raw, &self.buf[start..filled]);
                if tap(&mut self.tap, &self.buf[start..filled], self.at) == Tapped::Stop {
                    return Ok(true);
                }
                loop {
                    if total > self.max {
                        return Err(ErrorKind::BodyTooLarge);
                    }
                    let n = self.read_more(0).await?;
                    if n == 0 {
                        return Ok(false);
                    }
                    total += n as u64;
                    keep(&mut self.kept, &mut self.raw, &self.buf[..n]);
                    if tap(&mut self.tap, &self.buf[..n], self.at) == Tapped::Stop {
                        return Ok(true);
                    }
                }
            }
            Framing::Chunked => self.read_chunked(start, filled).await,
        }
    }

    /// Reads a chunked body; `buf[start..filled]` holds bytes already read. Returns true when
    /// the connection cannot be reused (bytes beyond the body, or the tap stopped early).
    async fn read_chunked(&mut self, start: usize, filled: usize) -> Result<bool, ErrorKind> {
        let mut decoder = ChunkedDecoder::default();
        let mut pending = start..filled;
        loop {
            let fed = if self.kept.is_none() && self.raw.is_none() && self.tap.is_none() {
                decoder.feed(&self.buf[pending.clone()], |_| {})?
            } else {
                let (kept, raw, at) = (&mut self.kept, &mut self.raw, self.at);
                let (taps, mut stop) = (&mut self.tap, false);
                let fed = decoder.feed(&self.buf[pending.clone()], |data| {
                    keep(kept, raw, data);
                    stop |= !stop && tap(taps, data, at) == Tapped::Stop;
                })?;
                if stop {
                    return Ok(true);
                }
                fed
            };
            if decoder.data_bytes() > self.max {
                return Err(ErrorKind::BodyTooLarge);
            }
            match fed {
                Feed::Done { consumed } => return Ok(consumed < pending.len()),
                Feed::NeedMore { consumed } => {
                    // Keep an unconsumed partial size line at the front of the buffer.
                    let keep = pending.start + consumed..pending.end;
                    let kept = keep.len();
                    self.buf.copy_within(keep, 0);
                    if kept == self.buf.len() && kept >= BODY_BUF_BYTES {
                        return Err(ErrorKind::InvalidResponse);
                    }
                    let n = self.read_more(kept).await?;
                    if n == 0 {
                        return Err(ErrorKind::Closed);
                    }
                    pending = 0..kept + n;
                }
            }
        }
    }

    /// Reads into `buf[at..]`, counting the bytes; first doubles the buffer (up to
    /// [`BODY_BUF_BYTES`]) when the last read filled it or no room is left.
    async fn read_more(&mut self, at: usize) -> Result<usize, ErrorKind> {
        if (self.full || at == self.buf.len()) && self.buf.len() < BODY_BUF_BYTES {
            let len = (self.buf.len() * 2).clamp(READ_BUF_BYTES, BODY_BUF_BYTES);
            self.buf.resize(len, 0);
        }
        let n = read_some(self.stream, &mut self.buf[at..]).await?;
        if self.tap.is_some() {
            self.at = Some(Instant::now());
        }
        self.full = n == self.buf.len() - at;
        *self.received += n as u64;
        Ok(n)
    }
}
