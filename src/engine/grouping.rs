//! `--group-by` on the response path: each measured exchange of a step that groups is recorded
//! in the worker's group tables under the value its selector reads.
//!
//! Header values come from the connection's [`Picked`](crate::proto::pick::Picked) buffer and
//! the status is written into a stack buffer: nothing is allocated for a value already seen (the
//! table looks it up by `&[u8]`). `json:` reads the captured body, parsed as JSON, which
//! allocates per response as checks on the body do.

use crate::plan::Step;
use crate::plan::group_by::GroupSelector;
use crate::proto::client::Connection;
use crate::proto::message::Response;
use crate::record::recorder::{Recorder, RequestSample};

/// Records `sample` in every group table of `step`, with the value each selector reads from
/// `response` (and from `conn`'s picked headers).
pub(super) fn record_groups(
    rec: &mut Recorder,
    tables: &[crate::plan::group_by::GroupBy],
    step: &Step,
    conn: &Connection,
    response: Option<&Response>,
    sample: &RequestSample,
) {
    let mut json: Option<Option<serde_json::Value>> = None;
    for &table in &step.group_by {
        let Some(t) = tables.get(table) else {
            continue;
        };
        match &t.selector {
            GroupSelector::Header { .. } => {
                let value = response
                    .and(t.pick)
                    .and_then(|pick| conn.picked().get(pick));
                rec.record_grouped(table, value, sample);
            }
            GroupSelector::Status => {
                let mut buf = [0u8; 5];
                let value = sample.status.map(|s| status_text(s, &mut buf));
                rec.record_grouped(table, value, sample);
            }
            GroupSelector::Json { pointer, .. } => {
                let doc = json.get_or_insert_with(|| body_json(step, response));
                match doc.as_ref().and_then(|d| d.pointer(pointer)) {
                    None | Some(serde_json::Value::Null) => rec.record_grouped(table, None, sample),
                    Some(serde_json::Value::String(s)) => {
                        rec.record_grouped(table, Some(s.as_bytes()), sample)
                    }
                    Some(other) => {
                        let text = other.to_string();
                        rec.record_grouped(table, Some(text.as_bytes()), sample)
                    }
                }
            }
        }
    }
}

/// A status code's decimal digits, written into `buf`.
fn status_text(status: u16, buf: &mut [u8; 5]) -> &[u8] {
    let mut n = status;
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[at..]
}

/// The captured body as JSON (a gRPC response message decoded to JSON); `None` when there is
/// no body or it is not JSON.
fn body_json(step: &Step, response: Option<&Response>) -> Option<serde_json::Value> {
    let body = &response?.captured.as_deref()?.body;
    if body.is_empty() {
        return None;
    }
    match &step.grpc {
        Some(method) => method.decode_json(body).ok(),
        None => serde_json::from_slice(body).ok(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn status_codes_are_written_as_digits() {
        let mut buf = [0u8; 5];
        assert_eq!(super::status_text(200, &mut buf), b"200");
        assert_eq!(super::status_text(7, &mut buf), b"7");
        assert_eq!(super::status_text(65535, &mut buf), b"65535");
    }
}
