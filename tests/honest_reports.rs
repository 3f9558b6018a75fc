//! Figures and reports that used to mislead (issue 10, section 2: items 1 and 6–10), each checked
//! the way a user meets it: the real binary against the built-in target on 127.0.0.1, then what
//! the terminal, `run.json`, `report.md` and `report.html` say.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;
use volley::server::{self, TargetConfig};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Writes a plan for the target at `base` into `dir`; returns its path.
fn plan(dir: &Path, base: &str, body: &str) -> PathBuf {
    let path = dir.join("plan.toml");
    std::fs::write(
        &path,
        format!("name = \"honest\"\n[target]\nbase_url = \"{base}\"\n{body}"),
    )
    .unwrap();
    path
}

/// Runs `plan` on one worker thread into `dir/out`; that folder and (exit code, stdout, stderr).
fn run_plan_on_one_thread(dir: &Path, plan: &Path) -> (PathBuf, (Option<i32>, String, String)) {
    let out = dir.join("out");
    let ran = run_volley(&[
        "run",
        plan.to_str().unwrap(),
        "--threads",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    (out, ran)
}

/// The results folder's files: (record, summary.txt, report.md, report.html).
fn results(out: &Path) -> (Value, String, String, String) {
    let folder = only_subfolder(out);
    let record = valid_record(&folder.join("run.json"));
    (
        record,
        read(&folder.join("summary.txt")),
        read(&folder.join("report.md")),
        read(&folder.join("report.html")),
    )
}

/// Item 1: `abort_on_fail` cut an 8 s plan short, exit 0, and only `"aborted": true` in run.json
/// told. Now the threshold says FAIL with when it failed, the exit code is 99, and the first line
/// of every report says the run was aborted and why.
#[test]
fn a_run_ended_by_a_threshold_says_so_first_and_exits_99() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("honest-abort");
    let plan = plan(
        &dir,
        &t.base_url(),
        "[[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 2\n\
         duration = \"8s\"\n[[scenario.step]]\nname = \"root\"\npath = \"/\"\n\
         [thresholds]\nrps = [{ condition = \"> 100000000\", abort_on_fail = true }]\n",
    );
    let (out, (code, stdout, stderr)) = run_plan_on_one_thread(&dir, &plan);
    assert_eq!(code, Some(99), "{stdout}\n{stderr}");
    let (record, summary, md, html) = results(&out);
    let th = &record["thresholds"][0];
    assert_eq!(th["aborted"], true, "{th}");
    assert_eq!(th["passed"], false, "{th}");
    let at = th["aborted_at_s"].as_f64().expect("aborted_at_s");
    assert!(at > 0.0 && at < 7.0, "{th}");
    assert!(th["observed_at_abort"].as_f64().is_some(), "{th}");
    assert!(record["summary"]["duration_s"].as_f64().unwrap() < 7.0);

    let first = summary.lines().next().unwrap();
    assert!(first.starts_with("FAILED — Aborted at t = "), "{summary}");
    assert!(first.contains("threshold `rps > 100000000`"), "{first}");
    assert!(stdout.starts_with(first), "{stdout}");
    assert!(
        summary.contains("FAIL (aborted the run at t = "),
        "{summary}"
    );
    assert!(md.contains("\n**FAILED** — Aborted at t = "), "{md}");
    assert!(md.contains("| FAIL (aborted the run at t = "), "{md}");
    assert!(html.contains("Aborted at t = "), "report.html");
}

/// A threshold's observed value is shown in the unit of its condition: `errors rate < 0.5%`
/// once showed `0.500` beside it, which read as a passing 0.5 % for a failing 50 %.
#[test]
fn thresholds_show_what_they_observed_in_their_own_unit() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("honest-threshold-units");
    let plan = plan(
        &dir,
        &t.base_url(),
        "[[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"iterations\"\nvus = 1\n\
         iterations = 50\n[[scenario.step]]\nname = \"ok\"\npath = \"/\"\n\
         [[scenario.step]]\nname = \"bad\"\npath = \"/status/500\"\n\
         [thresholds]\nerrors = [\"rate < 0.5%\"]\nlatency = [\"p99 < 10s\"]\n\
         rps = [\"> 1\"]\nrequests = [\"count >= 100\"]\n",
    );
    let (out, (code, stdout, stderr)) = run_plan_on_one_thread(&dir, &plan);
    assert_eq!(code, Some(99), "{stdout}\n{stderr}");
    let (record, summary, md, _) = results(&out);
    let units: Vec<&str> = record["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|th| th["unit"].as_str().unwrap())
        .collect();
    assert_eq!(units, ["ratio", "ms", "count", "per_second"]);
    let row = |text: &str, condition: &str| {
        let line = text.lines().find(|l| l.contains(condition));
        line.unwrap_or_else(|| panic!("no {condition}: {text}"))
            .to_string()
    };
    // Markdown shows `<` and `>` as entities (escaped as everything the user wrote).
    let md = md.replace("&lt;", "<").replace("&gt;", ">");
    for text in [&summary, &md] {
        let errors = row(text, "rate < 0.5%");
        assert!(
            errors.contains("50.00%") && errors.contains("FAIL"),
            "{errors}"
        );
        assert!(row(text, "p99 < 10s").contains(" ms"), "{text}");
        assert!(row(text, "> 1").contains(" req/s"), "{text}");
        assert!(row(text, "count >= 100").contains("100"), "{text}");
    }
}

/// Records written by the previous format version (1: rates with the drain in their
/// denominator, local connect failures counted as requests, an aborted threshold marked
/// `passed: true`) are refused with the reason and what to do, never misread.
#[test]
fn records_of_the_previous_version_are_refused_with_the_reason() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/records");
    for name in ["v1-aborted-plan.json", "v1-find-max-no-break.json"] {
        let path = fixtures.join(name);
        for format in ["txt", "md", "html"] {
            let (code, _, stderr) = run_volley(&["report", path.to_str().unwrap(), "-f", format]);
            assert_eq!(code, Some(2), "{name} {format}: {stderr}");
            assert!(
                stderr.contains("record format version 1 (written by volley 0.1.0)")
                    && stderr.contains("reads version 2")
                    && stderr.contains("render it with the volley version that wrote it"),
                "{name} {format}: {stderr}"
            );
        }
    }
}

