//! The one HTTP/1.1 client the pushes use (remote write, OTLP): a blocking `std::net` POST with
//! a deadline, run on a pusher's own thread, never on the hot path. `http://` only; the URL's
//! user information is sent as Basic authentication and never shown.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The most of an answer that is read, bytes.
const MAX_ANSWER: usize = 64 * 1024;

/// Why a push failed.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The URL is not `http://host:port/path` (its user information left out).
    #[error("URL `{0}`: {1}")]
    Url(String, String),
    /// A setting (an environment variable) that volley cannot use.
    #[error("{0}: {1}")]
    Setting(String, String),
    /// Nothing listens there.
    #[error("connection refused")]
    Refused,
    /// No answer within the deadline.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The endpoint answered with an error status (its message, cut to 200 characters).
    #[error("HTTP {0}: {1}")]
    Status(u16, String),
    /// The endpoint took the push but rejected some of its data points (OTLP partial success).
    #[error("{0} data points rejected: {1}")]
    Rejected(i64, String),
    /// Any other I/O error or a malformed answer.
    #[error("{0}")]
    Io(String),
}

/// An answer: its status and body (at most 64 KiB of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status code.
    pub status: u16,
    /// Its `Content-Type`, lowercased (`""`: none).
    pub content_type: String,
    /// The body.
    pub body: Vec<u8>,
}

/// An endpoint pushes are POSTed to.
#[derive(Debug, Clone)]
pub struct Endpoint {
    addr: SocketAddr,
    host: String,
    path: String,
    /// Header lines sent with every push (`Authorization` from the URL's user information,
    /// those given), each ending in CRLF.
    headers: String,
    /// Deadline of one push.
    pub timeout: Duration,
}

impl Endpoint {
    /// The endpoint at `url` (`http://host:port/path`), resolved now; 2 s per push.
    pub fn new(url: &str) -> Result<Self, PushError> {
        // The URL's user information is secret: never in an error.
        let fail =
            |why: &str| PushError::Url(crate::redact::redact_url_userinfo(url), why.to_string());
        let parsed = url::Url::parse(url).map_err(|e| fail(&e.to_string()))?;
        if parsed.scheme() != "http" {
            return Err(fail("only http:// is supported"));
        }
        let host = parsed
            .host_str()
            .ok_or_else(|| fail("no host"))?
            .to_string();
        let port = parsed.port_or_known_default().unwrap_or(80);
        let addr = (host.trim_matches(['[', ']']), port)
            .to_socket_addrs()
            .map_err(|e| fail(&e.to_string()))?
            .next()
            .ok_or_else(|| fail("resolves to no address"))?;
        let headers = crate::redact::url_basic_auth(&parsed)
            .map(|a| format!("Authorization: {a}\r\n"))
            .unwrap_or_default();
        let path = match parsed.query() {
            Some(q) => format!("{}?{q}", parsed.path()),
            None => parsed.path().to_string(),
        };
        Ok(Self {
            addr,
            host: format!("{host}:{port}"),
            path,
            headers,
            timeout: Duration::from_secs(2),
        })
    }

    /// Adds a header sent with every push (names and values checked by the caller).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push_str(&format!("{name}: {value}\r\n"));
        self
    }

    /// POSTs `body` with the extra header lines `head` (each ending in CRLF) and returns the
    /// answer: blocking, at most [`Endpoint::timeout`].
    pub fn post(&self, head: &str, body: &[u8]) -> Result<Answer, PushError> {
        let deadline = Instant::now() + self.timeout;
        let io = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::ConnectionRefused => PushError::Refused,
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                PushError::Timeout(self.timeout)
            }
            _ => PushError::Io(e.to_string()),
        };
        let mut conn = TcpStream::connect_timeout(&self.addr, self.timeout).map_err(io)?;
        conn.set_write_timeout(Some(self.timeout)).map_err(io)?;
        let request = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\n{}{head}User-Agent: volley\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.path,
            self.host,
            self.headers,
            body.len()
        );
        conn.write_all(request.as_bytes()).map_err(io)?;
        conn.write_all(body).map_err(io)?;
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        while raw.len() < MAX_ANSWER && !complete(&raw) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(PushError::Timeout(self.timeout));
            }
            conn.set_read_timeout(Some(left)).map_err(io)?;
            let n = conn.read(&mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
        }
        parse(&raw).ok_or_else(|| PushError::Io("no HTTP answer".into()))
    }
}

/// Whether `raw` holds a whole answer: its head, and as many body bytes as its
/// `Content-Length` says (without one, the answer ends when the connection closes).
fn complete(raw: &[u8]) -> bool {
    let Some(end) = head_end(raw) else {
        return false;
    };
    match header(&raw[..end], "content-length").and_then(|v| v.parse::<usize>().ok()) {
        Some(n) => raw.len() >= end + n,
        None => false,
    }
}

fn head_end(raw: &[u8]) -> Option<usize> {
    raw.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

fn header(head: &[u8], name: &str) -> Option<String> {
    String::from_utf8_lossy(head).lines().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_ascii_lowercase())
    })
}

fn parse(raw: &[u8]) -> Option<Answer> {
    let line = raw.split(|b| *b == b'\n').next()?;
    let status = std::str::from_utf8(line)
        .ok()?
        .strip_prefix("HTTP/1.")?
        .get(2..5)?
        .parse()
        .ok()?;
    let end = head_end(raw).unwrap_or(raw.len());
    Some(Answer {
        status,
        content_type: header(&raw[..end], "content-type").unwrap_or_default(),
        body: raw[end..].to_vec(),
    })
}

/// The first line of a text body, cut to 200 characters.
pub fn first_line(body: &[u8]) -> String {
    String::from_utf8_lossy(body)
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(200)
        .collect()
}
