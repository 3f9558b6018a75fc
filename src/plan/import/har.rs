//! `volley new --from-har recording.har`: a browser's or a proxy's recording (HAR 1.2) turned
//! into a plan, one step per request, in the recorded order.
//!
//! - Left out: static assets (images, scripts, stylesheets, fonts, media: by the browser's
//!   resource type, the path's extension or the response's type) unless `--include`; requests
//!   to other origins than the first request's (a plan has one target); CORS preflights; what
//!   was never answered; URLs that are not http(s). Each is counted in a note.
//! - Headers as recorded, less those volley writes itself (hop-by-hop, `Host`,
//!   `Content-Length`, HTTP/2 pseudo-headers), `Accept-Encoding` (volley does not decode
//!   compressed bodies) and `Cookie` (the per-VU cookie jar sends what responses set). Headers
//!   every step sends alike go to `[target] headers`.
//! - Secrets (`Authorization`, API-key-like headers and query parameters, cookies the recording
//!   did not receive) become `{{ env.NAME }}` references: their values are never written.
//! - A value a response made (a JSON field) that a later request sends back becomes an
//!   `extract` on the first step whose response held it and a template where it is used, when
//!   that response holds it once (see [`reuse`]).
//! - The gap between a response's end and the next request's start is the step's `think`.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::text::{BodyText, Imported, PlanText, identifier, literal, unique};

#[path = "har_error.rs"]
mod error;
#[path = "har_request.rs"]
mod request;
#[path = "har_reuse.rs"]
mod reuse;
pub use error::HarError;
use error::LeftOut;

/// What `--from-har` is asked besides the file.
#[derive(Debug, Clone, Default)]
pub struct HarOptions {
    /// The target's URL instead of the recorded origin (`--base-url`).
    pub base_url: Option<String>,
    /// Keep static assets (`--include`).
    pub include_static: bool,
}

/// A HAR file's top: `{ "log": { "entries": [ … ] } }`.
#[derive(Debug, Deserialize)]
struct Har {
    log: Log,
}

#[derive(Debug, Deserialize)]
struct Log {
    entries: Vec<serde_json::Value>,
}

/// One recorded exchange (only what a plan needs).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(default)]
    started_date_time: String,
    #[serde(default)]
    time: f64,
    request: HarRequest,
    #[serde(default)]
    response: HarResponse,
    /// Chromium's resource type (`document`, `fetch`, `image`, `preflight`, …).
    #[serde(rename = "_resourceType", default)]
    resource_type: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HarRequest {
    method: String,
    url: String,
    #[serde(default)]
    headers: Vec<NameValue>,
    post_data: Option<PostData>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PostData {
    #[serde(default)]
    mime_type: String,
    text: Option<String>,
    #[serde(default)]
    params: Vec<NameValue>,
}

#[derive(Debug, Default, Deserialize)]
struct HarResponse {
    #[serde(default)]
    status: i64,
    #[serde(default)]
    headers: Vec<NameValue>,
    #[serde(default)]
    cookies: Vec<NameValue>,
    #[serde(default)]
    content: Content,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Content {
    #[serde(default)]
    mime_type: String,
    text: Option<String>,
    encoding: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct NameValue {
    name: String,
    #[serde(default)]
    value: String,
}

/// A request kept for a step, read from its entry.
#[derive(Debug)]
struct Exchange {
    /// Its place in the file (`log.entries[3]`).
    at: String,
    method: String,
    url: url::Url,
    headers: Vec<(String, String)>,
    body: Option<String>,
    body_type: String,
    status: u16,
    /// Start and end, ms since the epoch, when the entry says.
    start: Option<f64>,
    end: Option<f64>,
    /// The response's body, when it is JSON.
    response_json: Option<serde_json::Value>,
    /// Cookies received before this request (names): the cookie jar's business.
    jar: BTreeSet<String>,
}

/// Reads a HAR file and writes its plan.
pub fn import(path: &Path, options: &HarOptions) -> Result<Imported, HarError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| HarError::Read {
        file: file.clone(),
        source,
    })?;
    let name = path
        .file_stem()
        .map(|s| identifier(&s.to_string_lossy()))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "recorded".into());
    import_text(&file, &name, &text, options)
}

