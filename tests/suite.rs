//! `volley suite` end to end: the example suite (three `volley serve` processes of different
//! capacity, started by the suite) in short; a suite whose targets fail at each step; Ctrl-C in
//! the middle of a suite. Every process a suite starts must be gone afterwards, checked by PID.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{closed_port, only_subfolder, serial, temp_dir, volley};
use serde_json::Value;

/// The state and process group of `pid` from /proc, if it exists.
fn stat(pid: u64) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid pgrp …": comm may hold spaces, so split after its ')'.
    let mut fields = text.rsplit(')').next()?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgrp = fields.nth(1)?.parse().ok()?;
    Some((state, pgrp))
}

/// Whether `pid` is a running process (a zombie, dead but not yet reaped, is not).
fn alive(pid: u64) -> bool {
    stat(pid).is_some_and(|(state, _)| state != 'Z')
}

/// Running processes in process group `pgid` (a suite starts each command in a group of its
/// own, whose ID is the command's PID).
fn group(pgid: u64) -> Vec<u64> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
        .filter(|&pid| stat(pid).is_some_and(|(state, g)| g == pgid && state != 'Z'))
        .collect()
}

/// Polls `done` every 20 ms until it holds; fails after `limit`, saying `what` was awaited.
fn poll_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
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
fn assert_gone(pid: u64) {
    poll_until(
        &format!("process {pid} and its group to end"),
        Duration::from_secs(10),
        || !alive(pid) && group(pid).is_empty(),
    );
}

/// `n` distinct loopback ports with nothing listening.
fn free_ports(n: usize) -> Vec<u16> {
    let mut ports: Vec<u16> = Vec::new();
    while ports.len() < n {
        let p = closed_port();
        if !ports.contains(&p) {
            ports.push(p);
        }
    }
    ports
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn target<'a>(suite: &'a Value, name: &str) -> &'a Value {
    suite["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no target {name} in {suite:#}"))
}

