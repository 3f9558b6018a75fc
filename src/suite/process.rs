//! Processes a suite starts: a target's server ([`Started`]) and one-shot commands such as
//! `reset` ([`run_to_end`]).
//!
//! Each runs in a process group of its own (its PID is the group's ID), so that a Ctrl-C typed at
//! the terminal reaches volley alone — the suite decides when and how its processes stop — and so
//! that stopping reaches whatever the command started in turn (`sh -c "a & b"`). Stopping sends
//! SIGTERM to the group, waits up to the grace period for the process to exit, then sends
//! SIGKILL to what is left of the group. The exit is observed without reaping (`waitid` with
//! `WNOWAIT`) until the group has been signalled for the last time, so its ID cannot be reused by
//! an unrelated process in between. A [`Started`] that is dropped without [`Started::stop`] is
//! killed.
//!
//! If volley itself dies without stopping them (SIGKILL, the OOM killer), the kernel kills each
//! started process: it is spawned with a parent-death signal (`PR_SET_PDEATHSIG`, SIGKILL), so a
//! target server never outlives the suite and holds its port against the next one. That reaches
//! the started process only, not what it started in turn (a server behind `sh -c` survives its
//! shell), and it fires when the *thread* that spawned it ends: the suite spawns from the thread
//! that runs it, which lives until the suite is over.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

use super::{CommandLine, VOLLEY_ARGV0, VOLLEY_BIN_ENV};
use crate::error::Error;

/// How often a process is checked while waiting for it.
const POLL_EVERY: Duration = Duration::from_millis(10);

/// The process groups a suite has started and not yet stopped, for a last-resort kill (a second
/// Ctrl-C). Cloning shares the list.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    groups: Arc<Mutex<Vec<i32>>>,
}

impl Registry {
    fn add(&self, pid: i32) {
        self.lock().push(pid);
    }

    fn remove(&self, pid: i32) {
        self.lock().retain(|&p| p != pid);
    }

