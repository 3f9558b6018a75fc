//! What volley says about a plan before it runs it: the one-line banner of a run, and `volley
//! check`'s listing (the target, each scenario's load, each step's request as it is sent, with
//! secret values redacted, its checks and extractions, the thresholds, the precision goals).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::error::Error;
use crate::plan::render::{RenderError, RenderedRequest, render_owned};
use crate::plan::segment::PlanShare;
use crate::plan::{DynamicRequest, Plan, Scenario, StaticRequest, Step, StepRequest};
use crate::redact::redact_url_userinfo;

/// `volley check`'s listing of `plan`, read from `path`; an error when a step's request does not
/// render (a mistake in the plan). Writing to a `String` cannot fail: those results are ignored.
pub fn check_text(plan: &Plan, path: &Path) -> Result<String, Error> {
    let mut out = String::new();
    let _ = writeln!(out, "{}: valid", path.display());
    if let Some(s) = &plan.share {
        let _ = writeln!(out, "{}", share_line(s));
    }
    let _ = writeln!(out, "target: {}", target_line(plan));
    if !plan.watch.is_empty() {
        let all: Vec<String> = plan.watch.iter().map(|w| w.describe()).collect();
        let _ = writeln!(out, "watch: {}", all.join(", "));
    }
    for sc in &plan.scenarios {
        scenario(&mut out, plan, sc, path)?;
    }
    if !plan.thresholds.is_empty() {
        let _ = writeln!(out, "\nthresholds:");
        for t in &plan.thresholds {
            let _ = writeln!(
                out,
                "  {}: {}{}",
                t.metric_text,
                t.condition_text,
                if t.abort_on_fail {
                    " (abort on fail)"
                } else {
                    ""
                }
            );
        }
    }
    precision(&mut out, plan);
    Ok(out)
}

/// The plan's precision goals, each with the part of the plan whose interval it reads.
fn precision(out: &mut String, plan: &Plan) {
    if plan.precision.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nprecision (runs until every 95 % interval is this narrow, the plan's length at most):"
    );
    for goal in &plan.precision {
        let of = match &goal.part {
            None => "the run".to_string(),
            Some(part) => plan.group_of(part).map_or_else(
                || part.to_string(),
                |i| format!("`{}`", plan.groups[i].path()),
            ),
        };
        let asked = crate::report::uncertainty::asked(goal);
        let _ = writeln!(out, "  {}: {asked} of {of}", goal.label());
    }
}

/// One line that says what is about to happen.
pub fn banner(plan: &Plan) -> String {
    let what = match &plan.quick {
        Some(q) => format!("{} {}", q.method, redact_url_userinfo(&q.url)),
        None => format!(
            "plan {} against {}",
            plan.source
                .as_ref()
                .map_or_else(|| plan.name.clone(), |p| p.display().to_string()),
            redact_url_userinfo(&plan.target.base_url)
        ),
    };
    let scenarios: Vec<String> = plan
        .scenarios
        .iter()
        .map(|sc| {
            let load = crate::run::scenario_load(plan, sc);
            if plan.quick.is_none() {
                return crate::report::load::scenario_line(
                    &sc.name,
                    &crate::report::load::describe_load(&load),
                    sc.start_after.as_secs_f64(),
                );
            }
            // Quick mode says it as its reports do: "closed model, 4 connections × 16 streams (64
            // in flight), 10.0s", "open model, 1,000.0 req/s, at most 200 in flight, 10.0s".
            let shape = crate::report::load::quick_shape(
                load.model,
                load.connections.unwrap_or(0),
                plan.target.connect.streams,
                load.peak_rate_per_sec.unwrap_or(0.0),
                load.max_vus.unwrap_or(0),
            );
            // The profile's timeline starts with the warm-up: say what is measured after it.
            let length = match (load.duration_s, load.iterations) {
                (Some(d), _) => crate::units::seconds(d - plan.warmup.as_secs_f64()),
                (None, n) => format!("{} requests", crate::units::thousands(n.unwrap_or(0))),
            };
            format!("{shape}, {length}")
        })
        .collect();
    let warmup = if plan.warmup.is_zero() {
        String::new()
    } else {
        format!(
            ", after {} warm-up",
            humantime::format_duration(plan.warmup)
        )
    };
    let share = plan
        .share
        .as_ref()
        .map_or_else(String::new, |s| format!("\n{}", share_line(s)));
    let watch = if plan.watch.is_empty() {
        String::new()
    } else {
        let all: Vec<String> = plan.watch.iter().map(|w| w.describe()).collect();
        format!("\nwatching {}", all.join(", "))
    };
    format!(
        "volley: {what} — {}{warmup}, {} thread(s){share}{watch}",
        scenarios.join("; "),
        plan.threads
    )
}

