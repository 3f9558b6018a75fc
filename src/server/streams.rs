//! The streaming routes, each a schedule the oracle tests measure against:
//!
//! - `GET /sse?events=N&gap_ms=G[&ttft_ms=T][&done=1]`: a `text/event-stream` of N events
//!   (`id: k`, `data: k`), the first T ms after the request head was parsed (default G), then
//!   one every G ms; with `done=1` a final `data: [DONE]` right after the last;
//! - `POST /v1/chat/completions` (and `/v1/completions`): an OpenAI-compatible stream of N
//!   tokens, the first after T ms, then one every G ms, then a chunk with `finish_reason` and
//!   one with `usage` (`completion_tokens` = N), then `data: [DONE]`. N is the request's
//!   `max_tokens` (or `max_completion_tokens`, default 16); T and G come from the headers
//!   `x-volley-ttft-ms` and `x-volley-gap-ms` (or the query's `ttft_ms` and `gap_ms`; default
//!   50 and 10). Without `"stream": true` the whole completion is answered as one JSON object
//!   once its last token is due.
//!
//! Events are due on an absolute schedule (event k at start + T + k·G), sent by a task of their
//! own on a precise timer ([`crate::timer`]), so the truth is known to a few tens of µs.

use std::time::{Duration, Instant};

use crate::server::incoming::ReqBody;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use hyper::{Request, Response, StatusCode};
use tokio::sync::mpsc;

use super::body::TargetBody;
use super::respond::{bad_request, json};

/// The most events or tokens one stream may ask for.
const MAX_EVENTS: u64 = 100_000;
/// The longest TTFT or gap, ms (one minute).
const MAX_MS: f64 = 60_000.0;
/// Largest chat request body read, bytes.
const MAX_REQUEST_BYTES: usize = 1 << 20;

const EVENT_STREAM: HeaderValue = HeaderValue::from_static("text/event-stream");

/// A stream's schedule: how many events, the first after `ttft`, then one every `gap`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Schedule {
    events: u64,
    ttft: Duration,
    gap: Duration,
}

/// A query's `key=value` pairs.
pub(super) fn query_pairs(query: Option<&str>) -> impl Iterator<Item = (&str, &str)> {
    query
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
}

/// Milliseconds in 0..=[`MAX_MS`].
pub(super) fn millis(key: &str, text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(ms) if ms.is_finite() && (0.0..=MAX_MS).contains(&ms) => {
            Ok(Duration::from_secs_f64(ms / 1e3))
        }
        _ => Err(format!(
            "{key} must be a number of milliseconds in 0..={MAX_MS}"
        )),
    }
}

/// A count in 1..=[`MAX_EVENTS`].
fn count(key: &str, text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if (1..=MAX_EVENTS).contains(&n) => Ok(n),
        _ => Err(format!("{key} must be a count in 1..={MAX_EVENTS}")),
    }
}

