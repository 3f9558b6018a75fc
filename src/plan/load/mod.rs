//! Loading a plan file: parse, validate, compile templates, load data — every error with
//! file:line:col and a hint, before any load is sent.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toml::Spanned;

mod profile;
mod secrets;
mod target;
mod values;

pub use target::{resolve_host, resolve_target, resolve_target_with, step_capture};
pub use values::{MAX_DURATION, Resolve, parse_duration, scale_duration, system_resolve};

use super::check::{self, Check, Extract, Source};

use super::data::{DataSource, RowMode};
use super::file::{self, PlanFile, ScenarioFile, StepFile, ThresholdEntry};
use super::template::{Templates, Text, has_template_syntax};
use super::threshold::{self, Threshold};
use super::{
    Body, DynamicRequest, Flow, GroupDef, Plan, Scenario, StaticRequest, Step, StepRequest, Target,
};
use crate::error::Error;
use crate::proto::grpc::GrpcSchema;
use crate::proto::message::{Request, RequestKind};
use crate::record::model::GroupKind;

/// Choices from the command line that change a plan.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// `--set key=value`: `vars.NAME` (or a bare `NAME`), `target.base_url`, `target.timeout`.
    pub sets: Vec<(String, String)>,
    /// `--time-scale`: multiplies every duration of the load profiles (0.1 = ten times shorter).
    pub time_scale: f64,
    /// `--threads`.
    pub threads: Option<usize>,
    /// `--secret-header`: more headers whose values are secret (besides the plan's own).
    pub secret_headers: Vec<String>,
    /// How `target.base_url`'s host becomes an address: [`system_resolve`] unless a test or the
    /// fuzzer needs one that never leaves the machine.
    pub resolve: Resolve,
    /// Whether gRPC steps without `[target] proto` may fetch their schema from the target by
    /// server reflection while the plan loads (a network call). Off, such steps are an error.
    pub reflection: bool,
    /// `--segment i/N`: load only this share of the test; `None` = the whole.
    pub segment: Option<crate::schedule::Segment>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            sets: Vec::new(),
            time_scale: 1.0,
            threads: None,
            secret_headers: Vec::new(),
            resolve: system_resolve,
            reflection: true,
            segment: None,
        }
    }
}

/// Reads, validates and compiles the plan at `path`.
pub fn load(path: &Path, options: &LoadOptions) -> Result<Plan, Error> {
    let bytes = std::fs::read(path).map_err(|cause| Error::File {
        action: "cannot read plan",
        path: path.to_path_buf(),
        cause,
    })?;
    load_bytes(&bytes, path, options)
}

/// Validates and compiles plan `bytes` (read from `path`): text that is not UTF-8 is refused at
/// the line and column of its first invalid byte.
pub fn load_bytes(bytes: &[u8], path: &Path, options: &LoadOptions) -> Result<Plan, Error> {
    match std::str::from_utf8(bytes) {
        Ok(text) => load_str(text, path, options),
        Err(e) => {
            // The valid prefix locates the bad byte in lines and characters.
            let valid = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default();
            Err(Error::Plan {
                at: crate::location::at(path, valid, Some(valid.len()..valid.len())),
                why: format!(
                    "the file is not UTF-8 text (byte 0x{:02x})",
                    bytes[e.valid_up_to()]
                ),
                hint: Some("save the plan as UTF-8".into()),
            })
        }
    }
}

/// Validates and compiles plan `text` (read from `path`, which anchors relative files).
pub fn load_str(text: &str, path: &Path, options: &LoadOptions) -> Result<Plan, Error> {
    let ctx = Ctx {
        text,
        path,
        options,
    };
    let file: PlanFile = toml::from_str(text).map_err(|e| {
        let message = e.message().trim_end().to_string();
        let hint = if message.contains("unknown field") {
            Some("check the spelling; `volley check` lists the plan format in schema/plan.schema.json")
        } else {
            None
        };
        ctx.err(e.span(), message, hint)
    })?;
    let share = match options.segment {
        Some(s) => Some((
            s,
            crate::plan::segment::file_hash(text, path, &file, options)?,
        )),
        None => None,
    };
    crate::plan::segment::apply_if(ctx.plan(file)?, share)
}

