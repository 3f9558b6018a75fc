//! HTTP/3 for `volley serve --http3`: QUIC on the UDP port of the same number as the TLS
//! listener, the same routes and state.
//!
//! Each request's body is read whole before its route runs (h3 hands it over frame by frame
//! and the routes read a hyper body; the target's routes take small bodies), then the route's
//! response is sent frame by frame as it is produced, trailers included. The handler time the
//! oracle keeps starts once the request head is in, as over TCP.

use std::future::poll_fn;
use std::net::{SocketAddr, UdpSocket};
use std::pin::pin;
use std::sync::Arc;

use bytes::{Buf, Bytes, BytesMut};
use h3::server::RequestResolver;
use hyper::body::Body;
use quinn::crypto::rustls::QuicServerConfig;
use tokio::sync::watch;

use super::TargetError;
use super::incoming::ReqBody;
use super::listen::stopped;
use super::routes::{self, ServerState};

/// The QUIC connection and request-stream types of the target.
type H3Conn = h3::server::Connection<h3_quinn::Connection, Bytes>;

/// A UDP socket bound to `addr` and the QUIC server configuration (ALPN `h3`) for the
/// certificate of `tls`: what [`endpoint`] needs inside the runtime.
pub(super) fn bind(
    addr: SocketAddr,
    tls: &rustls::ServerConfig,
) -> Result<(UdpSocket, quinn::ServerConfig), TargetError> {
    let socket = UdpSocket::bind(addr).map_err(|source| TargetError::Bind { addr, source })?;
    let mut tls = tls.clone();
    tls.alpn_protocols = vec![crate::proto::http3::ALPN.to_vec()];
    // 0-RTT: a client resuming a session may send its first requests before the handshake
    // completes (quinn takes 0 or all; each ticket is taken once, so a replay is refused).
    tls.max_early_data_size = u32::MAX;
    let crypto = QuicServerConfig::try_from(tls).map_err(|e| TargetError::Tls(e.to_string()))?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    // Load generators open many streams per connection at once.
    transport.max_concurrent_bidi_streams(1024u32.into());
    config.transport_config(Arc::new(transport));
    Ok((socket, config))
}

/// The endpoint serving on `socket` (call inside the target's runtime).
pub(super) fn endpoint(
    socket: UdpSocket,
    config: quinn::ServerConfig,
) -> std::io::Result<quinn::Endpoint> {
    let runtime = quinn::default_runtime()
        .ok_or_else(|| std::io::Error::other("no async runtime for QUIC"))?;
    quinn::Endpoint::new(
        quinn::EndpointConfig::default(),
        Some(config),
        socket,
        runtime,
    )
}

/// Accepts QUIC connections until a stop, serving each on its own task.
pub(super) async fn serve(
    endpoint: quinn::Endpoint,
    state: Arc<ServerState>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            incoming = endpoint.accept() => match incoming {
                Some(incoming) => {
                    tokio::spawn(connection(incoming, state.clone(), shutdown.clone()));
                }
                None => break,
            },
            () = stopped(&mut shutdown) => break,
        }
    }
    endpoint.close(0u32.into(), b"");
}

/// Serves one QUIC connection's requests, each on its own task.
async fn connection(
    incoming: quinn::Incoming,
    state: Arc<ServerState>,
    mut shutdown: watch::Receiver<bool>,
) {
    let Ok(connecting) = incoming.accept() else {
        return;
    };
    // Requests a client sent as 0-RTT early data are served at once (0.5-RTT), before its
    // handshake completes; `into_0rtt` always succeeds on a server.
    let conn = match connecting.into_0rtt() {
        Ok((conn, _)) => conn,
        Err(connecting) => match connecting.await {
            Ok(conn) => conn,
            Err(_) => return,
        },
    };
    state.metrics.record_connection();
    let Ok(mut h3) = H3Conn::new(h3_quinn::Connection::new(conn)).await else {
        return;
    };
    loop {
        tokio::select! {
            accepted = h3.accept() => match accepted {
                Ok(Some(resolver)) => {
                    tokio::spawn(request(resolver, state.clone()));
                }
                // The client closed the connection, or broke the protocol.
                _ => break,
            },
            () = stopped(&mut shutdown) => {
                let _ = h3.shutdown(0).await;
                break;
            }
        }
    }
}

/// Reads one request, runs its route, and sends the response.
async fn request(resolver: RequestResolver<h3_quinn::Connection, Bytes>, state: Arc<ServerState>) {
    let Ok((req, mut stream)) = resolver.resolve_request().await else {
        return;
    };
    let mut body = BytesMut::new();
    loop {
        match stream.recv_data().await {
            Ok(Some(mut chunk)) => {
                while chunk.has_remaining() {
                    let part = chunk.chunk();
                    body.extend_from_slice(part);
                    let n = part.len();
                    chunk.advance(n);
                }
            }
            Ok(None) => break,
            Err(_) => return,
        }
    }
    let req = req.map(|()| ReqBody::Full(Some(body.freeze())));
    // A target gone away answers nothing more: dropping the stream resets it.
    let Ok(response) = routes::handle(state, req).await else {
        return;
    };
    let (parts, body) = response.into_parts();
    if stream
        .send_response(http::Response::from_parts(parts, ()))
        .await
        .is_err()
    {
        return;
    }
    let mut body = pin!(body);
    while let Some(frame) = poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        let Ok(frame) = frame else { return };
        let sent = match frame.into_data() {
            Ok(data) => stream.send_data(data).await,
            Err(frame) => match frame.into_trailers() {
                Ok(trailers) => stream.send_trailers(trailers).await,
                Err(_) => Ok(()),
            },
        };
        if sent.is_err() {
            return;
        }
    }
    let _ = stream.finish().await;
}
