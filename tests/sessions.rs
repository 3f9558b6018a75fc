//! Sessions that behave like users: think time drawn from a distribution (never in a latency,
//! counted as its own figure) and iteration pacing.

mod common;

#[test]
fn think_time_is_drawn_counted_and_kept_out_of_latency_and_pace_spaces_iterations() {
    let target = common::target();
    let dir = common::temp_dir("think-pace");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "[target]\nbase_url = \"{}\"\n\
             [[scenario]]\nname = \"browse\"\n[scenario.load]\nprofile = \"constant-vus\"\n\
             vus = 2\nduration = \"2s\"\n[[scenario.step]]\nname = \"page\"\npath = \"/\"\n\
             think = {{ uniform = [\"20ms\", \"40ms\"] }}\n\
             [[scenario]]\nname = \"paced\"\npace = \"250ms\"\n[scenario.load]\n\
             profile = \"constant-vus\"\nvus = 2\nduration = \"2s\"\n[[scenario.step]]\n\
             name = \"ping\"\npath = \"/\"\n",
            target.base_url()
        ),
    )
    .unwrap();
    let record = common::run_json_ok(&dir, &["run", plan.to_str().unwrap()]);
    let page = common::group(&record, "step", "page");
    let requests = page["requests"].as_f64().unwrap();
    let think = page["think_s"].as_f64().unwrap();
    // 30 ms on average after each request; the latency of `/` is far below 20 ms.
    assert!(
        (think / requests - 0.030).abs() < 0.006,
        "{think} s over {requests}"
    );
    assert!(page["latency_ms"]["p50"].as_f64().unwrap() < 15.0);
    // Two VUs, one iteration per 250 ms each, for 2 s: about 16 iterations, not thousands.
    let paced = common::group(&record, "scenario", "paced");
    let iterations = paced["iterations"].as_u64().unwrap();
    assert!((12..=20).contains(&iterations), "{iterations}");
    let waits = paced["pacing_s"].as_f64().unwrap();
    assert!(waits > 2.0 && waits < 4.1, "{waits}");
    let results = common::only_subfolder(&dir.join("results"));
    let md = std::fs::read_to_string(results.join("report.md")).unwrap();
    assert!(md.contains("VU time not in any latency"), "{md}");
    assert!(md.contains("paced: pacing waits"), "{md}");
}

#[test]
fn a_think_time_that_is_not_one_is_refused_where_it_is() {
    let dir = common::temp_dir("think-bad");
    let plan = dir.join("plan.toml");
    for (think, why) in [
        (
            "{ uniform = [\"150ms\", \"50ms\"] }",
            "uniform bounds go up",
        ),
        ("{ gamma = \"1s\" }", "think"),
        ("{ normal = [\"1s\", \"x\"] }", "`x`"),
    ] {
        std::fs::write(
            &plan,
            format!(
                "[target]\nbase_url = \"http://127.0.0.1:1\"\n[[scenario]]\nname = \"s\"\n\
                 [scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n\
                 [[scenario.step]]\nname = \"get\"\npath = \"/\"\nthink = {think}\n"
            ),
        )
        .unwrap();
        let (code, _, stderr) = common::run_volley(&["check", plan.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{think}: {stderr}");
        assert!(
            stderr.contains(why) && stderr.contains("plan.toml:"),
            "{think}: {stderr}"
        );
    }
}
