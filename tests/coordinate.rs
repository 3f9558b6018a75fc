//! Coordinated tests: a `volley coordinate` process and three `--join` generators on
//! 127.0.0.1 against the built-in target — exact totals, open-model rates, exact merged
//! histograms, a global `abort_on_fail` that stops every generator, the live metrics page, and
//! shares and tokens refused. What happens when a process goes away or is told to stop:
//! `tests/coordinate_faults.rs`.

mod common;

use std::time::Duration;

use common::coordinated::*;
use common::{Spawned, spawn_volley, summary_f64, summary_u64, temp_dir, valid_record};
use serde_json::Value;
use volley::record::decode_histogram;

fn histogram(record: &Value) -> hdrhistogram::Histogram<u64> {
    decode_histogram(record["histograms"]["latency_us"].as_str().unwrap()).unwrap()
}

#[test]
fn n_requests_over_three_generators_are_exactly_n_and_merge_like_volley_merge() {
    let _serial = common::serial();
    let target = common::target();
    let dir = temp_dir("coord-n");
    let url = format!("{}/", target.base_url());
    let quick = [url.as_str(), "-n", "30000", "-c", "4", "--threads", "1"];
    let (coord, join) = coordinator(&dir, &["--workers", "3"]);
    // One generator told its share, one by its Indexed Job's index, one by the coordinator.
    let mut with_segment = quick.to_vec();
    with_segment.extend(["--segment", "2/3"]);
    let mut workers = vec![
        generator(&dir, 0, &with_segment, &join, &[]),
        generator(&dir, 1, &quick, &join, &[("JOB_COMPLETION_INDEX", "0")]),
    ];
    // The third once the others have their shares (else it could take share 0 first).
    common::wait_until("two registrations", Duration::from_secs(30), || {
        let text = stderr_of(&dir);
        text.contains("share 2/3: registered") && text.contains("share 0/3: registered")
    });
    workers.push(generator(&dir, 2, &quick, &join, &[]));
    for (i, w) in finish(workers, Duration::from_secs(60)).iter().enumerate() {
        assert_eq!(w.code, Some(0), "generator {i}: {}", w.stderr);
    }
    let c = coord.wait(Duration::from_secs(30));
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    let m = merged(&dir);
    assert_eq!(summary_u64(&m, "requests"), 30_000);
    assert_eq!(summary_u64(&m, "errors"), 0);
    let shares: Vec<Value> = (0..3)
        .map(|i| valid_record(&dir.join(format!("w{i}/run.json"))))
        .collect();
    let index = |r: &Value| r["share"]["index"].as_u64().unwrap();
    assert_eq!(index(&shares[0]), 2);
    assert_eq!(index(&shares[1]), 0);
    assert_eq!(index(&shares[2]), 1, "the free share");
    // The merged histogram is the sum of the generators' own, bit for bit.
    let mut sum = histogram(&shares[0]);
    for s in &shares[1..] {
        sum.add(histogram(s)).unwrap();
    }
    assert_eq!(histogram(&m), sum);
    assert_eq!(
        m["histograms"]["latency_us"].as_str().unwrap(),
        volley::record::encode_histogram(&sum)
    );

    // The same test as three --segment runs without a coordinator, merged by `volley merge`:
    // the same totals.
    let mut paths = Vec::new();
    for i in 0..3 {
        let sub = dir.join(format!("alone{i}"));
        std::fs::create_dir_all(&sub).unwrap();
        let segment = format!("{i}/3");
        let mut args = quick.to_vec();
        args.extend(["--segment", segment.as_str()]);
        let done = spawn_volley(&sub, &args, &[]).wait(Duration::from_secs(60));
        assert_eq!(done.code, Some(0), "{}", done.stderr);
        paths.push(sub.join("run.json").display().to_string());
    }
    let out = dir.join("by-merge");
    let mut args = vec!["merge"];
    args.extend(paths.iter().map(String::as_str));
    let out_text = out.display().to_string();
    args.extend(["-o", out_text.as_str(), "-q"]);
    let (code, _, stderr) = common::run_volley(&args);
    assert_eq!(code, Some(0), "{stderr}");
    let by_merge = valid_record(&out.join("run.json"));
    for key in ["requests", "errors", "not_sent", "bytes_sent"] {
        assert_eq!(
            m["summary"][key], by_merge["summary"][key],
            "summary.{key}: coordinator against volley merge"
        );
    }
    assert_eq!(m["summary"]["status"], by_merge["summary"]["status"]);
    assert_eq!(m["merged"]["count"], by_merge["merged"]["count"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_open_model_rate_is_the_sum_of_the_shares() {
    let _serial = common::serial();
    let target = common::target();
    let dir = temp_dir("coord-rate");
    let plan = plan(
        &dir,
        &target.base_url(),
        "profile = \"constant-arrival-rate\"\nrate = 3000\nduration = \"3s\"\nmax_vus = 300",
        "",
    );
    let (coord, join) = coordinator(&dir, &[&plan, "--workers", "3"]);
    let workers: Vec<Spawned> = (0..3)
        .map(|i| generator(&dir, i, &["run", &plan], &join, &[]))
        .collect();
    for (i, w) in finish(workers, Duration::from_secs(60)).iter().enumerate() {
        assert_eq!(w.code, Some(0), "generator {i}: {}", w.stderr);
    }
    let c = coord.wait(Duration::from_secs(30));
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    let m = merged(&dir);
    let shares: Vec<Value> = (0..3)
        .map(|i| valid_record(&dir.join(format!("w{i}/run.json"))))
        .collect();
    let total: u64 = shares.iter().map(|s| summary_u64(s, "requests")).sum();
    assert_eq!(summary_u64(&m, "requests"), total);
    // The sum, not one share's 1000 nor their mean; within 3 %, since the merged window runs
    // from the first share's start to the last one's end, and three processes woken together
    // on a busy 2-core host can start tens of milliseconds apart.
    let rps = summary_f64(&m, "rps");
    assert!(
        (rps - 3000.0).abs() <= 90.0,
        "merged rate {rps:.1} req/s, asked 3000 (shares: {:?})",
        shares
            .iter()
            .map(|s| summary_f64(s, "rps"))
            .collect::<Vec<_>>()
    );
    assert!(
        (total as f64 - 9000.0).abs() <= 90.0,
        "{total} requests in 3 s at 3000 req/s"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_threshold_failing_on_the_whole_stops_every_generator() {
    abort_on_the_whole("coord-abort", "rps");
}

#[test]
fn a_scenario_threshold_failing_on_the_whole_stops_every_generator() {
    // Judged on the scenario's group: the generators send its figures because the coordinator
    // asks for them.
    abort_on_the_whole("coord-abort-group", "\"rps{scenario=get}\"");
}

/// A plan whose threshold on `metric` (`rps < 1000`, `abort_on_fail`) fails only on the whole.
fn abort_on_the_whole(name: &str, metric: &str) {
    let _serial = common::serial();
    let target = common::target();
    let dir = temp_dir(name);
    // 1,500 req/s over three generators: each sends 500 (< 1,000, so no generator alone would
    // fail), the whole 1,500 fails.
    let plan = plan(
        &dir,
        &target.base_url(),
        "profile = \"constant-arrival-rate\"\nrate = 1500\nduration = \"8s\"\nmax_vus = 100",
        &format!("[thresholds]\n{metric} = [{{ condition = \"< 1000\", abort_on_fail = true }}]\n"),
    );
    let (coord, join) = coordinator(&dir, &[&plan, "--workers", "3"]);
    let workers: Vec<Spawned> = (0..3)
        .map(|i| generator(&dir, i, &["run", &plan], &join, &[]))
        .collect();
    for (i, w) in finish(workers, Duration::from_secs(60)).iter().enumerate() {
        assert_eq!(w.code, Some(99), "generator {i}: {}", w.stderr);
    }
    let c = coord.wait(Duration::from_secs(30));
    assert_eq!(c.code, Some(99), "{}", c.stderr);
    assert!(
        c.stderr.contains("stopping every generator"),
        "{}",
        c.stderr
    );
    for i in 0..3 {
        let r = valid_record(&dir.join(format!("w{i}/run.json")));
        let t = &r["thresholds"][0];
        assert_eq!(t["aborted"], true, "generator {i}: {t}");
        let window = summary_f64(&r, "duration_s");
        assert!(window < 6.0, "generator {i} ran {window:.1}s of 8s");
    }
    let m = merged(&dir);
    assert_eq!(m["thresholds"][0]["passed"], false, "{}", m["thresholds"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_wrong_token_is_refused_and_missing_generators_are_named() {
    let dir = temp_dir("coord-refuse");
    let (coord, join) = coordinator(&dir, &["--workers", "2", "--wait", "3s"]);
    let sub = dir.join("w0");
    std::fs::create_dir_all(&sub).unwrap();
    let (code, _, stderr) = common::run_volley(&[
        "http://127.0.0.1:9/",
        "-n",
        "10",
        "--join",
        &join,
        "--token",
        "wrong",
        "--out",
        sub.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("401") && stderr.contains("token"),
        "{stderr}"
    );
    // A generator's own metrics page would not be fed: refused, pointing at the coordinator's.
    let (code, _, stderr) = common::run_volley(&[
        "http://127.0.0.1:9/",
        "-n",
        "10",
        "--join",
        &join,
        "--token",
        TOKEN,
        "--metrics-listen",
        "127.0.0.1:0",
    ]);
    assert_ne!(code, Some(0), "{stderr}");
    assert!(stderr.contains("exports nothing itself"), "{stderr}");
    let c = coord.wait(Duration::from_secs(30));
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    assert!(
        c.stderr
            .contains("0 of 2 generators registered in time; missing shares 0/2, 1/2"),
        "{}",
        c.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `volley_requests_total` of the whole run on a metrics page, if it is there.
fn requests_on(page: &str) -> Option<u64> {
    let id = run_id_on(page)?;
    let line = format!("volley_requests_total{{run_id=\"{id}\",scenario=\"\",step=\"\"}} ");
    page.lines()
        .find_map(|l| l.strip_prefix(line.as_str()))
        .and_then(|n| n.parse().ok())
}

/// The `run_id` label of a metrics page's series.
fn run_id_on(page: &str) -> Option<String> {
    let line = page
        .lines()
        .find(|l| l.starts_with("volley_requests_total{"))?;
    Some(
        line.split("run_id=\"")
            .nth(1)?
            .split('"')
            .next()?
            .to_string(),
    )
}

#[test]
fn the_coordinators_metrics_page_shows_the_whole_test() {
    let _serial = common::serial();
    let target = common::target();
    let dir = temp_dir("coord-metrics");
    let url = format!("{}/", target.base_url());
    let (coord, join) = coordinator(
        &dir,
        &[
            "--workers",
            "2",
            "--metrics-listen",
            "127.0.0.1:0",
            "--metrics-linger",
            "60s",
        ],
    );
    let mut page_url = String::new();
    common::wait_until("the metrics address", Duration::from_secs(20), || {
        let found = stderr_of(&dir)
            .lines()
            .find_map(|l| l.strip_prefix("volley coordinate: live metrics at "))
            .map(|u| u.trim_end_matches("/metrics").to_string());
        page_url = found.unwrap_or_default();
        !page_url.is_empty()
    });
    // Before the test, the page is there with the whole run at zero.
    assert_eq!(
        requests_on(&common::http_get(&page_url, "/metrics")),
        Some(0)
    );
    // Each generator also watches the target's page (`--watch` with `--join`).
    let watch = format!("prom={}/metrics", target.base_url());
    let quick = [
        url.as_str(),
        "-c",
        "2",
        "-d",
        "4s",
        "--threads",
        "1",
        "--watch",
        watch.as_str(),
        "--watch-metric",
        "volley_target_requests_total",
    ];
    let workers: Vec<Spawned> = (0..2)
        .map(|i| generator(&dir, i, &quick, &join, &[]))
        .collect();
    // While the test runs, the page counts requests of the generators' snapshots.
    let mut page = String::new();
    common::wait_until("requests on the page", Duration::from_secs(30), || {
        page = common::http_get(&page_url, "/metrics");
        requests_on(&page).is_some_and(|n| n > 0)
    });
    for family in [
        "volley_in_flight{run_id=",
        ",scenario=\"\",status=\"200\",step=\"\"} ",
        "volley_latency_seconds_count{run_id=",
        "volley_rate_achieved_per_second{run_id=",
    ] {
        assert!(page.contains(family), "{family}\n{page}");
    }
    for (i, w) in finish(workers, Duration::from_secs(60)).iter().enumerate() {
        assert_eq!(w.code, Some(0), "generator {i}: {}", w.stderr);
    }
    // Once the merged record is written (the page lingers), the page's counters are the sum of
    // the generators' records and the merged record's.
    common::wait_until("the merged record", Duration::from_secs(30), || {
        dir.join("merged").read_dir().is_ok_and(|mut d| {
            d.next()
                .is_some_and(|e| e.unwrap().path().join("run.json").exists())
        })
    });
    let m = merged(&dir);
    // The page's series carry the merged record's id: the whole test is one run.
    assert_eq!(
        Some(m["run_id"].as_str().unwrap().to_string()),
        run_id_on(&page)
    );
    let sum: u64 = (0..2)
        .map(|i| {
            summary_u64(
                &valid_record(&dir.join(format!("w{i}/run.json"))),
                "requests",
            )
        })
        .sum();
    assert_eq!(summary_u64(&m, "requests"), sum);
    // The coordinator's merge keeps what each generator watched, beside its figures.
    for i in 0..2 {
        let own = valid_record(&dir.join(format!("w{i}/run.json")));
        let index = own["share"]["index"].as_u64().unwrap() as usize;
        assert!(
            own["watch"]["prom"][0]["series"]
                .as_array()
                .is_some_and(|s| !s.is_empty())
        );
        assert_eq!(
            m["merged"]["shares"][index]["watch"], own["watch"],
            "generator {i}"
        );
    }
    let page = common::http_get(&page_url, "/metrics");
    assert_eq!(requests_on(&page), Some(sum), "{page}");
    // The rest without the run's id, which every series carries.
    let page = page.replace(&format!("run_id=\"{}\",", run_id_on(&page).unwrap()), "");
    let latency_count = page
        .lines()
        .find_map(|l| l.strip_prefix("volley_latency_seconds_count{scenario=\"\",step=\"\"} "))
        .and_then(|n| n.parse::<u64>().ok());
    assert_eq!(latency_count, Some(histogram(&m).len()), "{page}");
    let ok = page
        .lines()
        .find_map(|l| {
            l.strip_prefix("volley_responses_total{scenario=\"\",status=\"200\",step=\"\"} ")
        })
        .and_then(|n| n.parse::<u64>().ok());
    assert_eq!(ok, m["summary"]["status"]["200"].as_u64(), "{page}");
    assert!(
        page.contains("volley_in_flight{scenario=\"\",step=\"\"} 0\n"),
        "{page}"
    );
    // The page lingers 60 s: no need to wait for it.
    let mut child = coord.child;
    child.kill().unwrap();
    let _ = child.wait_with_output();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_share_asked_for_after_the_coordinator_gave_it_away_is_refused_saying_why() {
    let _serial = common::serial();
    let dir = temp_dir("coord-taken");
    let (coord, join) = coordinator(&dir, &["--workers", "2", "--wait", "5s"]);
    // Nothing is sent: the test never starts (share 1/2 never registers).
    let quick = ["http://127.0.0.1:9/", "-n", "10", "--join-wait", "20s"];
    let first = generator(&dir, 0, &quick, &join, &[("HOSTNAME", "gen-a")]);
    common::wait_until("the first registration", Duration::from_secs(30), || {
        stderr_of(&dir).contains("share 0/2: registered (gen-a)")
    });
    let mut asking = quick.to_vec();
    asking.extend(["--segment", "0/2"]);
    let second = generator(&dir, 1, &asking, &join, &[("HOSTNAME", "gen-b")]);
    let refused = second.wait(Duration::from_secs(30));
    assert_eq!(refused.code, Some(1), "{}", refused.stderr);
    for part in [
        "share 0/2 is taken already",
        "gave it to gen-a",
        "registered without asking for a share",
        "give every generator its share (--segment i/N or JOB_COMPLETION_INDEX) or none of them",
    ] {
        assert!(refused.stderr.contains(part), "{part}\n{}", refused.stderr);
    }
    let c = coord.wait(Duration::from_secs(30));
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    // Share 0 stayed gen-a's; share 1 was never given (gen-b was not moved to it).
    assert!(
        c.stderr
            .contains("1 of 2 generators registered in time; missing share 1/2"),
        "{}",
        c.stderr
    );
    let _ = first.wait(Duration::from_secs(30));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_plan_a_share_would_get_nothing_of_is_refused_before_any_generator_joins() {
    // One VU cannot be divided between two generators: said at once, nothing listened for.
    let dir = temp_dir("coord-one-vu");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "[target]\nbase_url = \"http://127.0.0.1:9\"\n[[scenario]]\nname = \"one\"\n\
         load = { profile = \"constant-vus\", vus = 1, duration = \"2s\" }\n\
         [[scenario.step]]\nname = \"get\"\npath = \"/\"\n",
    )
    .unwrap();
    let plan = plan.to_str().unwrap();
    let (code, _, err) = common::run_volley(&["coordinate", plan, "--workers", "2"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--workers 2") && err.contains("scenario `one`: share 1/2 gets no VU"),
        "{err}"
    );
    assert!(!err.contains("listening"), "{err}");
    let (code, _, err) = common::run_volley(&["coordinate", plan, "--workers", "0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--workers: must be between 1 and"), "{err}");
}
