//! A small YAML writer for Kubernetes manifests: block style, every string double-quoted (so
//! no value is ever read as a number, a boolean or null: `"1.0"`, `"no"`, `"on"` stay strings)
//! except multi-line text, written as a literal block (`|`) so a plan reads as a plan.
//!
//! Why not a crate: `serde_yaml` is unmaintained, and the manifests need only this much.
//! Every JSON scalar is also a YAML scalar, and double-quoted YAML strings take JSON's escapes,
//! so the output is exactly the JSON value; `tests/k8s_manifests.rs` parses it back with PyYAML
//! (inside `kubernetes-validate`).

use std::fmt::Write as _;

use serde_json::Value;

/// Keys written first, in this order, in every mapping; the others follow alphabetically.
const FIRST_KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
];

/// One YAML document (without the `---` separator).
pub fn document(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => mapping(&mut out, m, 0),
        Value::Array(a) if !a.is_empty() => sequence(&mut out, a, 0),
        scalar => {
            out.push_str(&inline(scalar));
            out.push('\n');
        }
    }
    out
}

fn ordered(m: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut items: Vec<(&String, &Value)> = m.iter().collect();
    let rank = |k: &str| {
        FIRST_KEYS
            .iter()
            .position(|f| *f == k)
            .unwrap_or(FIRST_KEYS.len())
    };
    items.sort_by(|a, b| rank(a.0).cmp(&rank(b.0)).then(a.0.cmp(b.0)));
    items
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// A mapping's entries at `indent`; the first one's indentation is the caller's when it
/// follows a `- `.
fn mapping(out: &mut String, m: &serde_json::Map<String, Value>, indent: usize) {
    for (i, (k, v)) in ordered(m).into_iter().enumerate() {
        if i > 0 || !out.ends_with("- ") {
            pad(out, indent);
        }
        out.push_str(&key(k));
        out.push(':');
        value(out, v, indent);
    }
}

fn sequence(out: &mut String, items: &[Value], indent: usize) {
    for v in items {
        pad(out, indent);
        out.push_str("- ");
        match v {
            Value::Object(m) if !m.is_empty() => mapping(out, m, indent + 2),
            Value::Array(a) if !a.is_empty() => {
                out.push('\n');
                sequence(out, a, indent + 2);
            }
            other => {
                out.push_str(&scalar_text(other, indent + 2));
                out.push('\n');
            }
        }
    }
}

/// What follows `key:`.
fn value(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            mapping(out, m, indent + 2);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            sequence(out, a, indent + 2);
        }
        other => {
            out.push(' ');
            out.push_str(&scalar_text(other, indent + 2));
            out.push('\n');
        }
    }
}

/// A scalar (or an empty collection): a literal block for suitable multi-line text.
fn scalar_text(v: &Value, indent: usize) -> String {
    match v {
        Value::String(s) if literal_ok(s) => {
            let mut text = String::from("|");
            for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
                text.push('\n');
                if !line.is_empty() {
                    let _ = write!(text, "{:indent$}{line}", "");
                }
            }
            text
        }
        other => inline(other),
    }
}

/// Multi-line text that a literal block keeps exactly: one final line break (what `|` keeps),
/// no carriage return or other control character, no leading space on the first line (which
/// would need an indentation indicator).
fn literal_ok(s: &str) -> bool {
    s.contains('\n')
        && s.ends_with('\n')
        && !s.ends_with("\n\n")
        && !s.starts_with([' ', '\n'])
        && !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
        && !s.contains('\t')
}

/// A scalar on one line, as JSON writes it (strings double-quoted).
fn inline(v: &Value) -> String {
    match v {
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

/// A key: plain when it is a simple name that YAML reads as a string, else double-quoted.
fn key(k: &str) -> String {
    let simple = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
    let special = matches!(
        k.to_ascii_lowercase().as_str(),
        "y" | "n" | "yes" | "no" | "true" | "false" | "on" | "off" | "null"
    );
    if simple && !special {
        k.to_string()
    } else {
        Value::String(k.to_string()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn manifests_read_as_block_yaml() {
        let v = json!({
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "volley"}},
            "data": {"plan.toml": "[target]\nbase_url = \"http://svc:80\"\n\n# done\n", "on": "no"},
            "list": [{"name": "a", "args": ["run", "1.0"]}, "b", [], {}],
            "empty": {},
            "n": 3,
        });
        let expected = "\
apiVersion: \"v1\"
kind: \"ConfigMap\"
metadata:
  name: \"x\"
  labels:
    app.kubernetes.io/name: \"volley\"
data:
  \"on\": \"no\"
  plan.toml: |
    [target]
    base_url = \"http://svc:80\"

    # done
empty: {}
list:
  - name: \"a\"
    args:
      - \"run\"
      - \"1.0\"
  - \"b\"
  - []
  - {}
\"n\": 3
";
        assert_eq!(document(&v), expected);
    }

    #[test]
    fn text_a_literal_block_would_change_is_quoted() {
        for s in [
            "no final break\nhere",
            "two\n\n",
            " leading\n",
            "tab\there\n",
            "cr\r\n",
        ] {
            let out = document(&json!({ "k": s }));
            assert_eq!(out, format!("k: {}\n", Value::String(s.into())), "{s:?}");
        }
    }
}
