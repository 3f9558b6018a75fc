//! One OpenAPI operation as a plan step: its path with the path parameters filled in, its
//! query and header parameters, its body, and a check of its documented success statuses.

use serde_json::Value as Json;
use serde_norway::Value;

use super::example::{self, instance, resolve, stated};
use super::{Operation, Params, json_body};
use crate::plan::import::text::{BodyText, StepText, is_secret_name, literal};

/// What every step is built against, and what the steps found that the notes tell.
pub(super) struct Ctx<'a> {
    pub doc: &'a Value,
    pub params: Option<&'a Params>,
    /// (step, the security schemes it may use, alternatives joined by " or ").
    pub secured: Vec<(String, String)>,
    /// Header parameters marked secret.
    pub marked: Vec<String>,
    /// Whether some step reads the `--params` file.
    pub uses_params: bool,
}

/// Where a value came from, for the step's comments.
enum Source {
    Stated,
    Generated,
    Column,
}

impl Ctx<'_> {
    /// What the user should read: the security the plan does not send.
    pub fn notes(&self) -> Vec<String> {
        if self.secured.is_empty() {
            return Vec::new();
        }
        let steps: Vec<&str> = self.secured.iter().map(|(s, _)| s.as_str()).collect();
        let mut schemes: Vec<&str> = self
            .secured
            .iter()
            .flat_map(|(_, s)| s.split(" or "))
            .collect();
        schemes.sort_unstable();
        schemes.dedup();
        vec![format!(
            "{} operation(s) declare security ({}): the plan sends no credentials; add them to \
             [target] headers reading the environment, e.g. Authorization = \"Bearer {{{{ \
             env.TOKEN }}}}\" (steps: {})",
            steps.len(),
            schemes.join(", "),
            steps.join(", ")
        )]
    }

    /// A parameter's value: the `--params` column of its name, its stated example, its
    /// schema's, or a minimal value of its schema.
    fn value(&mut self, p: &Value) -> Result<(String, Source), String> {
        let name = p.get("name").and_then(Value::as_str).unwrap_or("");
        let column = self
            .params
            .is_some_and(|c| c.columns.iter().any(|c| c == name));
        let plain = !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if column && plain {
            self.uses_params = true;
            return Ok((format!("{{{{ data.params.{name} }}}}"), Source::Column));
        }
        let (value, source) = match stated(self.doc, p) {
            Some(v) => (v, Source::Stated),
            None => {
                let schema = p.get("schema").ok_or("a parameter without a `schema`")?;
                let s = resolve(self.doc, schema)?;
                match stated(self.doc, s) {
                    Some(v) => (v, Source::Stated),
                    None => (instance(self.doc, s, 0)?, Source::Generated),
                }
            }
        };
        let text = match value {
            Json::String(s) => s,
            Json::Array(items) => items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(","),
            other => other.to_string(),
        };
        Ok((text, source))
    }
}

/// The operation's parameters, the path item's first, each overridden by the operation's
/// of the same name and place; resolved, with where each is.
fn parameters<'a>(
    doc: &'a Value,
    o: &Operation<'a>,
) -> Result<Vec<(&'a Value, String)>, (String, String)> {
    let mut out: Vec<(&Value, String)> = Vec::new();
    for (owner, at) in [(o.item, format!("paths.{}", o.path)), (o.op, o.at.clone())] {
        let Some(Value::Sequence(list)) = owner.get("parameters") else {
            continue;
        };
        for (i, p) in list.iter().enumerate() {
            let at = format!("{at}.parameters[{i}]");
            let p = resolve(doc, p).map_err(|why| (at.clone(), why))?;
            let key = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
            if p.get("name").and_then(Value::as_str).is_none() {
                return Err((at, "a parameter without a `name`".into()));
            }
            out.retain(|(q, _)| key(q) != key(p));
            out.push((p, at));
        }
    }
    Ok(out)
}