/// The line that says a run is one share of a distributed test.
pub fn share_line(s: &PlanShare) -> String {
    format!(
        "share {} of {} shares (--segment {}; the load shown is this share's), test {}",
        s.segment.index(),
        s.segment.count(),
        s.segment,
        s.plan_hash
    )
}

/// The target: its URL (password redacted), address, protocol and streams.
fn target_line(plan: &Plan) -> String {
    let connect = &plan.target.connect;
    format!(
        "{} ({}), {}{}{}",
        redact_url_userinfo(&plan.target.base_url),
        plan.target.addr,
        connect.protocol_name(),
        if connect.streams > 1 {
            format!(", {} streams per connection", connect.streams)
        } else {
            String::new()
        },
        match &connect.grpc_client {
            Some(grpc) => format!(
                "; gRPC steps over {}",
                grpc.protocol().wire_name(connect.tls.is_some())
            ),
            None => String::new(),
        }
    )
}

/// A scenario: its load, phases, and each step's rendered request, checks and extraction.
fn scenario(out: &mut String, plan: &Plan, sc: &Scenario, path: &Path) -> Result<(), Error> {
    let _ = writeln!(
        out,
        "\nscenario {}: {}{}",
        sc.name,
        crate::run::describe_scenario(plan, sc),
        if sc.start_after.is_zero() {
            String::new()
        } else {
            format!(
                ", starting after {}",
                humantime::format_duration(sc.start_after)
            )
        }
    );
    for p in &sc.phases {
        let _ = writeln!(
            out,
            "  {} from {:.1}s to {:.1}s",
            p.name,
            p.start.as_secs_f64(),
            p.end.as_secs_f64()
        );
    }
    // Extracted variables are shown as placeholders: nothing is sent.
    let mut extracted = BTreeMap::new();
    for st in &sc.steps {
        for e in &st.extract {
            extracted.insert(
                e.var.clone(),
                minijinja::Value::from(format!("<{}>", e.var)),
            );
        }
    }
    let ctx = plan.templates.context(0, 0, &sc.name, &extracted);
    for st in &sc.steps {
        let _ = writeln!(out, "\n  step {}:", st.name);
        let placeholders: Vec<&str> = extracted.keys().map(String::as_str).collect();
        let failed = |why: String| crate::Error::Plan {
            at: path.display().to_string(),
            why: format!("step `{}` of scenario `{}`: {why}", st.name, sc.name),
            hint: (!placeholders.is_empty())
                .then(|| "extracted variables render as placeholders like <name> here".into()),
        };
        let rendered = match &st.request {
            StepRequest::Static(s) => show_static(plan, st, s),
            // A template that cannot render (too long a loop, a failing filter), or renders
            // what a run could not send, is a mistake in the plan: exit 2.
            StepRequest::Dynamic(d) => render_owned(&plan.templates, d, &ctx)
                .map_err(|e| why(&e))
                .and_then(|r| show_dynamic(plan, st, d, &r, &placeholders))
                .map_err(failed)?,
        };
        // Header lines (after the request line, up to the blank line) with secret values
        // redacted; the request sent carries them.
        let mut in_head = true;
        for (i, line) in rendered.split("\r\n").enumerate() {
            if line.is_empty() {
                in_head = false;
            }
            if i > 0 && in_head {
                let _ = writeln!(out, "    {}", plan.secrets.header_line(line));
            } else {
                let _ = writeln!(out, "    {line}");
            }
        }
        if let Some(message) = stream_message(plan, st, &ctx, &placeholders) {
            let message = message.map_err(|why| failed(format!("its stream's message: {why}")))?;
            let _ = writeln!(out, "    {message}");
        }
        for c in &st.checks {
            let _ = writeln!(out, "    check: {}", c.describe());
        }
        for e in &st.extract {
            let _ = writeln!(out, "    extract: {}", e.var);
        }
    }
    Ok(())
}

