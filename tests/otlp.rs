//! `--otlp` against a real OTLP receiver: VictoriaMetrics single-node (its OTLP/HTTP endpoint,
//! names converted as the OpenTelemetry ↔ Prometheus compatibility rules say, read back through
//! its Prometheus query API). It builds from one pinned Go module in about 80 s on CI's two cores
//! and answers PromQL, so the received totals are compared with the record directly; Debian's
//! Prometheus (2.42) has no OTLP receiver, and an OpenTelemetry Collector would need a second
//! store behind it.

mod common;

use common::query_api::{Store, binary};

const INSTALL: &str =
    "go install github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics@v1.151.0";

fn victoria_metrics() -> Option<std::path::PathBuf> {
    binary("VOLLEY_VICTORIA_METRICS", "victoria-metrics", INSTALL)
}

#[test]
fn otlp_totals_equal_the_record() {
    let Some(binary) = victoria_metrics() else {
        return;
    };
    let _serial = common::serial();
    let target = common::target();
    let store = Store::victoria_metrics(&binary, "otlp-vm");
    let dir = common::temp_dir("otlp-run");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "[target]\nbase_url = \"http://{}\"\n\n[tags]\nteam = \"perf\"\n\n\
             [[scenario]]\nname = \"browse\"\n[scenario.load]\nprofile = \"constant-vus\"\n\
             vus = 2\nduration = \"2s\"\n[[scenario.step]]\nname = \"home\"\npath = \"/\"\n\
             [[scenario.step]]\nname = \"busy\"\npath = \"/status/503\"\n",
            target.addr()
        ),
    )
    .unwrap();
    // `--otlp` without a URL: the endpoint and the resource come from the environment, as the
    // OpenTelemetry specification says (`/v1/metrics` appended to the general endpoint).
    let json = dir.join("run.json");
    let out = common::volley()
        .args([
            "run",
            plan.to_str().unwrap(),
            "--threads",
            "2",
            "-q",
            "--otlp",
            "--json",
        ])
        .arg(&json)
        .arg("--out")
        .arg(dir.join("results"))
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("{}/opentelemetry", store.base),
        )
        .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::verified(&json);
    let record = common::valid_record(&json);
    let codes = common::warning_codes(&record);
    assert!(!codes.contains(&"otlp_failed"), "{}", record["warnings"]);
    let id = record["run_id"].as_str().unwrap();
    let run = format!("run_id=\"{id}\",team=\"perf\",scenario=\"\",step=\"\"");
    let requests = common::summary_u64(&record, "requests");
    let (ok, busy) = (
        common::status_of(&record, "200"),
        common::status_of(&record, "503"),
    );
    assert!(
        ok > 0 && busy > 0 && ok + busy == requests,
        "{}",
        record["summary"]
    );
    store.expect(&format!("volley_requests_total{{{run}}}"), requests as f64);
    for (status, n) in [("200", ok), ("503", busy)] {
        let q = format!("volley_responses_total{{{run},status=\"{status}\"}}");
        store.expect(&q, n as f64);
    }
    let errors = common::errors_of(&record, "http_5xx") as f64;
    store.expect(
        &format!("volley_errors_total{{{run},kind=\"http_5xx\"}}"),
        errors,
    );
    store.expect(
        &format!("volley_latency_seconds_count{{{run}}}"),
        requests as f64,
    );
    store.expect(
        &format!("volley_latency_seconds_bucket{{{run},le=\"+Inf\"}}"),
        requests as f64,
    );
    for name in ["home", "busy"] {
        let q =
            format!("volley_requests_total{{run_id=\"{id}\",scenario=\"browse\",step=\"{name}\"}}");
        store.expect(&q, common::step_u64(&record, name, "requests") as f64);
    }
    store.expect(&format!("volley_active_vus{{{run}}}"), 0.0);
    // The resource's attributes are labels too.
    let q = format!("volley_requests_total{{{run},deployment_environment=\"ci\"}}");
    store.expect(&q, requests as f64);
}

#[test]
fn a_receiver_that_is_down_is_a_warning_not_a_lost_run() {
    let _serial = common::serial();
    let target = common::target();
    let dir = common::temp_dir("otlp-down");
    let down = format!("http://127.0.0.1:{}/v1/metrics", common::closed_port());
    let url = format!("{}/", target.base_url());
    let (out, record) = common::run_json(&dir, &[&url, "-c", "2", "-n", "200", "--otlp", &down]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("the first push failed: OTLP: connection refused"),
        "{stderr}"
    );
    assert_eq!(common::summary_u64(&record, "requests"), 200);
    let warning = record["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "otlp_failed")
        .unwrap_or_else(|| panic!("no otlp_failed warning: {}", record["warnings"]));
    let message = warning["message"].as_str().unwrap();
    assert!(message.contains(&format!("OTLP to {down}")), "{message}");
}
