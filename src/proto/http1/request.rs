//! The bytes of an HTTP/1.1 request: built once per run for a static request, or written per
//! send into a reused buffer for a templated one.

/// The static bytes of one request, built once per run and shared by every connection.
#[derive(Debug, Clone)]
pub struct RequestBytes {
    bytes: bytes::Bytes,
    expects_body: bool,
}

impl RequestBytes {
    /// Serialises a request.
    ///
    /// `host_header` is the `Host` value (host, plus `:port` when not 80); `path_and_query` starts
    /// with `/`. A `Host` or `User-Agent` among `headers` replaces the default. `keepalive = false`
    /// adds `Connection: close`. `Content-Length` is set when there is a body or the method usually
    /// carries one.
    pub fn build(
        method: &str,
        host_header: &str,
        path_and_query: &str,
        headers: &[(String, String)],
        body: &[u8],
        keepalive: bool,
    ) -> Self {
        let mut out = Vec::with_capacity(128 + body.len());
        write_request(
            &mut out,
            method,
            host_header,
            path_and_query.as_bytes(),
            headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())),
            body,
            keepalive,
        );
        Self {
            bytes: out.into(),
            expects_body: method != "HEAD",
        }
    }

    /// Whether a response to this request has a body (not for HEAD).
    pub fn expects_body(&self) -> bool {
        self.expects_body
    }

    /// The serialised request.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Size on the wire, bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True when the request has no bytes (never, for a built request).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// Serialises a request into `out` (appending). A `Host` or `User-Agent` among `headers` replaces
/// the default; `Content-Length` is added for a body or a method that usually has one;
/// `keepalive = false` adds `Connection: close`.
pub fn write_request<'a>(
    out: &mut Vec<u8>,
    method: &str,
    host_header: &str,
    path_and_query: &[u8],
    headers: impl Iterator<Item = (&'a str, &'a [u8])> + Clone,
    body: &[u8],
    keepalive: bool,
) {
    let has = |name: &str| headers.clone().any(|(n, _)| n.eq_ignore_ascii_case(name));
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(path_and_query);
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let push = |out: &mut Vec<u8>, name: &str, value: &[u8]| {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    };
    if !has("host") {
        push(out, "Host", host_header.as_bytes());
    }
    if !has("user-agent") {
        push(
            out,
            "User-Agent",
            concat!("volley/", env!("CARGO_PKG_VERSION")).as_bytes(),
        );
    }
    for (name, value) in headers.clone() {
        push(out, name, value);
    }
    let method_has_body = matches!(method, "POST" | "PUT" | "PATCH");
    if (!body.is_empty() || method_has_body) && !has("content-length") {
        let mut digits = itoa_buf(body.len());
        push(out, "Content-Length", digits.as_bytes_mut());
    }
    if !keepalive && !has("connection") {
        push(out, "Connection", b"close");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}

/// A decimal number formatted on the stack.
struct Digits {
    buf: [u8; 20],
    start: usize,
}

impl Digits {
    fn as_bytes_mut(&mut self) -> &[u8] {
        &self.buf[self.start..]
    }
}

fn itoa_buf(mut n: usize) -> Digits {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    Digits { buf, start: i }
}
