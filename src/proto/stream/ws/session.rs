//! One WebSocket session after the `101`: the accept checked, then a reader and a writer on
//! the VU's task (`fastwebsockets`' read is not cancel-safe, so it is never raced against a
//! timer: the writer waits on its own), the close handshake, and the close code judged.
//! Nothing is allocated per message: the message is refilled into one buffer and masked there.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use atomic_refcell::AtomicRefCell;
use fastwebsockets::{Frame, OpCode, Payload, Role, WebSocketError, WebSocketRead, WebSocketWrite};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

use super::Tap;
use crate::proto::ErrorKind;
use crate::proto::message::{BodyTap, Io, NextMessage, NextSend};
use crate::timer::Deadline;

/// Most bytes of a control frame's payload (RFC 6455, 5.5).
const MAX_CONTROL: usize = 125;

/// What the reader asks the writer to send next, before any message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owed {
    Nothing,
    /// A pong, with the ping's payload (in [`Link::ping`]).
    Pong,
    /// The stream is done: close with 1000, then stop writing.
    Close,
    /// The server closed: answer its close (with its code, if it gave one) and stop.
    Answer(Option<u16>),
    /// The reader ended: stop.
    Stop,
}

/// What the reader and the writer share, on one task. The borrow flags are atomic (not
/// `RefCell`s) only so that the exchange's future stays `Send`: nothing is ever contended, and
/// no borrow is held across an await.
struct Link<'t, 's> {
    tap: AtomicRefCell<&'t mut Tap<'s>>,
    control: AtomicRefCell<Control>,
    wake: Notify,
}

/// What the reader owes the writer.
struct Control {
    owed: Owed,
    /// The last ping's payload and its length.
    ping: ([u8; MAX_CONTROL], usize),
    /// The writer sent its close.
    closed: bool,
}

impl Link<'_, '_> {
    fn owe(&self, owed: Owed) {
        let mut control = self.control.borrow_mut();
        // A close (or stop) supersedes a pong still owed.
        if control.owed == Owed::Nothing || owed != Owed::Pong {
            control.owed = owed;
        }
        drop(control);
        self.wake.notify_one();
    }

    /// What is owed now (then nothing).
    fn owed(&self) -> Owed {
        std::mem::replace(&mut self.control.borrow_mut().owed, Owed::Nothing)
    }
}

/// Runs the session of `tap`'s stream on `io`, whose `101` head is `head` (`early`: bytes read
/// after it); adds the bytes it reads to `received`.
pub(super) async fn run(
    tap: &mut Tap<'_>,
    io: &mut dyn Io,
    head: &[u8],
    early: &[u8],
    received: &mut u64,
) -> Result<(), ErrorKind> {
    if !accepts(head, &tap.spec.accept) {
        return Err(ErrorKind::InvalidResponse);
    }
    let counted = Counted {
        io,
        early,
        received,
    };
    let (r, w) = tokio::io::split(counted);
    let (mut rx, mut tx) = fastwebsockets::after_handshake_split(r, w, Role::Client);
    rx.set_auto_close(false);
    rx.set_auto_pong(false);
    let mut scratch = std::mem::take(&mut tap.state.scratch);
    let link = Link {
        tap: AtomicRefCell::new(tap),
        control: AtomicRefCell::new(Control {
            owed: Owed::Nothing,
            ping: ([0; MAX_CONTROL], 0),
            closed: false,
        }),
        wake: Notify::new(),
    };
    let result = tokio::try_join!(read(&mut rx, &link), write(&mut tx, &link, &mut scratch));
    let tap = link.tap.into_inner();
    tap.state.scratch = scratch;
    result?;
    tap.outcome()
}

/// Whether the `101` head carries the `Sec-WebSocket-Accept` that answers the key.
fn accepts(head: &[u8], accept: &str) -> bool {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    if response.parse(head).is_err() {
        return false;
    }
    response.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("sec-websocket-accept") && h.value == accept.as_bytes()
    })
}

/// Reads frames until the server's close (or the end of the connection after ours).
async fn read<R: AsyncRead + Unpin>(
    rx: &mut WebSocketRead<R>,
    link: &Link<'_, '_>,
) -> Result<(), ErrorKind> {
    let mut obligated = |_: Frame<'_>| async { Ok::<(), std::io::Error>(()) };
    loop {
        let frame = match rx.read_frame(&mut obligated).await {
            Ok(frame) => frame,
            Err(e) => {
                link.owe(Owed::Stop);
                let done = link.control.borrow().closed && link.tap.borrow().finished();
                return match e {
                    WebSocketError::UnexpectedEOF | WebSocketError::ConnectionClosed if done => {
                        Ok(())
                    }
                    e => Err(kind_of(e)),
                };
            }
        };
        let at = Instant::now();
        match frame.opcode {
            OpCode::Text | OpCode::Binary | OpCode::Continuation if frame.fin => {
                if link.tap.borrow_mut().received(at, &frame.payload) {
                    link.owe(Owed::Close);
                } else {
                    // An echo's next message is due now.
                    link.wake.notify_one();
                }
            }
            OpCode::Ping => {
                let n = frame.payload.len().min(MAX_CONTROL);
                {
                    let ping = &mut link.control.borrow_mut().ping;
                    ping.0[..n].copy_from_slice(&frame.payload[..n]);
                    ping.1 = n;
                }
                link.owe(Owed::Pong);
            }
            OpCode::Close => {
                let code = (frame.payload.len() >= 2)
                    .then(|| u16::from_be_bytes([frame.payload[0], frame.payload[1]]));
                // A server may end the stream before it is done: its code says whether
                // that is an error (`Tap::outcome`).
                link.tap.borrow_mut().state.close_code = code;
                link.owe(Owed::Answer(code));
                return Ok(());
            }
            _ => {}
        }
    }
}

