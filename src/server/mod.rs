//! The built-in target HTTP server behind `volley serve`.
//!
//! A small, fast HTTP/1.1 + HTTP/2 (prior knowledge) server with routes that
//! make load tests reproducible without any external service:
//!
//! | route | behaviour |
//! | --- | --- |
//! | `GET /` | 200, body `ok\n` |
//! | `/delay?ms=N[&dist=fixed\|uniform\|exp\|bimodal][&stall_ms=S&every_ms=P]` | waits (precisely, see below), then 200; with a stall, the route freezes for S ms every P ms (see `stall.rs`) |
//! | `/status/CODE` | answers with that status (200..=599; 1xx is rejected, see below) |
//! | `GET /bytes/N` | N bytes of body (at most 100 MiB) from a shared static buffer |
//! | `POST /echo` | echoes the request body with the request's content-type |
//! | `GET /headers` | the request's headers as a JSON object (names in lower case) |
//! | `GET /cookies/set?NAME=VALUE&…` | a `Set-Cookie` per pair (`path`, `max_age`, `domain`, `secure` add attributes) |
//! | `GET /cookies`, `GET /cookies/need?name=NAME` | the cookies received as JSON; 200 with cookie `NAME`, else 401 |
//! | `/tasks`, `/tasks/{id}` | in-memory JSON CRUD |
//! | `GET /stats[?reset=1]`, `POST /stats/reset` | the oracle: the distribution of the target's own handler times as JSON (see `oracle.rs`); `reset` takes the figures out |
//! | `GET /metrics` | Prometheus text: `volley_target_requests_total{path,status}` (path is the route template), `volley_target_in_flight`, `volley_target_chaos_total{kind}`, `volley_target_connections_total` |
//! | `/chaos/{reset,hang,garbage,close,slow,reset-body,headers,long-header,bad-chunked,deaf}` | broken behaviours, see `chaos.rs` |
//! | `GET /sse?events=N&gap_ms=G[&ttft_ms=T][&done=1]` | a `text/event-stream` of N events on a known schedule (see `streams.rs`) |
//! | `POST /v1/chat/completions`, `/v1/completions` | an OpenAI-compatible stream of `max_tokens` tokens after a TTFT, one per gap, then `usage` and `[DONE]` (see `streams.rs`) |
//! | `GET /ws[?delay_ms=D]` | a WebSocket echo: each message back D ms after it arrived (see `ws.rs`) |
//! | gRPC `volley.target.v1.Echo/Echo` | echoes `message` and `payload` after `delay_ms` |
//! | gRPC `volley.target.v1.Tasks/*` | Create/Get/List/Update/DeleteTask over the `/tasks` store |
//!
//! # gRPC
//!
//! Any request whose `content-type` starts with `application/grpc` is a gRPC
//! call (`proto/volley_target.proto` in the repository, also served by gRPC server
//! reflection, see `grpc/reflection.rs`). Same port, same hyper service, same capacity
//! limiter as REST; the Tasks service reads and writes the very store REST
//! `/tasks` uses, so REST and gRPC can be compared over the same logic (plus
//! each side's encoding). Errors are trailers-only responses: `NOT_FOUND`,
//! `INVALID_ARGUMENT`, `UNIMPLEMENTED`, `RESOURCE_EXHAUSTED`.
//!
//! # TLS
//!
//! [`spawn_tls`] serves the same routes over TLS only (ALPN `h2` and
//! `http/1.1`), with a certificate generated at start-up and signed by a
//! throw-away CA whose PEM [`RunningTarget::ca_pem`] returns.
//!
//! # Precise delays
//!
//! `tokio::time::sleep` has a 1 ms granularity and rounds up, so a 10 ms sleep
//! lasts 10–11 ms. Delays and capacity-mode service times therefore use
//! [`crate::timer::sleep_until`]: a coarse tokio sleep until ~2 ms before the deadline,
//! then a one-shot Linux `timerfd` (registered with tokio's reactor, so no thread
//! spins or blocks) for the remainder.
//!
//! # The truth oracle
//!
//! The target measures how long it takes to handle each request (from the parsed request head
//! to the response handed to the socket) in a lock-free HDR histogram, served by `GET /stats`:
//! tests hold volley's figures against it (`tests/oracle.rs`). See `oracle.rs`.
//!
//! # Capacity mode
//!
//! With [`TargetConfig::capacity`] set, every request except `/metrics` and `/stats` first
//! takes one of [`Capacity::workers`] permits from a FIFO semaphore and holds it
//! for [`Capacity::service_time`] plus whatever its route does. Maximum
//! throughput is then exactly `workers / service_time`, and excess load queues
//! (latency grows), like a real saturated service. `/chaos/` connections are
//! served below hyper (see below) and bypass the limit.
//!
//! # Why chaos paths are handled below hyper
//!
//! The `/chaos/` behaviours are deliberately protocol violations: a TCP RST
//! (`SO_LINGER 0`), a connection that never answers, bytes that are not HTTP,
//! a response cut short of its announced `Content-Length`, a body trickled at a
//! set byte rate. hyper owns the socket and always produces well-formed HTTP, so
//! it cannot do any of these. Each freshly accepted connection is therefore
//! classified by *peeking* (not reading) its first request line: if the request
//! target starts with `/chaos/`, the connection is served by a small
//! hand-written HTTP/1.1 handler (`chaos.rs`) with full control of the socket;
//! otherwise it goes to hyper untouched. Consequence: a `/chaos/` request must be
//! the first request on a fresh connection; sent on a connection already served
//! by hyper it gets `421 Misdirected Request`.
//!
//! # Target-wide faults
//!
//! [`spawn_with_faults`] adds what no single request can ask for: the listener
//! closed mid-run ([`Faults::close_after_requests`], [`Faults::close_after`]), and a periodic
//! stall of every route but `/metrics` and `/stats` ([`Faults::stall`]: the endpoint freezes for
//! S every P of the target's clock, see [`Stall`]).
//! An `https://` client reaching the plain port fails its TLS handshake (hyper
//! answers its ClientHello with a plain-text 400), which needs no mode of its own.
//!
//! # Status 1xx
//!
//! hyper cannot send an informational (1xx) status as a final response (it
//! would turn it into a 500), so `/status/1xx` answers 400 with an explanation.

