//! `volley run PLAN` and `volley check PLAN`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use volley::plan::read::{ReadOptions, read_file};
use volley::plan::render::{RenderError, RenderedRequest, render_owned};
use volley::plan::{DynamicRequest, Plan, Scenario, StaticRequest, Step, StepRequest};

use super::args::{CheckArgs, RunArgs};

/// Runs a plan; returns the exit code.
pub fn run(a: RunArgs, argv: &volley::redact::Argv) -> anyhow::Result<u8> {
    if a.join.join.is_some() {
        return join(a, argv);
    }
    let export = a.export.options();
    let watch = a.watch.specs()?;
    let mut plan = read_file(
        &a.plan,
        &ReadOptions {
            sets: a.sets,
            time_scale: a.time_scale,
            threads: a.threads,
            secret_headers: a.secret_headers,
            segment: a.segment,
            max_data_bytes: max_data(a.max_data_size),
            ..Default::default()
        },
    )?
    // Run preparation: the one place the target may be contacted before the run (gRPC
    // schemas by server reflection).
    .prepare()?;
    plan.watch.extend(watch);
    if !a.quiet {
        eprintln!("{}", super::runs::banner(&plan));
    }
    let outputs = volley::run::Outputs {
        json: a.json,
        out: a.out,
    };
    let flags = super::runs::RunFlags {
        repeat: a.repeat,
        shown: super::runs::Shown::from_flags(a.quiet, a.no_tui),
        export: &export,
        tuning: a.tuning,
    };
    super::runs::run(&plan, argv, &outputs, flags)
}

/// The data-file limit `--max-data-size` sets (the default without it).
fn max_data(flag: Option<u64>) -> u64 {
    flag.unwrap_or(volley::plan::data::DEFAULT_MAX_DATA_BYTES)
}

/// Runs a plan as one generator of a distributed test (`--join`).
fn join(a: RunArgs, argv: &volley::redact::Argv) -> anyhow::Result<u8> {
    if a.repeat > 1 {
        anyhow::bail!(volley::Error::Invalid {
            what: "--repeat".into(),
            why: "a generator of a distributed test (--join) runs once".into(),
        });
    }
    super::coordinate::refuse_export_with_join(&a.export.options())?;
    let watch = a.watch.specs()?;
    let load = |segment| -> anyhow::Result<Plan> {
        let options = ReadOptions {
            sets: a.sets.clone(),
            time_scale: a.time_scale,
            threads: a.threads,
            secret_headers: a.secret_headers.clone(),
            segment: Some(segment),
            max_data_bytes: max_data(a.max_data_size),
            ..Default::default()
        };
        let mut plan = read_file(&a.plan, &options)?.prepare()?;
        plan.watch.extend(watch.iter().cloned());
        Ok(plan)
    };
    let outputs = volley::run::Outputs {
        json: a.json.clone(),
        out: a.out.clone(),
    };
    super::coordinate::join(&a.join, a.segment, load, &outputs, argv, a.quiet)
}

/// Validates a plan and prints one rendered request per step.
pub fn check(a: CheckArgs) -> anyhow::Result<u8> {
    let plan = read_file(
        &a.plan,
        &ReadOptions {
            sets: a.sets,
            time_scale: a.time_scale,
            threads: None,
            secret_headers: a.secret_headers,
            segment: a.segment,
            max_data_bytes: max_data(a.max_data_size),
            ..Default::default()
        },
    )?
    // Every step's request is shown, so gRPC schemas the plan takes from the target are
    // fetched as a run would.
    .prepare()?;
    // Printed only once every step has rendered: a plan that fails says so, and only that.
    let mut out = String::new();
    writeln!(out, "{}: valid", a.plan.display())?;
    if let Some(s) = &plan.share {
        writeln!(out, "{}", super::quick::share_line(s))?;
    }
    writeln!(out, "target: {}", target_line(&plan))?;
    if !plan.watch.is_empty() {
        let all: Vec<String> = plan.watch.iter().map(|w| w.describe()).collect();
        writeln!(out, "watch: {}", all.join(", "))?;
    }
    for sc in &plan.scenarios {
        scenario(&mut out, &plan, sc, &a.plan)?;
    }
    if !plan.thresholds.is_empty() {
        writeln!(out, "\nthresholds:")?;
        for t in &plan.thresholds {
            writeln!(
                out,
                "  {}: {}{}",
                t.metric_text,
                t.condition_text,
                if t.abort_on_fail {
                    " (abort on fail)"
                } else {
                    ""
                }
            )?;
        }
    }
    print!("{out}");
    Ok(super::EXIT_OK)
}

