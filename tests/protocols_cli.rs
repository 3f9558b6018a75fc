//! The protocols end to end, through the `volley` binary against the built-in target: HTTP/1.1,
//! h2c with streams, HTTP/1.1 and HTTP/2 over TLS, gRPC over h2c and TLS, certificate
//! verification, and a plan that mixes HTTP and gRPC steps.

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;
use volley::server::{self, RunningTarget, TargetConfig};

fn tls_target() -> RunningTarget {
    server::spawn_tls(TargetConfig {
        bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        threads: 1,
        capacity: None,
    })
    .expect("TLS target starts")
}

/// Writes the TLS target's CA certificate to a file for `--cacert`.
fn ca_file(t: &RunningTarget, dir: &Path) -> PathBuf {
    let path = dir.join("ca.pem");
    std::fs::write(&path, t.ca_pem().expect("a TLS target")).unwrap();
    path
}

fn proto() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/proto/volley_target.proto").to_string()
}

/// A short run that must succeed: exit 0, requests made, none failed.
fn ok_run(dir: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-d", "1s", "--threads", "1"]);
    let (out, rec) = run_json(dir, &all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        rec["summary"]
    );
    assert!(summary_u64(&rec, "requests") > 50, "{}", rec["summary"]);
    assert_eq!(summary_u64(&rec, "errors"), 0, "{}", rec["summary"]);
    rec
}

fn timing(rec: &Value, key: &str) -> Option<f64> {
    rec["summary"]["timing"][key]["p50"].as_f64()
}