    /// SIGKILL to every process group still listed.
    pub fn kill_all(&self) {
        for &pid in self.lock().iter() {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }

    /// The PIDs (= process group IDs) still listed.
    pub fn pids(&self) -> Vec<i32> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<i32>> {
        self.groups.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A process the suite started and has not stopped yet.
#[derive(Debug)]
pub struct Started {
    child: Child,
    pid: Pid,
    command: String,
    log: PathBuf,
    registry: Registry,
    reaped: bool,
}

/// How a started process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// Its PID.
    pub pid: u32,
    /// In words: "exited by itself (exit status 1)", "stopped by SIGTERM (exit status 0)" (it
    /// handled the signal and exited), "stopped by SIGTERM" (the signal ended it), "killed by
    /// SIGKILL after the 5s grace period".
    pub how: String,
}

impl Started {
    /// Starts `cmd` with stdout and stderr appended to `log`.
    pub fn spawn(cmd: &CommandLine, log: &Path, registry: &Registry) -> Result<Self, Error> {
        let child = prepare(cmd, log)?
            .spawn()
            .map_err(|e| spawn_error(cmd, &e))?;
        let pid = Pid::from_raw(child.id() as i32);
        registry.add(pid.as_raw());
        Ok(Self {
            child,
            pid,
            command: cmd.display(),
            log: log.to_path_buf(),
            registry: registry.clone(),
            reaped: false,
        })
    }

    /// Its PID, which is also its process group's ID.
    pub fn pid(&self) -> u32 {
        self.pid.as_raw() as u32
    }

    /// The command line, for messages.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// `Some(status in words)` once the process has exited (it is not reaped yet).
    pub fn exited(&self) -> Option<String> {
        exit_status(self.pid).map(describe)
    }

    /// Stops the process group: SIGTERM, then SIGKILL after `grace` if the process is still
    /// there; anything left in the group is killed. Waits for the process and notes the end in
    /// its log.
    pub fn stop(mut self, grace: Duration) -> Stopped {
        let how = match self.exited() {
            Some(status) => format!("exited by itself ({status})"),
            None => {
                signal_group(self.pid, Signal::SIGTERM);
                match wait_exit(self.pid, grace, || false) {
                    Some(status) if status.signal() == Some(Signal::SIGTERM as i32) => {
                        "stopped by SIGTERM".to_string()
                    }
                    Some(status) => format!("stopped by SIGTERM ({})", describe(status)),
                    None => format!(
                        "killed by SIGKILL after the {} grace period",
                        humantime::format_duration(grace)
                    ),
                }
            }
        };
        self.finish();
        let _ = append_line(&self.log, &format!("[volley suite] {how}"));
        Stopped {
            pid: self.pid(),
            how,
        }
    }

    /// Kills what is left of the group and reaps the process.
    fn finish(&mut self) {
        if self.reaped {
            return;
        }
        signal_group(self.pid, Signal::SIGKILL);
        let _ = self.child.wait();
        self.reaped = true;
        self.registry.remove(self.pid.as_raw());
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Runs `cmd` to its end (output appended to `log`) within `timeout`; `stop` is asked while it
/// runs whether to give up. An exit status other than 0 is an error.
pub fn run_to_end(
    cmd: &CommandLine,
    log: &Path,
    timeout: Duration,
    registry: &Registry,
    stop: impl Fn() -> bool,
) -> Result<(), Error> {
    let mut p = Started::spawn(cmd, log, registry)?;
    let fail = |why: String| Error::Process {
        command: cmd.display(),
        why,
    };
    let status = wait_exit(p.pid, timeout, &stop);
    p.finish();
    match status {
        Some(status) if status.success() => Ok(()),
        Some(status) => Err(fail(format!(
            "{} (output in {})",
            describe(status),
            log.display()
        ))),
        None if stop() => Err(fail("interrupted; killed".into())),
        None => Err(fail(format!(
            "did not finish within {}; killed (output in {})",
            humantime::format_duration(timeout),
            log.display()
        ))),
    }
}

/// The last `n` lines of a log, joined with " | ", for a failure's cause ("" when empty).
pub fn tail(log: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("[volley suite]"))
        .collect();
    let mut out = lines[lines.len().saturating_sub(n)..].join(" | ");
    if out.chars().count() > 400 {
        out = out.chars().take(400).collect::<String>() + "…";
    }
    out
}

/// The program to run for `argv[0]`: the running volley executable for [`VOLLEY_ARGV0`].
fn program(argv0: &str) -> Result<PathBuf, std::io::Error> {
    if argv0 == VOLLEY_ARGV0 {
        std::env::current_exe()
    } else {
        Ok(PathBuf::from(argv0))
    }
}

/// The command to spawn: its own process group, stdin closed, stdout and stderr appended to
/// `log` (after a line saying what starts, where).
fn prepare(cmd: &CommandLine, log: &Path) -> Result<std::process::Command, Error> {
    let fail = |why: String| Error::Process {
        command: cmd.display(),
        why,
    };
    let Some(argv0) = cmd.argv.first() else {
        return Err(fail("the command is empty".into()));
    };
    if !cmd.cwd.is_dir() {
        return Err(fail(format!(
            "its working directory {} does not exist",
            cmd.cwd.display()
        )));
    }
    let exe = program(argv0).map_err(|e| fail(format!("cannot find volley's executable: {e}")))?;
    let mut out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| fail(format!("cannot open {}: {e}", log.display())))?;
    let _ = writeln!(
        out,
        "[volley suite] starting {} (in {})",
        cmd.display(),
        cmd.cwd.display()
    );
    let stdout = out.try_clone().map_err(|e| fail(e.to_string()))?;
    let mut c = std::process::Command::new(exe);
    c.args(&cmd.argv[1..])
        .current_dir(&cmd.cwd)
        .envs(&cmd.env)
        .stdin(Stdio::null())
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(out))
        .process_group(0);
    with_parent_death_signal(&mut c);
    if let Ok(volley) = std::env::current_exe() {
        c.env(VOLLEY_BIN_ENV, volley);
    }
    Ok(c)
}

/// Makes the kernel SIGKILL the spawned process when the spawning thread ends (see the module
/// documentation). A parent that died between `fork` and the `prctl` is caught by comparing the
/// parent's PID: the child then exits before `exec`.
#[allow(unsafe_code)]
fn with_parent_death_signal(c: &mut std::process::Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the forked child before `exec` and only makes two system calls
    // (prctl, getppid), both async-signal-safe; it allocates nothing and takes no lock.
    unsafe {
        c.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)?;
            if nix::unistd::getppid() != parent {
                return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
            }
            Ok(())
        });
    }
}