/// The target: its URL (password redacted), address, protocol and streams.
fn target_line(plan: &Plan) -> String {
    let connect = &plan.target.connect;
    format!(
        "{} ({}), {}{}{}",
        volley::redact::redact_url_userinfo(&plan.target.base_url),
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
fn scenario(out: &mut String, plan: &Plan, sc: &Scenario, path: &Path) -> anyhow::Result<()> {
    writeln!(
        out,
        "\nscenario {}: {}{}",
        sc.name,
        volley::run::describe_scenario(plan, sc),
        if sc.start_after.is_zero() {
            String::new()
        } else {
            format!(
                ", starting after {}",
                humantime::format_duration(sc.start_after)
            )
        }
    )?;
    for p in &sc.phases {
        writeln!(
            out,
            "  {} from {:.1}s to {:.1}s",
            p.name,
            p.start.as_secs_f64(),
            p.end.as_secs_f64()
        )?;
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
        writeln!(out, "\n  step {}:", st.name)?;
        let rendered = match &st.request {
            StepRequest::Static(s) => show_static(st, s),
            StepRequest::Dynamic(d) => {
                // A template that cannot render (too long a loop, a failing filter), or
                // renders what a run could not send, is a mistake in the plan: exit 2.
                render_owned(&plan.templates, d, &ctx)
                    .map(|r| show_dynamic(plan, st, d, &r))
                    .map_err(|e| volley::Error::Plan {
                        at: path.display().to_string(),
                        why: format!("step `{}` of scenario `{}`: {}", st.name, sc.name, why(&e)),
                        hint: (!extracted.is_empty()).then(|| {
                            "extracted variables render as placeholders like <name> here".into()
                        }),
                    })?
            }
        };
        // Header lines (after the request line, up to the blank line) with secret values
        // redacted; the request sent carries them.
        let mut in_head = true;
        for (i, line) in rendered.split("\r\n").enumerate() {
            if line.is_empty() {
                in_head = false;
            }
            if i > 0 && in_head {
                writeln!(out, "    {}", plan.secrets.header_line(line))?;
            } else {
                writeln!(out, "    {line}")?;
            }
        }
        for c in &st.checks {
            writeln!(out, "    check: {}", c.describe())?;
        }
        for e in &st.extract {
            writeln!(out, "    extract: {}", e.var)?;
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
fn show_static(st: &Step, s: &StaticRequest) -> String {
    if let Some(bytes) = s.prepared.http1_bytes() {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let r = &s.request;
    let grpc = st.grpc.is_some();
    let body = if grpc {
        format!("({} bytes of protobuf)", r.body.len())
    } else {
        String::from_utf8_lossy(&r.body).into_owned()
    };
    describe_h2(
        r.method.as_str(),
        &r.path_and_query,
        &r.authority,
        &r.headers,
        grpc,
        &body,
    )
}

/// A templated request, rendered: as HTTP/1.1 bytes, or its HTTP/2 head and body.
fn show_dynamic(plan: &Plan, st: &Step, d: &DynamicRequest, r: &RenderedRequest) -> String {
    let connect = &plan.target.connect;
    if st.grpc.is_some() || !connect.client_for(false).protocol().sends_http1_bytes() {
        return describe_h2(
            &d.method,
            &r.path,
            &plan.target.host_header,
            &r.headers,
            st.grpc.is_some(),
            &r.body,
        );
    }
    let mut bytes = Vec::new();
    volley::proto::http1::write_request(
        &mut bytes,
        &d.method,
        &plan.target.host_header,
        r.path.as_bytes(),
        r.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())),
        r.body.as_bytes(),
        connect.keepalive,
    );
    String::from_utf8_lossy(&bytes).into_owned()
}

/// An HTTP/2 request or gRPC call, for display: its head, then the body (a gRPC message as its
/// JSON, or its size once encoded).
fn describe_h2(
    method: &str,
    path: &str,
    authority: &str,
    headers: &[(String, String)],
    grpc: bool,
    body: &str,
) -> String {
    let mut out = if grpc {
        format!("gRPC {path} (HTTP/2)")
    } else {
        format!("{method} {path} HTTP/2")
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
