//! `volley run PLAN` and `volley check PLAN`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use volley::plan::load::{LoadOptions, load};
use volley::plan::{Body, StepRequest, Text};
use volley::proto::client::Protocol;

use super::args::{CheckArgs, RunArgs};

/// Runs a plan; returns the exit code.
pub fn run(a: RunArgs, argv: &[String]) -> anyhow::Result<u8> {
    let plan = load(
        &a.plan,
        &LoadOptions {
            sets: a.sets,
            time_scale: a.time_scale,
            threads: a.threads,
            secret_headers: a.secret_headers,
            segment: a.segment,
            ..Default::default()
        },
    )?;
    if !a.quiet {
        eprintln!("{}", super::quick::banner(&plan));
    }
    if a.repeat > 1 {
        return super::repeat::run(&plan, argv, &a.out, a.repeat, a.quiet);
    }
    let record = super::quick::execute(&plan, argv, !a.quiet)?;
    if !a.quiet {
        print!("{}", volley::report::text::render(&record));
    }
    // The record first: it is what every report is made from.
    if let Some(path) = a.json {
        volley::record::write_record(&path, &record)?;
    }
    let files = volley::report::write_results(&a.out, &record)?;
    if !a.quiet {
        super::print_results(&files);
    }
    Ok(super::finish_run(&record, a.quiet))
}

/// Validates a plan and prints one rendered request per step.
pub fn check(a: CheckArgs) -> anyhow::Result<u8> {
    let plan = load(
        &a.plan,
        &LoadOptions {
            sets: a.sets,
            time_scale: a.time_scale,
            threads: None,
            secret_headers: a.secret_headers,
            segment: a.segment,
            ..Default::default()
        },
    )?;
    // Printed only once every step has rendered: a plan that fails says so, and only that.
    let mut out = String::new();
    writeln!(out, "{}: valid", a.plan.display())?;
    if let Some(s) = &plan.share {
        writeln!(out, "{}", super::quick::share_line(s))?;
    }
    let connect = &plan.target.connect;
    writeln!(
        out,
        "target: {} ({}), {}{}{}",
        volley::redact::redact_url_password(&plan.target.base_url),
        plan.target.addr,
        connect.protocol_name(),
        if connect.streams > 1 {
            format!(", {} streams per connection", connect.streams)
        } else {
            String::new()
        },
        match &connect.grpc_client {
            Some(_) => format!(
                "; gRPC steps over {}",
                volley::plan::connect::protocol_name(Protocol::Http2, connect.tls.is_some())
            ),
            None => String::new(),
        }
    )?;
    for sc in &plan.scenarios {
        writeln!(
            out,
            "\nscenario {}: {}{}",
            sc.name,
            volley::analysis::describe_scenario(&plan, sc),
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
                StepRequest::Static(s) => match s.prepared.http1_bytes() {
                    Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                    None => {
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
                },
                StepRequest::Dynamic(d) => {
                    // A template that cannot render (too long a loop, a failing filter), or
                    // renders what a run could not send, is a mistake in the plan: exit 2.
                    let fail = |why: String| volley::Error::Plan {
                        at: a.plan.display().to_string(),
                        why: format!("step `{}` of scenario `{}`: {why}", st.name, sc.name),
                        hint: (!extracted.is_empty()).then(|| {
                            "extracted variables render as placeholders like <name> here".into()
                        }),
                    };
                    let render = |t: &Text| plan.templates.render(t, &ctx).map_err(|e| fail(e.0));
                    let path = render(&d.path)?;
                    if path
                        .bytes()
                        .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
                    {
                        return Err(fail(format!(
                            "the rendered path `{}` holds spaces or control characters \
                             (a run counts it as template_error)",
                            path.escape_debug()
                        ))
                        .into());
                    }
                    let mut headers = Vec::new();
                    for (n, v) in &d.headers {
                        let value = render(v)?;
                        if value.contains(['\r', '\n']) {
                            return Err(fail(format!(
                                "the rendered value of header `{n}` holds a line break \
                                 (a run counts it as template_error)"
                            ))
                            .into());
                        }
                        headers.push((n.clone(), value));
                    }
                    let body = match &d.body {
                        Body::Empty => String::new(),
                        Body::Text(t) | Body::Json(t) => render(t)?,
                    };
                    if st.grpc.is_some() || connect.client_for(false).protocol() == Protocol::Http2
                    {
                        describe_h2(
                            &d.method,
                            &path,
                            &plan.target.host_header,
                            &headers,
                            st.grpc.is_some(),
                            &body,
                        )
                    } else {
                        let mut bytes = Vec::new();
                        volley::proto::http1::write_request(
                            &mut bytes,
                            &d.method,
                            &plan.target.host_header,
                            path.as_bytes(),
                            headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())),
                            body.as_bytes(),
                            connect.keepalive,
                        );
                        String::from_utf8_lossy(&bytes).into_owned()
                    }
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
