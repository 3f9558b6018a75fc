//! The target's cookie routes, for sessions that behave like users:
//!
//! - `GET /cookies/set?NAME=VALUE&…` answers 200 with one `Set-Cookie: NAME=VALUE; Path=/` per
//!   pair; the reserved keys `path=P`, `max_age=S`, `domain=D` and `secure` (no value) add those
//!   attributes to every cookie of the request.
//! - `GET /cookies` answers the cookies the request carried, as a JSON object (httpbin's shape:
//!   `{"cookies": {"NAME": "VALUE"}}`).
//! - `GET /cookies/need?name=NAME` answers 200 when the request carried cookie `NAME`, else 401:
//!   a page behind a login.

use hyper::header::{COOKIE, HeaderValue, SET_COOKIE};
use hyper::{Request, Response, StatusCode};

use super::body::TargetBody;
use super::respond::{bad_request, json, static_text};

/// A cookie route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CookieRoute {
    /// `/cookies/set`
    Set,
    /// `/cookies`
    Show,
    /// `/cookies/need`
    Need,
}

/// Answers a cookie route.
pub(super) fn respond<B>(route: CookieRoute, req: &Request<B>) -> Response<TargetBody> {
    let query = req.uri().query().unwrap_or("");
    match route {
        CookieRoute::Set => set(query),
        CookieRoute::Show => {
            let cookies: serde_json::Map<String, serde_json::Value> = received(req)
                .map(|(n, v)| (n.to_string(), v.to_string().into()))
                .collect();
            json(
                StatusCode::OK,
                serde_json::json!({ "cookies": cookies }).to_string(),
            )
        }
        CookieRoute::Need => {
            let Some(name) = pairs(query).find(|(k, _)| *k == "name").map(|(_, v)| v) else {
                return bad_request("/cookies/need takes ?name=NAME");
            };
            if received(req).any(|(n, _)| n == name) {
                static_text(StatusCode::OK, b"ok\n")
            } else {
                static_text(StatusCode::UNAUTHORIZED, b"no session cookie\n")
            }
        }
    }
}

/// `/cookies/set`: a `Set-Cookie` per pair, with the request's attributes.
fn set(query: &str) -> Response<TargetBody> {
    let mut attributes = String::from("; Path=");
    attributes.push_str(
        pairs(query)
            .find(|(k, _)| *k == "path")
            .map_or("/", |(_, v)| v),
    );
    for (key, value) in pairs(query) {
        match key {
            "max_age" => attributes.push_str(&format!("; Max-Age={value}")),
            "domain" => attributes.push_str(&format!("; Domain={value}")),
            "secure" => attributes.push_str("; Secure"),
            _ => {}
        }
    }
    let mut response = static_text(StatusCode::OK, b"ok\n");
    let reserved = ["path", "max_age", "domain", "secure"];
    for (name, value) in pairs(query).filter(|(k, _)| !reserved.contains(k)) {
        let Ok(header) = HeaderValue::from_str(&format!("{name}={value}{attributes}")) else {
            return bad_request(format_args!("cookie `{name}` cannot be sent as a header"));
        };
        response.headers_mut().append(SET_COOKIE, header);
    }
    response
}

/// The query's `key=value` pairs (a key without `=` has an empty value), undecoded.
fn pairs(query: &str) -> impl Iterator<Item = (&str, &str)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
}

/// The cookies a request carried: every `Cookie` header's `name=value` pairs.
fn received<B>(req: &Request<B>) -> impl Iterator<Item = (&str, &str)> {
    req.headers()
        .get_all(COOKIE)
        .into_iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|p| p.trim().split_once('='))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(uri: &str, cookie: Option<&str>) -> Request<()> {
        let mut b = Request::get(uri);
        if let Some(c) = cookie {
            b = b.header(COOKIE, c);
        }
        b.body(()).unwrap()
    }

    #[test]
    fn set_sends_one_header_per_cookie_with_the_attributes() {
        let r = respond(
            CookieRoute::Set,
            &request("/cookies/set?a=1&b=2&path=/x&max_age=60&secure", None),
        );
        let set: Vec<&str> = r
            .headers()
            .get_all(SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        assert_eq!(
            set,
            [
                "a=1; Path=/x; Max-Age=60; Secure",
                "b=2; Path=/x; Max-Age=60; Secure"
            ]
        );
    }

    #[test]
    fn need_answers_401_without_the_cookie() {
        let need = |c| respond(CookieRoute::Need, &request("/cookies/need?name=s", c)).status();
        assert_eq!(need(None), StatusCode::UNAUTHORIZED);
        assert_eq!(need(Some("x=1; s=abc")), StatusCode::OK);
        assert_eq!(need(Some("ss=abc")), StatusCode::UNAUTHORIZED);
    }
}
