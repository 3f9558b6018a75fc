//! Poisson arrivals (`--arrivals poisson`, `arrivals = "poisson"`): exponential gaps at the
//! asked rate, from a recorded seed, so that the same seed sends the same schedule again.

mod common;

use serde_json::Value;

fn load(record: &Value) -> &Value {
    &record["config"]["scenarios"][0]["load"]
}

#[test]
fn poisson_arrivals_are_seeded_recorded_and_counted_as_they_fell() {
    let target = common::target();
    let url = format!("{}/", target.base_url());
    let run = |name: &str, extra: &[&str]| {
        let dir = common::temp_dir(name);
        let mut args = vec![&url[..], "--rate", "400", "-d", "2s", "--threads", "1"];
        args.extend_from_slice(extra);
        let record = common::run_json_ok(&dir, &args);
        (dir, record)
    };
    let (dir, a) = run("poisson-a", &["--arrivals", "poisson", "--seed", "7"]);
    assert_eq!(load(&a)["arrivals"], "poisson");
    assert_eq!(load(&a)["seed"], 7);
    let due = a["summary"]["arrival"]["due"].as_u64().unwrap();
    // 800 asked; the count of a Poisson process varies (σ ≈ 28), an even schedule's does not.
    assert!((650..=950).contains(&due), "{due}");
    let summary =
        std::fs::read_to_string(common::only_subfolder(&dir.join("results")).join("summary.txt"))
            .unwrap();
    assert!(summary.contains("Poisson arrivals (seed 7)"), "{summary}");
    // The same seed falls the same way; another seed, or even spacing, does not.
    let (_, b) = run("poisson-b", &["--arrivals", "poisson", "--seed", "7"]);
    assert_eq!(b["summary"]["arrival"]["due"], due);
    let (_, c) = run("poisson-c", &["--arrivals", "poisson", "--seed", "8"]);
    assert_ne!(c["summary"]["arrival"]["due"], due);
    let (_, even) = run("uniform", &[]);
    assert_eq!(even["summary"]["arrival"]["due"], 800);
    assert_eq!(load(&even)["arrivals"], "uniform");
    assert!(load(&even).get("seed").is_none());
    // A seed drawn at random is recorded.
    let (_, drawn) = run("poisson-drawn", &["--arrivals", "poisson"]);
    assert!(load(&drawn)["seed"].as_u64().is_some());
}

#[test]
fn arrivals_belong_to_the_open_model() {
    let (code, _, stderr) = common::run_volley(&["http://127.0.0.1:1/", "--arrivals", "poisson"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("give --rate too"), "{stderr}");
    let dir = common::temp_dir("arrivals-closed");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "[target]\nbase_url = \"http://127.0.0.1:1\"\n[[scenario]]\nname = \"s\"\n\
         [scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n\
         arrivals = \"poisson\"\n[[scenario.step]]\nname = \"get\"\npath = \"/\"\n",
    )
    .unwrap();
    let (code, _, stderr) = common::run_volley(&["check", plan.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("plan.toml:6:11: `arrivals` does not apply to profile constant-vus"),
        "{stderr}"
    );
}

/// A seed seeds only Poisson arrivals: in quick mode without `--arrivals` it would change
/// nothing, so it is refused before any load is sent.
#[test]
fn a_seed_without_arrivals_is_refused() {
    let (code, _, err) = common::run_volley(&["http://127.0.0.1:9/", "-d", "1s", "--seed", "7"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--arrivals"), "{err}");
}
