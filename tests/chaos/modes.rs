//! The chaos modes of issue 7, each against the real binary (TLS at the protocol seam: the
//! command line does not speak https yet).

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use serde_json::Value;
use volley::server::{self, Faults, TargetConfig};

use crate::common::*;

/// Peak RSS every chaos run must stay under (generous: a quiet run takes ~6 MiB).
const RSS_BOUND: u64 = 100 << 20;
/// Slack on top of duration + timeout for start-up, report writing and a loaded machine.
const SLACK: Duration = Duration::from_secs(4);

/// What a chaos run left.
struct Chaos {
    record: Value,
    finished: Finished,
}

/// Runs volley with `args` (the URL first); checks that it ended within `bound` + [`SLACK`],
/// left a complete results folder and a valid `--json` record, and kept its peak RSS under
/// [`RSS_BOUND`]. Prints the figures (`cargo test -- --nocapture` shows them).
fn chaos(name: &str, args: &[&str], bound: Duration) -> Chaos {
    let dir = temp_dir(&format!("chaos-{name}"));
    let finished = spawn_volley(&dir, args, &[]).wait(bound + SLACK + SLACK);
    assert!(
        finished.elapsed < bound + SLACK,
        "{name}: took {:?}, bound {bound:?} + {SLACK:?}",
        finished.elapsed
    );
    let record = valid_record(&dir.join("run.json"));
    let folder = assert_complete_results(&only_subfolder(&dir.join("results")));
    assert_eq!(record["summary"], folder["summary"]);
    assert_no_temporary_files(&dir);
    let rss_mib = finished.peak_rss_bytes as f64 / (1 << 20) as f64;
    let own_mib = record["generator"]["peak_rss_bytes"].as_f64().unwrap() / (1 << 20) as f64;
    eprintln!(
        "chaos {name}: {:.2} s, peak RSS {rss_mib:.1} MiB (volley's own figure at the end of \
         the run: {own_mib:.1} MiB), exit {:?}, errors {}",
        finished.elapsed.as_secs_f64(),
        finished.code,
        record["summary"]["errors_by_kind"]
    );
    assert!(
        finished.peak_rss_bytes < RSS_BOUND,
        "{name}: peak RSS {rss_mib:.1} MiB"
    );
    Chaos { record, finished }
}

/// [`chaos`] against `path` of a fresh built-in target, `args` after the URL.
fn chaos_at(name: &str, path: &str, args: &[&str], bound: Duration) -> Chaos {
    let t = target();
    let url = format!("{}{path}", t.base_url());
    let mut all = vec![url.as_str()];
    all.extend_from_slice(args);
    chaos(name, &all, bound)
}

/// Every measured attempt failed, all with `kind`.
fn all_failed_with(c: &Chaos, kind: &str) {
    let attempts = summary_u64(&c.record, "attempts");
    assert!(attempts > 0, "{}", c.record["summary"]);
    assert_eq!(
        errors_of(&c.record, kind),
        attempts,
        "{}",
        c.record["summary"]
    );
    assert_eq!(c.finished.code, Some(1), "every attempt failed: exit 1");
}

#[test]
fn reset_in_the_middle_of_a_body_is_a_connection_reset() {
    let t = target();
    let url = format!("{}/chaos/reset-body", t.base_url());
    let c = chaos(
        "reset-body",
        &[&url, "-d", "1s", "-c", "2", "--timeout", "2s"],
        Duration::from_secs(3),
    );
    all_failed_with(&c, "connection_reset");
    // Part of the body arrived before the reset.
    assert!(summary_u64(&c.record, "bytes_received") > 64 * 1024);
}

#[test]
fn a_body_slower_than_the_timeout_times_out_on_time() {
    let t = target();
    let url = format!(
        "{}/chaos/slow?bytes_per_sec=1000&bytes=100000",
        t.base_url()
    );
    let c = chaos(
        "slow-body",
        &[&url, "-d", "1s", "-c", "2", "--timeout", "300ms"],
        Duration::from_millis(1300),
    );
    all_failed_with(&c, "timeout");
    // Some of the body had arrived when each request timed out.
    assert!(summary_u64(&c.record, "bytes_received") > 0);
}

#[test]
fn a_response_slower_than_the_timeout_times_out_on_time() {
    let c = chaos_at(
        "delay",
        "/delay?ms=5000",
        &["-d", "1s", "-c", "4", "--timeout", "300ms"],
        Duration::from_millis(1300),
    );
    all_failed_with(&c, "timeout");
}

