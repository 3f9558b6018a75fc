//! Listening, accepting, routing each connection to hyper or to the chaos
//! handler, and graceful shutdown.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use nix::sys::socket::{
    AddressFamily, Backlog, SockFlag, SockType, SockaddrStorage, bind, listen, setsockopt, socket,
    sockopt,
};
use std::os::fd::AsRawFd;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio_rustls::TlsAcceptor;

use http::HeaderValue;
use http::header::ALT_SVC;

use super::chaos;
use super::incoming::ReqBody;
use super::routes::{self, ServerState};
use super::{Backends, Capacity, Faults};

/// Pending-connection queue length of the listening socket (std uses 128,
/// too few when a load test opens thousands of connections at once).
const BACKLOG: i32 = 4096;
/// How long a graceful stop waits for in-flight requests.
const GRACE: Duration = Duration::from_secs(3);
/// How long a client may take to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Creates a non-blocking listening socket (with `SO_REUSEADDR`) on `addr`.
pub(crate) fn bind_listener(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let family = match addr {
        SocketAddr::V4(_) => AddressFamily::Inet,
        SocketAddr::V6(_) => AddressFamily::Inet6,
    };
    let fd = socket(
        family,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    setsockopt(&fd, sockopt::ReuseAddr, &true)?;
    bind(fd.as_raw_fd(), &SockaddrStorage::from(addr))?;
    listen(&fd, Backlog::new(BACKLOG)?)?;
    Ok(std::net::TcpListener::from(fd))
}

/// Resolves once a stop is requested (or the sender is gone).
pub(crate) async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// Serves `listener` until `stop` fires (or its sender is dropped), or a fault
/// closes it, then stops gracefully. With `tls`, every connection is TLS (no
/// chaos routes).
pub(crate) async fn run(
    listener: std::net::TcpListener,
    capacity: Option<Capacity>,
    tls: Option<TlsAcceptor>,
    h3: Option<(std::net::UdpSocket, quinn::ServerConfig)>,
    stop: oneshot::Receiver<()>,
    faults: Faults,
    backends: Option<Backends>,
) {
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("volley serve: cannot register the listener: {e}");
            return;
        }
    };
    let mut http = auto::Builder::new(TokioExecutor::new());
    // Idle keep-alive connections stay open (load generators keep pools);
    // without this hyper would close them after 30 s without a request.
    http.http1().keep_alive(true).header_read_timeout(None);
    let state = Arc::new(ServerState::new(capacity, &faults, backends.as_ref()));
    // Every connection task holds a receiver; `closed()` tells when all ended.
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let mut alt_svc = None;
    if let Some((socket, config)) = h3 {
        let port = socket.local_addr().map(|a| a.port()).unwrap_or_default();
        match super::h3::endpoint(socket, config) {
            Ok(endpoint) => {
                alt_svc = HeaderValue::from_str(&format!("h3=\":{port}\"; ma=86400")).ok();
                tokio::spawn(super::h3::serve(
                    endpoint,
                    state.clone(),
                    shutdown_rx.clone(),
                ));
            }
            Err(e) => eprintln!("volley serve: cannot serve HTTP/3: {e}"),
        }
    }
    let shared = Arc::new(Shared {
        state,
        http,
        tls,
        alt_svc,
    });
    tokio::pin!(stop);
    let state = Arc::clone(&shared.state);
    let fault = async move {
        let countdown = async {
            match &state.close_after {
                Some(c) => c.reached.notified().await,
                None => std::future::pending().await,
            }
        };
        let timer = async {
            match faults.close_after {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = countdown => {}
            () = timer => {}
        }
    };
    tokio::pin!(fault);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            // The listener closes as below: new connections are refused, open ones closed.
            () = &mut fault => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    let _ = stream.set_nodelay(true);
                    shared.state.metrics.record_connection();
                    tokio::spawn(connection(stream, shared.clone(), shutdown_rx.clone()));
                }
                // Out of file descriptors and the like: back off instead of
                // spinning on the error.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
    drop(listener);
    drop(shutdown_rx);
    let _ = shutdown_tx.send(true);
    let _ = tokio::time::timeout(GRACE, shutdown_tx.closed()).await;
}

/// What every connection task shares.
struct Shared {
    state: Arc<ServerState>,
    http: auto::Builder<TokioExecutor>,
    tls: Option<TlsAcceptor>,
    /// `Alt-Svc` on every response when HTTP/3 is served beside (`h3=":PORT"`).
    alt_svc: Option<HeaderValue>,
}

/// Who serves a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handler {
    Hyper,
    Chaos,
    /// `/chaos/deaf`: must be told apart before anything is read.
    Deaf,
    /// The client closed (or failed) before sending a request line.
    Nobody,
}

