//! Ramping profiles report stage by stage, as ladders report phase by phase: each stage has
//! its row (requests, rate over its own window, latency, errors), and a stage that ramps says
//! so (its figures mix levels).

mod common;

use serde_json::Value;

fn phases(record: &Value) -> Vec<&Value> {
    record["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["kind"] == "phase")
        .collect()
}

fn run(name: &str, profile: &str) -> (std::path::PathBuf, Value) {
    let target = common::target();
    let dir = common::temp_dir(name);
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "[target]\nbase_url = \"{}\"\n[[scenario]]\nname = \"ramp\"\n[scenario.load]\n\
             {profile}\n[[scenario.step]]\nname = \"get\"\npath = \"/\"\n\
             [thresholds]\n\"rps{{phase=2}}\" = [\"> 1\"]\n",
            target.base_url()
        ),
    )
    .unwrap();
    let record = common::run_json_ok(&dir, &["run", plan.to_str().unwrap()]);
    (dir, record)
}

#[test]
fn ramping_vus_report_each_stage_and_mark_the_ramps() {
    let (dir, record) = run(
        "stages-vus",
        "profile = \"ramping-vus\"\nstages = [{ duration = \"1s\", target = 2 }, \
         { duration = \"1s\", target = 2 }, { duration = \"0s\", target = 1 }, \
         { duration = \"1s\", target = 1 }]",
    );
    let p = phases(&record);
    let names: Vec<&str> = p.iter().map(|g| g["name"].as_str().unwrap()).collect();
    // The jump (a stage of no length) has no row.
    assert_eq!(
        names,
        ["stage 1: 0→2 VUs", "stage 2: 2 VUs", "stage 4: 1 VUs"]
    );
    assert_eq!(p[0]["ramp_from"], 0.0);
    assert_eq!(p[0]["target_vus"], 2);
    assert!(p[1].get("ramp_from").is_none());
    for g in &p {
        assert!(g["requests"].as_u64().unwrap() > 0, "{g}");
        let window = g["window_s"].as_f64().unwrap();
        assert!((window - 1.0).abs() < 0.05, "its own window: {window}");
    }
    assert_eq!(
        record["config"]["scenarios"][0]["load"]["profile"],
        "ramping-vus"
    );
    assert_eq!(record["thresholds"][0]["passed"], true);
    let results = common::only_subfolder(&dir.join("results"));
    let md = std::fs::read_to_string(results.join("report.md")).unwrap();
    assert!(md.contains("| stage 1: 0→2 VUs | 0→2 VUs (ramp) |"), "{md}");
}

#[test]
fn ramping_arrival_rates_report_each_stage() {
    let (_, record) = run(
        "stages-rate",
        "profile = \"ramping-arrival-rate\"\nmax_vus = 10\nstart_rate = 50\n\
         stages = [{ duration = \"1s\", target = 100 }, { duration = \"1s\", target = 100 }]",
    );
    let p = phases(&record);
    assert_eq!(p[0]["name"], "stage 1: 50.0→100.0 req/s");
    assert_eq!(p[0]["ramp_from"], 50.0);
    assert_eq!(p[1]["target_rps"], 100.0);
    let second = p[1]["requests"].as_u64().unwrap();
    assert!(
        (80..=120).contains(&second),
        "100 req/s held for 1 s: {second}"
    );
}
