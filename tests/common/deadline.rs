//! Running `volley` under a deadline, for the malformed-input tests: a hang fails the test
//! instead of stalling the suite, and a panic is told from a refusal.

use std::ffi::OsStr;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::volley;

/// Longest any one command may take: they all fail at once, or run a plan of 0.5 s.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// How a command ended: its exit code (`None`: killed by a signal) and what it printed.
pub struct Outcome {
    /// The exit code.
    pub code: Option<i32>,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

/// Runs volley with `args`, killing it (and failing) if it outlives [`DEADLINE`].
pub fn run<S: AsRef<OsStr>>(args: &[S]) -> Outcome {
    let child = volley()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = Pid::from_raw(child.id() as i32);
    // Output is collected while the process runs (a full pipe would block it), on a thread, so
    // that the deadline can be kept.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(DEADLINE) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = kill(pid, Signal::SIGKILL);
            panic!(
                "volley {:?} still running after {DEADLINE:?}",
                args.iter().map(|a| a.as_ref()).collect::<Vec<_>>()
            );
        }
    };
    Outcome {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// No panic: no panic message, not killed by a signal (the binary aborts on panic), not 101.
pub fn assert_no_panic(what: &str, o: &Outcome) {
    assert!(
        !o.stderr.contains("panicked") && !o.stdout.contains("panicked"),
        "{what}: panicked:\n{}",
        o.stderr
    );
    assert!(
        o.code.is_some() && o.code != Some(101),
        "{what}: ended by {:?}:\n{}",
        o.code,
        o.stderr
    );
}

/// Exit code 2 and every part of the message on stderr.
pub fn assert_refused(what: &str, o: &Outcome, parts: &[&str]) {
    assert_no_panic(what, o);
    assert_eq!(o.code, Some(2), "{what}:\n{}", o.stderr);
    for part in parts {
        assert!(
            o.stderr.contains(part),
            "{what}: expected `{part}` in:\n{}",
            o.stderr
        );
    }
}
