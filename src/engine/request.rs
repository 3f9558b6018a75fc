//! How one step's request goes out: prepared before the run, or rendered now from its templates
//! into buffers the VU reuses (nothing allocated per request for HTTP/1.1), with the VU's
//! cookies when its jar has some for the request's URL.

use std::borrow::Cow;

use bytes::Bytes;
use url::Url;

use super::cookies::Jar;

use crate::plan::read::step_capture;
use crate::plan::{DynamicRequest, Plan, Step, StepRequest};
use crate::proto::client::PreparedRequest;
use crate::proto::message::{Request, RequestKind};

/// How one step's request goes out this time.
pub(super) enum Outgoing<'a> {
    /// Prepared before the run.
    Prepared(&'a PreparedRequest),
    /// Rendered and prepared now (HTTP/2, gRPC).
    Owned(PreparedRequest),
    /// Rendered now into [`Scratch::wire`] as HTTP/1.1 bytes; `true` when a body is expected.
    Bytes(bool),
}

impl Outgoing<'_> {
    /// Bytes one send puts on the connection (see [`PreparedRequest::bytes_sent`]).
    /// `messages` is how many times a streaming request side sent the body (1 otherwise).
    pub(super) fn bytes_sent(&self, scratch: &Scratch, messages: u64) -> u64 {
        // The head, then the body `messages` times.
        let times = |p: &PreparedRequest| p.bytes_sent() - p.body_len() + messages * p.body_len();
        match self {
            Outgoing::Prepared(p) => times(p),
            Outgoing::Owned(p) => times(p),
            Outgoing::Bytes(_) => scratch.wire.len() as u64,
        }
    }
}

/// A VU's buffers for rendering templated requests, reused across requests.
#[derive(Default)]
pub(super) struct Scratch {
    /// The HTTP/1.1 request bytes.
    pub wire: Vec<u8>,
    /// The rendered body.
    body: Vec<u8>,
    /// Rendered path and header values.
    text: Vec<u8>,
    /// Per header: where its value lies in `text`.
    header_at: Vec<std::ops::Range<usize>>,
    /// Where the last rendered path ends in `text`.
    path_end: usize,
}

/// The URL of the request `step` last sent from `scratch`, for its cookies (`None`: the step
/// uses no jar).
pub(super) fn request_url<'a>(step: &'a Step, scratch: &Scratch) -> Option<Cow<'a, Url>> {
    let rendered = scratch.text.get(..scratch.path_end).unwrap_or_default();
    step.cookies.as_ref()?.resolve(rendered)
}

/// A template failed, or rendered something that cannot be sent: nothing is sent, the attempt
/// counts as [`ErrorKind::Template`](crate::proto::ErrorKind::Template).
pub(super) struct RenderFailed;

/// The request of `step` for this send: its prepared form when static, else rendered with `ctx`;
/// with a `Cookie` header when `jar` holds cookies for its URL.
pub(super) fn outgoing<'a>(
    plan: &Plan,
    step: &'a Step,
    ctx: Option<&minijinja::Value>,
    scratch: &mut Scratch,
    jar: Option<&Jar>,
) -> Result<Outgoing<'a>, RenderFailed> {
    let jar = jar.filter(|j| !j.is_empty() && step.cookies.is_some());
    match &step.request {
        StepRequest::Static(s) => {
            let cookie = jar.and_then(|j| j.header(&*request_url(step, scratch)?));
            match cookie {
                None => Ok(Outgoing::Prepared(&s.prepared)),
                Some(c) => with_cookie(plan, step, s, &c, scratch),
            }
        }
        StepRequest::Dynamic(d) => build_dynamic(plan, step, d, ctx, scratch, jar),
    }
}

