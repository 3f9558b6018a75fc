//! Checks (conditions on a response, counted pass/fail) and extraction (values taken from a
//! response into variables for later steps).

use std::cell::OnceCell;
use std::time::Duration;

use minijinja::Value;

/// A condition on one response.
#[derive(Debug, Clone)]
pub enum Check {
    /// The status is one of these.
    StatusIn(Vec<u16>),
    /// The body contains this text.
    BodyContains(String),
    /// The JSON body's value at this pointer equals `expected`.
    JsonEquals {
        /// JSON pointer (RFC 6901).
        pointer: String,
        /// The expected value.
        expected: serde_json::Value,
    },
    /// The response has this header.
    HeaderPresent(String),
    /// The latency is below this bound.
    LatencyUnder(Duration),
}

/// Codes as a list with runs of three or more written as ranges: `200–299, 422`.
fn status_ranges(codes: &[u16]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < codes.len() {
        let mut j = i;
        while j + 1 < codes.len() && codes[j + 1] == codes[j] + 1 {
            j += 1;
        }
        match j - i {
            0 => parts.push(codes[i].to_string()),
            1 => parts.extend([codes[i].to_string(), codes[j].to_string()]),
            _ => parts.push(format!("{}–{}", codes[i], codes[j])),
        }
        i = j + 1;
    }
    parts.join(", ")
}

impl Check {
    /// The check as shown in reports.
    pub fn describe(&self) -> String {
        match self {
            Check::StatusIn(codes) => format!("status in [{}]", status_ranges(codes)),
            Check::BodyContains(text) => format!("body contains {text:?}"),
            Check::JsonEquals { pointer, expected } => format!("json {pointer} == {expected}"),
            Check::HeaderPresent(name) => format!("header {name} present"),
            Check::LatencyUnder(d) => format!("latency < {}", humantime::format_duration(*d)),
        }
    }

    /// Whether the response passes.
    pub fn passes(&self, r: &ResponseView<'_>) -> bool {
        match self {
            Check::StatusIn(codes) => r.status.is_some_and(|s| codes.contains(&s)),
            Check::BodyContains(text) => r.status.is_some() && memchr_find(r.body, text.as_bytes()),
            Check::JsonEquals { pointer, expected } => r
                .json()
                .and_then(|j| j.pointer(pointer))
                .is_some_and(|v| v == expected),
            Check::HeaderPresent(name) => r.header(name).is_some(),
            Check::LatencyUnder(bound) => r.status.is_some() && r.latency < *bound,
        }
    }
}

fn memchr_find(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// Where an extracted value comes from.
#[derive(Debug, Clone)]
pub enum ValueSource {
    /// The JSON body at a pointer.
    Json(String),
    /// A response header.
    Header(String),
    /// The first capture group (or the whole match) of a regex on the body.
    Regex(regex::Regex),
}

/// Takes one value from a response into a variable.
#[derive(Debug, Clone)]
pub struct Extract {
    /// Variable name.
    pub var: String,
    /// Where from.
    pub source: ValueSource,
}

impl Extract {
    /// The value, if the response has it.
    pub fn apply(&self, r: &ResponseView<'_>) -> Option<Value> {
        match &self.source {
            ValueSource::Json(pointer) => r
                .json()
                .and_then(|j| j.pointer(pointer))
                .map(|v| Value::from(minijinja::value::Serde(v))),
            ValueSource::Header(name) => r.header(name).map(Value::from),
            ValueSource::Regex(re) => {
                let body = std::str::from_utf8(r.body).ok()?;
                let caps = re.captures(body)?;
                let m = caps.get(1).or_else(|| caps.get(0))?;
                Some(Value::from(m.as_str()))
            }
        }
    }
}

/// Why a JSON path does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonPathError {
    /// A `[` without its `]`.
    #[error("`{0}`: unclosed `[`")]
    Unclosed(String),
    /// `[x]` where x is not a number.
    #[error("`{path}`: `[{index}]` is not an array index")]
    NotAnIndex {
        /// The path.
        path: String,
        /// What is between the brackets.
        index: String,
    },
    /// Text after an index.
    #[error("`{path}`: unexpected `{rest}`")]
    Unexpected {
        /// The path.
        path: String,
        /// The text after the index.
        rest: String,
    },
}

/// Turns a JSON path as users write it (`/a/0/b`, `$.a[0].b`, `a.b`) into a JSON pointer.
pub fn json_pointer(path: &str) -> Result<String, JsonPathError> {
    if path.is_empty() || path.starts_with('/') {
        return Ok(path.to_string());
    }
    let rest = path.strip_prefix('$').unwrap_or(path);
    let mut pointer = String::new();
    for segment in rest.split('.').filter(|s| !s.is_empty()) {
        let (name, mut indexes) = match segment.find('[') {
            Some(i) => (&segment[..i], &segment[i..]),
            None => (segment, ""),
        };
        if !name.is_empty() {
            pointer.push('/');
            pointer.push_str(&name.replace('~', "~0").replace('/', "~1"));
        }
        while let Some(stripped) = indexes.strip_prefix('[') {
            let end = stripped
                .find(']')
                .ok_or_else(|| JsonPathError::Unclosed(path.into()))?;
            let index = &stripped[..end];
            if index.parse::<usize>().is_err() {
                return Err(JsonPathError::NotAnIndex {
                    path: path.into(),
                    index: index.into(),
                });
            }
            pointer.push('/');
            pointer.push_str(index);
            indexes = &stripped[end + 1..];
        }
        if !indexes.is_empty() {
            return Err(JsonPathError::Unexpected {
                path: path.into(),
                rest: indexes.into(),
            });
        }
    }
    Ok(pointer)
}

