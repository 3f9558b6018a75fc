//! Fetching a `/metrics` page: a plain HTTP/1.1 GET over `std::net`, with a deadline and a cap on
//! the bytes read, and the watcher thread that scrapes once per interval.
//!
//! Why blocking `std::net` on a thread of its own: a scrape must never take time from the load
//! (no task on a worker runtime), must not depend on the engine's client (which is tuned for the
//! hot path and counts into the run's own figures), and must be bounded in every way a target can
//! misbehave: a refused connection, a target that never answers (deadline on the whole exchange),
//! a body that never ends ([`ScrapeError::TooLarge`] at `max_bytes`), an HTML page. Each failure
//! is a [`ScrapeError`], counted by kind in [`Failures`]; none stops the watch. Only `http://`
//! URLs (a metrics endpoint on a load-test host is plain HTTP as a rule; TLS is left for later).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Default deadline of one scrape (connect, request, whole response).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(800);
/// Default cap on a scraped response (head and body), bytes.
pub const DEFAULT_MAX_BYTES: usize = 4 * 1024 * 1024;

/// Why a scrape gave no page (or a page with nothing selected).
#[derive(Debug, thiserror::Error)]
pub enum ScrapeError {
    /// Nothing listens there.
    #[error("connection refused")]
    Refused,
    /// The exchange did not finish within the deadline.
    #[error("no complete answer within {0:?}")]
    Timeout(Duration),
    /// The answer was not `200`.
    #[error("HTTP status {0}")]
    Status(u16),
    /// The body is HTML (or another non-text type): not a metrics page.
    #[error("not a metrics page (content-type {0})")]
    NotMetrics(String),
    /// The response was larger than the cap (a body that does not end).
    #[error("response larger than {0} bytes")]
    TooLarge(usize),
    /// The response was not HTTP/1.x, or its chunked body was malformed.
    #[error("malformed HTTP response: {0}")]
    Malformed(String),
    /// The page was read but the selectors matched nothing on it.
    #[error("no series matched")]
    NothingMatched,
    /// Any other I/O error.
    #[error("{0}")]
    Io(std::io::Error),
}

/// The kinds of [`ScrapeError`], for counting.
pub const FAILURE_KINDS: [&str; 8] = [
    "refused",
    "timeout",
    "status",
    "not_metrics",
    "too_large",
    "malformed",
    "nothing_matched",
    "io",
];

impl ScrapeError {
    /// Index into [`FAILURE_KINDS`].
    pub fn kind(&self) -> usize {
        match self {
            ScrapeError::Refused => 0,
            ScrapeError::Timeout(_) => 1,
            ScrapeError::Status(_) => 2,
            ScrapeError::NotMetrics(_) => 3,
            ScrapeError::TooLarge(_) => 4,
            ScrapeError::Malformed(_) => 5,
            ScrapeError::NothingMatched => 6,
            ScrapeError::Io(_) => 7,
        }
    }
}

/// Failed scrapes by kind, and the last message (for the report's warning).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Failures {
    /// Count per [`FAILURE_KINDS`] entry.
    pub by_kind: [u64; FAILURE_KINDS.len()],
    /// The most recent failure, as a message.
    pub last: Option<String>,
}

impl Failures {
    /// Counts one failure.
    pub fn count(&mut self, e: &ScrapeError) {
        self.by_kind[e.kind()] += 1;
        self.last = Some(e.to_string());
    }

    /// Failures of every kind.
    pub fn total(&self) -> u64 {
        self.by_kind.iter().sum()
    }
}

/// A URL that cannot be scraped (known at start: a clear message before the run).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("watch URL `{url}`: {why}")]
pub struct UrlError {
    /// The URL as given.
    pub url: String,
    /// What is wrong with it.
    pub why: String,
}

/// One metrics endpoint: where, and the request sent to it.
#[derive(Debug, Clone)]
pub struct Scraper {
    addr: SocketAddr,
    request: Vec<u8>,
    /// Deadline of one scrape.
    pub timeout: Duration,
    /// Cap on the bytes of one response.
    pub max_bytes: usize,
}

