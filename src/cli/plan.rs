//! `volley run PLAN` and `volley check PLAN`.

use std::collections::BTreeMap;

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
    Ok(super::run_exit_code(&record))
}

/// Validates a plan and prints one rendered request per step.
pub fn check(a: CheckArgs) -> anyhow::Result<u8> {
    let plan = load(
        &a.plan,
        &LoadOptions {
            sets: a.sets,
            time_scale: a.time_scale,
            threads: None,
        },
    )?;
    println!("{}: valid", a.plan.display());
    let connect = &plan.target.connect;
    println!(
        "target: {} ({}), {}{}{}",
        plan.target.base_url,
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
                volley::plan::connect::protocol_name(
                    volley::proto::client::Protocol::Http2,
                    connect.tls.is_some()
                )
            ),
            None => String::new(),
        }
    );
    for sc in &plan.scenarios {
        println!(
            "\nscenario {}: {}{}",
            sc.name,
            volley::analysis::describe_profile(&sc.profile),
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
            println!(
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
            println!("\n  step {}:", st.name);
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
                    let render = |t: &Text| {
                        plan.templates
                            .render(t, &ctx)
                            .map_err(|e| anyhow::anyhow!("step `{}`: {e}", st.name))
                    };
                    let mut headers = Vec::new();
                    for (n, v) in &d.headers {
                        headers.push((n.clone(), render(v)?));
                    }
                    let body = match &d.body {
                        Body::Empty => String::new(),
                        Body::Text(t) | Body::Json(t) => render(t)?,
                    };
                    if st.grpc.is_some() || connect.client_for(false).protocol() == Protocol::Http2
                    {
                        describe_h2(
                            &d.method,
                            &render(&d.path)?,
                            &plan.target.host_header,
                            &headers,
                            st.grpc.is_some(),
                            &body,
                        )
                    } else {
                        let mut out = Vec::new();
                        volley::proto::http1::write_request(
                            &mut out,
                            &d.method,
                            &plan.target.host_header,
                            render(&d.path)?.as_bytes(),
                            headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())),
                            body.as_bytes(),
                            plan.target.connect.keepalive,
                        );
                        String::from_utf8_lossy(&out).into_owned()
                    }
                }
            };
            for line in rendered.split("\r\n") {
                println!("    {line}");
            }
            for c in &st.checks {
                println!("    check: {}", c.describe());
            }
            for e in &st.extract {
                println!("    extract: {}", e.var);
            }
        }
    }
    if !plan.thresholds.is_empty() {
        println!("\nthresholds:");
        for t in &plan.thresholds {
            println!(
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