/// Item 6: a search that found no break within its budget reports a lower bound everywhere, and
/// its results folder is `find-max-<time>`, not `find-max-find-max-<time>`.
#[test]
fn find_max_without_a_break_reports_a_lower_bound() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("honest-find-max");
    let out = dir.join("out");
    // Two steps fit in the budget (2 × (0.2 + 1 + 0.4 s) ≤ 4 s): 20/s and 40/s, both easy.
    let (code, stdout, stderr) = run_volley(&[
        "find-max",
        &format!("{}/", t.base_url()),
        "--slo",
        "p99<2s",
        "--start",
        "20",
        "--budget",
        "4s",
        "--step",
        "1s",
        "--warmup",
        "200ms",
        "--threads",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let folder = only_subfolder(&out);
    let name = folder.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("find-max-") && !name.starts_with("find-max-find-max"),
        "{name}"
    );
    let (record, summary, md, html) = results(&out);
    // minijinja escapes `/` in HTML text.
    let html = html.replace("&#x2f;", "/");
    let f = &record["find_max"];
    assert_eq!(f["lower_bound"], "no break found within the budget", "{f}");
    assert!(f["breaking_load"].is_null(), "{f}");
    let bound = "req/s (no break found within the budget)";
    for (what, text) in [
        ("stdout", &stdout),
        ("summary", &summary),
        ("md", &md),
        ("html", &html),
    ] {
        let at = text.find(bound).unwrap_or_else(|| panic!("{what}: {text}"));
        assert!(text[..at].ends_with(|c: char| c.is_ascii_digit() || c == ' '));
        assert!(
            text[..at].rfind('≥').is_some_and(|g| at - g < 16),
            "{what}: {text}"
        );
    }
}

