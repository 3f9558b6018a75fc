//! The target of a plan: `[target]` → [`Target`] (URL, headers, timeout, and how to connect:
//! protocol, TLS, streams, source addresses), and the gRPC schema of its `proto` files.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::{Ctx, Resolve, ResolveError, Schemas, parse_duration, system_resolve};
use crate::error::Error;
use crate::plan::Target;
use crate::plan::connect::{self, ConnectOptions, ConnectOptionsError};
use crate::plan::file::{PlanFile, SizeText, TargetFile};
use crate::plan::group_by::{self, GroupBy, GroupSelector};
use crate::plan::set_key::SetKey;
use crate::plan::template::{Templates, has_template_syntax};
use crate::proto::client::{ClientError, Protocol, UnknownProtocol};
use crate::proto::conn::{Limits, parse_size};
use crate::proto::grpc::{GrpcSchema, split_call};
use crate::proto::message::Capture;
use crate::proto::pick::PickNames;
use crate::proto::reflection;
use toml::Spanned;

/// A `--set` value that must be `true` or `false`.
fn set_bool(key: SetKey, value: &str) -> Result<bool, Error> {
    value.parse().map_err(|_| Error::Invalid {
        what: format!("--set {key}"),
        why: format!("`{value}` is not true or false"),
    })
}

