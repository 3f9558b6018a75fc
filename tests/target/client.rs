//! A minimal raw HTTP/1.1 client for the target tests: exact control of the
//! bytes on the wire, keep-alive, and visibility of broken responses.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Upper bound for any single test I/O wait, so a bug fails instead of hanging.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// A parsed response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as UTF-8 text.
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("utf-8 body")
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

/// One keep-alive HTTP/1.1 connection.
pub struct Conn {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    /// Connects to `addr` with TCP_NODELAY.
    pub async fn connect(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).unwrap();
        Conn {
            stream,
            buf: Vec::with_capacity(8192),
        }
    }

    /// Writes a request (with `Content-Length` when `body` is not empty).
    pub async fn send(
        &mut self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> io::Result<()> {
        let mut req = format!("{method} {target} HTTP/1.1\r\nHost: test\r\n");
        for (name, value) in headers {
            req.push_str(&format!("{name}: {value}\r\n"));
        }
        if !body.is_empty() || method == "POST" || method == "PUT" {
            req.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        req.push_str("\r\n");
        let mut bytes = req.into_bytes();
        bytes.extend_from_slice(body);
        self.stream.write_all(&bytes).await
    }

    /// Sends a request and reads its response.
    pub async fn request(
        &mut self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Response {
        self.send(method, target, headers, body)
            .await
            .expect("send");
        let head_only = method == "HEAD";
        tokio::time::timeout(IO_TIMEOUT, self.read_response(head_only))
            .await
            .expect("response in time")
            .expect("valid response")
    }

    /// `GET target`.
    pub async fn get(&mut self, target: &str) -> Response {
        self.request("GET", target, &[], b"").await
    }

    /// Reads bytes into the buffer; `Ok(0)` on EOF.
    async fn fill(&mut self) -> io::Result<usize> {
        self.buf.reserve(8192);
        self.stream.read_buf(&mut self.buf).await
    }

    /// Reads one response (no body if `head_only`).
    pub async fn read_response(&mut self, head_only: bool) -> io::Result<Response> {
        let (status, headers) = loop {
            let mut raw = [httparse::EMPTY_HEADER; 64];
            let mut resp = httparse::Response::new(&mut raw);
            match resp.parse(&self.buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let status = resp.code.unwrap();
                    let headers: Vec<(String, String)> = resp
                        .headers
                        .iter()
                        .map(|h| {
                            (
                                h.name.to_owned(),
                                String::from_utf8_lossy(h.value).into_owned(),
                            )
                        })
                        .collect();
                    self.buf.drain(..len);
                    break (status, headers);
                }
                Ok(httparse::Status::Partial) => {
                    if self.fill().await? == 0 {
                        return Err(io::ErrorKind::UnexpectedEof.into());
                    }
                }
                Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
            }
        };
        let mut response = Response {
            status,
            headers,
            body: Vec::new(),
        };
        if head_only || matches!(status, 204 | 304) {
            return Ok(response);
        }
        if let Some(len) = response.header("content-length") {
            let len: usize = len.parse().unwrap();
            while self.buf.len() < len {
                if self.fill().await? == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
            }
            response.body = self.buf.drain(..len).collect();
        } else if response
            .header("transfer-encoding")
            .is_some_and(|te| te.contains("chunked"))
        {
            response.body = self.read_chunked().await?;
        } else {
            // Delimited by close.
            while self.fill().await? > 0 {}
            response.body = std::mem::take(&mut self.buf);
        }
        Ok(response)
    }

    async fn read_chunked(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let (start, size) = loop {
                match httparse::parse_chunk_size(&self.buf) {
                    Ok(httparse::Status::Complete((start, size))) => break (start, size as usize),
                    Ok(httparse::Status::Partial) => {
                        if self.fill().await? == 0 {
                            return Err(io::ErrorKind::UnexpectedEof.into());
                        }
                    }
                    Err(_) => return Err(io::ErrorKind::InvalidData.into()),
                }
            };
            // Chunk data plus its CRLF (or the final CRLF after a 0 chunk).
            while self.buf.len() < start + size + 2 {
                if self.fill().await? == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
            }
            body.extend_from_slice(&self.buf[start..start + size]);
            self.buf.drain(..start + size + 2);
            if size == 0 {
                return Ok(body);
            }
        }
    }

    /// Reads everything until EOF (or an error), with a timeout.
    pub async fn read_to_end(&mut self) -> io::Result<Vec<u8>> {
        let mut out = std::mem::take(&mut self.buf);
        tokio::time::timeout(IO_TIMEOUT, self.stream.read_to_end(&mut out))
            .await
            .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))??;
        Ok(out)
    }
}
