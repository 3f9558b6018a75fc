//! volley's live metrics against a real Prometheus (Debian's `prometheus` 2.42, which `.ci/run`
//! installs): a run of the volley binary against the built-in target exports through both
//! outputs at once — Prometheus scrapes its `--metrics-listen` page and receives its
//! `--prometheus-rw` pushes — and what Prometheus then holds, read through its HTTP query API,
//! equals the run's record: requests, errors, each status code, per step too, and the latency
//! histogram's count.
//!
//! The harness is `common::query_api` (shared with the OTLP and dashboard tests).

mod common;

use common::query_api::{Store, binary};

/// The `prometheus` binary (`$VOLLEY_PROMETHEUS`, else `PATH`).
fn prometheus_binary() -> Option<std::path::PathBuf> {
    binary(
        "VOLLEY_PROMETHEUS",
        "prometheus",
        "apt-get update && apt-get install -y prometheus",
    )
}

#[test]
fn prometheus_holds_the_totals_of_the_record_scraped_and_pushed() {
    let Some(binary) = prometheus_binary() else {
        return;
    };
    let _serial = common::serial();
    let target = common::target();
    let dir = common::temp_dir("prom-live");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "[target]\nbase_url = \"http://{}\"\n\n[[scenario]]\nname = \"browse\"\n\
             [scenario.load]\nprofile = \"constant-vus\"\nvus = 2\nduration = \"3s\"\n\
             [[scenario.step]]\nname = \"home\"\npath = \"/\"\n\
             [[scenario.step]]\nname = \"busy\"\npath = \"/status/503\"\n",
            target.addr()
        ),
    )
    .unwrap();
    let listen = format!("127.0.0.1:{}", common::closed_port());
    let scrape = format!(
        "scrape_configs:\n  - job_name: volley\n    static_configs:\n      - targets: ['{listen}']\n"
    );
    let prometheus = Store::prometheus(&binary, "prom-live-server", &scrape);
    let write_url = format!("{}/api/v1/write", prometheus.base);
    // The page stays up 4 s after the run: Prometheus (scraping every second) reads the final
    // figures.
    let (out, record) = common::run_json(
        &dir,
        &[
            "run",
            plan.to_str().unwrap(),
            "--threads",
            "2",
            "--metrics-listen",
            &listen,
            "--metrics-linger",
            "4s",
            "--prometheus-rw",
            &write_url,
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("live metrics at http://{listen}/metrics")),
        "{stderr}"
    );
    assert!(
        common::warning_codes(&record)
            .iter()
            .all(|c| *c != "remote_write_failed"),
        "{}",
        record["warnings"]
    );
    let requests = common::summary_u64(&record, "requests");
    let errors = common::summary_u64(&record, "errors");
    let (ok, busy) = (
        common::status_of(&record, "200"),
        common::status_of(&record, "503"),
    );
    assert!(
        ok > 0 && busy > 0 && ok + busy == requests,
        "{}",
        record["summary"]
    );
    // Pushed series carry no job label; scraped ones carry job="volley". The page is gone once
    // the run has ended, and Prometheus marks a failed scrape's series stale: an instant query
    // then finds nothing. `last_over_time` reads the last sample held, which ignores those
    // markers (the bare selector failed whenever a scrape came between the run's end and the
    // query).
    let held = |selector: &str| format!("last_over_time({selector}[5m])");
    for job in ["", "volley"] {
        let run = format!("job=\"{job}\",scenario=\"\",step=\"\"");
        let q =
            |selector: String, expected: u64| prometheus.expect(&held(&selector), expected as f64);
        q(format!("volley_requests_total{{{run}}}"), requests);
        q(format!("volley_latency_seconds_count{{{run}}}"), ok + busy);
        q(
            format!("volley_latency_seconds_bucket{{{run},le=\"+Inf\"}}"),
            ok + busy,
        );
        prometheus.expect(
            &format!("sum({})", held(&format!("volley_errors_total{{{run}}}"))),
            errors as f64,
        );
        q(
            format!("volley_errors_total{{{run},kind=\"http_5xx\"}}"),
            common::errors_of(&record, "http_5xx"),
        );
        for (status, n) in [("200", ok), ("503", busy)] {
            q(
                format!("volley_responses_total{{{run},status=\"{status}\"}}"),
                n,
            );
        }
        for name in ["home", "busy"] {
            q(
                format!(
                    "volley_requests_total{{job=\"{job}\",scenario=\"browse\",step=\"{name}\"}}"
                ),
                common::step_u64(&record, name, "requests"),
            );
        }
        // Scraped and pushed after the run: nothing runs any more.
        q(format!("volley_active_vus{{{run}}}"), 0);
        // Every series carries the run's id, the record's.
        let id = record["run_id"].as_str().unwrap();
        q(
            format!("volley_requests_total{{{run},run_id=\"{id}\"}}"),
            requests,
        );
    }
    // Scraped successfully: `up` is 0 once the page has gone, 1 while it was there.
    prometheus.expect("max_over_time(up{job=\"volley\"}[5m])", 1.0);
}

/// Two runs pushing to one Prometheus at the same time land in two sets of series, each
/// labelled with its run's id and its tags, each holding its own run's totals (before run ids,
/// both wrote one series: 0, 100, 300, 200, 600, … and Prometheus refused duplicate samples).
#[test]
fn concurrent_runs_stay_apart_in_prometheus() {
    let Some(binary) = prometheus_binary() else {
        return;
    };
    let _serial = common::serial();
    let target = common::target();
    let prometheus = Store::prometheus(&binary, "prom-concurrent-server", "");
    let write_url = format!("{}/api/v1/write", prometheus.base);
    let dir = common::temp_dir("prom-concurrent");
    let url = format!("{}/delay?ms=2", target.base_url());
    let start = |name: &str, requests: &str| {
        let json = dir.join(format!("{name}.json"));
        let child = common::volley()
            .args([
                url.as_str(),
                "-c",
                "2",
                "-n",
                requests,
                "-q",
                "--prometheus-rw",
            ])
            .arg(&write_url)
            .args(["--tag", &format!("testid={name}"), "--tag", "team=perf"])
            .arg("--json")
            .arg(&json)
            .arg("--out")
            .arg(dir.join("results"))
            .spawn()
            .unwrap();
        (child, json)
    };
    let runs = [start("a", "600"), start("b", "900")];
    for (mut child, json) in runs {
        assert!(child.wait().unwrap().success());
        let record = common::valid_record(&json);
        let id = record["run_id"].as_str().unwrap().to_string();
        let testid = record["tags"]["testid"].as_str().unwrap();
        assert_eq!(record["tags"]["team"], "perf");
        let requests = common::summary_u64(&record, "requests");
        let whole = "scenario=\"\",step=\"\"";
        prometheus.expect(
            &format!("volley_requests_total{{{whole},run_id=\"{id}\",testid=\"{testid}\"}}"),
            requests as f64,
        );
        prometheus.expect(
            &format!("max_over_time(volley_requests_total{{{whole},testid=\"{testid}\"}}[5m])"),
            requests as f64,
        );
    }
    prometheus.expect("count(volley_requests_total{scenario=\"\",step=\"\"})", 2.0);
}
