//! `volley compare` against real runs: an A/A comparison must call nothing, a real 1 ms change
//! must be found, in the right direction, and runs that differ in more than the thing tested are
//! flagged; `volley suite` takes its targets' repeats in turns. Runs use a fixed server-side
//! delay (`/delay?ms=N`, closed model, 4 connections, one generator thread): latency and
//! throughput are then set by the target's timer, not by CPU contention, which keeps these tests
//! meaningful on a busy 2-core machine.

mod common;
mod suite_common;

use std::path::{Path, PathBuf};

use common::*;

/// Runs `url` `n` times (`--repeat n`, each `seconds` long) and returns the repeats folder.
fn repeats(dir: &Path, url: &str, n: u32, seconds: u32) -> PathBuf {
    let (folder, stdout) = run_repeats(dir, url, n, seconds);
    for i in 1..=n {
        assert!(folder.join(format!("repeat-{i}/run.json")).is_file());
        assert!(folder.join(format!("repeat-{i}/report.html")).is_file());
    }
    for file in ["summary.txt", "report.md", "report.html"] {
        assert!(folder.join(file).is_file(), "{file}");
    }
    assert!(stdout.contains(&format!("repeat {n}/{n}: ")), "{stdout}");
    folder
}

/// `volley compare … --format md` and its output.
fn compare(args: &[&Path], extra: &[&str]) -> String {
    let mut argv: Vec<String> = vec!["compare".into()];
    argv.extend(args.iter().map(|p| p.display().to_string()));
    argv.extend(["--format".into(), "md".into()]);
    argv.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = argv.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = run_volley(&refs);
    assert_eq!(code, Some(0), "{stderr}");
    // Shown with --nocapture: what the test measured.
    eprintln!("{stdout}");
    stdout
}

/// The cells of the "Statistics" row of `metric` for `variant`: change, interval, p (Holm),
/// method, verdict, runs to settle.
fn stats_row(md: &str, metric: &str, variant: &str) -> Vec<String> {
    let prefix = format!("| {metric} | {variant} | ");
    let line = md
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no row {prefix:?} in\n{md}"));
    line[prefix.len()..]
        .trim_end_matches(" |")
        .split(" | ")
        .map(str::to_string)
        .collect()
}

#[test]
fn a_a_repeats_show_no_significant_difference() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("compare-aa");
    let url = format!("{}/delay?ms=2", t.base_url());
    let folder = repeats(&dir, &url, 8, 1);
    // Interleaved halves (odd and even repeats), so a slow drift of the machine's load is shared
    // by both sides rather than mistaken for a difference.
    let odd = subset(&folder, (1..=8).step_by(2), &dir.join("odd"));
    let even = subset(&folder, (2..=8).step_by(2), &dir.join("even"));
    let md = compare(&[&odd, &even], &["--labels", "odd,even"]);
    for metric in ["throughput (req/s)", "latency p50 (ms)"] {
        let row = stats_row(&md, metric, "even");
        assert_eq!(
            row[3], "t test on logs over runs (4 vs 4)",
            "{metric}: {row:?}"
        );
        // Never a difference. "No significant difference" needs the whole interval within ±2 %,
        // which 4 one-second runs on a busy machine may not reach: then it is inconclusive.
        assert!(
            row[4] == "no significant difference" || row[4] == "inconclusive",
            "{metric}: {row:?}"
        );
    }
    for line in md.lines().filter(|l| l.contains(" | even | ")) {
        let verdict = line.split(" | ").nth(6).unwrap_or_default();
        assert!(
            !["faster", "slower", "fewer errors", "more errors"].contains(&verdict),
            "an A/A comparison called a difference: {line}"
        );
    }
    assert!(!md.contains("Not like-for-like"), "{md}");
    // The folder of repeats alone reports the spread: geometric means with intervals.
    let summary = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(summary.contains("| quick (baseline) |"), "{summary}");
    assert!(summary.contains("| throughput (req/s) | "), "{summary}");
}