mod backends;
mod body;
mod capacity;
mod chaos;
mod cookies;
mod grpc;
mod h3;
mod incoming;
mod listen;
mod metrics;
mod oracle;
mod respond;
mod routes;
mod stall;
mod streams;
mod tasks;
mod tls;
mod ws;

pub use backends::{BACKEND_HEADER, Backends, BackendsError, MAX_BACKENDS};
pub use stall::{Stall, StallError};

use std::fmt::Write as _;
use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::thread::JoinHandle;
use std::time::Duration;

/// How to run the target server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetConfig {
    /// Address to listen on. Port 0 picks an ephemeral port (see
    /// [`RunningTarget::addr`]). Use a loopback address unless the target must
    /// be reachable from other hosts.
    pub bind: SocketAddr,
    /// Number of tokio worker threads serving requests; 0 means one per
    /// available CPU.
    pub threads: usize,
    /// Simulate a service of limited capacity; `None` serves as fast as possible.
    pub capacity: Option<Capacity>,
}

impl Default for TargetConfig {
    /// `127.0.0.1:0` (ephemeral port), one worker per CPU, no capacity limit.
    fn default() -> Self {
        TargetConfig {
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
            threads: 0,
            capacity: None,
        }
    }
}

/// Faults of the whole target, beside the per-request `/chaos/` paths (see
/// [`spawn_with_faults`]). The default has none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Close the listener once this many requests have been answered by the
    /// regular routes (`/metrics` and `/chaos/` excluded): new connections are
    /// then refused and open ones closed (in-flight requests are finished first),
    /// as when a server goes away in the middle of a run.
    pub close_after_requests: Option<u64>,
    /// Likewise, this long after the target started.
    pub close_after: Option<Duration>,
    /// Freeze every route but `/metrics` and `/stats` for [`Stall::duration`] at the start of
    /// every [`Stall::every`] of the target's clock (which starts when it starts serving).
    pub stall: Option<Stall>,
}

/// A simulated capacity limit: `workers` requests are served at once, each
/// taking at least `service_time`; maximum throughput is
/// `workers / service_time` requests per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    /// Number of requests served concurrently (must be at least 1); further
    /// requests wait in a FIFO queue.
    pub workers: usize,
    /// Time each request holds its worker before its route runs.
    pub service_time: Duration,
}

