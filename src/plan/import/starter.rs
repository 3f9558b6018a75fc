//! The starter plan `volley new` writes: one scenario with a ramp, one step with a check, two
//! thresholds, commented, from a URL or a curl command line; `volley check` accepts it.

use std::fmt::Write as _;

use super::curl::{self, CurlRequest};
use super::text::{Imported, THRESHOLDS, literal, scenario, toml_str};

impl CurlRequest {
    /// A plain GET of `url` (`http://` assumed when it has no scheme).
    pub fn get(url: &str) -> Result<Self, curl::CurlError> {
        curl::parse(&format!("curl {}", quote(url)))
    }
}

/// Where `volley serve` listens by default: the plan's URL when none is given.
pub const DEFAULT_URL: &str = "http://127.0.0.1:8080/";

/// `s` as one shell word (single-quoted).
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The starter plan for `r` (from curl command line `from_curl`, if it came from one), with
/// the notes of its reading.
pub fn starter(r: CurlRequest, from_curl: Option<&str>) -> Imported {
    Imported {
        text: starter_plan(&r, from_curl),
        notes: r.notes,
        summary: "one scenario ramping to 10 VUs over 35 s, one step, two thresholds".into(),
    }
}

/// The plan's text.
pub fn starter_plan(r: &CurlRequest, from_curl: Option<&str>) -> String {
    let mut out = String::new();
    let origin = r.url.origin().ascii_serialization();
    let path = &r.url[url::Position::BeforePath..url::Position::AfterQuery];
    let source = match from_curl {
        Some(_) => "from a curl command line".to_string(),
        None => format!("for {}", r.url),
    };
    // Writing to a String cannot fail.
    let _ = write!(
        out,
        "\
# A starter plan, written by `volley new` {source}.
#   volley check plan.toml   # validates it and prints the request each step sends; sends nothing
#   volley run plan.toml     # runs it (--time-scale 0.1: every stage ten times shorter)
# Every key: docs/plans.md (a reference plan); editors complete keys with schema/plan.schema.json.
name = \"starter\"

[target]
base_url = {base}   # scheme, host and port; each step's path is appended
timeout = {timeout}        # per request, connecting included
",
        base = toml_str(&origin),
        timeout = toml_str(
            &humantime::format_duration(r.timeout.unwrap_or(std::time::Duration::from_secs(10)))
                .to_string()
        ),
    );
    if r.http2 {
        out.push_str("protocol = \"http2\"       # curl --http2\n");
    }
    if r.insecure {
        out.push_str(
            "\n[target.tls]\ninsecure = true          # curl -k: any certificate is accepted\n",
        );
    }
    out.push_str(&scenario("starter"));
    write_step(&mut out, r, path);
    out.push_str(THRESHOLDS);
    out
}

/// The one step: method, path, headers, body, and its check.
fn write_step(out: &mut String, r: &CurlRequest, path: &str) {
    let _ = write!(
        out,
        "
[[scenario.step]]
name = {name}
method = {method}
path = {path}
",
        name = toml_str(&step_name(&r.method, &r.url)),
        method = toml_str(&r.method),
        path = toml_str(&literal(path)),
    );
    match &r.body {
        Some(body) => {
            let _ = writeln!(out, "body = {}", toml_str(&literal(body)));
        }
        None => out.push_str(
            "# body = '{\"id\": {{ vu }}}' or json = { id = \"{{ rand_int(1, 100) }}\" }: \
             values may be templates\n",
        ),
    }
    for note in &r.notes {
        let _ = writeln!(out, "# note: {note}");
    }
    if !r.headers.is_empty() {
        let secret: Vec<&str> = r
            .headers
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| crate::redact::ALWAYS_SECRET.contains(&n.to_ascii_lowercase().as_str()))
            .collect();
        out.push_str("[scenario.step.headers]\n");
        if !secret.is_empty() {
            let _ = writeln!(
                out,
                "# {} hold(s) credentials copied as they were: volley redacts them in what it \
                 writes, but not in this file. \"{{{{ env.NAME }}}}\" reads one from the \
                 environment instead.",
                secret.join(", ")
            );
        }
        for (name, value) in &r.headers {
            let _ = writeln!(out, "{} = {}", toml_str(name), toml_str(&literal(value)));
        }
    }
    let _ = write!(
        out,
        "\
[scenario.step.checks]
status = [{status}]   # counted pass/fail per response, never stops the run; also what counts as success
# latency_under = \"500ms\", body_contains = \"…\", json = {{ \"/id\" = 1 }}
",
        status = if r.method.eq_ignore_ascii_case("POST") && r.body.is_some() {
            "200, 201"
        } else {
            "200"
        },
    );
}

/// A step name from the method and the last segment of the path: `home`, `users`,
/// `post_cart`.
fn step_name(method: &str, url: &url::Url) -> String {
    let last = url
        .path_segments()
        .and_then(|mut s| s.rfind(|seg| !seg.is_empty()))
        .unwrap_or("");
    let mut name: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    if name.is_empty() {
        name = "home".into();
    }
    if method.eq_ignore_ascii_case("GET") {
        name
    } else {
        format!("{}_{name}", method.to_ascii_lowercase())
    }
}

#[cfg(test)]
#[path = "starter_tests.rs"]
mod tests;
