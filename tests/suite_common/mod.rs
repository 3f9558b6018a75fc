//! Helpers shared by the suite tests: processes by PID, free ports, records, the example suite.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{closed_port, volley};

/// The state and process group of `pid` from /proc, if it exists.
pub fn stat(pid: u64) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid pgrp …": comm may hold spaces, so split after its ')'.
    let mut fields = text.rsplit(')').next()?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgrp = fields.nth(1)?.parse().ok()?;
    Some((state, pgrp))
}

/// Whether `pid` is a running process (a zombie, dead but not yet reaped, is not).
pub fn alive(pid: u64) -> bool {
    stat(pid).is_some_and(|(state, _)| state != 'Z')
}

/// Running processes in process group `pgid` (a suite starts each command in a group of its
/// own, whose ID is the command's PID).
pub fn group(pgid: u64) -> Vec<u64> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
        .filter(|&pid| stat(pid).is_some_and(|(state, g)| g == pgid && state != 'Z'))
        .collect()
}

/// Polls `done` every 20 ms until it holds; fails after `limit`, saying `what` was awaited.
pub fn poll_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(
            Instant::now() < deadline,
            "gave up after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls until `pid` and everything in its process group are gone (a process that died is
/// reaped by its parent or init a moment later).
pub fn assert_gone(pid: u64) {
    poll_until(
        &format!("process {pid} and its group to end"),
        Duration::from_secs(10),
        || !alive(pid) && group(pid).is_empty(),
    );
}

/// `n` distinct loopback ports with nothing listening.
pub fn free_ports(n: usize) -> Vec<u16> {
    let mut ports: Vec<u16> = Vec::new();
    while ports.len() < n {
        let p = closed_port();
        if !ports.contains(&p) {
            ports.push(p);
        }
    }
    ports
}

/// Reads a JSON file of a suite's results; a `run.json` or `suite.json` passes volley's own
/// verifier first (a suite's with every record it names).
pub fn read_json(path: &Path) -> Value {
    if path
        .file_name()
        .is_some_and(|n| n == "run.json" || n == "suite.json")
    {
        crate::common::verified(path);
    }
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

pub fn target<'a>(suite: &'a Value, name: &str) -> &'a Value {
    suite["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no target {name} in {suite:#}"))
}

/// The PIDs a suite recorded for the processes it started.
pub fn pids(suite: &Value) -> Vec<u64> {
    suite["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["pid"].as_u64())
        .collect()
}

/// The examples, copied into `dir` with their ports replaced by free ones.
pub fn example_suite(dir: &Path) -> (PathBuf, Vec<u16>) {
    let ports = free_ports(3);
    let mut text = std::fs::read_to_string("examples/suite.toml").unwrap();
    for (fixed, free) in ["18081", "18082", "18083"].iter().zip(&ports) {
        assert!(
            text.contains(fixed),
            "examples/suite.toml uses port {fixed}"
        );
        text = text.replace(fixed, &free.to_string());
    }
    let suite = dir.join("suite.toml");
    std::fs::write(&suite, text).unwrap();
    std::fs::copy("examples/suite-plan.toml", dir.join("suite-plan.toml")).unwrap();
    (suite, ports)
}

/// Runs `volley suite SUITE ARGS… --out DIR/results`: (exit code, stdout, stderr).
pub fn suite(suite: &Path, dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = volley()
        .arg("suite")
        .arg(suite)
        .args(args)
        .arg("--out")
        .arg(dir.join("results"))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A plan that waits `{{ vars.ms }}` ms per request (1 ms unless set), 2 VUs for 1 s.
pub const DELAY_PLAN: &str = r#"
[target]
base_url = "http://127.0.0.1:1"
[vars]
ms = 1
[[scenario]]
name = "wait"
[scenario.load]
profile = "constant-vus"
vus = 2
duration = "1s"
[[scenario.step]]
name = "delay"
path = "/delay?ms={{ vars.ms }}"
"#;
