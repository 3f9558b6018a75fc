//! Templates: values in a plan that change per request (`{{ vu }}`, `{{ rand_int(1, 6) }}`,
//! `{{ data.users.name }}`, `{{ task_id }}`), compiled once with minijinja when the plan loads.
//!
//! A value without `{{`/`{%` stays a [`Text::Static`] and costs nothing per request. A JSON body
//! becomes one template whose templated string leaves are wrapped in `tojson`, so output is always
//! valid JSON, and a leaf that is a single expression (`"{{ rand_int(1, 100) }}"`) keeps its type
//! (a number, not a string).
//!
//! Variables: `vu` (1-based VU number), `iteration` (0-based, per VU), `scenario`, `vars.NAME`
//! (the plan's `[vars]`, overridable with `--set`), `env.NAME` (environment variables),
//! `data.FILE.COLUMN` (a row of a CSV data file), and every variable extracted by a step.
//! Functions: `rand_int(lo, hi)`, `choice(list)`, `uuid()`, `timestamp()` (Unix ms), `counter()`
//! (a run-wide sequence 0, 1, 2, …).
//!
//! Limits: a template is user input that runs on the hot path, so every render is bounded — at
//! most [`MAX_INSTRUCTIONS`] template instructions (minijinja's fuel: a loop that would run
//! forever stops with "engine ran out of fuel"), [`MAX_RECURSION`] levels of nesting (recursive
//! macros), and [`MAX_RENDERED_BYTES`] of output. A render that hits one fails like any other
//! render error: `volley check` reports it, a run counts the request as `template_error`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};

use minijinja::{Environment, UndefinedBehavior, Value};

use super::data::DataSource;

/// A plan value: fixed, or a template compiled into [`Templates`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Text {
    /// No template syntax: used as is.
    Static(String),
    /// The name of a compiled template.
    Template(String),
}

impl Text {
    /// Whether the value is rendered per request.
    pub fn is_template(&self) -> bool {
        matches!(self, Text::Template(_))
    }
}

/// A JSON body compiled as one template (see the module docs).
pub type JsonTemplate = Text;

/// Whether `s` uses template syntax.
pub fn has_template_syntax(s: &str) -> bool {
    s.contains("{{") || s.contains("{%")
}

/// All templates of a plan, their functions, and the data they read.
pub struct Templates {
    env: Environment<'static>,
    /// CSV data files by name.
    pub data: BTreeMap<String, DataSource>,
    /// `vars` and `env`, built once.
    base: Value,
    /// The names the plan's `[vars]` defines.
    var_names: BTreeSet<String>,
    /// The `vars.NAME` the compiled templates read (guarded or not).
    read_vars: BTreeSet<String>,
    next_id: usize,
}

impl std::fmt::Debug for Templates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Templates")
            .field("templates", &self.next_id)
            .field("data", &self.data.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Why a template could not be compiled or rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Most template instructions one render may execute (minijinja fuel). Real request templates
/// use tens to a few thousand; a loop over 10 000 items still fits.
pub const MAX_INSTRUCTIONS: u64 = 100_000;

/// Deepest nesting of loops, conditions and macro calls one render may reach (minijinja's own
/// ceiling is 500; engine threads have smaller stacks than the main thread).
pub const MAX_RECURSION: usize = 100;

/// Most bytes one render may write: a request body or header larger than this is a mistake.
pub const MAX_RENDERED_BYTES: usize = 16 << 20;

/// A `Vec` writer that refuses to grow past [`MAX_RENDERED_BYTES`] (counted from where this
/// render started), so a template cannot fill the memory through its output.
struct Capped<'a> {
    out: &'a mut Vec<u8>,
    limit: usize,
}

