//! The health check: `GET url` until it answers 2xx or 3xx, within a time limit. A blocking
//! HTTP/1.1 request on its own connection (`Connection: close`), so it shares nothing with the
//! engine and needs no runtime. An `https://` URL is asked over TLS without verifying the
//! certificate: the check asks whether the target is up, not whom to trust (the runs verify
//! as their plans say).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How often a target that does not answer yet is asked again.
pub const POLL_EVERY: Duration = Duration::from_millis(50);
/// The longest a single attempt may take.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(2);

/// Why a health URL cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum HealthUrlError {
    /// Not a URL.
    #[error("`{url}` is not a valid URL: {source}")]
    NotAUrl {
        /// The URL as written.
        url: String,
        /// Why it does not parse.
        source: url::ParseError,
    },
    /// A scheme other than `http://` and `https://`.
    #[error("`{0}`: only http:// and https:// are supported")]
    NotHttp(String),
    /// Its host does not resolve (the resolver's message).
    #[error("{0}")]
    Host(String),
}

/// Why one attempt got no status code.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// Connecting, sending or receiving failed (or timed out).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The connection closed before a status line.
    #[error("the connection closed without a response")]
    NoResponse,
    /// The answer does not start with an HTTP status line.
    #[error("the answer is not HTTP")]
    NotHttp,
}

/// Where and how long to check a target's health.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthCheck {
    /// The URL as written.
    pub url: String,
    /// Its resolved address.
    pub addr: SocketAddr,
    /// The `Host` header.
    pub host_header: String,
    /// Path and query.
    pub path: String,
    /// How long the target has to become healthy.
    pub timeout: Duration,
    /// Over TLS (`https://`).
    pub tls: bool,
}

impl HealthCheck {
    /// Parses an `http://` URL; errors are messages for the user.
    pub fn new(url: &str, timeout: Duration) -> Result<Self, HealthUrlError> {
        let parsed = url::Url::parse(url).map_err(|source| HealthUrlError::NotAUrl {
            url: url.to_string(),
            source,
        })?;
        let (tls, port) = match parsed.scheme() {
            "http" => (false, 80),
            "https" => (true, 443),
            _ => return Err(HealthUrlError::NotHttp(url.to_string())),
        };
        let (addr, host_header) = crate::plan::read::resolve_host(&parsed, port)
            .map_err(|why| HealthUrlError::Host(why.to_string()))?;
        let mut path = parsed.path().to_string();
        if let Some(q) = parsed.query() {
            path.push('?');
            path.push_str(q);
        }
        Ok(Self {
            url: url.to_string(),
            addr,
            host_header,
            path,
            timeout,
            tls,
        })
    }

    /// One attempt: the response's status code, or why there was none.
    pub fn probe(&self, limit: Duration) -> Result<u16, ProbeError> {
        let limit = limit.clamp(Duration::from_millis(1), ATTEMPT_TIMEOUT);
        let stream = TcpStream::connect_timeout(&self.addr, limit)?;
        stream
            .set_read_timeout(Some(limit))
            .and_then(|()| stream.set_write_timeout(Some(limit)))?;
        if !self.tls {
            return self.ask(stream);
        }
        let options = crate::proto::tls::TlsOptions {
            insecure: true,
            ..Default::default()
        };
        let config = crate::proto::tls::client_config(&options, &[b"http/1.1"])
            .map_err(std::io::Error::other)?;
        let host = self
            .host_header
            .rsplit_once(':')
            .map_or(self.host_header.as_str(), |(h, p)| {
                if p.chars().all(|c| c.is_ascii_digit()) {
                    h
                } else {
                    &self.host_header
                }
            });
        let name =
            rustls::pki_types::ServerName::try_from(host.trim_matches(['[', ']']).to_string())
                .map_err(std::io::Error::other)?;
        let conn = rustls::ClientConnection::new(config, name).map_err(std::io::Error::other)?;
        self.ask(rustls::StreamOwned::new(conn, stream))
    }

