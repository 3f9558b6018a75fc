//! Plans: what the user asked for, validated and typed before any load is sent.
//!
//! [`RunSpec`] is the engine's whole input for one run. Quick mode builds it from flags; test plans
//! (files) will build several of them. Every user error is found while building it.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use crate::error::Error;
use crate::proto::http1::RequestBytes;

/// How load is generated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Closed model: `connections` loops, each sending its next request when the previous
    /// response is complete.
    Closed {
        /// Number of concurrent connections.
        connections: u32,
    },
    /// Open model: requests fall due at a fixed rate whatever the responses do.
    Open {
        /// Arrival rate, requests per second (finite, > 0).
        rate_per_sec: f64,
        /// Most requests in flight at once; a request due while this many are in flight is
        /// dropped and counted.
        max_in_flight: u32,
    },
}

impl Load {
    /// `"closed"` or `"open"`.
    pub fn model_name(&self) -> &'static str {
        match self {
            Load::Closed { .. } => "closed",
            Load::Open { .. } => "open",
        }
    }

    /// Connections (closed) or the in-flight cap (open).
    pub fn concurrency(&self) -> u32 {
        match *self {
            Load::Closed { connections } => connections,
            Load::Open { max_in_flight, .. } => max_in_flight,
        }
    }
}

/// When a run stops (after its warm-up).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Stop starting requests after this long.
    Duration(Duration),
    /// Stop after exactly this many requests (> 0).
    Requests(u64),
}

/// The HTTP request every iteration sends.
#[derive(Debug, Clone)]
pub struct RequestSpec {
    /// The URL as the user wrote it.
    pub url: String,
    /// Method, upper case.
    pub method: String,
    /// Extra headers, in order.
    pub headers: Vec<(String, String)>,
    /// Request body, bytes.
    pub body: Vec<u8>,
}

/// A validated, typed description of one run: everything the engine needs.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Name of the run (results folder, report titles).
    pub name: String,
    /// What to send.
    pub request: RequestSpec,
    /// The resolved target address.
    pub addr: SocketAddr,
    /// The request serialised once.
    pub request_bytes: RequestBytes,
    /// Closed or open model.
    pub load: Load,
    /// Duration or request count.
    pub limit: Limit,
    /// Time spent sending load before measuring; its results are discarded.
    pub warmup: Duration,
    /// Per-request timeout, connect included.
    pub timeout: Duration,
    /// Reuse connections (`false`: a new connection per request).
    pub keepalive: bool,
    /// Worker threads, each with its own runtime.
    pub threads: usize,
}

/// The user's choices for one run before validation (flags, or a plan file's fields).
#[derive(Debug, Clone)]
pub struct RunInput {
    /// Run name.
    pub name: String,
    /// Target URL (`http://host[:port]/path?query`).
    pub url: String,
    /// HTTP method.
    pub method: String,
    /// Headers as `Name: value` lines.
    pub headers: Vec<String>,
    /// Request body.
    pub body: Vec<u8>,
    /// Connections (closed model) or in-flight cap (open model); `None` = default.
    pub concurrency: Option<u32>,
    /// Arrival rate per second for the open model; `None` = closed model.
    pub rate_per_sec: Option<f64>,
    /// Run length; default 10 s when `requests` is also absent.
    pub duration: Option<Duration>,
    /// Request count instead of a duration.
    pub requests: Option<u64>,
    /// Warm-up length.
    pub warmup: Duration,
    /// Request timeout.
    pub timeout: Duration,
    /// Reuse connections.
    pub keepalive: bool,
    /// Worker threads; `None` = one per core.
    pub threads: Option<usize>,
}

/// Connections in the closed model when `-c` is absent.
pub const DEFAULT_CONNECTIONS: u32 = 50;
/// In-flight cap in the open model when `-c` is absent.
pub const DEFAULT_MAX_IN_FLIGHT: u32 = 1000;
/// Run length when neither `-d` nor `-n` is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

