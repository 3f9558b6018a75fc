//! `volley new --from-openapi spec.yaml`: an OpenAPI 3.0 or 3.1 document (YAML or JSON) turned
//! into a plan, one step per operation in the document's order (or those `--operations` names,
//! in that order).
//!
//! - Path parameters from the parameter's or its schema's examples, else a minimal valid
//!   value of its schema ([`example`]); or from a CSV column of the same name (`--params`).
//!   Query parameters: the required ones and those with a stated example or default; header
//!   parameters: the required ones (secret-looking ones read from the environment).
//! - The body: the media type's example, else its schema's, else a minimal valid instance;
//!   JSON (or a form) only: other media types are left to the user, said in a comment.
//! - A check of the documented success statuses (2xx); none when only `default` is.
//! - Security requirements are named in comments and a note: no credentials are sent.

use std::path::{Path, PathBuf};

use serde_norway::Value;

use super::text::{BodyText, Imported, PlanText, identifier, literal, unique};

#[path = "openapi_error.rs"]
mod error;
#[path = "openapi_example.rs"]
mod example;
#[path = "openapi_step.rs"]
mod step;
pub use error::OpenApiError;

/// What `--from-openapi` is asked besides the file.
#[derive(Debug, Clone, Default)]
pub struct OpenApiOptions {
    /// The target's URL instead of the document's first server (`--base-url`).
    pub base_url: Option<String>,
    /// Only these operations, by operationId, in this order (`--operations`).
    pub operations: Vec<String>,
    /// A CSV file whose columns supply the parameters of the same names (`--params`).
    pub params: Option<PathBuf>,
    /// Where the plan is written (a `--params` file is named relative to it).
    pub plan: PathBuf,
}

/// The `--params` CSV file as the plan names it, and its columns.
#[derive(Debug, Clone, Default)]
pub struct Params {
    /// The path written under `[data.params]` (relative to the plan when it can be).
    pub file: String,
    /// The header row.
    pub columns: Vec<String>,
}

/// The HTTP methods an OpenAPI path item may have, in the order steps take them.
const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// One operation: where it is and what it is.
struct Operation<'a> {
    path: &'a str,
    method: &'a str,
    /// The path item (for its shared parameters).
    item: &'a Value,
    op: &'a Value,
    /// `paths./pet.get`.
    at: String,
}

/// Reads an OpenAPI document and writes its plan.
pub fn import(path: &Path, options: &OpenApiOptions) -> Result<Imported, OpenApiError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| OpenApiError::Read {
        file: file.clone(),
        source,
    })?;
    let params = options
        .params
        .as_deref()
        .map(|csv| read_params(csv, &options.plan))
        .transpose()?;
    let name = path
        .file_stem()
        .map(|s| identifier(&s.to_string_lossy()))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "openapi".into());
    import_text(&file, &name, &text, options, params.as_ref())
}

/// The header row of the `--params` file, and its path as the plan at `plan` names it.
fn read_params(csv: &Path, plan: &Path) -> Result<Params, OpenApiError> {
    let shown = csv.display().to_string();
    let fail = |why: String| OpenApiError::Params {
        file: shown.clone(),
        why,
    };
    let mut reader = csv::Reader::from_path(csv).map_err(|e| fail(e.to_string()))?;
    let columns: Vec<String> = reader
        .headers()
        .map_err(|e| fail(e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    let absolute = std::fs::canonicalize(csv).map_err(|e| fail(e.to_string()))?;
    let dir = plan
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && plan.as_os_str() != "-")
        .map_or_else(std::env::current_dir, std::fs::canonicalize)
        .map_err(|e| fail(e.to_string()))?;
    let file = absolute
        .strip_prefix(&dir)
        .unwrap_or(&absolute)
        .display()
        .to_string();
    Ok(Params { file, columns })
}

/// The plan for OpenAPI document `text` (from `file`, named `name`).
pub fn import_text(
    file: &str,
    name: &str,
    text: &str,
    options: &OpenApiOptions,
    params: Option<&Params>,
) -> Result<Imported, OpenApiError> {
    let shape = |at: String, why: String| OpenApiError::Shape {
        file: file.to_string(),
        at,
        why,
    };
    let doc: Value = serde_norway::from_str(text).map_err(|source| OpenApiError::Syntax {
        file: file.to_string(),
        source,
    })?;
    let version = doc.get("openapi").map(example::json);
    match version.as_ref().and_then(|v| v.as_str()) {
        Some(v) if v.starts_with("3.") => {}
        _ => {
            let found = match (&version, doc.get("swagger")) {
                (Some(v), _) => format!("openapi: {v}"),
                (None, Some(s)) => format!("swagger: {}", example::json(s)),
                (None, None) => "no `openapi` key".into(),
            };
            return Err(OpenApiError::Version {
                file: file.into(),
                found,
            });
        }
    }
    let base_url = base_url(file, &doc, options.base_url.as_deref())?;
    let all = operations(&doc).map_err(|(at, why)| shape(at, why))?;
    let chosen = choose(file, all, &options.operations)?;
    let mut names = Vec::new();
    let mut plan = PlanText {
        name: name.to_string(),
        about: about(file, &doc),
        base_url,
        ..PlanText::default()
    };
    let mut ctx = step::Ctx {
        doc: &doc,
        params,
        secured: Vec::new(),
        marked: Vec::new(),
        uses_params: false,
    };
    for o in &chosen {
        let id = o.op.get("operationId").and_then(Value::as_str);
        let wanted = id
            .map(identifier)
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| {
                format!(
                    "{}_{}",
                    o.method,
                    identifier(o.path).trim_start_matches('_')
                )
            });
        let step_name = unique(wanted, &mut names);
        let step = step::step(&mut ctx, o, step_name).map_err(|(at, why)| shape(at, why))?;
        plan.steps.push(step);
    }
    plan.secret_headers = ctx.marked.clone();
    if ctx.uses_params {
        if let Some(p) = params {
            plan.data.push(("params".into(), p.file.clone()));
        }
    }
    let notes = ctx.notes();
    let summary = format!("{} step(s), one per operation of {file}", plan.steps.len());
    Ok(Imported {
        text: plan.render(),
        notes,
        summary,
    })
}