/// The step for operation `o`, named `name`; an error (where, why) for what is malformed.
pub(super) fn step(
    ctx: &mut Ctx<'_>,
    o: &Operation<'_>,
    name: String,
) -> Result<StepText, (String, String)> {
    let mut step = StepText {
        name,
        method: o.method.to_ascii_uppercase(),
        ..StepText::default()
    };
    let summary = o.op.get("summary").and_then(Value::as_str).unwrap_or("");
    let id =
        o.op.get("operationId")
            .and_then(Value::as_str)
            .unwrap_or("-");
    step.about.push(format!(
        "{} {} (operationId {id}){}{summary}",
        step.method,
        o.path,
        if summary.is_empty() { "" } else { ": " }
    ));
    let mut path = literal(o.path);
    let mut query = Vec::new();
    for (p, at) in parameters(ctx.doc, o)? {
        let pname = p.get("name").and_then(Value::as_str).unwrap_or("");
        let place = p.get("in").and_then(Value::as_str).unwrap_or("");
        let required = p.get("required").and_then(Value::as_bool).unwrap_or(false);
        let documented = stated(ctx.doc, p).is_some()
            || p.get("schema")
                .and_then(|s| resolve(ctx.doc, s).ok())
                .is_some_and(|s| stated(ctx.doc, s).is_some());
        let wanted = match place {
            "path" => true,
            "query" => required || documented,
            "header" => required,
            _ => false,
        };
        if !wanted {
            continue;
        }
        let (value, source) = ctx.value(p).map_err(|why| (at, why))?;
        let shown = match source {
            Source::Stated => "its example",
            Source::Generated => "a minimal value of its schema (no example)",
            Source::Column => "the --params column of its name",
        };
        step.remarks
            .push(format!("{place} parameter {pname}: {shown}"));
        let encoded = match source {
            Source::Column => value.clone(),
            _ => literal(&encode(&value)),
        };
        match place {
            "path" => path = path.replace(&format!("{{{pname}}}"), &encoded),
            "query" => query.push(format!("{}={encoded}", encode(pname))),
            _ if is_secret_name(pname) => {
                let var = pname.to_ascii_uppercase().replace('-', "_");
                if !ctx.marked.iter().any(|m| m == pname) {
                    ctx.marked.push(pname.to_string());
                }
                step.headers
                    .push((pname.to_string(), format!("{{{{ env.{var} }}}}")));
            }
            _ => {
                let value = match source {
                    Source::Column => value,
                    _ => literal(&value),
                };
                step.headers.push((pname.to_string(), value));
            }
        }
    }
    if !query.is_empty() {
        path = format!("{path}?{}", query.join("&"));
    }
    step.path = path;
    body(ctx.doc, o, &mut step)?;
    step.status = success_statuses(o.op);
    if step.status.is_empty() {
        step.remarks
            .push("no 2xx response documented: no status check".into());
    }
    if let Some(schemes) = security(ctx.doc, o.op) {
        step.remarks
            .push(format!("security: {schemes} (no credentials are sent)"));
        ctx.secured.push((step.name.clone(), schemes));
    }
    Ok(step)
}

/// `value` percent-encoded for a path segment or a query value.
fn encode(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC)
        .to_string()
        .replace("%2D", "-")
        .replace("%2E", ".")
        .replace("%5F", "_")
        .replace("%7E", "~")
}

/// The operation's request body: a JSON or form example, with its Content-Type; other media
/// types are named in a comment.
fn body(doc: &Value, o: &Operation<'_>, step: &mut StepText) -> Result<(), (String, String)> {
    let Some(rb) = o.op.get("requestBody") else {
        return Ok(());
    };
    let at = format!("{}.requestBody", o.at);
    let rb = resolve(doc, rb).map_err(|why| (at.clone(), why))?;
    let Some(Value::Mapping(content)) = rb.get("content") else {
        return Err((at, "a requestBody without `content`".into()));
    };
    let types: Vec<&str> = content.keys().filter_map(Value::as_str).collect();
    let pick = types.iter().find(|t| t.contains("json")).or_else(|| {
        types
            .iter()
            .find(|t| **t == "application/x-www-form-urlencoded")
    });
    let Some(&media_type) = pick else {
        step.remarks.push(format!(
            "request body ({}) not generated: write it with body or body_file",
            types.join(", ")
        ));
        return Ok(());
    };
    let media = &content[media_type];
    let at = format!("{at}.content.{media_type}");
    let value = match stated(doc, media) {
        Some(v) => v,
        None => match media.get("schema") {
            Some(schema) => instance(doc, schema, 0).map_err(|why| (at, why))?,
            None => Json::Object(serde_json::Map::new()),
        },
    };
    if media_type != "application/json" {
        // (a `json` body is sent as application/json unless the step says otherwise)
        step.headers
            .push(("Content-Type".into(), literal(media_type)));
    }
    step.body = Some(if media_type.contains("json") {
        json_body(value)
    } else {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        if let Json::Object(fields) = &value {
            for (k, v) in fields {
                form.append_pair(k, &v.as_str().map_or_else(|| v.to_string(), str::to_string));
            }
        }
        BodyText::Text(literal(&form.finish()))
    });
    Ok(())
}

/// The documented 2xx statuses (`2XX` stands for 200–206).
fn success_statuses(op: &Value) -> Vec<u16> {
    let Some(Value::Mapping(responses)) = op.get("responses") else {
        return Vec::new();
    };
    let mut codes = Vec::new();
    for key in responses.keys() {
        let key = example::json(key);
        let key = key.as_str().map_or_else(|| key.to_string(), str::to_string);
        if key.eq_ignore_ascii_case("2XX") {
            codes.extend(200..=206);
        } else if let Ok(code) = key.parse::<u16>()
            && (200..300).contains(&code)
        {
            codes.push(code);
        }
    }
    codes.sort_unstable();
    codes.dedup();
    codes
}

/// The security schemes an operation may use (its own requirement, else the document's), as
/// `a or b`; `None` when it needs none.
fn security(doc: &Value, op: &Value) -> Option<String> {
    let reqs = op.get("security").or_else(|| doc.get("security"))?;
    let Value::Sequence(alternatives) = reqs else {
        return None;
    };
    let mut names = Vec::new();
    for alt in alternatives {
        let Value::Mapping(m) = alt else { continue };
        if m.is_empty() {
            return None; // `{}`: anonymous access is one of the alternatives
        }
        let all: Vec<&str> = m.keys().filter_map(Value::as_str).collect();
        names.push(all.join(" and "));
    }
    (!names.is_empty()).then(|| names.join(" or "))
}