fn spawn_error(cmd: &CommandLine, e: &std::io::Error) -> Error {
    let why = match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "cannot start: program `{}` not found (neither a path to an executable nor on PATH)",
            cmd.argv[0]
        ),
        std::io::ErrorKind::PermissionDenied => {
            format!("cannot start: `{}` is not executable ({e})", cmd.argv[0])
        }
        _ => format!("cannot start: {e}"),
    };
    Error::Process {
        command: cmd.display(),
        why,
    }
}

/// The exit status of `pid` once it has exited, without reaping it; `None` while it runs.
fn exit_status(pid: Pid) -> Option<ExitStatus> {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    match waitid(Id::Pid(pid), flags) {
        Ok(WaitStatus::Exited(_, code)) => Some(ExitStatus::from_raw((code & 0xff) << 8)),
        Ok(WaitStatus::Signaled(_, signal, _)) => Some(ExitStatus::from_raw(signal as i32)),
        // Still running (or, impossibly here, stopped or already reaped: only `finish` reaps).
        _ => None,
    }
}

fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => match Signal::try_from(sig) {
            Ok(s) => format!("killed by {s}"),
            Err(_) => format!("killed by signal {sig}"),
        },
        _ => status.to_string(),
    }
}

/// Waits up to `limit` for `pid` to exit (not reaping it); `None` on time-out or when `stop`
/// says so.
fn wait_exit(pid: Pid, limit: Duration, stop: impl Fn() -> bool) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = exit_status(pid) {
            return Some(status);
        }
        let now = Instant::now();
        if now >= deadline || stop() {
            return None;
        }
        std::thread::sleep(POLL_EVERY.min(deadline - now));
    }
}

fn signal_group(pid: Pid, signal: Signal) {
    match killpg(pid, signal) {
        Ok(()) | Err(Errno::ESRCH) => {}
        // EPERM would mean the ID now names someone else's group: leave it alone.
        Err(_) => {}
    }
}

