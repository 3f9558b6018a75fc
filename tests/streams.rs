//! Streaming steps (issue 27): Server-Sent Events and LLM streams against the built-in target,
//! whose streams follow a known schedule (first message after T ms, then one every G ms). The
//! measured time to first message, gaps and time per token must match that truth within
//! max(0.2 ms, 3 %), in both load models; every record passes the verifier.

mod common;

use std::path::{Path, PathBuf};

use common::streams::{
    CLOSED, OPEN, PythonPeer, accurate, near_schedule, near_truth, step_streams, stream_plan,
};
use common::{run_json, run_json_ok, run_volley, serial, target, temp_dir, valid_record, verified};
use serde_json::Value;

/// Writes a plan against `base` with one scenario of `load` and one step of `step`.
fn plan(dir: &Path, base: &str, load: &str, step: &str, extra: &str) -> String {
    stream_plan(dir, base, "", load, step, extra)
}

fn sse_figures_match_the_schedule(load: &str, name: &str) {
    let _serial = serial();
    accurate(|| {
        let t = target();
        let dir = temp_dir(name);
        // TTFT is measured from the due time (open model) or the send: it holds the generator's
        // send lag and the target's own time to its first byte (~0.7 ms here), which a 50 ms TTFT's
        // 3 % covers; the gaps and the stream's length are the schedule's own.
        let step = "path = \"/sse?events=20&ttft_ms=50&gap_ms=10&done=1\"\nsse = {}";
        let plan = plan(&dir, &t.base_url(), load, step, "");
        let r = run_json_ok(&dir, &["run", &plan]);
        let s = step_streams(&r);
        let streams = s["streams"].as_u64().unwrap();
        assert!(streams >= 8, "{s:#}");
        assert_eq!(s["failed"], 0);
        assert_eq!(s["with_messages"].as_u64(), Some(streams));
        assert_eq!(
            s["messages"].as_u64(),
            Some(20 * streams),
            "the sentinel is no message"
        );
        assert_eq!(s["ended"]["sentinel"].as_u64(), Some(streams));
        // The body after the sentinel is read to its end: the connections are reused.
        let opened = r["summary"]["connections_opened"].as_u64().unwrap();
        assert!(
            opened * 2 <= streams,
            "{opened} connections for {streams} streams"
        );
        near_schedule(s, 50.0, 10.0, Some(240.0));
        // The run's figures are the one step's.
        assert_eq!(r["summary"]["streams"]["messages"], s["messages"]);
        assert!(
            s.get("llm").is_none() && s.get("goodput").is_none(),
            "{s:#}"
        );
    });
}

#[test]
fn sse_figures_match_the_served_schedule_in_the_closed_model() {
    sse_figures_match_the_schedule(CLOSED, "sse-closed");
}

#[test]
fn sse_figures_match_the_served_schedule_in_the_open_model() {
    sse_figures_match_the_schedule(OPEN, "sse-open");
}

/// An LLM step against the target's chat completions: 16 tokens after 40 ms, one every 5 ms.
fn llm_step(slo: &str) -> String {
    format!(
        "method = \"POST\"\npath = \"/v1/chat/completions\"\n\
         headers = {{ \"x-volley-ttft-ms\" = \"40\", \"x-volley-gap-ms\" = \"5\" }}\n\
         json = {{ model = \"m\", stream = true, max_tokens = 16, messages = [{{ role = \"user\", content = \"hi\" }}] }}\n\
         sse = {{ llm = \"openai\"{slo} }}"
    )
}