/// Why a step's request does not render, as `volley check` says it.
fn why(e: &RenderError) -> String {
    match e {
        RenderError::Template(why) => why.clone(),
        other => format!("{other} (a run counts it as template_error)"),
    }
}

/// A request without templates: its HTTP/1.1 bytes, or its HTTP/2 head and body.
fn show_static(plan: &Plan, st: &Step, s: &StaticRequest) -> String {
    if let Some(bytes) = s.prepared.http1_bytes() {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let r = &s.request;
    let grpc = st.grpc.as_deref();
    let body = match grpc {
        Some(_) if messages_below(st) => String::new(),
        Some(method) => match method.decode_request_json(&r.body) {
            Ok(json) => format!("{json} ({} bytes of protobuf)", r.body.len()),
            Err(_) => format!("({} bytes of protobuf)", r.body.len()),
        },
        None => String::from_utf8_lossy(&r.body).into_owned(),
    };
    describe_h2(
        &[r.method.as_str(), &r.path_and_query, &r.authority],
        version(plan, grpc.is_some()),
        &r.headers,
        grpc.is_some(),
        &body,
    )
}

/// A streaming step's message as `volley check` shows it: its first (`seq` 0) rendered from
/// its template, as JSON for gRPC (see [`encoded`]), as text for a WebSocket; a WebSocket's
/// every message when it is written out. `None` for other steps (a gRPC request written out is
/// the request shown above).
fn stream_message(
    plan: &Plan,
    st: &Step,
    ctx: &minijinja::Value,
    placeholders: &[&str],
) -> Option<Result<String, String>> {
    let stream = st.stream.as_ref()?;
    let Some(template) = &stream.message else {
        return stream.spec.written_message().map(|(message, binary)| {
            Ok(match binary {
                true => format!("each message: ({} bytes, binary)", message.len()),
                false => format!("each message: {}", String::from_utf8_lossy(message)),
            })
        });
    };
    let seq = BTreeMap::from([(crate::plan::stream::SEQ, 0)]);
    let ctx = minijinja::value::merge_maps([minijinja::Value::from(seq), ctx.clone()]);
    let rendered = plan
        .templates
        .render(template, &ctx)
        .map_err(|e| e.to_string());
    Some(rendered.and_then(|text| match st.grpc.as_deref() {
        Some(method) => {
            encoded(method, &text, placeholders).map(|m| format!("message (seq 0): {m}"))
        }
        None => Ok(format!("message (seq 0): {text}")),
    }))
}

/// The HTTP version a step's requests go out in, as a request line writes it.
fn version(plan: &Plan, grpc: bool) -> &'static str {
    plan.target
        .connect
        .client_for(grpc)
        .protocol()
        .version_name()
}