#[test]
fn http1_and_h2c_with_streams_split_their_time() {
    let _s = serial();
    let t = target();
    let dir = temp_dir("proto-h1-h2c");
    let url = format!("{}/", t.base_url());

    let h1 = ok_run(&dir, &[&url, "-c", "4"]);
    assert_eq!(h1["config"]["protocol"], "http/1.1");
    assert_eq!(summary_u64(&h1, "connections_opened"), 4);
    assert!(timing(&h1, "connect_ms").is_some() && timing(&h1, "waiting_ms").is_some());
    assert!(h1["summary"]["timing"]["tls_handshake_ms"].is_null());

    // 2 connections × 8 streams: 16 requests in flight over 2 connections.
    let h2 = ok_run(&dir, &[&url, "--http2", "-c", "2", "--streams", "8"]);
    assert_eq!(h2["config"]["protocol"], "h2c");
    assert_eq!(h2["config"]["streams"], 8);
    assert_eq!(h2["config"]["connections"], 16);
    assert_eq!(summary_u64(&h2, "connections_opened"), 2);
    assert_eq!(h2["summary"]["timing"]["connects"], 2);

    // Streams without HTTP/2 are refused before anything is sent.
    let (code, _, err) = run_volley(&[&url, "--streams", "4", "-d", "1s"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("need HTTP/2"), "{err}");
}

#[test]
fn tls_verifies_by_default_and_passes_with_cacert_or_insecure() {
    let _s = serial();
    let t = tls_target();
    let dir = temp_dir("proto-tls");
    let url = format!("{}/", t.base_url());
    assert!(url.starts_with("https://"));

    // Verification on, a self-signed CA: a clear error, nothing measured, exit 1.
    let (code, _, err) = run_volley(&[&url, "-d", "1s", "-q"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("certificate was rejected") && err.contains("--cacert"),
        "{err}"
    );

    let ca = ca_file(&t, &dir);
    let ca = ca.to_str().unwrap();
    let h1 = ok_run(&dir, &[&url, "-c", "2", "--cacert", ca]);
    assert_eq!(h1["config"]["protocol"], "http/1.1");
    assert_eq!(h1["config"]["tls"], true);
    assert_eq!(h1["summary"]["timing"]["tls_handshakes"], 2);
    assert!(timing(&h1, "tls_handshake_ms").unwrap() > 0.0);

    let h2 = ok_run(
        &dir,
        &[&url, "--http2", "-c", "2", "--streams", "4", "--insecure"],
    );
    assert_eq!(h2["config"]["protocol"], "h2");
    assert_eq!(summary_u64(&h2, "connections_opened"), 2);

    // A name the certificate does not hold fails verification even with the right CA.
    let (code, _, err) = run_volley(&[&url, "--cacert", ca, "--sni", "example.com", "-d", "1s"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("certificate"), "{err}");
    // A handshake that fails (https:// to a plain-HTTP port): a clear error before any load.
    let plain = target();
    let url = plain.base_url().replace("http://", "https://");
    let (code, _, err) = run_volley(&[&url, "-d", "1s", "-q"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("TLS handshake failed"), "{err}");
    // TLS options without TLS are refused.
    let (code, _, err) = run_volley(&["http://127.0.0.1:9/", "--insecure", "-d", "1s"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("https://"), "{err}");
}

#[test]
fn a_plans_tls_settings_are_set_from_the_command_line() {
    let _s = serial();
    let t = tls_target();
    let dir = temp_dir("proto-tls-set");
    let ca = ca_file(&t, &dir);
    let plain = protocol_plan(&dir, "tls", &t.base_url(), "");
    let plain = plain.to_str().unwrap();
    let run_plan = |args: &[&str]| {
        let (code, _, err) = run_volley(&[&["run", plain, "-q"], args].concat());
        (code, err)
    };
    // The plan verifies by default: the throw-away CA's certificate is rejected ...
    let (code, err) = run_plan(&[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("certificate was rejected"), "{err}");
    // ... and `--set target.tls.insecure=true` accepts it, as `[target.tls] insecure` would.
    let (out, rec) = run_json(&dir, &["run", plain, "--set", "target.tls.insecure=true"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(rec["config"]["tls"], true);
    assert_eq!(rec["summary"]["errors"], 0, "{}", rec["summary"]);
    // `target.tls.sni` overrides the plan's server name: one the certificate does not hold
    // fails verification even with the right CA.
    let lines = format!("[target.tls]\ncacert = \"{}\"", ca.display());
    let with_ca = protocol_plan(&dir, "tls-ca", &t.base_url(), &lines);
    let with_ca = with_ca.to_str().unwrap();
    let (out, _) = run_json(&dir, &["run", with_ca]);
    assert!(out.status.success(), "{out:?}");
    let (code, _, err) = run_volley(&["run", with_ca, "-q", "--set", "target.tls.sni=example.com"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("certificate"), "{err}");
    // A value that is not a boolean, and a TLS key --set does not take, say what and where.
    let (code, err) = run_plan(&["--set", "target.tls.insecure=maybe"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--set target.tls.insecure: `maybe` is not true or false"),
        "{err}"
    );
    let (code, err) = run_plan(&["--set", "target.tls.cert=c.pem"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("`target.tls.cert`: use vars.NAME"), "{err}");
}

#[test]
fn grpc_over_h2c_and_tls_counts_grpc_statuses() {
    let _s = serial();
    let dir = temp_dir("proto-grpc");
    let proto = proto();
    let echo = [
        "--proto",
        &proto,
        "--call",
        "volley.target.v1.Echo/Echo",
        "--data",
        r#"{"message": "hi"}"#,
    ];

    let t = target();
    let mut args = vec![t.base_url()];
    args.extend(echo.iter().map(|s| s.to_string()));
    args.extend(["-c", "2", "--streams", "4"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let rec = ok_run(&dir, &args);
    assert_eq!(rec["config"]["protocol"], "h2c");
    assert_eq!(rec["config"]["method"], "gRPC");
    let calls = summary_u64(&rec, "requests");
    assert_eq!(rec["summary"]["grpc_status"]["OK"].as_u64(), Some(calls));

    // A failing call counts by its gRPC status, as a caller-side error.
    let url = t.base_url();
    let (out, rec) = run_json(
        &dir,
        &[
            &url,
            "--proto",
            &proto,
            "--call",
            "volley.target.v1.Tasks/GetTask",
            "--data",
            r#"{"id": 987654321}"#,
            "-n",
            "20",
            "-c",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(rec["summary"]["grpc_status"]["NOT_FOUND"], 20);
    assert_eq!(errors_of(&rec, "grpc_client_error"), 20);

    // A message that does not fit its type is refused before the run, with the field.
    let (code, _, err) = run_volley(&[
        &url,
        "--proto",
        &proto,
        "--call",
        "volley.target.v1.Echo/Echo",
        "--data",
        r#"{"mesage": "x"}"#,
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("mesage"), "{err}");

    // Over TLS (grpcs:// implies HTTP/2), trusting the target's CA.
    let tls = tls_target();
    let ca = ca_file(&tls, &dir);
    let url = tls.base_url().replace("https://", "grpcs://");
    let mut args = vec![url, "--cacert".into(), ca.display().to_string()];
    args.extend(echo.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let rec = ok_run(&dir, &args);
    assert_eq!(rec["config"]["protocol"], "h2");
    assert!(rec["summary"]["grpc_status"]["OK"].as_u64().unwrap() > 50);
}

#[test]
fn a_plan_mixes_rest_and_grpc_steps_on_one_task_store() {
    let _s = serial();
    let t = target();
    let dir = temp_dir("proto-mixed");
    let plan = dir.join("mixed.toml");
    std::fs::write(
        &plan,
        format!(
            r#"
[target]
base_url = "{}"
proto = ["{}"]

[[scenario]]
name = "mixed"
[scenario.load]
profile = "iterations"
vus = 2
iterations = 10  # shared by the VUs: ten tasks in all

# Created over REST, read back over gRPC.
[[scenario.step]]
name = "rest_create"
method = "POST"
path = "/tasks"
json = {{ title = "made over rest", done = false }}
[scenario.step.extract]
task_id = {{ json = "/id" }}
[scenario.step.checks]
status = [201]

[[scenario.step]]
name = "grpc_get"
grpc = "volley.target.v1.Tasks/GetTask"
json = {{ id = "{{{{ task_id }}}}" }}
[scenario.step.extract]
title = {{ json = "/title" }}
[scenario.step.checks]
json = {{ "/title" = "made over rest" }}

# The title extracted from the gRPC reply goes back out over REST.
[[scenario.step]]
name = "rest_update"
method = "PUT"
path = "/tasks/{{{{ task_id }}}}"
json = {{ title = "{{{{ title }}}} (seen)", done = true }}
[scenario.step.checks]
status = [200]
"#,
            t.base_url(),
            proto()
        ),
    )
    .unwrap();
    let (out, rec) = run_json(&dir, &["run", plan.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(summary_u64(&rec, "requests"), 30, "{}", rec["summary"]);
    assert_eq!(summary_u64(&rec, "errors"), 0, "{}", rec["summary"]);
    assert_eq!(rec["summary"]["grpc_status"]["OK"], 10);
    assert_eq!(rec["config"]["protocol"], "http/1.1");
    let checks = rec["checks"].as_array().unwrap();
    assert!(
        checks.iter().all(|c| c["failed"] == 0 && c["passed"] == 10),
        "{checks:?}"
    );
    // Every task went through all three steps.
    let body = http_get(&t.base_url(), "/tasks");
    assert_eq!(body.matches("made over rest (seen)").count(), 10, "{body}");
}

/// A plan of one GET, `[target]` extended by `target_lines`.
fn protocol_plan(dir: &Path, name: &str, base_url: &str, target_lines: &str) -> PathBuf {
    let plan = dir.join(format!("{name}.toml"));
    std::fs::write(
        &plan,
        format!(
            "[target]\nbase_url = \"{base_url}\"\n{target_lines}\n\
             [[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"iterations\"\nvus = 2\n\
             iterations = 20\n[[scenario.step]]\nname = \"get\"\npath = \"/\"\n"
        ),
    )
    .unwrap();
    plan
}

#[test]
fn the_protocol_is_chosen_by_name_in_plans_and_flags() {
    let _s = serial();
    let t = target();
    let dir = temp_dir("proto-by-name");
    let url = t.base_url();
    let run_plan = |name: &str, lines: &str| {
        let plan = protocol_plan(&dir, name, &url, lines);
        let (out, rec) = run_json(&dir, &["run", plan.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), rec, err)
    };
    // Refused before the run: exit 2 and what stderr says.
    let refused = |name: &str, lines: &str| {
        let plan = protocol_plan(&dir, name, &url, lines);
        let (code, _, err) = run_volley(&["run", plan.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{name}: {err}");
        err
    };

    // `protocol = "http2"`, and the deprecated `http2 = true` that means the same.
    for (name, lines) in [
        ("named", "protocol = \"http2\""),
        ("alias", "http2 = true"),
        ("both", "protocol = \"http2\"\nhttp2 = true"),
    ] {
        let (code, rec, err) = run_plan(name, lines);
        assert_eq!(code, Some(0), "{name}: {err}");
        assert_eq!(rec["config"]["protocol"], "h2c", "{name}");
        assert_eq!(summary_u64(&rec, "requests"), 20, "{name}");
    }
    let (code, rec, err) = run_plan("http1", "protocol = \"http1\"\nhttp2 = false");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(rec["config"]["protocol"], "http/1.1");

    // The two disagree: refused, at the deprecated key, saying which.
    let err = refused("conflict", "protocol = \"http1\"\nhttp2 = true");
    assert!(
        err.contains("conflict.toml:4:9") && err.contains("http2 = true disagrees with protocol"),
        "{err}"
    );
    // A name that is no protocol: refused, listing the names there are.
    let err = refused("spdy", "protocol = \"spdy\"");
    assert!(
        err.contains("spdy.toml:3:12")
            && err.contains("unknown protocol `spdy`: expected one of http1, http2"),
        "{err}"
    );

    // Quick mode: --protocol, and --http2 as its alias; not both.
    let page = format!("{url}/");
    let rec = ok_run(
        &dir,
        &[&page, "--protocol", "http2", "-c", "2", "--streams", "4"],
    );
    assert_eq!(rec["config"]["protocol"], "h2c");
    assert_eq!(rec["config"]["connections"], 8);
    let rec = ok_run(&dir, &[&page, "--protocol", "http1"]);
    assert_eq!(rec["config"]["protocol"], "http/1.1");
    let (code, _, err) = run_volley(&[&page, "--protocol", "spdy", "-d", "1s"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("spdy") && err.contains("http1, http2"),
        "{err}"
    );
    let (code, _, err) = run_volley(&[&page, "--protocol", "http1", "--http2", "-d", "1s"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--http2") && err.contains("--protocol"),
        "{err}"
    );
}

/// A TLS server whose certificate signed itself, made as `openssl req -x509` makes one (a CA
/// certificate serving as the server's), valid for 127.0.0.1 from `not_before` to `not_after`
/// (years); it answers every HTTP/1.1 request `200 ok`. Returns its port and the certificate's
/// PEM.
fn self_signed_server(not_before: i32, not_after: i32) -> (u16, String) {
    use std::io::{BufRead, BufReader, Write};
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.not_before = rcgen::date_time_ymd(2026 + not_before, 1, 1);
    params.not_after = rcgen::date_time_ymd(2026 + not_after, 1, 1);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(volley::proto::tls::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
    let config = std::sync::Arc::new(config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || {
                let tls = rustls::ServerConnection::new(config).unwrap();
                let mut stream = BufReader::new(rustls::StreamOwned::new(tls, tcp));
                let mut line = String::new();
                // One answer per request head (its blank line), until the client leaves.
                while stream.read_line(&mut line).is_ok_and(|n| n > 0) {
                    if line == "\r\n" {
                        let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                        if stream.get_mut().write_all(answer).is_err() {
                            break;
                        }
                    }
                    line.clear();
                }
            });
        }
    });
    (port, cert.pem())
}

/// `--cacert` with the server's own self-signed certificate trusts it, as curl does; its name
/// and dates still count.
#[test]
fn a_self_signed_certificate_given_with_cacert_is_trusted() {
    let dir = temp_dir("proto-self-signed");
    let (port, pem) = self_signed_server(-1, 5);
    let cert = dir.join("server.pem");
    std::fs::write(&cert, pem).unwrap();
    let cert = cert.to_str().unwrap();
    let url = format!("https://127.0.0.1:{port}/");
    let (code, _, err) = run_volley(&[&url, "-n", "1", "-q"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("or the certificate itself, if it signed itself"),
        "{err}"
    );
    let (out, rec) = run_json(&dir, &[&url, "--cacert", cert, "-n", "20", "-c", "2"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(status_of(&rec, "200"), 20, "{}", rec["summary"]);

    // Another name than the certificate's: refused.
    let (code, _, err) = run_volley(&[&url, "--cacert", cert, "--sni", "example.com", "-n", "1"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("NotValidForName"), "{err}");
    // Expired: refused.
    let (port, pem) = self_signed_server(-3, -1);
    std::fs::write(dir.join("expired.pem"), pem).unwrap();
    let expired = dir.join("expired.pem");
    let url = format!("https://127.0.0.1:{port}/");
    let (code, _, err) = run_volley(&[&url, "--cacert", expired.to_str().unwrap(), "-n", "1"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("Expired"), "{err}");
}
