//! `volley new --from-curl 'curl …'`: a curl command line (as browsers' "Copy as cURL" writes it,
//! or as typed) turned into the one request a plan step sends.
//!
//! Every option that changes what curl sends is either translated or refused by name; options
//! that change only what curl prints or saves are accepted and have no effect. Nothing is read
//! from files (`-d @file`, `-b jar.txt`, `-H @file` are refused with the plan key to use instead).

use std::time::Duration;

use base64::Engine as _;

#[path = "curl_error.rs"]
mod error;
pub use error::CurlError;

/// The request a curl command sends, as a plan step and its target need it.
#[derive(Debug, Clone, PartialEq)]
pub struct CurlRequest {
    /// HTTP method (upper case as written; curl sends `-X` verbatim).
    pub method: String,
    /// The URL (scheme http or https), query included, fragment dropped.
    pub url: url::Url,
    /// Headers in the order given, one entry per name (repeats joined, see [`add_header`]).
    pub headers: Vec<(String, String)>,
    /// The body, if any.
    pub body: Option<String>,
    /// `-k`: accept any server certificate.
    pub insecure: bool,
    /// `--http2` / `--http2-prior-knowledge`.
    pub http2: bool,
    /// `-m SECONDS`: the whole request's time limit.
    pub timeout: Option<Duration>,
    /// What was accepted without an equivalent, for the user to read (one line each).
    pub notes: Vec<String>,
}

