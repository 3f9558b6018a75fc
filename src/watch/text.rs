//! The Prometheus text exposition format (0.0.4) and OpenMetrics text (1.0): one line at a time.
//!
//! Why no crate: the two candidates on crates.io both build the whole page into owned structures
//! before anything can be selected or capped (`prometheus-parse` 0.2: every sample with its labels
//! in a `HashMap`, plus `chrono` and `itertools`; `openmetrics-parser` 0.5: a `pest` grammar that
//! rejects a whole page for one line it does not accept, and no release since 2023). A watch needs
//! the opposite: read a page of bounded size line by line, drop what is not selected before it is
//! stored, and keep going past a line it does not understand. The format is line-based and small
//! (`name{label="value",…} value [timestamp]`, `# TYPE name kind`), so it is parsed here, with
//! tests over pages from real exporters' conventions.
//!
//! Accepted: `# TYPE` and `# HELP` lines (other comments ignored), `# EOF`, label values with the
//! escapes `\\`, `\"`, `\n`, values `+Inf`/`-Inf`/`NaN`, an optional timestamp (ignored: the
//! scrape time is used), OpenMetrics exemplars (` # {…} v`, ignored). A line that does not parse
//! is skipped and counted (`Page::skipped`).

/// The kind a `# TYPE` line declares for a metric family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Monotonic count; watched as a per-second rate.
    Counter,
    /// A value that goes up and down; watched as it is.
    Gauge,
    /// Cumulative buckets (`_bucket{le}`), `_sum`, `_count`; watched as quantiles per interval.
    Histogram,
    /// Client-side quantiles (`{quantile}`), `_sum`, `_count`.
    Summary,
    /// `untyped`, `unknown`, or no `# TYPE` line: watched as a gauge.
    Untyped,
}

impl Kind {
    fn parse(s: &str) -> Kind {
        match s {
            "counter" => Kind::Counter,
            "gauge" => Kind::Gauge,
            "histogram" | "gaugehistogram" => Kind::Histogram,
            "summary" => Kind::Summary,
            _ => Kind::Untyped,
        }
    }
}

/// One sample line, borrowed from the page; label values are unescaped only when needed.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpositionSample<'a> {
    /// The sample's name as written (`http_requests_total`, `rpc_seconds_bucket`).
    pub name: &'a str,
    /// Labels in the order written, values unescaped.
    pub labels: Vec<(&'a str, std::borrow::Cow<'a, str>)>,
    /// The value.
    pub value: f64,
}

impl ExpositionSample<'_> {
    /// The value of label `name`, if present.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_ref())
    }
}

/// A parsed line.
#[derive(Debug, Clone, PartialEq)]
pub enum ExpositionLine<'a> {
    /// `# TYPE family kind`.
    Type(&'a str, Kind),
    /// A sample.
    Sample(ExpositionSample<'a>),
    /// A comment, `# HELP`, a blank line, `# EOF`.
    Nothing,
}

/// Parses one line; `None` when it is not valid exposition text.
pub fn parse_line(line: &str) -> Option<ExpositionLine<'_>> {
    let line = line.trim_end_matches('\r').trim_start();
    if line.is_empty() {
        return Some(ExpositionLine::Nothing);
    }
    if let Some(comment) = line.strip_prefix('#') {
        let mut words = comment.split_whitespace();
        return Some(match (words.next(), words.next(), words.next()) {
            (Some("TYPE"), Some(family), Some(kind)) => {
                ExpositionLine::Type(family, Kind::parse(kind))
            }
            _ => ExpositionLine::Nothing,
        });
    }
    parse_sample(line).map(ExpositionLine::Sample)
}

fn parse_sample(line: &str) -> Option<ExpositionSample<'_>> {
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(line.len());
    let name = &line[..name_end];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(after) = rest.strip_prefix('{') {
        rest = parse_labels(after, &mut labels)?;
    }
    // The value; then an optional timestamp and an OpenMetrics exemplar (` # {…} …`), ignored.
    let value = rest.split_whitespace().next()?;
    Some(ExpositionSample {
        name,
        labels,
        value: parse_value(value)?,
    })
}

/// Parses `a="x",b="y"}` (after the `{`) into `out`; returns what follows the `}`.
fn parse_labels<'a>(
    mut s: &'a str,
    out: &mut Vec<(&'a str, std::borrow::Cow<'a, str>)>,
) -> Option<&'a str> {
    loop {
        s = s.trim_start();
        if let Some(after) = s.strip_prefix('}') {
            return Some(after);
        }
        let eq = s.find('=')?;
        let key = s[..eq].trim();
        if key.is_empty() {
            return None;
        }
        let (value, after) = quoted(s[eq + 1..].trim_start())?;
        out.push((key, value));
        s = after.trim_start();
        s = s.strip_prefix(',').unwrap_or(s);
    }
}

/// A `"…"` string at the start of `s`, unescaped, and what follows it.
fn quoted(s: &str) -> Option<(std::borrow::Cow<'_, str>, &str)> {
    let body = s.strip_prefix('"')?;
    let bytes = body.as_bytes();
    let mut i = 0;
    let mut escaped = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                escaped = true;
                i += 2;
                continue;
            }
            b'"' => break,
            _ => i += 1,
        }
    }
    let raw = body.get(..i)?;
    let after = body.get(i + 1..)?;
    if !escaped {
        return Some((raw.into(), after));
    }
    let mut value = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('n') => value.push('\n'),
                Some(other) => value.push(other),
                None => value.push('\\'),
            },
            (c, false) => value.push(c),
        }
    }
    Some((value.into(), after))
}

/// A sample value: a float, `+Inf`, `-Inf`, `NaN` (Rust's `parse` takes `inf`, `+inf`, `NaN`).
pub fn parse_value(s: &str) -> Option<f64> {
    match s {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => s.parse().ok(),
    }
}

/// The family a sample belongs to, given the declared `# TYPE`s, and the part it is:
/// `http_seconds_bucket` of a histogram `http_seconds` is `("http_seconds", Suffix::Bucket)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suffix {
    /// The sample's name is the family's (or the OpenMetrics counter's `_total`).
    None,
    /// `_bucket` of a histogram.
    Bucket,
    /// `_sum` of a histogram or summary.
    Sum,
    /// `_count` of a histogram or summary.
    Count,
    /// `_created` (OpenMetrics): a timestamp, not watched.
    Created,
}

/// Splits a sample name into its family and [`Suffix`], using `kind_of` to know which families
/// are histograms or summaries (a gauge named `x_count` stays `x_count`).
pub fn family(name: &str, kind_of: impl Fn(&str) -> Option<Kind>) -> (&str, Suffix) {
    const SUFFIXES: [(&str, Suffix); 5] = [
        ("_bucket", Suffix::Bucket),
        ("_sum", Suffix::Sum),
        ("_count", Suffix::Count),
        ("_created", Suffix::Created),
        ("_total", Suffix::None),
    ];
    if kind_of(name).is_some() {
        return (name, Suffix::None);
    }
    for (suffix, part) in SUFFIXES {
        if let Some(base) = name.strip_suffix(suffix) {
            let fits = matches!(
                (kind_of(base), part),
                (Some(Kind::Histogram), _)
                    | (
                        Some(Kind::Summary),
                        Suffix::Sum | Suffix::Count | Suffix::Created
                    )
                    | (Some(Kind::Counter), Suffix::None | Suffix::Created)
            );
            if fits {
                return (base, part);
            }
        }
    }
    (name, Suffix::None)
}