#[test]
fn llm_streams_report_tokens_tpot_and_goodput_against_the_truth() {
    let _serial = serial();
    accurate(|| {
        let t = target();
        let dir = temp_dir("llm");
        let thresholds = "[thresholds]\n\"ttft{step=stream}\" = [\"p95 < 100ms\"]\n\
                      tpot = [\"p50 < 6ms\"]\ngoodput = [\"> 1\"]";
        let step = llm_step(", slo = { ttft = \"100ms\", tpot = \"10ms\" }");
        let plan = plan(&dir, &t.base_url(), OPEN, &step, thresholds);
        let r = run_json_ok(&dir, &["run", &plan]);
        let s = step_streams(&r);
        let streams = s["streams"].as_u64().unwrap();
        let llm = &s["llm"];
        assert_eq!(llm["tokens"].as_u64(), Some(16 * streams), "{s:#}");
        assert_eq!(llm["tokens_from"], "usage");
        assert_eq!(
            s["messages"].as_u64(),
            Some(16 * streams),
            "role and usage chunks are no tokens"
        );
        near_truth("TTFT p50", s["ttft_ms"]["p50"].as_f64().unwrap(), 40.0);
        near_truth("TPOT p50", llm["tpot_ms"]["p50"].as_f64().unwrap(), 5.0);
        near_truth("ITL p50", s["message_gap_ms"]["p50"].as_f64().unwrap(), 5.0);
        let good = &s["goodput"];
        assert_eq!(good["judged"].as_u64(), Some(streams));
        assert_eq!(
            good["good"].as_u64(),
            Some(streams),
            "every stream meets 100 ms / 10 ms"
        );
        assert_eq!(good["slo"]["ttft_ms"], 100.0);
        let results = r["thresholds"].as_array().unwrap();
        assert_eq!(results.len(), 3);
        assert!(results.iter().all(|t| t["passed"] == true), "{results:#?}");
    });
}

#[test]
fn objectives_no_stream_meets_give_no_goodput_and_fail_their_threshold() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("llm-bad");
    let step = llm_step(", slo = { ttft = \"10ms\" }");
    let plan = plan(
        &dir,
        &t.base_url(),
        CLOSED,
        &step,
        "[thresholds]\ngoodput = [\"> 0\"]",
    );
    let (out, r) = run_json(&dir, &["run", &plan]);
    assert_eq!(out.status.code(), Some(99), "a failed threshold");
    let good = &step_streams(&r)["goodput"];
    assert_eq!(good["good"], 0, "a 40 ms TTFT never meets 10 ms: {good:#}");
    assert_eq!(good["rps"], 0.0);
    assert_eq!(r["thresholds"][0]["passed"], false);
}

#[test]
fn a_message_limit_stops_reading_and_the_connection_is_not_reused() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("sse-limit");
    let step = "path = \"/sse?events=50&gap_ms=2\"\nsse = { max_messages = 5 }";
    let load = "profile = \"iterations\"\nvus = 2\niterations = 10";
    let plan = plan(&dir, &t.base_url(), load, step, "");
    let r = run_json_ok(&dir, &["run", &plan]);
    let s = step_streams(&r);
    assert_eq!(s["streams"], 10);
    assert_eq!(s["messages"], 50, "{s:#}");
    assert_eq!(s["ended"]["limit"], 10);
    assert_eq!(r["summary"]["errors"], 0);
    // The rest of each body was left unread: every stream had a connection of its own.
    assert_eq!(r["summary"]["connections_opened"], 10);
}

#[test]
fn sse_over_http2_is_measured_the_same() {
    let _serial = serial();
    accurate(|| {
        let t = target();
        let dir = temp_dir("sse-h2");
        let step = "path = \"/sse?events=10&ttft_ms=50&gap_ms=10&done=1\"\nsse = {}";
        let load = "profile = \"iterations\"\nvus = 4\niterations = 12";
        let plan = plan(&dir, &t.base_url(), load, step, "");
        let text = std::fs::read_to_string(&plan).unwrap();
        std::fs::write(
            &plan,
            text.replace("timeout = ", "protocol = \"http2\"\ntimeout = "),
        )
        .unwrap();
        let r = run_json_ok(&dir, &["run", &plan]);
        assert_eq!(r["config"]["protocol"], "h2c");
        let s = step_streams(&r);
        assert_eq!(s["messages"], 120, "{s:#}");
        near_schedule(s, 50.0, 10.0, None);
    });
}