/// How an option's value (if any) is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opt {
    Method,
    Header,
    /// `-d`, `--data`, `--data-ascii`, `--data-binary`: `@file` reads a file.
    Data,
    /// `--data-raw`: `@` is literal.
    DataRaw,
    DataUrlencode,
    Json,
    Get,
    Head,
    User,
    Bearer,
    UserAgent,
    Referer,
    Cookie,
    Url,
    Insecure,
    Compressed,
    Http2,
    MaxTime,
    /// Accepted, no effect on the request; the text says why when it matters (else empty).
    Ignored(&'static str),
    /// Takes a value, no effect on the request.
    IgnoredWithValue(&'static str),
    /// Refused, with the reason.
    Refused(&'static str),
    RefusedWithValue(&'static str),
}

const NO_REDIRECTS: &str = "volley does not follow redirects: a 3xx answer is the response \
                            (add its status to the step's checks if it is expected)";
const OWN_TIMEOUT: &str = "volley's per-request timeout covers connecting too ([target] timeout)";
const NO_FORMS: &str = "multipart forms are not supported; \"Copy as cURL\" in a browser writes \
                        the encoded body with --data-raw instead";
const NO_FILES: &str = "nothing is read from files; set the step's body_file or [target.tls] \
                        in the plan instead";
const NO_PROXY: &str = "volley connects to the target directly";

/// The options known, by long name, with their short letter where curl has one.
const OPTIONS: &[(&str, Option<char>, Opt)] = &[
    ("request", Some('X'), Opt::Method),
    ("header", Some('H'), Opt::Header),
    ("data", Some('d'), Opt::Data),
    ("data-ascii", None, Opt::Data),
    ("data-binary", None, Opt::Data),
    ("data-raw", None, Opt::DataRaw),
    ("data-urlencode", None, Opt::DataUrlencode),
    ("json", None, Opt::Json),
    ("get", Some('G'), Opt::Get),
    ("head", Some('I'), Opt::Head),
    ("user", Some('u'), Opt::User),
    ("basic", None, Opt::Ignored("")),
    ("oauth2-bearer", None, Opt::Bearer),
    ("user-agent", Some('A'), Opt::UserAgent),
    ("referer", Some('e'), Opt::Referer),
    ("cookie", Some('b'), Opt::Cookie),
    ("url", None, Opt::Url),
    ("insecure", Some('k'), Opt::Insecure),
    ("compressed", None, Opt::Compressed),
    ("http1.1", None, Opt::Ignored("")),
    ("http2", None, Opt::Http2),
    ("http2-prior-knowledge", None, Opt::Http2),
    ("max-time", Some('m'), Opt::MaxTime),
    ("connect-timeout", None, Opt::IgnoredWithValue(OWN_TIMEOUT)),
    ("location", Some('L'), Opt::Ignored(NO_REDIRECTS)),
    ("max-redirs", None, Opt::IgnoredWithValue(NO_REDIRECTS)),
    ("silent", Some('s'), Opt::Ignored("")),
    ("show-error", Some('S'), Opt::Ignored("")),
    ("verbose", Some('v'), Opt::Ignored("")),
    ("include", Some('i'), Opt::Ignored("")),
    ("fail", Some('f'), Opt::Ignored("")),
    ("fail-with-body", None, Opt::Ignored("")),
    ("no-buffer", Some('N'), Opt::Ignored("")),
    ("progress-bar", Some('#'), Opt::Ignored("")),
    ("globoff", Some('g'), Opt::Ignored("")),
    ("path-as-is", None, Opt::Ignored("")),
    ("remote-name", Some('O'), Opt::Ignored("")),
    ("ipv4", Some('4'), Opt::Ignored("")),
    ("ipv6", Some('6'), Opt::Ignored("")),
    ("output", Some('o'), Opt::IgnoredWithValue("")),
    ("write-out", Some('w'), Opt::IgnoredWithValue("")),
    ("dump-header", Some('D'), Opt::IgnoredWithValue("")),
    (
        "retry",
        None,
        Opt::IgnoredWithValue("volley never retries a request"),
    ),
    ("retry-delay", None, Opt::IgnoredWithValue("")),
    ("retry-max-time", None, Opt::IgnoredWithValue("")),
    ("form", Some('F'), Opt::RefusedWithValue(NO_FORMS)),
    ("form-string", None, Opt::RefusedWithValue(NO_FORMS)),
    ("upload-file", Some('T'), Opt::RefusedWithValue(NO_FILES)),
    ("cacert", None, Opt::RefusedWithValue(NO_FILES)),
    ("cert", Some('E'), Opt::RefusedWithValue(NO_FILES)),
    ("key", None, Opt::RefusedWithValue(NO_FILES)),
    ("proxy", Some('x'), Opt::RefusedWithValue(NO_PROXY)),
    (
        "http1.0",
        Some('0'),
        Opt::Refused("volley speaks HTTP/1.1 or HTTP/2"),
    ),
    (
        "http3",
        None,
        Opt::Refused("volley speaks HTTP/1.1 or HTTP/2"),
    ),
];

/// Parses a curl command line (the whole text, `curl` first).
pub fn parse(command: &str) -> Result<CurlRequest, CurlError> {
    if command.contains("^\"") {
        return Err(CurlError::WindowsQuoting);
    }
    let words = super::shell::split(command)?;
    let (first, args) = words.split_first().ok_or(CurlError::Empty)?;
    let program = first.rsplit('/').next().unwrap_or(first);
    if program != "curl" && program != "curl.exe" {
        return Err(CurlError::NotCurl(first.clone()));
    }
    let mut b = Builder::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if let Some(name) = arg.strip_prefix("--") {
            if name.is_empty() {
                for url in &args[i..] {
                    b.url(url)?;
                }
                break;
            }
            let (_, _, opt) = OPTIONS
                .iter()
                .find(|(long, _, _)| *long == name)
                .ok_or_else(|| CurlError::Unsupported(arg.clone()))?;
            let value = if takes_value(*opt) {
                let v = args
                    .get(i)
                    .ok_or_else(|| CurlError::NeedsValue(arg.clone()))?;
                i += 1;
                Some(v.as_str())
            } else {
                None
            };
            b.apply(arg, *opt, value)?;
        } else if arg.len() > 1 && arg.starts_with('-') {
            i += short_cluster(&mut b, arg, args.get(i).map(String::as_str))?;
        } else {
            b.url(arg)?;
        }
    }
    b.finish()
}

/// Applies `-abc` (flags) or `-Xvalue` / `-X value`; returns how many following words it used.
fn short_cluster(b: &mut Builder, arg: &str, next: Option<&str>) -> Result<usize, CurlError> {
    let letters: Vec<char> = arg[1..].chars().collect();
    for (k, letter) in letters.iter().enumerate() {
        let (_, _, opt) = OPTIONS
            .iter()
            .find(|(_, short, _)| *short == Some(*letter))
            .ok_or_else(|| CurlError::Unsupported(format!("-{letter}")))?;
        if takes_value(*opt) {
            let rest: String = letters[k + 1..].iter().collect();
            let shown = format!("-{letter}");
            return if rest.is_empty() {
                let v = next.ok_or_else(|| CurlError::NeedsValue(shown.clone()))?;
                b.apply(&shown, *opt, Some(v))?;
                Ok(1)
            } else {
                b.apply(&shown, *opt, Some(&rest))?;
                Ok(0)
            };
        }
        b.apply(&format!("-{letter}"), *opt, None)?;
    }
    Ok(0)
}

fn takes_value(opt: Opt) -> bool {
    !matches!(
        opt,
        Opt::Get
            | Opt::Head
            | Opt::Insecure
            | Opt::Compressed
            | Opt::Http2
            | Opt::Ignored(_)
            | Opt::Refused(_)
    )
}

/// The request as the options build it up.
#[derive(Debug, Default)]
struct Builder {
    method: Option<String>,
    url: Option<String>,
    headers: Vec<(String, String)>,
    /// Pieces of the body and whether each came from `--json` (joined without `&`).
    data: Vec<(String, bool)>,
    get: bool,
    head: bool,
    json: bool,
    compressed: bool,
    user: Option<String>,
    insecure: bool,
    http2: bool,
    timeout: Option<Duration>,
    notes: Vec<String>,
}

impl Builder {
    fn url(&mut self, url: &str) -> Result<(), CurlError> {
        if let Some(first) = &self.url {
            return Err(CurlError::TwoUrls(first.clone(), url.to_string()));
        }
        self.url = Some(url.to_string());
        Ok(())
    }

    fn apply(&mut self, arg: &str, opt: Opt, value: Option<&str>) -> Result<(), CurlError> {
        let v = value.unwrap_or_default();
        match opt {
            Opt::Method => self.method = Some(v.to_string()),
            Opt::Header => self.header(v)?,
            Opt::Data | Opt::DataRaw | Opt::Json => {
                if opt != Opt::DataRaw && v.starts_with('@') {
                    return Err(CurlError::BodyFile(format!("{arg} {v}")));
                }
                self.json |= opt == Opt::Json;
                self.data.push((v.to_string(), opt == Opt::Json));
            }
            Opt::DataUrlencode => self.data.push((urlencode_data(arg, v)?, false)),
            Opt::Get => self.get = true,
            Opt::Head => self.head = true,
            Opt::User => self.user = Some(v.to_string()),
            Opt::Bearer => self.push_header("Authorization", format!("Bearer {v}")),
            Opt::UserAgent => self.push_header("User-Agent", v.to_string()),
            Opt::Referer => {
                let r = v.strip_suffix(";auto").unwrap_or(v);
                self.push_header("Referer", r.to_string());
            }
            Opt::Cookie => {
                if !v.contains('=') {
                    return Err(CurlError::CookieFile(format!("{arg} {v}")));
                }
                self.push_header("Cookie", v.to_string());
            }
            Opt::Url => self.url(v)?,
            Opt::Insecure => self.insecure = true,
            Opt::Compressed => self.compressed = true,
            Opt::Http2 => self.http2 = true,
            Opt::MaxTime => {
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or_else(|| CurlError::NotSeconds(format!("{arg} {v}")))?;
                self.timeout = Some(Duration::from_secs_f64(secs.min(86_400.0)));
            }
            Opt::Ignored(why) | Opt::IgnoredWithValue(why) => {
                if !why.is_empty() {
                    self.notes.push(format!("curl {arg}: {why}"));
                }
            }
            Opt::Refused(why) | Opt::RefusedWithValue(why) => {
                return Err(CurlError::Refused {
                    arg: arg.to_string(),
                    why,
                });
            }
        }
        Ok(())
    }

    /// `-H 'Name: value'`; `Name;` sends an empty value; `Name:` (curl: remove an internal
    /// header) sends nothing.
    fn header(&mut self, h: &str) -> Result<(), CurlError> {
        if h.starts_with('@') {
            return Err(CurlError::HeaderFile(h.to_string()));
        }
        if let Some(name) = h.strip_suffix(';').filter(|n| !n.contains(':')) {
            self.push_header(name.trim(), String::new());
            return Ok(());
        }
        let (name, value) = h
            .split_once(':')
            .ok_or_else(|| CurlError::HeaderShape(h.to_string()))?;
        let (name, value) = (name.trim(), value.trim());
        if name.is_empty() || name.bytes().any(|b| !b.is_ascii_graphic()) {
            return Err(CurlError::HeaderName(h.to_string()));
        }
        if !value.is_empty() {
            self.push_header(name, value.to_string());
        }
        Ok(())
    }

    fn push_header(&mut self, name: &str, value: String) {
        add_header(&mut self.headers, name, value);
    }

    fn has(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    fn finish(mut self) -> Result<CurlRequest, CurlError> {
        let written = self.url.take().ok_or(CurlError::NoUrl)?;
        let mut url = parse_url(&written)?;
        if let Some(user) = self.user.take().or_else(|| userinfo(&url)) {
            if !user.contains(':') {
                return Err(CurlError::NoPassword);
            }
            let token = base64::engine::general_purpose::STANDARD.encode(user);
            add_header(&mut self.headers, "Authorization", format!("Basic {token}"));
        }
        let _ = url.set_username("");
        let _ = url.set_password(None);
        url.set_fragment(None);
        let mut body = self.join_data();
        if self.get {
            if let Some(data) = body.take() {
                let query = match url.query() {
                    Some(q) if !q.is_empty() => format!("{q}&{data}"),
                    _ => data,
                };
                url.set_query(Some(&query));
            }
        }
        if self.json {
            for name in ["Content-Type", "Accept"] {
                if !self.has(name) {
                    self.push_header(name, "application/json".into());
                }
            }
        } else if body.is_some() && !self.has("Content-Type") {
            self.push_header("Content-Type", "application/x-www-form-urlencoded".into());
        }
        if self.compressed && !self.has("Accept-Encoding") {
            self.push_header("Accept-Encoding", "deflate, gzip, br, zstd".into());
        }
        let method = match (&self.method, self.head, &body) {
            (Some(m), _, _) => m.clone(),
            (None, true, _) => "HEAD".into(),
            (None, false, Some(_)) => "POST".into(),
            (None, false, None) => "GET".into(),
        };
        self.drop_headers_volley_writes();
        Ok(CurlRequest {
            method,
            url,
            headers: self.headers,
            body,
            insecure: self.insecure,
            http2: self.http2,
            timeout: self.timeout,
            notes: self.notes,
        })
    }

    /// The data pieces as curl joins them: `&` between form pieces, nothing between `--json`
    /// pieces.
    fn join_data(&self) -> Option<String> {
        let mut out: Option<String> = None;
        for (piece, json) in &self.data {
            match &mut out {
                None => out = Some(piece.clone()),
                Some(o) => {
                    if !json {
                        o.push('&');
                    }
                    o.push_str(piece);
                }
            }
        }
        out
    }

    /// Content-Length is computed from the body (a plan's body may change); with HTTP/2,
    /// connection-specific headers are not allowed on the wire.
    fn drop_headers_volley_writes(&mut self) {
        let mut dropped = Vec::new();
        let http2 = self.http2;
        self.headers.retain(|(n, _)| {
            let n = n.to_ascii_lowercase();
            let hop = [
                "connection",
                "keep-alive",
                "proxy-connection",
                "te",
                "upgrade",
            ];
            let drop = n == "content-length" || (http2 && hop.contains(&n.as_str()));
            if drop {
                dropped.push(n);
            }
            !drop
        });
        if !dropped.is_empty() {
            self.notes.push(format!(
                "left out header(s) {}: volley writes what the connection needs",
                dropped.join(", ")
            ));
        }
    }
}

/// Adds a header; a repeated name (in any case) is joined to the first, with `; ` for Cookie
/// and `, ` otherwise (a plan step has one value per name).
pub fn add_header(headers: &mut Vec<(String, String)>, name: &str, value: String) {
    match headers
        .iter_mut()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
    {
        Some((n, v)) => {
            let sep = if n.eq_ignore_ascii_case("cookie") {
                "; "
            } else {
                ", "
            };
            if v.is_empty() {
                *v = value;
            } else if !value.is_empty() {
                v.push_str(sep);
                v.push_str(&value);
            }
        }
        None => headers.push((name.to_string(), value)),
    }
}

/// A URL as curl takes it: `http://` when no scheme is given; http and https only.
fn parse_url(written: &str) -> Result<url::Url, CurlError> {
    let text = if written.contains("://") {
        written.to_string()
    } else {
        format!("http://{written}")
    };
    let url = url::Url::parse(&text).map_err(|e| CurlError::BadUrl(written.to_string(), e))?;
    match url.scheme() {
        "http" | "https" if url.host().is_some() => Ok(url),
        "http" | "https" => Err(CurlError::NoHost(written.to_string())),
        other => Err(CurlError::Scheme(written.to_string(), other.to_string())),
    }
}

use crate::redact::url_userinfo as userinfo;

/// `--data-urlencode`: `content`, `=content` or `name=content`, the content percent-encoded.
fn urlencode_data(arg: &str, v: &str) -> Result<String, CurlError> {
    match v.find(['=', '@']) {
        Some(at) if v.as_bytes()[at] == b'@' => Err(CurlError::DataFile(format!("{arg} {v}"))),
        Some(0) => Ok(percent_encode(&v[1..])),
        Some(at) => Ok(format!("{}={}", &v[..at], percent_encode(&v[at + 1..]))),
        None => Ok(percent_encode(v)),
    }
}

/// Percent-encodes all but ALPHA, DIGIT and `-._~`, as curl's URL encoding does.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
#[path = "curl_tests.rs"]
mod tests;
