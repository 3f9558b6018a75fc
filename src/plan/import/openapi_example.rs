//! Example values from an OpenAPI document: a schema's own examples (`example`, `examples`,
//! `const`, `default`, the first of `enum`), else a minimal valid instance generated from it:
//! an object's required properties and those with examples of their own, `minItems` items, a
//! string of `minLength` (or shaped by its `format`), a number at its `minimum`.
//! Local `$ref`s (`#/components/…`) are followed; recursion stops at [`MAX_DEPTH`].

use serde_json::Value as Json;
use serde_norway::Value;

/// How deep schemas are followed (through `$ref`, properties and items): an object this deep
/// is `{}`.
const MAX_DEPTH: usize = 12;

/// Arrays this deep are `[]`: a recursive schema (a tree's children) stops early.
const ARRAY_DEPTH: usize = 4;

/// Follows `v`'s `$ref` (local ones only), and those of what it points at.
pub(super) fn resolve<'a>(doc: &'a Value, v: &'a Value) -> Result<&'a Value, String> {
    let mut v = v;
    for _ in 0..MAX_DEPTH {
        let Some(target) = v.get("$ref") else {
            return Ok(v);
        };
        let target = target.as_str().ok_or("`$ref` is not a string")?;
        let Some(pointer) = target.strip_prefix("#/") else {
            return Err(format!(
                "`$ref: {target}` points outside this document; only local references \
                 (#/components/…) are followed"
            ));
        };
        let mut at = doc;
        for seg in pointer.split('/') {
            let seg = percent_encoding::percent_decode_str(seg).decode_utf8_lossy();
            let seg = seg.replace("~1", "/").replace("~0", "~");
            at = at
                .get(seg.as_str())
                .ok_or_else(|| format!("`$ref: {target}` points at nothing"))?;
        }
        v = at;
    }
    Err("`$ref`s refer to each other in a loop".into())
}

/// A YAML value as JSON (keys that are numbers or booleans become strings).
pub(super) fn json(v: &Value) -> Json {
    serde_json::to_value(v).unwrap_or(Json::Null)
}

/// The example a schema, parameter or media type states itself (`example`, the first of
/// `examples` whether a list (JSON Schema) or a map of Example objects, `const`, `default`,
/// the first of `enum`).
pub(super) fn stated(doc: &Value, v: &Value) -> Option<Json> {
    if let Some(e) = v.get("example") {
        return Some(json(e));
    }
    match v.get("examples") {
        Some(Value::Sequence(list)) if !list.is_empty() => return Some(json(&list[0])),
        Some(Value::Mapping(map)) => {
            if let Some(e) = map
                .values()
                .find_map(|e| resolve(doc, e).ok()?.get("value"))
            {
                return Some(json(e));
            }
        }
        _ => {}
    }
    for key in ["const", "default"] {
        if let Some(e) = v.get(key) {
            return Some(json(e));
        }
    }
    match v.get("enum") {
        Some(Value::Sequence(list)) if !list.is_empty() => Some(json(&list[0])),
        _ => None,
    }
}

/// Whether a schema, or anything in it, states an example.
fn has_example(doc: &Value, schema: &Value, depth: usize) -> bool {
    let Ok(s) = resolve(doc, schema) else {
        return false;
    };
    if depth > MAX_DEPTH {
        return false;
    }
    if stated(doc, s).is_some() {
        return true;
    }
    if let Some(Value::Mapping(props)) = s.get("properties") {
        return props.values().any(|p| has_example(doc, p, depth + 1));
    }
    s.get("items")
        .is_some_and(|i| has_example(doc, i, depth + 1))
}

