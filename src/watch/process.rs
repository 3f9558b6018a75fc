//! Watching a process and its whole tree (`--watch pid=N`, the targets a suite starts): CPU
//! seconds, RSS, threads and open file descriptors, read from `/proc` once per interval.
//!
//! Definitions, for the tree rooted at the watched PID at the moment of the sample (the root and
//! every live process whose parent chain leads to it):
//! - **CPU seconds**: Σ over the tree of `utime + stime + cutime + cstime` (`/proc/PID/stat`,
//!   clock ticks of `USER_HZ` = 100 per second, fixed by the `/proc` ABI), i.e. user + system time
//!   of the live processes and of the descendants they have reaped. A child that exits takes its
//!   time out of the sum until its parent reaps it; the reported figure is therefore the largest
//!   sum seen so far ([`ProcessWatch`] keeps it monotonic), so rates never go negative.
//! - **RSS**: Σ of `VmRSS` (`/proc/PID/status`), bytes. Shared pages are counted once per
//!   process, as `ps` does.
//! - **threads**: Σ of `Threads`; **open fds**: Σ of the entries of `/proc/PID/fd` (a process
//!   whose fds cannot be read, another user's, adds none and is counted in `fds_unreadable`).
//!
//! A root that has exited gives [`ProcessError::Exited`]: the watcher reports it, the run goes on.

use std::collections::HashMap;
use std::fs;

/// Clock ticks per second of the times in `/proc/PID/stat` (`USER_HZ`, 100 on Linux).
const USER_HZ: f64 = 100.0;

/// One sample of a process tree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcSample {
    /// User + system CPU time of the tree so far, seconds (monotonic, see the module docs).
    pub cpu_s: f64,
    /// Resident memory of the tree, bytes.
    pub rss_bytes: u64,
    /// Threads in the tree.
    pub threads: u64,
    /// Open file descriptors in the tree.
    pub fds: u64,
    /// Processes in the tree (the root included).
    pub processes: u32,
    /// Processes of the tree whose `/proc/PID/fd` could not be read.
    pub fds_unreadable: u32,
}

/// Why a sample could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The watched process is gone.
    #[error("process {0} has exited")]
    Exited(u32),
    /// `/proc` could not be read (not Linux, or no `/proc` mounted).
    #[error("cannot read /proc: {0}")]
    Proc(std::io::Error),
}

/// The figures of one process, from `/proc/PID/stat` and `/status`.
#[derive(Debug, Clone, Copy, Default)]
struct One {
    ppid: u32,
    cpu_ticks: u64,
}

/// A watched process tree, keeping its CPU seconds monotonic.
#[derive(Debug)]
pub struct ProcessWatch {
    root: u32,
    max_cpu_s: f64,
}

impl ProcessWatch {
    /// Watches `pid` and its descendants.
    pub fn new(pid: u32) -> Self {
        Self {
            root: pid,
            max_cpu_s: 0.0,
        }
    }

    /// The watched PID.
    pub fn pid(&self) -> u32 {
        self.root
    }

    /// Samples the tree now.
    pub fn sample(&mut self) -> Result<ProcSample, ProcessError> {
        let Some(root) = stat(self.root) else {
            return Err(ProcessError::Exited(self.root));
        };
        let tree = tree(self.root, root)?;
        let mut s = ProcSample {
            cpu_s: 0.0,
            rss_bytes: 0,
            threads: 0,
            fds: 0,
            processes: 0,
            fds_unreadable: 0,
        };
        let mut ticks = 0;
        for (pid, one) in tree {
            ticks += one.cpu_ticks;
            let (rss, threads) = status(pid);
            s.rss_bytes += rss;
            s.threads += threads;
            match fs::read_dir(format!("/proc/{pid}/fd")) {
                Ok(dir) => s.fds += dir.count() as u64,
                Err(_) => s.fds_unreadable += 1,
            }
            s.processes += 1;
        }
        self.max_cpu_s = self.max_cpu_s.max(ticks as f64 / USER_HZ);
        s.cpu_s = self.max_cpu_s;
        Ok(s)
    }
}

/// The root and its live descendants, each with its figures.
fn tree(root_pid: u32, root: One) -> Result<Vec<(u32, One)>, ProcessError> {
    let mut all: HashMap<u32, One> = HashMap::new();
    for entry in fs::read_dir("/proc").map_err(ProcessError::Proc)? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(one) = stat(pid) {
            all.insert(pid, one);
        }
    }
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (&pid, one) in &all {
        children.entry(one.ppid).or_default().push(pid);
    }
    let mut out = vec![(root_pid, root)];
    let mut i = 0;
    while i < out.len() {
        let pid = out[i].0;
        for &child in children.get(&pid).map_or(&[][..], Vec::as_slice) {
            if child != root_pid {
                out.push((child, all[&child]));
            }
        }
        i += 1;
    }
    Ok(out)
}

/// `/proc/PID/stat`: parent and CPU ticks (self and reaped children); `None` if gone or a
/// zombie (exited, not reaped: no longer running, its time not yet its parent's).
fn stat(pid: u32) -> Option<One> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces and ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields
        .first()
        .is_none_or(|state| state.starts_with(['Z', 'X']))
    {
        return None;
    }
    // `rest` starts at field 3 (state): field N is fields[N - 3].
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    Some(One {
        ppid: u32::try_from(field(4)?).ok()?,
        cpu_ticks: field(14)? + field(15)? + field(16)? + field(17)?,
    })
}

/// `/proc/PID/status`: `VmRSS` in bytes and `Threads` (0, 0 if gone or a kernel thread).
fn status(pid: u32) -> (u64, u64) {
    let Ok(text) = fs::read_to_string(format!("/proc/{pid}/status")) else {
        return (0, 0);
    };
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (value("VmRSS:") * 1024, value("Threads:"))
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
