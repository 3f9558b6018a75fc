//! The plan text the importers write: TOML in the style of the starter plan (commented, one
//! `[[scenario.step]]` per request), from a model of the plan they build. Every value that is
//! not meant as a template is written so that the plan reader takes it literally.

use std::fmt::Write as _;
use std::time::Duration;

/// A plan an importer made: its text, and what the user should read about it (printed to
/// stderr as `note: …`, never written into the plan when it would name a secret).
#[derive(Debug, Clone)]
pub struct Imported {
    /// The plan, TOML.
    pub text: String,
    /// What was decided that the user should know: requests left out, values turned into
    /// variables, secrets to set in the environment.
    pub notes: Vec<String>,
    /// One line saying what the plan holds (`9 steps from recording.har`).
    pub summary: String,
}

/// The plan as an importer builds it.
#[derive(Debug, Default)]
pub(super) struct PlanText {
    /// The plan's and its scenario's name.
    pub name: String,
    /// Comment lines at the top (where the plan came from).
    pub about: Vec<String>,
    /// `[target] base_url`.
    pub base_url: String,
    /// `[target] headers`: sent by every step (template-ready values).
    pub headers: Vec<(String, String)>,
    /// `[target] secret_headers`: headers redacted in every output besides the usual ones.
    pub secret_headers: Vec<String>,
    /// `[data.NAME] file = …`.
    pub data: Vec<(String, String)>,
    /// The steps, in order.
    pub steps: Vec<StepText>,
}

/// One `[[scenario.step]]`.
#[derive(Debug, Default)]
pub(super) struct StepText {
    /// Comment lines above the step.
    pub about: Vec<String>,
    /// Unique within the plan.
    pub name: String,
    /// Upper case.
    pub method: String,
    /// Path and query (template-ready: literal parts escaped, see [`literal`]).
    pub path: String,
    /// Headers (template-ready values).
    pub headers: Vec<(String, String)>,
    /// The body, if any.
    pub body: Option<BodyText>,
    /// Comment lines below the request (what was left out of it).
    pub remarks: Vec<String>,
    /// Pause after the request.
    pub think: Option<Duration>,
    /// Variables taken from the response: name and JSON pointer.
    pub extract: Vec<(String, String)>,
    /// The statuses the check accepts (none: no status check).
    pub status: Vec<u16>,
}

/// A step's body.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum BodyText {
    /// `body = '…'` (template-ready).
    Text(String),
    /// `json = { … }` (string leaves template-ready; no nulls: TOML has none).
    Json(serde_json::Value),
}

/// The closed-model ramp every imported plan (and the starter plan) runs, for scenario `name`.
pub(super) fn scenario(name: &str) -> String {
    format!(
        r#"
[[scenario]]
name = {name}
# Closed model: each virtual user (VU) sends its next request as soon as the previous answer is
# in. For a fixed arrival rate instead (the open model), replace the load with e.g.
#   profile = "ramping-arrival-rate", start_rate = 10, time_unit = "1s", max_vus = 200,
#   stages = [{{ duration = "30s", target = 100 }}]        (target: iterations per time_unit)
[scenario.load]
profile = "ramping-vus"
stages = [
  {{ duration = "10s", target = 10 }},   # ramp up from 0 to 10 VUs
  {{ duration = "20s", target = 10 }},   # hold 10 VUs
  {{ duration = "5s", target = 0 }},     # ramp down
]
"#,
        name = toml_str(name)
    )
}

/// The thresholds: what makes the run pass (exit code 99 when one fails).
pub(super) const THRESHOLDS: &str = r#"
[thresholds]
# The run passes only if these hold; otherwise volley exits with code 99.
latency = ["p95 < 500ms"]
errors = ["rate < 1%"]
"#;

impl PlanText {
    /// The plan's TOML text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for line in &self.about {
            let _ = writeln!(out, "# {line}");
        }
        let _ = write!(
            out,
            "#   volley check plan.toml   # validates it and prints the request each step sends\n\
             #   volley run plan.toml     # runs it (--time-scale 0.1: every stage ten times shorter)\n\
             name = {name}\n\n[target]\nbase_url = {base}   # each step's path is appended\n\
             timeout = \"10s\"\n",
            name = toml_str(&self.name),
            base = toml_str(&self.base_url),
        );
        if !self.secret_headers.is_empty() {
            let list: Vec<String> = self.secret_headers.iter().map(|h| toml_str(h)).collect();
            let _ = writeln!(
                out,
                "secret_headers = [{}]   # redacted in every output",
                list.join(", ")
            );
        }
        if !self.headers.is_empty() {
            out.push_str("[target.headers]   # sent by every step\n");
            for (name, value) in &self.headers {
                let _ = writeln!(out, "{} = {}", toml_key(name), toml_str(value));
            }
        }
        for (name, file) in &self.data {
            let _ = write!(
                out,
                "\n[data.{}]\nfile = {}   # relative to this plan\nmode = \"sequential\"\n",
                toml_key(name),
                toml_str(file)
            );
        }
        out.push_str(&scenario(&self.name));
        for step in &self.steps {
            step.render(&mut out);
        }
        out.push_str(THRESHOLDS);
        out
    }
}