impl std::io::Write for Capped<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.out.len() + buf.len() > self.limit {
            return Err(std::io::Error::other(format!(
                "the rendered text would exceed {} MiB",
                MAX_RENDERED_BYTES >> 20
            )));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Templates {
    /// An environment with volley's functions, the plan's variables and data.
    pub fn new(vars: BTreeMap<String, String>, data: BTreeMap<String, DataSource>) -> Self {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_fuel(Some(MAX_INSTRUCTIONS));
        env.set_recursion_limit(MAX_RECURSION);
        env.add_function("rand_int", |lo: i64, hi: i64| {
            if lo > hi { lo } else { fastrand::i64(lo..=hi) }
        });
        env.add_function("choice", |items: Vec<Value>| {
            if items.is_empty() {
                Value::UNDEFINED
            } else {
                items[fastrand::usize(..items.len())].clone()
            }
        });
        env.add_function("uuid", || uuid::Uuid::new_v4().to_string());
        env.add_function("timestamp", || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64)
        });
        env.add_function("counter", || COUNTER.fetch_add(1, Ordering::Relaxed));
        let env_vars: BTreeMap<String, String> = std::env::vars().collect();
        Self {
            env,
            data,
            var_names: vars.keys().cloned().collect(),
            read_vars: BTreeSet::new(),
            base: {
                let mut base: BTreeMap<String, Value> = BTreeMap::new();
                base.insert("vars".into(), Value::from(minijinja::value::Serde(&vars)));
                base.insert(
                    "env".into(),
                    Value::from(minijinja::value::Serde(&env_vars)),
                );
                Value::from(base)
            },
            next_id: 0,
        }
    }

    /// The names every template may use besides extracted variables.
    pub const BUILTIN_VARIABLES: [&'static str; 6] =
        ["vu", "iteration", "scenario", "vars", "env", "data"];

    /// Compiles `source` if it has template syntax. `known` are the extracted variables in scope.
    pub fn text(&mut self, source: &str, known: &BTreeSet<String>) -> Result<Text, TemplateError> {
        if !has_template_syntax(source) {
            return Ok(Text::Static(source.to_string()));
        }
        self.compile(source.to_string(), known)
    }

    /// Compiles a JSON value as one template producing JSON text.
    pub fn json(
        &mut self,
        value: &serde_json::Value,
        known: &BTreeSet<String>,
    ) -> Result<Text, TemplateError> {
        let mut source = String::new();
        let templated = json_source(value, &mut source);
        if !templated {
            return Ok(Text::Static(
                serde_json::to_string(value).map_err(|e| TemplateError(e.to_string()))?,
            ));
        }
        self.compile(source, known)
    }

    fn compile(&mut self, source: String, known: &BTreeSet<String>) -> Result<Text, TemplateError> {
        let name = format!("t{}", self.next_id);
        self.next_id += 1;
        self.env
            .add_template_owned(name.clone(), source)
            .map_err(|e| TemplateError(describe(&e)))?;
        let template = self
            .env
            .get_template(&name)
            .map_err(|e| TemplateError(describe(&e)))?;
        let mut undefined: Vec<String> = template
            .undeclared_variables(false)
            .into_iter()
            .filter(|v| {
                !Self::BUILTIN_VARIABLES.contains(&v.as_str())
                    && !known.contains(v)
                    && self.env.globals().all(|(g, _)| g != v.as_str())
            })
            .collect();
        undefined.sort();
        if let Some(first) = undefined.first() {
            let mut names: Vec<&str> = Self::BUILTIN_VARIABLES.to_vec();
            names.extend(known.iter().map(String::as_str));
            return Err(TemplateError(format!(
                "undefined variable `{first}`; known: {} (in a sequential flow a step knows \
                 what the steps before it extract)",
                names.join(", ")
            )));
        }
        // A template may guard a missing name (`| default(…)`, `is defined`), which the list of
        // names it reads does not show: then a missing `vars.NAME` is its business.
        let guarded = ["default", "defined"]
            .iter()
            .any(|w| template.source().contains(w));
        for nested in template.undeclared_variables(true) {
            if let Some(rest) = nested.strip_prefix("vars.") {
                let name = rest.split('.').next().unwrap_or(rest);
                if !guarded && !self.var_names.contains(name) {
                    return Err(TemplateError(self.undefined_var(name)));
                }
                self.read_vars.insert(name.to_string());
            }
            if let Some(rest) = nested.strip_prefix("data.") {
                self.check_data(rest, guarded)?;
            }
            if let Some(rest) = nested.strip_prefix("env.")
                && !guarded
            {
                let var = rest.split('.').next().unwrap_or(rest);
                if std::env::var_os(var).is_none() {
                    return Err(TemplateError(format!(
                        "undefined `env.{var}`: {var} is not set in the environment; set it, \
                         or guard it (`| default(…)`)"
                    )));
                }
            }
        }
        Ok(Text::Template(name))
    }

    /// `data.FILE.COLUMN` (`rest` is `FILE.COLUMN`): the file is declared, and the column is
    /// one of its own, unless the template guards it.
    fn check_data(&self, rest: &str, guarded: bool) -> Result<(), TemplateError> {
        let mut parts = rest.split('.');
        let file = parts.next().unwrap_or(rest);
        let Some(source) = self.data.get(file) else {
            return Err(TemplateError(format!(
                "undefined data file `{file}`; declare it under [data.{file}]"
            )));
        };
        match parts.next() {
            Some(column) if !guarded && !source.columns().any(|c| c == column) => {
                let columns: Vec<&str> = source.columns().collect();
                Err(TemplateError(format!(
                    "data file `{file}` has no column `{column}`; its columns: {}",
                    columns.join(", ")
                )))
            }
            _ => Ok(()),
        }
    }

    /// The `NAME`s of the `vars.NAME` the templates compiled so far read.
    pub fn read_vars(&self) -> impl Iterator<Item = &str> {
        self.read_vars.iter().map(String::as_str)
    }

    /// Why `vars.NAME` is undefined, with the names `[vars]` does define.
    fn undefined_var(&self, name: &str) -> String {
        if self.var_names.is_empty() {
            format!("undefined `vars.{name}`: the plan has no [vars]")
        } else {
            let names: Vec<&str> = self.var_names.iter().map(String::as_str).collect();
            format!(
                "undefined `vars.{name}`; [vars] defines: {}",
                names.join(", ")
            )
        }
    }

    /// Renders `text` with `ctx`, appending to `out`.
    pub fn render_into(
        &self,
        text: &Text,
        ctx: &Value,
        out: &mut Vec<u8>,
    ) -> Result<(), TemplateError> {
        match text {
            Text::Static(s) => {
                out.extend_from_slice(s.as_bytes());
                Ok(())
            }
            Text::Template(name) => {
                let template = self
                    .env
                    .get_template(name)
                    .map_err(|e| TemplateError(describe(&e)))?;
                let limit = out.len().saturating_add(MAX_RENDERED_BYTES);
                template
                    .render_captured_to(ctx.clone(), Capped { out, limit })
                    .map(|_| ())
                    .map_err(|e| TemplateError(describe(&e)))
            }
        }
    }

    /// Renders to a new string (for `volley check` and tests).
    pub fn render(&self, text: &Text, ctx: &Value) -> Result<String, TemplateError> {
        let mut out = Vec::new();
        self.render_into(text, ctx, &mut out)?;
        String::from_utf8(out).map_err(|e| TemplateError(e.to_string()))
    }

    /// The context of one iteration: VU number (1-based), iteration, scenario, variables, data
    /// rows, and the variables extracted so far.
    pub fn context(
        &self,
        vu: u32,
        iteration: u64,
        scenario: &str,
        extracted: &BTreeMap<String, Value>,
    ) -> Value {
        // Built directly (no serde round trip) and layered over the constant part, so the
        // environment and variables are shared, not copied, per iteration.
        let mut ctx: BTreeMap<String, Value> = extracted.clone();
        ctx.insert("vu".into(), Value::from(vu + 1));
        ctx.insert("iteration".into(), Value::from(iteration));
        ctx.insert("scenario".into(), Value::from(scenario));
        if !self.data.is_empty() {
            let data: BTreeMap<String, Value> = self
                .data
                .iter()
                .map(|(name, source)| (name.clone(), source.row(vu, iteration)))
                .collect();
            ctx.insert("data".into(), Value::from(data));
        }
        minijinja::value::merge_maps([Value::from(ctx), self.base.clone()])
    }
}

