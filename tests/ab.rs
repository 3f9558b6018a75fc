//! `volley ab` (docs/measurement.md, "A/B until decided"): A and B by turns until the metric is
//! decided. A large change is decided early, in its direction, with every run kept and
//! verified; replayed A/A sequences seldom call a difference; bad flags are refused.

mod common;

use std::path::PathBuf;

/// Runs `volley ab` with `args`; returns its stdout (it must succeed).
fn ab(args: &[&str]) -> String {
    let (code, stdout, stderr) = common::run_volley(&[&["ab"], args].concat());
    assert_eq!(code, Some(0), "{stderr}");
    stdout
}

/// The pairs a sequence used and the call on its one metric, from its first lines.
fn outcome(stdout: &str) -> (u32, String) {
    let first = stdout.lines().next().unwrap();
    let pairs = first
        .split("until decided: ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    let call = ["faster", "slower", "equivalent", "undecided"]
        .into_iter()
        .find(|c| stdout.lines().nth(1).unwrap().contains(c))
        .unwrap_or_else(|| panic!("{stdout}"));
    (pairs, call.to_string())
}

#[test]
fn a_large_change_is_decided_early_and_every_run_is_kept() {
    let target = common::target();
    let dir = common::temp_dir("ab-live");
    let a = format!("{}/delay?ms=2", target.base_url());
    let b = format!("{}/delay?ms=4", target.base_url());
    let out = dir.to_str().unwrap();
    let stdout = ab(&[
        &a,
        &b,
        "-c",
        "4",
        "-d",
        "1s",
        "--metric",
        "p50",
        "--max-runs",
        "8",
        "--out",
        out,
    ]);
    let (pairs, call) = outcome(&stdout);
    assert_eq!(call, "slower", "{stdout}");
    assert!((3..=8).contains(&pairs), "{stdout}");
    assert!(stdout.contains("decided at pair"), "{stdout}");
    assert!(
        stdout.contains("volley comparison"),
        "the comparison follows: {stdout}"
    );
    // The URLs differ on purpose: no like-for-like warning for it (there was one).
    assert!(!stdout.contains("NOT LIKE-FOR-LIKE"), "{stdout}");
    let top = common::only_subfolder(&dir);
    for file in ["sequence.txt", "comparison.md", "comparison.html"] {
        assert!(top.join(file).is_file(), "{file}");
    }
    // The page says what was decided, as the Markdown does (there was no page).
    let html = std::fs::read_to_string(top.join("comparison.html")).unwrap();
    assert!(
        html.contains("<html") && html.contains(&format!("until decided: {pairs} pair(s)")),
        "{html}"
    );
    let records = common::records_under(&top);
    assert_eq!(records.len() as u32, 2 * pairs, "one record per run");
    for r in &records {
        common::verified(r);
    }
}

#[test]
fn replayed_a_a_sequences_seldom_call_a_difference_and_a_b_ones_decide() {
    // A pool of real runs (A, A' and B with a +50 % delay), replayed in random orders, as
    // bench/ab.sh does with a larger pool and a +10 % change (bench/README.md).
    let target = common::target();
    let dir = common::temp_dir("ab-replay");
    let run_into = |side: &str, i: usize, ms: &str| {
        let folder = dir.join(side).join(format!("repeat-{i}"));
        std::fs::create_dir_all(&folder).unwrap();
        let url = format!("{}/delay?ms={ms}", target.base_url());
        common::run_json_ok(&folder, &[&url, "-c", "4", "-d", "1s"]);
    };
    for i in 1..=8 {
        run_into("a1", i, "2");
        run_into("a2", i, "2");
        run_into("b", i, "3");
    }
    let pool = |side: &str| -> Vec<PathBuf> {
        (1..=8)
            .map(|i| dir.join(side).join(format!("repeat-{i}")).join("run.json"))
            .collect()
    };
    let (a1, a2, b) = (pool("a1"), pool("a2"), pool("b"));
    let mut rng = fastrand::Rng::with_seed(5);
    let replay = |n: usize, left: Vec<PathBuf>, right: Vec<PathBuf>| {
        let seq = dir.join(format!("seq-{n}"));
        for (side, runs) in [("a", left), ("b", right)] {
            for (j, run) in runs.into_iter().enumerate() {
                let folder = seq.join(side).join(format!("repeat-{}", j + 1));
                std::fs::create_dir_all(&folder).unwrap();
                std::fs::copy(run, folder.join("run.json")).unwrap();
            }
        }
        let (sa, sb, out) = (seq.join("a"), seq.join("b"), seq.join("out"));
        let args = [
            "--metric",
            "p50",
            "--max-runs",
            "5",
            "--out",
            out.to_str().unwrap(),
        ];
        let stdout = ab(&[&[sa.to_str().unwrap(), sb.to_str().unwrap()][..], &args].concat());
        let (pairs, call) = outcome(&stdout);
        // A replay writes what it decided too.
        let top = common::only_subfolder(&out);
        assert!(top.join("comparison.md").is_file() && top.join("sequence.txt").is_file());
        // The comparison is over the runs the sequence decided on, not every run the folders
        // hold (5 a side).
        if call == "faster" || call == "slower" {
            let over = format!("over runs ({pairs} vs {pairs})");
            assert!(stdout.contains(&over), "{stdout}");
        }
        (pairs, call)
    };
    let mut false_calls = 0;
    let mut decided = 0;
    for n in 0..20 {
        // The pool's rounds in a random order; a round's runs are a pair, as `volley ab` runs.
        let mut rounds: Vec<usize> = (0..8).collect();
        rng.shuffle(&mut rounds);
        rounds.truncate(5);
        let take = |side: &[PathBuf]| -> Vec<PathBuf> {
            rounds.iter().map(|&i| side[i].clone()).collect()
        };
        let (_, call) = replay(n, take(&a1), take(&a2));
        false_calls += usize::from(call == "faster" || call == "slower");
        let (_, call) = replay(100 + n, take(&a1), take(&b));
        decided += usize::from(call == "slower");
    }
    // The design holds false calls to 5 %; 20 sequences from one small pool are not
    // independent, so the bound here is generous.
    assert!(
        false_calls <= 4,
        "{false_calls} of 20 A/A sequences called a difference"
    );
    assert!(
        decided >= 16,
        "{decided} of 20 +50 % sequences decided slower"
    );
}

#[test]
fn bad_flags_are_refused_with_what_and_why() {
    let target = common::target();
    let url = format!("{}/", target.base_url());
    for (args, says) in [
        (vec!["--metric", "max"], "not one of"),
        (vec!["--threshold", "0"], "--threshold"),
        (vec!["--repeat", "2"], "--repeat"),
        (vec!["--json", "x.json"], "not with `volley ab`"),
        // The first pair (1 s + 1 s) would overrun the time allowed.
        (
            vec!["--max-time", "1500ms"],
            "shorter than one pair of runs (A 1.0s + B 1.0s)",
        ),
        // A stream figure of plans without streams: refused before any run, not run to
        // --max-runs without a value.
        (vec!["--metric", "ttft"], "TTFT p50 needs a streaming step"),
        (vec!["--metric", "rtt"], "needs a bidirectional stream"),
    ] {
        let all = [&["ab", url.as_str(), url.as_str(), "-d", "1s"][..], &args].concat();
        let (code, _, stderr) = common::run_volley(&all);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    // A folder of runs replayed against itself.
    let dir = common::temp_dir("ab-same");
    let d = dir.to_str().unwrap();
    let (code, _, stderr) = common::run_volley(&["ab", d, d]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("A and B are the same folder"), "{stderr}");
    // Sides that are neither two folders nor two tests, said before anything runs.
    let missing = dir.join("nofile.toml");
    for (args, says) in [
        (vec![d, url.as_str()], "not one of each".to_string()),
        (
            vec!["duration=1s", "duration=2s"],
            "`duration=1s` is an override (KEY=VALUE): give the plan it overrides with --plan"
                .to_string(),
        ),
        (
            vec![
                "--plan",
                missing.to_str().unwrap(),
                url.as_str(),
                url.as_str(),
            ],
            format!("cannot read plan {}", missing.display()),
        ),
        (
            vec![
                "--plan",
                concat!(env!("CARGO_MANIFEST_DIR"), "/tests/malformed/ok-plan.toml"),
                url.as_str(),
                "x=1",
            ],
            "with --plan, A and B are the plan's overrides".to_string(),
        ),
        // With a plan, a flag of quick mode's test has nothing to act on (it was ignored).
        (
            vec![
                "--plan",
                concat!(env!("CARGO_MANIFEST_DIR"), "/tests/malformed/ok-plan.toml"),
                "x=1",
                "x=2",
                "--threads",
                "1",
                "-d",
                "1s",
            ],
            "invalid -d/--duration: with --plan, the plan is the test".to_string(),
        ),
    ] {
        let (code, _, stderr) = common::run_volley(&[&["ab"][..], &args].concat());
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&says), "{args:?}: {stderr}");
    }
}

