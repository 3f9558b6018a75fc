//! The coordinator's HTTP side: plain HTTP/1.1 on a thread of its own (one current-thread
//! runtime), every request checked for the shared token, each route a call into
//! [`CoordinatorState`](super::state::CoordinatorState) under its lock.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::watch;

use super::super::wire::{Poll, Refused, Register, Snapshot, path};
use super::state::{CoordinatorState, Refusal};

/// Largest request body accepted, bytes (a share's record with its series and histograms).
pub const MAX_BODY_BYTES: usize = 64 << 20;

/// What every connection shares.
pub(super) struct Shared {
    pub(super) state: Mutex<CoordinatorState>,
    pub(super) token: String,
}

/// Serves `listener` until `stop` turns true.
pub(super) async fn serve(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let shared = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| handle(shared.clone(), req));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            _ = stop.wait_for(|s| *s) => return Ok(()),
        }
    }
}

fn refused(status: u16, why: impl Into<String>) -> Response<Full<Bytes>> {
    let body = serde_json::to_vec(&Refused { error: why.into() }).unwrap_or_default();
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response")
}

/// Whether `given` is the token, compared in time independent of where they differ.
fn token_matches(given: &[u8], token: &[u8]) -> bool {
    given.len() == token.len() && given.iter().zip(token).fold(0u8, |a, (x, y)| a | (x ^ y)) == 0
}

async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let given = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
        .unwrap_or_default();
    if !token_matches(given, shared.token.as_bytes()) {
        return Ok(refused(
            401,
            "missing or wrong token: give the coordinator's with --token or VOLLEY_TOKEN",
        ));
    }
    if req.method() != Method::POST {
        return Ok(refused(405, "only POST"));
    }
    let route = req.uri().path().to_string();
    let body = match Limited::new(req.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => return Ok(refused(413, format!("request body: {e}"))),
    };
    Ok(route_to(&shared, &route, &body))
}

fn parse<'a, T: serde::Deserialize<'a>>(body: &'a [u8]) -> Result<T, Refusal> {
    serde_json::from_slice(body).map_err(|e| Refusal {
        status: 400,
        why: format!("bad request body: {e}"),
    })
}

fn route_to(shared: &Shared, route: &str, body: &[u8]) -> Response<Full<Bytes>> {
    let now = Instant::now();
    let lock = || shared.state.lock().unwrap_or_else(|e| e.into_inner());
    let bad = |why: String| Refusal { status: 400, why };
    let result = match route {
        path::REGISTER => parse::<Register>(body).and_then(|r| {
            let reply = lock().register(&r, now)?;
            Ok(serde_json::to_vec(&reply))
        }),
        path::START => {
            parse::<Poll>(body).and_then(|p| Ok(serde_json::to_vec(&lock().start(p.share, now)?)))
        }
        path::HEARTBEAT => parse::<Poll>(body)
            .and_then(|p| Ok(serde_json::to_vec(&lock().heartbeat(p.share, now)?))),
        path::SNAPSHOT => parse::<Snapshot>(body).and_then(|s| {
            // Decoded outside the lock: the coordinator's cost per snapshot is mostly here.
            let decoded = s
                .decode()
                .map_err(|e| bad(format!("snapshot of share {}: {e}", s.share)))?;
            Ok(serde_json::to_vec(
                &lock().snapshot(s.share, &decoded, now)?,
            ))
        }),
        path::RECORD => crate::record::parse_record(body, std::path::Path::new("POST /v1/record"))
            .map_err(|e| bad(e.to_string()))
            .and_then(|r| Ok(serde_json::to_vec(&lock().record(r, now)?))),
        _ => Err(Refusal {
            status: 404,
            why: format!("no route {route}"),
        }),
    };
    match result {
        Ok(Ok(bytes)) => Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(bytes)))
            .expect("a valid response"),
        Ok(Err(e)) => refused(500, format!("cannot encode the reply: {e}")),
        Err(Refusal { status, why }) => refused(status, why),
    }
}