/// The schema's type: its `type` (the first that is not `null` when a list), else what its
/// keys imply.
fn kind(s: &Value) -> &str {
    match s.get("type") {
        Some(Value::String(t)) => t,
        Some(Value::Sequence(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if s.get("properties").is_some() => "object",
        _ if s.get("items").is_some() => "array",
        _ => "",
    }
}

/// An instance of `schema`: its stated example, else a minimal valid one.
pub(super) fn instance(doc: &Value, schema: &Value, depth: usize) -> Result<Json, String> {
    let s = resolve(doc, schema)?;
    if let Some(e) = stated(doc, s) {
        return Ok(e);
    }
    if depth > 2 * MAX_DEPTH {
        return Ok(Json::Null); // allOf/oneOf referring to themselves
    }
    if let Some(Value::Sequence(all)) = s.get("allOf") {
        let mut merged = serde_json::Map::new();
        for part in all {
            match instance(doc, part, depth + 1)? {
                Json::Object(fields) => merged.extend(fields),
                other if all.len() == 1 => return Ok(other),
                _ => {}
            }
        }
        return Ok(Json::Object(merged));
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Sequence(options)) = s.get(key)
            && let Some(first) = options.first()
        {
            return instance(doc, first, depth + 1);
        }
    }
    Ok(match kind(s) {
        "object" => object(doc, s, depth)?,
        "array" => {
            let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let items = s.get("items");
            let n = match items {
                _ if depth >= ARRAY_DEPTH => 0,
                Some(i) if min == 0 && has_example(doc, i, depth + 1) => 1,
                _ => min.min(100),
            };
            let mut out = Vec::new();
            for _ in 0..n {
                out.push(match items {
                    Some(i) => instance(doc, i, depth + 1)?,
                    None => Json::String("string".into()),
                });
            }
            Json::Array(out)
        }
        "integer" => number(s, true),
        "number" => number(s, false),
        "boolean" => Json::Bool(false),
        "string" => Json::String(string(s)),
        "null" => Json::Null,
        _ => Json::Object(serde_json::Map::new()),
    })
}

/// An object: its required properties, and those that state examples, in the schema's order.
fn object(doc: &Value, s: &Value, depth: usize) -> Result<Json, String> {
    let required: Vec<&str> = match s.get("required") {
        Some(Value::Sequence(r)) => r.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut out = serde_json::Map::new();
    if depth >= MAX_DEPTH {
        return Ok(Json::Object(out));
    }
    if let Some(Value::Mapping(props)) = s.get("properties") {
        for (name, prop) in props {
            let Some(name) = name.as_str() else { continue };
            let read_only = resolve(doc, prop)
                .ok()
                .and_then(|p| p.get("readOnly"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if (required.contains(&name) || has_example(doc, prop, depth + 1)) && !read_only {
                out.insert(name.to_string(), instance(doc, prop, depth + 1)?);
            }
        }
    }
    Ok(Json::Object(out))
}

/// A number at the schema's minimum (just above an exclusive one), else 1 (at most the
/// maximum).
fn number(s: &Value, integer: bool) -> Json {
    let f = |k: &str| s.get(k).and_then(Value::as_f64);
    let exclusive = |k: &str| {
        // OpenAPI 3.0: a boolean beside minimum/maximum; 3.1: the bound itself.
        f(k).or_else(|| {
            let bound = if k == "exclusiveMinimum" {
                "minimum"
            } else {
                "maximum"
            };
            (s.get(k).and_then(Value::as_bool) == Some(true))
                .then(|| f(bound))
                .flatten()
        })
    };
    let step = if integer { 1.0 } else { 0.5 };
    let mut v = f("minimum").unwrap_or(1.0);
    if let Some(min) = exclusive("exclusiveMinimum")
        && v <= min
    {
        v = min + step;
    }
    if let Some(max) = f("maximum").or(exclusive("exclusiveMaximum"))
        && v > max
    {
        v = max;
    }
    if integer {
        Json::from(v.ceil() as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number)
    }
}

/// A string shaped by the schema's `format`, at least `minLength` long.
fn string(s: &Value) -> String {
    let format = s.get("format").and_then(Value::as_str).unwrap_or("");
    let mut text = match format {
        "date-time" => "2024-01-01T00:00:00Z",
        "date" => "2024-01-01",
        "time" => "00:00:00Z",
        "email" => "user@example.com",
        "uuid" => "00000000-0000-4000-8000-000000000000",
        "uri" | "url" => "https://example.com/",
        "hostname" => "example.com",
        "ipv4" => "192.0.2.1",
        "ipv6" => "2001:db8::1",
        "byte" => "c3RyaW5n",
        _ => "string",
    }
    .to_string();
    let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0);
    while (text.chars().count() as u64) < min.min(4096) {
        text.push('x');
    }
    if let Some(max) = s.get("maxLength").and_then(Value::as_u64) {
        text = text.chars().take(max as usize).collect();
    }
    text
}
