//! A precision goal on one part of a plan (`p50{scenario=sparse}=1%`, docs/measurement.md, "A
//! goal on one part of a plan"): a run lasts until that part's own interval is precise, and
//! repeats until the spread of that part's figure between runs is; parts a plan lacks, or that
//! comparisons do not judge, are refused.

mod common;

use common::intervals::{bound, group_bound};
use serde_json::Value;

/// A plan of a busy scenario (8 VUs, 2 ms) and a sparse one (1 VU, exponential delays of mean
/// 20 ms), each for `seconds`, with `precision` (a `[precision]` table's lines) if any.
fn busy_and_sparse(base_url: &str, seconds: u32, precision: &str) -> String {
    format!(
        "name = \"parts\"\n[target]\nbase_url = \"{base_url}\"\n{precision}{}\
         [[scenario]]\nname = \"sparse\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\n\
         duration = \"{seconds}s\"\n[[scenario.step]]\nname = \"slow\"\n\
         path = \"/delay?ms=20&dist=exp\"\n",
        common::delay_scenario("busy", 8, seconds, &[("quick", 2)]),
    )
}

/// `p50{scenario=sparse}=1%`: a goal on one part of a plan holds the run until that part's own
/// interval is precise, however precise the run's pooled figures are, and the summary says
/// what the part got; a goal on a part that gets precise stops the run.
#[test]
fn a_goal_on_one_part_of_a_plan_is_met_by_that_part() {
    let _serial = common::serial();
    let target = common::target();
    let dir = common::temp_dir("uncertainty-part-goal");
    let plan = dir.join("plan.toml");
    // The run's own goal is loose enough to be met within 7 s on a busy 2-core host (CI once
    // measured ±6.3 % there, where ±5 % was asked); the sparse part's 1 % is not met in 7 s.
    let goals = "[precision]\np50 = \"25%\"\n\"p50{scenario=sparse}\" = \"1%\"\n";
    std::fs::write(&plan, busy_and_sparse(&target.base_url(), 7, goals)).unwrap();
    let out_dir = dir.join("held");
    let (code, out, err) = common::run_volley(&[
        "run",
        plan.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let results = common::only_subfolder(&out_dir);
    common::verified(&results);
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("run.json")).unwrap()).unwrap();
    let p = &record["summary"]["ci95"]["precision"];
    assert_eq!(p["reached"], false, "{p}");
    assert_eq!(p["goals"][1]["part"]["scenario"], "sparse", "{p}");
    // The run's own goal was met; the sparse scenario's was not, so the run went on to its end.
    let (p50, half) = bound(&record, "p50_ms").unwrap();
    assert!(half / p50 <= 0.25, "run p50 {p50} ± {half}");
    let (sparse, sparse_half) = group_bound(&record, "scenario", "sparse", "p50_ms").unwrap();
    let share = sparse_half / sparse;
    assert!(share > 0.01, "sparse p50 {sparse} ± {sparse_half}");
    let window = record["summary"]["duration_s"].as_f64().unwrap();
    assert!((window - 7.0).abs() < 0.5, "{window}");
    let line = format!(
        "Precision (within this run): stopped at the maximum length: p50 ±{:.1} % (asked ±25 %), \
         p50{{scenario=sparse}} ±{:.1} % (asked ±1 %)",
        100.0 * half / p50,
        100.0 * share
    );
    assert!(out.contains(&line), "{line}\n{out}");

    // A goal on the busy scenario's step alone is met within seconds of a 30 s maximum.
    std::fs::write(&plan, busy_and_sparse(&target.base_url(), 30, "")).unwrap();
    let record = common::run_json_ok(
        &dir,
        &[
            "run",
            plan.to_str().unwrap(),
            "--precision",
            "p50{step=quick}=10%",
        ],
    );
    let p = &record["summary"]["ci95"]["precision"];
    assert_eq!(p["reached"], true, "{p}");
    assert_eq!(p["goals"][0]["part"]["step"], "quick", "{p}");
    let at = p["at_s"].as_f64().unwrap();
    assert!((5.0..20.0).contains(&at), "precise at {at} s");
    let (quick, quick_half) = group_bound(&record, "step", "quick", "p50_ms").unwrap();
    assert!(quick_half / quick <= 0.10, "{quick} ± {quick_half}");

    // A part the plan lacks is refused before anything runs, saying what it has.
    let (code, _, err) = common::run_volley(&[
        "run",
        plan.to_str().unwrap(),
        "--precision",
        "p50{step=slwo}=5%",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "the plan has no step `slwo`; it has busy, busy / quick, sparse, sparse / slow"
        ),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--repeat-until 'p50{step=quick}=40%'`: repeats until one part's spread between runs is
/// precise; a part the plan lacks is refused, as are goals on parts a plan cannot meet.
#[test]
fn repeats_until_one_part_is_precise_and_unmeetable_parts_are_refused() {
    let _serial = common::serial();
    let target = common::target();
    let dir = common::temp_dir("uncertainty-part-repeats");
    let plan = dir.join("plan.toml");
    std::fs::write(&plan, busy_and_sparse(&target.base_url(), 1, "")).unwrap();
    let until = |goal: &str| {
        let out = dir.join("repeats");
        let _ = std::fs::remove_dir_all(&out);
        let args = [
            "run",
            plan.to_str().unwrap(),
            "--repeat",
            "6",
            "--repeat-until",
            goal,
        ];
        let (code, stdout, stderr) =
            common::run_volley(&[&args[..], &["--out", out.to_str().unwrap()]].concat());
        if code == Some(0) {
            common::verified(&common::only_subfolder(&out));
        }
        (code, stdout, stderr)
    };
    // Three 1 s runs usually agree within 40 %; one the host stalled can take a run or two more.
    let (code, out, err) = until("p50{step=quick}=40%");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        (3..=5).any(|n| out.contains(&format!("\nprecise after {n} runs: p50{{step=quick}} ±"))),
        "{out}"
    );
    assert!(
        out.contains("By scenario"),
        "the parts' spread is shown too: {out}"
    );
    let (code, _, err) = until("p50{step=slwo}=40%");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("invalid --repeat-until: the plan has no step `slwo`"),
        "{err}"
    );
    // A step's name in two scenarios, and a phase, are refused when the plan is read.
    let twice = |goal: &str| {
        format!(
            "name = \"twice\"\n[target]\nbase_url = \"http://127.0.0.1:1\"\n\
             [precision]\n\"{goal}\" = \"3%\"\n{}{}",
            common::delay_scenario("fast", 2, 6, &[("pay", 1), ("other", 1)]),
            common::delay_scenario("slow", 1, 6, &[("pay", 20), ("other", 1)]),
        )
    };
    for (goal, says) in [
        (
            "p50{step=pay}",
            "step `pay` is fast / pay and slow / pay: name one, e.g. {step=fast / pay}",
        ),
        (
            "p50{phase=1}",
            "phase `1`: a phase cannot be made precise on its own",
        ),
        ("p50{step=slow / pay}", ""),
    ] {
        std::fs::write(&plan, twice(goal)).unwrap();
        let (code, _, err) = common::run_volley(&["check", plan.to_str().unwrap()]);
        assert_eq!(code == Some(0), says.is_empty(), "{goal}: {err}");
        assert!(err.contains(says), "{goal}: {err}");
    }
    let typo = "[precision]\n\"p50{scenario=sparce}\" = \"1%\"\n";
    std::fs::write(&plan, busy_and_sparse("http://127.0.0.1:1", 7, typo)).unwrap();
    let (code, _, err) = common::run_volley(&["check", plan.to_str().unwrap()]);
    assert_ne!(code, Some(0), "{err}");
    assert!(
        err.contains("plan.toml:5:26") && err.contains("the plan has no scenario `sparce`"),
        "{err}"
    );
    // `check` reads `--precision` as `run` does: over the plan's table, a part it lacks refused.
    let path = plan.to_str().unwrap();
    let (code, _, err) = common::run_volley(&["check", path, "--precision", "p50{step=slwo}=2%"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the plan has no step `slwo`"), "{err}");
    let (code, out, err) = common::run_volley(&["check", path, "--precision", "p99{step=slow}=2%"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("  p99{step=slow}: "), "{out}");
    assert!(
        !out.contains("sparce"),
        "the flag replaces the table: {out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
