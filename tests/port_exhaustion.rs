//! Ephemeral-port exhaustion, forced and then avoided with source addresses.
//!
//! The outer test re-runs this test binary inside a new network namespace (`unshare -n`, so the
//! namespace is private to the child and vanishes with it) whose ephemeral port range is four
//! ports. Inside, eight no-keep-alive connections held open at once cannot all get a port: some
//! fail with "address not available" (EADDRNOTAVAIL). Spread over four source addresses
//! (127.0.0.2-127.0.0.5) the same load gets sixteen (address, port) pairs and succeeds.
//!
//! Needs root (or CAP_SYS_ADMIN) for `unshare -n` and `sysctl`; without them the test says so
//! and passes without checking anything.

mod common;

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use volley::proto::ErrorKind;
use volley::proto::client::{Client, ClientConfig};
use volley::proto::message::Request;
use volley::proto::source::parse_source_addrs;
use volley::target::{self, TargetConfig};

/// Marks the run inside the namespace.
const INSIDE: &str = "VOLLEY_TEST_INSIDE_NETNS";
/// The namespace's ephemeral port range: four ports.
const PORT_RANGE: &str = "40000 40003";
/// Connections held open at once (more than four ports allow).
const CONCURRENT: usize = 8;

#[test]
fn exhausts_ports_without_source_addrs_and_not_with_them() {
    let exe = std::env::current_exe().unwrap();
    let script = format!(
        "ip link set lo up && sysctl -qw net.ipv4.ip_local_port_range='{PORT_RANGE}' && exec '{}' --exact inside_a_small_port_range --ignored --nocapture",
        exe.display()
    );
    let probe = Command::new("unshare").args(["-n", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: `unshare -n` is not permitted here (needs root or CAP_SYS_ADMIN)");
        return;
    }
    let out = Command::new("unshare")
        .args(["-n", "sh", "-c", &script])
        .env(INSIDE, "1")
        .output()
        .expect("unshare runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "inner run failed:\n{stdout}\n{stderr}"
    );
    // The inner run's finding, for the reader of --nocapture output.
    for line in stderr.lines().filter(|l| l.contains("EADDRNOTAVAIL")) {
        eprintln!("{line}");
    }
}

/// Runs only inside the namespace made by the test above.
#[test]
#[ignore = "run by exhausts_ports_without_source_addrs_and_not_with_them in a network namespace"]
fn inside_a_small_port_range() {
    assert_eq!(
        std::env::var(INSIDE).as_deref(),
        Ok("1"),
        "only meaningful inside the test's network namespace"
    );
    // A fixed port outside the tiny ephemeral range: the namespace is private.
    let target = target::spawn(TargetConfig {
        bind: "127.0.0.1:18080".parse().unwrap(),
        threads: 1,
        capacity: None,
    })
    .expect("target starts");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let addr = target.addr();

    let without = runtime.block_on(burst(addr, ""));
    let refused = without
        .iter()
        .filter(|r| **r == Err(ErrorKind::AddrNotAvailable))
        .count();
    assert!(
        refused > 0,
        "{CONCURRENT} connections fit in 4 ports? {without:?}"
    );
    assert!(
        without
            .iter()
            .all(|r| matches!(r, Ok(200) | Err(ErrorKind::AddrNotAvailable))),
        "{without:?}"
    );
    eprintln!("without source addresses: {refused} of {CONCURRENT} got EADDRNOTAVAIL");

    let with = runtime.block_on(burst(addr, "127.0.0.2-127.0.0.5"));
    assert!(with.iter().all(|r| *r == Ok(200)), "{with:?}");
    drop(runtime);
    target.stop();
}

/// `CONCURRENT` no-keep-alive requests to `/delay?ms=300` at once; their statuses or errors.
async fn burst(addr: SocketAddr, sources: &str) -> Vec<Result<u16, ErrorKind>> {
    let source_addrs = if sources.is_empty() {
        Vec::new()
    } else {
        parse_source_addrs(sources).unwrap()
    };
    let client = Client::new(ClientConfig {
        keepalive: false,
        source_addrs,
        ..ClientConfig::http1(addr)
    })
    .unwrap();
    let req = client
        .prepare(&Request::get("127.0.0.1", "/delay?ms=300"))
        .unwrap();
    let tasks: Vec<_> = (0..CONCURRENT)
        .map(|_| {
            let mut conn = client.connection();
            let req = req.clone();
            tokio::spawn(async move {
                tokio::time::timeout(Duration::from_secs(10), conn.exchange(&req))
                    .await
                    .expect("finishes in time")
                    .map(|r| r.status)
            })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}
