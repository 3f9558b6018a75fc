//! Quick mode: one URL from flags (`volley URL -c 64 -d 10s`) becomes a one-scenario,
//! one-step [`Plan`], so quick runs and plan files share one engine path.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::connect::ConnectOptions;
use super::header::{is_header_name, is_token_byte, parse_header};
use super::{
    Flow, Iterations, Plan, Profile, QuickRequest, Scenario, StaticRequest, Step, StepRequest,
    Target, Templates,
};
use crate::error::Error;
use crate::proto::conn::Limits;
use crate::proto::grpc::{GrpcMethod, GrpcSchema};
use crate::proto::message::{Capture, Request, RequestKind};
use crate::redact::Secrets;
use crate::schedule::Ramp;

/// When a run stops (after its warm-up).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    /// Stop starting requests after this long.
    Duration(Duration),
    /// Stop after exactly this many requests (> 0).
    Requests(u64),
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
    /// Headers whose values are secret besides the usual ones (`--secret-header`).
    pub secret_headers: Vec<String>,
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
    /// Protocol, TLS, keep-alive, streams and source addresses.
    pub connect: ConnectOptions,
    /// A unary gRPC call instead of an HTTP request.
    pub grpc: Option<GrpcInput>,
    /// Worker threads; `None` = one per core.
    pub threads: Option<usize>,
    /// Largest response head, bytes; `None` = the default (64 KiB).
    pub max_header_bytes: Option<u64>,
    /// Largest response body, bytes; `None` = no limit.
    pub max_body_bytes: Option<u64>,
    /// Run only this share of the test (`--segment i/N`); `None` = the whole.
    pub segment: Option<crate::schedule::Segment>,
}

/// A quick-mode gRPC call: `--proto`, `--import-path`, `--call`, `--data`.
#[derive(Debug, Clone, Default)]
pub struct GrpcInput {
    /// `.proto` files declaring the service.
    pub protos: Vec<PathBuf>,
    /// Folders searched for imports.
    pub import_paths: Vec<PathBuf>,
    /// `package.Service/Method`.
    pub call: String,
    /// The request message as JSON (`{}` when empty).
    pub data: String,
}

/// Connections in the closed model when `-c` is absent.
pub const DEFAULT_CONNECTIONS: u32 = 50;
/// In-flight cap in the open model when `-c` is absent.
pub const DEFAULT_MAX_IN_FLIGHT: u32 = 1000;
/// Run length when neither `-d` nor `-n` is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// A quick run's request head, checked: the method, the secret headers and the headers.
type RequestHead = (String, Secrets, Vec<(String, String)>);