/// The plan for HAR `text` (from `file`, named `name`).
pub fn import_text(
    file: &str,
    name: &str,
    text: &str,
    options: &HarOptions,
) -> Result<Imported, HarError> {
    let shape = |at: String, why: String| HarError::Shape {
        file: file.to_string(),
        at,
        why,
    };
    let har: Har = serde_json::from_str(text).map_err(|source| {
        if source.is_data() {
            shape("log.entries".into(), format!("not a HAR: {source}"))
        } else {
            HarError::Json {
                file: file.to_string(),
                source,
            }
        }
    })?;
    let base_url = options
        .base_url
        .as_deref()
        .map(super::text::base_url)
        .transpose()
        .map_err(HarError::BaseUrl)?;
    let mut left_out = LeftOut::default();
    let mut kept = Vec::new();
    let mut jar = BTreeSet::new();
    for (i, value) in har.log.entries.iter().enumerate() {
        let at = format!("log.entries[{i}]");
        let entry: Entry = serde_json::from_value(value.clone())
            .map_err(|e| shape(at.clone(), format!("not a HAR entry: {e}")))?;
        let received = set_cookies(&entry.response);
        if let Some(x) =
            exchange(at, entry, &jar, options, &mut left_out).map_err(|(at, why)| {
                HarError::Shape {
                    file: file.into(),
                    at,
                    why,
                }
            })?
        {
            kept.push(x);
        }
        jar.extend(received);
    }
    let origin = kept.first().map(|x| x.url.origin());
    kept.retain(|x| {
        let same = Some(x.url.origin()) == origin;
        if !same {
            left_out
                .other_origins
                .insert(x.url.origin().ascii_serialization());
        }
        same
    });
    let Some(first) = kept.first() else {
        return Err(HarError::Empty {
            file: file.to_string(),
            why: left_out.why(har.log.entries.len()),
        });
    };
    let recorded = first.url.origin().ascii_serialization();
    let mut notes = left_out.notes();
    let plan = plan(name, file, &recorded, base_url, &kept, &mut notes);
    let summary = format!(
        "{} step(s) from {} request(s) of {file}",
        plan.steps.len(),
        har.log.entries.len()
    );
    Ok(Imported {
        text: plan.render(),
        notes,
        summary,
    })
}

/// The plan of the kept exchanges.
fn plan(
    name: &str,
    file: &str,
    recorded: &str,
    base_url: Option<String>,
    kept: &[Exchange],
    notes: &mut Vec<String>,
) -> PlanText {
    let mut names = Vec::new();
    let step_names: Vec<String> = kept
        .iter()
        .map(|x| unique(step_name(&x.method, &x.url), &mut names))
        .collect();
    let mut reuse = reuse::Reuse::new(kept.len());
    let mut secrets = request::Secrets::default();
    let mut steps = Vec::new();
    let rebase = base_url.as_deref().and_then(|b| {
        let to = url::Url::parse(b).ok()?.origin().ascii_serialization();
        Some((recorded.to_string(), to))
    });
    for (i, x) in kept.iter().enumerate() {
        let mut step = request::step(x, &step_names[i], rebase.as_ref(), &mut reuse, &mut secrets);
        step.think = kept.get(i + 1).and_then(|next| think(x, next));
        steps.push(step);
        if let Some(json) = &x.response_json {
            reuse.offer(i, &step_names[i], &resource(&x.url), json);
        }
    }
    for (step, extract) in steps.iter_mut().zip(reuse.extracts) {
        step.extract = extract;
    }
    notes.extend(reuse.notes);
    notes.extend(secrets.notes());
    let mut plan = PlanText {
        name: name.to_string(),
        about: vec![
            format!("A plan written by `volley new --from-har {file}`: one step per request,"),
            format!("in the recorded order (recorded against {recorded})."),
            "Secrets are read from the environment ({{ env.NAME }}): set them before running."
                .into(),
        ],
        base_url: base_url.unwrap_or_else(|| recorded.to_string()),
        secret_headers: secrets.marked(),
        steps,
        ..PlanText::default()
    };
    hoist_common_headers(&mut plan);
    plan
}