#[test]
fn a_10_mb_body_is_counted_and_discarded_in_bounded_memory() {
    let c = chaos_at(
        "10mb-body",
        "/bytes/10485760",
        &["-n", "20", "-c", "2", "--timeout", "5s"],
        Duration::from_secs(10),
    );
    assert_eq!(status_of(&c.record, "200"), 20, "{}", c.record["summary"]);
    assert!(summary_u64(&c.record, "bytes_received") >= 20 * 10_485_760);
    assert_eq!(c.finished.code, Some(0));
}

#[test]
fn a_body_over_the_limit_is_body_too_large_and_not_downloaded() {
    let c = chaos_at(
        "body-limit",
        "/bytes/10485760",
        &["-n", "20", "-c", "2", "--max-body-size", "1MiB"],
        Duration::from_secs(10),
    );
    all_failed_with(&c, "body_too_large");
    assert_eq!(c.record["config"]["max_body_bytes"], 1 << 20);
    // Refused on its Content-Length: at most a read buffer's worth of each body came in.
    assert!(summary_u64(&c.record, "bytes_received") < 20 * 20 * 1024);
}

#[test]
fn captured_10_mb_bodies_stay_capped() {
    // A check makes volley keep the body; what it keeps is capped (1 MiB per connection).
    let t = target();
    let dir = temp_dir("chaos-capture-plan");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"[target]
base_url = "{}"
[[scenario]]
name = "big"
[scenario.load]
profile = "iterations"
vus = 4
iterations = 20
[[scenario.step]]
name = "ten_mb"
path = "/bytes/10485760"
[scenario.step.checks]
body_contains = "0123"
"#,
            t.base_url()
        ),
    )
    .unwrap();
    let plan = plan.display().to_string();
    let c = chaos("capture", &["run", &plan], Duration::from_secs(10));
    assert_eq!(status_of(&c.record, "200"), 20, "{}", c.record["summary"]);
    assert_eq!(
        c.record["checks"][0]["passed"].as_u64().unwrap()
            + c.record["checks"][0]["failed"].as_u64().unwrap(),
        20
    );
}

#[test]
fn a_thousand_headers_are_header_too_large() {
    let c = chaos_at(
        "1000-headers",
        "/chaos/headers?count=1000",
        &["-n", "20", "-c", "2"],
        Duration::from_secs(5),
    );
    all_failed_with(&c, "header_too_large");
}

#[test]
fn a_1_mb_header_line_is_header_too_large_unless_the_limit_allows_it() {
    let c = chaos_at(
        "1mb-header",
        "/chaos/long-header?bytes=1048576",
        &["-n", "20", "-c", "2"],
        Duration::from_secs(5),
    );
    all_failed_with(&c, "header_too_large");
    assert_eq!(c.record["config"]["max_header_bytes"], 64 * 1024);
    // The client stops reading at its limit: ~64 KiB of each head, not 1 MiB.
    assert!(summary_u64(&c.record, "bytes_received") < 20 * 200 * 1024);

    let c = chaos_at(
        "1mb-header-allowed",
        "/chaos/long-header?bytes=1048576",
        &["-n", "20", "-c", "2", "--max-header-size", "2MiB"],
        Duration::from_secs(5),
    );
    assert_eq!(status_of(&c.record, "200"), 20, "{}", c.record["summary"]);
}

#[test]
fn over_http2_the_same_size_limits_hold() {
    let h2 = |name: &str, path: &str, extra: &[&str]| {
        let mut args = vec!["--http2", "-n", "20", "-c", "2"];
        args.extend_from_slice(extra);
        chaos_at(name, path, &args, Duration::from_secs(10))
    };
    // A body over the limit: the stream is reset once the limit is passed.
    let c = h2(
        "h2-body-limit",
        "/bytes/10485760",
        &["--max-body-size", "1MiB"],
    );
    all_failed_with(&c, "body_too_large");
    assert!(summary_u64(&c.record, "bytes_received") < 20 * (2 << 20));
    // A thousand fields: h2 decodes them (~42 KB by its count), volley refuses the count.
    let c = h2("h2-1000-headers", "/chaos/headers?count=1000", &[]);
    all_failed_with(&c, "header_too_large");
    // A 1 MiB header line is refused by h2 while decoding, which it reports as a protocol
    // error (see `proto::conn::Limits`); allowed by the limit, it is read.
    let c = h2("h2-1mb-header", "/chaos/long-header?bytes=1048576", &[]);
    all_failed_with(&c, "protocol_error");
    let c = h2(
        "h2-1mb-header-allowed",
        "/chaos/long-header?bytes=1048576",
        &["--max-header-size", "2MiB"],
    );
    assert_eq!(status_of(&c.record, "200"), 20, "{}", c.record["summary"]);
}