fn append_line(log: &Path, line: &str) -> std::io::Result<()> {
    let mut f = OpenOptions::new().append(true).open(log)?;
    writeln!(f, "{line}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn cmd(argv: &[&str]) -> CommandLine {
        CommandLine {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            cwd: std::env::temp_dir(),
            env: BTreeMap::from([("GREETING".to_string(), "hello".to_string())]),
        }
    }

    fn log(name: &str) -> PathBuf {
        let p =
            std::env::temp_dir().join(format!("volley-process-{}-{name}.log", std::process::id()));
        let _ = std::fs::remove_file(&p);
        p
    }

    /// Whether `pid` is a running process (a zombie — dead, not yet reaped by its parent or
    /// init — is not).
    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit(')').next().map(|r| r.trim_start().to_string()))
            .is_some_and(|state| !state.starts_with('Z'))
    }

    #[test]
    fn stop_terminates_the_group_and_keeps_the_output() {
        let l = log("stop");
        let registry = Registry::default();
        // A child of the shell, in the same group: it must go too.
        let p = Started::spawn(
            &cmd(&["sh", "-c", "echo \"$GREETING\"; sleep 30 & echo $! ; wait"]),
            &l,
            &registry,
        )
        .unwrap();
        let pid = p.pid();
        assert_eq!(registry.pids(), [pid as i32]);
        // The grandchild's PID is the second line of output.
        let deadline = Instant::now() + Duration::from_secs(10);
        let grandchild: u32 = loop {
            let text = std::fs::read_to_string(&l).unwrap();
            if let Some(line) = text.lines().nth(2) {
                break line.trim().parse().unwrap();
            }
            assert!(Instant::now() < deadline, "no output: {text}");
            std::thread::sleep(POLL_EVERY);
        };
        assert!(p.exited().is_none());
        let stopped = p.stop(Duration::from_secs(5));
        assert_eq!(stopped.pid, pid);
        assert!(
            stopped.how.starts_with("stopped by SIGTERM"),
            "{}",
            stopped.how
        );
        assert!(!alive(pid));
        // SIGKILL to the group is delivered at once but a process dies asynchronously: wait
        // (boundedly) for the grandchild to be gone.
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(grandchild) {
            assert!(
                Instant::now() < deadline,
                "grandchild {grandchild} survived"
            );
            std::thread::sleep(POLL_EVERY);
        }
        assert!(registry.pids().is_empty());
        let text = std::fs::read_to_string(&l).unwrap();
        assert!(text.starts_with("[volley suite] starting sh -c"), "{text}");
        assert!(text.contains("hello\n"), "{text}");
        assert!(
            text.ends_with(&format!("[volley suite] {}\n", stopped.how)),
            "{text}"
        );
        assert_eq!(tail(&l, 1), grandchild.to_string());
    }

    #[test]
    fn sigkill_after_the_grace_period() {
        let l = log("kill");
        let p = Started::spawn(
            &cmd(&[
                "sh",
                "-c",
                "trap '' TERM; echo ready; while :; do sleep 0.05; done",
            ]),
            &l,
            &Registry::default(),
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !std::fs::read_to_string(&l)
            .unwrap()
            .lines()
            .any(|line| line == "ready")
        {
            assert!(Instant::now() < deadline);
            std::thread::sleep(POLL_EVERY);
        }
        let pid = p.pid();
        let stopped = p.stop(Duration::from_millis(200));
        assert_eq!(
            stopped.how,
            "killed by SIGKILL after the 200ms grace period"
        );
        assert!(!alive(pid));
    }

    #[test]
    fn exits_failures_and_drop() {
        let l = log("exit");
        let p = Started::spawn(&cmd(&["sh", "-c", "exit 3"]), &l, &Registry::default()).unwrap();
        let status = wait_exit(p.pid, Duration::from_secs(10), || false).unwrap();
        assert_eq!(describe(status), "exit status 3");
        assert_eq!(
            p.exited().as_deref(),
            Some("exit status 3"),
            "not reaped yet"
        );
        assert_eq!(
            p.stop(Duration::from_secs(1)).how,
            "exited by itself (exit status 3)"
        );

        let err = Started::spawn(&cmd(&["volley-no-such-program"]), &l, &Registry::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("program `volley-no-such-program` not found"),
            "{err}"
        );
        let mut bad_cwd = cmd(&["true"]);
        bad_cwd.cwd = PathBuf::from("/nonexistent/volley");
        let err = Started::spawn(&bad_cwd, &l, &Registry::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not exist"), "{err}");

        let p = Started::spawn(&cmd(&["sleep", "30"]), &l, &Registry::default()).unwrap();
        let pid = p.pid();
        drop(p);
        assert!(!alive(pid));
    }

    #[test]
    fn argv_reaches_the_program_as_is_without_a_shell() {
        // Were a shell involved, `$GREETING` would expand, `;` would start a second command and
        // the file would appear.
        let l = log("argv");
        let marker = std::env::temp_dir().join(format!("volley-no-shell-{}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        let arg = format!("$GREETING; touch {} `id` $(id) *", marker.display());
        run_to_end(
            &cmd(&["printf", "<%s>\\n", &arg]),
            &l,
            Duration::from_secs(10),
            &Registry::default(),
            || false,
        )
        .unwrap();
        let text = std::fs::read_to_string(&l).unwrap();
        assert!(text.contains(&format!("<{arg}>\n")), "{text}");
        assert!(!text.contains("hello"), "{text}");
        assert!(!marker.exists());
    }

    #[test]
    fn one_shot_commands() {
        let l = log("reset");
        let r = Registry::default();
        run_to_end(
            &cmd(&["sh", "-c", "echo cleared"]),
            &l,
            Duration::from_secs(10),
            &r,
            || false,
        )
        .unwrap();
        assert!(std::fs::read_to_string(&l).unwrap().contains("cleared"));
        let err = run_to_end(
            &cmd(&["sh", "-c", "exit 2"]),
            &l,
            Duration::from_secs(10),
            &r,
            || false,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("exit status 2"), "{err}");
        let err = run_to_end(
            &cmd(&["sleep", "30"]),
            &l,
            Duration::from_millis(100),
            &r,
            || false,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("did not finish within 100ms; killed"), "{err}");
        assert!(r.pids().is_empty());
        assert_eq!(
            cmd(&["sh", "-c", "echo 'a b'"]).display(),
            r#"sh -c 'echo '\''a b'\'''"#
        );
    }
}