/// A response as checks and extraction see it.
pub struct ResponseView<'a> {
    /// Status, when a response arrived.
    pub status: Option<u16>,
    /// The response headers (HTTP/2: then the trailers); empty when none were kept.
    pub headers: &'a http::HeaderMap,
    /// The body (possibly truncated at the capture limit).
    pub body: &'a [u8],
    /// Latency of the request.
    pub latency: Duration,
    json: OnceCell<Option<serde_json::Value>>,
}

impl<'a> ResponseView<'a> {
    /// A captured response.
    pub fn new(
        status: Option<u16>,
        headers: &'a http::HeaderMap,
        body: &'a [u8],
        latency: Duration,
    ) -> Self {
        Self {
            status,
            headers,
            body,
            latency,
            json: OnceCell::new(),
        }
    }

    /// The same response whose body reads as `json` (a gRPC message decoded by its type).
    pub fn with_json(self, json: serde_json::Value) -> Self {
        Self {
            json: OnceCell::from(Some(json)),
            ..self
        }
    }

    /// The body parsed as JSON (once), if it is JSON.
    pub fn json(&self) -> Option<&serde_json::Value> {
        self.json
            .get_or_init(|| serde_json::from_slice(self.body).ok())
            .as_ref()
    }

    /// A header's value (first occurrence), case-insensitive name.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &[u8] = br#"{"id": 7, "title": "x", "tags": ["a", "b"]}"#;

    fn headers() -> &'static http::HeaderMap {
        static HEADERS: std::sync::OnceLock<http::HeaderMap> = std::sync::OnceLock::new();
        HEADERS.get_or_init(|| {
            let mut h = http::HeaderMap::new();
            h.insert("location", http::HeaderValue::from_static("/tasks/7"));
            h.insert(
                "content-type",
                http::HeaderValue::from_static("application/json"),
            );
            h
        })
    }

    fn view() -> ResponseView<'static> {
        ResponseView::new(Some(201), headers(), BODY, Duration::from_millis(3))
    }

    #[test]
    fn checks_pass_and_fail() {
        let r = view();
        let cases = [
            (Check::StatusIn(vec![200, 201]), true),
            (Check::StatusIn(vec![200]), false),
            (Check::BodyContains("\"title\"".into()), true),
            (Check::BodyContains("nope".into()), false),
            (
                Check::JsonEquals {
                    pointer: "/id".into(),
                    expected: serde_json::json!(7),
                },
                true,
            ),
            (
                Check::JsonEquals {
                    pointer: "/tags/1".into(),
                    expected: serde_json::json!("a"),
                },
                false,
            ),
            (Check::HeaderPresent("location".into()), true),
            (Check::HeaderPresent("etag".into()), false),
            (Check::LatencyUnder(Duration::from_millis(5)), true),
            (Check::LatencyUnder(Duration::from_millis(2)), false),
        ];
        for (check, expected) in cases {
            assert_eq!(check.passes(&r), expected, "{}", check.describe());
        }
        let empty = http::HeaderMap::new();
        let failed = ResponseView::new(None, &empty, b"", Duration::ZERO);
        assert!(!Check::StatusIn(vec![200]).passes(&failed));
    }

    #[test]
    fn extraction_from_json_header_and_regex() {
        let r = view();
        let json = Extract {
            var: "id".into(),
            source: ValueSource::Json("/id".into()),
        };
        assert_eq!(json.apply(&r), Some(Value::from(7)));
        let header = Extract {
            var: "loc".into(),
            source: ValueSource::Header("LOCATION".into()),
        };
        assert_eq!(header.apply(&r), Some(Value::from("/tasks/7")));
        let re = Extract {
            var: "t".into(),
            source: ValueSource::Regex(regex::Regex::new(r#""title": "(\w+)""#).unwrap()),
        };
        assert_eq!(re.apply(&r), Some(Value::from("x")));
        let missing = Extract {
            var: "m".into(),
            source: ValueSource::Json("/missing".into()),
        };
        assert_eq!(missing.apply(&r), None);
    }

    #[test]
    fn json_paths_become_pointers() {
        assert_eq!(json_pointer("/a/0").unwrap(), "/a/0");
        assert_eq!(json_pointer("$.a[0].b").unwrap(), "/a/0/b");
        assert_eq!(json_pointer("id").unwrap(), "/id");
        assert_eq!(json_pointer("$.items[2][1]").unwrap(), "/items/2/1");
        assert!(json_pointer("$.a[x]").is_err());
        assert!(json_pointer("$.a[1").is_err());
    }
}
