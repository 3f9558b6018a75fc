//! Prometheus remote write 1.0 (`--prometheus-rw URL`): a snapshot's [`series`] as a protobuf
//! `prometheus.WriteRequest`, snappy-compressed (block format), POSTed over HTTP/1.1.
//!
//! The messages are declared here with `prost`'s derive (the three messages remote write needs,
//! field numbers from Prometheus's `prompb/remote.proto` and `types.proto`), which avoids a build
//! step for one small schema. Compression is the `snap` crate's raw (block) encoder, as the
//! protocol requires (not the framed format). The client is blocking `std::net`, run on the
//! exporter's own thread, with a deadline: a down endpoint or a 4xx/5xx answer is a
//! [`PushError`], counted by the caller, never fatal to the run.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::{LiveSnapshot, series};

/// `prometheus.WriteRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteRequest {
    /// The series.
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

/// `prometheus.TimeSeries`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TimeSeries {
    /// Labels, `__name__` included, sorted by name.
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    /// Samples, oldest first.
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
}

/// `prometheus.Label`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    /// Label name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Label value.
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `prometheus.Sample`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    /// The value.
    #[prost(double, tag = "1")]
    pub value: f64,
    /// Milliseconds since the Unix epoch.
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// The write request of one snapshot: one sample per series at `snapshot.unix_ms`.
pub fn write_request(snapshot: &LiveSnapshot) -> WriteRequest {
    let timeseries = series(snapshot)
        .into_iter()
        .map(|s| {
            let mut labels: Vec<Label> = s
                .labels
                .into_iter()
                .map(|(name, value)| Label { name, value })
                .collect();
            labels.push(Label {
                name: "__name__".into(),
                value: s.name,
            });
            labels.sort_by(|a, b| a.name.cmp(&b.name));
            TimeSeries {
                labels,
                samples: vec![Sample {
                    value: s.value,
                    timestamp: snapshot.unix_ms,
                }],
            }
        })
        .collect();
    WriteRequest { timeseries }
}

/// The HTTP body of a push: the request, protobuf-encoded, then snappy-compressed.
pub fn encode(request: &WriteRequest) -> Vec<u8> {
    let raw = prost::Message::encode_to_vec(request);
    snap::raw::Encoder::new()
        .compress_vec(&raw)
        .expect("snappy compresses any input under 4 GiB")
}

/// Why a push failed.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The URL is not `http://host:port/path`.
    #[error("remote-write URL `{0}`: {1}")]
    Url(String, String),
    /// Nothing listens there.
    #[error("remote write: connection refused")]
    Refused,
    /// No answer within the deadline.
    #[error("remote write: no answer within {0:?}")]
    Timeout(Duration),
    /// The endpoint answered with an error status (its first line of body, cut to 200 bytes).
    #[error("remote write: HTTP {0}: {1}")]
    Status(u16, String),
    /// Any other I/O error or a malformed answer.
    #[error("remote write: {0}")]
    Io(String),
}

/// A remote-write endpoint.
#[derive(Debug, Clone)]
pub struct RemoteWrite {
    addr: SocketAddr,
    host: String,
    path: String,
    /// `Authorization` from the URL's user information (`http://user:password@host/…`).
    authorization: Option<String>,
    /// Deadline of one push.
    pub timeout: Duration,
}

impl RemoteWrite {
    /// The endpoint at `url` (`http://host:port/api/v1/write`), resolved now.
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
        Ok(Self {
            addr,
            host: format!("{host}:{port}"),
            path: parsed.path().to_string(),
            authorization: crate::redact::url_basic_auth(&parsed),
            timeout: Duration::from_secs(2),
        })
    }

    /// Pushes one snapshot (blocking, at most [`RemoteWrite::timeout`]).
    pub fn push(&self, snapshot: &LiveSnapshot) -> Result<(), PushError> {
        self.post(&encode(&write_request(snapshot)))
    }

    fn post(&self, body: &[u8]) -> Result<(), PushError> {
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
        let authorization = self
            .authorization
            .as_ref()
            .map(|a| format!("Authorization: {a}\r\n"))
            .unwrap_or_default();
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\n{authorization}Content-Type: application/x-protobuf\r\nContent-Encoding: snappy\r\nX-Prometheus-Remote-Write-Version: 0.1.0\r\nUser-Agent: volley\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.path,
            self.host,
            body.len()
        );
        conn.write_all(head.as_bytes()).map_err(io)?;
        conn.write_all(body).map_err(io)?;
        let mut answer = Vec::new();
        let mut buf = [0u8; 4096];
        // The status line and the start of the body are enough; at most 64 KiB are read.
        while answer.len() < 64 * 1024 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(PushError::Timeout(self.timeout));
            }
            conn.set_read_timeout(Some(left)).map_err(io)?;
            let n = conn.read(&mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&buf[..n]);
            if answer.windows(4).any(|w| w == b"\r\n\r\n")
                && status(&answer).is_some_and(|s| s < 300)
            {
                break;
            }
        }
        match status(&answer) {
            Some(code) if (200..300).contains(&code) => Ok(()),
            Some(code) => Err(PushError::Status(code, first_body_line(&answer))),
            None => Err(PushError::Io("no HTTP answer".into())),
        }
    }
}

fn status(answer: &[u8]) -> Option<u16> {
    let line = answer.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    line.strip_prefix("HTTP/1.")?.get(2..5)?.parse().ok()
}

fn first_body_line(answer: &[u8]) -> String {
    let at = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(answer.len(), |i| i + 4);
    let body = String::from_utf8_lossy(&answer[at..]);
    body.lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(200)
        .collect()
}

#[cfg(test)]
#[path = "remote_write_tests.rs"]
mod tests;
