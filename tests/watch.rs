//! `--watch` end to end, against real servers on 127.0.0.1: the built-in target's own `/metrics`
//! next to volley's throughput; a `volley serve` process's CPU and RSS; a suite of two targets
//! with their efficiency figures; and every way a watch can go wrong (a refused URL, an HTML page,
//! an endless body, a page that never comes, a metric that matches nothing, a process that exits
//! mid-run), each a warning while the run completes with its record.

mod common;
mod suite_common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{
    closed_port, only_subfolder, run_json, run_volley, serial, temp_dir, valid_record, volley,
    wait_until, warning_codes,
};
use serde_json::Value;
use suite_common::{free_ports, read_json, target};
use volley::server::{Backends, TargetConfig, spawn_with_backends};
use volley::watch::PromWatcher;
use volley::watch::prom::{PromWatch, ReadingStat};
use volley::watch::scrape::Scraper;
use volley::watch::select::Selector;

/// The watched series `name` + `labels` with `stat` of the first Prometheus watch.
fn series<'a>(record: &'a Value, name: &str, labels: &str, stat: &str) -> &'a Value {
    record["watch"]["prom"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name && s["labels"] == labels && s["stat"] == stat)
        .unwrap_or_else(|| panic!("no {name}{labels} {stat} in {:#}", record["watch"]))
}

#[test]
fn the_targets_request_rate_is_stored_next_to_volleys_and_agrees() {
    let _serial = serial();
    let dir = temp_dir("watch-prom");
    let t = common::target();
    let base = t.base_url();
    // The watch URL carries credentials (sent as Basic auth), which nothing volley writes shows.
    let password = "vly-watch-8b3f1a";
    let watch_base = base.replacen("://", &format!("://watcher:{password}@"), 1);
    let (out, r) = run_json(
        &dir,
        &[
            &format!("{base}/"),
            "-d",
            "4s",
            "-c",
            "4",
            "--threads",
            "1",
            "--watch",
            &format!("prom={watch_base}/metrics"),
            "--watch-metric",
            "volley_target_requests_total{path=\"/\"}",
            "--watch-metric",
            "volley_target_in_flight",
        ],
    );
    t.stop();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let watched = &r["watch"]["prom"][0];
    assert_eq!(watched["failures"], serde_json::json!({}), "{watched:#}");
    let target_rate = series(
        &r,
        "volley_target_requests_total",
        "{path=\"/\",status=\"200\"}",
        "rate",
    );
    let ours = r["series"].as_array().unwrap();
    let theirs = target_rate["values"].as_array().unwrap();
    assert_eq!(theirs.len(), ours.len(), "one value per second of the run");
    // Second by second, where both have a full second: the target counts what volley sent.
    let mut compared = 0;
    for (s, v) in ours.iter().zip(theirs) {
        let (Some(v), true) = (v.as_f64(), s["span_s"].as_f64().unwrap() > 0.99) else {
            continue;
        };
        let volley_rps = s["requests"].as_f64().unwrap() / s["span_s"].as_f64().unwrap();
        assert!(
            (v - volley_rps).abs() <= 0.25 * volley_rps + 50.0,
            "second {}: target {v:.0}/s, volley {volley_rps:.0}/s",
            s["t_s"]
        );
        compared += 1;
    }
    assert!(
        compared >= 3,
        "{compared} seconds compared: {target_rate:#}"
    );
    // Over the run, the mean rates agree (the drain and the grid's jitter aside).
    let mean = target_rate["stats"]["mean"].as_f64().unwrap();
    let rps = r["summary"]["rps"].as_f64().unwrap();
    assert!(
        (mean - rps).abs() <= 0.2 * rps,
        "target {mean:.0}/s, volley {rps:.0}/s"
    );
    series(&r, "volley_target_in_flight", "", "value");
    // The record validates against the schema; the reports show it.
    let results = only_subfolder(&dir.join("results"));
    valid_record(&results.join("run.json"));
    let md = std::fs::read_to_string(results.join("report.md")).unwrap();
    let shown = base.replacen("://", "://[redacted]@", 1);
    assert!(
        md.contains(&format!("Target metrics: {shown}/metrics")),
        "{md}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    for file in ["run.json", "report.md", "report.html", "summary.txt"] {
        let text = std::fs::read_to_string(results.join(file)).unwrap();
        assert!(!text.contains(password), "{file} holds the password");
    }
    assert!(!stderr.contains(password), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(password));
    assert!(md.contains("| start | end | min | max | mean |"), "{md}");
    let html = std::fs::read_to_string(results.join("report.html")).unwrap();
    let throughput = html.find("id=\"chart-throughput\"").unwrap();
    let rates = html
        .find("id=\"chart-watch-rates-0\"")
        .expect("the watch's chart");
    assert!(rates > throughput, "under the throughput chart");
    let summary = std::fs::read_to_string(results.join("summary.txt")).unwrap();
    assert!(summary.contains("Watched"), "{summary}");
}