#[test]
fn stream_figures_of_shares_merge_exactly() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("sse-merge");
    let step = "path = \"/sse?events=5&gap_ms=5&done=1\"\nsse = {}";
    let load = "profile = \"iterations\"\nvus = 2\niterations = 8";
    let plan = plan(&dir, &t.base_url(), load, step, "");
    let mut paths: Vec<PathBuf> = Vec::new();
    for i in 0..2 {
        let sub = dir.join(format!("s{i}"));
        std::fs::create_dir_all(&sub).unwrap();
        run_json_ok(&sub, &["run", &plan, "--segment", &format!("{i}/2")]);
        paths.push(sub.join("run.json"));
    }
    let merged_dir = dir.join("merged");
    let (code, _, stderr) = run_volley(&[
        "merge",
        paths[0].to_str().unwrap(),
        paths[1].to_str().unwrap(),
        "-o",
        merged_dir.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let merged = valid_record(&merged_dir.join("run.json"));
    verified(&merged_dir.join("run.json"));
    let shares: Vec<Value> = paths.iter().map(|p| valid_record(p)).collect();
    let sum = |field: &str| -> u64 {
        shares
            .iter()
            .map(|r| step_streams(r)[field].as_u64().unwrap())
            .sum()
    };
    // A stream count that no longer matches its histograms is caught by the verifier.
    let mut bad = shares[0].clone();
    let messages = bad["summary"]["streams"]["messages"].as_u64().unwrap();
    bad["summary"]["streams"]["messages"] = (messages + 1).into();
    let bad_path = dir.join("bad.json");
    std::fs::write(&bad_path, bad.to_string()).unwrap();
    let (code, stdout, _) = run_volley(&["verify", bad_path.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("summary.streams.histograms.message_gap_us"),
        "{stdout}"
    );
    assert!(stdout.contains("streams_add_up"), "{stdout}");
    let m = step_streams(&merged);
    assert_eq!(m["streams"].as_u64(), Some(sum("streams")));
    assert_eq!(m["messages"].as_u64(), Some(sum("messages")));
    assert_eq!(m["messages"], 40, "8 streams of 5 events");
    assert_eq!(merged["summary"]["streams"]["streams"], 8);
}

#[test]
fn streaming_steps_that_cannot_work_are_refused_in_words() {
    let dir = temp_dir("sse-refused");
    let base = "http://127.0.0.1:9";
    let load = "profile = \"iterations\"\nvus = 1\niterations = 1";
    let cases = [
        (
            "path = \"/\"\nsse = { llm = \"anthropic\" }",
            "",
            "unknown llm API `anthropic`",
        ),
        (
            "path = \"/\"\nsse = { max_messages = 0 }",
            "",
            "max_messages is 0",
        ),
        (
            "path = \"/\"\nsse = { slo = { tpot = \"5ms\" } }",
            "",
            "needs LLM mode",
        ),
        (
            "path = \"/\"\nsse = { llm = \"openai\", slo = { ttft = \"fast\" } }",
            "",
            "sse.slo.ttft",
        ),
        ("path = \"/\"\nsse = { colour = 1 }", "", "colour"),
        (
            "path = \"/\"\nsse = {}",
            "[thresholds]\nttft = [{ condition = \"p95 < 1s\", abort_on_fail = true }]",
            "cannot abort",
        ),
    ];
    for (step, extra, said) in cases {
        let plan = plan(&dir, base, load, step, extra);
        let (code, _, stderr) = run_volley(&["check", &plan]);
        assert_eq!(code, Some(2), "{step}: {stderr}");
        assert!(
            stderr.contains(said),
            "{step}: expected `{said}` in: {stderr}"
        );
        assert!(
            stderr.contains("plan.toml:"),
            "the error says where: {stderr}"
        );
    }
}

#[test]
fn example_007_llm_sse_runs_and_meets_its_objectives() {
    let _serial = serial();
    accurate(|| {
        let t = target();
        let dir = temp_dir("example-007");
        let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/007-llm-sse.toml");
        let base = format!("target.base_url={}", t.base_url());
        let args = ["run", example, "--set", &base, "--time-scale", "0.3"];
        let r = run_json_ok(&dir, &args);
        let s = &r["summary"]["streams"];
        let streams = s["streams"].as_u64().unwrap();
        assert!(streams >= 40, "20/s for 3 s: {s:#}");
        assert_eq!(s["llm"]["tokens"].as_u64(), Some(64 * streams));
        near_truth("TTFT p50", s["ttft_ms"]["p50"].as_f64().unwrap(), 80.0);
        near_truth(
            "TPOT p50",
            s["llm"]["tpot_ms"]["p50"].as_f64().unwrap(),
            15.0,
        );
        assert_eq!(s["goodput"]["good"].as_u64(), Some(streams));
        let report =
            std::fs::read_to_string(common::only_subfolder(&dir.join("results")).join("report.md"))
                .unwrap();
        for table in [
            "## Streams",
            "## LLM streams",
            "TTFT ≤ 200 ms, TPOT ≤ 25 ms",
        ] {
            assert!(report.contains(table), "{table} missing from report.md");
        }
    });
}

#[test]
fn compare_judges_stream_figures_over_repeats_and_leaves_them_out_without_streams() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("sse-compare");
    let load = "profile = \"iterations\"\nvus = 2\niterations = 12";
    let mut folders = Vec::new();
    for (name, ttft) in [("before", 20), ("after", 30)] {
        let sub = dir.join(name);
        std::fs::create_dir_all(&sub).unwrap();
        let step = format!("path = \"/sse?events=4&ttft_ms={ttft}&gap_ms=2&done=1\"\nsse = {{}}");
        let plan = plan(&sub, &t.base_url(), load, &step, "");
        let out = sub.join("results");
        let (code, _, stderr) = run_volley(&[
            "run",
            &plan,
            "--repeat",
            "3",
            "--out",
            out.to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(code, Some(0), "{stderr}");
        let folder = common::only_subfolder(&out);
        verified(&folder);
        folders.push(folder);
    }
    let (a, b) = (folders[0].to_str().unwrap(), folders[1].to_str().unwrap());
    let (code, stdout, stderr) = run_volley(&["compare", a, b, "--format", "md"]);
    assert_eq!(code, Some(0), "{stderr}");
    let row = |label: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("| {label} (")))
            .unwrap_or_else(|| panic!("no {label} row in:\n{stdout}"))
            .to_string()
    };
    assert!(row("TTFT p50").contains("slower"), "{}", row("TTFT p50"));
    assert!(row("message gap p99").contains("ms"), "{stdout}");
    assert!(
        !stdout.contains("| TPOT p50 ("),
        "no LLM step, no TPOT row:\n{stdout}"
    );
    // Runs without streams have no stream rows at all.
    let (plain, _) = common::run_repeats(&dir.join("plain"), &format!("{}/", t.base_url()), 2, 1);
    let plain = plain.to_str().unwrap();
    let (_, stdout, _) = run_volley(&["compare", plain, plain, "--format", "md"]);
    assert!(!stdout.contains("TTFT"), "{stdout}");
}

