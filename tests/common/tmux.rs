//! The live view's tests' terminal: a tmux server of the test's own, at a fixed size, running
//! volley in a pane whose screen the test reads.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmux server of the test's own (its own socket), killed when dropped.
pub struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// None (and a loud line) when tmux is missing.
    pub fn start(dir: &Path, command: &str) -> Option<Self> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!(
                "SKIPPED: tmux is not installed (apt-get install tmux); the live view is untested"
            );
            return None;
        }
        let tmux = Self {
            socket: dir.join("tmux.sock"),
        };
        // The session's shell keeps the pane after volley exits, so the restored screen can be
        // read; CI is removed from volley's environment (the view never starts under CI).
        let status = tmux
            .cmd()
            .args(["new-session", "-d", "-s", "t", "-x", "132", "-y", "42"])
            .arg(command)
            .status()
            .expect("tmux runs");
        assert!(status.success(), "tmux new-session failed");
        Some(tmux)
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&self.socket).args(["-f", "/dev/null"]);
        c
    }

    /// The pane's text now.
    pub fn screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "t"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The pane's text with its history (what scrolled off the top).
    pub fn history(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-S", "-500", "-t", "t"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Whether the pane shows the alternate screen now.
    pub fn alternate_on(&self) -> bool {
        let out = self
            .cmd()
            .args(["display-message", "-p", "-t", "t", "#{alternate_on}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim() == "1"
    }

    pub fn keys(&self, keys: &str) {
        let status = self
            .cmd()
            .args(["send-keys", "-t", "t", keys])
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

/// The shell command the pane runs: volley, then its exit code and the terminal's modes into
/// files, then a wait so the pane stays.
pub fn pane_command(dir: &Path, volley_args: &str, env: &str) -> String {
    let d = dir.display();
    format!(
        "cd {d} && env -u CI {env} {bin} {volley_args} --json {d}/run.json --out {d}/results; \
         echo $? > {d}/exit.tmp; stty -a > {d}/stty.txt; mv {d}/exit.tmp {d}/exit; sleep 120",
        bin = env!("CARGO_BIN_EXE_volley"),
    )
}

/// The number after `label` on the screen's line that has it, e.g. "12,345 requests".
pub fn number_before(screen: &str, label: &str) -> Option<u64> {
    let at = screen.find(label)?;
    let digits: String = screen[..at]
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .collect();
    digits
        .chars()
        .rev()
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

/// The count of `code` in the screen's status code table (a line "│200   1,234 …").
pub fn status_count(screen: &str, code: &str) -> Option<u64> {
    screen.lines().find_map(|line| {
        let cells: Vec<&str> = line.split('│').map(str::trim).collect();
        let at = cells
            .iter()
            .position(|c| c.split_whitespace().next() == Some(code))?;
        let count = cells[at].split_whitespace().nth(1)?;
        count.replace(',', "").parse().ok()
    })
}