/// `volley serve` on a free port, answering.
fn serve() -> (Child, String) {
    let port = closed_port();
    let child = Command::new(env!("CARGO_BIN_EXE_volley"))
        .args(["serve", "--port", &port.to_string(), "--threads", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    wait_until("volley serve answers", Duration::from_secs(20), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    (child, base)
}

#[test]
fn a_watched_volley_serve_process_has_its_cpu_and_rss_recorded() {
    let _serial = serial();
    let dir = temp_dir("watch-pid");
    let (mut child, base) = serve();
    let pid = child.id().to_string();
    let (out, r) = run_json(
        &dir,
        &[
            &format!("{base}/"),
            "-d",
            "3s",
            "-c",
            "4",
            "--threads",
            "1",
            "--watch",
            &format!("pid={pid}"),
        ],
    );
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let p = &r["watch"]["processes"][0];
    assert_eq!(p["pid"].as_u64().unwrap().to_string(), pid);
    assert_eq!(p["role"], "given");
    assert!(p["command"].as_str().unwrap().contains("serve"), "{p:#}");
    assert!(p["cpu_s"].as_f64().unwrap() > 0.0, "{p:#}");
    assert!(p["mean_cores"].as_f64().unwrap() > 0.0, "{p:#}");
    assert!(p["peak_rss_bytes"].as_u64().unwrap() > 1 << 20, "{p:#}");
    let sampled = p["cpu_cores"].as_array().unwrap();
    assert_eq!(sampled.len(), r["series"].as_array().unwrap().len());
    assert!(
        sampled.iter().filter(|v| v.is_number()).count() >= 2,
        "{p:#}"
    );
    assert!(p["threads"][0].as_u64().unwrap() >= 1, "{p:#}");
    assert!(p["fds"][0].as_u64().unwrap() >= 3, "{p:#}");
    assert!(p["exited_at_s"].is_null(), "{p:#}");
    assert!(!warning_codes(&r).iter().any(|c| c.starts_with("watch")));
}

/// A loopback server that answers every connection with `answer` (on a thread of its own, for
/// as long as the test binary runs).
fn misbehaving(answer: fn(&mut std::net::TcpStream)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/metrics", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = conn.read(&mut buf);
                answer(&mut conn);
            });
        }
    });
    url
}

fn answer_html(c: &mut std::net::TcpStream) {
    let body = "<!doctype html><html><body>login</body></html>";
    let _ = write!(
        c,
        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
}

fn answer_endless(c: &mut std::net::TcpStream) {
    let _ = c.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n");
    let line = b"# a page that never ends\n".repeat(1000);
    while c.write_all(&line).is_ok() {}
}

fn answer_never(c: &mut std::net::TcpStream) {
    // Holds the connection, never answers, until the client gives up.
    let mut buf = [0u8; 16];
    while c.read(&mut buf).is_ok_and(|n| n > 0) {}
}

fn prom_watch<'a>(r: &'a Value, url: &str) -> &'a Value {
    r["watch"]["prom"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["url"] == url)
        .unwrap_or_else(|| panic!("no watch of {url}: {:#}", r["watch"]))
}