impl RunInput {
    /// A GET of `url` with every other choice at its default.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            name: "quick".into(),
            url: url.into(),
            method: "GET".into(),
            headers: Vec::new(),
            body: Vec::new(),
            concurrency: None,
            rate_per_sec: None,
            duration: None,
            requests: None,
            warmup: Duration::ZERO,
            timeout: crate::proto::http1::DEFAULT_TIMEOUT,
            keepalive: true,
            threads: None,
        }
    }

    /// Validates every choice and resolves the target.
    pub fn validate(self) -> Result<RunSpec, Error> {
        let invalid = |what: &str, why: String| Error::Invalid {
            what: what.to_string(),
            why,
        };
        let url = url::Url::parse(&self.url)
            .map_err(|e| invalid("URL", format!("`{}` is not a valid URL: {e}", self.url)))?;
        match url.scheme() {
            "http" => {}
            "https" => {
                return Err(invalid(
                    "URL",
                    format!("`{}`: https is not supported yet; use http://", self.url),
                ));
            }
            other => {
                return Err(invalid(
                    "URL",
                    format!("`{}`: scheme `{other}` is not http", self.url),
                ));
            }
        }
        let host = url
            .host_str()
            .ok_or_else(|| invalid("URL", format!("`{}` has no host", self.url)))?;
        let port = url.port_or_known_default().unwrap_or(80);
        let host_for_lookup = host.trim_start_matches('[').trim_end_matches(']');
        let addr = (host_for_lookup, port)
            .to_socket_addrs()
            .map_err(|e| invalid("URL", format!("cannot resolve host `{host}`: {e}")))?
            .next()
            .ok_or_else(|| invalid("URL", format!("host `{host}` resolves to no address")))?;
        let host_header = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let mut path_and_query = url.path().to_string();
        if let Some(q) = url.query() {
            path_and_query.push('?');
            path_and_query.push_str(q);
        }

        let method = self.method.to_ascii_uppercase();
        if method.is_empty() || !method.bytes().all(is_token_byte) {
            return Err(invalid(
                "method",
                format!("`{}` is not a valid HTTP method", self.method),
            ));
        }
        let headers = self
            .headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<Result<Vec<_>, _>>()?;

        let load = match self.rate_per_sec {
            None => Load::Closed {
                connections: positive_u32(
                    "connections (-c)",
                    self.concurrency,
                    DEFAULT_CONNECTIONS,
                )?,
            },
            Some(rate) => {
                if !rate.is_finite() || rate <= 0.0 {
                    return Err(invalid(
                        "rate",
                        format!("{rate} is not a positive number of requests per second"),
                    ));
                }
                Load::Open {
                    rate_per_sec: rate,
                    max_in_flight: positive_u32(
                        "max in-flight (-c)",
                        self.concurrency,
                        DEFAULT_MAX_IN_FLIGHT,
                    )?,
                }
            }
        };
        let limit = match (self.duration, self.requests) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "limit",
                    "give either a duration (-d) or a request count (-n), not both".into(),
                ));
            }
            (_, Some(0)) => {
                return Err(invalid("requests (-n)", "must be at least 1".into()));
            }
            (_, Some(n)) => Limit::Requests(n),
            (Some(d), None) if d.is_zero() => {
                return Err(invalid("duration (-d)", "must be longer than 0".into()));
            }
            (Some(d), None) => Limit::Duration(d),
            (None, None) => Limit::Duration(DEFAULT_DURATION),
        };
        if self.timeout.is_zero() {
            return Err(invalid("timeout", "must be longer than 0".into()));
        }
        let threads = match self.threads {
            Some(0) => return Err(invalid("threads", "must be at least 1".into())),
            Some(t) => t,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        // More threads than connections would leave threads idle.
        let threads = threads.min(load.concurrency() as usize).max(1);
        let request_bytes = RequestBytes::build(
            &method,
            &host_header,
            &path_and_query,
            &headers,
            &self.body,
            self.keepalive,
        );
        Ok(RunSpec {
            name: self.name,
            request: RequestSpec {
                url: self.url,
                method,
                headers,
                body: self.body,
            },
            addr,
            request_bytes,
            load,
            limit,
            warmup: self.warmup,
            timeout: self.timeout,
            keepalive: self.keepalive,
            threads,
        })
    }
}

fn positive_u32(what: &str, value: Option<u32>, default: u32) -> Result<u32, Error> {
    match value {
        Some(0) => Err(Error::Invalid {
            what: what.into(),
            why: "must be at least 1".into(),
        }),
        Some(v) => Ok(v),
        None => Ok(default),
    }
}

/// RFC 9110 token characters (header names, methods).
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Parses `Name: value` into a header pair, rejecting what would corrupt the request.
pub fn parse_header(line: &str) -> Result<(String, String), Error> {
    let invalid = |why: &str| Error::Invalid {
        what: "header (-H)".into(),
        why: format!("`{line}`: {why}"),
    };
    let (name, value) = line
        .split_once(':')
        .ok_or_else(|| invalid("expected `Name: value`"))?;
    let name = name.trim();
    let value = value.trim();
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        return Err(invalid(
            "the header name is empty or has invalid characters",
        ));
    }
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(invalid("the value contains a line break or NUL"));
    }
    Ok((name.to_string(), value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(input: RunInput) -> String {
        input.validate().unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_a_closed_ten_second_run() {
        let spec = RunInput::new("http://127.0.0.1:9/x?y=1")
            .validate()
            .unwrap();
        assert_eq!(
            spec.load,
            Load::Closed {
                connections: DEFAULT_CONNECTIONS
            }
        );
        assert_eq!(spec.limit, Limit::Duration(DEFAULT_DURATION));
        assert_eq!(spec.addr.port(), 9);
        let text = String::from_utf8_lossy(spec.request_bytes.as_bytes()).into_owned();
        assert!(text.starts_with("GET /x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"));
    }

    #[test]
    fn bad_inputs_say_what_is_wrong() {
        assert!(err(RunInput::new("not a url")).contains("not a valid URL"));
        assert!(err(RunInput::new("ftp://127.0.0.1/")).contains("scheme `ftp`"));
        let mut i = RunInput::new("http://127.0.0.1/");
        i.requests = Some(0);
        assert!(err(i).contains("at least 1"));
        let mut i = RunInput::new("http://127.0.0.1/");
        i.rate_per_sec = Some(-5.0);
        assert!(err(i).contains("not a positive number"));
        let mut i = RunInput::new("http://127.0.0.1/");
        i.headers = vec!["NoColon".into()];
        assert!(err(i).contains("expected `Name: value`"));
        let mut i = RunInput::new("http://127.0.0.1/");
        i.duration = Some(Duration::from_secs(1));
        i.requests = Some(5);
        assert!(err(i).contains("not both"));
        let mut i = RunInput::new("http://127.0.0.1/");
        i.method = "GE T".into();
        assert!(err(i).contains("not a valid HTTP method"));
    }

    #[test]
    fn threads_never_exceed_concurrency() {
        let mut i = RunInput::new("http://127.0.0.1/");
        i.concurrency = Some(1);
        i.threads = Some(8);
        assert_eq!(i.validate().unwrap().threads, 1);
    }
}
