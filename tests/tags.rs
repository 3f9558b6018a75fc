//! Tags and run identity: `--tag KEY=VALUE` and a plan's `[tags]` reach the record (beside its
//! `run_id`), every report and `volley compare`; a key that cannot be a label is refused before
//! anything is sent (exit 2). Their exported labels: tests/export.rs and tests/prometheus.rs.

mod common;

#[test]
fn tags_reach_the_record_the_reports_and_compare() {
    let target = common::target();
    let dir = common::temp_dir("tags");
    let url = format!("{}/", target.base_url());
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "[target]\nbase_url = \"{}\"\n\n[tags]\ntestid = \"from-plan\"\nteam = \"perf\"\n\n\
             [[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"iterations\"\nvus = 1\n\
             iterations = 20\n[[scenario.step]]\nname = \"home\"\npath = \"/\"\n",
            target.base_url()
        ),
    )
    .unwrap();
    // The flag replaces the plan's value of the same key and keeps the others.
    let a = dir.join("a");
    std::fs::create_dir_all(&a).unwrap();
    let (out, planned) =
        common::run_json(&a, &["run", plan.to_str().unwrap(), "--tag", "testid=pr-7"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        planned["tags"],
        serde_json::json!({"team": "perf", "testid": "pr-7"})
    );
    let b = dir.join("b");
    std::fs::create_dir_all(&b).unwrap();
    let (_, quick) = common::run_json(&b, &[&url, "-n", "20", "-c", "1", "--tag", "testid=base"]);
    assert_eq!(quick["tags"], serde_json::json!({"testid": "base"}));
    for record in [&planned, &quick] {
        let id = record["run_id"].as_str().unwrap();
        assert!(
            id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()),
            "{id}"
        );
    }
    assert_ne!(planned["run_id"], quick["run_id"]);
    let folder = common::only_subfolder(&b.join("results"));
    let summary = std::fs::read_to_string(folder.join("summary.txt")).unwrap();
    assert!(
        summary.contains(&format!(
            "tags: testid=base (run_id {})",
            quick["run_id"].as_str().unwrap()
        )),
        "{summary}"
    );
    let markdown = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(markdown.contains("| Tags | testid=base |"), "{markdown}");
    let html = std::fs::read_to_string(folder.join("report.html")).unwrap();
    assert!(html.contains("testid=base"));
    let compared = common::volley()
        .args([
            "compare",
            b.join("run.json").to_str().unwrap(),
            a.join("run.json").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&compared.stdout);
    assert!(
        text.contains("Tags") && text.contains("team=perf, testid=pr-7"),
        "{text}"
    );
}

#[test]
fn a_tag_that_cannot_be_a_label_is_refused_before_the_run() {
    for (tag, why) in [
        ("team-a=x", "is not a label name"),
        ("run_id=x", "volley's own"),
        ("__x=y", "Prometheus's own"),
        ("novalue", "is not KEY=VALUE"),
    ] {
        let (code, _, stderr) =
            common::run_volley(&["http://127.0.0.1:9/", "-n", "1", "--tag", tag]);
        assert_eq!(code, Some(2), "{tag}: {stderr}");
        assert!(stderr.contains(why), "{tag}: {stderr}");
    }
    let dir = common::temp_dir("tags-bad-plan");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "[target]\nbase_url = \"http://127.0.0.1:9\"\n[tags]\n\"2x\" = \"y\"\n\n[[scenario]]\n\
         name = \"s\"\n[scenario.load]\nprofile = \"iterations\"\nvus = 1\niterations = 1\n\
         [[scenario.step]]\nname = \"home\"\npath = \"/\"\n",
    )
    .unwrap();
    let (code, _, stderr) = common::run_volley(&["check", plan.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("tags: `2x` is not a label name"),
        "{stderr}"
    );
}