/// Sends the messages as the tap paces them and what the reader owes, then the close.
async fn write<W: AsyncWrite + Unpin>(
    tx: &mut WebSocketWrite<W>,
    link: &Link<'_, '_>,
    scratch: &mut Vec<u8>,
) -> Result<(), ErrorKind> {
    // Paced sends keep their schedule to a fraction of a millisecond (tokio's timer wakes up
    // to 1 ms late): one timerfd for the session, armed when the due time moves.
    let mut timer = Deadline::default();
    let (opcode, message) = {
        let tap = link.tap.borrow();
        let op = if tap.spec.binary {
            OpCode::Binary
        } else {
            OpCode::Text
        };
        (op, tap.spec.message.clone())
    };
    loop {
        match link.owed() {
            Owed::Nothing => {}
            Owed::Pong => {
                let (mut ping, n) = link.control.borrow().ping;
                send(tx, link, OpCode::Pong, &mut ping[..n], false).await?;
                continue;
            }
            Owed::Close => return close(tx, link, Some(1000)).await,
            Owed::Answer(code) => return close(tx, link, code).await,
            Owed::Stop => return Ok(()),
        }
        let now = Instant::now();
        let next = link.tap.borrow_mut().next(now);
        match next {
            NextSend::Now => {
                scratch.clear();
                // The tap's borrow ends before any await (the reader borrows it too).
                let next = link.tap.borrow_mut().message();
                match next {
                    NextMessage::Request => scratch.extend_from_slice(&message),
                    NextMessage::Rendered(m) => scratch.extend_from_slice(&m),
                    // Nothing more to send: the engine fails the attempt (`message_template`).
                    NextMessage::Failed => return close(tx, link, Some(1000)).await,
                }
                send(tx, link, opcode, scratch, true).await?;
            }
            NextSend::At(due) => {
                tokio::select! {
                    () = timer.until(due) => {}
                    () = link.wake.notified() => {}
                }
            }
            NextSend::Done if link.tap.borrow().finished() => {
                return close(tx, link, Some(1000)).await;
            }
            NextSend::AfterReply | NextSend::Done => link.wake.notified().await,
        }
    }
}

/// Sends the close frame (with `code`, if any) and stops writing.
async fn close<W: AsyncWrite + Unpin>(
    tx: &mut WebSocketWrite<W>,
    link: &Link<'_, '_>,
    code: Option<u16>,
) -> Result<(), ErrorKind> {
    let mut payload = code.unwrap_or(1000).to_be_bytes();
    let n = if code.is_some() { 2 } else { 0 };
    send(tx, link, OpCode::Close, &mut payload[..n], false).await?;
    link.control.borrow_mut().closed = true;
    Ok(())
}

/// Writes one frame of `payload` (masked in place) and flushes it (TLS buffers what it
/// encrypts); counts its bytes on the wire, and the message when it is one.
async fn send<W: AsyncWrite + Unpin>(
    tx: &mut WebSocketWrite<W>,
    link: &Link<'_, '_>,
    opcode: OpCode,
    payload: &mut [u8],
    message: bool,
) -> Result<(), ErrorKind> {
    let wire = frame_bytes(payload.len());
    let frame = Frame::new(true, opcode, None, Payload::BorrowedMut(payload));
    tx.write_frame(frame).await.map_err(kind_of)?;
    tx.flush().await.map_err(kind_of)?;
    link.tap.borrow_mut().wrote(Instant::now(), wire, message);
    Ok(())
}

/// Bytes on the wire of a client frame carrying `len` payload bytes: the header, its
/// extended length, the mask key and the payload.
fn frame_bytes(len: usize) -> u64 {
    let extended = match len {
        0..=125 => 0,
        126..=65535 => 2,
        _ => 8,
    };
    (2 + extended + 4 + len) as u64
}

/// The error kind of a failed read or write.
fn kind_of(e: WebSocketError) -> ErrorKind {
    match e {
        WebSocketError::IoError(e) => ErrorKind::from_io(&e),
        WebSocketError::UnexpectedEOF | WebSocketError::ConnectionClosed => {
            ErrorKind::WebSocketClose
        }
        _ => ErrorKind::Protocol,
    }
}

/// The connection under the session: first the bytes read after the `101` head, then the
/// socket, every byte read counted.
struct Counted<'a> {
    io: &'a mut dyn Io,
    early: &'a [u8],
    received: &'a mut u64,
}

impl AsyncRead for Counted<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if !self.early.is_empty() {
            // Already counted by the connection that read them.
            let n = self.early.len().min(buf.remaining());
            buf.put_slice(&self.early[..n]);
            self.early = &self.early[n..];
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut *self.io).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            *self.received += (buf.filled().len() - before) as u64;
        }
        polled
    }
}

impl AsyncWrite for Counted<'_> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut *self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut *self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.io).poll_shutdown(cx)
    }
}