/// The PIDs a suite recorded for the processes it started.
fn pids(suite: &Value) -> Vec<u64> {
    suite["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["pid"].as_u64())
        .collect()
}

/// The examples, copied into `dir` with their ports replaced by free ones.
fn example_suite(dir: &Path) -> (PathBuf, Vec<u16>) {
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

#[test]
fn the_example_suite_ranks_three_capacities_in_order() {
    let _serial = serial();
    let dir = temp_dir("suite-example");
    let (suite, _) = example_suite(&dir);
    let results = dir.join("results");
    // Five times shorter than the example: a 3.4 s ramp per target after a 0.7 s smoke run.
    let out = volley()
        .arg("suite")
        .arg(&suite)
        .args(["--time-scale", "0.2", "--out"])
        .arg(&results)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let folder = only_subfolder(&results);
    assert!(
        folder
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("capacity-")
    );
    let s = read_json(&folder.join("suite.json"));

    // Throughput follows capacity (8, 4, 2 workers × 4 ms: at most 2000, 1000, 500 req/s), and
    // none exceeds what its capacity allows.
    let mut rps = Vec::new();
    for (name, max_rps) in [
        ("eight-workers", 2000.0),
        ("four-workers", 1000.0),
        ("two-workers", 500.0),
    ] {
        let t = target(&s, name);
        assert_eq!(t["status"], "ran", "{t:#}");
        assert_eq!(t["smoke"]["passed"], true, "{t:#}");
        let run = read_json(&folder.join(name).join("run.json"));
        assert_eq!(run["name"], name);
        let r = run["summary"]["rps"].as_f64().unwrap();
        assert!(r <= max_rps * 1.05, "{name}: {r} req/s above its capacity");
        assert!(r >= max_rps * 0.5, "{name}: {r} req/s, far below {max_rps}");
        assert_eq!(run["summary"]["errors"], 0, "{name}");
        rps.push(r);
        let log = std::fs::read_to_string(folder.join(name).join("server.log")).unwrap();
        assert!(log.contains("volley serve: listening on"), "{log}");
        assert!(folder.join(name).join("smoke.json").is_file());
        assert!(folder.join(name).join("report.html").is_file());
    }
    assert!(
        rps[0] > 1.4 * rps[1] && rps[1] > 1.4 * rps[2],
        "throughput not ordered by capacity: {rps:?}"
    );
    for pid in pids(&s) {
        assert_gone(pid);
    }

    // The report: every target, the ranking, the comparison table and its charts.
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(md.starts_with("# volley suite: capacity"), "{md}");
    assert!(md.contains("3 of 3 targets ran"), "{md}");
    assert!(
        md.contains("Throughput, highest first: eight-workers"),
        "{md}"
    );
    assert!(
        md.contains("## Comparison: eight-workers vs four-workers vs two-workers"),
        "{md}"
    );
    assert!(md.contains("| throughput (req/s) |"), "{md}");
    assert!(
        !md.contains("target URL differs"),
        "the URLs differ by design: {md}"
    );
    let html = std::fs::read_to_string(folder.join("report.html")).unwrap();
    for id in ["chart-compare-spectrum", "chart-compare-throughput"] {
        assert!(html.contains(id), "{id} missing");
    }
    assert!(stdout.contains("volley suite: capacity"), "{stdout}");

    // The targets' folders are ordinary results folders: volley compare reads them.
    let (code, text, err) = common::run_volley(&[
        "compare",
        folder.join("eight-workers").to_str().unwrap(),
        folder.join("two-workers").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(text.contains("two-workers vs eight-workers"), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn failing_targets_are_reported_with_their_cause_and_the_good_one_still_runs() {
    let _serial = serial();
    let dir = temp_dir("suite-failures");
    let [silent, errors, no_reset, dies, good] = free_ports(5)[..] else {
        unreachable!()
    };
    std::fs::write(
        dir.join("plan.toml"),
        r#"
[target]
base_url = "http://127.0.0.1:1"
[[scenario]]
name = "get"
[scenario.load]
profile = "constant-vus"
vus = 4
duration = "1s"
[[scenario.step]]
name = "root"
path = "/"
"#,
    )
    .unwrap();
    let missing = closed_port();
    let crash = closed_port();
    // A server that is not the suite's answers where a target is to be started.
    let squatter = common::target();
    let taken = squatter.base_url();
    std::fs::write(
        dir.join("suite.toml"),
        format!(
            r#"
name = "failures"
plan = "plan.toml"
repeats = 2
[smoke]
time_scale = 0.5
max_error_rate = "1%"

[[target]]
name = "missing"
base_url = "http://127.0.0.1:{missing}"
command = ["volley-test-no-such-program", "--port", "{missing}"]

[[target]]
name = "crash"
base_url = "http://127.0.0.1:{crash}"
command = ["sh", "-c", "echo 'cannot bind: boom' >&2; exit 3"]

[[target]]
name = "taken"
base_url = "{taken}"
command = ["sleep", "30"]

[[target]]
name = "silent"
base_url = "http://127.0.0.1:{silent}"
command = ["sleep", "30"]
health_timeout = "1s"

# Healthy, but every request of the plan fails (/status/500/ is not a valid status: 400).
[[target]]
name = "errors"
base_url = "http://127.0.0.1:{errors}/status/500"
health_url = "http://127.0.0.1:{errors}/"
command = ["volley", "serve", "--port", "{errors}", "--threads", "1"]

[[target]]
name = "no-reset"
base_url = "http://127.0.0.1:{no_reset}"
command = ["volley", "serve", "--port", "{no_reset}", "--threads", "1"]
reset = ["sh", "-c", "echo 'no database to clear' >&2; exit 1"]

# Its third reset (before run 2) kills the server: run 2 cannot reach it.
[[target]]
name = "dies"
base_url = "http://127.0.0.1:{dies}"
command = ["sh", "-c", "echo $$ > dies.pid; exec \"$VOLLEY_BIN\" serve --port {dies} --threads 1"]
reset = ["sh", "-c", "echo x >> dies.resets; [ $(wc -l < dies.resets) -lt 3 ] || kill -KILL $(cat dies.pid)"]

[[target]]
name = "good"
base_url = "http://127.0.0.1:{good}"
command = ["volley", "serve", "--port", "{good}", "--threads", "1"]
reset = ["sh", "-c", "echo reset by suite"]
"#
        ),
    )
    .unwrap();
    let results = dir.join("results");
    let out = volley()
        .arg("suite")
        .arg(dir.join("suite.toml"))
        .arg("--out")
        .arg(&results)
        .arg("-q")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "-q prints nothing");
    let folder = only_subfolder(&results);
    let s = read_json(&folder.join("suite.json"));

    let t = target(&s, "missing");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"start".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(
        cause.contains("program `volley-test-no-such-program` not found"),
        "{cause}"
    );
    assert!(t["pid"].is_null());

    let t = target(&s, "crash");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"start".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(
        cause.contains("exited (exit status 3) before answering its health check")
            && cause.contains("last output: cannot bind: boom"),
        "{cause}"
    );
    assert_eq!(t["stopped"], "exited by itself (exit status 3)");
    let log = std::fs::read_to_string(folder.join("crash/server.log")).unwrap();
    assert!(log.contains("cannot bind: boom\n"), "{log}");

    let t = target(&s, "taken");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"start".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(cause.contains("something already answers at"), "{cause}");
    assert!(t["pid"].is_null(), "nothing started: {t:#}");
    drop(squatter);

    let t = target(&s, "silent");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"health".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(
        cause.contains("did not answer 2xx/3xx within 1s"),
        "{cause}"
    );
    assert!(cause.contains("refused"), "{cause}");
    assert!(
        t["stopped"]
            .as_str()
            .unwrap()
            .starts_with("stopped by SIGTERM"),
        "{t:#}"
    );

    let t = target(&s, "errors");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"smoke".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(
        cause.contains("requests failed") && cause.contains("http_"),
        "{cause}"
    );
    assert_eq!(t["smoke"]["passed"], false);
    assert!(
        t["records"].as_array().unwrap().is_empty(),
        "no measured run after a failed smoke"
    );
    assert!(folder.join("errors/smoke.json").is_file());

    let t = target(&s, "no-reset");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"reset".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(
        cause.contains("exit status 1") && cause.contains("reset.log"),
        "{cause}"
    );
    let log = std::fs::read_to_string(folder.join("no-reset/reset.log")).unwrap();
    assert!(log.contains("no database to clear"), "{log}");
    assert!(t["smoke"].is_null(), "no smoke run after a failed reset");

    let t = target(&s, "dies");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"run".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(
        cause.starts_with("run 2 of 2: ") && cause.contains("connection_refused"),
        "{cause}"
    );
    assert_eq!(t["stopped"], "exited by itself (killed by SIGKILL)");
    assert_eq!(
        t["records"].as_array().unwrap().len(),
        2,
        "both runs are kept: {t:#}"
    );
    let first = read_json(&folder.join("dies/repeat-1/run.json"));
    assert_eq!(first["summary"]["errors"], 0);

    let t = target(&s, "good");
    assert_eq!(t["status"], "ran", "{t:#}");
    assert!(t["failed_step"].is_null() && t["cause"].is_null());
    for i in 1..=2 {
        let run = read_json(&folder.join(format!("good/repeat-{i}/run.json")));
        assert!(
            run["summary"]["requests"].as_u64().unwrap() > 100,
            "{run:#}"
        );
    }
    assert!(
        folder.join("good/report.md").is_file(),
        "the spread of the repeats"
    );
    // Reset ran before the smoke run and before each of the two runs.
    let resets = std::fs::read_to_string(folder.join("good/reset.log")).unwrap();
    assert_eq!(resets.matches("reset by suite\n").count(), 3, "{resets}");

    // Every process the suite started is gone: the silent one (which never listened) included.
    let started = pids(&s);
    assert_eq!(
        started.len(),
        6,
        "crash, silent, errors, no-reset, dies, good: {s:#}"
    );
    for pid in started {
        assert_gone(pid);
    }

    // The report lists each failure with its step and cause, and still shows the good target.
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(md.contains("1 of 8 targets ran"), "{md}");
    for line in [
        "> - missing — start failed: ",
        "> - crash — start failed: ",
        "> - taken — start failed: ",
        "> - silent — health check failed: ",
        "> - errors — smoke failed: ",
        "> - no-reset — reset failed: ",
        "> - dies — run failed: run 2 of 2: ",
    ] {
        assert!(md.contains(line), "`{line}` missing in:\n{md}");
    }
    assert!(md.contains("| good | ran | 2 |"), "{md}");
    assert!(md.contains(ONE_TARGET_NOTE), "{md}");
    let html = std::fs::read_to_string(folder.join("report.html")).unwrap();
    assert!(html.contains("silent — health check failed"), "{html}");
    std::fs::remove_dir_all(dir).unwrap();
}

const ONE_TARGET_NOTE: &str = "Only one target was measured";

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
    std::fs::write(
        dir.join("plan.toml"),
        r#"
[target]
base_url = "http://127.0.0.1:1"
[[scenario]]
name = "get"
[scenario.load]
profile = "constant-vus"
vus = 4
duration = "60s"
[[scenario.step]]
name = "root"
path = "/"
"#,
    )
    .unwrap();
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
    let mut child = volley()
        .arg("suite")
        .arg(dir.join("suite.toml"))
        .arg("--out")
        .arg(&results)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = lines_of(child.stderr.take().unwrap());
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
    std::fs::write(
        dir.join("plan.toml"),
        r#"
[target]
base_url = "http://127.0.0.1:1"
[[scenario]]
name = "get"
[scenario.load]
profile = "constant-vus"
vus = 2
duration = "60s"
[[scenario.step]]
name = "root"
path = "/"
"#,
    )
    .unwrap();
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
    let started = wait_for_line(&lines, "stubborn: started");
    let pid: u64 = started
        .split("(pid ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in `{started}`"));
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

#[test]
fn a_find_max_suite_finds_each_targets_capacity() {
    let _serial = serial();
    let dir = temp_dir("suite-find-max");
    let [two, four] = free_ports(2)[..] else {
        unreachable!()
    };
    std::fs::copy("examples/suite-plan.toml", dir.join("plan.toml")).unwrap();
    std::fs::write(
        dir.join("suite.toml"),
        format!(
            r#"
name = "search"
plan = "plan.toml"
[find_max]
slo = "p99<50ms,errors<1%"
budget = "20s"
step = "1s"
warmup = "300ms"
[[target]]
name = "two-workers"
base_url = "http://127.0.0.1:{two}"
command = ["volley", "serve", "--port", "{two}", "--threads", "1", "--capacity", "2", "--service-time", "10ms"]
[[target]]
name = "four-workers"
base_url = "http://127.0.0.1:{four}"
command = ["volley", "serve", "--port", "{four}", "--threads", "1", "--capacity", "4", "--service-time", "10ms"]
"#
        ),
    )
    .unwrap();
    let results = dir.join("results");
    let started = Instant::now();
    let out = volley()
        .arg("suite")
        .arg(dir.join("suite.toml"))
        .arg("--out")
        .arg(&results)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "two 20 s budgets"
    );
    let folder = only_subfolder(&results);
    let s = read_json(&folder.join("suite.json"));
    assert_eq!(s["find_max"], "open model, SLO p99<50ms,errors<1%");
    let mut found = Vec::new();
    for (name, capacity) in [("two-workers", 200.0), ("four-workers", 400.0)] {
        let t = target(&s, name);
        assert_eq!(t["status"], "ran", "{t:#}");
        let f = &t["find_max"];
        let max = f["max_sustainable_rps"].as_f64().unwrap();
        assert!(
            (max - capacity).abs() <= capacity * 0.15,
            "{name}: capacity {capacity} req/s, found {max}; steps {}",
            f["steps"]
        );
        assert_eq!(f["generator_limited"], false);
        assert!(f["elapsed_s"].as_f64().unwrap() <= 20.0 + 2.0);
        // The target's folder holds the search's record: its best step, every step under
        // find_max.
        let run = read_json(&folder.join(name).join("run.json"));
        assert_eq!(run["name"], format!("{name}-find-max"));
        assert_eq!(
            run["find_max"]["max_sustainable_rps"],
            f["max_sustainable_rps"]
        );
        found.push(max);
    }
    assert!(found[1] > 1.5 * found[0], "{found:?}");
    for pid in pids(&s) {
        assert_gone(pid);
    }
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(
        md.contains("Max sustainable throughput, highest first: four-workers"),
        "{md}"
    );
    assert!(md.contains("| Max sustainable (req/s) |"), "{md}");
    assert!(
        md.contains("## Comparison: two-workers vs four-workers"),
        "{md}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_invalid_suite_file_exits_2_with_its_location() {
    let dir = temp_dir("suite-invalid");
    let path = dir.join("bad.toml");
    std::fs::write(
        &path,
        "plan = \"plan.toml\"\n[[target]]\nname = \"a\"\nbase_url = \"http://127.0.0.1:1\"\ncommand = \"volley serve\"\n",
    )
    .unwrap();
    let (code, _, err) = common::run_volley(&["suite", path.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("bad.toml:5:11"), "{err}");
    assert!(err.contains("expected a sequence"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}