/// Headers every step sends with the same value (not a template) move to `[target] headers`.
fn hoist_common_headers(plan: &mut PlanText) {
    if plan.steps.len() < 2 {
        return;
    }
    let common: Vec<(String, String)> = plan.steps[0]
        .headers
        .iter()
        .filter(|(n, v)| {
            !v.contains("{{")
                && plan.steps[1..]
                    .iter()
                    .all(|s| s.headers.iter().any(|(m, w)| m == n && w == v))
        })
        .cloned()
        .collect();
    for step in &mut plan.steps {
        step.headers.retain(|h| !common.contains(h));
    }
    plan.headers = common;
}

/// The exchange an entry holds, or `None` when it is left out (counted in `left_out`); an
/// error (where, why) when the entry is malformed.
fn exchange(
    at: String,
    e: Entry,
    jar: &BTreeSet<String>,
    options: &HarOptions,
    left_out: &mut LeftOut,
) -> Result<Option<Exchange>, (String, String)> {
    let method = e.request.method.trim().to_ascii_uppercase();
    if method.is_empty() || !method.bytes().all(crate::plan::header::is_token_byte) {
        return Err((
            format!("{at}.request.method"),
            format!("`{}` is not an HTTP method", e.request.method),
        ));
    }
    let mut url = url::Url::parse(&e.request.url).map_err(|why| {
        (
            format!("{at}.request.url"),
            format!("`{}` is not a URL: {why}", e.request.url),
        )
    })?;
    url.set_fragment(None);
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        left_out.schemes.insert(url.scheme().to_string());
        return Ok(None);
    }
    let preflight = e.resource_type == "preflight"
        || (method == "OPTIONS"
            && e.request
                .headers
                .iter()
                .any(|h| h.name.eq_ignore_ascii_case("access-control-request-method")));
    if preflight {
        left_out.preflights += 1;
        return Ok(None);
    }
    let Ok(status) = u16::try_from(e.response.status) else {
        left_out.unanswered += 1;
        return Ok(None);
    };
    if !(100..=999).contains(&status) {
        left_out.unanswered += 1;
        return Ok(None);
    }
    if !options.include_static && is_static(&e, &url) {
        left_out.assets += 1;
        return Ok(None);
    }
    let start = epoch_ms(&e.started_date_time);
    let (body, body_type) = request_body(e.request.post_data.as_ref());
    Ok(Some(Exchange {
        at,
        method,
        headers: e
            .request
            .headers
            .iter()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect(),
        body,
        body_type,
        status,
        start,
        end: start.map(|s| s + e.time.max(0.0)),
        response_json: response_json(&e.response.content),
        jar: jar.clone(),
        url,
    }))
}

/// The request's body and its type: the text, or the form parameters encoded.
fn request_body(post: Option<&PostData>) -> (Option<String>, String) {
    let Some(post) = post else {
        return (None, String::new());
    };
    let body = match &post.text {
        Some(text) => Some(text.clone()),
        None if !post.params.is_empty() => Some(
            url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(post.params.iter().map(|p| (&p.name, &p.value)))
                .finish(),
        ),
        None => None,
    };
    (body, post.mime_type.clone())
}

/// A response body that is JSON (base64-encoded ones decoded).
fn response_json(content: &Content) -> Option<serde_json::Value> {
    use base64::Engine as _;
    let text = content.text.as_deref()?;
    let decoded;
    let text = if content.encoding.as_deref() == Some("base64") {
        decoded = base64::engine::general_purpose::STANDARD
            .decode(text)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())?;
        decoded.as_str()
    } else {
        text
    };
    let looks = content.mime_type.contains("json") || text.trim_start().starts_with(['{', '[']);
    looks.then(|| serde_json::from_str(text).ok()).flatten()
}

/// The cookie names a response sets (`Set-Cookie` headers, or the HAR's `cookies`).
fn set_cookies(r: &HarResponse) -> Vec<String> {
    let mut names: Vec<String> = r.cookies.iter().map(|c| c.name.clone()).collect();
    for h in &r.headers {
        if h.name.eq_ignore_ascii_case("set-cookie") {
            // Some tools join several Set-Cookie lines with newlines.
            for line in h.value.lines() {
                if let Some((name, _)) = line.split_once('=') {
                    names.push(name.trim().to_string());
                }
            }
        }
    }
    names
}

