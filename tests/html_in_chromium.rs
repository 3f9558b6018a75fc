//! The HTML reports (a run, a comparison, a suite) in a real browser: headless Chromium loads each
//! page from disk, and the test checks that it logged nothing to the console (the page has no
//! scripts, and its Content-Security-Policy turns any attempt to fetch something into a console
//! error), that every chart was laid out at a readable size with its data drawn, and keeps a
//! screenshot under `target/tmp/chromium/`.
//!
//! Chromium is required: without it the test fails and says how to install it
//! (`apt-get install -y chromium`; `VOLLEY_CHROMIUM` may point at another Chromium or Chrome).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use volley::record::model::{CheckResult, Group, GroupKind, ThresholdResult};
use volley::record::suite::{Status, SuiteOutcome, SuiteStep as Step, TargetOutcome};

/// Longest a Chromium invocation may take before it is killed.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(120);

fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("VOLLEY_CHROMIUM") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "VOLLEY_CHROMIUM={} is not a file; point it at a Chromium or Chrome binary, or unset \
             it and install Chromium: apt-get update && apt-get install -y chromium",
            path.display()
        );
        return path;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "Chromium is required for the HTML report test and was not found (looked for chromium, \
         chromium-browser, google-chrome in PATH, and $VOLLEY_CHROMIUM). Install it with:\n\n    \
         apt-get update && apt-get install -y chromium\n"
    );
}

/// Runs headless Chromium on `page` with `extra` flags and a fresh profile; returns its output.
/// Killed (with every process it started) if it takes longer than [`CHROMIUM_TIMEOUT`].
fn run_chromium(page: &Path, extra: &[String]) -> Output {
    use std::os::unix::process::CommandExt;
    let profile = temp_dir(&format!(
        "chromium-profile-{}",
        page.file_stem().unwrap().to_string_lossy()
    ));
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .process_group(0);
    let child = cmd.spawn().expect("chromium starts");
    let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = match rx.recv_timeout(CHROMIUM_TIMEOUT) {
        Ok(output) => output.expect("chromium runs"),
        Err(_) => {
            // Still running, so the group is ours: Chromium and every helper it started.
            let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
            panic!(
                "chromium did not finish within {CHROMIUM_TIMEOUT:?} on {}",
                page.display()
            );
        }
    };
    let _ = std::fs::remove_dir_all(profile);
    output
}

/// Console messages Chromium logged while loading the page (`…:CONSOLE…] "message", source: …`).
fn console_messages(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect()
}

