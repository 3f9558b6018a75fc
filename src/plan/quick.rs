//! Quick mode: one URL from flags (`volley URL -c 64 -d 10s`) desugars into a plan file's
//! model, one scenario with one step, and goes through the same reader as a plan file
//! ([`super::read`]): one way from user input to a [`Plan`]. What is checked here is only what
//! the flags themselves mean (`-d` or `-n`, a header line's syntax, a rate's sign); values are
//! literal, never templates.

use std::path::PathBuf;
use std::time::Duration;

use toml::Spanned;

use super::connect::ConnectOptions;
use super::file::{
    ChecksFile, HeaderList, LoadFile, PlanFile, ScenarioFile, SizeText, StatusEntry, StepFile,
    TargetFile, TlsFile,
};
use super::header::parse_header;
use super::read::{Draft, Finish, ReadOptions};
use super::{Plan, QuickRequest, StepRequest};
use crate::error::Error;
use crate::redact::Secrets;

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
    pub body: String,
    /// Request body read from this file (`--body-file`), sent as it is; instead of `body`.
    pub body_file: Option<PathBuf>,
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
    /// `--group-by` selectors as written (`header:X-Backend`, `json:$.path`, `status`).
    pub group_by: Vec<String>,
    /// `--tag KEY=VALUE`: the run's tags.
    pub tags: Vec<(String, String)>,
    /// `--expect-status`: the statuses that are a success (the step's `checks.status`: others
    /// fail the check, and these are no error even when ≥ 400). Empty: 4xx/5xx are errors.
    pub expect_status: Vec<u16>,
    /// `--buckets`: the latency buckets' upper bounds; empty: 1-2-5.
    pub latency_buckets: Vec<Duration>,
    /// `--precision`: run until these figures are this precise (`-d` the most it runs).
    pub precision: Vec<crate::record::model::PrecisionGoal>,
    /// `--arrivals`: how the open model's arrivals are spaced (`None`: evenly).
    pub arrivals: Option<crate::schedule::ArrivalProcess>,
    /// `--seed`: the Poisson arrivals' seed (`None`: drawn and recorded).
    pub seed: Option<u64>,
    /// `--sse`, `--llm`: the request is a streaming step (`None`: an ordinary request).
    pub sse: Option<crate::plan::file::SseFile>,
    /// The load is a placeholder its caller replaces (find-max's steps): whether that load is
    /// steady enough for `precision` is the caller's to check, not the reader's.
    pub load_replaced: bool,
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

/// The flag each desugared value comes from: a value's span starts at its flag's index, so the
/// reader's errors say `invalid FLAG: …`. `load`, `timeout` and `request` name no flag of their own: the load
/// (`-c`, `--rate`, `-d`, `-n`), the timeout and the step.
static FLAGS: [&str; 16] = [
    "URL",
    "method",
    "header (-H)",
    "--body-file",
    "--proto",
    "--call",
    "--data",
    "--max-header-size",
    "--max-body-size",
    "load",
    "timeout",
    "request",
    "--group-by",
    "--expect-status",
    "--arrivals",
    "--sse / --llm",
];
const URL: usize = 0;
const METHOD: usize = 1;
const HEADER: usize = 2;
const BODY_FILE: usize = 3;
const PROTO: usize = 4;
const CALL: usize = 5;
const DATA: usize = 6;
const MAX_HEADER: usize = 7;
const MAX_BODY: usize = 8;
const LOAD: usize = 9;
const TIMEOUT: usize = 10;
const STEP: usize = 11;
const GROUP_BY: usize = 12;
const EXPECT: usize = 13;
const ARRIVALS: usize = 14;
const SSE: usize = 15;

/// A value from the flag at `index`.
fn from<T>(index: usize, value: T) -> Spanned<T> {
    Spanned::new(index..index + 1, value)
}

/// A duration in the plan format, exactly.
fn duration_text(index: usize, d: Duration) -> Spanned<String> {
    from(index, format!("{}ns", d.as_nanos()))
}