impl RunInput {
    /// A GET of `url` with every other choice at its default.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            name: "quick".into(),
            url: url.into(),
            method: "GET".into(),
            headers: Vec::new(),
            secret_headers: Vec::new(),
            body: Vec::new(),
            concurrency: None,
            rate_per_sec: None,
            duration: None,
            requests: None,
            warmup: Duration::ZERO,
            timeout: crate::proto::conn::DEFAULT_TIMEOUT,
            connect: ConnectOptions::default(),
            grpc: None,
            threads: None,
            max_header_bytes: None,
            max_body_bytes: None,
            segment: None,
        }
    }

    /// Validates every choice, resolves the target, and builds the plan.
    pub fn validate(self) -> Result<Plan, Error> {
        let share = self.segment.map(|s| (s, super::segment::quick_hash(&self)));
        let (method, secrets, headers) = self.head()?;
        if self.timeout.is_zero() {
            return Err(invalid("timeout", "must be longer than 0".into()));
        }
        let (mut target, path_and_query) = self.target()?;
        let call = self.call(&target, path_and_query)?;
        self.limits(&mut target)?;
        target.connect = target.connect.with_limits(target.limits);
        let profile = self.profile(target.connect.streams)?;
        let threads = self.threads()?;
        let request = Request {
            method: http::Method::from_bytes(method.as_bytes()).map_err(|_| {
                invalid(
                    "method",
                    format!("`{}` is not a valid HTTP method", self.method),
                )
            })?,
            authority: target.host_header.clone(),
            path_and_query: call.path_and_query,
            headers: headers.clone(),
            body: call.body,
            kind: if call.grpc.is_some() {
                RequestKind::Grpc
            } else {
                RequestKind::Http
            },
            capture: Capture::default(),
        };
        let prepared = target
            .connect
            .client_for(call.grpc.is_some())
            .prepare(&request)
            .map_err(|e| invalid("request", e.to_string()))?;
        let quick = QuickRequest {
            url: call.display_url,
            method: if call.grpc.is_some() {
                "gRPC".into()
            } else {
                method
            },
            headers,
            body_bytes: request.body.len() as u64,
        };
        let step = Step {
            name: "request".into(),
            request: StepRequest::Static(Box::new(StaticRequest { request, prepared })),
            grpc: call.grpc,
            think: Duration::ZERO,
            extract: Vec::new(),
            checks: Vec::new(),
            capture: false,
            expected_status: Vec::new(),
            group: None,
            first_check: 0,
        };
        let scenario = Scenario {
            name: "default".into(),
            start_after: Duration::ZERO,
            profile,
            flow: Flow::Sequential,
            steps: vec![step],
            phases: Vec::new(),
            group: None,
        };
        let max_vus = scenario.max_vus();
        Ok(Plan {
            name: self.name,
            source: None,
            target,
            scenarios: vec![scenario],
            thresholds: Vec::new(),
            warmup: self.warmup,
            // More threads than connections would leave threads idle.
            threads: threads.min(max_vus as usize).max(1),
            templates: Arc::new(Templates::new(BTreeMap::new(), BTreeMap::new())),
            groups: Vec::new(),
            quick: Some(quick),
            secrets,
            share: None,
        })
        .and_then(|plan| super::segment::apply_if(plan, share))
    }

    /// The method, the secret headers and the headers, checked.
    fn head(&self) -> Result<RequestHead, Error> {
        let method = self.method.to_ascii_uppercase();
        if method.is_empty() || !method.bytes().all(is_token_byte) {
            return Err(invalid(
                "method",
                format!("`{}` is not a valid HTTP method", self.method),
            ));
        }
        if let Some(bad) = self.secret_headers.iter().find(|n| !is_header_name(n)) {
            return Err(invalid(
                "--secret-header",
                format!("`{bad}` is not a header name"),
            ));
        }
        let secrets = Secrets::new(&self.secret_headers);
        let headers = self
            .headers
            .iter()
            .map(|h| parse_header(h, &secrets))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((method, secrets, headers))
    }

    /// Worker threads: `--threads`, or one per core.
    fn threads(&self) -> Result<usize, Error> {
        match self.threads {
            Some(0) => Err(invalid("threads", "must be at least 1".into())),
            Some(t) => Ok(t),
            None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
        }
    }

    /// The resolved target (no base path: the URL's path is the request's), and the URL's
    /// path and query.
    fn target(&self) -> Result<(Target, String), Error> {
        // A gRPC call speaks HTTP/2 whatever the URL's scheme.
        let connect = ConnectOptions {
            http2: self.connect.http2 || self.grpc.is_some(),
            ..self.connect.clone()
        };
        let mut target = super::read::resolve_target(
            &self.url,
            Vec::new(),
            self.timeout,
            &connect,
            self.grpc.is_some(),
        )
        .map_err(|why| invalid("URL", why.to_string()))?;
        let url = url::Url::parse(&self.url).map_err(|e| invalid("URL", e.to_string()))?;
        let mut path_and_query = url.path().to_string();
        if let Some(q) = url.query() {
            path_and_query.push('?');
            path_and_query.push_str(q);
        }
        target.base_path = String::new();
        Ok((target, path_and_query))
    }

    /// What is called: the URL's path with the body, or a gRPC method with its message encoded.
    fn call(&self, target: &Target, path_and_query: String) -> Result<Call, Error> {
        let Some(g) = &self.grpc else {
            return Ok(Call {
                grpc: None,
                path_and_query,
                body: Bytes::from(self.body.clone()),
                display_url: self.url.clone(),
            });
        };
        let schema = if g.protos.is_empty() {
            // No .proto: ask the server (gRPC server reflection).
            let (service, _) = crate::proto::grpc::split_call(&g.call)
                .map_err(|e| invalid("--call", e.to_string()))?;
            crate::proto::reflection::fetch_blocking(
                target.connect.client_for(true),
                &target.host_header,
                &[service],
                self.timeout,
            )
            .map_err(|e| {
                invalid(
                    "--call",
                    format!("{e} (without --proto, the schema comes from the server)"),
                )
            })?
        } else {
            GrpcSchema::compile(&g.protos, &g.import_paths)
                .map_err(|e| invalid("--proto", e.to_string()))?
        };
        let m = schema
            .method(&g.call)
            .map_err(|e| invalid("--call", e.to_string()))?;
        let data = if g.data.trim().is_empty() {
            "{}"
        } else {
            &g.data
        };
        let body = m
            .encode_json(data)
            .map_err(|e| invalid("--data", e.to_string()))?;
        Ok(Call {
            path_and_query: m.path().to_owned(),
            display_url: format!("{}{}", self.url.trim_end_matches('/'), m.path()),
            grpc: Some(Arc::new(m)),
            body,
        })
    }

    /// `--max-header-size` and `--max-body-size`, into the target's limits.
    fn limits(&self, target: &mut Target) -> Result<(), Error> {
        if let Some(bytes) = self.max_header_bytes {
            target.limits.max_head_bytes = Limits::check_head(bytes)
                .map_err(|why| invalid("--max-header-size", why.to_string()))?;
        }
        if let Some(bytes) = self.max_body_bytes {
            target.limits.max_body_bytes = Some(
                Limits::check_body(bytes)
                    .map_err(|why| invalid("--max-body-size", why.to_string()))?,
            );
        }
        Ok(())
    }

    /// The load: `-c` connections (× `streams` each), or `--rate` with `-c` in flight at most;
    /// for `-d` (after the warm-up) or `-n` requests.
    fn profile(&self, streams: u32) -> Result<Profile, Error> {
        let limit = match (self.duration, self.requests) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "limit",
                    "give either a duration (-d) or a request count (-n), not both".into(),
                ));
            }
            (_, Some(0)) => return Err(invalid("requests (-n)", "must be at least 1".into())),
            (_, Some(n)) => Limit::Requests(n),
            (Some(d), None) if d.is_zero() => {
                return Err(invalid("duration (-d)", "must be longer than 0".into()));
            }
            (Some(d), None) => Limit::Duration(d),
            (None, None) => Limit::Duration(DEFAULT_DURATION),
        };
        // With -n the scenario runs until its iterations are done; with -d for that long after
        // the warm-up (a profile's timeline starts with the warm-up).
        let (length, count) = match limit {
            Limit::Duration(d) => (self.warmup + d, None),
            Limit::Requests(n) => (Duration::from_secs(u32::MAX.into()), Some(n)),
        };
        let Some(rate) = self.rate_per_sec else {
            let connections =
                positive_u32("connections (-c)", self.concurrency, DEFAULT_CONNECTIONS)?;
            // Each connection carries `streams` requests at once (HTTP/2), one per VU.
            let vus = connections.saturating_mul(streams);
            return Ok(Profile::Vus {
                ramp: Ramp::constant(f64::from(vus), length),
                iterations: count.map_or(Iterations::Unlimited, Iterations::Shared),
                max_duration: None,
            });
        };
        if !rate.is_finite() || rate <= 0.0 {
            return Err(invalid(
                "rate",
                format!("{rate} is not a positive number of requests per second"),
            ));
        }
        if rate > super::MAX_RATE_PER_SEC {
            return Err(invalid(
                "rate",
                format!(
                    "{rate} requests per second is more than volley allows ({})",
                    super::MAX_RATE_PER_SEC
                ),
            ));
        }
        Ok(Profile::Arrival {
            ramp: Ramp::constant(rate, length),
            max_vus: positive_u32(
                "max in-flight (-c)",
                self.concurrency,
                DEFAULT_MAX_IN_FLIGHT,
            )?,
            limit: count,
        })
    }
}