impl Ctx<'_> {
    /// `[target]` with `--set target.base_url` and `target.timeout`, resolved.
    pub(super) fn target(&self, f: &PlanFile) -> Result<Target, Error> {
        let vars = self.vars(f)?;
        let secrets = self.secrets(f, &vars)?;
        let written = self
            .set_target(SetKey::BaseUrl)
            .map_or_else(|| f.target.base_url.get_ref().clone(), str::to_owned);
        let base_url = if self.flags.is_none() && has_template_syntax(&written) {
            let mut t = Templates::new(BTreeMap::new(), BTreeMap::new());
            let text = t
                .text(&written, &BTreeSet::new())
                .map_err(|e| self.at(&f.target.base_url, e.0, None))?;
            let ctx = Templates::new(vars, BTreeMap::new()).context(0, 0, "", &BTreeMap::new());
            t.render(&text, &ctx).map_err(|e| {
                self.at(
                    &f.target.base_url,
                    e.0,
                    Some("only vars and env can be used in base_url"),
                )
            })?
        } else {
            written
        };
        let timeout_override = self.set_target(SetKey::Timeout);
        let timeout = match (&timeout_override, &f.target.timeout) {
            (Some(t), _) => parse_duration(t).map_err(|why| Error::Invalid {
                what: "--set target.timeout".into(),
                why: why.to_string(),
            })?,
            (None, Some(t)) => self.duration(t, false)?,
            (None, None) => crate::proto::conn::DEFAULT_TIMEOUT,
        };
        if timeout.is_zero() {
            return Err(self.err(
                f.target.timeout.as_ref().map(|t| t.span()),
                "the timeout must be longer than 0",
                None,
            ));
        }
        let headers = f
            .target
            .headers
            .iter()
            .map(|(n, v)| crate::plan::header::parse_header(&format!("{n}: {v}"), &secrets))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| match (e, self.flags) {
                (Error::Invalid { why, .. }, None) => {
                    self.err(None, format!("[target] headers: {why}"), None)
                }
                (e, _) => e,
            })?;
        let t = &f.target;
        let options = self.connect_options(f)?;
        let steps = || f.scenarios.iter().flat_map(|sc| sc.steps.iter());
        let grpc = steps().any(|st| st.grpc.is_some());
        let mut target = resolve_target_with(
            &base_url,
            headers,
            timeout,
            &options,
            grpc,
            self.options.resolve,
        )
        .map_err(|why| match (&why, self.flags) {
            // Quick mode: a connection option is its own flag's mistake, not the URL's.
            (BaseUrlError::Connect(c), Some(_)) => Error::Invalid {
                what: c.flag().into(),
                why: c.to_string(),
            },
            (BaseUrlError::Connect(c), None) => {
                let (span, hint) = connect_key(t, c);
                self.err(Some(span), why, hint)
            }
            _ => self.err(Some(t.base_url.span()), why, Some(BASE_URL_HINT)),
        })?;
        self.limits(f, &mut target)?;
        target.group_by = self.group_by_tables(f)?;
        let mut pick = PickNames::new(group_by::pick_names(&target.group_by));
        // Any scenario with a jar: every connection keeps the Set-Cookie values it receives.
        let jars = f.scenarios.iter().map(|sc| self.cookies(sc));
        if jars
            .collect::<Result<Vec<_>, _>>()?
            .iter()
            .any(|j| j.is_on())
        {
            pick = pick.with_cookies();
        }
        target.connect = target.connect.with_limits(target.limits).with_pick(pick);
        Ok(target)
    }

    /// The run's group tables: `[target] group_by` (every step), then the steps' own.
    fn group_by_tables(&self, f: &PlanFile) -> Result<Vec<GroupBy>, Error> {
        let steps = f.scenarios.iter().flat_map(|sc| sc.steps.iter());
        let given = f
            .target
            .group_by
            .iter()
            .map(|s| (s, true))
            .chain(steps.flat_map(|st| st.group_by.iter().map(|s| (s, false))));
        // Which headers are secret (their names checked with the rest of the secrets, later).
        let secrets = crate::redact::Secrets::new(
            f.target
                .secret_headers
                .as_ref()
                .map(|l| l.get_ref().as_slice())
                .unwrap_or_default()
                .iter()
                .chain(&self.options.secret_headers),
        );
        let mut tables = Vec::new();
        for (text, every_step) in given {
            self.add_group_table(&mut tables, text.get_ref(), every_step, &secrets)
                .map_err(|(why, hint)| {
                    let hint = hint.or(self.flags.is_none().then_some(GROUP_BY_HINT));
                    self.at_key(text, "group_by", why, hint)
                })?;
        }
        for text in &self.options.group_by {
            self.add_group_table(&mut tables, text, true, &secrets)
                .map_err(|(why, _)| Error::Invalid {
                    what: "--group-by".into(),
                    why,
                })?;
        }
        Ok(tables)
    }

    /// Adds the table `text` selects (once: a selector given twice is one table).
    fn add_group_table(
        &self,
        tables: &mut Vec<GroupBy>,
        text: &str,
        every_step: bool,
        secrets: &crate::redact::Secrets,
    ) -> Result<(), (String, Option<&'static str>)> {
        let selector = GroupSelector::parse(text).map_err(|why| (why.to_string(), None))?;
        if let GroupSelector::Header { written, .. } = &selector
            && secrets.is_secret(written)
        {
            // Its values would land in the record and every report, where nothing secret
            // goes (session cookies once did).
            return Err((
                format!(
                    "`header:{written}` groups by a secret header: its values would be \
                     written into run.json and every report"
                ),
                Some("group by a header that names the backend (X-Backend), or by status"),
            ));
        }
        group_by::add_table(tables, selector, every_step).map_err(|why| (why.to_string(), None))?;
        Ok(())
    }

    /// The protocol `[target]` chooses: `protocol`, or the deprecated `http2` switch; both given,
    /// they must agree.
    fn protocol(&self, f: &PlanFile) -> Result<Protocol, Error> {
        if let Some(name) = self.set_target(SetKey::Protocol) {
            return name.parse().map_err(|e: UnknownProtocol| Error::Invalid {
                what: "--set target.protocol".into(),
                why: e.to_string(),
            });
        }
        let t = &f.target;
        let switch = t.http2.as_ref();
        match (&t.protocol, switch) {
            (Some(p), Some(h)) if Protocol::from_http2_switch(*h.get_ref()) != *p.get_ref() => {
                Err(self.at_key(
                    h,
                    "http2",
                    format!(
                        "= {} disagrees with protocol = \"{}\"",
                        h.get_ref(),
                        p.get_ref().name()
                    ),
                    Some("http2 is a deprecated alias of protocol: drop it and keep `protocol`"),
                ))
            }
            (Some(p), _) => Ok(*p.get_ref()),
            (None, h) => Ok(Protocol::from_http2_switch(h.is_some_and(|h| *h.get_ref()))),
        }
    }

    /// How to connect, as `[target]` says.
    fn connect_options(&self, f: &PlanFile) -> Result<ConnectOptions, Error> {
        let t = &f.target;
        let tls = t.tls.as_ref();
        let file = |f: &Option<String>| f.as_deref().map(|p| self.relative(p));
        let steps = || f.scenarios.iter().flat_map(|sc| sc.steps.iter());
        let protocol = self.protocol(f)?;
        Ok(ConnectOptions {
            // Only gRPC steps: all of the run speaks the protocol that carries them.
            protocol: if steps().all(|st| st.grpc.is_some()) {
                protocol.for_grpc()
            } else {
                protocol
            },
            streams: t.streams.as_ref().map_or(1, |s| *s.get_ref()),
            keepalive: t.keepalive.unwrap_or(true),
            insecure: match self.set_target(SetKey::TlsInsecure) {
                Some(v) => set_bool(SetKey::TlsInsecure, v)?,
                None => tls.and_then(|t| t.insecure).unwrap_or(false),
            },
            cacert: tls.and_then(|t| file(&t.cacert)),
            cert: tls.and_then(|t| file(&t.cert)),
            key: tls.and_then(|t| file(&t.key)),
            sni: self
                .set_target(SetKey::TlsSni)
                .map(str::to_owned)
                .or_else(|| tls.and_then(|t| t.sni.clone())),
            tls_version: tls.and_then(|t| t.version.as_ref().map(|v| v.get_ref().clone())),
            source_addrs: t.source_addrs.as_ref().map(|s| s.get_ref().clone()),
            zero_rtt: tls
                .and_then(|t| t.zero_rtt.as_ref())
                .is_some_and(|z| *z.get_ref()),
        })
    }

    /// `max_header_size` and `max_body_size` of `[target]`.
    fn limits(&self, f: &PlanFile, target: &mut Target) -> Result<(), Error> {
        let t = &f.target;
        // proto's size parser and limits say what is wrong as text.
        let bytes = |s: &Spanned<SizeText>| match s.get_ref() {
            SizeText::Bytes(n) => Ok(*n),
            SizeText::Text(t) => parse_size(t),
        };
        if let Some(size) = &t.max_header_size {
            target.limits.max_head_bytes = bytes(size)
                .and_then(Limits::check_head)
                .map_err(|why| self.at_key(size, "max_header_size", why, Some(SIZE_HINT)))?;
        }
        if let Some(size) = &t.max_body_size {
            target.limits.max_body_bytes = Some(
                bytes(size)
                    .and_then(Limits::check_body)
                    .map_err(|why| self.at_key(size, "max_body_size", why, Some(SIZE_HINT)))?,
            );
        }
        Ok(())
    }

    /// The gRPC schema of `[target] proto` when any step is a gRPC call; without `proto`, the
    /// services called, whose schemas [`super::Draft::prepare`] fetches from the target by
    /// server reflection.
    pub(super) fn grpc_schema(&self, f: &PlanFile) -> Result<Schemas, Error> {
        let calls = grpc_calls(f);
        let Some(first) = calls.first() else {
            return Ok(Schemas::Absent);
        };
        if f.target.proto.is_empty() && !self.options.reflection {
            return Err(self.at(
                first,
                "gRPC steps need the services' .proto files here: their schemas cannot be \
                 fetched by server reflection while this plan loads (in a suite, the targets are \
                 not running yet)",
                Some("[target] proto = [\"service.proto\"]"),
            ));
        }
        if f.target.proto.is_empty() {
            let mut services: Vec<String> = Vec::new();
            for call in &calls {
                let (service, _) =
                    split_call(call.get_ref()).map_err(|e| self.at(call, e.to_string(), None))?;
                if !services.iter().any(|s| s == service) {
                    services.push(service.to_owned());
                }
            }
            return Ok(Schemas::Later(services));
        }
        let files: Vec<PathBuf> = f
            .target
            .proto
            .iter()
            .map(|p| self.relative(p.get_ref()))
            .collect();
        let imports: Vec<PathBuf> = f
            .target
            .import_paths
            .iter()
            .map(|p| self.relative(p))
            .collect();
        GrpcSchema::compile(&files, &imports)
            .map(Schemas::Known)
            .map_err(|e| self.at(&f.target.proto[0], e.to_string(), None))
    }

    /// Why the schemas could not be fetched by reflection, at the first gRPC call.
    pub(super) fn reflection_error(&self, f: &PlanFile, e: reflection::ReflectionError) -> Error {
        let calls = grpc_calls(f);
        let why = if self.flags.is_some() {
            format!("{e} (without --proto, the schema comes from the server)")
        } else {
            format!("{e} (the plan has no [target] proto, so the schema comes from the server)")
        };
        match calls.first() {
            Some(first) => self.at(first, why, Some("[target] proto = [\"service.proto\"]")),
            None => self.err(None, why, None),
        }
    }
}

