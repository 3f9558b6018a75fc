//! Real metric stores for the export tests, each read through the Prometheus HTTP query API:
//! Prometheus (Debian's `prometheus` 2.42, remote write and scrapes) and VictoriaMetrics
//! single-node (`go install …/app/victoria-metrics@v1.151.0`, OTLP). `.ci/run` installs both.
//!
//! [`Store`] starts one on 127.0.0.1 with a temporary storage folder, waits until it is ready,
//! and stops it by its PID when dropped. Without the binary a test says so loudly and passes,
//! unless `CI` is set: then it fails ([`binary`]).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The binary `name`: `$env_var`, else the first in `PATH`, else Go's `~/go/bin` (where `go
/// install` puts it). `None` (after saying how to install it) outside CI; a failure in CI.
pub fn binary(env_var: &str, name: &str, install: &str) -> Option<PathBuf> {
    let found = std::env::var_os(env_var).map(PathBuf::from).or_else(|| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let home = std::env::var_os("HOME").map(|h| PathBuf::from(h).join("go/bin"));
        std::env::split_paths(&path)
            .chain(home)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and no `{name}` was found; .ci/run installs it ({install})"
        );
        eprintln!(
            "\n\n*** SKIPPED: no `{name}` in PATH or ~/go/bin; install it with {install} ***\n\n"
        );
    }
    found
}

/// A running metric store.
pub struct Store {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    log: PathBuf,
    /// VictoriaMetrics buffers new samples: flushed before each query.
    flush: bool,
}

impl Store {
    /// Prometheus with `scrape_configs` (YAML, may be empty), scraping every second, receiving
    /// remote write.
    pub fn prometheus(binary: &PathBuf, name: &str, scrape_configs: &str) -> Store {
        let dir = super::temp_dir(name);
        let config = dir.join("prometheus.yml");
        let yaml =
            format!("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n{scrape_configs}");
        std::fs::write(&config, yaml).unwrap();
        let port = super::closed_port();
        let args = [
            format!("--config.file={}", config.display()),
            format!("--storage.tsdb.path={}", dir.join("data").display()),
            format!("--web.listen-address=127.0.0.1:{port}"),
            "--web.enable-remote-write-receiver".into(),
        ];
        Self::start(binary, &dir, port, &args, "/-/ready", false)
    }

    /// VictoriaMetrics single-node: OTLP at `/opentelemetry/v1/metrics`, names converted to
    /// Prometheus's (`-opentelemetry.usePrometheusNaming`), samples visible at once.
    pub fn victoria_metrics(binary: &PathBuf, name: &str) -> Store {
        let dir = super::temp_dir(name);
        let port = super::closed_port();
        let args = [
            format!("-storageDataPath={}", dir.join("data").display()),
            format!("-httpListenAddr=127.0.0.1:{port}"),
            "-opentelemetry.usePrometheusNaming".into(),
            "-search.latencyOffset=0s".into(),
            "-search.disableCache".into(),
        ];
        Self::start(binary, &dir, port, &args, "/health", true)
    }

    fn start(
        binary: &PathBuf,
        dir: &std::path::Path,
        port: u16,
        args: &[String],
        ready: &str,
        flush: bool,
    ) -> Store {
        let log = dir.join("store.log");
        let child = Command::new(binary)
            .args(args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("store.out")).unwrap())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("{} starts: {e}", binary.display()));
        let store = Store {
            child,
            base: format!("http://127.0.0.1:{port}"),
            log,
            flush,
        };
        super::wait_until("the store ready", Duration::from_secs(60), || {
            get(&store.base, ready).is_some_and(|r| r.starts_with("HTTP/1.1 200"))
        });
        store
    }

    /// The `data` of an instant query now (`None`: no answer, or an error).
    pub fn query(&self, query: &str) -> Option<Value> {
        if self.flush {
            get(&self.base, "/internal/force_flush")?;
        }
        let path = format!("/api/v1/query?query={}", url_encode(query));
        let response = get(&self.base, &path)?;
        let body = &response[response.find("\r\n\r\n")? + 4..];
        let json: Value = serde_json::from_str(body).ok()?;
        (json["status"] == "success").then(|| json["data"].clone())
    }

    /// The value of an instant query with a single result, now (`None`: no single result yet).
    pub fn value(&self, query: &str) -> Option<f64> {
        let data = self.query(query)?;
        match data["result"].as_array()?.as_slice() {
            [one] => one["value"][1].as_str()?.parse().ok(),
            _ => None,
        }
    }

    /// Polls `query` until it answers `expected` (30 s at most; then fails with the last answer
    /// and the store's log).
    pub fn expect(&self, query: &str, expected: f64) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut last = None;
        super::wait_until(query, Duration::from_secs(31), || {
            last = self.value(query);
            last == Some(expected) || Instant::now() > deadline
        });
        assert_eq!(last, Some(expected), "{query}\nlog:\n{}", self.log());
    }

    /// The store's log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A GET; the whole response, or `None` if nothing answers yet.
pub fn get(base: &str, path: &str) -> Option<String> {
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

/// Percent-encodes a query parameter.
pub fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
