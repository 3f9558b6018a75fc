//! Memory per open connection stays bounded: 5,000 HTTP/1.1 connections held open against the
//! built-in target, and volley's peak RSS stays under a generous bound per connection. With the
//! former 16 KiB read buffer per connection (22 KiB per connection in all, bench/README.md,
//! "Memory per connection") this run peaked near 120 MiB; with the dial futures inline in every
//! exchange's future (7.8 KiB per connection) about 54 MiB; it now takes about 41 MiB.

mod common;

use common::*;
use nix::sys::resource::{Resource, getrlimit, setrlimit};

/// Connections held open by the run.
const CONNECTIONS: u64 = 5_000;
/// RSS allowed besides the connections (runtime, recorder, binary), bytes.
const BASE_BYTES: u64 = 30 << 20;
/// RSS allowed per opened connection, bytes: the 8 KiB issue 14 asks for, generous against the
/// ~5.2 KiB measured, and far below the 22 KiB the 16 KiB buffer cost.
const PER_CONNECTION_BYTES: u64 = 8 << 10;

#[test]
fn five_thousand_connections_stay_in_bounded_memory() {
    let _serial = serial();
    // Volley (a child: it inherits the limit) and the in-process target each hold one socket
    // per connection.
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    let want = 2 * CONNECTIONS + 1_000;
    if soft < want {
        assert!(
            hard >= want,
            "this test needs {want} open files (hard limit {hard}); raise `ulimit -Hn`"
        );
        setrlimit(Resource::RLIMIT_NOFILE, want, hard).unwrap();
    }
    let t = target();
    let dir = temp_dir("connection-memory");
    let url = format!("{}/", t.base_url());
    let c = CONNECTIONS.to_string();
    let finished = spawn_volley(&dir, &[&url, "-c", &c, "-d", "3s", "--threads", "1"], &[])
        .wait(std::time::Duration::from_secs(60));
    let rec = valid_record(&dir.join("run.json"));
    let opened = summary_u64(&rec, "connections_opened");
    assert!(summary_u64(&rec, "requests") > 0, "{}", rec["summary"]);
    // Generous: on a busy machine some connections may still be opening when the run ends.
    assert!(
        opened >= CONNECTIONS * 8 / 10,
        "only {opened} connections opened: {}",
        finished.stderr
    );
    let bound = BASE_BYTES + opened * PER_CONNECTION_BYTES;
    assert!(
        finished.peak_rss_bytes < bound,
        "peak RSS {} MiB for {opened} connections (bound {} MiB)",
        finished.peak_rss_bytes >> 20,
        bound >> 20
    );
}
