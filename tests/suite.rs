//! `volley suite` end to end: the example suite (three `volley serve` processes of different
//! capacity, started by the suite) in short; a suite whose targets fail at each step; find-max
//! suites; invalid files. Every process a suite starts must be gone afterwards, checked by PID.
//! Ctrl-C during a suite: tests/suite_interrupts.rs.

mod common;
mod suite_common;

use std::time::{Duration, Instant};

use common::{closed_port, only_subfolder, serial, temp_dir, volley};
use suite_common::*;

#[test]
fn the_example_suite_ranks_three_capacities_in_order() {
    let _serial = serial();
    let dir = temp_dir("suite-example");
    let (suite, _) = example_suite(&dir);
    let results = dir.join("results");
    // Five times shorter than the example: a 3.4 s ramp per target after a 0.7 s smoke run.
    let out = volley()
        .arg("suite")
        .arg(&suite)
        .args(["--time-scale", "0.2", "--out"])
        .arg(&results)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let folder = only_subfolder(&results);
    assert!(
        folder
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("capacity-")
    );
    let s = read_json(&folder.join("suite.json"));

    // Throughput follows capacity (8, 4, 2 workers × 4 ms: at most 2000, 1000, 500 req/s), and
    // none exceeds what its capacity allows.
    let mut rps = Vec::new();
    for (name, max_rps) in [
        ("eight-workers", 2000.0),
        ("four-workers", 1000.0),
        ("two-workers", 500.0),
    ] {
        let t = target(&s, name);
        assert_eq!(t["status"], "ran", "{t:#}");
        assert_eq!(t["smoke"]["passed"], true, "{t:#}");
        let run = read_json(&folder.join(name).join("run.json"));
        assert_eq!(run["name"], name);
        let r = run["summary"]["rps"].as_f64().unwrap();
        assert!(r <= max_rps * 1.05, "{name}: {r} req/s above its capacity");
        assert!(r >= max_rps * 0.5, "{name}: {r} req/s, far below {max_rps}");
        assert_eq!(run["summary"]["errors"], 0, "{name}");
        rps.push(r);
        let log = std::fs::read_to_string(folder.join(name).join("server.log")).unwrap();
        assert!(log.contains("volley serve: listening on"), "{log}");
        assert!(folder.join(name).join("smoke.json").is_file());
        assert!(folder.join(name).join("report.html").is_file());
    }
    assert!(
        rps[0] > 1.4 * rps[1] && rps[1] > 1.4 * rps[2],
        "throughput not ordered by capacity: {rps:?}"
    );
    for pid in pids(&s) {
        assert_gone(pid);
    }

    // The report: every target, the ranking, the comparison table and its charts.
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(md.starts_with("# volley suite: capacity"), "{md}");
    assert!(md.contains("3 of 3 targets ran"), "{md}");
    assert!(
        md.contains("Throughput, highest first: eight-workers"),
        "{md}"
    );
    assert!(
        md.contains("## Comparison: eight-workers vs four-workers vs two-workers"),
        "{md}"
    );
    assert!(md.contains("| throughput (req/s) |"), "{md}");
    assert!(
        !md.contains("target URL differs"),
        "the URLs differ by design: {md}"
    );
    let html = std::fs::read_to_string(folder.join("report.html")).unwrap();
    for id in ["chart-compare-spectrum", "chart-compare-throughput"] {
        assert!(html.contains(id), "{id} missing");
    }
    assert!(stdout.contains("volley suite: capacity"), "{stdout}");

    // The targets' folders are ordinary results folders: volley compare reads them.
    let (code, text, err) = common::run_volley(&[
        "compare",
        folder.join("eight-workers").to_str().unwrap(),
        folder.join("two-workers").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(text.contains("two-workers vs eight-workers"), "{text}");

    // The suite's report again, from its record alone; a suite's record is not a run's.
    for (given, format, written) in [
        (folder.clone(), "md", "report.md"),
        (folder.join("suite.json"), "txt", "summary.txt"),
    ] {
        let (code, text, err) =
            common::run_volley(&["report", given.to_str().unwrap(), "-f", format]);
        assert_eq!(code, Some(0), "{err}");
        let kept = std::fs::read_to_string(folder.join(written)).unwrap();
        assert_eq!(text, kept, "{written} rendered again from suite.json");
    }
    let suite_json = folder.join("suite.json");
    let (code, _, err) = common::run_volley(&["compare", suite_json.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("a suite's record (suite.json), not a run's"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn failing_targets_are_reported_with_their_cause_and_the_good_one_still_runs() {
    let _serial = serial();
    let dir = temp_dir("suite-failures");
    let [silent, errors, no_reset, dies, good] = free_ports(5)[..] else {
        unreachable!()
    };
    std::fs::write(
        dir.join("plan.toml"),
        r#"
[target]
base_url = "http://127.0.0.1:1"
[[scenario]]
name = "get"
[scenario.load]
profile = "constant-vus"
vus = 4
duration = "1s"
[[scenario.step]]
name = "root"
path = "/"
"#,
    )
    .unwrap();
    let missing = closed_port();
    let crash = closed_port();
    // A server that is not the suite's answers where a target is to be started.
    let squatter = common::target();
    let taken = squatter.base_url();
    std::fs::write(
        dir.join("suite.toml"),
        format!(
            r#"
name = "failures"
plan = "plan.toml"
repeats = 2
[smoke]
time_scale = 0.5
max_error_rate = "1%"

[[target]]
name = "missing"
base_url = "http://127.0.0.1:{missing}"
command = ["volley-test-no-such-program", "--port", "{missing}"]

[[target]]
name = "crash"
base_url = "http://127.0.0.1:{crash}"
command = ["sh", "-c", "echo 'cannot bind: boom' >&2; exit 3"]

[[target]]
name = "taken"
base_url = "{taken}"
command = ["sleep", "30"]

[[target]]
name = "silent"
base_url = "http://127.0.0.1:{silent}"
command = ["sleep", "30"]
health_timeout = "1s"

# Healthy, but every request of the plan fails (/status/500/ is not a valid status: 400).
[[target]]
name = "errors"
base_url = "http://127.0.0.1:{errors}/status/500"
health_url = "http://127.0.0.1:{errors}/"
command = ["volley", "serve", "--port", "{errors}", "--threads", "1"]

[[target]]
name = "no-reset"
base_url = "http://127.0.0.1:{no_reset}"
command = ["volley", "serve", "--port", "{no_reset}", "--threads", "1"]
reset = ["sh", "-c", "echo 'no database to clear' >&2; exit 1"]

# Its third reset (before run 2) kills the server: run 2 cannot reach it.
[[target]]
name = "dies"
base_url = "http://127.0.0.1:{dies}"
command = ["sh", "-c", "echo $$ > dies.pid; exec \"$VOLLEY_BIN\" serve --port {dies} --threads 1"]
reset = ["sh", "-c", "echo x >> dies.resets; [ $(wc -l < dies.resets) -lt 3 ] || kill -KILL $(cat dies.pid)"]

[[target]]
name = "good"
base_url = "http://127.0.0.1:{good}"
command = ["volley", "serve", "--port", "{good}", "--threads", "1"]
reset = ["sh", "-c", "echo reset by suite"]
"#
        ),
    )
    .unwrap();
    let results = dir.join("results");
    let out = volley()
        .arg("suite")
        .arg(dir.join("suite.toml"))
        .arg("--out")
        .arg(&results)
        .arg("-q")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "-q prints nothing");
    // … but says on stderr why it failed: each target that did not run, and its cause.
    assert!(
        stderr.contains("missing: start failed: ")
            && stderr.contains("program `volley-test-no-such-program` not found"),
        "{stderr}"
    );
    let folder = only_subfolder(&results);
    let s = read_json(&folder.join("suite.json"));

    let t = target(&s, "missing");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"start".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(
        cause.contains("program `volley-test-no-such-program` not found"),
        "{cause}"
    );
    assert!(t["pid"].is_null());

    let t = target(&s, "crash");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"start".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(
        cause.contains("exited (exit status 3) before answering its health check")
            && cause.contains("last output: cannot bind: boom"),
        "{cause}"
    );
    assert_eq!(t["stopped"], "exited by itself (exit status 3)");
    let log = std::fs::read_to_string(folder.join("crash/server.log")).unwrap();
    assert!(log.contains("cannot bind: boom\n"), "{log}");

    let t = target(&s, "taken");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"start".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(cause.contains("something already answers at"), "{cause}");
    assert!(t["pid"].is_null(), "nothing started: {t:#}");
    drop(squatter);

    let t = target(&s, "silent");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"health".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(
        cause.contains("did not answer 2xx/3xx within 1s"),
        "{cause}"
    );
    assert!(cause.contains("refused"), "{cause}");
    assert!(
        t["stopped"]
            .as_str()
            .unwrap()
            .starts_with("stopped by SIGTERM"),
        "{t:#}"
    );

    let t = target(&s, "errors");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"smoke".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(
        cause.contains("requests failed") && cause.contains("http_"),
        "{cause}"
    );
    assert_eq!(t["smoke"]["passed"], false);
    assert!(
        t["records"].as_array().unwrap().is_empty(),
        "no measured run after a failed smoke"
    );
    assert!(folder.join("errors/smoke.json").is_file());

    let t = target(&s, "no-reset");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"reset".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(
        cause.contains("exit status 1") && cause.contains("reset.log"),
        "{cause}"
    );
    let log = std::fs::read_to_string(folder.join("no-reset/reset.log")).unwrap();
    assert!(log.contains("no database to clear"), "{log}");
    assert!(t["smoke"].is_null(), "no smoke run after a failed reset");

    let t = target(&s, "dies");
    assert_eq!(
        (&t["status"], &t["failed_step"]),
        (&"failed".into(), &"run".into())
    );
    let cause = t["cause"].as_str().unwrap();
    assert!(
        cause.starts_with("run 2 of 2: ") && cause.contains("connection_refused"),
        "{cause}"
    );
    assert_eq!(t["stopped"], "exited by itself (killed by SIGKILL)");
    assert_eq!(
        t["records"].as_array().unwrap().len(),
        2,
        "both runs are kept: {t:#}"
    );
    let first = read_json(&folder.join("dies/repeat-1/run.json"));
    assert_eq!(first["summary"]["errors"], 0);

    let t = target(&s, "good");
    assert_eq!(t["status"], "ran", "{t:#}");
    assert!(t["failed_step"].is_null() && t["cause"].is_null());
    for i in 1..=2 {
        let run = read_json(&folder.join(format!("good/repeat-{i}/run.json")));
        assert!(
            run["summary"]["requests"].as_u64().unwrap() > 100,
            "{run:#}"
        );
    }
    assert!(
        folder.join("good/report.md").is_file(),
        "the spread of the repeats"
    );
    // Reset ran before the smoke run and before each of the two runs.
    let resets = std::fs::read_to_string(folder.join("good/reset.log")).unwrap();
    assert_eq!(resets.matches("reset by suite\n").count(), 3, "{resets}");

    // Every process the suite started is gone: the silent one (which never listened) included.
    let started = pids(&s);
    assert_eq!(
        started.len(),
        6,
        "crash, silent, errors, no-reset, dies, good: {s:#}"
    );
    for pid in started {
        assert_gone(pid);
    }

    // The report lists each failure with its step and cause, and still shows the good target.
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(md.contains("1 of 8 targets ran"), "{md}");
    for line in [
        "> - missing — start failed: ",
        "> - crash — start failed: ",
        "> - taken — start failed: ",
        "> - silent — health check failed: ",
        "> - errors — smoke failed: ",
        "> - no-reset — reset failed: ",
        "> - dies — run failed: run 2 of 2: ",
    ] {
        assert!(md.contains(line), "`{line}` missing in:\n{md}");
    }
    assert!(md.contains("| good | ran | 2 |"), "{md}");
    assert!(md.contains(ONE_TARGET_NOTE), "{md}");
    let html = std::fs::read_to_string(folder.join("report.html")).unwrap();
    assert!(html.contains("silent — health check failed"), "{html}");
    std::fs::remove_dir_all(dir).unwrap();
}

const ONE_TARGET_NOTE: &str = "Only one target was measured";

#[test]
fn a_find_max_suite_finds_each_targets_capacity() {
    let _serial = serial();
    let dir = temp_dir("suite-find-max");
    let [two, four] = free_ports(2)[..] else {
        unreachable!()
    };
    std::fs::copy("examples/suite-plan.toml", dir.join("plan.toml")).unwrap();
    // p99 < 100 ms, as tests/findmax.rs has it: against 10 ms service times, 50 ms breaks a
    // step near the knee on one stall of a busy host, and the 20 s budget leaves no time to
    // recover from a false break.
    std::fs::write(
        dir.join("suite.toml"),
        format!(
            r#"
name = "search"
plan = "plan.toml"
[find_max]
slo = "p99<100ms,errors<1%"
budget = "20s"
step = "1s"
warmup = "300ms"
[[target]]
name = "two-workers"
base_url = "http://127.0.0.1:{two}"
command = ["volley", "serve", "--port", "{two}", "--threads", "1", "--capacity", "2", "--service-time", "10ms"]
[[target]]
name = "four-workers"
base_url = "http://127.0.0.1:{four}"
command = ["volley", "serve", "--port", "{four}", "--threads", "1", "--capacity", "4", "--service-time", "10ms"]
"#
        ),
    )
    .unwrap();
    let results = dir.join("results");
    let started = Instant::now();
    let out = volley()
        .arg("suite")
        .arg(dir.join("suite.toml"))
        .arg("--out")
        .arg(&results)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "two 20 s budgets"
    );
    let folder = only_subfolder(&results);
    let s = read_json(&folder.join("suite.json"));
    assert_eq!(s["find_max"], "open model, SLO p99<100ms,errors<1%");
    let mut found = Vec::new();
    for (name, capacity) in [("two-workers", 200.0), ("four-workers", 400.0)] {
        let t = target(&s, name);
        assert_eq!(t["status"], "ran", "{t:#}");
        let f = &t["find_max"];
        let max = f["max_sustainable_rps"].as_f64().unwrap();
        assert!(
            (max - capacity).abs() <= capacity * 0.15,
            "{name}: capacity {capacity} req/s, found {max}; steps {}",
            f["steps"]
        );
        assert_eq!(f["generator_limited"], false);
        assert!(f["elapsed_s"].as_f64().unwrap() <= 20.0 + 2.0);
        // The target's folder holds the search's record: its best step, every step under
        // find_max.
        let run = read_json(&folder.join(name).join("run.json"));
        assert_eq!(run["name"], format!("{name}-find-max"));
        assert_eq!(
            run["find_max"]["max_sustainable_rps"],
            f["max_sustainable_rps"]
        );
        found.push(max);
    }
    assert!(found[1] > 1.5 * found[0], "{found:?}");
    for pid in pids(&s) {
        assert_gone(pid);
    }
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(
        md.contains("Max sustainable throughput, highest first: four-workers"),
        "{md}"
    );
    assert!(md.contains("| Max sustainable (req/s) |"), "{md}");
    assert!(
        md.contains("## Comparison: two-workers vs four-workers"),
        "{md}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_invalid_suite_file_exits_2_with_its_location() {
    let dir = temp_dir("suite-invalid");
    let path = dir.join("bad.toml");
    std::fs::write(
        &path,
        "plan = \"plan.toml\"\n[[target]]\nname = \"a\"\nbase_url = \"http://127.0.0.1:1\"\ncommand = \"volley serve\"\n",
    )
    .unwrap();
    let (code, _, err) = common::run_volley(&["suite", path.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("bad.toml:5:11"), "{err}");
    assert!(
        err.contains("`command`: invalid type: string \"volley serve\", expected an array"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