/// Writes a JSON value as template source; returns whether any leaf was a template.
fn json_source(value: &serde_json::Value, out: &mut String) -> bool {
    use serde_json::Value as J;
    match value {
        J::String(s) if has_template_syntax(s) => {
            let trimmed = s.trim();
            let single_expr = trimmed.starts_with("{{")
                && trimmed.ends_with("}}")
                && trimmed[2..trimmed.len() - 2].find("{{").is_none()
                && trimmed[2..trimmed.len() - 2].find("}}").is_none();
            if single_expr {
                out.push_str("{{ (");
                out.push_str(&trimmed[2..trimmed.len() - 2]);
                out.push_str(") | tojson }}");
            } else {
                out.push_str("{% filter tojson %}");
                out.push_str(s);
                out.push_str("{% endfilter %}");
            }
            true
        }
        J::Array(items) => {
            out.push('[');
            let mut any = false;
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                any |= json_source(v, out);
            }
            out.push(']');
            any
        }
        J::Object(map) => {
            out.push('{');
            let mut any = false;
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                // Keys are static; escape them (and any `{{` in them) as JSON text.
                out.push_str(&escape_literal(
                    &serde_json::to_string(k).unwrap_or_default(),
                ));
                out.push(':');
                any |= json_source(v, out);
            }
            out.push('}');
            any
        }
        other => {
            out.push_str(&escape_literal(&other.to_string()));
            false
        }
    }
}