#[test]
fn watches_that_go_wrong_are_warnings_and_the_run_keeps_its_record() {
    let _serial = serial();
    let dir = temp_dir("watch-bad");
    let t = common::target();
    let base = t.base_url();
    let refused = format!("http://127.0.0.1:{}/metrics", closed_port());
    let (html, endless, silent) = (
        misbehaving(answer_html),
        misbehaving(answer_endless),
        misbehaving(answer_never),
    );
    // A process that exits a second into the run (a zombie until the test reaps it).
    let mut short = Command::new("sleep").arg("1.2").spawn().unwrap();
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"
[target]
base_url = "{base}"
[[scenario]]
name = "s"
[scenario.load]
profile = "constant-vus"
vus = 2
duration = "3s"
[[scenario.step]]
name = "root"
path = "/"

[[watch]]
prom = "{refused}"
[[watch]]
prom = "{html}"
[[watch]]
prom = "{endless}"
[[watch]]
prom = "{silent}"
timeout = "300ms"
[[watch]]
prom = "{base}/metrics"
metrics = ["no_such_metric", 'volley_target_requests_total{{path="/nowhere"}}']
[[watch]]
pid = {}
"#,
            short.id()
        ),
    )
    .unwrap();
    let out = volley()
        .arg("run")
        .arg(&plan)
        .args(["--threads", "1", "--out"])
        .arg(dir.join("results"))
        .output()
        .unwrap();
    let _ = short.wait();
    t.stop();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "warning: watch prom={refused}: connection refused"
        )),
        "said at the start: {stderr}"
    );
    let results = only_subfolder(&dir.join("results"));
    let r = valid_record(&results.join("run.json"));
    assert!(
        r["summary"]["requests"].as_u64().unwrap() > 100,
        "measured in full"
    );
    for (url, kind) in [
        (&refused, "refused"),
        (&html, "not_metrics"),
        (&endless, "too_large"),
        (&silent, "timeout"),
    ] {
        let w = prom_watch(&r, url);
        let failed = w["failures"][kind].as_u64().unwrap_or(0);
        assert!(failed >= 3, "{url}: {kind} {failed}: {w:#}");
        assert_eq!(
            failed,
            w["scrapes"].as_u64().unwrap(),
            "every scrape: {w:#}"
        );
    }
    let nothing = prom_watch(&r, &format!("{base}/metrics"));
    assert!(
        nothing["failures"]["nothing_matched"].as_u64().unwrap() >= 3,
        "{nothing:#}"
    );
    assert_eq!(nothing["series"], serde_json::json!([]));
    let p = &r["watch"]["processes"][0];
    let exited = p["exited_at_s"].as_f64().expect("the exit is noted");
    assert!((0.0..3.0).contains(&exited), "{p:#}");
    let codes = warning_codes(&r);
    for code in [
        "watch_scrape_failed",
        "watch_nothing_matched",
        "watch_pid_exited",
    ] {
        assert!(codes.contains(&code), "{code} in {codes:?}");
    }
    let md = std::fs::read_to_string(results.join("report.md")).unwrap();
    assert!(md.contains("matched no series"), "{md}");
    assert!(md.contains("the process exited"), "{md}");
}

