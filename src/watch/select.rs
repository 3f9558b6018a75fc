//! Which series of a scraped page a watch keeps: PromQL-style selectors.
//!
//! `name`, `name{label="v"}`, `name{label=~"re",other!="x"}`, or a regex on the name with
//! `{__name__=~"volley_.*"}`. The name matches the metric family (`http_seconds` selects
//! `http_seconds_bucket`, `_sum` and `_count`) or the sample's own name. Regexes are anchored at
//! both ends, as in PromQL.

use regex::Regex;

use super::text::ExpositionSample;

/// A label matcher's operator.
#[derive(Debug, Clone)]
enum MatchOp {
    Eq(String),
    Ne(String),
    Re(Regex),
    NotRe(Regex),
}

impl MatchOp {
    fn matches(&self, value: &str) -> bool {
        match self {
            MatchOp::Eq(v) => value == v,
            MatchOp::Ne(v) => value != v,
            MatchOp::Re(r) => r.is_match(value),
            MatchOp::NotRe(r) => !r.is_match(value),
        }
    }
}

/// One selector: a metric name (or none) and label matchers, all of which must hold.
#[derive(Debug, Clone)]
pub struct Selector {
    name: Option<String>,
    matchers: Vec<(String, MatchOp)>,
}

/// A selector that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("watch selector `{selector}`: {why}")]
pub struct SelectorError {
    /// The selector as given.
    pub selector: String,
    /// What is wrong with it.
    pub why: String,
}

impl Selector {
    /// Parses `name{label op "value", …}` (op: `=`, `!=`, `=~`, `!~`).
    pub fn parse(s: &str) -> Result<Selector, SelectorError> {
        let fail = |why: &str| SelectorError {
            selector: s.to_string(),
            why: why.to_string(),
        };
        let s_trim = s.trim();
        let (name, rest) = match s_trim.find('{') {
            Some(i) => (s_trim[..i].trim(), &s_trim[i + 1..]),
            None => (s_trim, ""),
        };
        let valid_name = name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        if !valid_name {
            return Err(fail("a metric name has only letters, digits, `_` and `:`"));
        }
        let mut matchers = Vec::new();
        if s_trim.contains('{') {
            let body = rest
                .trim_end()
                .strip_suffix('}')
                .ok_or_else(|| fail("`{` without its `}`"))?;
            for part in split_matchers(body) {
                matchers.push(parse_matcher(part).map_err(|why| fail(&why.to_string()))?);
            }
        }
        if name.is_empty() && matchers.is_empty() {
            return Err(fail("name a metric, or give label matchers"));
        }
        Ok(Selector {
            name: (!name.is_empty()).then(|| name.to_string()),
            matchers,
        })
    }

    /// Whether the sample (of family `family`) is selected.
    pub fn matches(&self, family: &str, sample: &ExpositionSample<'_>) -> bool {
        if let Some(name) = &self.name
            && name != family
            && name != sample.name
        {
            return false;
        }
        self.matchers.iter().all(|(label, op)| {
            if label == "__name__" {
                op.matches(family) || op.matches(sample.name)
            } else {
                op.matches(sample.label(label).unwrap_or(""))
            }
        })
    }
}

/// Why one label matcher (`label="value"`, as given) does not parse; the
/// [`SelectorError`]'s `why`.
#[derive(Debug, thiserror::Error)]
enum MatcherError {
    #[error("`{0}` has no operator (=, !=, =~, !~)")]
    NoOperator(String),
    #[error("`{0}`: unknown operator")]
    UnknownOperator(String),
    #[error("`{0}`: the value goes in double quotes")]
    Unquoted(String),
    #[error(transparent)]
    Regex(#[from] regex::Error),
}

/// Splits `a="x",b=~"y,z"` on the commas outside quotes.
fn split_matchers(body: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut in_quotes, mut escaped) = (0, false, false);
    for (i, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => in_quotes = !in_quotes,
            ',' if !in_quotes => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

fn parse_matcher(part: &str) -> Result<(String, MatchOp), MatcherError> {
    let part = part.trim();
    let op_at = part
        .find(['=', '!'])
        .ok_or_else(|| MatcherError::NoOperator(part.to_string()))?;
    let label = part[..op_at].trim().to_string();
    let rest = &part[op_at..];
    let (op, value) = ["=~", "!~", "!=", "="]
        .iter()
        .find_map(|op| rest.strip_prefix(op).map(|v| (*op, v.trim())))
        .ok_or_else(|| MatcherError::UnknownOperator(part.to_string()))?;
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .ok_or_else(|| MatcherError::Unquoted(part.to_string()))?
        .replace("\\\"", "\"");
    let regex = |v: &str| Regex::new(&format!("^(?:{v})$"));
    let op = match op {
        "=" => MatchOp::Eq(value),
        "!=" => MatchOp::Ne(value),
        "=~" => MatchOp::Re(regex(&value)?),
        _ => MatchOp::NotRe(regex(&value)?),
    };
    Ok((label, op))
}