impl StepText {
    fn render(&self, out: &mut String) {
        out.push('\n');
        for line in &self.about {
            let _ = writeln!(out, "# {line}");
        }
        let _ = writeln!(
            out,
            "[[scenario.step]]\nname = {}\nmethod = {}\npath = {}",
            toml_str(&self.name),
            toml_str(&self.method),
            toml_str(&self.path)
        );
        match &self.body {
            Some(BodyText::Text(text)) => {
                let _ = writeln!(out, "body = {}", toml_str(text));
            }
            Some(BodyText::Json(value)) => {
                let _ = writeln!(out, "json = {}", toml_inline(value));
            }
            None => {}
        }
        if let Some(think) = self.think {
            let _ = writeln!(out, "think = \"{}ms\"", think.as_millis());
        }
        for line in &self.remarks {
            let _ = writeln!(out, "# {line}");
        }
        if !self.headers.is_empty() {
            out.push_str("[scenario.step.headers]\n");
            for (name, value) in &self.headers {
                let _ = writeln!(out, "{} = {}", toml_key(name), toml_str(value));
            }
        }
        if !self.extract.is_empty() {
            out.push_str("[scenario.step.extract]\n");
            for (var, pointer) in &self.extract {
                let _ = writeln!(out, "{var} = {{ json = {} }}", toml_str(pointer));
            }
        }
        if !self.status.is_empty() {
            let codes: Vec<String> = self.status.iter().map(u16::to_string).collect();
            let _ = writeln!(
                out,
                "[scenario.step.checks]\nstatus = [{}]",
                codes.join(", ")
            );
        }
    }
}

/// Whether `value` can be written as a TOML inline value (no nulls, integers in range).
pub(super) fn toml_expressible(value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Null => false,
        Value::Number(n) => n.is_i64() || n.is_f64(),
        Value::Array(items) => items.iter().all(toml_expressible),
        Value::Object(map) => map.values().all(toml_expressible),
        Value::Bool(_) | Value::String(_) => true,
    }
}

/// A JSON value as a one-line TOML inline value (see [`toml_expressible`]).
fn toml_inline(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "\"\"".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => toml::Value::Float(n.as_f64().unwrap_or(0.0)).to_string(),
        },
        Value::String(s) => toml_str(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(toml_inline).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) if map.is_empty() => "{}".into(),
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{} = {}", toml_key(k), toml_inline(v)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
    }
}

/// A TOML key: bare when it can be, else quoted.
fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        key.to_string()
    } else {
        toml::Value::String(key.to_string()).to_string()
    }
}

/// Text a plan must not read as a template: `{{`/`{%` (which would make it one) wrapped in a
/// raw block.
pub(super) fn literal(text: &str) -> String {
    if text.contains("{{") || text.contains("{%") || text.contains("{#") {
        format!("{{% raw %}}{text}{{% endraw %}}")
    } else {
        text.to_string()
    }
}

/// A TOML string: literal (`'…'`) when it can be, else basic with escapes.
pub(super) fn toml_str(s: &str) -> String {
    let literal_ok = !s.contains('\'') && !s.chars().any(|c| c.is_control() && c != '\t');
    if literal_ok {
        format!("'{s}'")
    } else {
        toml::Value::String(s.to_string()).to_string()
    }
}

/// A name for plans, steps and variables: lower-case ASCII letters, digits and `_` (camelCase
/// split: `getPetById` → `get_pet_by_id`), at most 40 characters (empty when nothing of
/// `text` is usable).
pub(super) fn identifier(text: &str) -> String {
    let mut name = String::new();
    let mut lower_before = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && lower_before {
                name.push('_');
            }
            name.push(c.to_ascii_lowercase());
            lower_before = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !name.is_empty() && !name.ends_with('_') {
                name.push('_');
            }
            lower_before = false;
        }
        if name.len() >= 40 {
            break;
        }
    }
    name.trim_end_matches('_').to_string()
}

/// `name`, or `name_2`, `name_3`, … : the first not in `taken`, which it joins.
pub(super) fn unique(name: String, taken: &mut Vec<String>) -> String {
    let mut candidate = name.clone();
    let mut n = 1;
    while taken.contains(&candidate) {
        n += 1;
        candidate = format!("{name}_{n}");
    }
    taken.push(candidate.clone());
    candidate
}

/// A `--base-url`: an http(s) URL with a host, without a trailing `/` (steps' paths start
/// with one).
pub fn base_url(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text).map_err(|e| format!("`{text}` is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(format!(
            "`{text}` is not an http:// or https:// URL with a host"
        ));
    }
    Ok(url.as_str().trim_end_matches('/').to_string())
}

/// Words in a header's or query parameter's name that make its value a secret (besides
/// `Authorization` and `Proxy-Authorization`).
const SECRET_WORDS: &[&str] = &[
    "auth",
    "token",
    "secret",
    "key",
    "password",
    "passwd",
    "session",
    "signature",
    "credential",
];

/// Whether a header or query parameter named `name` holds a secret.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    crate::redact::ALWAYS_SECRET.contains(&n.as_str()) || SECRET_WORDS.iter().any(|w| n.contains(w))
}