#[test]
fn watch_flags_and_tables_that_cannot_work_are_refused_before_the_run() {
    let (code, _, stderr) = run_volley(&["http://127.0.0.1:9/", "--watch", "localhost:9090"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("prom=URL") && stderr.contains("pid=N"),
        "{stderr}"
    );
    let (code, _, stderr) = run_volley(&[
        "http://127.0.0.1:9/",
        "--watch",
        "prom=http://127.0.0.1:9/metrics",
        "--watch-metric",
        "x{job=unquoted}",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("double quotes"), "{stderr}");
    // A PID that does not exist: said before any load is sent.
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let (code, _, stderr) = run_volley(&[
        "http://127.0.0.1:9/",
        "-d",
        "1s",
        "--watch",
        &format!("pid={pid}"),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&format!("no process {pid}")), "{stderr}");
    let dir = temp_dir("watch-plan-errors");
    let plan = dir.join("plan.toml");
    let text = "[target]\nbase_url = \"http://127.0.0.1:9\"\n[[scenario]]\nname = \"s\"\n\
                [scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n\
                [[scenario.step]]\nname = \"r\"\npath = \"/\"\n[[watch]]\n\
                prom = \"https://127.0.0.1:9/metrics\"\n";
    std::fs::write(&plan, text).unwrap();
    let (code, _, stderr) = run_volley(&["check", plan.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("plan.toml:13:8") && stderr.contains("only http://"),
        "{stderr}"
    );
}

fn write_suite(dir: &Path) -> std::path::PathBuf {
    let ports = free_ports(2);
    let mut text = String::from("name = \"efficiency\"\nplan = \"plan.toml\"\n");
    for (name, port) in ["one", "two"].iter().zip(&ports) {
        text.push_str(&format!(
            "[[target]]\nname = \"{name}\"\nbase_url = \"http://127.0.0.1:{port}\"\n\
             command = [\"volley\", \"serve\", \"--port\", \"{port}\", \"--threads\", \"1\"]\n\
             health_timeout = \"20s\"\n"
        ));
    }
    std::fs::write(dir.join("suite.toml"), text).unwrap();
    std::fs::write(
        dir.join("plan.toml"),
        "[target]\nbase_url = \"http://127.0.0.1:1\"\n[[scenario]]\nname = \"s\"\n\
         [scenario.load]\nprofile = \"constant-vus\"\nvus = 4\nduration = \"3s\"\n\
         [[scenario.step]]\nname = \"r\"\npath = \"/\"\n",
    )
    .unwrap();
    dir.join("suite.toml")
}

#[test]
fn a_suite_shows_cpu_per_request_and_peak_rss_of_each_target_it_started() {
    let _serial = serial();
    let dir = temp_dir("watch-suite");
    let suite = write_suite(&dir);
    let out = volley()
        .arg("suite")
        .arg(&suite)
        .arg("--out")
        .arg(dir.join("results"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let folder = only_subfolder(&dir.join("results"));
    let s = read_json(&folder.join("suite.json"));
    for name in ["one", "two"] {
        let t = target(&s, name);
        let run = read_json(&folder.join(name).join("run.json"));
        let p = &run["watch"]["processes"][0];
        assert_eq!(p["role"], "suite_target", "{p:#}");
        assert_eq!(p["pid"], t["pid"], "the process the suite started");
        assert!(p["cpu_s"].as_f64().unwrap() > 0.0, "{p:#}");
        assert!(p["peak_rss_bytes"].as_u64().unwrap() > 1 << 20, "{p:#}");
    }
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    let header = md
        .lines()
        .find(|l| l.contains("CPU s / 1k req"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        header.contains("Peak RSS") && header.contains("Mean CPU cores"),
        "{header}"
    );
    let columns: Vec<&str> = header.split('|').map(str::trim).collect();
    let at = |name: &str| columns.iter().position(|c| *c == name).unwrap();
    for name in ["one", "two"] {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {name} ")))
            .unwrap_or_else(|| panic!("{name}: {md}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let cpu: f64 = cells[at("CPU s / 1k req")].parse().unwrap_or(-1.0);
        assert!(cpu > 0.0, "{name}: {row}");
        assert!(cells[at("Peak RSS")].ends_with("MiB"), "{name}: {row}");
    }
}

/// The watcher's scraper of `url`, with a short timeout.
fn scraper(url: &str) -> Scraper {
    let mut s = Scraper::new(url).unwrap();
    s.timeout = Duration::from_millis(300);
    s
}

/// The scraper, the selectors and the watcher against the built-in target (its own `/metrics`
/// with two backends), in the library's terms; moved here so that the watch module's unit
/// tests do not import the built-in target (`server`), which made `watch → server → record →
/// watch` an import cycle in test code.
#[test]
fn scrapes_the_built_in_targets_metrics_and_watches_its_backends() {
    let config = TargetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        threads: 1,
        capacity: None,
    };
    let target = spawn_with_backends(config, Backends::new(2, &[]).unwrap()).unwrap();
    let url = format!("{}/metrics", target.base_url());
    let selectors = vec![Selector::parse("volley_target_backend_requests_total").unwrap()];
    let mut w = PromWatcher::new(scraper(&url), PromWatch::new(selectors, 10), true);
    let first = w.tick(0.0);
    assert_eq!(first.failures.total(), 0, "{:?}", first.failures);
    assert_eq!(first.new_series.len(), 2, "b1 and b2");
    // Four requests through the front: two per backend, between two scrapes 2 s apart.
    for _ in 0..4 {
        scraper(&format!("{}/", target.base_url()))
            .scrape()
            .unwrap();
    }
    let second = w.tick(2.0);
    let rates: Vec<f64> = second
        .readings
        .iter()
        .filter(|r| r.stat == ReadingStat::Rate)
        .map(|r| r.value)
        .collect();
    assert_eq!(rates, [1.0, 1.0], "2 requests / 2 s per backend");
    target.stop();
}
