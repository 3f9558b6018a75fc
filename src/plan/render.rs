//! Rendering a step's request: its path, header values and body, from their templates and an
//! iteration's context. The one place the rules live (a rendered path holds no spaces or control
//! characters, a header value no line break): the engine renders with it per request, `volley
//! check` to show one request per step, and the plan reader to turn a request without templates
//! into its text once.

use std::ops::Range;

use minijinja::Value;

use super::template::Templates;
use super::{Body, DynamicRequest};

/// Why a request could not be rendered (a run counts it as `template_error`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// A template failed (a failing filter, too long an output…).
    #[error("{0}")]
    Template(String),
    /// The rendered path would corrupt the request line.
    #[error("the rendered path `{}` holds spaces or control characters", .0.escape_debug())]
    Path(String),
    /// The rendered value of this header would corrupt the request head.
    #[error("the rendered value of header `{0}` holds a line break")]
    HeaderValue(String),
}

/// Renders `request` with `ctx` into buffers the caller reuses from one request to the next:
/// the body into `body`; the path, then each header's value, into `text`, with the byte range
/// of each header's value (in `request.headers`' order) in `header_at`. Returns where the path
/// ends in `text` (`text[..end]`). The buffers are cleared first; nothing else is allocated
/// beyond their growth.
pub fn render_request(
    templates: &Templates,
    request: &DynamicRequest,
    ctx: &Value,
    body: &mut Vec<u8>,
    text: &mut Vec<u8>,
    header_at: &mut Vec<Range<usize>>,
) -> Result<usize, RenderError> {
    let failed = |e: super::template::TemplateError| RenderError::Template(e.0);
    body.clear();
    match &request.body {
        Body::Empty => {}
        Body::Text(t) | Body::Json(t) => templates.render_into(t, ctx, body).map_err(failed)?,
        Body::Bytes(b) => body.extend_from_slice(b),
    }
    text.clear();
    header_at.clear();
    templates
        .render_into(&request.path, ctx, text)
        .map_err(failed)?;
    let path_end = text.len();
    if text
        .iter()
        .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
    {
        return Err(RenderError::Path(
            String::from_utf8_lossy(&text[..path_end]).into_owned(),
        ));
    }
    for (name, value) in &request.headers {
        let start = text.len();
        templates.render_into(value, ctx, text).map_err(failed)?;
        if text[start..].iter().any(|b| *b == b'\r' || *b == b'\n') {
            return Err(RenderError::HeaderValue(name.clone()));
        }
        header_at.push(start..text.len());
    }
    Ok(path_end)
}

/// A request rendered to owned strings (for display and for requests rendered once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedRequest {
    /// Path and query.
    pub path: String,
    /// Headers in order, values rendered.
    pub headers: Vec<(String, String)>,
    /// The body's text (gRPC: the JSON message).
    pub body: String,
}

/// [`render_request`] into new strings; text that is not UTF-8 is shown lossily.
pub fn render_owned(
    templates: &Templates,
    request: &DynamicRequest,
    ctx: &Value,
) -> Result<RenderedRequest, RenderError> {
    let (mut body, mut text, mut header_at) = (Vec::new(), Vec::new(), Vec::new());
    let path_end = render_request(
        templates,
        request,
        ctx,
        &mut body,
        &mut text,
        &mut header_at,
    )?;
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok(RenderedRequest {
        path: lossy(&text[..path_end]),
        headers: request
            .headers
            .iter()
            .zip(&header_at)
            .map(|((n, _), at)| (n.clone(), lossy(&text[at.clone()])))
            .collect(),
        body: lossy(&body),
    })
}
