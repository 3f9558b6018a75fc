//! HTTP/3 (issue 31): `--protocol http3` against `volley serve --http3` in both load models with
//! the oracle's tolerance, plan features over it, its errors by name, and interop both ways
//! with aioquic (PyPI), a QUIC stack volley did not write.

mod common;

use std::io::BufRead;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::{errors_of, run_json, run_json_ok, serial, summary_u64, temp_dir};
use serde_json::Value;
use volley::proto::client::{Client, ClientConfig};
use volley::proto::message::Request;
use volley::proto::tls::TlsOptions;
use volley::server::{self, RunningTarget, TargetConfig};

/// The built-in target with HTTP/3 beside TLS, on two threads.
fn h3_target() -> RunningTarget {
    server::spawn_http3(TargetConfig {
        bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        threads: 2,
        capacity: None,
    })
    .expect("the HTTP/3 target starts")
}

/// Writes the target's CA to `dir/ca.pem`.
fn ca_file(target: &RunningTarget, dir: &Path) -> String {
    let path = dir.join("ca.pem");
    std::fs::write(&path, target.ca_pem().expect("a TLS target")).unwrap();
    path.to_str().unwrap().to_string()
}

/// `summary.latency_ms.p50`.
fn p50(r: &Value) -> f64 {
    r["summary"]["latency_ms"]["p50"].as_f64().unwrap()
}

/// The target's own handler times (`/stats?reset=1`, asked over HTTP/1.1 and TLS), taking them
/// out.
fn take_stats(t: &RunningTarget, ca: &str) -> Value {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = Client::new(ClientConfig {
            tls: Some(TlsOptions {
                server_name: "localhost".into(),
                ca_file: Some(ca.into()),
                ..TlsOptions::default()
            }),
            ..ClientConfig::http1(t.addr())
        })
        .unwrap();
        let mut req = Request::get("localhost", "/stats?reset=1");
        req.capture.body_limit = 1 << 20;
        let req = client.prepare(&req).unwrap();
        let r = client.connection().exchange(&req).await.unwrap();
        serde_json::from_slice(&r.captured.unwrap().body).unwrap()
    })
}

/// volley's p50, p90 and p99 of exponential delays (mean 10 ms) over HTTP/3, held to the
/// target's own handler times of the same requests plus the transport's mean cost, within
/// max(0.2 ms, 3 %) — as tests/oracle.rs holds HTTP/1.1; the best of three runs (a busy
/// 2-core machine), each checked for what must always hold.
fn measures_the_delay(load: &[&str]) {
    let _serial = serial();
    let t = h3_target();
    let dir = temp_dir(&format!("h3-oracle-{}", load.join("").replace('-', "")));
    let ca = ca_file(&t, &dir);
    let url = format!("{}/delay?ms=10&dist=exp", t.base_url());
    let mut args = vec![
        url.as_str(),
        "--protocol",
        "http3",
        "--cacert",
        &ca,
        "-d",
        "2s",
    ];
    args.extend_from_slice(load);
    let mut tries = Vec::new();
    for _ in 0..3 {
        take_stats(&t, &ca);
        let r = run_json_ok(&dir, &args);
        let stats = take_stats(&t, &ca);
        assert_eq!(r["config"]["protocol"], "h3", "{:#}", r["config"]);
        assert_eq!(r["summary"]["errors"], 0, "{:#}", r["summary"]);
        assert_eq!(
            stats["count"].as_u64(),
            Some(summary_u64(&r, "requests")),
            "volley's requests are the requests the target handled"
        );
        let negotiated = &r["summary"]["tls_negotiated"][0];
        assert_eq!(
            (negotiated["version"].as_str(), negotiated["alpn"].as_str()),
            (Some("TLSv1.3"), Some("h3")),
            "{:#}",
            r["summary"]["tls_negotiated"]
        );
        let server = |key: &str| stats[key].as_f64().unwrap() / 1000.0;
        let volley = |key: &str| r["summary"]["latency_ms"][key].as_f64().unwrap();
        let overhead = volley("mean") - server("mean_us");
        let rows: Vec<(&str, f64, f64, f64)> = ["p50", "p90", "p99"]
            .into_iter()
            .map(|p| {
                let (v, s) = (volley(p), server(&format!("{p}_us")));
                assert!(
                    v >= s * 0.998 - 0.002,
                    "volley's {p} {v} ms below the target's {s}"
                );
                (p, v, s, v - s - overhead)
            })
            .collect();
        let within = rows
            .iter()
            .all(|(_, _, s, residual)| residual.abs() <= (0.03 * s).max(0.2));
        if within && (0.0..=2.0).contains(&overhead) {
            return;
        }
        tries.push((overhead, rows));
    }
    panic!("no run within max(0.2 ms, 3 %) of the target's own figures: {tries:#?}");
}

