//! Where the time of one exchange went, and what its TLS handshake settled on: what the protocols
//! hand the recorder.

/// Where the time of one exchange went, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timing {
    /// TCP connect, when this exchange opened the connection; else 0.
    pub connect_us: u64,
    /// TLS handshake, when this exchange opened the connection; else 0.
    pub tls_us: u64,
    /// From handing the request to the connection until the first byte of the response head
    /// (HTTP/2: until the response headers were decoded): the server's think time plus the
    /// network, like k6's `http_req_waiting`.
    pub wait_us: u64,
    /// What the TLS handshake settled on, when this exchange opened a TLS connection.
    pub tls: Option<Negotiated>,
}

/// What one TLS handshake settled on: the protocol version and the ALPN protocol. Two bytes,
/// copied once per new connection into the timing of the request that opened it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    /// The protocol version.
    pub version: SessionVersion,
    /// The application protocol the server chose by ALPN.
    pub alpn: Alpn,
}

/// The TLS version a handshake settled on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionVersion {
    /// TLS 1.2.
    Tls12,
    /// TLS 1.3.
    Tls13,
    /// Another version (rustls negotiates only the two above).
    Other,
}

/// The application protocol a server chose by ALPN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alpn {
    /// The server chose none (or none was offered).
    None,
    /// HTTP/2.
    H2,
    /// HTTP/1.1.
    Http11,
    /// Another protocol.
    Other,
    /// HTTP/3 (over QUIC).
    H3,
}

impl Negotiated {
    /// How many distinct values there are (for counting them in an array).
    pub const COUNT: usize = 15;

    /// What `conn`'s handshake settled on.
    pub fn of(conn: &rustls::ClientConnection) -> Self {
        let version = match conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_2) => SessionVersion::Tls12,
            Some(rustls::ProtocolVersion::TLSv1_3) => SessionVersion::Tls13,
            _ => SessionVersion::Other,
        };
        let alpn = match conn.alpn_protocol() {
            None => Alpn::None,
            Some(b"h2") => Alpn::H2,
            Some(b"http/1.1") => Alpn::Http11,
            Some(_) => Alpn::Other,
        };
        Self { version, alpn }
    }

    /// A dense index in `0..COUNT`.
    pub fn index(self) -> usize {
        self.version as usize * 5 + self.alpn as usize
    }

    /// The value of [`Negotiated::index`] `i` (`None` outside `0..COUNT`).
    pub fn from_index(i: usize) -> Option<Self> {
        let version = [
            SessionVersion::Tls12,
            SessionVersion::Tls13,
            SessionVersion::Other,
        ]
        .get(i / 5)?;
        let alpn = [Alpn::None, Alpn::H2, Alpn::Http11, Alpn::Other, Alpn::H3][i % 5];
        Some(Self {
            version: *version,
            alpn,
        })
    }

    /// The version as the record writes it: `TLSv1.2`, `TLSv1.3`.
    pub fn version_name(self) -> &'static str {
        match self.version {
            SessionVersion::Tls12 => "TLSv1.2",
            SessionVersion::Tls13 => "TLSv1.3",
            SessionVersion::Other => "other",
        }
    }

    /// The ALPN protocol as the record writes it (`h2`, `http/1.1`), `None` when none was chosen.
    pub fn alpn_name(self) -> Option<&'static str> {
        match self.alpn {
            Alpn::None => None,
            Alpn::H2 => Some("h2"),
            Alpn::Http11 => Some("http/1.1"),
            Alpn::Other => Some("other"),
            Alpn::H3 => Some("h3"),
        }
    }
}
