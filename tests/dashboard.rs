//! The Grafana dashboard (`dashboards/volley.json`) against a real Prometheus: a two-scenario
//! run (a closed one with a step that fails, an open one) pushes by remote write, then every
//! query of every panel is evaluated through Prometheus's query API, with the dashboard's
//! variables set as Grafana would (one run, every scenario), and must return data of the shape
//! its legend names: at least one series, each with every label the legend shows, each value a
//! number. The dashboard itself must be one Grafana imports: its variables defined, its panels'
//! ids unique, every query on the dashboard's data source.

mod common;

use std::collections::BTreeSet;

use common::query_api::{Store, binary};
use serde_json::Value;

fn dashboard() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/dashboards/volley.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("the dashboard is JSON")
}

/// Every (panel title, query, legend) of the dashboard.
fn queries(d: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for panel in d["panels"].as_array().unwrap() {
        for t in panel["targets"].as_array().into_iter().flatten() {
            let text = |k: &str| t[k].as_str().unwrap_or("").to_string();
            out.push((
                panel["title"].as_str().unwrap().into(),
                text("expr"),
                text("legendFormat"),
            ));
        }
    }
    out
}

/// The labels a legend shows (`{{scenario}}/{{step}}` → scenario, step).
fn legend_labels(legend: &str) -> Vec<&str> {
    legend
        .split("{{")
        .skip(1)
        .filter_map(|s| s.split_once("}}").map(|(l, _)| l.trim()))
        .collect()
}

#[test]
fn the_dashboard_is_one_grafana_imports() {
    let d = dashboard();
    assert_eq!(d["uid"], "volley-load-test");
    assert!(d["schemaVersion"].as_u64().unwrap() >= 36);
    let vars: BTreeSet<&str> = d["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        vars,
        BTreeSet::from(["datasource", "filters", "run_id", "scenario"])
    );
    let panels = d["panels"].as_array().unwrap();
    let ids: BTreeSet<u64> = panels.iter().map(|p| p["id"].as_u64().unwrap()).collect();
    assert_eq!(ids.len(), panels.len(), "panel ids are unique");
    for p in panels.iter().filter(|p| p["type"] != "row") {
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        assert!(p["gridPos"]["w"].as_u64().unwrap() > 0, "{}", p["title"]);
        assert!(
            !p["targets"].as_array().unwrap().is_empty(),
            "{}",
            p["title"]
        );
    }
    let qs = queries(&d);
    assert!(qs.len() >= 15, "{}", qs.len());
    // Every variable a query uses is the dashboard's or Grafana's own.
    let known = ["$run_id", "$scenario", "$__rate_interval", "$__range"];
    for (title, expr, _) in &qs {
        let mut rest = expr.clone();
        for k in known {
            rest = rest.replace(k, "");
        }
        assert!(!rest.contains('$'), "{title}: unknown variable in {expr}");
        assert!(
            expr.contains("run_id=~\"$run_id\""),
            "{title}: not filtered by run: {expr}"
        );
    }
    // Every exported family has a panel.
    let all: String = qs.iter().map(|(_, e, _)| e.as_str()).collect();
    for family in volley::export::Family::ALL {
        let name = family.name();
        assert!(all.contains(name), "no panel shows {name}");
    }
}

/// docs/measurement.md's table lists every exported metric once, with its OTLP name and unit.
#[test]
fn every_exported_metric_is_documented_once_with_both_names() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/measurement.md");
    let doc = std::fs::read_to_string(path).unwrap();
    for family in volley::export::Family::ALL {
        let meta = family.meta();
        let (family, name, unit) = (meta.name, meta.otlp_name, meta.otlp_unit);
        let rows: Vec<&str> = doc
            .lines()
            .filter(|l| l.starts_with(&format!("| `{family}` |")))
            .collect();
        assert_eq!(rows.len(), 1, "{family}: {rows:?}");
        assert!(
            rows[0].contains(&format!("`{name}`, `{unit}`")),
            "{family}: {}",
            rows[0]
        );
    }
}

#[test]
fn every_panel_returns_data_from_a_real_prometheus() {
    let Some(binary) = binary(
        "VOLLEY_PROMETHEUS",
        "prometheus",
        "apt-get update && apt-get install -y prometheus",
    ) else {
        return;
    };
    let _serial = common::serial();
    let target = common::target();
    let prometheus = Store::prometheus(&binary, "dashboard-prom", "");
    let dir = common::temp_dir("dashboard-run");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "[target]\nbase_url = \"http://{}\"\n\n\
             [[scenario]]\nname = \"browse\"\n[scenario.load]\nprofile = \"constant-vus\"\n\
             vus = 2\nduration = \"4s\"\n[[scenario.step]]\nname = \"home\"\npath = \"/\"\n\
             [[scenario.step]]\nname = \"busy\"\npath = \"/status/503\"\n\
             [[scenario.step]]\nname = \"chat\"\npath = \"/ws\"\nbody = \"hi\"\n\
             websocket = {{ count = 2, echo = true }}\n\n\
             [[scenario]]\nname = \"pay\"\n[scenario.load]\nprofile = \"constant-arrival-rate\"\n\
             rate = 50\nduration = \"4s\"\nmax_vus = 8\n\
             [[scenario.step]]\nname = \"charge\"\npath = \"/delay?ms=2\"\n",
            target.addr()
        ),
    )
    .unwrap();
    let write_url = format!("{}/api/v1/write", prometheus.base);
    let args = [
        "run",
        plan.to_str().unwrap(),
        "--threads",
        "2",
        "--prometheus-rw",
        &write_url,
    ];
    let (_, record) = common::run_json(&dir, &args);
    let id = record["run_id"].as_str().unwrap();
    // Pushed until the end: the totals are in before any panel is read.
    let requests = common::summary_u64(&record, "requests") as f64;
    let whole = format!("volley_requests_total{{run_id=\"{id}\",scenario=\"\",step=\"\"}}");
    prometheus.expect(&whole, requests);
    // The stream counters end at the record's totals too.
    let streams = record["summary"]["streams"]["streams"].as_f64().unwrap();
    let all_streams = format!("volley_streams_total{{run_id=\"{id}\",scenario=\"\",step=\"\"}}");
    prometheus.expect(&all_streams, streams);
    for (title, expr, legend) in queries(&dashboard()) {
        let query = expr
            .replace("$run_id", id)
            .replace("$scenario", ".+")
            .replace("$__rate_interval", "1m")
            .replace("$__range", "5m");
        let data = prometheus
            .query(&query)
            .unwrap_or_else(|| panic!("{title}: Prometheus refused {query}"));
        assert_eq!(data["resultType"], "vector", "{title}: {query}");
        let result = data["result"].as_array().unwrap();
        assert!(!result.is_empty(), "{title}: no data for {query}");
        for series in result {
            for label in legend_labels(&legend) {
                let value = series["metric"][label].as_str();
                assert!(
                    value.is_some_and(|v| !v.is_empty()),
                    "{title}: no {label} in {series}"
                );
            }
            let value: f64 = series["value"][1].as_str().unwrap().parse().unwrap();
            assert!(
                value.is_finite() && value >= 0.0,
                "{title}: {value} from {query}"
            );
        }
    }
}