/// `GET /sse`.
pub(crate) fn sse(query: Option<&str>, started: Instant) -> Response<TargetBody> {
    let (mut events, mut gap, mut ttft, mut done) = (None, None, None, false);
    for (key, value) in query_pairs(query) {
        let parsed = match key {
            "events" => count(key, value).map(|n| events = Some(n)),
            "gap_ms" => millis(key, value).map(|d| gap = Some(d)),
            "ttft_ms" => millis(key, value).map(|d| ttft = Some(d)),
            "done" => {
                done = value == "1" || value == "true";
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(why) = parsed {
            return bad_request(why);
        }
    }
    let (Some(events), Some(gap)) = (events, gap) else {
        return bad_request("/sse needs ?events=N&gap_ms=G");
    };
    let schedule = Schedule {
        events,
        ttft: ttft.unwrap_or(gap),
        gap,
    };
    let tail = done.then(|| Bytes::from_static(b"data: [DONE]\n\n"));
    stream(started, schedule, tail, |k| {
        Bytes::from(format!("id: {k}\ndata: {k}\n\n"))
    })
}

/// The body of `/v1/chat/completions` volley reads.
#[derive(Debug, Default, serde::Deserialize)]
struct ChatRequest {
    #[serde(default)]
    stream: bool,
    max_tokens: Option<u64>,
    max_completion_tokens: Option<u64>,
    #[serde(default)]
    model: Option<String>,
}

/// `POST /v1/chat/completions` and `/v1/completions`.
pub(crate) async fn chat(
    req: Request<ReqBody>,
    started: Instant,
    chat: bool,
) -> Response<TargetBody> {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (mut ttft, mut gap) = (header("x-volley-ttft-ms"), header("x-volley-gap-ms"));
    for (key, value) in query_pairs(req.uri().query()) {
        match key {
            "ttft_ms" if ttft.is_none() => ttft = Some(value.to_owned()),
            "gap_ms" if gap.is_none() => gap = Some(value.to_owned()),
            _ => {}
        }
    }
    let body = match http_body_util::Limited::new(req.into_body(), MAX_REQUEST_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return bad_request(format_args!(
                "the request body is over {MAX_REQUEST_BYTES} bytes or broken"
            ));
        }
    };
    let request: ChatRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return bad_request(format_args!("the body is not a completion request: {e}")),
    };
    let tokens = request
        .max_completion_tokens
        .or(request.max_tokens)
        .unwrap_or(16);
    let schedule = match (|| -> Result<Schedule, String> {
        Ok(Schedule {
            events: count("max_tokens", &tokens.to_string())?,
            ttft: millis("ttft_ms", ttft.as_deref().unwrap_or("50"))?,
            gap: millis("gap_ms", gap.as_deref().unwrap_or("10"))?,
        })
    })() {
        Ok(s) => s,
        Err(why) => return bad_request(why),
    };
    let model = request.model.unwrap_or_else(|| "volley".into());
    if !request.stream {
        let last = schedule.ttft + schedule.gap * (schedule.events - 1) as u32;
        crate::timer::sleep_until(started + last).await;
        return json(StatusCode::OK, whole_completion(&model, tokens, chat));
    }
    let kind = if chat {
        "chat.completion.chunk"
    } else {
        "text_completion"
    };
    let chunk = move |choice: String, usage: &str| {
        Bytes::from(format!(
            "data: {{\"id\":\"cmpl-volley\",\"object\":\"{kind}\",\"created\":0,\"model\":{model:?},\"choices\":[{choice}]{usage}}}\n\n"
        ))
    };
    let text = move |t: &str| match chat {
        true => format!("{{\"index\":0,\"delta\":{{\"content\":{t:?}}},\"finish_reason\":null}}"),
        false => format!("{{\"index\":0,\"text\":{t:?},\"finish_reason\":null}}"),
    };
    let finish = match chat {
        true => "{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}",
        false => "{\"index\":0,\"text\":\"\",\"finish_reason\":\"length\"}",
    };
    let mut tail = Vec::new();
    tail.extend_from_slice(&chunk(finish.into(), ""));
    let usage = format!(
        ",\"usage\":{{\"prompt_tokens\":1,\"completion_tokens\":{tokens},\"total_tokens\":{}}}",
        tokens + 1
    );
    tail.extend_from_slice(&chunk(String::new(), &usage));
    tail.extend_from_slice(b"data: [DONE]\n\n");
    stream(started, schedule, Some(tail.into()), move |k| {
        chunk(text(if k == 0 { "tok" } else { " tok" }), "")
    })
}

/// A non-streamed completion of `tokens` tokens.
fn whole_completion(model: &str, tokens: u64, chat: bool) -> String {
    let text: String = (0..tokens)
        .map(|k| if k == 0 { "tok" } else { " tok" })
        .collect();
    let choice = match chat {
        true => {
            serde_json::json!({"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"})
        }
        false => serde_json::json!({"index": 0, "text": text, "finish_reason": "length"}),
    };
    serde_json::json!({
        "id": "cmpl-volley",
        "object": if chat { "chat.completion" } else { "text_completion" },
        "created": 0,
        "model": model,
        "choices": [choice],
        "usage": {"prompt_tokens": 1, "completion_tokens": tokens, "total_tokens": tokens + 1},
    })
    .to_string()
}

/// A `text/event-stream` response whose events `event(k)` a task sends on `schedule`, then
/// `tail` (if any) right after the last.
fn stream(
    started: Instant,
    schedule: Schedule,
    tail: Option<Bytes>,
    event: impl Fn(u64) -> Bytes + Send + 'static,
) -> Response<TargetBody> {
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        let timer = crate::timer::PreciseTimer::new().ok();
        for k in 0..schedule.events {
            let due = started + schedule.ttft + schedule.gap * k as u32;
            match &timer {
                Some(t) if t.sleep_until(due).await.is_ok() => {}
                _ => crate::timer::sleep_until(due).await,
            }
            let mut bytes = event(k);
            if k + 1 == schedule.events
                && let Some(tail) = &tail
            {
                // The last event and what ends the stream in one write, as servers do.
                let mut joined = bytes.to_vec();
                joined.extend_from_slice(tail);
                bytes = joined.into();
            }
            if tx.send(bytes).await.is_err() {
                return; // The client went away.
            }
        }
    });
    let mut response = Response::new(TargetBody::Events(rx));
    response.headers_mut().insert(CONTENT_TYPE, EVENT_STREAM);
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_read_and_refused_in_words() {
        assert_eq!(millis("gap_ms", "2.5"), Ok(Duration::from_micros(2500)));
        assert!(millis("gap_ms", "-1").unwrap_err().contains("gap_ms"));
        assert!(count("events", "0").unwrap_err().contains("1..="));
        let pairs: Vec<_> = query_pairs(Some("events=3&gap_ms=10&done")).collect();
        assert_eq!(pairs, [("events", "3"), ("gap_ms", "10"), ("done", "")]);
    }
}
