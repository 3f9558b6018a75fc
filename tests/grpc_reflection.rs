//! gRPC calls without a `.proto` file: the schema comes from the server by reflection, from the
//! built-in target over h2c and TLS, in quick mode and in plans; servers that do not offer
//! reflection, and services they do not know, are clear errors before any load.

mod common;

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};

use common::*;
use volley::server::{self, TargetConfig};

const ECHO: [&str; 4] = [
    "--call",
    "volley.target.v1.Echo/Echo",
    "--data",
    r#"{"message": "hi"}"#,
];

/// A run that succeeded with `calls` calls, every one OK.
fn assert_all_ok(out: &std::process::Output, rec: &serde_json::Value, calls: u64) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        rec["summary"]["grpc_status"]["OK"], calls,
        "{}",
        rec["summary"]
    );
}

/// A short quick-mode run that must succeed with every call OK.
fn all_ok(dir: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend(["-n", "50", "-c", "2"]);
    let (out, rec) = run_json(dir, &all);
    assert_all_ok(&out, &rec, 50);
    rec
}

#[test]
fn quick_mode_calls_without_a_proto_file_over_h2c_and_tls() {
    let dir = temp_dir("reflect-quick");
    let t = target();
    let url = t.base_url();
    let mut args = vec![url.as_str()];
    args.extend(ECHO);
    let rec = all_ok(&dir, &args);
    assert_eq!(rec["config"]["protocol"], "h2c");

    let tls = server::spawn_tls(TargetConfig {
        bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        threads: 1,
        capacity: None,
    })
    .unwrap();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, tls.ca_pem().unwrap()).unwrap();
    let url = tls.base_url().replace("https://", "grpcs://");
    let ca = ca.display().to_string();
    let mut args = vec![url.as_str(), "--cacert", &ca];
    args.extend(ECHO);
    let rec = all_ok(&dir, &args);
    assert_eq!(rec["config"]["protocol"], "h2");
}

#[test]
fn a_plan_without_proto_fetches_every_service_it_calls() {
    let t = target();
    let dir = temp_dir("reflect-plan");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"
[target]
base_url = "{}"

[[scenario]]
name = "two_services"
[scenario.load]
profile = "iterations"
vus = 2
iterations = 10

[[scenario.step]]
name = "create"
grpc = "volley.target.v1.Tasks/CreateTask"
json = {{ title = "by reflection" }}
[scenario.step.extract]
id = {{ json = "/id" }}

[[scenario.step]]
name = "echo"
grpc = "volley.target.v1.Echo/Echo"
json = {{ message = "task {{{{ id }}}}" }}
[scenario.step.checks]
body_contains = "task "
"#,
            t.base_url()
        ),
    )
    .unwrap();
    let (out, rec) = run_json(&dir, &["run", plan.to_str().unwrap()]);
    assert_all_ok(&out, &rec, 20);
    assert_eq!(rec["checks"][0]["passed"], 10, "{}", rec["checks"]);
}

#[test]
fn an_unknown_service_is_refused_before_the_run() {
    let t = target();
    let url = t.base_url();
    let (code, _, err) = run_volley(&[&url, "--call", "volley.target.v1.Nope/Echo", "-n", "1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("NOT_FOUND") && err.contains("volley.target.v1.Nope"),
        "{err}"
    );
    // A method the service lacks: the schema came, the method is not in it.
    let (code, _, err) = run_volley(&[&url, "--call", "volley.target.v1.Echo/Shout", "-n", "1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no method \"Shout\""), "{err}");
}

/// An HTTP/2 server that answers every call `grpc-status: 12` (UNIMPLEMENTED), as a gRPC server
/// without reflection does; its address.
fn server_without_reflection() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(|_req| async {
                        Ok::<_, Infallible>(
                            hyper::Response::builder()
                                .header("content-type", "application/grpc")
                                .header("grpc-status", "12")
                                .body(http_body_util::Empty::<bytes::Bytes>::new())
                                .unwrap(),
                        )
                    });
                    let _ = hyper::server::conn::http2::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
                });
            }
        });
    });
    addr
}

#[test]
fn a_server_without_reflection_needs_the_proto_file() {
    let addr = server_without_reflection();
    let url = format!("http://{addr}");
    let mut args = vec![url.as_str()];
    args.extend(ECHO);
    args.extend(["-n", "1"]);
    let (code, _, err) = run_volley(&args);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("does not offer gRPC server reflection") && err.contains("--proto"),
        "{err}"
    );
}