/// A request without templates, with the VU's `cookie` header added: HTTP/1.1 bytes copied into
/// [`Scratch::wire`] with the header line before the head's end; HTTP/2 prepared now.
fn with_cookie<'a>(
    plan: &Plan,
    step: &Step,
    s: &crate::plan::StaticRequest,
    cookie: &str,
    scratch: &mut Scratch,
) -> Result<Outgoing<'a>, RenderFailed> {
    if let Some(bytes) = s.prepared.http1_bytes() {
        let head_end = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or(RenderFailed)?
            + 2;
        scratch.wire.clear();
        scratch.wire.extend_from_slice(&bytes[..head_end]);
        for part in [b"Cookie: ", cookie.as_bytes(), b"\r\n"] {
            scratch.wire.extend_from_slice(part);
        }
        scratch.wire.extend_from_slice(&bytes[head_end..]);
        return Ok(Outgoing::Bytes(s.request.method != http::Method::HEAD));
    }
    let mut request = s.request.clone();
    request.headers.push(("cookie".into(), cookie.into()));
    let client = plan.target.connect.client_for(step.grpc.is_some());
    client
        .prepare(&request)
        .map(Outgoing::Owned)
        .map_err(|_| RenderFailed)
}

/// Renders a templated request (every buffer reused across requests): HTTP/1.1 into
/// [`Scratch::wire`]; HTTP/2 and gRPC into a request prepared now.
fn build_dynamic<'a>(
    plan: &Plan,
    step: &Step,
    d: &DynamicRequest,
    ctx: Option<&minijinja::Value>,
    scratch: &mut Scratch,
    jar: Option<&Jar>,
) -> Result<Outgoing<'a>, RenderFailed> {
    let path_end = render_parts(plan, d, ctx, scratch)?;
    scratch.path_end = path_end;
    let cookie = jar.and_then(|j| j.header(&*request_url(step, scratch)?));
    let text = &scratch.text;
    let connect = &plan.target.connect;
    let client = connect.client_for(step.grpc.is_some());
    if client.protocol().sends_http1_bytes() {
        scratch.wire.clear();
        crate::proto::http1::write_request(
            &mut scratch.wire,
            &d.method,
            &plan.target.host_header,
            &text[..path_end],
            d.headers
                .iter()
                .zip(&scratch.header_at)
                .map(|((n, _), at)| (n.as_str(), &text[at.clone()]))
                .chain(cookie.as_deref().map(|c| ("Cookie", c.as_bytes()))),
            &scratch.body,
            connect.keepalive,
        );
        return Ok(Outgoing::Bytes(d.method != "HEAD"));
    }
    let owned = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|_| RenderFailed);
    let body = match &step.grpc {
        Some(m) => {
            let json = std::str::from_utf8(&scratch.body).map_err(|_| RenderFailed)?;
            m.encode_body(json).map_err(|_| RenderFailed)?
        }
        None => Bytes::copy_from_slice(&scratch.body),
    };
    let mut headers: Vec<(String, String)> = d
        .headers
        .iter()
        .zip(&scratch.header_at)
        .map(|((n, _), at)| Ok((n.clone(), owned(&text[at.clone()])?)))
        .collect::<Result<_, RenderFailed>>()?;
    headers.extend(cookie.map(|c| ("cookie".to_string(), c)));
    let request = Request {
        method: http::Method::from_bytes(d.method.as_bytes()).map_err(|_| RenderFailed)?,
        authority: plan.target.host_header.clone(),
        path_and_query: owned(&text[..path_end])?,
        headers,
        body,
        kind: if step.grpc.is_some() {
            RequestKind::Grpc
        } else {
            RequestKind::Http
        },
        capture: step_capture(step.capture),
    };
    client
        .prepare(&request)
        .map(Outgoing::Owned)
        .map_err(|_| RenderFailed)
}

/// Renders the body, the path and the header values into the scratch buffers with the one
/// renderer `volley check` also uses ([`crate::plan::render::render_request`]); returns where the
/// path ends in [`Scratch::text`].
fn render_parts(
    plan: &Plan,
    d: &DynamicRequest,
    ctx: Option<&minijinja::Value>,
    scratch: &mut Scratch,
) -> Result<usize, RenderFailed> {
    let empty = minijinja::Value::UNDEFINED;
    crate::plan::render::render_request(
        &plan.templates,
        d,
        ctx.unwrap_or(&empty),
        &mut scratch.body,
        &mut scratch.text,
        &mut scratch.header_at,
    )
    .map_err(|_| RenderFailed)
}
