//! Ctrl-C in the middle of `volley suite`: the run stops, the started processes go (checked by
//! PID), the reports are still written; a second Ctrl-C kills what is left and exits at once.

mod common;
mod suite_common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{closed_port, only_subfolder, serial, temp_dir, volley};
use suite_common::*;

/// Writes `plan.toml` in `dir`: `vus` VUs getting `/` for 60 s (the suite is interrupted first).
fn long_plan(dir: &std::path::Path, vus: u32) {
    std::fs::write(
        dir.join("plan.toml"),
        format!(
            r#"
[target]
base_url = "http://127.0.0.1:1"
[[scenario]]
name = "get"
[scenario.load]
profile = "constant-vus"
vus = {vus}
duration = "60s"
[[scenario.step]]
name = "root"
path = "/"
"#
        ),
    )
    .unwrap();
}

/// GET `path` on 127.0.0.1:`port`; the body, or "" when nothing answers.
fn get(port: u16, path: &str) -> String {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    );
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    text
}

/// Requests the built-in target has answered on `/` with 200.
fn served(port: u16) -> u64 {
    let metrics = get(port, "/metrics");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("volley_target_requests_total{path=\"/\",status=\"200\"} "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn ctrl_c_stops_the_run_and_the_processes_and_still_reports() {
    let _serial = serial();
    let dir = temp_dir("suite-interrupt");
    let ports = free_ports(2);
    long_plan(&dir, 4);
    std::fs::write(
        dir.join("suite.toml"),
        format!(
            r#"
name = "interrupted"
plan = "plan.toml"
[[target]]
name = "first"
base_url = "http://127.0.0.1:{0}"
command = ["volley", "serve", "--port", "{0}", "--threads", "1"]
[[target]]
name = "second"
base_url = "http://127.0.0.1:{1}"
command = ["volley", "serve", "--port", "{1}", "--threads", "1"]
"#,
            ports[0], ports[1]
        ),
    )
    .unwrap();
    let results = dir.join("results");
    let (mut child, lines) = spawn_suite(&dir);
    // Wait until the first target is healthy, then until its run has sent real load.
    wait_for_line(&lines, "first: healthy after");
    poll_until("load on the first target", Duration::from_secs(30), || {
        served(ports[0]) >= 200
    });
    let volley_pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(volley_pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let mut status = None;
    poll_until(
        "volley suite to stop on SIGINT",
        Duration::from_secs(30),
        || {
            status = child.try_wait().unwrap();
            status.is_some()
        },
    );
    assert_eq!(status.unwrap().code(), Some(130));

    let folder = only_subfolder(&results);
    let s = read_json(&folder.join("suite.json"));
    assert_eq!(s["interrupted"], "SIGINT");
    let first = target(&s, "first");
    assert_eq!(first["status"], "interrupted", "{first:#}");
    assert_eq!(
        first["cause"], "interrupted by SIGINT during the run",
        "{first:#}"
    );
    let run = read_json(&folder.join("first/run.json"));
    assert_eq!(run["interrupted"], "SIGINT");
    assert!(
        run["summary"]["requests"].as_u64().unwrap() >= 100,
        "{run:#}"
    );
    assert!(run["summary"]["duration_s"].as_f64().unwrap() < 30.0);
    assert!(
        first["stopped"]
            .as_str()
            .unwrap()
            .starts_with("stopped by SIGTERM")
    );
    let second = target(&s, "second");
    assert_eq!(second["status"], "not_run", "{second:#}");
    assert!(second["pid"].is_null(), "never started");
    for pid in pids(&s) {
        assert_gone(pid);
    }
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(md.contains("Interrupted by SIGINT"), "{md}");
    assert!(
        md.contains("> - second — not run: the suite was interrupted (SIGINT) before its turn"),
        "{md}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_second_ctrl_c_kills_the_started_processes_and_exits_at_once() {
    let _serial = serial();
    let dir = temp_dir("suite-second-interrupt");
    // The target is a shell that ignores SIGTERM and runs the built-in target in its process
    // group: after the first Ctrl-C the server goes, the shell stays, and the suite would wait
    // out the shell's (long) grace period — unless told twice.
    let port = closed_port();
    long_plan(&dir, 2);
    std::fs::write(
        dir.join("suite.toml"),
        format!(
            r#"
plan = "plan.toml"
[[target]]
name = "stubborn"
base_url = "http://127.0.0.1:{port}"
command = ["sh", "-c", "trap '' TERM; \"$VOLLEY_BIN\" serve --port {port} --threads 1 & while :; do sleep 0.1; done"]
stop_grace = "60s"
"#
        ),
    )
    .unwrap();
    let (mut child, lines) = spawn_suite(&dir);
    let pid = started_pid(&lines, "stubborn");
    wait_for_line(&lines, "stubborn: healthy after");
    poll_until("load on the target", Duration::from_secs(30), || {
        served(port) >= 100
    });
    let volley_pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(volley_pid, nix::sys::signal::Signal::SIGINT).unwrap();
    wait_for_line(&lines, "stopping the current run");
    assert!(
        alive(pid),
        "SIGTERM is ignored: the process waits out its grace period"
    );
    assert!(
        group(pid).len() >= 2,
        "the shell and its children: {:?}",
        group(pid)
    );
    let asked = Instant::now();
    nix::sys::signal::kill(volley_pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let mut status = None;
    poll_until(
        "volley suite to exit on a second SIGINT",
        Duration::from_secs(10),
        || {
            status = child.try_wait().unwrap();
            status.is_some()
        },
    );
    assert_eq!(status.unwrap().code(), Some(130));
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "not the 60 s grace period"
    );
    assert_gone(pid);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_killed_suite_leaves_no_target_running() {
    let _serial = serial();
    let dir = temp_dir("suite-sigkill");
    let port = closed_port();
    long_plan(&dir, 1);
    std::fs::write(
        dir.join("suite.toml"),
        format!(
            r#"
plan = "plan.toml"
[[target]]
name = "orphan"
base_url = "http://127.0.0.1:{port}"
command = ["volley", "serve", "--port", "{port}", "--threads", "1"]
"#
        ),
    )
    .unwrap();
    let (mut child, lines) = spawn_suite(&dir);
    let pid = started_pid(&lines, "orphan");
    wait_for_line(&lines, "orphan: healthy after");
    assert!(alive(pid));
    // SIGKILL: volley gets no chance to stop anything; the kernel must.
    child.kill().unwrap();
    child.wait().unwrap();
    assert_gone(pid);
    assert!(get(port, "/").is_empty(), "nothing answers on the port");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Starts `volley suite DIR/suite.toml --out DIR/results`; its stderr comes line by line.
fn spawn_suite(dir: &std::path::Path) -> (std::process::Child, mpsc::Receiver<String>) {
    let mut child = volley()
        .arg("suite")
        .arg(dir.join("suite.toml"))
        .arg("--out")
        .arg(dir.join("results"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = lines_of(child.stderr.take().unwrap());
    (child, lines)
}

/// Waits for "TARGET: started (pid N)" and returns N.
fn started_pid(lines: &mpsc::Receiver<String>, target: &str) -> u64 {
    let started = wait_for_line(lines, &format!("{target}: started"));
    started
        .split("(pid ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in `{started}`"))
}

/// The lines of a child's output, as they come.
fn lines_of(out: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits (at most 30 s) for a line containing `needle`; returns it.
fn wait_for_line(lines: &mpsc::Receiver<String>, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return line,
            Ok(_) => {}
            Err(e) => panic!("no line with `{needle}` ({e})"),
        }
    }
}