async fn connection(stream: TcpStream, shared: Arc<Shared>, mut shutdown: watch::Receiver<bool>) {
    if let Some(acceptor) = &shared.tls {
        let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream));
        let stream = tokio::select! {
            accepted = handshake => match accepted {
                Ok(Ok(stream)) => stream,
                // A failed or abandoned handshake: nothing to serve.
                _ => return,
            },
            _ = stopped(&mut shutdown) => return,
        };
        return serve_hyper(stream, &shared, shutdown).await;
    }
    let handler = tokio::select! {
        handler = classify(&stream) => handler,
        _ = stopped(&mut shutdown) => return,
    };
    match handler {
        Handler::Nobody => {}
        Handler::Chaos => chaos::serve(stream, &shared.state.metrics, shutdown).await,
        Handler::Deaf => chaos::deaf(stream, &shared.state.metrics, shutdown).await,
        Handler::Hyper => serve_hyper(stream, &shared, shutdown).await,
    }
}

/// Serves HTTP/1.1 or HTTP/2 (detected from the first bytes) on `io` until it closes or a stop.
async fn serve_hyper<IO>(io: IO, shared: &Shared, mut shutdown: watch::Receiver<bool>)
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let state = Arc::clone(&shared.state);
    let alt_svc = shared.alt_svc.clone();
    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        let response = routes::handle(Arc::clone(&state), req.map(ReqBody::from));
        let alt_svc = alt_svc.clone();
        async move {
            let mut response = response.await?;
            if let Some(value) = alt_svc {
                response.headers_mut().insert(ALT_SVC, value);
            }
            Ok::<_, routes::Gone>(response)
        }
    });
    let conn = shared
        .http
        .serve_connection_with_upgrades(TokioIo::new(io), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = stopped(&mut shutdown) => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

/// Peeks (without consuming) at the start of the first request line to decide
/// whether its target starts with `/chaos/`.
async fn classify(stream: &TcpStream) -> Handler {
    let mut buf = [0u8; 64];
    let mut seen = 0;
    let mut backoff = Duration::from_millis(1);
    loop {
        let n = match stream.peek(&mut buf).await {
            Ok(0) | Err(_) => return Handler::Nobody,
            Ok(n) => n,
        };
        if let Some(handler) = decide(&buf[..n]) {
            return handler;
        }
        if n == buf.len() {
            return Handler::Hyper;
        }
        if n == seen {
            // Peeking does not consume, so readiness stays set: poll slowly
            // for the rest of a request line that arrives in pieces.
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(100));
        }
        seen = n;
    }
}

/// `Some` once the bytes seen so far settle who serves the connection.
fn decide(start: &[u8]) -> Option<Handler> {
    const CHAOS: &[u8] = b"/chaos/";
    const DEAF: &[u8] = b"/chaos/deaf";
    let Some(space) = start.iter().position(|&b| b == b' ') else {
        // Still in the method, unless this is not an HTTP/1 request line.
        return if start.iter().all(u8::is_ascii_alphabetic) {
            None
        } else {
            Some(Handler::Hyper)
        };
    };
    let target = &start[space + 1..];
    let n = target.len().min(CHAOS.len());
    if target[..n] != CHAOS[..n] {
        return Some(Handler::Hyper);
    } else if n < CHAOS.len() {
        return None;
    }
    let n = target.len().min(DEAF.len());
    if target[..n] != DEAF[..n] {
        return Some(Handler::Chaos);
    }
    match target.get(DEAF.len()) {
        None => None,
        Some(b' ' | b'?') => Some(Handler::Deaf),
        Some(_) => Some(Handler::Chaos),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decides_on_the_request_target() {
        assert_eq!(decide(b"GET / HTTP/1.1\r\n"), Some(Handler::Hyper));
        assert_eq!(decide(b"PRI * HTTP/2.0\r\n"), Some(Handler::Hyper));
        assert_eq!(decide(b"GET /chaos/reset HTTP/1.1"), Some(Handler::Chaos));
        assert_eq!(decide(b"POST /chaos/"), None, "could still be /chaos/deaf");
        assert_eq!(decide(b"POST /chaos/r"), Some(Handler::Chaos));
        assert_eq!(decide(b"GET /cha"), None);
        assert_eq!(decide(b"GET /chaox"), Some(Handler::Hyper));
        assert_eq!(decide(b"GE"), None);
        assert_eq!(decide(b"\x16\x03\x01"), Some(Handler::Hyper));
        assert_eq!(decide(b"GET "), None);
        assert_eq!(decide(b"GET /chaos/deaf HTTP/1.1"), Some(Handler::Deaf));
        assert_eq!(decide(b"POST /chaos/deaf?x=1 "), Some(Handler::Deaf));
        assert_eq!(decide(b"GET /chaos/dea"), None);
        assert_eq!(decide(b"GET /chaos/deaf"), None);
        assert_eq!(decide(b"GET /chaos/deafer "), Some(Handler::Chaos));
        assert_eq!(decide(b"GET /chaos/hang "), Some(Handler::Chaos));
    }
}
