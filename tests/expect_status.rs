//! `--expect-status` (k6's expected statuses) in quick mode says what a plan's `checks.status`
//! says: the statuses listed are a success (no error, even ≥ 400), every other fails the check.

mod common;

#[test]
fn quick_mode_and_a_plan_agree_on_expected_statuses() {
    let target = common::target();
    let dir = common::temp_dir("expect-status");
    let url = format!("{}/status/422", target.base_url());
    let quick = dir.join("quick");
    std::fs::create_dir_all(&quick).unwrap();
    let (out, q) = common::run_json(
        &quick,
        &[&url, "-n", "40", "-c", "1", "--expect-status", "2xx,422"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "[target]\nbase_url = \"{}\"\n[[scenario]]\nname = \"default\"\n[scenario.load]\n\
             profile = \"iterations\"\nvus = 1\niterations = 40\n[[scenario.step]]\n\
             name = \"request\"\npath = \"/status/422\"\n[scenario.step.checks]\nstatus = [422]\n",
            target.base_url()
        ),
    )
    .unwrap();
    let planned = dir.join("planned");
    std::fs::create_dir_all(&planned).unwrap();
    let (out, p) = common::run_json(&planned, &["run", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    for r in [&q, &p] {
        assert_eq!(common::summary_u64(r, "errors"), 0, "{}", r["summary"]);
        assert_eq!(common::status_of(r, "422"), 40);
        assert_eq!(r["checks"][0]["passed"], 40);
        assert_eq!(r["checks"][0]["failed"], 0);
    }
    assert_eq!(q["checks"][0]["check"], "status in [200–299, 422]");
    // Without it, a 422 is an error, and every request failing fails the run.
    let bare = dir.join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    let (out, b) = common::run_json(&bare, &[&url, "-n", "10", "-c", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(common::summary_u64(&b, "errors"), 10);
    // A list that is not one is refused by the flag's parser (exit 2).
    let (code, _, stderr) = common::run_volley(&[&url, "-n", "1", "--expect-status", "2x"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("is not a list of statuses like 2xx,422"),
        "{stderr}"
    );
}