/// Makes literal text safe inside a template (no accidental `{{`, `{%`, `{#`).
fn escape_literal(s: &str) -> String {
    if s.contains('{') {
        format!("{{% raw %}}{s}{{% endraw %}}")
    } else {
        s.to_string()
    }
}

fn describe(e: &minijinja::Error) -> String {
    let mut msg = e.kind().to_string();
    if let Some(detail) = e.detail() {
        msg.push_str(": ");
        msg.push_str(detail);
    }
    match e.kind() {
        minijinja::ErrorKind::OutOfFuel => msg.push_str(&format!(
            " (a render may run at most {MAX_INSTRUCTIONS} instructions: is a loop too long?)"
        )),
        minijinja::ErrorKind::WriteFailure => {
            if let Some(source) = std::error::Error::source(e) {
                msg.push_str(": ");
                msg.push_str(&source.to_string());
            }
        }
        _ => {}
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn templates() -> Templates {
        let mut vars = BTreeMap::new();
        vars.insert("pools".to_string(), "6".to_string());
        Templates::new(vars, BTreeMap::new())
    }

    fn known(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn static_text_is_not_compiled() {
        let mut t = templates();
        assert_eq!(
            t.text("/tasks", &known(&[])).unwrap(),
            Text::Static("/tasks".into())
        );
    }

    #[test]
    fn renders_variables_and_functions() {
        let mut t = templates();
        let text = t
            .text(
                "/pools/{{ rand_int(1, vars.pools | int) }}/vu{{ vu }}/i{{ iteration }}/{{ task_id }}",
                &known(&["task_id"]),
            )
            .unwrap();
        let mut extracted = BTreeMap::new();
        extracted.insert("task_id".to_string(), Value::from(42));
        let ctx = t.context(2, 7, "s", &extracted);
        let out = t.render(&text, &ctx).unwrap();
        let parts: Vec<&str> = out.split('/').collect();
        let pool: i64 = parts[2].parse().unwrap();
        assert!((1..=6).contains(&pool), "{out}");
        assert_eq!(&parts[3..], ["vu3", "i7", "42"]);
        let u = t.text("{{ uuid() }}", &known(&[])).unwrap();
        assert_eq!(t.render(&u, &ctx).unwrap().len(), 36);
    }

    #[test]
    fn json_bodies_stay_valid_and_typed() {
        let mut t = templates();
        let value: serde_json::Value = serde_json::json!({
            "title": "task \"{{ vu }}\"",
            "amount": "{{ rand_int(5, 5) }}",
            "fixed": [1, true, null, "{not a template}"],
        });
        let text = t.json(&value, &known(&[])).unwrap();
        let out = t
            .render(&text, &t.context(0, 0, "s", &BTreeMap::new()))
            .unwrap();
        let back: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(back["title"], "task \"1\"");
        assert_eq!(back["amount"], 5);
        assert_eq!(back["fixed"][3], "{not a template}");
        let plain = t.json(&serde_json::json!({"a": 1}), &known(&[])).unwrap();
        assert_eq!(plain, Text::Static(r#"{"a":1}"#.into()));
    }

    #[test]
    fn undefined_variables_and_syntax_errors_are_found_at_compile_time() {
        let mut t = templates();
        let err = t.text("/{{ taks_id }}", &known(&["task_id"])).unwrap_err();
        assert!(err.0.contains("undefined variable `taks_id`"), "{err}");
        let err = t.text("/{{ vu ", &known(&[])).unwrap_err();
        assert!(err.0.contains("syntax error"), "{err}");
        let err = t.text("{{ data.users.name }}", &known(&[])).unwrap_err();
        assert!(err.0.contains("undefined data file `users`"), "{err}");
        let err = t.text("/{{ vars.pool }}", &known(&[])).unwrap_err();
        assert!(
            err.0
                .contains("undefined `vars.pool`; [vars] defines: pools"),
            "{err}"
        );
        t.text("/{{ vars.pools }}", &known(&[])).unwrap();
        t.text("/{{ vars.pool | default(3) }}", &known(&[]))
            .unwrap();
        t.text(
            "/{% if vars.pool is defined %}{{ vars.pool }}{% endif %}",
            &known(&[]),
        )
        .unwrap();
        let mut bare = Templates::new(BTreeMap::new(), BTreeMap::new());
        let err = bare.text("{{ vars.pools }}", &known(&[])).unwrap_err();
        assert!(err.0.contains("the plan has no [vars]"), "{err}");
        // Functions are not variables.
        t.text("{{ counter() }}-{{ timestamp() }}", &known(&[]))
            .unwrap();
        // An environment variable that is not set, unless guarded.
        let err = t
            .text("{{ env.VOLLEY_SURELY_UNSET_X }}", &known(&[]))
            .unwrap_err();
        assert!(
            err.0.contains(
                "undefined `env.VOLLEY_SURELY_UNSET_X`: VOLLEY_SURELY_UNSET_X is not set"
            ),
            "{err}"
        );
        t.text(
            "{{ env.VOLLEY_SURELY_UNSET_X | default('x') }}",
            &known(&[]),
        )
        .unwrap();
    }

    #[test]
    fn a_data_files_columns_are_known_when_the_plan_loads() {
        let dir = std::env::temp_dir().join(format!("volley-tpl-data-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("users.csv");
        std::fs::write(&path, "id,name\n1,ada\n").unwrap();
        let users = DataSource::read(
            &path,
            super::super::data::RowMode::Sequential,
            super::super::data::DEFAULT_MAX_DATA_BYTES,
        )
        .unwrap();
        let mut t = Templates::new(BTreeMap::new(), BTreeMap::from([("users".into(), users)]));
        t.text("/{{ data.users.name }}", &known(&[])).unwrap();
        let err = t.text("/{{ data.users.nmae }}", &known(&[])).unwrap_err();
        assert!(
            err.0
                .contains("data file `users` has no column `nmae`; its columns: id, name"),
            "{err}"
        );
    }

    #[test]
    fn endless_deep_or_huge_renders_stop_with_an_error() {
        let mut t = templates();
        let ctx = t.context(0, 0, "s", &BTreeMap::new());
        let mut render = |source: &str| {
            let text = t.text(source, &known(&[])).unwrap();
            t.render(&text, &ctx).unwrap_err().0
        };
        // 10^10 iterations: stopped by fuel, not by patience.
        let err = render(
            "{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}",
        );
        assert!(err.contains("ran out of fuel"), "{err}");
        let err = render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
        assert!(err.contains("recursion limit"), "{err}");
        let err = render("{{ 'x' * 20000000 }}");
        assert!(err.contains("would exceed 16 MiB"), "{err}");
        // Below the limits, the same constructs render.
        let text = t
            .text(
                "{% for i in range(1000) %}{{ i }}{% endfor %}{{ 'x' * 1000 }}",
                &known(&[]),
            )
            .unwrap();
        assert!(t.render(&text, &ctx).unwrap().ends_with(&"x".repeat(1000)));
    }
}