#[test]
fn a_one_millisecond_slower_target_is_found_slower() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("compare-5-6");
    // 5 runs a side: every call must survive Holm's correction across the nine metrics, and
    // throughput runs of one second vary by ~5 % on a busy machine.
    let five = repeats(
        &dir.join("5"),
        &format!("{}/delay?ms=5", t.base_url()),
        5,
        1,
    );
    let six = repeats(
        &dir.join("6"),
        &format!("{}/delay?ms=6", t.base_url()),
        5,
        1,
    );
    let md = compare(&[&five, &six], &["--labels", "5ms,6ms"]);
    let p50 = stats_row(&md, "latency p50 (ms)", "6ms");
    assert_eq!(p50[3], "t test on logs over runs (5 vs 5)", "{p50:?}");
    assert_eq!(p50[4], "slower", "{p50:?}");
    let change: f64 = p50[0]
        .trim_start_matches('+')
        .trim_end_matches('%')
        .parse()
        .unwrap();
    // 5 → 6 ms plus a little overhead on each: about +19 %.
    assert!((10.0..30.0).contains(&change), "{p50:?}");
    let rps = stats_row(&md, "throughput (req/s)", "6ms");
    assert_eq!(rps[4], "slower", "{rps:?}");
    assert!(rps[0].starts_with('−'), "throughput fell: {rps:?}");
    assert!(md.contains("- **6ms vs 5ms: throughput slower (−"), "{md}");
    // The URLs differ, and the header says so.
    assert!(md.contains("> **Not like-for-like**"), "{md}");
    assert!(md.contains("target URL differs: 5ms = http://"), "{md}");

    // The default text format says the same.
    let (code, txt, _) = run_volley(&["compare", five.to_str().unwrap(), six.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    assert!(txt.contains("NOT LIKE-FOR-LIKE"), "{txt}");
    assert!(txt.contains(": throughput slower (−"), "{txt}");

    // The other way round, the same change is an improvement.
    let md = compare(&[&six, &five], &["--labels", "6ms,5ms"]);
    assert_eq!(stats_row(&md, "latency p50 (ms)", "5ms")[4], "faster");
    assert_eq!(stats_row(&md, "throughput (req/s)", "5ms")[4], "faster");
}

#[test]
fn single_runs_get_a_weak_verdict_and_mismatches_are_flagged() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("compare-single");
    let run = |ms: u32, seconds: u32| {
        let (_, record) = run_json(
            &dir.join(format!("{ms}-{seconds}")),
            &[
                &format!("{}/delay?ms={ms}", t.base_url()),
                "-c",
                "4",
                "-d",
                &format!("{seconds}s"),
                "--threads",
                "1",
            ],
        );
        assert!(summary_u64(&record, "requests") > 100);
        dir.join(format!("{ms}-{seconds}")).join("run.json")
    };
    for sub in ["5-6", "6-6", "5-3"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let five = run(5, 6);
    let six = run(6, 6);
    let md = compare(&[&five, &six], &["--labels", "5ms,6ms"]);
    let p50 = stats_row(&md, "latency p50 (ms)", "6ms");
    assert_eq!(p50[3], "the runs' own intervals (weak)", "{p50:?}");
    assert_eq!(p50[4], "slower (weak)", "{p50:?}");
    assert!(
        md.contains("verdicts marked (weak) rest on single runs"),
        "{md}"
    );
    // p95 has no per-second series, but each run has its interval: it is judged by them too.
    let p95 = stats_row(&md, "latency p95 (ms)", "6ms");
    assert_eq!(
        (p95[3].as_str(), p95[4].as_str()),
        ("the runs' own intervals (weak)", "slower (weak)"),
        "{p95:?}"
    );

    // Same target, different length: flagged as not like-for-like (report 002's mistake).
    let short = run(5, 3);
    let md = compare(&[&five, &short], &[]);
    assert!(md.contains("duration asked differs: "), "{md}");
    assert!(
        md.contains("measured duration differs by more than 10%"),
        "{md}"
    );
    // Default labels: the run names are equal ("quick"), so the folder names are used.
    assert!(md.contains("| 5-6 (baseline) |"), "{md}");
}

/// Where a suite's record of target `name`, repeat `i`, says the run started.
fn started_at(folder: &Path, name: &str, i: u32) -> String {
    let run = suite_common::read_json(&folder.join(format!("{name}/repeat-{i}/run.json")));
    run["started_at"].as_str().unwrap().to_string()
}

/// Runs a suite of two targets on one port (`volley serve`, started by the suite), 3 repeats,
/// with `extra` lines; returns the suite's results folder.
fn two_target_suite(dir: &Path, extra: &str) -> PathBuf {
    let port = closed_port();
    std::fs::write(
        dir.join("plan.toml"),
        "[target]\nbase_url = \"http://127.0.0.1:1\"\n[[scenario]]\nname = \"get\"\n\
         [scenario.load]\nprofile = \"constant-vus\"\nvus = 2\nduration = \"1s\"\n\
         [[scenario.step]]\nname = \"delay\"\npath = \"/delay?ms=1\"\n",
    )
    .unwrap();
    let target = |name: &str| {
        format!(
            "[[target]]\nname = \"{name}\"\nbase_url = \"http://127.0.0.1:{port}\"\n\
             command = [\"volley\", \"serve\", \"--port\", \"{port}\", \"--threads\", \"1\"]\n"
        )
    };
    std::fs::write(
        dir.join("suite.toml"),
        format!(
            "plan = \"plan.toml\"\nrepeats = 3\n{extra}{}{}",
            target("a"),
            target("b")
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
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let folder = only_subfolder(&results);
    let s = suite_common::read_json(&folder.join("suite.json"));
    for name in ["a", "b"] {
        assert_eq!(suite_common::target(&s, name)["status"], "ran", "{s:#}");
    }
    for pid in suite_common::pids(&s) {
        suite_common::assert_gone(pid);
    }
    folder
}

#[test]
fn a_suite_takes_its_repeats_in_turns() {
    let _serial = serial();
    let dir = temp_dir("compare-suite-order");
    // Both targets listen on one port: that works only because a turn stops its process.
    let folder = two_target_suite(&dir, "");
    let order = [("a", 1), ("b", 1), ("a", 2), ("b", 2), ("a", 3), ("b", 3)];
    let times: Vec<String> = order
        .iter()
        .map(|&(name, i)| started_at(&folder, name, i))
        .collect();
    // RFC 3339 in UTC with milliseconds: text order is time order.
    assert!(
        times.windows(2).all(|w| w[0] < w[1]),
        "not A B A B A B: {order:?} started at {times:?}"
    );
    let log = std::fs::read_to_string(folder.join("a/server.log")).unwrap();
    assert_eq!(
        log.matches("volley serve: listening on").count(),
        3,
        "one process per turn: {log}"
    );
    // The comparison of the suite sees interleaved runs: no order-and-drift warning.
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(!md.contains("order and drift confounded"), "{md}");

    // order = "sequential": every run of a, then every run of b.
    let dir = temp_dir("compare-suite-sequential");
    let folder = two_target_suite(&dir, "order = \"sequential\"\n");
    let order = [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("b", 3)];
    let times: Vec<String> = order
        .iter()
        .map(|&(name, i)| started_at(&folder, name, i))
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] < w[1]),
        "not A A A B B B: {order:?} started at {times:?}"
    );
}

