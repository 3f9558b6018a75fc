//! Suites whose targets run plans of their own: report 002's REST-and-gRPC suite
//! (examples/002-rest-vs-grpc-suite.toml, four `volley serve` processes started by the suite)
//! shortened; `--set`, `--only` and a target's `vars`; a suite whose targets would get
//! different loads, refused unless `allow_different_load`; an operation one target lacks, shown
//! as missing.

mod common;
mod suite_common;

use std::path::{Path, PathBuf};

use common::{only_subfolder, run_volley, serial, temp_dir};
use suite_common::*;

/// The rows of the Markdown table under `## {title}` (header and separator left out).
fn table_rows(md: &str, title: &str) -> Vec<Vec<String>> {
    let heading = format!("## {title}");
    let start = md
        .lines()
        .position(|l| l == heading)
        .unwrap_or_else(|| panic!("no {heading:?} in\n{md}"));
    md.lines()
        .skip(start + 1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// The 002 example copied into `dir` (suite and plans in `examples/`, the proto file in
/// `proto/`, as the gRPC plan expects), its ports replaced by free ones.
fn example_002(dir: &Path) -> PathBuf {
    let examples = dir.join("examples");
    std::fs::create_dir_all(&examples).unwrap();
    std::fs::create_dir_all(dir.join("proto")).unwrap();
    std::fs::copy(
        "proto/volley_target.proto",
        dir.join("proto/volley_target.proto"),
    )
    .unwrap();
    for plan in ["002-rest-plan.toml", "002-grpc-plan.toml"] {
        std::fs::copy(Path::new("examples").join(plan), examples.join(plan)).unwrap();
    }
    let mut text = std::fs::read_to_string("examples/002-rest-vs-grpc-suite.toml").unwrap();
    for (fixed, free) in ["18091", "18092", "18093", "18094"]
        .iter()
        .zip(free_ports(4))
    {
        assert!(text.contains(fixed), "the 002 example uses port {fixed}");
        text = text.replace(fixed, &free.to_string());
    }
    let suite = examples.join("002-rest-vs-grpc-suite.toml");
    std::fs::write(&suite, text).unwrap();
    suite
}

#[test]
fn the_002_example_compares_rest_and_grpc_per_operation_in_one_suite() {
    let _serial = serial();
    let dir = temp_dir("suite-002");
    let file = example_002(&dir);
    // Ten times shorter than the example: 3 s per target after a 0.3 s smoke run.
    let (code, stdout, stderr) = suite(&file, &dir, &["--time-scale", "0.1"]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("002-rest-plan.toml and ") && stderr.contains("002-grpc-plan.toml"),
        "{stderr}"
    );
    let folder = only_subfolder(&dir.join("results"));
    let s = read_json(&folder.join("suite.json"));
    let names = ["rest-eight", "rest-four", "grpc-eight", "grpc-four"];
    for name in names {
        let t = target(&s, name);
        assert_eq!(t["status"], "ran", "{t:#}");
        let protocol = &name[..4];
        assert!(
            t["plan"]
                .as_str()
                .unwrap()
                .ends_with(&format!("002-{protocol}-plan.toml")),
            "{t:#}"
        );
        let run = read_json(&folder.join(name).join("run.json"));
        assert_eq!(run["summary"]["errors"], 0, "{name}: {:#}", run["summary"]);
        // gRPC targets were really called over gRPC, REST ones over HTTP/1.1.
        let grpc_ok = run["summary"]["grpc_status"]["OK"].as_u64().unwrap_or(0);
        assert_eq!(
            grpc_ok > 0,
            protocol == "grpc",
            "{name}: {:#}",
            run["summary"]
        );
        // Every check of every step passed (the gRPC plan reads the task back).
        for check in run["checks"].as_array().unwrap() {
            assert_eq!(check["failed"], 0, "{name}: {check:#}");
            assert!(check["passed"].as_u64().unwrap() > 0, "{name}: {check:#}");
        }
        // The steps carry their operation labels.
        let steps: Vec<(String, String)> = run["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["kind"] == "step")
            .map(|g| {
                let name = g["name"].as_str().unwrap().to_string();
                let op = g["operation"].as_str().map_or(name.clone(), str::to_string);
                (name, op)
            })
            .collect();
        let ops: Vec<&str> = steps.iter().map(|(_, op)| op.as_str()).collect();
        assert_eq!(ops, ["create_task", "get_task"], "{name}: {steps:?}");
    }
    for pid in pids(&s) {
        assert_gone(pid);
    }

    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    // Report 002's table: four rows, one per implementation, every figure present.
    let results = table_rows(&md, "Results per target");
    let labels: Vec<&str> = results.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(labels, names, "{md}");
    for row in &results {
        assert_eq!(row.len(), 8, "{row:?}");
        assert!(
            row[1..].iter().all(|c| c != "-" && !c.is_empty()),
            "{row:?}"
        );
        assert_eq!(row[5], "0.00%", "{row:?}");
    }
    // REST and gRPC steps joined on their operation: each label has all four implementations.
    let ops = table_rows(&md, "Operations");
    assert_eq!(ops.len(), 8, "{md}");
    for (i, op) in ["create_task", "get_task"].iter().enumerate() {
        let rows = &ops[i * 4..i * 4 + 4];
        assert!(rows.iter().all(|r| r[0] == *op), "{rows:?}");
        let targets: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
        assert_eq!(targets, names);
        assert!(rows.iter().all(|r| r[2] != "missing"), "{rows:?}");
    }
    assert!(!md.contains("| missing |"), "{md}");
    // Each operation is judged on its own across the four implementations too, the gRPC plan's
    // steps joined on their labels (named as the first target's plan names them).
    let by_step = table_rows(&md, "By step");
    let named: Vec<&str> = by_step
        .iter()
        .map(|r| r[0].as_str())
        .filter(|n| !n.is_empty())
        .collect();
    assert_eq!(named, ["crud / post_task", "crud / get_task"], "{md}");
    assert_eq!(by_step.len(), 2 * 7, "seven metrics each: {md}");
    // Equal loads, equal durations: no warning about either.
    assert!(!md.contains("Test durations differ"), "{md}");
    assert!(stdout.contains("Results per target"), "{stdout}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// The median latency of the target's run, ms.
fn p50(folder: &Path, name: &str) -> f64 {
    let run = read_json(&folder.join(name).join("run.json"));
    run["summary"]["latency_ms"]["p50"].as_f64().unwrap()
}

#[test]
fn set_only_and_a_targets_vars_change_what_runs() {
    let _serial = serial();
    let t = common::target();
    let dir = temp_dir("suite-set-only");
    std::fs::write(dir.join("plan.toml"), DELAY_PLAN).unwrap();
    let file = dir.join("suite.toml");
    std::fs::write(
        &file,
        format!(
            "plan = \"plan.toml\"\n\
             [[target]]\nname = \"slow\"\nbase_url = \"{url}\"\nvars = {{ ms = 40 }}\n\
             [[target]]\nname = \"fast\"\nbase_url = \"{url}\"\n",
            url = t.base_url()
        ),
    )
    .unwrap();

    // The target's vars: `slow` waits 40 ms, `fast` the plan's 1 ms.
    let (code, out, err) = suite(&file, &dir.join("all"), &["-q"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let folder = only_subfolder(&dir.join("all/results"));
    assert!(p50(&folder, "slow") >= 40.0, "{}", p50(&folder, "slow"));
    assert!(p50(&folder, "fast") < 20.0, "{}", p50(&folder, "fast"));

    // --only runs one target; --set overrides every plan's variable, the target's vars too;
    // --tag tags its runs.
    let (code, out, err) = suite(
        &file,
        &dir.join("only"),
        &[
            "-q",
            "--only",
            "fast",
            "--set",
            "ms=30",
            "--tag",
            "testid=s1",
        ],
    );
    assert_eq!(code, Some(0), "{out}\n{err}");
    let folder = only_subfolder(&dir.join("only/results"));
    let s = read_json(&folder.join("suite.json"));
    let names: Vec<&str> = s["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fast"]);
    assert!(!folder.join("slow").exists());
    assert!(p50(&folder, "fast") >= 30.0, "{}", p50(&folder, "fast"));
    let fast = read_json(&folder.join("fast/run.json"));
    assert_eq!(fast["tags"]["testid"], "s1", "{}", fast["tags"]);
    // A comma list takes several; vars.NAME is the same variable.
    let (code, out, err) = suite(
        &file,
        &dir.join("list"),
        &["-q", "--only", "slow,fast", "--set", "vars.ms=25"],
    );
    assert_eq!(code, Some(0), "{out}\n{err}");
    let folder = only_subfolder(&dir.join("list/results"));
    for name in ["slow", "fast"] {
        let p = p50(&folder, name);
        assert!((25.0..38.0).contains(&p), "{name}: p50 {p} ms, asked 25");
    }

    // An unknown target names the suite's targets; nothing runs.
    let (code, _, err) = run_volley(&[
        "suite",
        file.to_str().unwrap(),
        "--only",
        "fast,nope",
        "--out",
        dir.join("bad").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("`nope` is not a target of"), "{err}");
    assert!(err.contains("its targets are slow, fast"), "{err}");
    // base_url is each target's own.
    let (code, _, err) = run_volley(&[
        "suite",
        file.to_str().unwrap(),
        "--set",
        "target.base_url=http://127.0.0.1:1",
        "--out",
        dir.join("bad").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("target.base_url is each target's own"),
        "{err}"
    );
    assert!(!dir.join("bad").exists());
    std::fs::remove_dir_all(dir).unwrap();
}

/// A plan for `vus` VUs over 1 s, with the steps `steps` (name, operation), all `GET /`.
fn plan(vus: u32, steps: &[(&str, Option<&str>)]) -> String {
    let mut text = format!(
        "[target]\nbase_url = \"http://127.0.0.1:1\"\n[[scenario]]\nname = \"s\"\n\
         [scenario.load]\nprofile = \"constant-vus\"\nvus = {vus}\nduration = \"1s\"\n"
    );
    for (name, op) in steps {
        text.push_str(&format!(
            "[[scenario.step]]\nname = \"{name}\"\npath = \"/\"\n"
        ));
        if let Some(op) = op {
            text.push_str(&format!("operation = \"{op}\"\n"));
        }
    }
    text
}

#[test]
fn different_loads_are_refused_with_the_reason_unless_allowed() {
    let _serial = serial();
    let t = common::target();
    let dir = temp_dir("suite-loads");
    std::fs::write(dir.join("two.toml"), plan(2, &[("root", None)])).unwrap();
    std::fs::write(dir.join("four.toml"), plan(4, &[("root", None)])).unwrap();
    let suite_text = format!(
        "[[target]]\nname = \"a\"\nbase_url = \"{url}\"\nplan = \"two.toml\"\n\
         [[target]]\nname = \"b\"\nbase_url = \"{url}\"\nplan = \"four.toml\"\n",
        url = t.base_url()
    );
    let file = dir.join("suite.toml");
    std::fs::write(&file, &suite_text).unwrap();
    let (code, out, err) = suite(&file, &dir, &["-q"]);
    assert_eq!(code, Some(2), "{out}\n{err}");
    assert!(
        err.contains("suite.toml:8:"),
        "the second target's plan: {err}"
    );
    assert!(err.contains("targets `a` (plan "), "{err}");
    assert!(err.contains("and `b` (plan "), "{err}");
    assert!(
        err.contains(
            "do not get the same load: scenario 1 (`s` vs `s`): 2 VUs for 1.0s vs 4 VUs for 1.0s"
        ),
        "{err}"
    );
    assert!(err.contains("allow_different_load = true"), "{err}");
    assert!(!dir.join("results").exists(), "nothing ran");

    std::fs::write(&file, format!("allow_different_load = true\n{suite_text}")).unwrap();
    let (code, out, err) = suite(&file, &dir, &["-q"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(err.contains("note: targets `a`"), "{err}");
    let folder = only_subfolder(&dir.join("results"));
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(
        md.contains("> **Note:** targets `a` (plan ")
            && md.contains("(allow_different_load = true)"),
        "{md}"
    );
    assert_eq!(table_rows(&md, "Results per target").len(), 2, "{md}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_operation_one_target_lacks_is_listed_and_shown_as_missing() {
    let _serial = serial();
    let t = common::target();
    let dir = temp_dir("suite-missing-op");
    std::fs::write(
        dir.join("full.toml"),
        plan(2, &[("home", Some("root")), ("health", None)]),
    )
    .unwrap();
    std::fs::write(dir.join("part.toml"), plan(2, &[("index", Some("root"))])).unwrap();
    let file = dir.join("suite.toml");
    std::fs::write(
        &file,
        format!(
            "plan = \"full.toml\"\n\
             [[target]]\nname = \"full\"\nbase_url = \"{url}\"\n\
             [[target]]\nname = \"part\"\nbase_url = \"{url}\"\nplan = \"part.toml\"\n",
            url = t.base_url()
        ),
    )
    .unwrap();
    let (code, out, err) = suite(&file, &dir, &["-q"]);
    assert_eq!(
        code,
        Some(0),
        "a missing operation does not fail the suite: {out}\n{err}"
    );
    assert!(
        err.contains("note: operation `health` is measured on full but not on part"),
        "{err}"
    );
    let folder = only_subfolder(&dir.join("results"));
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    let ops = table_rows(&md, "Operations");
    let cells: Vec<(&str, &str, &str)> = ops
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str(), r[2].as_str()))
        .collect();
    assert_eq!(cells[0].0, "root");
    assert_eq!(cells[1].0, "root");
    assert_ne!(cells[1].2, "missing", "{md}");
    assert_eq!(
        &cells[2..],
        [
            ("health", "full", cells[2].2),
            ("health", "part", "missing")
        ]
    );
    assert_ne!(cells[2].2, "missing");
    let s = read_json(&folder.join("suite.json"));
    // Not necessarily the first note: a run the hypervisor took CPU from says so before it.
    assert!(
        s["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("operation `health` is measured on full but not on part")),
        "{s:#}"
    );

    // Two steps of one plan with one label could not be told apart: refused.
    std::fs::write(
        dir.join("part.toml"),
        plan(2, &[("index", Some("root")), ("home", Some("root"))]),
    )
    .unwrap();
    let (code, _, err) = suite(&file, &dir.join("dup"), &["-q"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("has two steps with operation `root` (s/index and s/home)"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