impl Scraper {
    /// A scraper of `url` (`http://host:port/path`), the host resolved now.
    pub fn new(url: &str) -> Result<Scraper, UrlError> {
        let fail = |why: String| UrlError {
            url: crate::redact::redact_url_userinfo(url),
            why,
        };
        let parsed = check_url(url)?;
        let host = parsed.host_str().ok_or_else(|| fail("no host".into()))?;
        let port = parsed.port_or_known_default().unwrap_or(80);
        let addr = (host.trim_matches(['[', ']']), port)
            .to_socket_addrs()
            .map_err(|e| fail(format!("cannot resolve: {e}")))?
            .next()
            .ok_or_else(|| fail("resolves to no address".into()))?;
        let mut target = parsed.path().to_string();
        if let Some(q) = parsed.query() {
            target = format!("{target}?{q}");
        }
        // Host as written, without the user information (which goes as Basic credentials).
        let host_header = match parsed.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let auth = crate::redact::url_basic_auth(&parsed)
            .map(|a| format!("Authorization: {a}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "GET {target} HTTP/1.1\r\nHost: {host_header}\r\n{auth}Accept: text/plain;version=0.0.4, application/openmetrics-text;q=0.5\r\nAccept-Encoding: identity\r\nConnection: close\r\nUser-Agent: volley-watch\r\n\r\n"
        );
        Ok(Scraper {
            addr,
            request: request.into_bytes(),
            timeout: DEFAULT_TIMEOUT,
            max_bytes: DEFAULT_MAX_BYTES,
        })
    }

    /// Fetches the page once (blocking, at most [`Scraper::timeout`]).
    pub fn scrape(&self) -> Result<String, ScrapeError> {
        let deadline = Instant::now() + self.timeout;
        let timeout = ScrapeError::Timeout(self.timeout);
        let io = |e| io(e, self.timeout);
        let mut stream = TcpStream::connect_timeout(&self.addr, self.timeout).map_err(io)?;
        stream.set_write_timeout(Some(self.timeout)).map_err(io)?;
        stream.write_all(&self.request).map_err(io)?;
        let mut response = Vec::with_capacity(16 * 1024);
        let mut buf = [0u8; 16 * 1024];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(timeout);
            }
            stream.set_read_timeout(Some(left)).map_err(io)?;
            let n = stream.read(&mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            if response.len() + n > self.max_bytes {
                return Err(ScrapeError::TooLarge(self.max_bytes));
            }
            response.extend_from_slice(&buf[..n]);
            if complete(&response) {
                break;
            }
        }
        page(&response)
    }
}

/// Checks `url` without resolving it: an `http://` URL with a host.
pub fn check_url(url: &str) -> Result<url::Url, UrlError> {
    let fail = |why: String| UrlError {
        url: url.to_string(),
        why,
    };
    let parsed = url::Url::parse(url).map_err(|e| fail(e.to_string()))?;
    if parsed.scheme() != "http" {
        return Err(fail("only http:// is supported".into()));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(fail("no host".into()));
    }
    Ok(parsed)
}

fn io(e: std::io::Error, timeout: Duration) -> ScrapeError {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => ScrapeError::Refused,
        K::TimedOut | K::WouldBlock => ScrapeError::Timeout(timeout),
        _ => ScrapeError::Io(e),
    }
}

/// Whether `response` holds a whole response with a `Content-Length` (others end at EOF).
fn complete(response: &[u8]) -> bool {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut r = httparse::Response::new(&mut headers);
    let Ok(httparse::Status::Complete(head)) = r.parse(response) else {
        return false;
    };
    content_length(r.headers).is_some_and(|len| response.len() >= head + len)
}

fn content_length(headers: &[httparse::Header<'_>]) -> Option<usize> {
    let h = headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))?;
    std::str::from_utf8(h.value).ok()?.trim().parse().ok()
}

/// The page in a whole response: status, content type and (chunked) body checked.
fn page(response: &[u8]) -> Result<String, ScrapeError> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut r = httparse::Response::new(&mut headers);
    let head = match r.parse(response) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) => {
            return Err(ScrapeError::Malformed("truncated head".into()));
        }
        Err(e) => return Err(ScrapeError::Malformed(e.to_string())),
    };
    let status = r.code.unwrap_or(0);
    if status != 200 {
        return Err(ScrapeError::Status(status));
    }
    let header = |name: &str| {
        r.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).to_ascii_lowercase())
    };
    let content_type = header("content-type").unwrap_or_default();
    let mut body = &response[head..];
    if let Some(len) = content_length(r.headers) {
        body = body.get(..len).ok_or(ScrapeError::Malformed(
            "body shorter than its length".into(),
        ))?;
    }
    let body = match header("transfer-encoding") {
        Some(te) if te.contains("chunked") => dechunk(body)?,
        _ => body.to_vec(),
    };
    let text_type = content_type.is_empty()
        || content_type.starts_with("text/plain")
        || content_type.starts_with("application/openmetrics-text");
    let looks_html = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<');
    if !text_type || looks_html {
        let shown = if content_type.is_empty() {
            "none, body starts with <"
        } else {
            &content_type
        };
        return Err(ScrapeError::NotMetrics(shown.to_string()));
    }
    String::from_utf8(body).map_err(|_| ScrapeError::Malformed("body is not UTF-8".into()))
}

/// Decodes a chunked body (trailers ignored).
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, ScrapeError> {
    let bad = || ScrapeError::Malformed("bad chunked body".into());
    let mut out = Vec::with_capacity(body.len());
    loop {
        let eol = body.windows(2).position(|w| w == b"\r\n").ok_or_else(bad)?;
        let size_field = std::str::from_utf8(&body[..eol]).map_err(|_| bad())?;
        let size_hex = size_field.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_hex, 16).map_err(|_| bad())?;
        body = &body[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(body.get(..size).ok_or_else(bad)?);
        body = body.get(size + 2..).ok_or_else(bad)?;
    }
}

#[cfg(test)]
#[path = "scrape_tests.rs"]
mod tests;
