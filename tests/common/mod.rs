//! Helpers shared by the integration tests: a built-in target on 127.0.0.1:0, the volley binary,
//! and reading its records.
#![allow(dead_code)]

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;
use volley::target::{self, Capacity, RunningTarget, TargetConfig};

/// Starts the built-in target on an ephemeral loopback port.
pub fn target() -> RunningTarget {
    target::spawn(TargetConfig {
        bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        threads: 1,
        capacity: None,
    })
    .expect("target starts")
}

/// Starts the built-in target in capacity mode.
pub fn capacity_target(workers: usize, service_time: Duration) -> RunningTarget {
    target::spawn(TargetConfig {
        bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        threads: 1,
        capacity: Some(Capacity {
            workers,
            service_time,
        }),
    })
    .expect("target starts")
}

/// A fresh, empty folder for one test's files.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("volley-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The volley binary under test, run in a scratch folder so the results folder every run writes
/// (`volley-results/` by default) never lands in the checkout.
pub fn volley() -> Command {
    let scratch = std::env::temp_dir().join(format!("volley-test-cwd-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_volley"));
    c.current_dir(scratch);
    c
}

/// The only subfolder of `dir` (a results folder written with `--out dir`).
pub fn only_subfolder(dir: &Path) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

/// Runs volley and returns (exit code, stdout, stderr).
pub fn run_volley(args: &[&str]) -> (Option<i32>, String, String) {
    let out = volley().args(args).output().expect("volley runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs volley with `args` plus `--json <dir>/run.json -q`, returns its output and the record.
pub fn run_json(dir: &Path, args: &[&str]) -> (Output, Value) {
    let path = dir.join("run.json");
    let _ = std::fs::remove_file(&path);
    let out = volley()
        .args(args)
        .arg("--json")
        .arg(&path)
        .arg("--out")
        .arg(dir.join("results"))
        .arg("-q")
        .output()
        .expect("volley runs");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "no record at {} ({e}); stderr: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, serde_json::from_str(&text).expect("record is JSON"))
}

/// `record.summary[key]` as u64.
pub fn summary_u64(record: &Value, key: &str) -> u64 {
    record["summary"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("summary.{key} missing in {}", record["summary"]))
}

/// `record.summary[key]` as f64.
pub fn summary_f64(record: &Value, key: &str) -> f64 {
    record["summary"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("summary.{key} missing in {}", record["summary"]))
}

/// `record.summary.errors_by_kind[kind]`, 0 when absent.
pub fn errors_of(record: &Value, kind: &str) -> u64 {
    record["summary"]["errors_by_kind"][kind]
        .as_u64()
        .unwrap_or(0)
}

/// `record.summary.status[code]`, 0 when absent.
pub fn status_of(record: &Value, code: &str) -> u64 {
    record["summary"]["status"][code].as_u64().unwrap_or(0)
}

/// A loopback port with nothing listening (bound, then released).
pub fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    l.local_addr().unwrap().port()
}

/// Serialises the timing-sensitive tests of one test binary: on a 2-core machine two load tests
/// at once would measure each other.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A plain GET over HTTP/1.1 (`base` is `http://host:port`); the whole response, head and body.
pub fn http_get(base: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}