/// The `grpc` calls of every step, in order.
fn grpc_calls(f: &PlanFile) -> Vec<&Spanned<String>> {
    f.scenarios
        .iter()
        .flat_map(|sc| sc.steps.iter())
        .filter_map(|st| st.grpc.as_ref())
        .collect()
}

/// How a group-by selector is written.
pub(super) const GROUP_BY_HINT: &str =
    "group_by = [\"header:X-Backend\"], [\"json:$.backend\"] or [\"status\"]";

/// What a step keeps of its responses: everything checks and extraction may read.
pub fn step_capture(capture: bool) -> Capture {
    if capture {
        Capture {
            body_limit: crate::proto::conn::MAX_CAPTURE_BYTES,
            headers: true,
        }
    } else {
        Capture::default()
    }
}

/// Why a base URL gives no target.
#[derive(Debug, thiserror::Error)]
pub enum BaseUrlError {
    /// Not a URL.
    #[error("`{url}` is not a valid URL: {cause}{}", no_scheme(url, cause))]
    InvalidUrl {
        /// The URL as written.
        url: String,
        /// What the parser said.
        cause: url::ParseError,
    },
    /// A scheme volley does not speak.
    #[error(
        "`{url}`: scheme `{scheme}` is not http, https, grpc or grpcs{}",
        host_port(url, scheme)
    )]
    Scheme {
        /// The URL as written.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// A URL without a host.
    #[error("`{0}` has no host")]
    NoHost(String),
    /// A query, which no request would carry (its text is not shown: it may hold a key).
    #[error(
        "`{0}?…`: a base URL's query would not be sent (each step's path is joined to the base \
         URL's path alone): write the query in the steps' paths, e.g. path = \"/x?key=1\""
    )]
    Query(String),
    /// The host gives no address.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// The connection options cannot be used with this URL.
    #[error(transparent)]
    Connect(#[from] ConnectOptionsError),
}

