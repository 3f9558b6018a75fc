//! One recorded request as a plan step: its path, query, headers and body, with the values
//! earlier responses made turned into templates ([`Reuse`]) and secrets into environment
//! references ([`Secrets`]), never their values.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use percent_encoding::percent_decode_str;

use super::reuse::Reuse;
use super::{Exchange, body_text};
use crate::plan::import::text::{BodyText, StepText, is_secret_name, literal};

/// Headers volley writes itself (or that HTTP/2 forbids), left out of every step.
const DROPPED: &[&str] = &[
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
];

/// The secrets met, each recorded value given an environment variable of its own.
#[derive(Debug, Default)]
pub(super) struct Secrets {
    /// (what it is, its value, the variable, the steps that send it).
    seen: Vec<(String, String, String, Vec<String>)>,
    /// Header names to list under `[target] secret_headers` (not always secret already).
    marked: BTreeSet<String>,
    /// Cookie names the recording sent without having received them.
    cookies: BTreeSet<String>,
    /// Headers left out (lower case).
    pub dropped: BTreeSet<String>,
}

impl Secrets {
    /// `{{ env.NAME }}` for the secret `value` of `what` (a header or `?param`), sent by `step`.
    fn reference(&mut self, what: &str, value: &str, step: &str) -> String {
        let existing = self
            .seen
            .iter_mut()
            .find(|(w, v, _, _)| w.eq_ignore_ascii_case(what) && v == value);
        let var = match existing {
            Some((_, _, var, steps)) => {
                if !steps.iter().any(|s| s == step) {
                    steps.push(step.to_string());
                }
                var.clone()
            }
            None => {
                let base: String = what
                    .trim_start_matches('?')
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_uppercase()
                        } else {
                            '_'
                        }
                    })
                    .collect();
                // Another value of the same name, or another secret named alike (a header and
                // a query parameter): a variable of its own.
                let mut var = base.clone();
                let mut n = 1;
                while self.seen.iter().any(|(_, _, v, _)| *v == var) {
                    n += 1;
                    var = format!("{base}_{n}");
                }
                self.seen
                    .push((what.into(), value.into(), var.clone(), vec![step.into()]));
                var
            }
        };
        format!("{{{{ env.{var} }}}}")
    }

    /// The header names to mark secret in `[target] secret_headers`.
    pub fn marked(&self) -> Vec<String> {
        self.marked.iter().cloned().collect()
    }

    /// One note per environment variable to set (never its value), and one for the headers
    /// left out.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for (what, _, var, steps) in &self.seen {
            let shown = if steps.len() > 3 {
                format!("{}, … ({} steps)", steps[..3].join(", "), steps.len())
            } else {
                steps.join(", ")
            };
            let extra = if what.eq_ignore_ascii_case("cookie") {
                let names: Vec<&str> = self.cookies.iter().map(String::as_str).collect();
                format!(
                    " (cookies the recording sent but no response set: {}; those responses \
                     set are left to the cookie jar)",
                    names.join(", ")
                )
            } else {
                String::new()
            };
            notes.push(format!(
                "secret {what}{extra}: the recorded value is not in the plan; set {var} in the \
                 environment before volley check or run (sent by {shown})"
            ));
        }
        if !self.dropped.is_empty() {
            let names: Vec<&str> = self.dropped.iter().map(String::as_str).collect();
            notes.push(format!(
                "left out header(s) {}: volley writes what the connection needs, does not decode \
                 compressed bodies (accept-encoding), and its cookie jar sends the cookies \
                 responses set",
                names.join(", ")
            ));
        }
        notes
    }
}

/// The step for exchange `x`, named `name`.
pub(super) fn step(
    x: &Exchange,
    name: &str,
    rebase: Option<&(String, String)>,
    reuse: &mut Reuse,
    secrets: &mut Secrets,
) -> StepText {
    let path = path(x, name, reuse, secrets);
    let headers = headers(x, name, rebase, reuse, secrets);
    let body = x.body.as_deref().map(|text| body(x, text, name, reuse));
    let shown_path = x.url.path();
    StepText {
        about: vec![format!(
            "{}: {} {shown_path} → {}",
            x.at, x.method, x.status
        )],
        name: name.to_string(),
        method: x.method.clone(),
        path,
        headers,
        body,
        status: vec![x.status],
        ..StepText::default()
    }
}

