//! Helpers shared by the integration tests: a built-in target on 127.0.0.1:0, the volley binary,
//! and reading its records.
#![allow(dead_code)]

pub mod coordinated;
pub mod deadline;
pub mod intervals;
pub mod query_api;
pub mod source;
pub mod streams;
pub mod tmux;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;
use volley::server::{self, Capacity, RunningTarget, TargetConfig};

/// Starts the built-in target on an ephemeral loopback port.
pub fn target() -> RunningTarget {
    server::spawn(TargetConfig {
        bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        threads: 1,
        capacity: None,
    })
    .expect("target starts")
}

/// Starts the built-in target in capacity mode.
pub fn capacity_target(workers: usize, service_time: Duration) -> RunningTarget {
    server::spawn(TargetConfig {
        bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        threads: 1,
        capacity: Some(Capacity {
            workers,
            service_time,
        }),
    })
    .expect("target starts")
}

/// The codes of a record's warnings (`rate_not_achieved`, `interrupted`, …).
pub fn warning_codes(record: &Value) -> Vec<&str> {
    record["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect()
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

/// `volley serve --port 0 --threads 1` as a process of its own (stdout read, stderr piped),
/// once it has printed its first line (the address: its signal handlers are in place by then);
/// returns it and that line.
pub fn serve_process() -> (std::process::Child, String) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = volley()
        .args(["serve", "--port", "0", "--threads", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line)
}

/// The README and every Markdown chapter of `docs/`, README first.
pub fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root.join("README.md"));
    docs
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

/// Checks every invariant of the records `path` stands for (a record, a results folder, a
/// folder of repeats, a suite folder; docs/measurement.md, "Invariants") with volley's own
/// verifier, as `volley verify` does; fails the test with each violation. Every test that
/// writes a record passes it through here (most through [`run_json`], [`valid_record`],
/// [`assert_complete_results`] or [`run_repeats`]).
pub fn verified(path: &Path) {
    let checked = volley::analysis::verify::verify_path(path)
        .unwrap_or_else(|e| panic!("{}: cannot verify: {e}", path.display()));
    let broken: Vec<String> = checked
        .iter()
        .flat_map(|c| {
            c.violations
                .iter()
                .map(move |v| format!("{}: {v}", c.file.display()))
        })
        .collect();
    assert!(
        broken.is_empty(),
        "records that break their invariants:\n{}",
        broken.join("\n")
    );
}

/// The exit code a record says its run ended with (`outcome.exit_code`).
pub fn recorded_exit_code(record: &Value) -> Option<i32> {
    record["outcome"]["exit_code"].as_i64().map(|c| c as i32)
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
    verified(&path);
    let record: Value = serde_json::from_str(&text).expect("record is JSON");
    assert_eq!(
        out.status.code(),
        recorded_exit_code(&record),
        "the exit code and the record's outcome disagree: {}",
        record["outcome"]
    );
    (out, record)
}

/// Like [`run_json`], for a run that must end with exit code 0 (its stderr shown if not).
pub fn run_json_ok(dir: &Path, args: &[&str]) -> Value {
    let (out, record) = run_json(dir, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    record
}

/// The record's group of `kind` (`scenario`, `step`, `phase`) named `name`.
pub fn group<'a>(record: &'a Value, kind: &str, name: &str) -> &'a Value {
    record["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["kind"] == kind && g["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} group {name}: {}", record["groups"]))
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

/// A step group's `field` in the record (`requests`, `errors`, …).
pub fn step_u64(record: &Value, name: &str, field: &str) -> u64 {
    let groups = record["groups"].as_array().unwrap();
    let step = groups
        .iter()
        .find(|g| g["kind"] == "step" && g["name"] == name);
    step.and_then(|g| g[field].as_u64())
        .unwrap_or_else(|| panic!("no step {name} with {field}: {}", record["groups"]))
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

/// Validates a record against the committed `schema/run.schema.json`; returns the violations.
pub fn schema_errors(record: &Value) -> Vec<String> {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/run.schema.json");
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        jsonschema::validator_for(&schema).unwrap()
    });
    validator
        .iter_errors(record)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

/// Reads a record file and checks it is whole: JSON, valid against the schema, and readable by
/// volley's own reader.
pub fn valid_record(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no record at {}: {e}", path.display()));
    let record: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON (truncated?): {e}", path.display()));
    let errors = schema_errors(&record);
    assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
    volley::record::read_record(path).unwrap();
    verified(path);
    record
}

/// Checks a results folder: every file whole, the record valid, no temporary file left.
pub fn assert_complete_results(dir: &Path) -> Value {
    let record = valid_record(&dir.join("run.json"));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.trim_end().ends_with("</html>"),
        "report.html truncated"
    );
    for name in ["report.md", "summary.txt"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(text.ends_with('\n') && text.len() > 100, "{name} truncated");
    }
    assert_no_temporary_files(dir);
    record
}

/// No `.NAME.tmp-PID` file of an atomic write is left in `dir`.
pub fn assert_no_temporary_files(dir: &Path) {
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(
        left.is_empty(),
        "temporary files left in {}: {left:?}",
        dir.display()
    );
}

/// A volley process started by a test, its output going to files in its folder.
pub struct Spawned {
    pub child: std::process::Child,
    pub dir: PathBuf,
    pub started: std::time::Instant,
}

/// How a [`Spawned`] process ended.
#[derive(Debug)]
pub struct Finished {
    /// The exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// From start to exit.
    pub elapsed: Duration,
    /// Peak resident set size of the process, bytes (the kernel's own count, from `wait4`).
    pub peak_rss_bytes: u64,
    pub stderr: String,
}

