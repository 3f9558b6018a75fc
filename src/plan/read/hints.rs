//! The TOML reader's errors, worded for a person: the key they are about, TOML's words for
//! what was expected instead of Rust's type names, and what to write instead.

/// The message and hint for TOML reader error `e` on `text`. `format` names where the keys are
/// listed, for an unknown key that is near none of the known ones.
pub(crate) fn toml_error(
    e: &toml::de::Error,
    text: &str,
    format: &str,
) -> (String, Option<String>) {
    let message = e.message().trim_end();
    let at = e.span().map(|s| s.start);
    let worded = plain_words(message);
    let message = match (message, at) {
        ("duplicate key", Some(at)) => match key_at(text, at) {
            Some(Written::Key(key)) => format!("`{key}` is given twice in its table"),
            Some(Written::Table(name)) => format!("table [{name}] is given twice"),
            None => worded,
        },
        (m, Some(at)) if m.starts_with("invalid ") || m.starts_with("expected ") => {
            match key_before(text, at) {
                Some(key) => format!("`{key}`: {worded}"),
                None => worded,
            }
        }
        _ => worded,
    };
    let hint = unknown_key_hint(e.message(), format).or_else(|| unit_hint(e.message(), text, at));
    (message, hint)
}

/// The hint for an unknown key: the known key it is one or two edits from, or where the keys
/// are listed.
fn unknown_key_hint(message: &str, format: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (field, expected) = rest.split_once('`')?;
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    if let Some(table) = TABLE_OF.iter().find(|(key, _)| *key == field)
        && known.contains(&"scenario")
    {
        return Some(format!("`{field}` belongs in {}", table.1));
    }
    Some(match nearest(field, known.into_iter()) {
        Some(name) => format!("did you mean `{name}`?"),
        None => format!("check the spelling; {format}"),
    })
}

/// Keys a newcomer may write at the top of a plan, and the table they belong in.
const TABLE_OF: [(&str, &str); 8] = [
    ("base_url", "[target]"),
    ("timeout", "[target]"),
    ("protocol", "[target]"),
    ("headers", "[target]"),
    ("vus", "[scenario.load]"),
    ("duration", "[scenario.load]"),
    ("rate", "[scenario.load]"),
    ("path", "[[scenario.step]]"),
];

/// Of `names`, the one `word` is nearest to, if within one edit (two for names of five letters
/// or more; two letters swapped are one edit): the rule for "did you mean" wherever volley offers one.
pub(crate) fn nearest<'a>(word: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let (distance, name) = names
        .map(|name| (strsim::osa_distance(word, name), name))
        .min()?;
    let most = if name.len() >= 5 { 2 } else { 1 };
    (distance <= most).then_some(name)
}

/// `message` with serde's Rust type names in TOML's words.
fn plain_words(message: &str) -> String {
    let Some((head, expected)) = message.rsplit_once("expected ") else {
        return message.to_string();
    };
    let plain = match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "a sequence" => "an array ([…])",
        "a map" => "a table",
        "a boolean" => "true or false",
        e if e.starts_with("struct ") => "a table",
        e if e.starts_with("enum ") => "one of its names, as a string",
        _ => return message.to_string(),
    };
    format!("{head}expected {plain}")
}

/// The key whose value starts at byte `at`: the word before its `=`.
fn key_before(text: &str, at: usize) -> Option<&str> {
    let before = text.get(..at)?.trim_end().strip_suffix('=')?.trim_end();
    if let Some(quoted) = before.strip_suffix('"') {
        return quoted.rsplit('"').next();
    }
    let key = before
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .next()?;
    (!key.is_empty()).then_some(key)
}

/// What is written at byte `at`: a key (a duplicate key's span starts at it), or the table
/// whose header holds `at`.
fn key_at(text: &str, at: usize) -> Option<Written<'_>> {
    let start = text.get(..at)?.rfind('\n').map_or(0, |n| n + 1);
    let line = text[start..].lines().next()?.trim();
    if let Some(header) = line.strip_prefix('[') {
        let name = header.trim_start_matches('[').split(']').next()?.trim();
        return (!name.is_empty()).then_some(Written::Table(name));
    }
    let key = text[at..]
        .lines()
        .next()?
        .split('=')
        .next()?
        .trim()
        .trim_matches('"');
    (!key.is_empty()).then_some(Written::Key(key))
}

/// A name written in a TOML file.
enum Written<'a> {
    /// A key, before its `=`.
    Key(&'a str),
    /// A table's name, between its brackets.
    Table(&'a str),
}

/// Quotes and the unit for a bare number given a share (`[precision]`'s `p50 = 3`, for
/// `"3%"`) or a duration (`timeout = 5`, for `"5s"`).
fn unit_hint(message: &str, text: &str, at: Option<usize>) -> Option<String> {
    let number = message
        .strip_prefix("invalid type: integer `")
        .or_else(|| message.strip_prefix("invalid type: floating point `"))
        .filter(|_| message.ends_with("expected a string"))?
        .split('`')
        .next()?;
    let at = at?;
    let key = key_before(text, at)?;
    let table = text[..at]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_name_is_offered_and_a_far_one_is_not() {
        let names = ["vus", "duration", "max_vus", "profile"];
        assert_eq!(nearest("vsu", names.into_iter()), Some("vus"));
        assert_eq!(nearest("durration", names.into_iter()), Some("duration"));
        assert_eq!(nearest("prfle", names.into_iter()), Some("profile"));
        assert_eq!(nearest("users", names.into_iter()), None);
        assert_eq!(nearest("vu", ["rate"].into_iter()), None);
    }

    #[test]
    fn rust_type_names_are_put_in_tomls_words() {
        let plain = |m: &str| plain_words(m);
        assert_eq!(
            plain("invalid type: string \"ten\", expected u32"),
            "invalid type: string \"ten\", expected a whole number, 0 or more"
        );
        assert_eq!(
            plain("invalid type: integer `5`, expected struct ExtractFile").as_str(),
            "invalid type: integer `5`, expected a table"
        );
        assert_eq!(
            plain("invalid type: string \"x\", expected f64"),
            "invalid type: string \"x\", expected a number"
        );
        assert_eq!(plain("missing field `name`"), "missing field `name`");
    }

    #[test]
    fn the_key_or_table_an_error_is_about_is_found() {
        let text = "[a]\nvus = \"x\"\n\"q{s=1}\" = 3\n[b.c]\n";
        assert_eq!(key_before(text, text.find("\"x\"").unwrap()), Some("vus"));
        assert_eq!(
            key_before(text, text.find(" 3").unwrap() + 1),
            Some("q{s=1}")
        );
        assert!(matches!(key_at(text, 4), Some(Written::Key("vus"))));
        assert!(matches!(
            key_at(text, text.find("c]").unwrap()),
            Some(Written::Table("b.c"))
        ));
    }
}
