//! A small blocking HTTP/1.1 client for a generator's requests to its coordinator: one
//! connection per request (`Connection: close`), bounded in time, JSON in and out.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::super::wire::Refused;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a request may wait for its reply.
const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest reply read, bytes.
const MAX_REPLY_BYTES: u64 = 1 << 20;

/// Why a request to the coordinator failed.
#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    /// The `--join` URL is not `http://HOST:PORT`.
    #[error("--join {0}: give the coordinator as http://HOST:PORT")]
    Url(String),
    /// No connection, or it broke.
    #[error("coordinator {addr}: {cause}")]
    Io {
        /// The coordinator.
        addr: String,
        /// What failed.
        cause: std::io::Error,
    },
    /// A reply that is not HTTP or not the JSON expected.
    #[error("coordinator {addr}: unexpected reply: {why}")]
    Reply {
        /// The coordinator.
        addr: String,
        /// Why.
        why: String,
    },
    /// The coordinator refused the request.
    #[error("coordinator {addr} refused ({status}): {why}")]
    Refused {
        /// The coordinator.
        addr: String,
        /// The HTTP status.
        status: u16,
        /// Its reason.
        why: String,
    },
}

impl CoordinatorError {
    /// Whether the coordinator answered and said no (rather than could not be reached).
    pub fn is_refusal(&self) -> bool {
        matches!(self, Self::Refused { .. })
    }
}

/// The coordinator, as a generator talks to it.
#[derive(Debug, Clone)]
pub struct CoordinatorClient {
    host: String,
    token: String,
}

impl CoordinatorClient {
    /// A client of the coordinator at `url` (`http://HOST:PORT`), with the shared `token`.
    pub fn new(url: &str, token: &str) -> Result<Self, CoordinatorError> {
        let parsed = url::Url::parse(url).map_err(|_| CoordinatorError::Url(url.to_string()))?;
        let host = parsed
            .host_str()
            .ok_or_else(|| CoordinatorError::Url(url.into()))?;
        if parsed.scheme() != "http" || !matches!(parsed.path(), "" | "/") {
            return Err(CoordinatorError::Url(url.to_string()));
        }
        let port = parsed.port().unwrap_or(80);
        let host = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        Ok(Self {
            host,
            token: token.to_string(),
        })
    }

    fn io(&self, cause: std::io::Error) -> CoordinatorError {
        CoordinatorError::Io {
            addr: self.host.clone(),
            cause,
        }
    }

    fn reply_error(&self, why: impl Into<String>) -> CoordinatorError {
        CoordinatorError::Reply {
            addr: self.host.clone(),
            why: why.into(),
        }
    }

    fn connect(&self) -> Result<TcpStream, CoordinatorError> {
        let addrs: Vec<SocketAddr> = self
            .host
            .to_socket_addrs()
            .map_err(|e| self.io(e))?
            .collect();
        let mut last = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        Err(self.io(last.unwrap_or_else(|| std::io::ErrorKind::NotFound.into())))
    }

    /// POSTs `body` (JSON bytes) to `path` and parses the JSON reply.
    pub fn post_bytes<R: DeserializeOwned>(
        &self,
        path: &str,
        body: &[u8],
    ) -> Result<R, CoordinatorError> {
        let mut stream = self.connect()?;
        stream
            .set_read_timeout(Some(IO_TIMEOUT))
            .and_then(|()| stream.set_write_timeout(Some(IO_TIMEOUT)))
            .map_err(|e| self.io(e))?;
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.host,
            self.token,
            body.len()
        );
        stream
            .write_all(head.as_bytes())
            .and_then(|()| stream.write_all(body))
            .map_err(|e| self.io(e))?;
        let mut reply = Vec::new();
        stream
            .take(MAX_REPLY_BYTES)
            .read_to_end(&mut reply)
            .map_err(|e| self.io(e))?;
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        let at = match response.parse(&reply) {
            Ok(httparse::Status::Complete(at)) => at,
            _ => return Err(self.reply_error("not an HTTP response")),
        };
        let status = response.code.unwrap_or(0);
        let body = &reply[at..];
        if status != 200 {
            let why = serde_json::from_slice::<Refused>(body)
                .map_or_else(|_| String::from_utf8_lossy(body).into_owned(), |r| r.error);
            return Err(CoordinatorError::Refused {
                addr: self.host.clone(),
                status,
                why,
            });
        }
        serde_json::from_slice(body).map_err(|e| self.reply_error(e.to_string()))
    }

    /// POSTs `body` as JSON to `path` and parses the JSON reply.
    pub fn post<B: Serialize, R: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<R, CoordinatorError> {
        let bytes = serde_json::to_vec(body).expect("requests serialise");
        self.post_bytes(path, &bytes)
    }
}
