//! The request side of a duplex stream (gRPC client and bidirectional streaming): the request's
//! one message sent as the stream's [`BodyTap`] says, while its response is read.

use std::time::Instant;

use bytes::Bytes;
use h2::{RecvStream, SendStream};

use crate::proto::conn::Failure;
use crate::proto::message::{BodyTap, NextMessage, NextSend};
use crate::timer::Deadline;

/// A duplex stream's request side.
pub(super) struct Sending {
    out: SendStream<Bytes>,
    /// The message, framed; each send shares it.
    message: Bytes,
    /// When the next message is due, when one is timed.
    due: Option<Instant>,
    /// The request side is closed (its last message sent).
    closed: bool,
    /// The timer of timed sends (sub-millisecond, re-armed only when the due time moves).
    timer: Deadline,
}

impl Sending {
    /// The request side of a stream whose head has been sent, open.
    pub(super) fn new(out: SendStream<Bytes>, message: Bytes) -> Self {
        Self {
            out,
            message,
            due: None,
            closed: false,
            timer: Deadline::default(),
        }
    }

    /// Sends every message `tap` says is due now (closing the side after the last) and
    /// remembers when the next is due.
    ///
    /// A send the stream refuses ends the request side without failing the call: a server may
    /// answer and reset (`NO_ERROR`) before the client is done sending, and then its status,
    /// read on, decides the call.
    pub(super) fn pump(&mut self, tap: &mut dyn BodyTap) {
        self.due = None;
        while !self.closed {
            match tap.next_send(Instant::now()) {
                NextSend::Now => {
                    let message = match tap.message() {
                        NextMessage::Request => self.message.clone(),
                        NextMessage::Rendered(m) => m,
                        // Nothing more to send: the engine fails the attempt
                        // (`message_template`).
                        NextMessage::Failed => {
                            let _ = self.out.send_data(Bytes::new(), true);
                            self.closed = true;
                            return;
                        }
                    };
                    // Beyond the peer's window h2 buffers it and sends it as the window opens.
                    if self.out.send_data(message, false).is_err() {
                        self.closed = true;
                        return;
                    }
                    tap.sent(Instant::now());
                }
                NextSend::Done => {
                    let _ = self.out.send_data(Bytes::new(), true);
                    self.closed = true;
                }
                NextSend::At(at) => {
                    self.due = Some(at);
                    return;
                }
                NextSend::AfterReply => return,
            }
        }
    }

    /// Resolves when the next timed message is due; never when none is.
    pub(super) async fn due(&mut self) {
        let Some(at) = self.due else {
            return std::future::pending().await;
        };
        self.timer.until(at).await;
    }
}

/// Waits for the response head of a duplex stream, sending its messages as they fall due.
pub(super) async fn head_while_sending(
    response: h2::client::ResponseFuture,
    sending: &mut Sending,
    tap: &mut dyn BodyTap,
) -> Result<http::Response<RecvStream>, Failure> {
    let mut response = std::pin::pin!(response);
    loop {
        sending.pump(tap);
        tokio::select! {
            biased;
            r = &mut response => return Ok(r?),
            () = sending.due() => {}
        }
    }
}