/// A templated request, rendered: as HTTP/1.1 bytes, or its HTTP/2 head and body (a gRPC
/// message encoded, see [`encoded`]; `placeholders`: the names of the variables the scenario
/// extracts, which render as stand-ins here).
fn show_dynamic(
    plan: &Plan,
    st: &Step,
    d: &DynamicRequest,
    r: &RenderedRequest,
    placeholders: &[&str],
) -> Result<String, String> {
    let connect = &plan.target.connect;
    let grpc = st.grpc.as_deref();
    let body = match grpc {
        Some(_) if messages_below(st) => String::new(),
        Some(method) => encoded(method, &r.body, placeholders)?,
        None => r.body.clone(),
    };
    if grpc.is_some() || !connect.client_for(false).protocol().sends_http1_bytes() {
        return Ok(describe_h2(
            &[&d.method, &r.path, &plan.target.host_header],
            version(plan, grpc.is_some()),
            &r.headers,
            grpc.is_some(),
            &body,
        ));
    }
    let mut bytes = Vec::new();
    crate::proto::http1::write_request(
        &mut bytes,
        &d.method,
        &plan.target.host_header,
        r.path.as_bytes(),
        r.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())),
        body.as_bytes(),
        connect.keepalive,
    );
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A gRPC message's JSON with its size encoded, as `volley check` shows it; why it does not
/// fit the message type (as a run would find), unless it holds one of the `placeholders`
/// (extracted variables' stand-ins, `<name>`, escaped in JSON strings): then that is said, not
/// refused.
fn encoded(
    method: &crate::proto::grpc::GrpcMethod,
    json: &str,
    placeholders: &[&str],
) -> Result<String, String> {
    let holds = |name: &&str| {
        json.contains(&format!("<{name}>")) || json.contains(&format!("\\u003c{name}\\u003e"))
    };
    let shown = if json.is_empty() { "{}" } else { json };
    match method.encode_body(json) {
        Ok(bytes) => Ok(format!("{shown} ({} bytes of protobuf)", bytes.len())),
        Err(e) if placeholders.iter().any(holds) => {
            Ok(format!("{json} (not encoded here, for a placeholder: {e})"))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Whether a step's messages come from its stream's template (shown below its request), so
/// that its request carries none of them.
fn messages_below(st: &Step) -> bool {
    st.stream.as_ref().is_some_and(|s| s.message.is_some())
}

/// An HTTP/2 (or HTTP/3) request or gRPC call, for display: its head (`[method, path,
/// authority]` in `version`), then the body (a gRPC message as its JSON, or its size once
/// encoded).
fn describe_h2(
    [method, path, authority]: &[&str; 3],
    version: &str,
    headers: &[(String, String)],
    grpc: bool,
    body: &str,
) -> String {
    let mut out = if grpc {
        format!("gRPC {path} ({version})")
    } else {
        format!("{method} {path} {version}")
    };
    out.push_str(&format!("\r\n:authority: {authority}"));
    for (n, v) in headers {
        out.push_str(&format!("\r\n{n}: {v}"));
    }
    if !body.is_empty() {
        out.push_str("\r\n\r\n");
        out.push_str(body);
    }
    out
}

/// Raises the open-file limit to its hard limit ([`super::raise_open_files`]); when it is still
/// below the connections `plan` may open (one per VU, at most; a few more for the process
/// itself), the warning that says so.
pub fn open_files_warning(plan: &Plan) -> Option<String> {
    let limit = super::raise_open_files()?;
    let wanted: u64 = plan.scenarios.iter().map(|s| u64::from(s.max_vus())).sum();
    (limit < wanted + 64).then(|| {
        format!(
            "the open-file limit is {limit}, below the {wanted} connections this test may open: \
             those over it fail as too_many_open_files (a limit of this machine, not the \
             target's); raise it with `ulimit -n` (its hard limit too, as root)"
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::plan::read::{ReadOptions, read_str};

    #[test]
    fn check_names_the_part_each_precision_goal_reads() {
        let text = "[target]\nbase_url = \"http://127.0.0.1:9\"\n\
                    [precision]\np50 = \"2%\"\n\"p99{step=a}\" = \"5%\"\n\
                    [[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"constant-vus\"\n\
                    vus = 4\nduration = \"8s\"\n[[scenario.step]]\nname = \"a\"\npath = \"/\"\n\
                    [[scenario.step]]\nname = \"b\"\npath = \"/b\"\n";
        let path = std::path::Path::new("t.toml");
        let plan = read_str(text, path, &ReadOptions::default())
            .and_then(|d| d.prepare())
            .unwrap();
        let out = super::check_text(&plan, path).unwrap();
        assert!(out.contains("\n  p50: ±2 % of the run\n"), "{out}");
        assert!(out.contains("\n  p99{step=a}: ±5 % of `s / a`\n"), "{out}");
    }
}