/// `localhost`, `127.0.0.1:8080/x`: a URL the parser found relative, which lacks its scheme.
fn no_scheme(url: &str, cause: &url::ParseError) -> String {
    match cause {
        url::ParseError::RelativeUrlWithoutBase => {
            format!(" (no scheme: write http://{url} or https://{url})")
        }
        _ => String::new(),
    }
}

/// `localhost:8080/x`: a host and a port that the parser read as a scheme and a path (no `//`
/// follows the scheme).
fn host_port(url: &str, scheme: &str) -> String {
    match url
        .get(scheme.len()..)
        .is_some_and(|rest| !rest.starts_with("://"))
    {
        true => " (no scheme? a host and port are written http://host:port)".into(),
        false => String::new(),
    }
}

/// Resolves a base URL into a [`Target`] connecting as `options` say; `grpc` when some step is a
/// gRPC call. `http://` and `https://`, or `grpc://` and `grpcs://` (the same with HTTP/2).
pub fn resolve_target(
    base_url: &str,
    headers: Vec<(String, String)>,
    timeout: Duration,
    options: &ConnectOptions,
    grpc: bool,
) -> Result<Target, BaseUrlError> {
    resolve_target_with(base_url, headers, timeout, options, grpc, system_resolve)
}

/// [`resolve_target`] with a resolver of the caller's choice.
pub fn resolve_target_with(
    base_url: &str,
    headers: Vec<(String, String)>,
    timeout: Duration,
    options: &ConnectOptions,
    grpc: bool,
    resolve: Resolve,
) -> Result<Target, BaseUrlError> {
    let url = url::Url::parse(base_url).map_err(|cause| BaseUrlError::InvalidUrl {
        url: base_url.into(),
        cause,
    })?;
    let (tls, protocol, default_port) = match url.scheme() {
        "http" => (false, options.protocol, 80),
        "https" => (true, options.protocol, 443),
        "grpc" => (false, options.protocol.for_grpc(), 80),
        "grpcs" => (true, options.protocol.for_grpc(), 443),
        other => {
            return Err(BaseUrlError::Scheme {
                url: base_url.into(),
                scheme: other.into(),
            });
        }
    };
    if url.query().is_some() {
        let mut bare = url.clone();
        bare.set_query(None);
        return Err(BaseUrlError::Query(crate::redact::redact_url_userinfo(
            bare.as_str(),
        )));
    }
    let (addr, host_header) = resolve_host_with(&url, default_port, resolve)?;
    let host = url.host_str().unwrap_or_default();
    let connect = connect::build(
        &ConnectOptions {
            protocol,
            ..options.clone()
        },
        addr,
        host,
        tls,
        grpc,
    )?;
    Ok(Target {
        limits: Limits::default(),
        base_url: base_url.to_string(),
        addr,
        host_header,
        base_path: url.path().trim_end_matches('/').to_string(),
        headers: with_url_credentials(&url, headers),
        timeout,
        connect,
        group_by: Vec::new(),
    })
}