#[test]
fn invalid_chunked_encoding_is_an_invalid_response() {
    let c = chaos_at(
        "bad-chunked",
        "/chaos/bad-chunked",
        &["-n", "20", "-c", "2"],
        Duration::from_secs(5),
    );
    all_failed_with(&c, "invalid_response");
}

#[test]
fn a_server_that_never_reads_times_out_even_mid_send() {
    let c = chaos_at(
        "deaf",
        "/chaos/deaf",
        &["-d", "1s", "-c", "2", "--timeout", "300ms"],
        Duration::from_millis(1300),
    );
    all_failed_with(&c, "timeout");

    // An 8 MiB body cannot all be sent to a server that never reads: the send itself blocks.
    let dir = temp_dir("chaos-deaf-body");
    let body = dir.join("body.bin");
    std::fs::write(&body, vec![b'x'; 8 << 20]).unwrap();
    let body = body.display().to_string();
    let c = chaos_at(
        "deaf-8mb-post",
        "/chaos/deaf",
        &[
            "-m",
            "POST",
            "--body-file",
            &body,
            "-d",
            "1s",
            "-c",
            "2",
            "--timeout",
            "300ms",
        ],
        Duration::from_millis(1300),
    );
    all_failed_with(&c, "timeout");
    assert_eq!(
        summary_u64(&c.record, "bytes_received"),
        0,
        "nothing ever came back"
    );
}

#[test]
fn a_listener_closed_mid_run_turns_into_refused_connections() {
    let t = server::spawn_with_faults(
        TargetConfig {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            threads: 1,
            capacity: None,
        },
        Faults {
            close_after_requests: Some(500),
            close_after: None,
            stall: None,
        },
    )
    .unwrap();
    let url = format!("{}/", t.base_url());
    let c = chaos(
        "listener-closed",
        &[&url, "-d", "1500ms", "-c", "4", "--timeout", "500ms"],
        Duration::from_secs(2),
    );
    let ok = status_of(&c.record, "200");
    // 500 answered, and those already in the target's handlers when the 500th was (at most one
    // per connection less the 500th's own): a request that reaches an open connection after
    // the close is not answered, however late the listener's task runs.
    assert!((500..=503).contains(&ok), "{}", c.record["summary"]);
    let refused = errors_of(&c.record, "connection_refused");
    assert!(refused > 0, "{}", c.record["summary"]);
    // Requests in flight at the close may end as closed or reset; nothing else.
    let other = summary_u64(&c.record, "errors")
        - refused
        - errors_of(&c.record, "connection_closed")
        - errors_of(&c.record, "connection_reset");
    assert_eq!(other, 0, "{}", c.record["summary"]);
    assert_eq!(c.finished.code, Some(0), "not every request failed");
    let codes = warning_codes(&c.record);
    assert!(codes.contains(&"dominant_error"), "{codes:?}");
}

#[test]
fn a_listener_closed_after_a_time_refuses_the_next_connections() {
    let t = server::spawn_with_faults(
        TargetConfig {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            threads: 1,
            capacity: None,
        },
        Faults {
            close_after_requests: None,
            close_after: Some(Duration::from_millis(1)),
            stall: None,
        },
    )
    .unwrap();
    let started = Instant::now();
    // Closed almost at once: every connection is refused.
    wait_until("the listener to close", Duration::from_secs(5), || {
        std::net::TcpStream::connect(t.addr()).is_err()
    });
    assert!(started.elapsed() < Duration::from_secs(5));
    let url = format!("{}/", t.base_url());
    let c = chaos(
        "listener-closed-time",
        &[&url, "-n", "50", "-c", "2"],
        Duration::from_secs(3),
    );
    all_failed_with(&c, "connection_refused");
}