impl Capacity {
    /// The maximum throughput in requests per second (`workers / service_time`);
    /// infinite when `service_time` is zero.
    pub fn max_requests_per_sec(&self) -> f64 {
        self.workers as f64 / self.service_time.as_secs_f64()
    }
}

/// Why the target server could not start.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The listening socket could not be created or bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address that was asked for.
        addr: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// `--ca-file` could not be written.
    #[error("cannot write the CA certificate to {path}: {source}")]
    CaFile {
        /// The file asked for.
        path: std::path::PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The target's tokio runtime could not be built.
    #[error("cannot build the target's tokio runtime: {0}")]
    Runtime(std::io::Error),
    /// The target's server thread could not be started.
    #[error("cannot start the target's server thread: {0}")]
    Thread(std::io::Error),
    /// The configuration is unusable (e.g. zero capacity workers).
    #[error("invalid target configuration: {0}")]
    InvalidConfig(String),
    /// The SIGINT/SIGTERM handlers of [`serve_forever`] could not be installed.
    #[error("cannot install signal handlers: {0}")]
    Signal(std::io::Error),
    /// The self-signed certificate of [`spawn_tls`] could not be made.
    #[error("cannot set up TLS: {0}")]
    Tls(String),
}

/// A target running on its own background threads (its own multi-thread tokio
/// runtime with `threads` workers, plus one thread accepting connections).
///
/// Dropping it stops the server like [`RunningTarget::stop`].
#[derive(Debug)]
pub struct RunningTarget {
    addr: SocketAddr,
    /// PEM of the CA that signed the TLS certificate (TLS targets only).
    ca_pem: Option<String>,
    stop_tx: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl RunningTarget {
    /// The real bound address (an ephemeral port when bound to port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// For a target started by [`spawn_tls`]: the PEM of the throw-away CA
    /// that signed its certificate (valid for `localhost`, `127.0.0.1`, `::1`
    /// and the bind address). Write it to a file for `--cacert`.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The URL to reach the target, e.g. `http://127.0.0.1:PORT` (`https://`
    /// for a TLS target; an unspecified bind address such as `0.0.0.0` is
    /// replaced by loopback).
    pub fn base_url(&self) -> String {
        let ip = match self.addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", SocketAddr::new(ip, self.addr.port()))
    }

    /// Stops gracefully: stops accepting, lets in-flight requests finish (for
    /// at most a few seconds), closes every connection and joins the threads.
    /// Blocks the calling thread meanwhile.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(tx) = self.stop_tx.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for RunningTarget {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Starts the target on background threads and returns once it is listening.
///
/// Usable from sync code and from inside another tokio runtime (the target has
/// its own runtime; only [`RunningTarget::stop`] blocks, briefly).
pub fn spawn(config: TargetConfig) -> Result<RunningTarget, TargetError> {
    start(config, None, Faults::default(), None)
}

/// Like [`spawn`], with target-wide [`Faults`] (e.g. the listener closed after N requests).
pub fn spawn_with_faults(
    config: TargetConfig,
    faults: Faults,
) -> Result<RunningTarget, TargetError> {
    start(config, None, faults, None)
}

/// Like [`spawn`], answering as several [`Backends`] behind a round-robin front (the response
/// header `X-Backend: bK`, each backend's delay, per-backend series in `/metrics`).
pub fn spawn_with_backends(
    config: TargetConfig,
    backends: Backends,
) -> Result<RunningTarget, TargetError> {
    start(config, None, Faults::default(), Some(backends))
}

/// Like [`spawn`], but every connection is TLS (ALPN `h2` or `http/1.1`)
/// with a certificate generated now and signed by a throw-away CA (see
/// [`RunningTarget::ca_pem`]). The `/chaos/` routes are not special over TLS.
///
/// A function rather than a field of [`TargetConfig`] so that code building a
/// `TargetConfig` literal keeps compiling.
pub fn spawn_tls(config: TargetConfig) -> Result<RunningTarget, TargetError> {
    spawn_secure(config, false)
}

/// Like [`spawn_tls`], and HTTP/3 on the UDP port of the same number (ALPN `h3`, the same
/// certificate); responses over TCP advertise it with `Alt-Svc: h3=":PORT"`.
pub fn spawn_http3(config: TargetConfig) -> Result<RunningTarget, TargetError> {
    spawn_secure(config, true)
}

/// A TLS target with a certificate made now, and HTTP/3 beside when `http3`.
fn spawn_secure(config: TargetConfig, http3: bool) -> Result<RunningTarget, TargetError> {
    let (server_config, ca_pem) = tls::self_signed(config.bind.ip())?;
    let secure = Secure {
        config: server_config,
        ca_pem,
        http3,
    };
    start(config, Some(secure), Faults::default(), None)
}

/// What a TLS target serves with: its certificate's configuration, the CA's PEM, and whether
/// HTTP/3 is served beside.
struct Secure {
    config: std::sync::Arc<rustls::ServerConfig>,
    ca_pem: String,
    http3: bool,
}

fn start(
    config: TargetConfig,
    tls: Option<Secure>,
    faults: Faults,
    backends: Option<Backends>,
) -> Result<RunningTarget, TargetError> {
    let (acceptor, ca_pem, http3) = match tls {
        Some(secure) => (
            Some(tokio_rustls::TlsAcceptor::from(secure.config.clone())),
            Some(secure.ca_pem),
            secure.http3.then_some(secure.config),
        ),
        None => (None, None, None),
    };
    if faults.close_after_requests == Some(0) {
        return Err(TargetError::InvalidConfig(
            "close_after_requests must be at least 1".into(),
        ));
    }
    if let Some(stall) = faults.stall {
        Stall::new(stall.duration, stall.every)
            .map_err(|why| TargetError::InvalidConfig(why.to_string()))?;
    }
    if let Some(cap) = &config.capacity {
        if cap.workers == 0 {
            return Err(TargetError::InvalidConfig(
                "capacity needs at least 1 worker".into(),
            ));
        }
        if cap.workers > tokio::sync::Semaphore::MAX_PERMITS {
            return Err(TargetError::InvalidConfig(format!(
                "capacity of {} workers is too large",
                cap.workers
            )));
        }
    }
    let threads = match config.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let listener = listen::bind_listener(config.bind).map_err(|source| TargetError::Bind {
        addr: config.bind,
        source,
    })?;
    let addr = listener.local_addr().map_err(|source| TargetError::Bind {
        addr: config.bind,
        source,
    })?;

    let h3 = http3.map(|tls| h3::bind(addr, &tls)).transpose()?;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
    let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
    let capacity = config.capacity;
    let thread = std::thread::Builder::new()
        .name("volley-target".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threads)
                .thread_name("volley-target-worker")
                .enable_all()
                .build();
            match runtime {
                Ok(runtime) => {
                    let _ = ready_tx.send(Ok(()));
                    let served =
                        listen::run(listener, capacity, acceptor, h3, stop_rx, faults, backends);
                    runtime.block_on(served);
                    // Dropped here, on a plain thread: tasks still alive
                    // (e.g. hanging chaos connections) are cancelled.
                    drop(runtime);
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            }
        })
        .map_err(TargetError::Thread)?;

    match ready_rx.recv() {
        Ok(Ok(())) => Ok(RunningTarget {
            addr,
            ca_pem,
            stop_tx: Some(stop_tx),
            thread: Some(thread),
        }),
        Ok(Err(e)) => {
            let _ = thread.join();
            Err(TargetError::Runtime(e))
        }
        Err(_) => {
            let _ = thread.join();
            Err(TargetError::Runtime(std::io::Error::other(
                "the server thread exited during start-up",
            )))
        }
    }
}

/// Runs the target in the foreground for the CLI: prints
/// `volley serve: listening on http://ADDR` (and the capacity, if limited) to
/// stdout, then serves until SIGINT or SIGTERM and stops gracefully.
///
/// Must be called from sync code (not from inside a tokio runtime).
///
/// With `tls_ca_file`, every connection is TLS (see [`spawn_tls`]) and the PEM of the CA that
/// signed the certificate is written to that file, for clients' `--cacert`. With `faults`, the
/// listener closes as they say; the process keeps running (refusing connections) until a signal.
/// With `backends`, it answers as those backends behind a round-robin front.
pub fn serve_forever(
    config: TargetConfig,
    tls_ca_file: Option<&std::path::Path>,
    http3: bool,
    faults: Faults,
    backends: Option<Backends>,
) -> Result<(), TargetError> {
    // Signals are watched before anything is printed: a SIGTERM sent as soon as the address
    // appears stops the server gracefully instead of killing the process.
    let signals = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(TargetError::Runtime)?;
    let (mut interrupt, mut terminate, mut hangup) = signals
        .block_on(async {
            use tokio::signal::unix::{SignalKind, signal};
            Ok::<_, std::io::Error>((
                signal(SignalKind::interrupt())?,
                signal(SignalKind::terminate())?,
                signal(SignalKind::hangup())?,
            ))
        })
        .map_err(TargetError::Signal)?;
    let capacity = config.capacity;
    let front = backends.as_ref().map(backends::describe);
    let target = match tls_ca_file {
        None => start(config, None, faults, backends)?,
        Some(path) => {
            let (server_config, ca_pem) = tls::self_signed(config.bind.ip())?;
            std::fs::write(path, &ca_pem).map_err(|source| TargetError::CaFile {
                path: path.to_path_buf(),
                source,
            })?;
            let secure = Secure {
                config: server_config,
                ca_pem,
                http3,
            };
            start(config, Some(secure), faults, backends)?
        }
    };
    // Written at once, and never a panic for a closed stdout (`volley serve | head -1`): the
    // target keeps serving whoever reads its port.
    // Stdout flushes at each newline, and the banner ends with one.
    let http3 = http3 && tls_ca_file.is_some();
    let text = banner(
        &target.base_url(),
        tls_ca_file,
        http3,
        front,
        capacity,
        &faults,
    );
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    signals.block_on(async {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
            // A closed terminal: as SIGTERM.
            _ = hangup.recv() => {}
        }
    });
    let _ = writeln!(std::io::stderr(), "volley serve: stopping");
    target.stop();
    Ok(())
}

