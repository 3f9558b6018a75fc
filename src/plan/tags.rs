//! Tags: `KEY=VALUE` pairs that name a run for the tools around it (`--tag`, a plan's `[tags]`):
//! kept in the record, shown in its reports and attached as labels to every exported series,
//! beside the run's id. Their number and size are bounded so that the series they label stay
//! few: at most [`MAX_TAGS`], keys that are Prometheus label names and none of volley's own
//! labels, values of at most [`MAX_VALUE_BYTES`].

use std::collections::BTreeMap;

/// A run's tags, by key.
pub type Tags = BTreeMap<String, String>;

/// The most tags a run may have.
pub const MAX_TAGS: usize = 16;

/// The longest tag value, bytes.
pub const MAX_VALUE_BYTES: usize = 200;

/// Label names volley's exported series use themselves (and Prometheus's own): not tag keys.
pub const RESERVED: [&str; 8] = [
    "scenario", "step", "kind", "status", "le", "run_id", "instance", "job",
];

/// Why `key` cannot be a tag's key, if it cannot.
pub fn key_problem(key: &str) -> Option<String> {
    let mut chars = key.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Some(format!(
            "`{key}` is not a label name: letters, digits and `_`, not starting with a digit"
        ));
    }
    if key.starts_with("__") {
        return Some(format!(
            "`{key}`: names starting with `__` are Prometheus's own"
        ));
    }
    RESERVED
        .contains(&key)
        .then(|| format!("`{key}` is a label of volley's own series; choose another key"))
}

/// Why `tags` cannot be a run's, if they cannot: too many, a key that is not a label name or is
/// reserved, a value too long.
pub fn problem(tags: &Tags) -> Option<String> {
    if tags.len() > MAX_TAGS {
        return Some(format!(
            "{} tags; at most {MAX_TAGS} (each labels every exported series)",
            tags.len()
        ));
    }
    tags.iter().find_map(|(key, value)| {
        key_problem(key).or_else(|| {
            (value.len() > MAX_VALUE_BYTES).then(|| {
                format!(
                    "the value of `{key}` is {} bytes; at most {MAX_VALUE_BYTES}",
                    value.len()
                )
            })
        })
    })
}

/// `base` with `more` added (replacing those of the same key), checked ([`problem`]).
pub fn merged(base: &Tags, more: &[(String, String)]) -> Result<Tags, String> {
    let mut tags = base.clone();
    tags.extend(more.iter().cloned());
    match problem(&tags) {
        None => Ok(tags),
        Some(why) => Err(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_label_names_of_their_own() {
        assert_eq!(key_problem("testid"), None);
        assert_eq!(key_problem("_env2"), None);
        assert!(key_problem("2env").is_some());
        assert!(key_problem("team-a").is_some());
        assert!(key_problem("").is_some());
        assert!(key_problem("__name__").is_some());
        assert!(key_problem("run_id").unwrap().contains("volley's own"));
        let many: Tags = (0..17).map(|i| (format!("k{i}"), "v".into())).collect();
        assert!(problem(&many).unwrap().contains("at most 16"));
        let long: Tags = [("k".to_string(), "x".repeat(201))].into();
        assert!(problem(&long).unwrap().contains("201 bytes"));
    }
}