#[test]
fn a_step_of_a_plan_is_decided_on_its_own() {
    // B's step `slow` waits 6 ms where A's waits 3; the step `fast` is the same in both. The
    // sequence decides the slow step's own p50, not the run's, which pools the two steps.
    let target = common::target();
    let dir = common::temp_dir("ab-step");
    let plan = dir.join("plan.toml");
    let text = format!(
        "[target]\nbase_url = \"{}\"\n[vars]\nms = 3\n[[scenario]]\nname = \"mix\"\n\
         [scenario.load]\nprofile = \"constant-vus\"\nvus = 4\nduration = \"1s\"\n\
         [[scenario.step]]\nname = \"fast\"\npath = \"/delay?ms=1\"\n\
         [[scenario.step]]\nname = \"slow\"\npath = \"/delay?ms={{{{ vars.ms }}}}\"\n",
        target.base_url()
    );
    std::fs::write(&plan, text).unwrap();
    let (plan, out) = (plan.to_str().unwrap(), dir.to_str().unwrap());
    let common = [
        "--plan",
        plan,
        "vars.ms=3",
        "vars.ms=6",
        "--max-runs",
        "6",
        "--out",
        out,
    ];
    let stdout = ab(&[&common[..], &["--metric", "p50{step=slow}"]].concat());
    let (pairs, call) = outcome(&stdout);
    assert_eq!(call, "slower", "{stdout}");
    assert!((3..=6).contains(&pairs), "{stdout}");
    assert!(
        stdout.contains("latency p50 of step `slow` slower"),
        "{stdout}"
    );
    let refused = |metric: &str| {
        let (code, _, stderr) =
            common::run_volley(&[&["ab"], &common[..], &["--metric", metric]].concat());
        assert_eq!(code, Some(2), "{metric}: {stderr}");
        stderr
    };
    // A step the plan does not have is refused before any run, naming what it has.
    let stderr = refused("p50{step=pay}");
    assert!(
        stderr.contains("the plan has no step `pay`; it has mix, mix / fast, mix / slow"),
        "{stderr}"
    );
    // A figure not measured per part is refused before any run.
    let stderr = refused("p99.9{step=slow}");
    assert!(
        stderr.contains("not measured per scenario, step or phase"),
        "{stderr}"
    );
    // Replayed runs have no plan to check first: a part they lack is refused at the first pair.
    let top = common::only_subfolder(&dir);
    // The comparison written after the decision is `volley compare`'s: each step judged too.
    let md = std::fs::read_to_string(top.join("comparison.md")).unwrap();
    assert!(md.contains("## By step"), "{md}");
    assert!(md.contains("| mix / slow | throughput (req/s) |"), "{md}");
    let side = |s: &str| common::only_subfolder(&top.join(s)).display().to_string();
    let (a, b) = (side("a"), side("b"));
    let (code, _, stderr) = common::run_volley(&["ab", &a, &b, "--metric", "p50{step=pay}"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("the runs have no step `pay`; they have scenario `mix`, step `mix / fast`"),
        "{stderr}"
    );
    // A flag of the test has nothing to act on in a replay: refused, naming it (it was
    // ignored).
    for (flag, value) in [("-c", "8"), ("--max-time", "1s"), ("--plan", plan)] {
        let (code, _, stderr) = common::run_volley(&["ab", &a, &b, flag, value]);
        assert_eq!(code, Some(2), "{flag}: {stderr}");
        assert!(
            stderr.contains("folders of runs already made, replayed as they are"),
            "{flag}: {stderr}"
        );
    }
    // Named as typed: a short flag in both its forms (it was named `--connections` alone).
    let (code, _, stderr) = common::run_volley(&["ab", &a, &b, "-c", "8"]);
    assert!(
        stderr.contains("invalid -c/--connections: "),
        "{code:?} {stderr}"
    );
    // Every run kept is a sound record; the refused sequences ran none.
    let records = common::records_under(&dir);
    assert_eq!(records.len() as u32, 2 * pairs, "{records:?}");
    for r in &records {
        common::verified(r);
    }
}

#[test]
fn an_interrupted_sequence_exits_130_with_its_runs_kept() {
    let target = common::target();
    let dir = common::temp_dir("ab-interrupted");
    let (a, b) = (
        format!("{}/", target.base_url()),
        format!("{}/delay?ms=1", target.base_url()),
    );
    let file = |name: &str| std::fs::File::create(dir.join(name)).unwrap();
    let child = common::volley()
        .args([
            "ab", &a, &b, "-c", "2", "-d", "30s", "--warmup", "0s", "--out",
        ])
        .arg(dir.join("out"))
        .stdin(std::process::Stdio::null())
        .stdout(file("stdout.txt"))
        .stderr(file("stderr.txt"))
        .spawn()
        .unwrap();
    let run = common::Spawned {
        child,
        dir: dir.clone(),
        started: std::time::Instant::now(),
    };
    // The first run (A's) is under way once A is served.
    common::wait_until("A's first run", std::time::Duration::from_secs(30), || {
        common::served(&target, "/", 200) > 20
    });
    run.signal(nix::sys::signal::Signal::SIGINT);
    let finished = run.wait(std::time::Duration::from_secs(30));
    let stdout = std::fs::read_to_string(dir.join("stdout.txt")).unwrap();
    // Before: exit 0, as if the sequence had run its course.
    assert_eq!(finished.code, Some(130), "{stdout}\n{}", finished.stderr);
    assert!(stdout.contains("a run was interrupted"), "{stdout}");
    let records = common::records_under(&dir.join("out"));
    assert_eq!(records.len(), 1, "the interrupted run's record is kept");
    common::verified(&records[0]);
    // Replayed, that run stops the replay too, but no signal came now: exit 0 (it was 130).
    let runs = records[0]
        .ancestors()
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("quick-"))
        })
        .unwrap();
    let copy = dir.join("copy");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(runs)
        .arg(&copy)
        .status();
    assert!(copied.unwrap().success());
    let (runs, copy, out) = (
        runs.to_str().unwrap(),
        copy.to_str().unwrap(),
        dir.join("replay"),
    );
    let (code, stdout, stderr) =
        common::run_volley(&["ab", runs, copy, "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("a run was interrupted"), "{stdout}");
}

#[test]
fn two_base_urls_of_one_plan_are_compared() {
    // docs/reports.md's example: A and B override the plan's base URL, and an override holds a
    // URL (it was refused as "not overrides"). B's target serves one request at a time, 5 ms
    // each, so four VUs wait there.
    let (fast, slow) = (
        common::target(),
        common::capacity_target(1, std::time::Duration::from_millis(5)),
    );
    let dir = common::temp_dir("ab-base-url");
    let plan = dir.join("plan.toml");
    let text = "[target]\nbase_url = \"http://127.0.0.1:1\"\n[[scenario]]\nname = \"s\"\n\
                [scenario.load]\nprofile = \"constant-vus\"\nvus = 4\nduration = \"1s\"\n\
                [[scenario.step]]\nname = \"root\"\npath = \"/\"\n";
    std::fs::write(&plan, text).unwrap();
    let side = |t: &volley::server::RunningTarget| format!("target.base_url={}", t.base_url());
    let (a, b) = (side(&fast), side(&slow));
    let (plan, out) = (plan.to_str().unwrap(), dir.to_str().unwrap());
    let args = ["--plan", plan, &a, &b, "--metric", "p50", "--max-runs", "6"];
    let stdout = ab(&[&args[..], &["--out", out]].concat());
    let (pairs, call) = outcome(&stdout);
    assert_eq!(call, "slower", "{stdout}");
    // B's runs went to B's target.
    let b_runs = common::records_under(&common::only_subfolder(&dir).join("b"));
    assert_eq!(b_runs.len() as u32, pairs, "{b_runs:?}");
    for r in &b_runs {
        let text = std::fs::read_to_string(r).unwrap();
        assert!(text.contains(&slow.base_url()), "{}", r.display());
        common::verified(r);
    }
}

#[test]
fn a_side_without_a_value_stops_the_sequence_at_once() {
    // B refuses every connection: its throughput is 0, which no look can test, so no pair
    // could ever decide it (it ran to --max-runs).
    let target = common::target();
    let url = format!("{}/", target.base_url());
    let dead = format!("http://127.0.0.1:{}/", common::closed_port());
    let dir = common::temp_dir("ab-dead");
    let out = dir.to_str().unwrap();
    let args = [
        "ab",
        &url,
        &dead,
        "-c",
        "2",
        "-d",
        "1s",
        "--max-runs",
        "6",
        "--out",
        out,
    ];
    let (code, stdout, stderr) = common::run_volley(&args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.starts_with("A/B until decided: 1 pair(s)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("more runs could decide nothing"),
        "{stdout}"
    );
    assert!(stdout.contains("throughput undecided"), "{stdout}");
    assert_eq!(common::records_under(&dir).len(), 2);
}

#[test]
fn a_percentile_the_runs_are_too_short_for_is_refused_at_the_first_pair() {
    // One VU at 5 ms for 1 s: about 190 responses a run, where a p99 needs 1,000. No pair
    // could decide it; the sequence said "not tested yet" to its last pair.
    let target = common::target();
    let url = format!("{}/delay?ms=5", target.base_url());
    let dir = common::temp_dir("ab-thin");
    let (code, _, stderr) = common::run_volley(&[
        "ab",
        &url,
        &url,
        "-c",
        "1",
        "-d",
        "1s",
        "--metric",
        "p50,p99",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("latency p99: A's first run holds")
            && stderr.contains("judged only in runs of 1,000 or more"),
        "{stderr}"
    );
    // The first pair's runs are kept, and sound.
    let records = common::records_under(&dir);
    assert_eq!(records.len(), 2, "{records:?}");
    for r in &records {
        common::verified(r);
    }
}