#[test]
fn each_step_of_a_plan_is_judged_on_its_own() {
    let _serial = serial();
    // A plan whose step `slow` is 4 ms in B against 3 ms in A, beside an unchanged step and an
    // unchanged scenario: the run's pooled figures mix them, and only the step's own row shows
    // where the change is. Single runs of 5 s: weak verdicts from each run's own intervals.
    let t = target();
    let dir = temp_dir("compare-steps");
    let run = |name: &str, slow_ms: u32| -> PathBuf {
        let sub = dir.join(name);
        std::fs::create_dir_all(&sub).unwrap();
        let plan = sub.join("plan.toml");
        let text = format!(
            "name = \"steps\"\n[target]\nbase_url = \"{}\"\n{}{}",
            t.base_url(),
            delay_scenario("mix", 4, 5, &[("fast", 1), ("slow", slow_ms)]),
            delay_scenario("other", 2, 5, &[("mid", 2)]),
        );
        std::fs::write(&plan, text).unwrap();
        run_json_ok(&sub, &["run", plan.to_str().unwrap()]);
        only_subfolder(&sub.join("results"))
    };
    let (a, b) = (run("a", 3), run("b", 4));
    // A 5 % threshold: the change is +33 %, and two single runs' levels on a busy machine can
    // differ by a few per cent, which their own intervals cannot see (weak verdicts).
    let md = compare(&[&a, &b], &["--labels", "A,B", "--threshold", "5"]);
    assert!(md.contains("## By scenario and step"), "{md}");
    let slow = stats_row(&md, "mix / slow: latency p50 (ms)", "B");
    assert_eq!(slow[3], "the runs' own intervals (weak)", "{slow:?}");
    assert_eq!(slow[4], "slower (weak)", "{slow:?}");
    let line = md.lines().find(|l| l.starts_with("- **B vs A: ")).unwrap();
    assert!(line.contains("by scenario and step — "), "{line}");
    // What the step was called, up to the next part: its p50 among the calls.
    let said = line.split("mix / slow: ").nth(1).expect(line);
    let said = said.split("; ").next().unwrap();
    assert!(said.contains("latency p50 slower (weak, +"), "{line}");
    // The unchanged step's and scenario's latency is never called.
    for row in ["mix / fast: latency p50 (ms)", "other: latency p50 (ms)"] {
        let cells = stats_row(&md, row, "B");
        assert!(
            !cells[4].starts_with("slower") && !cells[4].starts_with("faster"),
            "{row}: {cells:?}"
        );
    }
    // The scenario alone is its only step: `other / mid` has no row of its own.
    assert!(!md.contains("other / mid"), "{md}");
    // The gate judges a step on its own: the slow step's p50 rose 33 %, the fast one's did not.
    let gate = |rule: &str| {
        let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
        run_volley(&["compare", a, b, "--threshold", "5", "--fail-on", rule])
    };
    let (code, out, _) = gate("p50{step=slow} > +10%");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with("FAIL: p50{step=slow} +"), "{out}");
    let (code, out, _) = gate("p50{step=fast} > +10%");
    assert_eq!(code, Some(0), "{out}");
    // `other / mid` is its scenario's only step: judged as `other`, which did not change.
    let (code, out, err) = gate("p50{step=mid} > +10%");
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.starts_with("PASS"), "{out}");
    let (code, _, err) = gate("p50{step=nope} > +10%");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("the runs have no step `nope`; they have mix, mix / fast, mix / slow, other"),
        "{err}"
    );
    let html = run_volley(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "html",
    ])
    .1;
    assert!(
        html.contains("By scenario and step"),
        "the HTML page has the table"
    );
}