/// Measures every chart in the browser: an instrumented copy of the page (the policy relaxed to
/// allow this one inline script) records, per chart, the laid-out size of its `<svg>` and how
/// many coloured (data) lines, bars and points and visible text labels it drew.
const MEASURE: &str = r#"<script>
(function () {
  const grey = (c) => { const m = /^#(..)(..)(..)$/i.exec(c || ''); return !m || (m[1] === m[2] && m[2] === m[3]); };
  const out = [];
  for (const fig of document.querySelectorAll('figure.chart')) {
    const svg = fig.querySelector('svg');
    const box = svg.getBoundingClientRect();
    let data = 0;
    for (const p of svg.querySelectorAll('polyline')) {
      const b = p.getBBox();
      if (!grey(p.getAttribute('stroke')) && p.points.numberOfItems >= 2 && (b.width > 0 || b.height > 0)) data++;
    }
    for (const r of svg.querySelectorAll('rect, circle')) {
      const b = r.getBBox();
      if (!grey(r.getAttribute('fill')) && b.width > 0 && b.height > 0) data++;
    }
    const texts = [...svg.querySelectorAll('text')].filter((t) => t.getBBox().width > 0).length;
    out.push({ id: fig.dataset.chart, width: box.width, height: box.height, data: data, texts: texts });
  }
  const pre = document.createElement('pre');
  pre.id = 'chart-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"#;

const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// Loads `page` and asserts it is clean and every expected chart is drawn; keeps a screenshot.
fn check_page(page: &Path, expected_charts: &[&str], screenshot: &Path) {
    let html = std::fs::read_to_string(page).unwrap();
    assert!(
        html.contains(POLICY),
        "the page declares its no-fetch policy"
    );

    // 1. The page as written: no console output at all, and the DOM holds every chart.
    let out = run_chromium(page, &["--dump-dom".into()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {stderr}");
    let messages = console_messages(&stderr);
    assert!(
        messages.is_empty(),
        "console messages on {}:\n{messages:#?}",
        page.display()
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    for id in expected_charts {
        assert!(
            dom.contains(&format!("data-chart=\"{id}\"")),
            "chart {id} missing from the DOM"
        );
    }

    // 2. Every chart laid out and drawn.
    let measured = page.with_extension("measured.html");
    std::fs::write(
        &measured,
        html.replace(POLICY, &format!("{POLICY}; script-src 'unsafe-inline'"))
            .replace("</body>", &format!("{MEASURE}</body>")),
    )
    .unwrap();
    let out = run_chromium(&measured, &["--dump-dom".into()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let messages = console_messages(&stderr);
    assert!(messages.is_empty(), "console messages:\n{messages:#?}");
    let dom = String::from_utf8_lossy(&out.stdout);
    let json = dom
        .split("<pre id=\"chart-check\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the measuring script did not run:\n{stderr}"));
    let charts: serde_json::Value = serde_json::from_str(json).unwrap();
    let charts = charts.as_array().unwrap();
    let ids: Vec<&str> = charts.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, expected_charts);
    for c in charts {
        let (w, h) = (c["width"].as_f64().unwrap(), c["height"].as_f64().unwrap());
        assert!(w >= 400.0 && h >= 200.0, "chart laid out too small: {c}");
        assert!(c["data"].as_u64().unwrap() >= 1, "chart without data: {c}");
        assert!(
            c["texts"].as_u64().unwrap() >= 8,
            "chart without axis labels: {c}"
        );
    }

    // 3. A picture for people.
    std::fs::create_dir_all(screenshot.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(screenshot);
    let out = run_chromium(
        page,
        &[
            format!("--screenshot={}", screenshot.display()),
            "--window-size=1280,1800".into(),
        ],
    );
    assert!(out.status.success());
    let png = std::fs::read(screenshot).expect("screenshot written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{}",
        screenshot.display()
    );
}

fn screenshots() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("chromium")
}

#[test]
fn run_and_compare_reports_render_in_chromium() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("chromium");
    // An open-model run (both latencies: from due time and from send).
    let (_, open) = run_json(
        &dir.join("open"),
        &[
            &format!("{}/delay?ms=2&dist=exp", t.base_url()),
            "--rate",
            "400",
            "-c",
            "64",
            "-d",
            "4s",
            "--threads",
            "1",
        ],
    );
    assert!(summary_u64(&open, "requests") > 1000);
    let (_, closed) = run_json(
        &dir.join("closed"),
        &[
            &format!("{}/delay?ms=3", t.base_url()),
            "-c",
            "4",
            "-d",
            "4s",
            "--threads",
            "1",
        ],
    );
    assert!(summary_u64(&closed, "requests") > 500);

    // A ladder's breakdown, as a plan run records it: phases, a threshold and a check.
    let path = dir.join("open/run.json");
    common::verified(&path);
    let mut record = volley::record::read_record(&path).unwrap();
    let base = record.summary.latency_ms;
    record.groups = (1..=4)
        .map(|i| Group {
            kind: GroupKind::Phase,
            name: format!("phase {i}: {} VUs", i * 25),
            scenario: Some("default".into()),
            operation: None,
            start_s: Some(f64::from(i - 1)),
            end_s: Some(f64::from(i)),
            target_vus: Some(i * 25),
            target_rps: None,
            requests: 400 * u64::from(i),
            errors: 0,
            not_sent: 0,
            drained: 0,
            window_s: 1.0,
            iterations: None,
            arrival: None,
            rps: 380.0 * f64::from(i).sqrt(),
            latency_ms: volley::record::model::Percentiles {
                p99: base.p99.map(|p| p * f64::from(i)),
                ..base
            },
            status: Default::default(),
            errors_by_kind: Default::default(),
            histogram_us: record.histograms.latency_us.clone(),
            ramp_from: None,
            think_s: 0.0,
            pacing_s: 0.0,
            streams: None,
            ci95: None,
            batches: None,
        })
        .collect();
    record.thresholds = vec![ThresholdResult {
        unit: None,
        metric: "latency".into(),
        condition: "p99 < 50ms".into(),
        observed: base.p99,
        passed: true,
        aborted: false,
        aborted_at_s: None,
        observed_at_abort: None,
    }];
    record.checks = vec![CheckResult {
        scenario: "default".into(),
        step: "delay".into(),
        check: "status == 200".into(),
        passed: record.summary.requests,
        failed: 0,
    }];
    let ladder = dir.join("ladder.json");
    volley::record::write_record(&ladder, &record).unwrap();

    let run_page = dir.join("run-report.html");
    let (code, _, stderr) = run_volley(&[
        "report",
        ladder.to_str().unwrap(),
        "-f",
        "html",
        "-o",
        run_page.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    check_page(
        &run_page,
        &[
            "throughput",
            "latency",
            "in-flight",
            "spectrum",
            "histogram",
            "phases",
        ],
        &screenshots().join("run-report.png"),
    );

    let compare_page = dir.join("compare-report.html");
    let (code, _, stderr) = run_volley(&[
        "compare",
        dir.join("closed/run.json").to_str().unwrap(),
        dir.join("open/run.json").to_str().unwrap(),
        "--labels",
        "closed 3ms,open 2ms exp",
        "-f",
        "html",
        "-o",
        compare_page.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    check_page(
        &compare_page,
        &["compare-spectrum", "compare-throughput"],
        &screenshots().join("compare-report.png"),
    );

    // A suite's report: two targets measured, one that failed its health check.
    let ran = |name: &str, folder: &str| {
        let mut t = TargetOutcome::new(name, &t.base_url(), Path::new(folder));
        t.runs = vec![volley::record::read_record(&dir.join(folder).join("run.json")).unwrap()];
        t.ready_after_s = Some(0.05);
        t.stopped = Some("stopped by SIGTERM (exit status 0)".into());
        t
    };
    let mut down = TargetOutcome::new("down", "http://127.0.0.1:9", Path::new("down"));
    down.status = Status::Failed;
    down.failed_step = Some(Step::Health);
    down.cause = Some("http://127.0.0.1:9 did not answer 2xx/3xx within 1s".into());
    let suite = SuiteOutcome {
        schema_version: volley::record::suite::SUITE_SCHEMA_VERSION,
        name: "chromium".into(),
        source: dir.join("suite.toml"),
        plan: Some(dir.join("plan.toml")),
        repeats: 1,
        find_max: None,
        folder: dir.clone(),
        started_at: "2026-01-02T03:04:05.678Z".into(),
        ended_at: "2026-01-02T03:05:05.678Z".into(),
        interrupted: None,
        notes: Vec::new(),
        decided: Vec::new(),
        decisions: Vec::new(),
        threshold_pct: None,
        targets: vec![ran("closed", "closed"), ran("open", "open"), down],
        exit_code: None,
    };
    let suite_page = dir.join("suite-report.html");
    std::fs::write(&suite_page, volley::report::suite::html(&suite).unwrap()).unwrap();
    check_page(
        &suite_page,
        &["compare-spectrum", "compare-throughput"],
        &screenshots().join("suite-report.png"),
    );
}

#[test]
fn the_console_check_catches_a_page_that_fetches() {
    // The check above is only as good as its ability to fail: a page that tries to load an image
    // from the network must produce a console message.
    let dir = temp_dir("chromium-negative");
    let page = dir.join("fetches.html");
    std::fs::write(
        &page,
        format!(
            "<!doctype html><html><head><meta http-equiv=\"Content-Security-Policy\" \
             content=\"{POLICY}\"></head><body><img src=\"http://127.0.0.1:{}/x.png\"></body></html>",
            closed_port()
        ),
    )
    .unwrap();
    let out = run_chromium(&page, &["--dump-dom".into()]);
    let messages = console_messages(&String::from_utf8_lossy(&out.stderr));
    assert!(
        messages
            .iter()
            .any(|m| m.contains("Content Security Policy")),
        "{messages:#?}"
    );
}