    /// Sends the request on `stream` and reads its status line.
    fn ask(&self, mut stream: impl Read + Write) -> Result<u16, ProbeError> {
        let request = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: volley-suite\r\nConnection: close\r\n\r\n",
            self.path, self.host_header
        );
        stream.write_all(request.as_bytes())?;
        // The status line is all we need: "HTTP/1.1 200 OK\r\n".
        let mut head = Vec::with_capacity(64);
        let mut buf = [0u8; 256];
        while !head.windows(2).any(|w| w == b"\r\n") && head.len() < 1024 {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
                Err(e) => return Err(e.into()),
            }
        }
        let line = String::from_utf8_lossy(&head);
        let mut words = line.split_whitespace();
        match (
            words.next(),
            words.next().and_then(|c| c.parse::<u16>().ok()),
        ) {
            (Some(v), Some(code)) if v.starts_with("HTTP/") => Ok(code),
            _ if head.is_empty() => Err(ProbeError::NoResponse),
            _ => Err(ProbeError::NotHttp),
        }
    }

    /// Whether something answers at the URL right now (any HTTP status): used before starting a
    /// target's process, to notice a port that is already taken.
    pub fn answers(&self) -> bool {
        self.probe(Duration::from_millis(500)).is_ok()
    }

    /// Polls until the URL answers 2xx or 3xx. Between attempts, `gone` is asked whether the
    /// target's process has exited (its exit status in words) and `stop` whether to give up.
    pub fn wait(
        &self,
        mut gone: impl FnMut() -> Option<String>,
        stop: impl Fn() -> bool,
    ) -> Result<Duration, HealthFailure> {
        let start = Instant::now();
        let deadline = start + self.timeout;
        loop {
            if stop() {
                return Err(HealthFailure::Stopped);
            }
            let now = Instant::now();
            let last = match self.probe(deadline.saturating_duration_since(now)) {
                Ok(code) if (200..400).contains(&code) => return Ok(start.elapsed()),
                Ok(code) => format!("it answered HTTP {code}"),
                Err(e) => e.to_string(),
            };
            if let Some(status) = gone() {
                return Err(HealthFailure::Exited(status));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(HealthFailure::TimedOut(format!(
                    "{} did not answer 2xx/3xx within {} (last attempt: {last})",
                    self.url,
                    humantime::format_duration(self.timeout)
                )));
            }
            std::thread::sleep(POLL_EVERY.min(deadline - now));
        }
    }
}

/// Why a health check gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HealthFailure {
    /// No 2xx/3xx answer within the time limit; the message says what the last attempt got.
    TimedOut(String),
    /// The target's process exited first (its exit status in words).
    Exited(String),
    /// The suite was interrupted.
    Stopped,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn answer_once(listener: &TcpListener, response: &'static [u8]) {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 1024];
        let _ = s.read(&mut buf);
        s.write_all(response).unwrap();
    }

    #[test]
    fn urls_are_parsed() {
        let h =
            HealthCheck::new("http://127.0.0.1:9/ready?deep=1", Duration::from_secs(1)).unwrap();
        assert_eq!(h.addr, "127.0.0.1:9".parse().unwrap());
        assert_eq!(h.host_header, "127.0.0.1:9");
        assert_eq!(h.path, "/ready?deep=1");
        assert!(HealthCheck::new("https://127.0.0.1/", Duration::ZERO).is_ok_and(|h| h.tls));
        assert!(HealthCheck::new("ftp://127.0.0.1/", Duration::ZERO).is_err());
        assert!(HealthCheck::new("nope", Duration::ZERO).is_err());
    }

    #[test]
    fn status_codes_and_failures() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", l.local_addr().unwrap());
        let h = HealthCheck::new(&url, Duration::from_secs(5)).unwrap();
        let server = std::thread::spawn(move || {
            answer_once(&l, b"HTTP/1.1 503 Service Unavailable\r\n\r\n");
            answer_once(&l, b"garbage\r\n");
            answer_once(&l, b"HTTP/1.1 204 No Content\r\n\r\n");
        });
        let probe = || h.probe(Duration::from_secs(1)).map_err(|e| e.to_string());
        assert_eq!(probe(), Ok(503));
        assert_eq!(probe(), Err("the answer is not HTTP".into()));
        assert!(h.wait(|| None, || false).is_ok());
        server.join().unwrap();
    }

    #[test]
    fn nothing_listening_times_out_and_an_exit_ends_the_wait() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let h = HealthCheck::new(
            &format!("http://127.0.0.1:{port}/"),
            Duration::from_millis(200),
        )
        .unwrap();
        assert!(!h.answers());
        match h.wait(|| None, || false) {
            Err(HealthFailure::TimedOut(why)) => {
                assert!(why.contains("within 200ms"), "{why}");
                assert!(why.contains("refused"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            h.wait(|| Some("exit status: 1".into()), || false),
            Err(HealthFailure::Exited("exit status: 1".into()))
        );
        assert_eq!(h.wait(|| None, || true), Err(HealthFailure::Stopped));
    }
}