/// Item 7: plan reports began `(plan) URL — closed model, 0 connections, -`. They describe each
/// scenario's real load now, from the record's typed `scenarios[].load`. Item 9 rides along: the
/// ladder from p10 and the mean of every group.
#[test]
fn a_plan_report_describes_its_scenarios_and_the_whole_ladder() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("honest-plan");
    let plan = plan(
        &dir,
        &t.base_url(),
        "[[scenario]]\nname = \"smoke\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 2\n\
         duration = \"1s\"\n[[scenario.step]]\nname = \"root\"\npath = \"/\"\n\
         [[scenario]]\nname = \"climb\"\nstart_after = \"1s\"\n[scenario.load]\n\
         profile = \"ladder\"\nphases = [{ vus = 1, duration = \"500ms\" }, \
         { vus = 2, duration = \"500ms\" }]\n[[scenario.step]]\nname = \"slow\"\n\
         path = \"/delay?ms=1\"\n",
    );
    let (out, (code, stdout, stderr)) = run_plan_on_one_thread(&dir, &plan);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let (record, summary, md, html) = results(&out);
    let described = "smoke: 2 VUs for 1.0s; climb: ladder of 2 phases up to 2 VUs over 1.0s, \
                     from 1.0s";
    assert!(stderr.contains(described), "banner: {stderr}");
    let subtitle = summary.lines().nth(1).unwrap();
    assert!(subtitle.starts_with("plan "), "{summary}");
    assert!(subtitle.ends_with(described), "{summary}");
    assert!(md.contains(&format!("{described}`")), "{md}");
    assert!(html.contains(described), "report.html");
    for text in [&summary, &md, &html] {
        assert!(!text.contains("0 connections"), "{text}");
    }
    let load = &record["config"]["scenarios"][1]["load"];
    assert_eq!(load["profile"], "ladder", "{load}");
    assert_eq!(load["model"], "closed", "{load}");
    assert_eq!(load["peak_vus"], 2, "{load}");
    assert_eq!(load["stages"], 2, "{load}");

    // The ladder starts at p10 in the record, the summary and the reports.
    let l = &record["summary"]["latency_ms"];
    let (p10, p25, p50) = (
        l["p10"].as_f64().unwrap(),
        l["p25"].as_f64().unwrap(),
        l["p50"].as_f64().unwrap(),
    );
    assert!(
        l["min"].as_f64().unwrap() <= p10 && p10 <= p25 && p25 <= p50,
        "{l}"
    );
    let ladder = summary
        .lines()
        .find(|l| l.contains("p50"))
        .expect("latency heads");
    assert!(
        ladder.contains(" p10 ") && ladder.contains(" p25 "),
        "{summary}"
    );
    assert!(
        md.contains("| min | mean | stdev | p10 | p25 | p50 |"),
        "{md}"
    );
    // Every group table has the mean.
    for table in ["## Scenarios", "## Steps", "## Phases"] {
        let at = md.find(table).unwrap_or_else(|| panic!("{table}: {md}"));
        let head = md[at..].lines().nth(2).unwrap();
        assert!(head.contains("| req/s | mean ms | p50 ms |"), "{head}");
    }
}

/// Item 8: `-c 4 --streams 16` over HTTP/2 was "64 connections" while 4 were opened.
#[test]
fn http2_streams_are_described_as_connections_times_streams() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("honest-streams");
    let out = dir.join("out");
    let (code, stdout, stderr) = run_volley(&[
        &format!("{}/", t.base_url()),
        "--http2",
        "-c",
        "4",
        "--streams",
        "16",
        "-d",
        "500ms",
        "--threads",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let shape = "closed model, 4 connections × 16 streams (64 in flight)";
    let (record, summary, md, html) = results(&out);
    assert_eq!(record["summary"]["connections_opened"], 4);
    for (what, text) in [
        ("banner", &stderr),
        ("stdout", &stdout),
        ("summary", &summary),
        ("md", &md),
        ("html", &html),
    ] {
        assert!(text.contains(shape), "{what}: {text}");
        assert!(!text.contains("64 connections"), "{what}: {text}");
    }
}

/// Item 10: `-q` printed nothing when a threshold failed, or when every request failed; the exit
/// code alone does not say why. One line on stderr does, and nothing else is printed.
#[test]
fn quiet_runs_that_fail_say_why_in_one_line() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("honest-quiet");
    let plan = plan(
        &dir,
        &t.base_url(),
        "[[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\n\
         duration = \"300ms\"\n[[scenario.step]]\nname = \"root\"\npath = \"/\"\n\
         [thresholds]\nrps = [\"> 100000000\"]\n",
    );
    let out = dir.join("out");
    let (code, stdout, stderr) = run_volley(&[
        "run",
        plan.to_str().unwrap(),
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(99));
    assert_eq!(stdout, "");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("volley: 1 of 1 thresholds failed"),
        "{stderr}"
    );

    let down = format!("http://127.0.0.1:{}/", closed_port());
    let out = out.to_str().unwrap();
    let (code, stdout, stderr) = run_volley(&[&down, "-n", "5", "-c", "1", "-q", "--out", out]);
    assert_eq!(code, Some(1));
    assert_eq!(stdout, "");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("volley: No connection to the target worked: connection_refused"),
        "{stderr}"
    );
}