/// What a `base_url` looks like.
const BASE_URL_HINT: &str = "base_url is like http://127.0.0.1:8080 or https://host:8443";

/// Where in `[target]` a connection option's error is, and the hint for it: the key it is about
/// when the plan gives that key, else `base_url` (whose scheme decides TLS).
fn connect_key(
    t: &TargetFile,
    e: &ConnectOptionsError,
) -> (std::ops::Range<usize>, Option<&'static str>) {
    let tls = t.tls.as_ref();
    let (key, hint) = match e {
        ConnectOptionsError::NoStreams | ConnectOptionsError::StreamsNeedHttp2(_) => {
            (t.streams.as_ref().map(Spanned::span), None)
        }
        ConnectOptionsError::SourceAddrs(_)
        | ConnectOptionsError::Client(ClientError::SourceFamily { .. }) => {
            (t.source_addrs.as_ref().map(Spanned::span), None)
        }
        ConnectOptionsError::TlsVersion(_) => (
            tls.and_then(|t| t.version.as_ref()).map(Spanned::span),
            Some("version = \"1.2\" or \"1.3\", or leave it out for either"),
        ),
        ConnectOptionsError::Client(ClientError::ZeroRttNeedsHttp3) => (
            tls.and_then(|t| t.zero_rtt.as_ref()).map(Spanned::span),
            Some(
                "set protocol = \"http3\" in [target] with an https:// base_url, or drop zero_rtt",
            ),
        ),
        _ => (None, None),
    };
    match key {
        Some(span) => (span, hint),
        None => (t.base_url.span(), Some(BASE_URL_HINT)),
    }
}

/// `headers` with the URL's user information sent as curl and browsers send it: `Authorization:
/// Basic base64(user:password)` (a user alone: an empty password), unless the headers have an
/// `Authorization` of their own. `Authorization` is always secret: the value is never written.
fn with_url_credentials(
    url: &url::Url,
    mut headers: Vec<(String, String)>,
) -> Vec<(String, String)> {
    let has_auth = headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("authorization"));
    if let (Some(auth), false) = (crate::redact::url_basic_auth(url), has_auth) {
        headers.push(("Authorization".into(), auth));
    }
    headers
}

/// Resolves a URL's host (once, before any load) to an address, with `default_port` when the URL
/// has none; also returns the `Host` header value (`host[:port]` as written).
pub fn resolve_host(
    url: &url::Url,
    default_port: u16,
) -> Result<(SocketAddr, String), BaseUrlError> {
    resolve_host_with(url, default_port, system_resolve)
}

fn resolve_host_with(
    url: &url::Url,
    default_port: u16,
    resolve: Resolve,
) -> Result<(SocketAddr, String), BaseUrlError> {
    let host = url
        .host_str()
        .ok_or_else(|| BaseUrlError::NoHost(url.to_string()))?;
    let port = url.port_or_known_default().unwrap_or(default_port);
    let lookup = host.trim_start_matches('[').trim_end_matches(']');
    let addr = resolve(lookup, port)?;
    let host_header = match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    Ok((addr, host_header))
}

/// How to write a size, for error hints.
const SIZE_HINT: &str = "write sizes as bytes (65536) or with a unit: \"64KiB\", \"10MB\"";
