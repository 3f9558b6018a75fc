//! The `text/event-stream` parser: incremental as the body arrives, as the
//! WHATWG HTML standard's "event stream interpretation" says: lines end in CRLF, LF or CR (a CR
//! and its LF may arrive in different reads); a line starting with `:` is a comment; `data:`
//! lines are joined with `\n`; `event`, `id` and `retry` are kept; an empty line dispatches the
//! event (none when it has no `data`); a leading byte-order mark is skipped.
//!
//! Why not a crate: `eventsource-stream` and `sse-stream` yield an owned `String` per event and
//! run over a `futures::Stream`; here the parser is fed the connection's own read buffer and
//! hands each event out as slices of buffers reused for the whole run (nothing is allocated per
//! event once they have grown to the longest event), which the hot path needs at tens of
//! thousands of events a second.

use crate::proto::message::Tapped;

/// One dispatched event, borrowed from the parser's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event<'a> {
    /// Its `event:` type (empty: the default, `message`).
    pub event: &'a [u8],
    /// Its `data:` lines joined with `\n`.
    pub data: &'a [u8],
    /// The last event id seen on the stream (`id:`), empty when none.
    pub id: &'a [u8],
}

/// The incremental parser of one stream at a time; [`reset`](Self::reset) before the next.
#[derive(Debug, Default)]
pub struct Parser {
    /// A line not yet ended, carried to the next feed.
    line: Vec<u8>,
    /// The event's data so far (each line followed by `\n`).
    data: Vec<u8>,
    /// The event's type.
    event: Vec<u8>,
    /// The last event id.
    id: Vec<u8>,
    /// The last `retry:` (reconnection time), ms.
    retry_ms: Option<u64>,
    /// The last feed ended in a CR: a leading LF of the next one ends nothing.
    after_cr: bool,
    /// Bytes of the byte-order mark seen at the stream's start; 3 once past it (or it is not
    /// there).
    bom: u8,
    /// Comment lines seen.
    comments: u64,
}

impl Parser {
    /// Forgets the stream: ready for the next one (buffers kept).
    pub fn reset(&mut self) {
        self.line.clear();
        self.data.clear();
        self.event.clear();
        self.id.clear();
        self.retry_ms = None;
        self.after_cr = false;
        self.bom = 0;
        self.comments = 0;
    }

    /// The last `retry:` the stream sent, ms.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Comment lines (`:` …, often keep-alives) the stream sent.
    pub fn comments(&self) -> u64 {
        self.comments
    }

    /// Parses `bytes`, calling `on_event` for each event they complete; stops early (and
    /// returns [`Tapped::Stop`]) when it does.
    pub fn feed(
        &mut self,
        mut bytes: &[u8],
        mut on_event: impl FnMut(Event<'_>) -> Tapped,
    ) -> Tapped {
        if self.bom < 3 {
            bytes = self.skip_bom(bytes);
        }
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        while let Some(end) = memchr::memchr2(b'\n', b'\r', bytes) {
            let tail;
            if self.line.is_empty() {
                tail = self.field(&bytes[..end], &mut on_event);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&bytes[..end]);
                tail = self.field(&line, &mut on_event);
                line.clear();
                self.line = line;
            }
            let mut next = end + 1;
            if bytes[end] == b'\r' {
                match bytes.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            bytes = &bytes[next..];
            if tail == Tapped::Stop {
                return Tapped::Stop;
            }
        }
        self.line.extend_from_slice(bytes);
        Tapped::More
    }

    /// Skips a UTF-8 byte-order mark at the start of the stream, even split across reads (a
    /// partial one followed by other bytes is dropped: it was not UTF-8 text anyway).
    fn skip_bom<'b>(&mut self, bytes: &'b [u8]) -> &'b [u8] {
        const BOM: &[u8; 3] = b"\xEF\xBB\xBF";
        let mut i = 0;
        while self.bom < 3 && i < bytes.len() {
            if bytes[i] != BOM[usize::from(self.bom)] {
                self.bom = 3;
                break;
            }
            self.bom += 1;
            i += 1;
        }
        &bytes[i..]
    }

    /// Interprets one complete line.
    fn field(&mut self, line: &[u8], on_event: &mut impl FnMut(Event<'_>) -> Tapped) -> Tapped {
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        if line[0] == b':' {
            self.comments += 1;
            return Tapped::More;
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            b"id" if !value.contains(&0) => {
                self.id.clear();
                self.id.extend_from_slice(value);
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry_ms = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
        Tapped::More
    }

    /// An empty line: hands out the event, if it has data, and starts the next.
    fn dispatch(&mut self, on_event: &mut impl FnMut(Event<'_>) -> Tapped) -> Tapped {
        if self.data.is_empty() {
            self.event.clear();
            return Tapped::More;
        }
        let data = &self.data[..self.data.len() - 1];
        let tapped = on_event(Event {
            event: &self.event,
            data,
            id: &self.id,
        });
        self.data.clear();
        self.event.clear();
        tapped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event of `chunks` fed in turn, as (type, data, id) strings.
    fn events(chunks: &[&[u8]]) -> Vec<(String, String, String)> {
        let mut parser = Parser::default();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, |e| {
                let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                out.push((s(e.event), s(e.data), s(e.id)));
                Tapped::More
            });
        }
        out
    }

    fn one(data: &str) -> (String, String, String) {
        (String::new(), data.into(), String::new())
    }

    #[test]
    fn events_end_at_an_empty_line_whatever_the_line_ending() {
        let stream = b"data: a\n\ndata: b\r\n\r\ndata: c\r\rdata:d\n\n";
        let want = vec![one("a"), one("b"), one("c"), one("d")];
        assert_eq!(events(&[stream]), want);
        // Split at every byte: the same events.
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(events(&bytes), want);
    }

    #[test]
    fn data_lines_join_and_fields_are_kept() {
        let stream =
            b"\xEF\xBB\xBF: keep-alive\nevent: delta\nid: 7\nretry: 1500\ndata: one\ndata:two\n\n";
        let mut parser = Parser::default();
        let mut seen = None;
        parser.feed(stream, |e| {
            seen = Some((e.event.to_vec(), e.data.to_vec(), e.id.to_vec()));
            Tapped::More
        });
        let (event, data, id) = seen.unwrap();
        assert_eq!(
            (&event[..], &data[..], &id[..]),
            (&b"delta"[..], &b"one\ntwo"[..], &b"7"[..])
        );
        assert_eq!(parser.retry_ms(), Some(1500));
        assert_eq!(parser.comments(), 1);
    }

    #[test]
    fn an_event_without_data_is_not_dispatched_and_a_partial_one_waits() {
        assert!(events(&[b"event: x\n\n"]).is_empty());
        assert!(events(&[b"data: unfinished\n"]).is_empty());
        let byte_by_byte: Vec<&[u8]> = b"\xEF\xBB\xBFdata: x\n\n".chunks(1).collect();
        assert_eq!(events(&byte_by_byte), vec![one("x")]);
    }

    #[test]
    fn the_callback_can_stop_the_stream() {
        let mut parser = Parser::default();
        let mut n = 0;
        let tapped = parser.feed(b"data: 1\n\ndata: [DONE]\n\ndata: 3\n\n", |e| {
            n += 1;
            if e.data == b"[DONE]" {
                Tapped::Stop
            } else {
                Tapped::More
            }
        });
        assert_eq!((tapped, n), (Tapped::Stop, 2));
    }
}
