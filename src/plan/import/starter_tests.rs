//! The starter plan: it reads with volley's own plan reader (what `volley check` runs), and the
//! request its step sends is the one asked for, byte for byte.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use crate::plan::read::{ReadOptions, read_file};
use crate::plan::{Body, Plan, StepRequest};

use super::*;

fn loopback(_: &str, port: u16) -> Result<SocketAddr, crate::plan::read::ResolveError> {
    Ok(SocketAddr::from(([127, 0, 0, 1], port)))
}

/// Writes `text` as a plan and loads it (no DNS: every host is 127.0.0.1).
fn read_text(name: &str, text: &str) -> Plan {
    let dir = std::env::temp_dir().join(format!("volley-new-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("plan.toml");
    std::fs::write(&path, text).unwrap();
    let options = ReadOptions {
        resolve: loopback,
        reflection: false,
        ..ReadOptions::default()
    };
    let plan = read_file(&path, &options)
        .and_then(|d| d.prepare())
        .unwrap_or_else(|e| panic!("{e}\n--- plan ---\n{text}"));
    let _ = std::fs::remove_dir_all(&dir);
    plan
}

/// The HTTP/1.1 request the plan's one step sends (templates rendered).
fn wire(plan: &Plan) -> String {
    let step = &plan.scenarios[0].steps[0];
    match &step.request {
        StepRequest::Static(s) => {
            String::from_utf8(s.prepared.http1_bytes().expect("HTTP/1.1").to_vec()).unwrap()
        }
        StepRequest::Dynamic(d) => {
            let ctx = plan.templates.context(0, 0, "starter", &BTreeMap::new());
            let render = |t| plan.templates.render(t, &ctx).unwrap();
            let mut head = format!("{} {} HTTP/1.1\r\n", d.method, render(&d.path));
            for (n, v) in &d.headers {
                head.push_str(&format!("{n}: {}\r\n", render(v)));
            }
            let body = match &d.body {
                Body::Empty => String::new(),
                Body::Text(t) | Body::Json(t) => render(t),
                Body::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            };
            format!("{head}\r\n{body}")
        }
    }
}

#[test]
fn default_plan_targets_volley_serve_and_has_a_ramp_a_check_and_thresholds() {
    let text = starter_plan(&CurlRequest::get(DEFAULT_URL).unwrap(), None);
    let plan = read_text("default", &text);
    assert_eq!(plan.target.base_url, "http://127.0.0.1:8080");
    assert_eq!(plan.scenarios.len(), 1);
    let sc = &plan.scenarios[0];
    assert_eq!(sc.steps.len(), 1);
    assert_eq!(sc.steps[0].name, "home");
    assert_eq!(sc.steps[0].checks.len(), 1);
    assert_eq!(plan.thresholds.len(), 2);
    let wire = wire(&plan);
    assert!(
        wire.starts_with("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"),
        "{wire}"
    );
    assert!(text.contains("ramping-vus") && text.contains("# ramp up"));
}

#[test]
fn a_copied_request_is_sent_byte_for_byte() {
    let command = r#"curl 'https://shop.example.com:8443/api/cart?ref=home&q=%7B' \
  -H 'accept: application/json' \
  -H 'content-type: application/json' \
  -b 'session=3f2a9c' \
  -H $'x-note: it\'s' \
  -k --data-raw $'{"note":"tab\there, quote \\" and \u0021"}'"#;
    let r = curl::parse(command).unwrap();
    let text = starter_plan(&r, Some(command));
    let plan = read_text("copied", &text);
    assert_eq!(plan.target.base_url, "https://shop.example.com:8443");
    assert!(text.contains("insecure = true"));
    assert!(text.contains("Cookie hold(s) credentials"), "{text}");
    assert_eq!(plan.scenarios[0].steps[0].name, "post_cart");
    let body = r#"{"note":"tab	here, quote \" and !"}"#;
    // A plan's headers are a TOML table, sent in its key order (byte order: `Cookie` first).
    assert_eq!(
        wire(&plan),
        format!(
            "POST /api/cart?ref=home&q=%7B HTTP/1.1\r\nHost: shop.example.com:8443\r\n\
             User-Agent: volley/{}\r\nCookie: session=3f2a9c\r\naccept: application/json\r\n\
             content-type: application/json\r\nx-note: it's\r\n\
             Content-Length: {}\r\n\r\n{body}",
            env!("CARGO_PKG_VERSION"),
            body.len()
        )
    );
}

#[test]
fn template_syntax_in_a_copied_request_stays_literal() {
    let command = r#"curl http://h/t/%7B%7B -H 'X-Tpl: {{ not_a_var }}' --data-raw '{% x %}{{y}}'"#;
    let r = curl::parse(command).unwrap();
    let plan = read_text("literal", &starter_plan(&r, Some(command)));
    let wire = wire(&plan);
    assert!(wire.contains("X-Tpl: {{ not_a_var }}\r\n"), "{wire}");
    assert!(wire.ends_with("\r\n\r\n{% x %}{{y}}"), "{wire}");
}

#[test]
fn toml_strings_round_trip() {
    for s in [
        "plain",
        "it's",
        "a\r\nb",
        "tab\tok",
        "\"q\"",
        "back\\slash",
        "\u{7f}",
        "",
    ] {
        let doc = format!("v = {}", toml_str(s));
        let parsed: toml::Table = toml::from_str(&doc).unwrap_or_else(|e| panic!("{doc}: {e}"));
        assert_eq!(parsed["v"].as_str(), Some(s), "{doc}");
    }
}

#[test]
fn step_names() {
    let name = |m: &str, u: &str| step_name(m, &url::Url::parse(u).unwrap());
    assert_eq!(name("GET", "http://h/"), "home");
    assert_eq!(name("GET", "http://h/api/v1/Users/?x=1"), "users");
    assert_eq!(name("POST", "http://h/cart.json"), "post_cart_json");
    assert_eq!(name("DELETE", "http://h/items/7"), "delete_7");
}
