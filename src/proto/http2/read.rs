//! Reading an HTTP/2 response body: counted against its cap, kept as asked, handed to a
//! streaming step's tap, with a duplex stream's messages sent as they fall due.

use std::future::poll_fn;
use std::time::Instant;

use h2::RecvStream;
use http::HeaderMap;

use super::duplex::Sending;
use crate::proto::ErrorKind;
use crate::proto::conn::Failure;
use crate::proto::message::{BodyTap, Tapped};

/// What a capturing exchange keeps while reading.
pub(super) struct Capturing {
    pub(super) headers: HeaderMap,
    pub(super) body: Vec<u8>,
    pub(super) limit: usize,
    pub(super) truncated: bool,
}

/// What a body is read for: its cap, what is kept of it, the tap, and a duplex stream's
/// request side.
pub(super) struct Reading<'a, 't> {
    /// Fail beyond this many bytes.
    pub(super) max: u64,
    pub(super) kept: Option<&'a mut Capturing>,
    pub(super) tap: Option<&'a mut (dyn BodyTap + 't)>,
    pub(super) sending: Option<&'a mut Sending>,
}

/// Reads the body to its end (or until the tap says [`Tapped::Stop`], which it returns), giving
/// the window back as data arrives and sending a duplex stream's messages as they fall due;
/// fails once it is over `max` bytes (the stream is then reset as the caller drops it).
pub(super) async fn read_body(
    body: &mut RecvStream,
    r: Reading<'_, '_>,
    received: &mut u64,
) -> Result<Tapped, Failure> {
    let Reading {
        max,
        mut kept,
        mut tap,
        mut sending,
    } = r;
    let mut length = 0u64;
    loop {
        let data = match sending.as_deref_mut() {
            None => poll_fn(|cx| body.poll_data(cx)).await,
            Some(s) => tokio::select! {
                biased;
                d = poll_fn(|cx| body.poll_data(cx)) => d,
                () = s.due() => {
                    if let Some(tap) = tap.as_deref_mut() {
                        s.pump(tap);
                    }
                    continue;
                }
            },
        };
        let Some(data) = data else { break };
        let data = data?;
        let at = Instant::now();
        *received += data.len() as u64;
        length += data.len() as u64;
        if length > max {
            return Err(Failure::stream(ErrorKind::BodyTooLarge));
        }
        let _ = body.flow_control().release_capacity(data.len());
        if let Some(kept) = kept.as_deref_mut().filter(|k| k.limit > 0) {
            let room = kept.limit - kept.body.len();
            if data.len() > room {
                kept.truncated = true;
            }
            kept.body.extend_from_slice(&data[..data.len().min(room)]);
        }
        if let Some(tap) = tap.as_deref_mut() {
            if tap.data(&data, at) == Tapped::Stop {
                return Ok(Tapped::Stop);
            }
            if let Some(s) = sending.as_deref_mut() {
                s.pump(tap);
            }
        }
    }
    Ok(Tapped::More)
}
