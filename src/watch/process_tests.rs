use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use super::*;

/// Samples until `done` holds, for at most 20 s (a busy machine).
fn sample_until(w: &mut ProcessWatch, done: impl Fn(&ProcSample) -> bool) -> ProcSample {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let s = w.sample().unwrap();
        if done(&s) || Instant::now() > deadline {
            return s;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_process_tree_is_measured_and_its_exit_reported() {
    // A shell with two sleeping children, itself busy: CPU, three processes, their fds.
    let mut child = Command::new("sh")
        .args(["-c", "sleep 60 & sleep 60 & while :; do :; done"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut w = ProcessWatch::new(pid);
    let s = sample_until(&mut w, |s| s.processes == 3 && s.cpu_s >= 0.1);
    let stopped = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
    assert_eq!(s.processes, 3, "{s:?}");
    assert!(s.cpu_s >= 0.1, "{s:?}");
    assert!(s.threads >= 3, "{s:?}");
    assert!(s.rss_bytes > 100 * 1024, "{s:?}");
    assert!(s.fds >= 3 && s.fds_unreadable == 0, "{s:?}");
    stopped.unwrap();
    // Killed but not yet reaped (a zombie): already reported as exited.
    let deadline = Instant::now() + Duration::from_secs(20);
    let gone = loop {
        match w.sample() {
            Err(e) => break e,
            Ok(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(s) => panic!("still sampled after SIGKILL: {s:?}"),
        }
    };
    assert!(
        matches!(gone, ProcessError::Exited(p) if p == pid),
        "{gone}"
    );
    child.wait().unwrap();
    assert!(matches!(w.sample(), Err(ProcessError::Exited(_))));
}

#[test]
fn cpu_seconds_never_go_back_when_a_child_exits() {
    // The busy child counts to 500 000 (a fixed amount of CPU, a few tenths of a second however
    // busy the machine), then exits; its parent (sh turned sleep) never reaps it.
    let mut child = Command::new("sh")
        .args([
            "-c",
            "(i=0; while [ $i -lt 500000 ]; do i=$((i+1)); done) & exec sleep 60",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut w = ProcessWatch::new(pid);
    let busy = sample_until(&mut w, |s| s.cpu_s >= 0.05);
    let after = sample_until(&mut w, |s| s.processes == 1);
    let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
    let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
    child.wait().unwrap();
    assert!(busy.cpu_s >= 0.05, "{busy:?}");
    assert_eq!(after.processes, 1, "{after:?}");
    assert!(after.cpu_s >= busy.cpu_s, "{busy:?} then {after:?}");
}
