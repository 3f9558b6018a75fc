//! The steps of a scenario: `[[scenario.step]]` → [`Step`] (method, path, headers, body, a gRPC
//! call's message, think time, extraction and checks), each error located. A request without
//! templates is rendered and prepared in its wire form here, once.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{Ctx, Schemas};
use crate::error::Error;
use crate::plan::check::{self, Check, Extract, ValueSource};
use crate::plan::cookies::{CookieJar, CookieUrl};
use crate::plan::file::{self, StepFile};
use crate::plan::group_by::GroupSelector;
use crate::plan::header::{is_token_byte, parse_header};
use crate::plan::render::render_owned;
use crate::plan::stream::SEQ;
use crate::plan::template::{Templates, Text, has_template_syntax};
use crate::plan::{Body, DynamicRequest, StaticRequest, Step, StepRequest, Target};
use crate::proto::grpc::{GrpcMethod, split_call};
use crate::proto::message::{Request, RequestKind};

/// Whether a step is a gRPC call, and of what.
enum GrpcCall {
    /// An HTTP request.
    No,
    /// A call of this method.
    Method(Arc<GrpcMethod>),
    /// A call whose schema is fetched when the plan is prepared; its path.
    Later(String),
}

/// What every step of a scenario is built against.
pub(super) struct StepEnv<'a> {
    /// The plan's target (base path, default headers, clients).
    pub target: &'a Target,
    /// The gRPC schema, when some step is a gRPC call.
    pub schemas: &'a Schemas,
    /// Variables extracted anywhere in the scenario (its templates may use them).
    pub known: &'a BTreeSet<String>,
    /// The scenario's cookie jar.
    pub jar: CookieJar,
}

/// The variables a step's body may use: `known`, and `seq` when a streaming request side
/// (`sends`) renders it per message (with its index in the stream).
fn body_variables(known: &BTreeSet<String>, sends: bool) -> std::borrow::Cow<'_, BTreeSet<String>> {
    if !sends {
        return std::borrow::Cow::Borrowed(known);
    }
    let mut with_seq = known.clone();
    with_seq.insert(SEQ.to_owned());
    std::borrow::Cow::Owned(with_seq)
}