#[test]
fn the_closed_model_measures_a_known_delay_over_http3() {
    measures_the_delay(&["-c", "4", "--streams", "2"]);
}

/// At 200 req/s, not 100: at 100 req/s this 2-core VM's cores idle between requests and the
/// wake-ups after idle make the loopback overhead vary from run to run (0.4–1.3 ms, HTTP/2 as
/// well) and from request to request, so the percentiles' shifts part from the mean's by up to
/// ±0.6 ms — the machine's spread, not a measurement error; CI failed all three tries so once.
/// At 200 req/s the overhead held 0.29–0.40 ms and every residual within 0.15 ms in 10 of 10 runs.
#[test]
fn the_open_model_measures_a_known_delay_over_http3() {
    measures_the_delay(&["--rate", "200", "-c", "32"]);
}

#[test]
fn plan_features_work_unchanged_over_http3() {
    let _serial = serial();
    let t = h3_target();
    let dir = temp_dir("h3-plan");
    let ca = ca_file(&t, &dir);
    let plan = dir.join("plan.toml");
    let text = format!(
        "[target]\nbase_url = \"{base}\"\nprotocol = \"http3\"\n[target.tls]\ncacert = \"{ca}\"\n\
         [vars]\nword = \"quic\"\n\
         [[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"iterations\"\nvus = 2\niterations = 10\n\n\
         [[scenario.step]]\nname = \"echo\"\nmethod = \"POST\"\npath = \"/echo\"\n\
         json = {{ word = \"{{{{ vars.word }}}}\", n = \"{{{{ iteration }}}}\" }}\n\
         checks = {{ status = [200], body_contains = \"quic\" }}\n\
         extract = {{ said = {{ json = \"/word\" }} }}\n\n\
         [[scenario.step]]\nname = \"status\"\npath = \"/status/{{{{ 200 if said == 'quic' else 500 }}}}\"\n",
        base = t.base_url(),
    );
    std::fs::write(&plan, text).unwrap();
    let (code, shown, err) = common::run_volley(&["check", plan.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(shown.contains("POST /echo HTTP/3"), "{shown}");
    let r = run_json_ok(&dir, &["run", plan.to_str().unwrap()]);
    assert_eq!(r["config"]["protocol"], "h3", "{:#}", r["config"]);
    assert_eq!(r["summary"]["errors"], 0, "{:#}", r["summary"]);
    assert_eq!(summary_u64(&r, "requests"), 20, "{:#}", r["summary"]);
    assert_eq!(r["summary"]["status"]["200"], 20, "{:#}", r["summary"]);
    // The same flow with a new connection per request in 0-RTT (`[target.tls] zero_rtt`): the
    // POST body, its check and the extraction ride in early data.
    let text = std::fs::read_to_string(&plan).unwrap().replace(
        "[target.tls]\n",
        "keepalive = false\n[target.tls]\nzero_rtt = true\n",
    );
    std::fs::write(&plan, text).unwrap();
    let r = run_json_ok(&dir, &["run", plan.to_str().unwrap()]);
    assert_eq!(r["config"]["zero_rtt"], true, "{:#}", r["config"]);
    assert_eq!(r["summary"]["status"]["200"], 20, "{:#}", r["summary"]);
    assert!(quic(&r, "zero_rtt_sent") > 0, "{:#}", r["summary"]["quic"]);
}

#[test]
fn http3_failures_are_named_and_explained() {
    let _serial = serial();
    let t = h3_target();
    let dir = temp_dir("h3-errors");
    let url = format!("{}/", t.base_url());
    // The throw-away CA is not trusted: refused by the check before the run, in words.
    let (code, _, err) = common::run_volley(&[&url, "--protocol", "http3", "-n", "5"]);
    assert_ne!(code, Some(0));
    assert!(
        err.contains("QUIC handshake") && err.contains("--cacert"),
        "{err}"
    );
    // http:// cannot be HTTP/3.
    let plain = url.replace("https://", "http://");
    let (code, _, err) = common::run_volley(&[&plain, "--protocol", "http3", "-n", "1"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("https://"), "{err}");
    // QUIC refuses TLS 1.2.
    let ca = ca_file(&t, &dir);
    let (code, _, err) = common::run_volley(&[
        &url,
        "--protocol",
        "http3",
        "--cacert",
        &ca,
        "--tls-version",
        "1.2",
        "-n",
        "1",
    ]);
    assert_ne!(code, Some(0));
    assert!(err.contains("TLS 1.3"), "{err}");
    // A route that fails is an HTTP status over HTTP/3 as over any protocol.
    let status = format!("{}/status/503", t.base_url());
    let (_, r) = run_json(
        &dir,
        &[&status, "--protocol", "http3", "--cacert", &ca, "-n", "4"],
    );
    assert_eq!(errors_of(&r, "http_5xx"), 4, "{:#}", r["summary"]);
}

/// `summary.quic`'s `key`.
fn quic(r: &Value, key: &str) -> u64 {
    let q = &r["summary"]["quic"];
    q[key].as_u64().unwrap_or_else(|| panic!("{key} in {q:#}"))
}

#[test]
fn quic_figures_count_what_the_connections_carried() {
    let _serial = serial();
    let t = h3_target();
    let dir = temp_dir("h3-quic-figures");
    let ca = ca_file(&t, &dir);
    let url = format!("{}/bytes/50000", t.base_url());
    let args = [
        &url,
        "--protocol",
        "http3",
        "--cacert",
        &ca,
        "-c",
        "2",
        "--streams",
        "2",
    ];
    let r = run_json_ok(&dir, &[&args[..], &["-n", "40"]].concat());
    let q = &r["summary"]["quic"];
    let n = |key: &str| quic(&r, key);
    // Two connections (the check before the run opens its own, not counted) brought 40 bodies
    // of 50,000 bytes, encrypted and framed: more than 2 MB over UDP, in datagrams of at most
    // 64 KiB, and the requests went the other way.
    assert_eq!(n("connections"), 2, "{q:#}");
    assert!(n("udp_bytes_received") > 40 * 50_000, "{q:#}");
    assert!(
        n("datagrams_received") > n("udp_bytes_received") / 65_536,
        "{q:#}"
    );
    assert!(n("datagrams_sent") > 0 && n("udp_bytes_sent") > 0, "{q:#}");
    assert!(n("packets_sent") >= n("datagrams_sent"), "{q:#}");
    let report = common::run_volley(&["report", dir.join("run.json").to_str().unwrap()]);
    assert!(
        report.1.contains("QUIC:") && report.1.contains("2 connections"),
        "{}",
        report.1
    );
    // Over HTTP/2 there are none.
    let args = [&url, "--protocol", "http2", "--cacert", &ca, "-n", "4"];
    let r = run_json_ok(&dir, &args);
    assert!(r["summary"].get("quic").is_none(), "{:#}", r["summary"]);
}

#[test]
fn zero_rtt_sends_early_data_that_volley_serve_accepts() {
    let _serial = serial();
    let t = h3_target();
    let dir = temp_dir("h3-zero-rtt");
    let ca = ca_file(&t, &dir);
    let url = format!("{}/delay?ms=1", t.base_url());
    // A new connection per request, one at a time: from the second on, each resumes the
    // session of a ticket the one before brought, and sends its request in 0-RTT.
    let args = [
        &url,
        "--protocol",
        "http3",
        "--cacert",
        &ca,
        "-c",
        "1",
        "-n",
        "40",
        "--no-keepalive",
    ];
    let r = run_json_ok(&dir, &[&args[..], &["--zero-rtt"]].concat());
    assert_eq!(r["summary"]["status"]["200"], 40, "{:#}", r["summary"]);
    assert_eq!(r["config"]["zero_rtt"], true);
    let (connections, sent) = (quic(&r, "connections"), quic(&r, "zero_rtt_sent"));
    assert_eq!(connections, 40);
    // A ticket comes after its connection's handshake: a fast exchange may end first.
    assert!(sent >= 20, "{:#}", r["summary"]["quic"]);
    assert_eq!(quic(&r, "zero_rtt_accepted"), sent);
    assert_eq!(quic(&r, "zero_rtt_rejected"), 0);
    // Nothing was waited for before a 0-RTT request: only the full handshakes are timed.
    assert_eq!(
        r["summary"]["timing"]["tls_handshakes"].as_u64(),
        Some(connections - sent),
        "{:#}",
        r["summary"]["timing"]
    );
    let report = common::run_volley(&["report", dir.join("run.json").to_str().unwrap()]);
    let line = format!("({sent} in 0-RTT: {sent} accepted, 0 rejected)");
    assert!(report.1.contains(&line), "{line} in {}", report.1);
    // Without the flag, no early data: every connection is timed.
    let r = run_json_ok(&dir, &args);
    assert_eq!(quic(&r, "zero_rtt_sent"), 0);
    assert!(r["config"].get("zero_rtt").is_none(), "{:#}", r["config"]);
    // 0-RTT is built for HTTP/3: elsewhere it is refused before the run, in words.
    let args = [&url, "--protocol", "http2", "--cacert", &ca, "--zero-rtt"];
    let (code, _, err) = common::run_volley(&args);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("built for HTTP/3 only"), "{err}");
}

#[test]
fn early_data_an_aioquic_server_rejects_is_sent_again() {
    let _serial = serial();
    let dir = temp_dir("h3-zero-rtt-aioquic");
    let ca = dir.join("peer-ca.pem");
    let run = |peer: &Peer| {
        let url = format!("https://127.0.0.1:{}/delay?ms=20", peer.1);
        let args = [
            &url,
            "--protocol",
            "http3",
            "--cacert",
            ca.to_str().unwrap(),
        ];
        let load = ["-c", "1", "-n", "12", "--no-keepalive", "--zero-rtt"];
        let r = run_json_ok(&dir, &[&args[..], &load].concat());
        assert_eq!(r["summary"]["status"]["200"], 12, "{:#}", r["summary"]);
        assert_eq!(r["summary"]["errors"], 0, "{:#}", r["summary"]);
        r
    };
    // aioquic takes each ticket back once: early data read.
    let r = run(&Peer::aioquic(&ca, &["--zero-rtt", "accept"]));
    let sent = quic(&r, "zero_rtt_sent");
    assert!(sent >= 6, "{:#}", r["summary"]["quic"]);
    assert_eq!(quic(&r, "zero_rtt_accepted"), sent);
    assert_eq!(quic(&r, "connections"), 12);
    // aioquic never finds its tickets: every 0-RTT attempt is rejected, and its request is
    // sent again on a new connection with a full handshake — answered, not lost.
    let r = run(&Peer::aioquic(&ca, &["--zero-rtt", "reject"]));
    let sent = quic(&r, "zero_rtt_sent");
    assert!(sent >= 6, "{:#}", r["summary"]["quic"]);
    assert_eq!(quic(&r, "zero_rtt_rejected"), sent);
    assert_eq!(quic(&r, "zero_rtt_accepted"), 0);
    assert_eq!(quic(&r, "connections"), 12 + sent);
    assert_eq!(
        r["summary"]["timing"]["tls_handshakes"].as_u64(),
        Some(12),
        "{:#}",
        r["summary"]["timing"]
    );
}

/// A peer server of `tests/peers/` that prints its port and writes its certificate to `ca`;
/// stopped by its PID when dropped.
struct Peer(Child, u16);

impl Peer {
    /// `program` (with its first arguments), given `ca` as its last; `install` says how to
    /// get it when it does not start.
    fn start(mut program: Command, ca: &Path, install: &str) -> Self {
        let mut child = program
            .arg(ca)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{program:?} does not start ({e}): {install}"));
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{program:?}: no port: {line:?} ({install})"));
        Self(child, port)
    }

    /// aioquic's HTTP/3 server (`tests/peers/h3_server.py`), with `args` before the CA.
    fn aioquic(ca: &Path, args: &[&str]) -> Self {
        let mut python = Command::new("python3");
        python.arg(format!(
            "{}/tests/peers/h3_server.py",
            env!("CARGO_MANIFEST_DIR")
        ));
        python.args(args);
        Self::start(python, ca, "pip install aioquic")
    }

    /// quic-go's HTTP/3 server (`tests/peers/quicgo`, built by .ci/run).
    fn quic_go(ca: &Path) -> Self {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/target/peers/quicgo-h3");
        Self::start(
            Command::new(path),
            ca,
            "cd tests/peers/quicgo && go build -o ../../../target/peers/quicgo-h3 .",
        )
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A server volley did not write, load-tested over HTTP/3 in both models and echoing a body;
/// `slack_ms` is how late its timer may wake.
fn load_tests_a_peer(peer: &Peer, dir: &Path, ca: &Path, slack_ms: f64) {
    let url = format!("https://127.0.0.1:{}/delay?ms=10", peer.1);
    let ca = ca.to_str().unwrap();
    for load in [
        &["-c", "2", "--streams", "2"][..],
        &["--rate", "50", "-c", "16"][..],
    ] {
        let mut args = vec![
            url.as_str(),
            "--protocol",
            "http3",
            "--cacert",
            ca,
            "-d",
            "2s",
        ];
        args.extend_from_slice(load);
        let r = run_json_ok(dir, &args);
        assert_eq!(r["summary"]["errors"], 0, "{:#}", r["summary"]);
        assert!(summary_u64(&r, "requests") >= 40, "{:#}", r["summary"]);
        assert_eq!(r["summary"]["tls_negotiated"][0]["alpn"], "h3");
        // A timer wakes late, never early.
        let p = p50(&r);
        assert!(
            (10.0..10.0 + slack_ms).contains(&p),
            "p50 {p} ms against a 10 ms delay"
        );
    }
    let echo = format!("https://127.0.0.1:{}/echo", peer.1);
    let args = [
        &echo,
        "--protocol",
        "http3",
        "--cacert",
        ca,
        "-n",
        "3",
        "-m",
        "POST",
    ];
    let r = run_json_ok(dir, &[&args[..], &["--body", "hello"]].concat());
    assert_eq!(r["summary"]["status"]["200"], 3, "{:#}", r["summary"]);
    // The body came back: 5 bytes of it per response, beside the head's names and values.
    assert!(
        summary_u64(&r, "bytes_received") >= 15,
        "{:#}",
        r["summary"]
    );
}

#[test]
fn an_aioquic_server_is_load_tested_over_http3() {
    let _serial = serial();
    let dir = temp_dir("h3-aioquic-server");
    let ca = dir.join("peer-ca.pem");
    // asyncio's timer wakes up to a few ms late.
    load_tests_a_peer(&Peer::aioquic(&ca, &[]), &dir, &ca, 6.0);
}

#[test]
fn a_quic_go_server_is_load_tested_over_http3() {
    let _serial = serial();
    let dir = temp_dir("h3-quic-go-server");
    let ca = dir.join("peer-ca.pem");
    load_tests_a_peer(&Peer::quic_go(&ca), &dir, &ca, 3.0);
}

#[test]
fn an_aioquic_client_gets_answers_from_volley_serve_http3() {
    let _serial = serial();
    let t = h3_target();
    let dir = temp_dir("h3-aioquic-client");
    let ca = ca_file(&t, &dir);
    let client = format!("{}/tests/peers/h3_client.py", env!("CARGO_MANIFEST_DIR"));
    let port = t.addr().port().to_string();
    let ask = |path: &str, body: Option<&str>| {
        let mut cmd = Command::new("python3");
        cmd.args([client.as_str(), "127.0.0.1", &port, &ca, path]);
        cmd.args(body);
        let out = cmd.output().expect("python3 runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{text}{err} (pip install aioquic)");
        text
    };
    let root = ask("/", None);
    assert!(root.starts_with("status 200\n"), "{root}");
    assert!(
        root.ends_with("body ok\n\n") || root.contains("body ok"),
        "{root}"
    );
    let echoed = ask("/echo", Some("from aioquic"));
    assert!(echoed.contains("body from aioquic"), "{echoed}");
    let missing = ask("/status/404", None);
    assert!(missing.starts_with("status 404\n"), "{missing}");
}

#[test]
fn the_h1_h2_h3_suite_example_compares_the_three_protocols() {
    let _serial = serial();
    let dir = temp_dir("h3-suite");
    let suite = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/009-h1-h2-h3-suite.toml"
    );
    let out = dir.to_str().unwrap();
    let (code, stdout, stderr) =
        common::run_volley(&["suite", suite, "--time-scale", "0.1", "--out", out, "-q"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let folder = common::only_subfolder(&dir);
    common::verified(&folder);
    for (target, wire) in [("http1", "http/1.1"), ("http2", "h2"), ("http3", "h3")] {
        let text = std::fs::read_to_string(folder.join(target).join("run.json")).unwrap();
        let r: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(r["config"]["protocol"], wire, "{target}: {:#}", r["config"]);
        assert_eq!(r["summary"]["errors"], 0, "{target}: {:#}", r["summary"]);
        assert!(
            summary_u64(&r, "requests") > 100,
            "{target}: {:#}",
            r["summary"]
        );
    }
    let report = std::fs::read_to_string(folder.join("report.md")).unwrap();
    for target in ["http1", "http2", "http3"] {
        assert!(
            report.contains(target),
            "{target} missing from the report:\n{report}"
        );
    }
}