/// Starts volley with `args`, writing `<dir>/run.json` (`--json`) and `<dir>/results/`, `-q`.
pub fn spawn_volley(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Spawned {
    let file = |name: &str| std::fs::File::create(dir.join(name)).unwrap();
    let mut cmd = volley();
    cmd.args(args)
        .arg("--json")
        .arg(dir.join("run.json"))
        .arg("--out")
        .arg(dir.join("results"))
        .arg("-q")
        .stdin(std::process::Stdio::null())
        .stdout(file("stdout.txt"))
        .stderr(file("stderr.txt"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    Spawned {
        child: cmd.spawn().expect("volley starts"),
        dir: dir.to_path_buf(),
        started: std::time::Instant::now(),
    }
}

impl Spawned {
    /// Sends `signal` to the process.
    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
    }

    /// Waits for the exit (killing the process after `limit`, then failing), following its
    /// peak RSS meanwhile.
    ///
    /// The peak is the largest `VmHWM` (the high-water mark of the program's memory) read from
    /// `/proc/PID/status` every 5 ms until the exit; it misses at most the last 5 ms. Not
    /// `wait4`'s `ru_maxrss`: Linux carries that across `execve`, so it would count this test
    /// process, which volley was forked from.
    pub fn wait(self, limit: Duration) -> Finished {
        let pid = self.child.id() as i32;
        let deadline = self.started + limit;
        let status_file = format!("/proc/{pid}/status");
        let mut peak_kib = 0;
        loop {
            if let Some(kib) = std::fs::read_to_string(&status_file).ok().and_then(|s| {
                let line = s.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
                line.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()
            }) {
                peak_kib = peak_kib.max(kib);
            }
            if let Some(status) = try_wait(pid) {
                let stderr =
                    std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap_or_default();
                let (code, signal) = decode_status(status);
                assert!(
                    signal.is_none(),
                    "volley was killed by signal {signal:?}: {stderr}"
                );
                return Finished {
                    code,
                    elapsed: self.started.elapsed(),
                    peak_rss_bytes: peak_kib * 1024,
                    stderr,
                };
            }
            if std::time::Instant::now() > deadline {
                self.signal(nix::sys::signal::Signal::SIGKILL);
                panic!("volley still ran after {limit:?}");
            }
            // Polls the exit (not a synchronisation: the exit itself is what is awaited).
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// `waitpid(pid, WNOHANG)`: the exit status once the process has exited.
fn try_wait(pid: i32) -> Option<nix::sys::wait::WaitStatus> {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    match waitpid(nix::unistd::Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)) {
        Ok(WaitStatus::StillAlive) | Err(nix::errno::Errno::EINTR) => None,
        Ok(status) => Some(status),
        Err(e) => panic!("waitpid: {e}"),
    }
}

/// (exit code, terminating signal).
fn decode_status(status: nix::sys::wait::WaitStatus) -> (Option<i32>, Option<i32>) {
    use nix::sys::wait::WaitStatus;
    match status {
        WaitStatus::Exited(_, code) => (Some(code), None),
        WaitStatus::Signaled(_, signal, _) => (None, Some(signal as i32)),
        _ => (None, None),
    }
}

/// Requests the target has answered on `path` with `status` (from its `/metrics`).
pub fn served(target: &RunningTarget, path: &str, status: u16) -> u64 {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(target.addr()).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let key = format!("volley_target_requests_total{{path=\"{path}\",status=\"{status}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&key))
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// Polls `condition` every 5 ms until it holds; fails after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + limit;
    while !condition() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Copies the records of repeats `which` of `folder` into a new folder of repeats.
pub fn subset(folder: &Path, which: impl Iterator<Item = u32>, into: &Path) -> PathBuf {
    for i in which {
        let to = into.join(format!("repeat-{i}"));
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(
            folder.join(format!("repeat-{i}/run.json")),
            to.join("run.json"),
        )
        .unwrap();
    }
    into.to_path_buf()
}

/// Quick mode against `url`, `n` times (`--repeat n`, 4 connections, 1 thread, each `seconds`
/// long) into `dir/results`: the repeats folder and stdout.
pub fn run_repeats(dir: &Path, url: &str, n: u32, seconds: u32) -> (PathBuf, String) {
    let out = dir.join("results");
    let (code, stdout, stderr) = run_volley(&[
        url,
        "-c",
        "4",
        "-d",
        &format!("{seconds}s"),
        "--threads",
        "1",
        "--repeat",
        &n.to_string(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let folder = only_subfolder(&out);
    verified(&folder);
    (folder, stdout)
}

/// A plan's `[[scenario]]` named `name`: `vus` VUs for `seconds` s (constant), taking the steps
/// `steps` in turn, each `(name, ms)` a `GET /delay?ms=ms`.
pub fn delay_scenario(name: &str, vus: u32, seconds: u32, steps: &[(&str, u32)]) -> String {
    let steps: String = steps
        .iter()
        .map(|(step, ms)| {
            format!("[[scenario.step]]\nname = \"{step}\"\npath = \"/delay?ms={ms}\"\n")
        })
        .collect();
    format!(
        "[[scenario]]\nname = \"{name}\"\n[scenario.load]\nprofile = \"constant-vus\"\n\
         vus = {vus}\nduration = \"{seconds}s\"\n{steps}"
    )
}

/// Every `run.json` under `dir`, at any depth.
pub fn records_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(records_under(&path));
        } else if path.file_name().is_some_and(|n| n == "run.json") {
            found.push(path);
        }
    }
    found
}