#[test]
fn llm_streams_of_a_python_server_are_counted_from_their_deltas() {
    let _serial = serial();
    let peer = PythonPeer::start("sse_llm_server.py", "");
    let dir = temp_dir("sse-python");
    let base = peer.base();
    let load = "profile = \"iterations\"\nvus = 2\niterations = 6";
    for path in ["/v1/chat/completions", "/v1/chat/completions?close"] {
        let step = format!(
            "method = \"POST\"\npath = \"{path}\"\n\
             json = {{ model = \"m\", stream = true, max_tokens = 8, messages = [] }}\n\
             sse = {{ llm = \"openai\" }}"
        );
        let plan = plan(&dir, &base, load, &step, "");
        let r = run_json_ok(&dir, &["run", &plan]);
        let s = step_streams(&r);
        assert_eq!(s["streams"], 6, "{path}: {s:#}");
        assert_eq!(s["llm"]["tokens"], 48, "{path}");
        assert_eq!(s["llm"]["tokens_from"], "deltas", "{path}");
        assert_eq!(s["ended"]["sentinel"], 6, "{path}");
        // Python's sleeps are only roughly on time: generous bounds around 20 ms and 5 ms.
        let ttft = s["ttft_ms"]["p50"].as_f64().unwrap();
        assert!((20.0..40.0).contains(&ttft), "{path}: TTFT p50 {ttft}");
        let gap = s["message_gap_ms"]["p50"].as_f64().unwrap();
        assert!((4.5..8.0).contains(&gap), "{path}: gap p50 {gap}");
    }
}

