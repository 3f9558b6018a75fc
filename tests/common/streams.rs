//! Reading the stream figures of a record, the oracle's tolerance, and the Python peers
//! (tests/streams.rs, tests/grpc_streams.rs, tests/websocket.rs).

use serde_json::Value;

/// The stream figures of the step group `stream`.
pub fn step_streams(r: &Value) -> &Value {
    let g = r["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["kind"] == "step" && g["name"] == "stream")
        .expect("a step group `stream`");
    &g["streams"]
}

/// Asserts a measured median is the truth within max(0.2 ms, 3 %).
pub fn near_truth(what: &str, measured: f64, truth_ms: f64) {
    let tolerance = (truth_ms * 0.03).max(0.2);
    assert!(
        (measured - truth_ms).abs() <= tolerance,
        "{what}: measured {measured} ms against {truth_ms} ms (± {tolerance})"
    );
}

/// A server volley did not write: a script of `tests/peers/` that prints its port, started on
/// a free port and stopped by its PID when dropped.
pub struct PythonPeer {
    child: std::process::Child,
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
}

impl PythonPeer {
    /// Starts `tests/peers/{script}`; `needs` is the Python package it imports (for the
    /// message when it does not start), empty for the standard library.
    pub fn start(script: &str, needs: &str) -> Self {
        use std::io::BufRead;
        let path = format!("{}/tests/peers/{script}", env!("CARGO_MANIFEST_DIR"));
        let mut child = std::process::Command::new("python3")
            .arg(path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| match needs {
            "" => panic!("{script}: no port: {line:?}"),
            _ => {
                panic!("{script}: no port: {line:?} (is {needs} installed? `pip install {needs}`)")
            }
        });
        Self { child, port }
    }

    /// Its base URL.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for PythonPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