/// What a quick run calls.
struct Call {
    /// The gRPC method, for a gRPC call.
    grpc: Option<Arc<GrpcMethod>>,
    /// The request's path and query.
    path_and_query: String,
    /// The body (a gRPC call: its message, encoded).
    body: Bytes,
    /// The URL shown in reports (a gRPC call: with the method's path).
    display_url: String,
}

/// A flag's value is wrong.
fn invalid(what: &str, why: String) -> Error {
    Error::Invalid {
        what: what.to_string(),
        why,
    }
}

fn positive_u32(what: &str, value: Option<u32>, default: u32) -> Result<u32, Error> {
    match value {
        Some(0) => Err(Error::Invalid {
            what: what.into(),
            why: "must be at least 1".into(),
        }),
        Some(v) if v > super::MAX_VUS => Err(Error::Invalid {
            what: what.into(),
            why: format!("{v} is more than volley allows ({})", super::MAX_VUS),
        }),
        Some(v) => Ok(v),
        None => Ok(default),
    }
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
        let scenario = &spec.scenarios[0];
        assert_eq!(scenario.max_vus(), DEFAULT_CONNECTIONS);
        assert!(!scenario.is_open());
        assert_eq!(scenario.duration(), Some(DEFAULT_DURATION));
        assert_eq!(spec.target.addr.port(), 9);
        let StepRequest::Static(r) = &scenario.steps[0].request else {
            panic!("quick mode requests are static");
        };
        let text = String::from_utf8_lossy(r.prepared.http1_bytes().unwrap()).into_owned();
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
        i.headers = vec!["X-Key: s3cr3t\r\nInjected: 1".into()];
        i.secret_headers = vec!["x-key".into()];
        let e = err(i);
        assert!(
            e.contains("`X-Key: [redacted]`: the value contains a line break"),
            "{e}"
        );
        let mut i = RunInput::new("http://127.0.0.1/");
        i.duration = Some(Duration::from_secs(1));
        i.requests = Some(5);
        assert!(err(i).contains("not both"));
        let mut i = RunInput::new("http://127.0.0.1/");
        i.method = "GE T".into();
        assert!(err(i).contains("not a valid HTTP method"));
    }

    #[test]
    fn response_limits_are_checked() {
        let mut i = RunInput::new("http://127.0.0.1/");
        i.max_header_bytes = Some(8192);
        i.max_body_bytes = Some(1 << 20);
        let limits = i.validate().unwrap().target.limits;
        assert_eq!(limits.max_head_bytes, 8192);
        assert_eq!(limits.max_body_bytes, Some(1 << 20));
        let limits = RunInput::new("http://127.0.0.1/")
            .validate()
            .unwrap()
            .target
            .limits;
        assert_eq!(limits, Limits::default());
        let mut i = RunInput::new("http://127.0.0.1/");
        i.max_header_bytes = Some(10);
        assert!(err(i).contains("invalid --max-header-size: must be between 1KiB and 16MiB"));
        let mut i = RunInput::new("http://127.0.0.1/");
        i.max_body_bytes = Some(0);
        assert!(err(i).contains("invalid --max-body-size: must be at least 1 byte"));
    }

    #[test]
    fn threads_never_exceed_concurrency() {
        let mut i = RunInput::new("http://127.0.0.1/");
        i.concurrency = Some(1);
        i.threads = Some(8);
        assert_eq!(i.validate().unwrap().threads, 1);
    }
}