#[test]
fn open_model_time_to_first_message_follows_the_stall_law() {
    use std::net::{Ipv4Addr, SocketAddr};
    use std::time::Duration;
    use volley::server::{self, Faults, Stall, TargetConfig};
    let _serial = serial();
    let (stall, every) = (Duration::from_millis(500), Duration::from_secs(5));
    let config = TargetConfig {
        bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        threads: 2,
        capacity: None,
    };
    let faults = Faults {
        stall: Some(Stall::new(stall, every).unwrap()),
        ..Faults::default()
    };
    let t = server::spawn_with_faults(config, faults).expect("target starts");
    let dir = temp_dir("sse-stall");
    // 20 s is 4 periods: whatever the phase the run starts at, 10 % of the streams fall due in
    // a freeze, uniformly over its 500 ms, and wait out the rest of it before their first
    // message, 10 ms after the target let them in.
    let load = "profile = \"constant-arrival-rate\"\nrate = 200\nduration = \"20s\"\nmax_vus = 300";
    let step = "path = \"/sse?events=1&gap_ms=10&done=1\"\nsse = {}";
    let plan = plan(&dir, &t.base_url(), load, step, "");
    let r = run_json_ok(&dir, &["run", &plan]);
    let s = step_streams(&r);
    assert_eq!(r["summary"]["dropped"], 0);
    assert_eq!(s["failed"], 0, "{s:#}");
    // P(TTFT − T > x) = (S − x) / P for 0 ≤ x < S: pN = T + S − (1 − N/100)·P.
    let (t_ms, s_ms, p_ms) = (10.0, 500.0, 5000.0);
    for (name, tail) in [("p95", 0.05), ("p99", 0.01), ("p99_9", 0.001)] {
        let law = t_ms + s_ms - tail * p_ms;
        let measured = s["ttft_ms"][name].as_f64().unwrap();
        // Releasing a freeze's 100 held streams at once makes the target a few ms late.
        let allowed = 0.10 * law + 5.0;
        eprintln!("TTFT {name}: {measured} ms, law {law} ms, allowed ± {allowed} ms");
        assert!(
            (measured - law).abs() <= allowed,
            "TTFT {name}: {measured} ms against the law's {law} ms (± {allowed})"
        );
    }
    // Streams not held by a freeze keep their 10 ms (and the ~0.8 ms of send lag and the
    // target's own time to its first byte, at this rate on 2 cores).
    let p50 = s["ttft_ms"]["p50"].as_f64().unwrap();
    assert!((10.0..12.0).contains(&p50), "TTFT p50 {p50} ms");
}

#[test]
fn quick_mode_streams_with_sse_and_llm_flags() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("sse-quick");
    let url = format!("{}/v1/chat/completions?ttft_ms=5&gap_ms=1", t.base_url());
    let body = r#"{"stream": true, "max_tokens": 10}"#;
    let args = [
        &url, "-m", "POST", "--body", body, "--llm", "openai", "-n", "6", "-c", "2",
    ];
    let r = run_json_ok(&dir, &args);
    let s = &r["summary"]["streams"];
    assert_eq!(s["streams"], 6, "{s:#}");
    assert_eq!(s["llm"]["tokens"], 60);
    let sse = format!("{}/sse?events=3&gap_ms=1&done=1", t.base_url());
    let r = run_json_ok(&dir, &[&sse, "--sse", "-n", "4", "-c", "1"]);
    assert_eq!(r["summary"]["streams"]["messages"], 12);
    assert!(r["summary"]["streams"].get("llm").is_none());
    let (code, _, stderr) = run_volley(&[&sse, "--llm", "claude", "-n", "1"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--llm") && stderr.contains("unknown llm API `claude`"),
        "{stderr}"
    );
}
