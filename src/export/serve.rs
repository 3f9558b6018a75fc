//! The metrics page (`--metrics-listen ADDR`): a small HTTP/1.1 server on a thread of its own
//! that answers `GET /metrics` with the latest [`LiveSnapshot`](super::LiveSnapshot) in the text
//! exposition format, `Connection: close`. Connections are served at once, each on a thread of
//! its own with a 2 s deadline for the whole exchange, at most [`MAX_CONNECTIONS`] at a time
//! (more are answered 503 at once): a client that sends half a request delays nobody else (one
//! such socket once held every scrape ~2 s; ~130 filled the accept queue). Nothing of the run
//! waits for it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::ExportError;
use super::exposition::{CONTENT_TYPE, render};
use super::live::Shared;

/// Deadline of one connection: reading the request and writing the answer.
const DEADLINE: Duration = Duration::from_secs(2);
/// The longest request head read, bytes.
const MAX_HEAD: usize = 8 * 1024;
/// Connections served at once; one more is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 64;

/// The running metrics server; stopped when dropped.
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `addr` (port 0: any free port) and serves `shared` until dropped.
    pub fn bind(addr: SocketAddr, shared: Shared) -> Result<Self, ExportError> {
        let listener =
            TcpListener::bind(addr).map_err(|source| ExportError::Listen { addr, source })?;
        let bound = listener
            .local_addr()
            .map_err(|source| ExportError::Listen { addr, source })?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("volley-metrics".into())
            .spawn(move || {
                let active = Arc::new(AtomicUsize::new(0));
                for conn in listener.incoming() {
                    if flag.load(Ordering::Relaxed) {
                        return;
                    }
                    if let Ok(conn) = conn {
                        serve_one(conn, &shared, &active);
                    }
                }
            })
            .map_err(|source| ExportError::Listen { addr, source })?;
        Ok(Self {
            addr: bound,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on (the port chosen when 0 was asked).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the blocking accept, which then sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, DEADLINE);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Answers `conn` on a thread of its own, or 503 at once when [`MAX_CONNECTIONS`] are busy.
fn serve_one(mut conn: TcpStream, shared: &Shared, active: &Arc<AtomicUsize>) {
    if active.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
        active.fetch_sub(1, Ordering::AcqRel);
        let _ = conn.set_write_timeout(Some(Duration::from_millis(100)));
        let _ = respond(&mut conn, "503 Service Unavailable", "text/plain", "busy\n");
        return;
    }
    let (mine, theirs) = (shared.clone(), Arc::clone(active));
    let spawned = std::thread::Builder::new()
        .name("volley-metrics-conn".into())
        .spawn(move || {
            let _ = answer(conn, &mine);
            theirs.fetch_sub(1, Ordering::AcqRel);
        });
    if spawned.is_err() {
        // No thread to be had: the connection is dropped, and counted off.
        active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Reads one request head, within [`DEADLINE`] in all, and answers it.
fn answer(mut conn: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let deadline = Instant::now() + DEADLINE;
    conn.set_write_timeout(Some(DEADLINE))?;
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        // The deadline is the whole head's, not each read's: a byte a second gets no more.
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return respond(&mut conn, "408 Request Timeout", "text/plain", "");
        }
        conn.set_read_timeout(Some(left))?;
        let n = conn.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_HEAD {
            return respond(
                &mut conn,
                "431 Request Header Fields Too Large",
                "text/plain",
                "",
            );
        }
    }
    let line = head.split(|b| *b == b'\r').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split(' ');
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    match (method, path) {
        ("GET", "/metrics") => {
            let snapshot = shared.lock().unwrap_or_else(|e| e.into_inner()).clone();
            respond(&mut conn, "200 OK", CONTENT_TYPE, &render(&snapshot))
        }
        ("GET", _) => respond(
            &mut conn,
            "404 Not Found",
            "text/plain",
            "volley serves its live metrics at /metrics\n",
        ),
        _ => respond(&mut conn, "405 Method Not Allowed", "text/plain", ""),
    }
}

fn respond(
    conn: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes())?;
    conn.write_all(body.as_bytes())?;
    conn.flush()
}