/// What `volley serve` prints once it listens: the address, the protocols and the oracle, and
/// the TLS, front, capacity and faults it was started with.
fn banner(
    base_url: &str,
    tls_ca_file: Option<&std::path::Path>,
    http3: bool,
    front: Option<String>,
    capacity: Option<Capacity>,
    faults: &Faults,
) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "volley serve: listening on {base_url}");
    if let Some(path) = tls_ca_file {
        let _ = writeln!(
            o,
            "volley serve: TLS certificate signed by a throw-away CA written to {} (--cacert {0})",
            path.display()
        );
    }
    let _ = writeln!(
        o,
        "volley serve: REST and gRPC ({}, with server reflection; HTTP/1.1 and HTTP/2) on the same port",
        grpc::reflection::service_names().join(", ")
    );
    if http3 {
        let port = base_url.rsplit(':').next().unwrap_or_default();
        let _ = writeln!(
            o,
            "volley serve: HTTP/3 (QUIC) on UDP port {port}, advertised by Alt-Svc (volley --protocol http3)"
        );
    }
    let _ = writeln!(
        o,
        "volley serve: oracle: GET /stats (handler times since the last reset, µs; ?reset=1 takes them out), POST /stats/reset"
    );
    if let Some(front) = front {
        let _ = writeln!(o, "volley serve: {front}");
    }
    if let Some(cap) = capacity {
        let _ = writeln!(
            o,
            "volley serve: capacity {} workers x {} service time (max {:.1} req/s)",
            cap.workers,
            humantime::format_duration(cap.service_time),
            cap.max_requests_per_sec()
        );
    }
    if let Some(n) = faults.close_after_requests {
        let _ = writeln!(
            o,
            "volley serve: fault: the listener closes after {n} requests"
        );
    }
    if let Some(d) = faults.close_after {
        let _ = writeln!(
            o,
            "volley serve: fault: the listener closes after {}",
            humantime::format_duration(d)
        );
    }
    if let Some(s) = faults.stall {
        let _ = writeln!(
            o,
            "volley serve: fault: every route but /metrics and /stats stalls for {} every {}",
            humantime::format_duration(s.duration),
            humantime::format_duration(s.every)
        );
    }
    o
}