impl Ctx<'_> {
    pub(super) fn step(
        &self,
        st: &StepFile,
        env: &StepEnv<'_>,
        templates: &mut Templates,
        group: usize,
        first_check: usize,
    ) -> Result<Step, Error> {
        let method = self.step_method(st)?;
        let call = self.step_grpc(st, env.schemas)?;
        let mut stream = match &call {
            GrpcCall::Method(m) => self.step_stream(st, Some(m))?,
            _ => self.step_stream(st, None)?,
        };
        let path = match &call {
            GrpcCall::Method(m) => Text::Static(m.path().to_owned()),
            GrpcCall::Later(path) => Text::Static(path.clone()),
            GrpcCall::No => self.step_path(st, env, templates)?,
        };
        let is_grpc = !matches!(call, GrpcCall::No);
        let mut headers = self.step_headers(st, env, templates)?;
        let sends = match &stream {
            Some(s) => s.spec.streams_request(),
            None => st.grpc_stream.is_some() && is_grpc,
        };
        let known = body_variables(env.known, sends);
        let mut body = self.step_body(st, is_grpc, &mut headers, &known, templates)?;
        self.stream_request(st, &mut stream, &mut headers, &mut body, env.target)?;
        let grpc = match call {
            GrpcCall::Method(m) => Some(m),
            _ => None,
        };
        let request = DynamicRequest {
            method: if is_grpc { "POST".into() } else { method },
            path,
            headers,
            body,
        };
        let think = self.think(st)?;
        let extract = self.extracts(st)?;
        let mut checks = self.checks(st)?;
        let expected = &self.options.expect_status;
        if !is_grpc
            && !expected.is_empty()
            && !checks.iter().any(|c| matches!(c, Check::StatusIn(_)))
        {
            // `--expect-status`: for every HTTP step that does not say for itself.
            checks.insert(0, Check::StatusIn(expected.clone()));
        }
        let group_by = self.step_group_by(st, env.target)?;
        let reads_body = group_by
            .iter()
            .any(|&i| env.target.group_by[i].selector.reads_body());
        let capture = !extract.is_empty()
            || reads_body
            || checks
                .iter()
                .any(|c| !matches!(c, Check::StatusIn(_) | Check::LatencyUnder(_)));
        let dynamic = request.path.is_template()
            || request.headers.iter().any(|(_, v)| v.is_template())
            || match &request.body {
                Body::Empty | Body::Bytes(_) => false,
                Body::Text(t) | Body::Json(t) => t.is_template(),
            };
        // A gRPC step waiting for its schema is only validated (see `Schemas::Later`).
        let request = if dynamic || (is_grpc && grpc.is_none()) {
            StepRequest::Dynamic(request)
        } else {
            let r = self.static_request(st, env.target, grpc.as_deref(), &request, capture)?;
            StepRequest::Static(Box::new(r))
        };
        let expected_status = checks
            .iter()
            .find_map(|c| match c {
                Check::StatusIn(codes) => Some(codes.clone()),
                _ => None,
            })
            .unwrap_or_default();
        Ok(Step {
            name: st.name.get_ref().clone(),
            cookies: self.cookie_url(&request, env, is_grpc),
            request,
            grpc,
            think,
            extract,
            checks,
            capture,
            expected_status,
            group: Some(group),
            first_check,
            group_by,
            stream,
        })
    }

    /// The URL a step's requests match cookies against, when its scenario has a jar, it is an
    /// HTTP step and it sends no `Cookie` header of its own (which then wins over the jar).
    fn cookie_url(
        &self,
        request: &StepRequest,
        env: &StepEnv<'_>,
        grpc: bool,
    ) -> Option<CookieUrl> {
        if !env.jar.is_on() || grpc {
            return None;
        }
        let base = &env.target.base_url;
        match request {
            StepRequest::Static(s) => {
                let own = s
                    .request
                    .headers
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case("cookie"));
                (!own).then(|| CookieUrl::fixed(base, &s.request.path_and_query))?
            }
            StepRequest::Dynamic(d) => {
                let own = d
                    .headers
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case("cookie"));
                (!own).then(|| CookieUrl::origin(base))?
            }
        }
    }

    /// The group tables of the target this step's responses go to: the target's, then its own.
    fn step_group_by(&self, st: &StepFile, target: &Target) -> Result<Vec<usize>, Error> {
        let mut tables: Vec<usize> = (0..target.group_by.len())
            .filter(|&i| target.group_by[i].every_step)
            .collect();
        for text in &st.group_by {
            let selector = GroupSelector::parse(text.get_ref())
                .map_err(|why| self.at_key(text, "group_by", why, None))?;
            // The target's tables were made from every step's selectors.
            if let Some(i) = target.group_by.iter().position(|t| t.selector == selector)
                && !tables.contains(&i)
            {
                tables.push(i);
            }
        }
        Ok(tables)
    }

    /// The step's operation label when it differs from its name (`None`: the name is the label).
    pub(super) fn operation(&self, st: &StepFile) -> Result<Option<String>, Error> {
        let Some(op) = &st.operation else {
            return Ok(None);
        };
        let label = op.get_ref();
        if label.trim().is_empty() || label.trim() != label {
            return Err(self.at(
                op,
                format!("operation `{label}` is empty or starts or ends with spaces"),
                Some("write a label like create_event; steps of different plans with the same label are compared in one row"),
            ));
        }
        Ok((label != st.name.get_ref()).then(|| label.clone()))
    }

    /// The HTTP method, upper case (GET when absent).
    fn step_method(&self, st: &StepFile) -> Result<String, Error> {
        let method = st
            .method
            .as_ref()
            .map_or_else(|| "GET".to_string(), |m| m.get_ref().to_ascii_uppercase());
        if method.is_empty() || !method.bytes().all(is_token_byte) {
            let span = st.method.as_ref().map(|m| m.span());
            return Err(self.err(span, format!("`{method}` is not a valid HTTP method"), None));
        }
        Ok(method)
    }

    /// The gRPC method a step calls, when it is a gRPC call.
    fn step_grpc(&self, st: &StepFile, schemas: &Schemas) -> Result<GrpcCall, Error> {
        let Some(call) = &st.grpc else {
            return Ok(GrpcCall::No);
        };
        if st.path.is_some() || st.method.is_some() {
            return Err(self.at(
                call,
                "a gRPC step has no `path` or `method`: its message is `json` (or `body`, JSON text)",
                Some("grpc = \"pkg.Service/Method\"\njson = { field = \"value\" }"),
            ));
        }
        match schemas {
            Schemas::Known(schema) => {
                let method = schema
                    .method(call.get_ref())
                    .map_err(|e| self.at(call, e.to_string(), None))?;
                Ok(GrpcCall::Method(Arc::new(method)))
            }
            _ => {
                let (service, method) =
                    split_call(call.get_ref()).map_err(|e| self.at(call, e.to_string(), None))?;
                Ok(GrpcCall::Later(format!("/{service}/{method}")))
            }
        }
    }

    /// An HTTP step's path after the target's base path, compiled.
    fn step_path(
        &self,
        st: &StepFile,
        env: &StepEnv<'_>,
        templates: &mut Templates,
    ) -> Result<Text, Error> {
        let path = st.path.as_ref().ok_or_else(|| {
            self.at(
                &st.name,
                format!("step `{}` has no `path`", st.name.get_ref()),
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
        let full_path = format!("{}{}", env.target.base_path, path.get_ref());
        self.text(templates, &full_path, env.known)
            .map_err(|e| self.at(path, e.0, None))
    }

    /// The target's headers, then the step's own (which replace those of the same name).
    fn step_headers(
        &self,
        st: &StepFile,
        env: &StepEnv<'_>,
        templates: &mut Templates,
    ) -> Result<Vec<(String, Text)>, Error> {
        let mut headers: Vec<(String, Text)> = env
            .target
            .headers
            .iter()
            .map(|(n, v)| (n.clone(), Text::Static(v.clone())))
            .collect();
        headers.retain(|(existing, _)| {
            !st.headers
                .into_iter()
                .any(|(n, _)| existing.eq_ignore_ascii_case(n))
        });
        for (n, v) in &st.headers {
            parse_header(&format!("{n}: x"), &Default::default())
                .map_err(|e| self.at(v, e.to_string(), None))?;
            let t = self
                .text(templates, v.get_ref(), env.known)
                .map_err(|e| self.at(v, e.0, None))?;
            headers.push((n.clone(), t));
        }
        Ok(headers)
    }

    /// The body: `body`, `body_file` or `json` (at most one); `json` adds a JSON content type to
    /// an HTTP request that has none.
    fn step_body(
        &self,
        st: &StepFile,
        grpc: bool,
        headers: &mut Vec<(String, Text)>,
        known: &BTreeSet<String>,
        templates: &mut Templates,
    ) -> Result<Body, Error> {
        let bodies = [st.body.is_some(), st.body_file.is_some(), st.json.is_some()];
        if bodies.iter().filter(|b| **b).count() > 1 {
            return Err(self.at(&st.name, "give one of `body`, `body_file` and `json`", None));
        }
        if let Some(b) = &st.body {
            let text = self
                .text(templates, b.get_ref(), known)
                .map_err(|e| self.at(b, e.0, None))?;
            return Ok(Body::Text(text));
        }
        if let Some(f) = &st.body_file {
            let content = std::fs::read(self.relative(f.get_ref())).map_err(|e| {
                self.at(
                    f,
                    format!("cannot read {}: {e}", f.get_ref()),
                    Some("the path is relative to the plan file"),
                )
            })?;
            // A file that is not UTF-8 text, or any file given by a flag, is sent as it is.
            return match String::from_utf8(content) {
                Ok(text) if self.flags.is_none() => templates
                    .text(&text, known)
                    .map(Body::Text)
                    .map_err(|e| self.at(f, e.0, None)),
                Ok(text) => Ok(Body::Bytes(text.into_bytes().into())),
                Err(e) => Ok(Body::Bytes(e.into_bytes().into())),
            };
        }
        let Some(j) = &st.json else {
            return Ok(Body::Empty);
        };
        let value =
            serde_json::to_value(j.get_ref()).map_err(|e| self.at(j, e.to_string(), None))?;
        if !grpc
            && !headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        {
            headers.push((
                "Content-Type".into(),
                Text::Static("application/json".into()),
            ));
        }
        let json = templates
            .json(&value, known)
            .map_err(|e| self.at(j, e.0, None))?;
        Ok(Body::Json(json))
    }

    /// Values taken from responses into variables.
    fn extracts(&self, st: &StepFile) -> Result<Vec<Extract>, Error> {
        let mut extract = Vec::new();
        for (var, e) in &st.extract {
            let ef = e.get_ref();
            let source = match (&ef.json, &ef.header, &ef.regex) {
                (Some(path), None, None) => ValueSource::Json(
                    check::json_pointer(path).map_err(|why| self.at(e, why, None))?,
                ),
                (None, Some(h), None) => ValueSource::Header(h.clone()),
                (None, None, Some(re)) => ValueSource::Regex(
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
        Ok(extract)
    }

    /// A request without templates, rendered once and prepared in the wire form of its client.
    fn static_request(
        &self,
        st: &StepFile,
        target: &Target,
        grpc: Option<&GrpcMethod>,
        request: &DynamicRequest,
        capture: bool,
    ) -> Result<StaticRequest, Error> {
        // No templates: nothing of the (empty) template set or the context is read.
        let empty = Templates::new(Default::default(), Default::default());
        let rendered = render_owned(&empty, request, &minijinja::Value::UNDEFINED)
            .map_err(|e| self.at(&st.name, e.to_string(), None))?;
        let body = match (grpc, &request.body) {
            (None, Body::Bytes(bytes)) => bytes.clone(),
            // The message is checked against its type now, not at every request.
            (Some(m), _) => m.encode_body(&rendered.body).map_err(|e| match &st.json {
                Some(j) => self.at(j, e.to_string(), None),
                None => self.at(&st.name, e.to_string(), None),
            })?,
            (None, _) => rendered.body.into_bytes().into(),
        };
        let method = &request.method;
        let request = Request {
            method: http::Method::from_bytes(method.as_bytes()).map_err(|_| {
                self.at(
                    &st.name,
                    format!("`{method}` is not a valid HTTP method"),
                    None,
                )
            })?,
            authority: target.host_header.clone(),
            path_and_query: rendered.path,
            headers: rendered.headers,
            body,
            kind: if grpc.is_some() {
                RequestKind::Grpc
            } else {
                RequestKind::Http
            },
            capture: super::step_capture(capture),
        };
        let prepared = target
            .connect
            .client_for(grpc.is_some())
            .prepare(&request)
            .map_err(|e| self.at(&st.name, e.to_string(), None))?;
        Ok(StaticRequest { request, prepared })
    }

    pub(super) fn checks(&self, st: &StepFile) -> Result<Vec<Check>, Error> {
        let Some(c) = &st.checks else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        if let Some(spanned) = &c.status {
            let texts: Vec<String> = spanned.get_ref().iter().map(|e| e.to_string()).collect();
            let Some(codes) = crate::plan::flags::expand_statuses(texts.iter().map(String::as_str))
            else {
                return Err(self.at(
                    spanned,
                    "checks.status lists HTTP status codes (100–599) and classes (\"2xx\")",
                    None,
                ));
            };
            out.push(Check::StatusIn(codes));
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
}
