//! Hints for the TOML reader's errors: what to write instead.

/// The hint for a TOML reader's `message` about `text` at byte `at`: the plan format for an
/// unknown field; quotes and the unit for a bare number given a share (`[precision]`'s
/// `p50 = 3`, for `"3%"`) or a duration (`timeout = 5`, for `"5s"`).
pub(super) fn toml_hint(message: &str, text: &str, at: Option<usize>) -> Option<String> {
    if message.contains("unknown field") {
        return Some(
            "check the spelling; `volley check` lists the plan format in schema/plan.schema.json"
                .into(),
        );
    }
    let number = message
        .strip_prefix("invalid type: integer `")
        .or_else(|| message.strip_prefix("invalid type: floating point `"))
        .filter(|_| message.ends_with("expected a string"))?
        .split('`')
        .next()?;
    let before = text.get(..at?)?;
    let key = before.trim_end().strip_suffix('=')?.trim_end();
    let key = key
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()?;
    let table = before
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['));
    let unit = if table == Some("[precision]") {
        "%"
    } else if DURATION_KEYS.contains(&key) {
        "s"
    } else {
        return None;
    };
    Some(format!(
        "write `{key}` as a string with its unit, e.g. \"{number}{unit}\""
    ))
}

/// The plan keys whose value is a duration ("5s").
const DURATION_KEYS: [&str; 9] = [
    "duration",
    "timeout",
    "interval",
    "lost_after",
    "max_duration",
    "pace",
    "start_after",
    "time_unit",
    "latency_under",
];
