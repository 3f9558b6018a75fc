//! Small response builders shared by the hyper routes.

use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};

use super::body::TargetBody;

pub(crate) const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
pub(crate) const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// A response with a body and a content-type.
pub(crate) fn with_type(
    status: StatusCode,
    content_type: HeaderValue,
    body: impl Into<TargetBody>,
) -> Response<TargetBody> {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, content_type);
    response
}

/// A `text/plain` response.
pub(crate) fn text(status: StatusCode, body: impl Into<TargetBody>) -> Response<TargetBody> {
    with_type(status, TEXT, body)
}

/// A `text/plain` response with a static body (no allocation for the body).
pub(crate) fn static_text(status: StatusCode, body: &'static [u8]) -> Response<TargetBody> {
    with_type(status, TEXT, TargetBody::from_static(body))
}

/// A response without a body.
pub(crate) fn empty(status: StatusCode) -> Response<TargetBody> {
    let mut response = Response::new(TargetBody::empty());
    *response.status_mut() = status;
    response
}

/// A JSON response.
pub(crate) fn json(status: StatusCode, body: impl Into<TargetBody>) -> Response<TargetBody> {
    with_type(status, JSON, body)
}

/// A JSON `{"error": message}` response.
pub(crate) fn json_error(status: StatusCode, message: &str) -> Response<TargetBody> {
    json(status, serde_json::json!({ "error": message }).to_string())
}

/// 405 with the `Allow` header listing `allowed` methods.
pub(crate) fn method_not_allowed(allowed: &'static str) -> Response<TargetBody> {
    let mut response = static_text(StatusCode::METHOD_NOT_ALLOWED, b"method not allowed\n");
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allowed));
    response
}

/// 400 with a plain-text explanation.
pub(crate) fn bad_request(message: impl std::fmt::Display) -> Response<TargetBody> {
    text(StatusCode::BAD_REQUEST, format!("bad request: {message}\n"))
}