impl RunInput {
    /// A GET of `url` with every other choice at its default.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            name: "quick".into(),
            url: url.into(),
            method: "GET".into(),
            headers: Vec::new(),
            secret_headers: Vec::new(),
            body: String::new(),
            body_file: None,
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
            group_by: Vec::new(),
            tags: Vec::new(),
            expect_status: Vec::new(),
            latency_buckets: Vec::new(),
            precision: Vec::new(),
            arrivals: None,
            seed: None,
            sse: None,
            load_replaced: false,
        }
    }

    /// Checks the flags, desugars them into a plan and reads it with the plan reader. The
    /// result is prepared like a plan file's: without `--proto`, a gRPC call's schema is
    /// fetched from the target by [`Draft::prepare`].
    pub fn validate(self) -> Result<Draft, Error> {
        let share = self.segment.map(|s| (s, super::segment::quick_hash(&self)));
        let (file, quick) = self.desugar()?;
        let options = ReadOptions {
            threads: self.threads,
            secret_headers: self.secret_headers.clone(),
            latency_buckets: self.latency_buckets.clone(),
            precision: self.precision.clone(),
            seed: self.seed,
            load_replaced: self.load_replaced,
            ..ReadOptions::default()
        };
        let finish = Finish {
            share,
            quick: Some(quick),
        };
        super::read::read_flags(file, &FLAGS, &options, finish)
    }

    /// The plan file these flags stand for, and the request as the user gave it.
    fn desugar(&self) -> Result<(PlanFile, QuickSource), Error> {
        let secrets = Secrets::new(&self.secret_headers);
        let headers = self
            .headers
            .iter()
            .map(|h| parse_header(h, &secrets))
            .collect::<Result<Vec<_>, _>>()?;
        let (base_url, path_and_query) = split_url(&self.url);
        let scheme = base_url
            .split_once("://")
            .map(|(s, _)| s.to_ascii_lowercase());
        if let (None, Some(scheme @ ("grpc" | "grpcs"))) = (&self.grpc, scheme.as_deref()) {
            return Err(invalid(
                "URL",
                format!(
                    "a {scheme}:// URL calls a gRPC method: give --call package.Service/Method \
                     (its schema from --proto, or the server's reflection); for plain HTTP/2 \
                     requests write http:// or https:// with --protocol http2"
                ),
            ));
        }
        let step = self.step(path_and_query, &headers);
        let scenario = ScenarioFile {
            name: from(STEP, "default".into()),
            flow: None,
            start_after: None,
            load: from(LOAD, self.desugar_profile()?),
            steps: vec![step],
            pace: None,
            cookies: None,
        };
        let file = PlanFile {
            name: Some(self.name.clone()),
            target: self.target_file(base_url),
            threads: self.threads,
            vars: Default::default(),
            data: Default::default(),
            scenarios: vec![scenario],
            thresholds: Default::default(),
            watch: Vec::new(),
            distributed: None,
            report: None,
            precision: None,
            seed: None,
            tags: self.tags.iter().cloned().collect(),
            warmup: self.warmup,
        };
        let quick = QuickSource {
            url: self.url.clone(),
            method: self.method.to_ascii_uppercase(),
            headers,
        };
        Ok((file, quick))
    }

    /// `[target]`: the URL's scheme and authority, how to connect, the response limits.
    fn target_file(&self, base_url: String) -> TargetFile {
        let c = &self.connect;
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.to_string_lossy().into_owned());
        let tls = TlsFile {
            insecure: Some(c.insecure),
            cacert: path(&c.cacert),
            cert: path(&c.cert),
            key: path(&c.key),
            sni: c.sni.clone(),
            version: c.tls_version.clone().map(|v| from(URL, v)),
            zero_rtt: Some(from(URL, c.zero_rtt)),
        };
        let grpc = self.grpc.as_ref();
        let text = |p: &PathBuf| p.to_string_lossy().into_owned();
        TargetFile {
            base_url: from(URL, base_url),
            headers: Default::default(),
            secret_headers: None,
            timeout: Some(duration_text(TIMEOUT, self.timeout)),
            keepalive: Some(c.keepalive),
            protocol: Some(from(URL, c.protocol)),
            http2: None,
            // The URL says what a connection error is about, as it did before streams had a flag.
            streams: Some(from(URL, c.streams)),
            tls: Some(tls),
            source_addrs: c.source_addrs.clone().map(|a| from(URL, a)),
            proto: grpc.map_or_else(Vec::new, |g| {
                g.protos.iter().map(|p| from(PROTO, text(p))).collect()
            }),
            import_paths: grpc.map_or_else(Vec::new, |g| g.import_paths.iter().map(text).collect()),
            max_header_size: self
                .max_header_bytes
                .map(|b| from(MAX_HEADER, SizeText::Bytes(b))),
            max_body_size: self
                .max_body_bytes
                .map(|b| from(MAX_BODY, SizeText::Bytes(b))),
            group_by: self
                .group_by
                .iter()
                .map(|g| from(GROUP_BY, g.clone()))
                .collect(),
        }
    }

    /// The one step: the URL's path and query with the body, or the gRPC call with its message.
    fn step(&self, path_and_query: String, headers: &[(String, String)]) -> StepFile {
        let headers = HeaderList(
            headers
                .iter()
                .map(|(n, v)| (n.clone(), from(HEADER, v.clone())))
                .collect(),
        );
        let mut step = StepFile {
            name: from(STEP, "request".into()),
            operation: None,
            method: Some(from(METHOD, self.method.clone())),
            path: Some(from(URL, path_and_query)),
            grpc: None,
            sse: self.sse.clone().map(|s| from(SSE, s)),
            grpc_stream: None,
            websocket: None,
            headers,
            body: (!self.body.is_empty()).then(|| from(DATA, self.body.clone())),
            body_file: self
                .body_file
                .as_ref()
                .map(|p| from(BODY_FILE, p.to_string_lossy().into_owned())),
            json: None,
            think: None,
            weight: None,
            extract: Default::default(),
            checks: (!self.expect_status.is_empty()).then(|| ChecksFile {
                status: Some(from(
                    EXPECT,
                    self.expect_status
                        .iter()
                        .map(|&c| StatusEntry::Code(c))
                        .collect(),
                )),
                body_contains: None,
                json: None,
                headers: None,
                latency_under: None,
            }),
            group_by: Vec::new(),
        };
        if let Some(g) = &self.grpc {
            step.method = None;
            step.path = None;
            step.grpc = Some(from(CALL, g.call.clone()));
            step.body = (!g.data.trim().is_empty()).then(|| from(DATA, g.data.clone()));
        }
        step
    }

    /// `[scenario.load]`: `-c` connections (× streams each, one VU per stream), or `--rate`
    /// with `-c` in flight at most; for `-d` after the warm-up, or `-n` requests.
    fn desugar_profile(&self) -> Result<LoadFile, Error> {
        let duration = match (self.duration, self.requests) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "limit",
                    "give either a duration (-d) or a request count (-n), not both".into(),
                ));
            }
            (_, Some(0)) => return Err(invalid("requests (-n)", "must be at least 1".into())),
            (_, Some(_)) => None,
            (Some(d), None) if d.is_zero() => {
                return Err(invalid("duration (-d)", "must be longer than 0".into()));
            }
            // The profile's timeline starts with the warm-up.
            (Some(d), None) => Some(self.warmup + d),
            (None, None) => Some(self.warmup + DEFAULT_DURATION),
        };
        let mut load = LoadFile {
            profile: from(LOAD, String::new()),
            vus: None,
            duration: duration.map(|d| duration_text(LOAD, d)),
            start_vus: None,
            stages: None,
            rate: None,
            start_rate: None,
            time_unit: None,
            max_vus: None,
            iterations: self.requests,
            max_duration: None,
            preset: None,
            phases: None,
            arrivals: None,
        };
        let Some(rate) = self.rate_per_sec else {
            if self.arrivals.is_some() {
                return Err(invalid(
                    "--arrivals",
                    "spaces the open model's arrivals: give --rate too".into(),
                ));
            }
            let connections =
                positive_u32("connections (-c)", self.concurrency, DEFAULT_CONNECTIONS)?;
            let profile = if self.requests.is_some() {
                "iterations"
            } else {
                "constant-vus"
            };
            load.profile = from(LOAD, profile.into());
            load.vus = Some(connections.saturating_mul(self.connect.streams.max(1)));
            return Ok(load);
        };
        if !rate.is_finite() || rate <= 0.0 {
            return Err(invalid(
                "rate",
                format!("{rate} is not a positive number of requests per second"),
            ));
        }
        if rate < super::MIN_RATE_PER_SEC {
            return Err(invalid(
                "rate",
                format!(
                    "{rate} requests per second is less than one a day: a mistake for a load \
                     test (the least is {:.3e})",
                    super::MIN_RATE_PER_SEC
                ),
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
        load.profile = from(LOAD, "constant-arrival-rate".into());
        load.rate = Some(rate);
        load.arrivals = self.arrivals.map(|a| from(ARRIVALS, a.name().into()));
        load.max_vus = Some(positive_u32(
            "max in-flight (-c)",
            self.concurrency,
            DEFAULT_MAX_IN_FLIGHT,
        )?);
        Ok(load)
    }
}

/// A URL's scheme and authority, and its path and query (`/` when empty). Text that is not a
/// URL is passed on whole, for the reader to refuse.
fn split_url(text: &str) -> (String, String) {
    let Ok(mut url) = url::Url::parse(text) else {
        return (text.to_owned(), "/".into());
    };
    let mut path_and_query = url.path().to_string();
    if let Some(q) = url.query() {
        path_and_query.push('?');
        path_and_query.push_str(q);
    }
    if !path_and_query.starts_with('/') {
        path_and_query.insert(0, '/');
    }
    url.set_query(None);
    url.set_fragment(None);
    url.set_path("");
    (
        url.as_str().trim_end_matches('/').to_owned(),
        path_and_query,
    )
}

/// What quick mode records of the request as the user gave it, and how its plan differs from a
/// plan file's: no per-scenario or per-step groups (they would equal the totals), the URL as
/// written as the target.
#[derive(Debug, Clone)]
pub(crate) struct QuickSource {
    url: String,
    method: String,
    headers: Vec<(String, String)>,
}

impl QuickSource {
    /// Marks `plan` as quick mode's.
    pub(crate) fn decorate(self, plan: &mut Plan) {
        plan.source = None;
        plan.groups.clear();
        plan.target.base_url = self.url.clone();
        let scenario = &mut plan.scenarios[0];
        scenario.group = None;
        let step = &mut scenario.steps[0];
        step.group = None;
        let body_bytes = match &step.request {
            StepRequest::Static(r) => r.request.body.len() as u64,
            StepRequest::Dynamic(_) => 0,
        };
        let (url, method) = match &step.grpc {
            Some(m) => (
                format!("{}{}", self.url.trim_end_matches('/'), m.path()),
                "gRPC".into(),
            ),
            None => (self.url, self.method),
        };
        plan.quick = Some(QuickRequest {
            url,
            method,
            headers: self.headers,
            body_bytes,
        });
    }
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
#[path = "quick_tests.rs"]
mod tests;