/// Extensions of static assets.
const STATIC_EXTENSIONS: &[&str] = &[
    "js", "mjs", "css", "png", "jpg", "jpeg", "gif", "svg", "ico", "webp", "avif", "bmp", "woff",
    "woff2", "ttf", "otf", "eot", "map", "mp4", "webm", "mp3", "ogg", "wav",
];

/// Resource types (Chromium's) of static assets.
const STATIC_TYPES: &[&str] = &[
    "image",
    "stylesheet",
    "script",
    "font",
    "media",
    "manifest",
    "texttrack",
];

/// Whether an entry fetched a static asset.
fn is_static(e: &Entry, url: &url::Url) -> bool {
    let kind = e.resource_type.to_ascii_lowercase();
    if STATIC_TYPES.contains(&kind.as_str()) {
        return true;
    }
    let last = url.path().rsplit('/').next().unwrap_or("");
    let by_extension = last
        .rsplit_once('.')
        .is_some_and(|(_, ext)| STATIC_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()));
    let mime = e.response.content.mime_type.to_ascii_lowercase();
    let by_type = [
        "image/",
        "font/",
        "video/",
        "audio/",
        "text/css",
        "javascript",
    ]
    .iter()
    .any(|t| mime.contains(t));
    by_extension || by_type
}

/// The last path segment with a letter in it: what a request is about (`tasks` for
/// `/tasks/7`); empty for `/`.
fn resource(url: &url::Url) -> String {
    url.path_segments()
        .and_then(|mut s| s.rfind(|seg| seg.chars().any(|c| c.is_ascii_alphabetic())))
        .map(identifier)
        .unwrap_or_default()
}

/// `get_tasks`, `post_tasks`, `get_home` (for `/`).
fn step_name(method: &str, url: &url::Url) -> String {
    let what = resource(url);
    let what = if what.is_empty() { "home".into() } else { what };
    format!("{}_{what}", identifier(method))
}

/// Gaps shorter than this are the browser's own work between requests, not a user's pause.
const MIN_THINK_MS: f64 = 10.0;

/// The pause between one exchange's end and the next one's start, when a user's.
fn think(x: &Exchange, next: &Exchange) -> Option<Duration> {
    let gap = next.start? - x.end?;
    (gap >= MIN_THINK_MS).then(|| Duration::from_millis(gap.round() as u64))
}

/// An ISO 8601 date and time (`2024-05-01T10:00:00.123Z`, `…+02:00`) as ms since the epoch.
fn epoch_ms(text: &str) -> Option<f64> {
    let (date, time) = text.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let zone_at = time.find(['Z', 'z', '+', '-']).unwrap_or(time.len());
    let (clock, zone) = time.split_at(zone_at);
    let mut c = clock.splitn(3, ':');
    let (h, min) = (
        c.next()?.parse::<i64>().ok()?,
        c.next()?.parse::<i64>().ok()?,
    );
    let sec: f64 = c.next()?.parse().ok()?;
    let offset_min = match zone.as_bytes().first() {
        Some(sign @ (b'+' | b'-')) => {
            let (oh, om) = zone[1..].split_once(':').unwrap_or((&zone[1..], "0"));
            let o = oh.parse::<i64>().ok()? * 60 + om.parse::<i64>().ok()?;
            if *sign == b'+' { o } else { -o }
        }
        _ => 0,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let minutes = days * 1440 + h * 60 + min - offset_min;
    Some(minutes as f64 * 60_000.0 + sec * 1000.0)
}

/// The step's body as plan text: JSON as a `json` table when TOML can hold it, else the text.
fn body_text(text: &str, json: Option<serde_json::Value>) -> BodyText {
    match json {
        Some(v) if super::text::toml_expressible(&v) && (v.is_object() || v.is_array()) => {
            BodyText::Json(v)
        }
        _ => BodyText::Text(literal(text)),
    }
}

#[cfg(test)]
#[path = "har_tests.rs"]
mod tests;
