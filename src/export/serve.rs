//! The metrics page (`--metrics-listen ADDR`): a small HTTP/1.1 server on a thread of its own
//! that answers `GET /metrics` with the latest [`LiveSnapshot`](super::LiveSnapshot) in the text
//! exposition format. One connection at a time, each with a 2 s deadline, `Connection: close`:
//! a scraper every second or so is all it serves. Nothing of the run waits for it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use super::ExportError;
use super::exposition::{CONTENT_TYPE, render};
use super::live::Shared;

/// Deadline of one connection: reading the request and writing the answer.
const DEADLINE: Duration = Duration::from_secs(2);
/// The longest request head read, bytes.
const MAX_HEAD: usize = 8 * 1024;

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
                for conn in listener.incoming() {
                    if flag.load(Ordering::Relaxed) {
                        return;
                    }
                    if let Ok(conn) = conn {
                        let _ = answer(conn, &shared);
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

/// Reads one request head and answers it.
fn answer(mut conn: TcpStream, shared: &Shared) -> std::io::Result<()> {
    conn.set_read_timeout(Some(DEADLINE))?;
    conn.set_write_timeout(Some(DEADLINE))?;
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
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