/// The comment lines at the top of the plan.
fn about(file: &str, doc: &Value) -> Vec<String> {
    let info = doc.get("info");
    let field = |k: &str| {
        info.and_then(|i| i.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    vec![
        format!("A plan written by `volley new --from-openapi {file}`: one step per operation"),
        format!("of \"{}\" {}.", field("title"), field("version")),
        "Bodies and parameters are the document's examples, or minimal values its schemas allow."
            .into(),
    ]
}

/// `--base-url`, else the first server's URL (its variables at their defaults).
fn base_url(file: &str, doc: &Value, given: Option<&str>) -> Result<String, OpenApiError> {
    if let Some(url) = given {
        return super::text::base_url(url).map_err(OpenApiError::BaseUrl);
    }
    let no_server = |why: String| OpenApiError::NoServer {
        file: file.into(),
        why,
    };
    let server = doc
        .get("servers")
        .and_then(|s| s.get(0))
        .ok_or_else(|| no_server("the document lists no `servers`".into()))?;
    let mut url = server
        .get("url")
        .and_then(Value::as_str)
        .ok_or_else(|| no_server("servers[0] has no `url`".into()))?
        .to_string();
    if let Some(Value::Mapping(vars)) = server.get("variables") {
        for (k, v) in vars {
            if let (Some(k), Some(default)) = (k.as_str(), v.get("default")) {
                let default = example::json(default);
                let default = default.as_str().map_or(default.to_string(), str::to_string);
                url = url.replace(&format!("{{{k}}}"), &default);
            }
        }
    }
    super::text::base_url(&url).map_err(|_| {
        no_server(format!(
            "its first server's URL `{url}` is not an absolute http(s) URL"
        ))
    })
}

/// Every operation, in the document's order; an error (where, why) for a malformed one.
fn operations(doc: &Value) -> Result<Vec<Operation<'_>>, (String, String)> {
    let Some(paths) = doc.get("paths") else {
        return Ok(Vec::new());
    };
    let paths = paths
        .as_mapping()
        .ok_or_else(|| ("paths".to_string(), "not a map of paths".to_string()))?;
    let mut out = Vec::new();
    for (path, item) in paths {
        let path = path
            .as_str()
            .ok_or_else(|| ("paths".to_string(), format!("key {path:?} is not a string")))?;
        if !path.starts_with('/') {
            return Err((
                format!("paths.{path}"),
                "a path starts with `/`".to_string(),
            ));
        }
        let item = example::resolve(doc, item).map_err(|why| (format!("paths.{path}"), why))?;
        for method in METHODS {
            if let Some(op) = item.get(*method) {
                out.push(Operation {
                    path,
                    method,
                    item,
                    op,
                    at: format!("paths.{path}.{method}"),
                });
            }
        }
    }
    Ok(out)
}

/// The operations `--operations` names, in its order (all when it names none).
fn choose<'a>(
    file: &str,
    all: Vec<Operation<'a>>,
    wanted: &[String],
) -> Result<Vec<Operation<'a>>, OpenApiError> {
    if all.is_empty() {
        return Err(OpenApiError::NoOperations { file: file.into() });
    }
    if wanted.is_empty() {
        return Ok(all);
    }
    let id = |o: &Operation| {
        o.op.get("operationId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let unknown: Vec<&str> = wanted
        .iter()
        .filter(|w| !all.iter().any(|o| id(o) == **w))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        let known: Vec<String> = all.iter().map(id).filter(|i| !i.is_empty()).collect();
        return Err(OpenApiError::UnknownOperations {
            file: file.into(),
            unknown: unknown.join(", "),
            known: known.join(", "),
        });
    }
    let mut all: Vec<Option<Operation<'a>>> = all.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for w in wanted {
        if let Some(slot) = all
            .iter_mut()
            .find(|o| o.as_ref().is_some_and(|o| id(o) == *w))
        {
            out.extend(slot.take());
        }
    }
    Ok(out)
}

/// A step's body as plan text: JSON as a `json` table when TOML can hold it, else as text.
fn json_body(value: serde_json::Value) -> BodyText {
    if super::text::toml_expressible(&value) && (value.is_object() || value.is_array()) {
        BodyText::Json(literal_strings(value))
    } else {
        BodyText::Text(literal(&value.to_string()))
    }
}

/// Every string in a JSON value made literal for the plan's templates.
fn literal_strings(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        J::String(s) => J::String(literal(&s)),
        J::Array(items) => J::Array(items.into_iter().map(literal_strings).collect()),
        J::Object(map) => J::Object(
            map.into_iter()
                .map(|(k, v)| (k, literal_strings(v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
#[path = "openapi_tests.rs"]
mod tests;
