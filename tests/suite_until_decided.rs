//! Suites until decided (`repeats = "until-decided"`): the rounds stop once each target is
//! decided against the first, or once more rounds could decide nothing or a side runs no more;
//! a suite file whose rule cannot hold is refused.

mod common;
mod suite_common;

use common::{only_subfolder, serial, temp_dir};
use suite_common::*;

#[test]
fn until_decided_stops_the_rounds_once_each_target_is_decided() {
    let _serial = serial();
    let t = common::target();
    let dir = temp_dir("suite-until-decided");
    std::fs::write(dir.join("plan.toml"), DELAY_PLAN).unwrap();
    let file = dir.join("suite.toml");
    std::fs::write(
        &file,
        format!(
            "plan = \"plan.toml\"\nrepeats = \"until-decided\"\n\
             [until_decided]\nmetrics = [\"p50\", \"p50{{step=delay}}\"]\nmax_runs = 8\nthreshold = \"5%\"\n\
             [[target]]\nname = \"base\"\nbase_url = \"{url}\"\nvars = {{ ms = 2 }}\n\
             [[target]]\nname = \"slower\"\nbase_url = \"{url}\"\nvars = {{ ms = 4 }}\n\
             [[target]]\nname = \"close\"\nbase_url = \"{url}\"\nvars = {{ ms = 2.1 }}\n",
            url = t.base_url()
        ),
    )
    .unwrap();
    let (code, out, err) = suite(&file, &dir.join("run"), &["-q"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let folder = only_subfolder(&dir.join("run/results"));
    let s = read_json(&folder.join("suite.json"));
    let decided = s["decided"][0].as_str().unwrap_or_else(|| panic!("{s:#}"));
    assert!(decided.starts_with("slower against base"), "{decided}");
    assert!(decided.contains("latency p50 slower"), "{decided}");
    // A part of the plan is decided on its own figure (here the plan's only step).
    assert!(
        decided.contains("latency p50 of step `delay` slower"),
        "{decided}"
    );
    assert!(decided.contains("every metric decided"), "{decided}");
    // The same, typed for scripts (it was text only).
    let d = &s["decisions"][0];
    assert_eq!(
        (&d["target"], &d["baseline"]),
        (&"slower".into(), &"base".into()),
        "{d:#}"
    );
    assert_eq!(d["stopped"], "decided", "{d:#}");
    let m = &d["metrics"];
    assert_eq!(
        (&m[0]["metric"], &m[0]["call"]),
        (&"p50".into(), &"worse".into()),
        "{d:#}"
    );
    assert_eq!(m[1]["part"], serde_json::json!({"step": "delay"}), "{d:#}");
    assert!(m[0]["change"].as_f64().unwrap() > 5.0, "{d:#}");
    assert!(m[0]["decided_at_pair"].as_u64().unwrap() >= 3, "{d:#}");
    // Stopped before its 8 rounds; a target decided ran no more (it ran every round before),
    // and the first target ran as long as any comparison went on.
    let runs = |name: &str| {
        std::fs::read_dir(folder.join(name))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("repeat-"))
            .count()
    };
    let pairs = |i: usize| s["decisions"][i]["pairs"].as_u64().unwrap() as usize;
    assert!(
        (3..8).contains(&runs("slower")),
        "{} rounds",
        runs("slower")
    );
    assert_eq!(
        (runs("slower"), runs("close")),
        (pairs(0), pairs(1)),
        "{s:#}"
    );
    assert_eq!(runs("base"), runs("slower").max(runs("close")));
    // Each target's spread is written, a target decided early too (it took no turn in the
    // last round, where the spread used to be written).
    for name in ["base", "slower", "close"] {
        assert!(folder.join(name).join("report.md").exists(), "{name}");
    }
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(md.contains("slower against base"), "{md}");
    // The header says the runs each target got, not the most it could have.
    let (fewest, most) = (runs("slower").min(runs("close")), runs("base"));
    let got = match fewest == most {
        true => format!("until decided: {most} of at most 8 run(s) per target"),
        false => format!("until decided: {fewest}–{most} of at most 8 run(s) per target"),
    };
    assert!(md.contains(&got), "{md}");
    // Requests are summed over each target's runs: the table says when their counts differ.
    if fewest != most {
        assert!(md.contains("ran different numbers of runs"), "{md}");
    }
    // The comparison beneath is made at the threshold the rounds decided at (it was ±2 %).
    assert_eq!(s["threshold_pct"], 5.0, "{s:#}");
    assert!(md.contains("interval lies beyond ±5%"), "{md}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn until_decided_needs_interleaved_turns_and_its_table() {
    let dir = temp_dir("suite-until-decided-invalid");
    std::fs::write(dir.join("plan.toml"), DELAY_PLAN).unwrap();
    let targets = "[[target]]\nname = \"a\"\nbase_url = \"http://127.0.0.1:1\"\n\
                   [[target]]\nname = \"b\"\nbase_url = \"http://127.0.0.1:1\"\n";
    for (head, says) in [
        (
            "repeats = \"until-decided\"\norder = \"sequential\"\n",
            "interleaved",
        ),
        // `repeat` is read as `repeats` (it was an unknown key).
        (
            "repeat = \"until-decided\"\norder = \"sequential\"\n",
            "interleaved",
        ),
        ("repeats = \"sometimes\"\n", "neither a count nor a rule"),
        ("[until_decided]\nmax_runs = 5\n", "without repeats"),
        (
            "repeats = \"until-decided\"\n[until_decided]\nmetrics = [\"max\"]\n",
            "not one of",
        ),
        (
            "repeats = \"until-decided\"\n[until_decided]\nmetrics = [\"p50{step=nope}\"]\n",
            "target `a` (plan ",
        ),
        // A percentage is a number or "N%" (a string was serde's "expected f64").
        (
            "repeats = \"until-decided\"\n[until_decided]\nthreshold = \"five\"\n",
            "threshold must be a percentage",
        ),
        // One that is no positive share is refused at its own line (it was at the table's).
        (
            "repeats = \"until-decided\"\n[until_decided]\nthreshold = \"-2%\"\n",
            "suite.toml:4",
        ),
        (
            "repeats = \"until-decided\"\n[until_decided]\nthreshold = 0\n",
            "percentage above 0",
        ),
        // The rule of a table beside a count would be ignored (it was, silently).
        (
            "repeats = 3\n[until_decided]\nmax_runs = 5\n",
            "with a count of repeats",
        ),
        // A stream figure of a plan without streams could never be decided (it ran to max_runs).
        (
            "repeats = \"until-decided\"\n[until_decided]\nmetrics = [\"ttft\"]\n",
            "TTFT p50 needs a streaming step",
        ),
    ] {
        let file = dir.join("suite.toml");
        std::fs::write(&file, format!("plan = \"plan.toml\"\n{head}{targets}")).unwrap();
        let (code, out, err) = suite(&file, &dir.join("out"), &["-q"]);
        assert_eq!(code, Some(2), "{head}: {out}\n{err}");
        assert!(
            err.contains(says) && err.contains("suite.toml:"),
            "{head}: {err}"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn until_decided_stops_when_a_side_runs_no_more_or_nothing_can_be_decided() {
    let _serial = serial();
    let t = common::target();
    let dir = temp_dir("suite-until-decided-stops");
    std::fs::write(dir.join("plan.toml"), DELAY_PLAN).unwrap();
    let url = t.base_url();
    let good = |name: &str| format!("[[target]]\nname = \"{name}\"\nbase_url = \"{url}\"\n");
    // A process that exits at once, for a port where nothing answers.
    let closed = common::closed_port();
    let failing = |name: &str| {
        format!(
            "[[target]]\nname = \"{name}\"\nbase_url = \"http://127.0.0.1:{closed}\"\n\
             command = [\"false\"]\n"
        )
    };
    let (p50, p999) = ("", "metrics = [\"p99.9\"]\n");
    let failed = ("stopped: a run failed", "failed");
    let none = ("more runs could decide nothing", "undecidable");
    for (name, rule, targets, code, (says, stopped), b_runs) in [
        // b fails to start in round 1: nothing was decided (it said "every metric decided").
        ("b-fails", p50, good("a") + &failing("b"), 1, failed, 0),
        // The baseline fails: b's runs could pair with nothing (it ran all 6 rounds).
        ("a-fails", p50, failing("a") + &good("b"), 1, failed, 1),
        // About 2,000 responses a run, where a p99.9 needs 10,000: no round could decide it
        // (it ran all 6).
        ("thin", p999, good("a") + &good("b"), 0, none, 1),
    ] {
        let file = dir.join(format!("{name}.toml"));
        let head = "plan = \"plan.toml\"\nrepeats = \"until-decided\"\n\
                    [until_decided]\nmax_runs = 6\n";
        std::fs::write(&file, format!("{head}{rule}{targets}")).unwrap();
        let out_dir = dir.join(name);
        let (got, out, err) = suite(&file, &out_dir, &["-q"]);
        assert_eq!(got, Some(code), "{name}: {out}\n{err}");
        let folder = only_subfolder(&out_dir.join("results"));
        let s = read_json(&folder.join("suite.json"));
        let decided = s["decided"][0].as_str().unwrap_or_else(|| panic!("{s:#}"));
        assert!(decided.contains(says), "{name}: {decided}");
        let d = &s["decisions"][0];
        assert_eq!(d["stopped"], stopped, "{name}: {d:#}");
        assert_eq!(d["metrics"][0]["call"], "undecided", "{name}: {d:#}");
        let runs = common::records_under(&folder.join("b"));
        assert_eq!(runs.len(), b_runs, "{name}: {runs:?}");
        for r in &runs {
            common::verified(r);
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}