struct Ctx<'a> {
    text: &'a str,
    path: &'a Path,
    options: &'a LoadOptions,
}

impl Ctx<'_> {
    /// An error at a byte span of the file.
    fn err(&self, span: Option<Range<usize>>, why: impl Into<String>, hint: Option<&str>) -> Error {
        Error::Plan {
            at: crate::location::at(self.path, self.text, span),
            why: why.into(),
            hint: hint.map(str::to_string),
        }
    }

    fn at<T>(&self, s: &Spanned<T>, why: impl Into<String>, hint: Option<&str>) -> Error {
        self.err(Some(s.span()), why, hint)
    }

    fn duration(&self, s: &Spanned<String>, scaled: bool) -> Result<Duration, Error> {
        let d = parse_duration(s.get_ref())
            .map_err(|why| self.at(s, why, Some("write durations like 30s, 1m30s or 500ms")))?;
        if scaled {
            scale_duration(d, self.options.time_scale).map_err(|why| self.at(s, why, None))
        } else {
            Ok(d)
        }
    }

    fn relative(&self, file: &str) -> PathBuf {
        let p = Path::new(file);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.path.parent().unwrap_or(Path::new(".")).join(p)
        }
    }

    fn plan(&self, mut f: PlanFile) -> Result<Plan, Error> {
        // --set overrides.
        let mut base_url_override = None;
        let mut timeout_override = None;
        for (key, value) in &self.options.sets {
            match key.as_str() {
                "target.base_url" => base_url_override = Some(value.clone()),
                "target.timeout" => timeout_override = Some(value.clone()),
                k => {
                    let name = k.strip_prefix("vars.").unwrap_or(k);
                    if name.is_empty() || name.contains('.') {
                        return Err(Error::Invalid {
                            what: "--set".into(),
                            why: format!(
                                "`{key}`: use vars.NAME (or NAME), target.base_url or target.timeout"
                            ),
                        });
                    }
                    f.vars
                        .insert(name.to_string(), toml::Value::String(value.clone()));
                }
            }
        }
        let vars: BTreeMap<String, String> = f
            .vars
            .iter()
            .map(|(k, v)| {
                let s = match v {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), s)
            })
            .collect();

        let mut data = BTreeMap::new();
        for (name, d) in &f.data {
            let mode = match d.mode.as_ref().map(|m| m.get_ref().as_str()) {
                None | Some("sequential") => RowMode::Sequential,
                Some("random") => RowMode::Random,
                Some("unique") => RowMode::UniquePerVu,
                Some(other) => {
                    return Err(self.at(
                        d.mode.as_ref().expect("matched Some"),
                        format!("unknown data mode `{other}`"),
                        Some("use sequential, random or unique"),
                    ));
                }
            };
            let source =
                DataSource::load(&self.relative(d.file.get_ref()), mode).map_err(|why| {
                    self.at(&d.file, why, Some("the path is relative to the plan file"))
                })?;
            data.insert(name.clone(), source);
        }
        let mut templates = Templates::new(vars, data);

        let secrets = self.secrets(&f)?;
        let target = self.target(
            &f,
            &templates,
            &secrets,
            base_url_override,
            timeout_override,
        )?;
        let schema = self.grpc_schema(&f, &target, self.options.reflection)?;
        let mut groups = Vec::new();
        let mut scenarios = Vec::new();
        let mut names = BTreeSet::new();
        let mut first_check = 0;
        if f.scenarios.is_empty() {
            return Err(self.err(
                None,
                "the plan has no [[scenario]]",
                Some("add at least one scenario with a load profile and steps"),
            ));
        }
        for sf in &f.scenarios {
            if !names.insert(sf.name.get_ref().clone()) {
                return Err(self.at(
                    &sf.name,
                    format!("scenario `{}` is defined twice", sf.name.get_ref()),
                    Some("scenario names must be unique"),
                ));
            }
            let scenario = self.scenario(
                sf,
                &target,
                schema.as_ref(),
                &mut templates,
                &mut groups,
                &mut first_check,
            )?;
            scenarios.push(scenario);
        }
        let thresholds = self.thresholds(&f, &scenarios)?;
        let threads = match self.options.threads.or(f.threads) {
            Some(0) => {
                return Err(Error::Invalid {
                    what: "threads".into(),
                    why: "must be at least 1".into(),
                });
            }
            Some(t) => t,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let most_vus: u64 = scenarios.iter().map(|s| u64::from(s.max_vus())).sum();
        let name = f.name.clone().unwrap_or_else(|| {
            self.path
                .file_stem()
                .map_or_else(|| "plan".into(), |s| s.to_string_lossy().into_owned())
        });
        Ok(Plan {
            name,
            source: Some(self.path.to_path_buf()),
            target,
            scenarios,
            thresholds,
            warmup: Duration::ZERO,
            threads: threads.min(usize::try_from(most_vus.max(1)).unwrap_or(usize::MAX)),
            templates: Arc::new(templates),
            groups,
            quick: None,
            secrets,
            share: None,
        })
    }

    fn scenario(
        &self,
        sf: &ScenarioFile,
        target: &Target,
        schema: Option<&GrpcSchema>,
        templates: &mut Templates,
        groups: &mut Vec<GroupDef>,
        first_check: &mut usize,
    ) -> Result<Scenario, Error> {
        let name = sf.name.get_ref().clone();
        let group = push_group(groups, GroupKind::Scenario, &name, None);
        let (profile, phase_specs) = self.profile(&sf.load)?;
        let flow_weighted = match sf.flow.as_ref().map(|f| f.get_ref().as_str()) {
            None | Some("sequential") => false,
            Some("weighted") => true,
            Some(other) => {
                return Err(self.at(
                    sf.flow.as_ref().expect("matched Some"),
                    format!("unknown flow `{other}`"),
                    Some("use sequential or weighted"),
                ));
            }
        };
        if sf.steps.is_empty() {
            return Err(self.at(
                &sf.name,
                format!("scenario `{name}` has no steps"),
                Some("add [[scenario.step]] tables"),
            ));
        }
        // Variables extracted anywhere in the scenario may be used by its templates.
        let known: BTreeSet<String> = sf
            .steps
            .iter()
            .flat_map(|s| s.extract.keys().cloned())
            .collect();
        let mut steps = Vec::new();
        let mut step_names = BTreeSet::new();
        let mut cumulative = Vec::new();
        let mut total_weight = 0u64;
        for st in &sf.steps {
            if !step_names.insert(st.name.get_ref().clone()) {
                return Err(self.at(
                    &st.name,
                    format!(
                        "step `{}` is defined twice in scenario `{name}`",
                        st.name.get_ref()
                    ),
                    None,
                ));
            }
            let weight = st.weight.unwrap_or(1);
            if flow_weighted && weight == 0 {
                return Err(self.at(
                    &st.name,
                    "a weight of 0 means the step never runs",
                    Some("remove the step or give it a weight ≥ 1"),
                ));
            }
            total_weight += u64::from(weight);
            cumulative.push(total_weight);
            let step_group = push_group(groups, GroupKind::Step, st.name.get_ref(), Some(&name));
            let step = self.step(
                st,
                target,
                schema,
                templates,
                &known,
                step_group,
                *first_check,
            )?;
            *first_check += step.checks.len();
            steps.push(step);
        }
        let phases = phase_specs
            .into_iter()
            .map(|mut p| {
                p.group = push_group(groups, GroupKind::Phase, &p.name, Some(&name));
                p
            })
            .collect();
        let start_after = match &sf.start_after {
            Some(d) => self.duration(d, true)?,
            None => Duration::ZERO,
        };
        Ok(Scenario {
            name,
            start_after,
            profile,
            flow: if flow_weighted {
                Flow::Weighted(cumulative)
            } else {
                Flow::Sequential
            },
            steps,
            phases,
            group: Some(group),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn step(
        &self,
        st: &StepFile,
        target: &Target,
        schema: Option<&GrpcSchema>,
        templates: &mut Templates,
        known: &BTreeSet<String>,
        group: usize,
        first_check: usize,
    ) -> Result<Step, Error> {
        let name = st.name.get_ref().clone();
        let method = st
            .method
            .as_ref()
            .map_or_else(|| "GET".to_string(), |m| m.get_ref().to_ascii_uppercase());
        if method.is_empty() || !method.bytes().all(super::quick::is_token_byte) {
            let span = st.method.as_ref().map(|m| m.span());
            return Err(self.err(span, format!("`{method}` is not an HTTP method"), None));
        }
        let grpc = match (&st.grpc, schema) {
            (Some(call), Some(schema)) => {
                if st.path.is_some() || st.method.is_some() || st.body.is_some() {
                    return Err(self.at(
                        call,
                        "a gRPC step has no `path`, `method` or `body`: its message is `json`",
                        Some("grpc = \"pkg.Service/Method\"\njson = { field = \"value\" }"),
                    ));
                }
                Some(Arc::new(
                    schema
                        .method(call.get_ref())
                        .map_err(|e| self.at(call, e.to_string(), None))?,
                ))
            }
            _ => None,
        };
        let path_text = match &grpc {
            Some(m) => Text::Static(m.path().to_owned()),
            None => {
                let path = st.path.as_ref().ok_or_else(|| {
                    self.at(
                        &st.name,
                        format!("step `{name}` has no `path`"),
                        Some("path = \"/tasks\""),
                    )
                })?;
                if !path.get_ref().starts_with('/') && !path.get_ref().starts_with("{{") {
                    return Err(self.at(path, "a path starts with `/`", None));
                }
                if !has_template_syntax(path.get_ref())
                    && path
                        .get_ref()
                        .bytes()
                        .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
                {
                    return Err(self.at(
                        path,
                        "a path cannot hold spaces or control characters",
                        Some("percent-encode them: %20 for a space"),
                    ));
                }
                let full_path = format!("{}{}", target.base_path, path.get_ref());
                templates
                    .text(&full_path, known)
                    .map_err(|e| self.at(path, e.0, None))?
            }
        };
        let method = if grpc.is_some() {
            "POST".to_string()
        } else {
            method
        };
        let mut headers: Vec<(String, Text)> = target
            .headers
            .iter()
            .map(|(n, v)| (n.clone(), Text::Static(v.clone())))
            .collect();
        for (n, v) in &st.headers {
            super::quick::parse_header(&format!("{n}: x"), &Default::default())
                .map_err(|e| self.at(v, e.to_string(), None))?;
            let t = templates
                .text(v.get_ref(), known)
                .map_err(|e| self.at(v, e.0, None))?;
            headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(n));
            headers.push((n.clone(), t));
        }
        let bodies = [st.body.is_some(), st.body_file.is_some(), st.json.is_some()];
        if bodies.iter().filter(|b| **b).count() > 1 {
            return Err(self.at(&st.name, "give one of `body`, `body_file` and `json`", None));
        }
        let body = if let Some(b) = &st.body {
            Body::Text(
                templates
                    .text(b.get_ref(), known)
                    .map_err(|e| self.at(b, e.0, None))?,
            )
        } else if let Some(f) = &st.body_file {
            let content = std::fs::read_to_string(self.relative(f.get_ref())).map_err(|e| {
                self.at(
                    f,
                    format!("cannot read body file {}: {e}", f.get_ref()),
                    Some("the path is relative to the plan file"),
                )
            })?;
            Body::Text(
                templates
                    .text(&content, known)
                    .map_err(|e| self.at(f, e.0, None))?,
            )
        } else if let Some(j) = &st.json {
            let value =
                serde_json::to_value(j.get_ref()).map_err(|e| self.at(j, e.to_string(), None))?;
            if grpc.is_none()
                && !headers
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            {
                headers.push((
                    "Content-Type".into(),
                    Text::Static("application/json".into()),
                ));
            }
            Body::Json(
                templates
                    .json(&value, known)
                    .map_err(|e| self.at(j, e.0, None))?,
            )
        } else {
            Body::Empty
        };
        let think = match &st.think {
            Some(d) => self.duration(d, false)?,
            None => Duration::ZERO,
        };
        let mut extract = Vec::new();
        for (var, e) in &st.extract {
            let ef = e.get_ref();
            let source = match (&ef.json, &ef.header, &ef.regex) {
                (Some(path), None, None) => {
                    Source::Json(check::json_pointer(path).map_err(|why| self.at(e, why, None))?)
                }
                (None, Some(h), None) => Source::Header(h.clone()),
                (None, None, Some(re)) => Source::Regex(
                    regex::Regex::new(re)
                        .map_err(|err| self.at(e, format!("invalid regex: {err}"), None))?,
                ),
                _ => {
                    return Err(self.at(
                        e,
                        format!("extract `{var}` needs exactly one of json, header, regex"),
                        Some("task_id = { json = \"/id\" }"),
                    ));
                }
            };
            if Templates::BUILTIN_VARIABLES.contains(&var.as_str()) {
                return Err(self.at(
                    e,
                    format!("`{var}` is a built-in variable; choose another name"),
                    None,
                ));
            }
            extract.push(Extract {
                var: var.clone(),
                source,
            });
        }
        let checks = self.checks(st)?;
        let capture = !extract.is_empty()
            || checks
                .iter()
                .any(|c| !matches!(c, Check::StatusIn(_) | Check::LatencyUnder(_)));
        let dynamic = path_text.is_template()
            || headers.iter().any(|(_, v)| v.is_template())
            || match &body {
                Body::Empty => false,
                Body::Text(t) | Body::Json(t) => t.is_template(),
            };
        let request = if dynamic {
            StepRequest::Dynamic(DynamicRequest {
                method,
                path: path_text,
                headers,
                body,
            })
        } else {
            let text = |t: &Text| match t {
                Text::Static(s) => s.clone(),
                Text::Template(_) => unreachable!("static request"),
            };
            let headers: Vec<(String, String)> =
                headers.iter().map(|(n, v)| (n.clone(), text(v))).collect();
            let body_text = match &body {
                Body::Empty => String::new(),
                Body::Text(t) | Body::Json(t) => text(t),
            };
            let body_bytes = match &grpc {
                // The message is checked against its type now, not at every request.
                Some(m) => m
                    .encode_json(if body_text.is_empty() {
                        "{}"
                    } else {
                        &body_text
                    })
                    .map_err(|e| match &st.json {
                        Some(j) => self.at(j, e.to_string(), None),
                        None => self.at(&st.name, e.to_string(), None),
                    })?,
                None => body_text.into_bytes().into(),
            };
            let request = Request {
                method: http::Method::from_bytes(method.as_bytes()).map_err(|_| {
                    self.at(&st.name, format!("`{method}` is not an HTTP method"), None)
                })?,
                authority: target.host_header.clone(),
                path_and_query: text(&path_text),
                headers,
                body: body_bytes,
                kind: if grpc.is_some() {
                    RequestKind::Grpc
                } else {
                    RequestKind::Http
                },
                capture: step_capture(capture),
            };
            let prepared = target
                .connect
                .client_for(grpc.is_some())
                .prepare(&request)
                .map_err(|e| self.at(&st.name, e.to_string(), None))?;
            StepRequest::Static(Box::new(StaticRequest { request, prepared }))
        };
        let expected_status = checks
            .iter()
            .find_map(|c| match c {
                Check::StatusIn(codes) => Some(codes.clone()),
                _ => None,
            })
            .unwrap_or_default();
        Ok(Step {
            name,
            request,
            grpc,
            think,
            extract,
            checks,
            capture,
            expected_status,
            group: Some(group),
            first_check,
        })
    }

    fn checks(&self, st: &StepFile) -> Result<Vec<Check>, Error> {
        let Some(c) = &st.checks else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        if let Some(status) = &c.status {
            if status.is_empty() || status.iter().any(|s| !(100..=599).contains(s)) {
                return Err(self.at(
                    &st.name,
                    "checks.status lists HTTP status codes (100–599)",
                    None,
                ));
            }
            out.push(Check::StatusIn(status.clone()));
        }
        match &c.body_contains {
            Some(file::OneOrMany::One(s)) => out.push(Check::BodyContains(s.clone())),
            Some(file::OneOrMany::Many(v)) => {
                out.extend(v.iter().cloned().map(Check::BodyContains))
            }
            None => {}
        }
        for (path, expected) in c.json.iter().flatten() {
            let pointer = check::json_pointer(path).map_err(|why| self.at(&st.name, why, None))?;
            let expected = serde_json::to_value(expected)
                .map_err(|e| self.at(&st.name, e.to_string(), None))?;
            out.push(Check::JsonEquals { pointer, expected });
        }
        for h in c.headers.iter().flatten() {
            out.push(Check::HeaderPresent(h.clone()));
        }
        if let Some(d) = &c.latency_under {
            out.push(Check::LatencyUnder(self.duration(d, false)?));
        }
        Ok(out)
    }

    fn thresholds(&self, f: &PlanFile, scenarios: &[Scenario]) -> Result<Vec<Threshold>, Error> {
        let mut out = Vec::new();
        for (key, entries) in &f.thresholds {
            let (metric, filter) = threshold::parse_metric(key).map_err(|why| {
                self.at(
                    entries,
                    why,
                    Some("e.g. \"latency{step=get_task}\" = [\"p95 < 5ms\"]"),
                )
            })?;
            if let Some(filter) = &filter {
                let exists = match filter {
                    threshold::Filter::Scenario(s) => scenarios.iter().any(|sc| &sc.name == s),
                    threshold::Filter::Step(s) => scenarios
                        .iter()
                        .any(|sc| sc.steps.iter().any(|st| &st.name == s)),
                    threshold::Filter::Phase(p) => scenarios.iter().any(|sc| {
                        sc.phases
                            .iter()
                            .enumerate()
                            .any(|(i, ph)| &ph.name == p || (i + 1).to_string() == *p)
                    }),
                };
                if !exists {
                    return Err(self.at(
                        entries,
                        format!("`{key}` filters on something the plan does not have"),
                        Some("use the name of a scenario, step or phase of this plan"),
                    ));
                }
            }
            for entry in entries.get_ref() {
                let (condition, abort_on_fail, grace) = match entry.get_ref() {
                    ThresholdEntry::Condition(c) => (c.clone(), false, Duration::ZERO),
                    ThresholdEntry::Full {
                        condition,
                        abort_on_fail,
                        grace,
                    } => {
                        let grace = match grace {
                            Some(g) => {
                                parse_duration(g).map_err(|why| self.at(entry, why, None))?
                            }
                            None => Duration::ZERO,
                        };
                        (condition.clone(), *abort_on_fail, grace)
                    }
                };
                let (stat, op, bound) =
                    threshold::parse_condition(metric, &condition).map_err(|why| {
                        self.at(
                            entry,
                            why,
                            Some("e.g. \"p95 < 5ms\", \"rate < 1%\", \"> 100\""),
                        )
                    })?;
                out.push(Threshold {
                    metric_text: key.clone(),
                    condition_text: condition,
                    metric,
                    filter: filter.clone(),
                    stat,
                    op,
                    bound,
                    abort_on_fail,
                    grace,
                });
            }
        }
        Ok(out)
    }
}

fn push_group(
    groups: &mut Vec<GroupDef>,
    kind: GroupKind,
    name: &str,
    scenario: Option<&str>,
) -> usize {
    groups.push(GroupDef {
        kind,
        name: name.to_string(),
        scenario: scenario.map(str::to_string),
    });
    groups.len() - 1
}