/// Item 10: the negotiated TLS version and ALPN protocol are in the record and the reports.
#[test]
fn the_negotiated_tls_version_and_alpn_are_recorded() {
    let _serial = serial();
    let tls = server::spawn_tls(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    })
    .expect("TLS target starts");
    let dir = temp_dir("honest-tls");
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, tls.ca_pem().unwrap()).unwrap();
    let url = format!("{}/", tls.base_url());
    let ca = ca.to_str().unwrap();
    for (extra, version, alpn) in [
        (&[][..], "TLSv1.3", "http/1.1"),
        (&["--http2"][..], "TLSv1.3", "h2"),
        (&["--tls-version", "1.2"][..], "TLSv1.2", "http/1.1"),
    ] {
        let mut args = vec![
            url.as_str(),
            "--cacert",
            ca,
            "-n",
            "40",
            "-c",
            "2",
            "--threads",
            "1",
        ];
        args.extend_from_slice(extra);
        let (out, record) = run_json(&dir, &args);
        assert!(out.status.success(), "{extra:?}: {out:?}");
        let negotiated = &record["summary"]["tls_negotiated"];
        assert_eq!(negotiated.as_array().map(Vec::len), Some(1), "{negotiated}");
        assert_eq!(negotiated[0]["version"], version, "{extra:?}: {negotiated}");
        assert_eq!(negotiated[0]["alpn"], alpn, "{extra:?}: {negotiated}");
        assert_eq!(
            negotiated[0]["connections"], record["summary"]["connections_opened"],
            "{extra:?}: {negotiated}"
        );
        let r: volley::record::RunRecord = serde_json::from_value(record.clone()).unwrap();
        let md = volley::report::markdown::render(&r);
        let words = format!("negotiated: {version}, ALPN {alpn} × ");
        assert!(md.contains(&words), "{extra:?}: {md}");
    }
}

/// Item 10: the demo's "CPU per request" included the built-in target running in the same
/// process. It is the worker threads' CPU over the requests they finished now.
#[test]
fn cpu_per_request_counts_the_worker_threads_only() {
    let _serial = serial();
    let dir = temp_dir("honest-demo");
    let out = dir.join("out");
    let (code, _, stderr) =
        run_volley(&["demo", "--duration", "1s", "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stderr}");
    let mut seen = 0;
    for entry in std::fs::read_dir(&out).unwrap() {
        let record = valid_record(&entry.unwrap().path().join("run.json"));
        let g = &record["generator"];
        let workers: f64 = g["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["cpu_s"].as_f64().unwrap())
            .sum();
        let finished = summary_u64(&record, "requests") + summary_u64(&record, "warmup_requests");
        let expected = workers * 1e6 / finished as f64;
        let per = g["cpu_us_per_request"].as_f64().unwrap();
        assert!(
            (per - expected).abs() <= 1e-9 * expected,
            "{per} vs {expected}"
        );
        // The process (the target serving those requests among its threads) spent more.
        assert!(g["cpu_s"].as_f64().unwrap() > workers, "{g}");
        seen += 1;
    }
    assert_eq!(seen, 2);
}

/// Item 10: `--max-header-size` and `--max-body-size` appeared under "gRPC:" in `--help`, whose
/// exit codes lacked 99.
#[test]
fn help_puts_the_response_limits_under_their_own_heading() {
    let (code, help, _) = run_volley(&["--help"]);
    assert_eq!(code, Some(0));
    let grpc = help_section(&help, "gRPC:");
    let limits = help_section(&help, "Response limits:");
    for flag in ["--max-header-size", "--max-body-size"] {
        assert!(!grpc.contains(flag), "{flag} under gRPC: {grpc}");
        assert!(limits.contains(flag), "{flag}: {limits}");
    }
    let words = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("99 a threshold failed"), "{help}");
}

/// The lines of `--help` under `heading`, up to the next heading (a line at column 0 ending with
/// a colon).
fn help_section<'a>(help: &'a str, heading: &str) -> &'a str {
    let start = help
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no {heading} in {help}"))
        + heading.len()
        + 2;
    let rest = &help[start..];
    let end = rest
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .find(|&i| {
            let line = rest[i..].lines().next().unwrap_or_default();
            !line.is_empty() && !line.starts_with(' ') && line.ends_with(':')
        })
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Item 10: the README described `volley serve` twice, and its exit codes lacked 99. The
/// README and its chapters under `docs/` are read as one.
#[test]
fn the_readme_says_each_thing_once_and_lists_every_exit_code() {
    let readme: String = common::documents().iter().map(|d| read(d)).collect();
    let usage = "`volley serve [--port 8080]";
    assert_eq!(readme.matches(usage).count(), 1, "{usage}");
    let codes = readme
        .lines()
        .skip_while(|l| !l.starts_with("Exit codes: `0`"))
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    for code in ["`0`", "`1`", "`2`", "`99`", "`130`"] {
        assert!(codes.contains(code), "{code} missing from: {codes}");
    }
}