mod tls {
    //! A TLS handshake that fails: an `https://` client at the built-in target's plain port (the
    //! target answers its ClientHello with a plain-text 400), and listeners that close or say
    //! nothing during the handshake. Driven through the protocol seam, like the engine drives a
    //! request: each exchange inside the request timeout.

    use std::io::Read;
    use std::net::{SocketAddr, TcpListener};
    use std::time::{Duration, Instant};

    use volley::proto::ErrorKind;
    use volley::proto::client::{Client, ClientConfig};
    use volley::proto::conn::ConnPhase as Phase;
    use volley::proto::message::Request;
    use volley::proto::tls::TlsOptions;

    /// Exchanges for about `run` with `timeout` each; returns the kind of every failure.
    async fn hammer(addr: SocketAddr, run: Duration, timeout: Duration) -> Vec<ErrorKind> {
        let config = ClientConfig {
            tls: Some(TlsOptions {
                insecure: true,
                ..TlsOptions::default()
            }),
            ..ClientConfig::http1(addr)
        };
        let client = Client::new(config).unwrap();
        let req = client.prepare(&Request::get("127.0.0.1", "/")).unwrap();
        let mut conn = client.connection();
        let end = Instant::now() + run;
        let mut kinds = Vec::new();
        while Instant::now() < end {
            match tokio::time::timeout(timeout, conn.exchange(&req)).await {
                Ok(Ok(r)) => panic!("a response ({}) from a failed handshake", r.status),
                Ok(Err(kind)) => kinds.push(kind),
                Err(_) => {
                    conn.discard();
                    kinds.push(match conn.phase() {
                        Phase::Connecting => ErrorKind::ConnectTimeout,
                        Phase::Handshaking => ErrorKind::TlsHandshakeTimeout,
                        Phase::Exchanging => ErrorKind::Timeout,
                    });
                }
            }
        }
        kinds
    }

    /// A listener on its own thread: for each connection, reads the ClientHello, then `then`.
    fn raw_listener(then: fn(std::net::TcpStream)) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in l.incoming() {
                let Ok(mut s) = stream else { return };
                let mut hello = [0u8; 512];
                let _ = s.read(&mut hello);
                then(s);
            }
        });
        addr
    }

    #[tokio::test]
    async fn https_to_the_plain_port_is_a_tls_error() {
        let t = crate::common::target();
        let started = Instant::now();
        let kinds = hammer(t.addr(), Duration::from_secs(1), Duration::from_millis(300)).await;
        assert!(started.elapsed() < Duration::from_secs(3));
        assert!(kinds.len() > 10, "{}", kinds.len());
        assert!(kinds.iter().all(|k| *k == ErrorKind::Tls), "{kinds:?}");
        tokio::task::spawn_blocking(move || t.stop()).await.unwrap();
    }

    #[tokio::test]
    async fn a_close_or_garbage_during_the_handshake_is_a_tls_error() {
        let closes = raw_listener(drop);
        let kinds = hammer(
            closes,
            Duration::from_millis(300),
            Duration::from_millis(300),
        )
        .await;
        assert!(
            !kinds.is_empty() && kinds.iter().all(|k| *k == ErrorKind::Tls),
            "{kinds:?}"
        );

        let garbage = raw_listener(|mut s| {
            use std::io::Write;
            let _ = s.write_all(b"\x16\x03\x03\x00\x04garbage, not a ServerHello");
        });
        let kinds = hammer(
            garbage,
            Duration::from_millis(300),
            Duration::from_millis(300),
        )
        .await;
        assert!(
            !kinds.is_empty() && kinds.iter().all(|k| *k == ErrorKind::Tls),
            "{kinds:?}"
        );
    }

    #[tokio::test]
    async fn a_handshake_never_answered_is_a_tls_handshake_timeout() {
        // Reads the ClientHello and holds the connection without a word.
        let silent = raw_listener(|s| {
            std::thread::spawn(move || {
                let mut s = s;
                let mut sink = [0u8; 64];
                while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
            });
        });
        let started = Instant::now();
        let kinds = hammer(
            silent,
            Duration::from_millis(500),
            Duration::from_millis(200),
        )
        .await;
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(
            !kinds.is_empty() && kinds.iter().all(|k| *k == ErrorKind::TlsHandshakeTimeout),
            "TCP was accepted: the timeout is the TLS handshake's, not the connect's: {kinds:?}"
        );
    }
}