/// Whether `token` can stand in a path or query as it is (no percent-encoding needed).
fn url_safe(token: &str) -> bool {
    !token.is_empty()
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// The step's path and query: segments and values that earlier responses made become their
/// variables, secret query parameters environment references.
fn path(x: &Exchange, name: &str, reuse: &mut Reuse, secrets: &mut Secrets) -> String {
    let mut out = String::new();
    let mut sent = Vec::new();
    for seg in x.url.path().split('/').skip(1) {
        out.push('/');
        let decoded = percent_decode_str(seg).decode_utf8_lossy().into_owned();
        match url_safe(&decoded)
            .then(|| reuse.var_for(&decoded, name, "its path"))
            .flatten()
        {
            Some((var, _)) => {
                let _ = write!(out, "{{{{ {var} }}}}");
            }
            None => out.push_str(&literal(seg)),
        }
        sent.push(decoded);
    }
    if let Some(query) = x.url.query() {
        out.push('?');
        for (k, pair) in query.split('&').enumerate() {
            if k > 0 {
                out.push('&');
            }
            let Some((key, value)) = pair.split_once('=') else {
                out.push_str(&literal(pair));
                continue;
            };
            let decoded = percent_decode_str(&value.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned();
            let site = format!("its query parameter {key}");
            if let Some((var, _)) = url_safe(&decoded)
                .then(|| reuse.var_for(&decoded, name, &site))
                .flatten()
            {
                let _ = write!(out, "{}={{{{ {var} }}}}", literal(key));
            } else if is_secret_name(key) && !value.is_empty() {
                let reference = secrets.reference(&format!("?{key}"), value, name);
                let _ = write!(out, "{}={reference}", literal(key));
            } else {
                out.push_str(&literal(pair));
            }
            sent.push(decoded);
        }
    }
    for token in sent {
        reuse.sent(&token);
    }
    out
}

/// The step's headers: as recorded, less [`DROPPED`], `Accept-Encoding` and the cookies the
/// jar sends; reused values as templates; secrets as environment references; `Origin` and
/// `Referer` moved from the recorded origin to `--base-url`'s (`rebase`: from, to).
fn headers(
    x: &Exchange,
    name: &str,
    rebase: Option<&(String, String)>,
    reuse: &mut Reuse,
    secrets: &mut Secrets,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (header, recorded) in &x.headers {
        let lower = header.to_ascii_lowercase();
        let value = match rebase {
            Some((from, to))
                if (lower == "origin" || lower == "referer") && recorded.starts_with(from) =>
            {
                &format!("{to}{}", &recorded[from.len()..])
            }
            _ => recorded,
        };
        if lower.starts_with(':') || DROPPED.contains(&lower.as_str()) || lower == "accept-encoding"
        {
            if !lower.starts_with(':') {
                secrets.dropped.insert(lower);
            }
            continue;
        }
        if out.iter().any(|(n, _)| n.eq_ignore_ascii_case(header)) {
            continue; // a plan step has one value per name; HAR tools repeat some
        }
        if lower == "cookie" {
            let own: Vec<&str> = value
                .split(';')
                .map(str::trim)
                .filter(|c| {
                    let cookie = c.split('=').next().unwrap_or("").trim();
                    !cookie.is_empty() && !x.jar.contains(cookie)
                })
                .collect();
            if own.is_empty() {
                secrets.dropped.insert(lower);
            } else {
                for c in &own {
                    let cookie = c.split('=').next().unwrap_or("").trim();
                    secrets.cookies.insert(cookie.to_string());
                }
                let reference = secrets.reference(header, &own.join("; "), name);
                out.push((header.clone(), reference));
            }
            continue;
        }
        let templated = header_template(value, name, header, reuse);
        let text = match templated {
            Some(t) => t,
            None if is_secret_name(header) => secrets.reference(header, value, name),
            None => literal(value),
        };
        if is_secret_name(header) && !crate::redact::ALWAYS_SECRET.contains(&lower.as_str()) {
            secrets.marked.insert(header.clone());
        }
        out.push((header.clone(), text));
    }
    // Short header values are not learnt as the client's own data: browsers send small
    // numbers (`Upgrade-Insecure-Requests: 1`) that would hide every small id.
    for (_, value) in &x.headers {
        let token = value.split_once(' ').map_or(value.as_str(), |(_, t)| t);
        for v in [value.as_str(), token] {
            if v.len() >= 4 {
                reuse.sent(v);
            }
        }
    }
    out
}

/// A header value an earlier response made, whole or after an auth scheme (`Bearer …`), as
/// a template.
fn header_template(value: &str, step: &str, header: &str, reuse: &mut Reuse) -> Option<String> {
    let site = format!("its {header} header");
    if let Some((var, _)) = reuse.var_for(value, step, &site) {
        return Some(format!("{{{{ {var} }}}}"));
    }
    let (scheme, token) = value.split_once(' ')?;
    if scheme.is_empty() || !scheme.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let (var, _) = reuse.var_for(token, step, &site)?;
    Some(format!("{} {{{{ {var} }}}}", literal(scheme)))
}

/// The step's body: JSON with reused values as templates, or the text as it was.
fn body(x: &Exchange, text: &str, name: &str, reuse: &mut Reuse) -> BodyText {
    let json = (x.body_type.contains("json") || text.trim_start().starts_with(['{', '[']))
        .then(|| serde_json::from_str::<serde_json::Value>(text).ok())
        .flatten();
    let Some(mut value) = json else {
        if x.body_type.contains("x-www-form-urlencoded") {
            for (_, v) in url::form_urlencoded::parse(text.as_bytes()) {
                reuse.sent(&v);
            }
        }
        return body_text(text, None);
    };
    let mut sent = Vec::new();
    template_leaves(&mut value, name, reuse, &mut sent);
    for token in sent {
        reuse.sent(&token);
    }
    body_text(text, Some(value))
}

/// Every string leaf of a JSON body made template-ready; leaves a response made become their
/// variable (a number keeps its type: `"{{ id }}"` renders as one). `sent` collects the leaves.
fn template_leaves(
    value: &mut serde_json::Value,
    step: &str,
    reuse: &mut Reuse,
    sent: &mut Vec<String>,
) {
    use serde_json::Value;
    match value {
        Value::Array(items) => {
            for item in items {
                template_leaves(item, step, reuse, sent);
            }
        }
        Value::Object(map) => {
            for (_, item) in map.iter_mut() {
                template_leaves(item, step, reuse, sent);
            }
        }
        Value::String(s) => {
            let recorded = s.clone();
            *value = match reuse.var_for(&recorded, step, "its body") {
                // The response had a number where this request sends a string.
                Some((var, true)) => Value::String(format!("{{{{ {var} | string }}}}")),
                Some((var, false)) => Value::String(format!("{{{{ {var} }}}}")),
                None => Value::String(literal(&recorded)),
            };
            sent.push(recorded);
        }
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            let token = n.to_string();
            if let Some((var, _)) = reuse.var_for(&token, step, "its body") {
                *value = Value::String(format!("{{{{ {var} }}}}"));
            }
            sent.push(token);
        }
        _ => {}
    }
}
