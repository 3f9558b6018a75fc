//! `schema/run.schema.json` is the committed contract for scripts reading `run.json`. It is
//! generated from the record types; this test fails when they drift apart (rerun with
//! `UPDATE_SCHEMA=1` to regenerate), and validates real records against it.

mod common;

use common::*;

const SCHEMA_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/run.schema.json");

fn generated() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(volley::record::RunRecord)).unwrap()
}

#[test]
fn committed_schema_matches_the_record_types() {
    let generated = generated();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
        std::fs::write(SCHEMA_PATH, text).unwrap();
    }
    let committed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(SCHEMA_PATH).unwrap()).unwrap();
    assert_eq!(
        committed, generated,
        "schema/run.schema.json is stale: run `UPDATE_SCHEMA=1 cargo test --test record_schema`"
    );
}

#[test]
fn real_records_validate_against_the_schema() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(SCHEMA_PATH).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let t = target();
    let dir = temp_dir("schema");
    let ok = format!("{}/", t.base_url());
    let failing = format!("http://127.0.0.1:{}/", closed_port());
    let proto = concat!(env!("CARGO_MANIFEST_DIR"), "/proto/volley_target.proto");
    let grpc = [
        &ok,
        "--proto",
        proto,
        "--call",
        "volley.target.v1.Echo/Echo",
        "-n",
        "50",
        "--streams",
        "4",
    ];
    let runs: [&[&str]; 4] = [
        &[&ok, "-n", "200", "-c", "4"],
        &[&ok, "--rate", "500", "-d", "1s"],
        &[&failing, "-n", "10", "-c", "1"],
        &grpc,
    ];
    for args in runs {
        let (_, record) = run_json(&dir, args);
        let errors: Vec<String> = validator
            .iter_errors(&record)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{args:?}: {errors:#?}");
        // The keys scripts rely on.
        let s = &record["summary"];
        for key in [
            "requests",
            "errors",
            "duration_s",
            "rps",
            "latency_ms",
            "status",
            "errors_by_kind",
        ] {
            assert!(!s[key].is_null(), "summary.{key} missing");
        }
        for key in [
            "min", "mean", "p50", "p75", "p90", "p95", "p99", "p99_9", "max",
        ] {
            assert!(
                s["latency_ms"].get(key).is_some(),
                "latency_ms.{key} missing"
            );
        }
        assert_eq!(record["schema_version"], 2);
        // Histograms decode and agree with the summary.
        let h =
            volley::record::decode_histogram(record["histograms"]["latency_us"].as_str().unwrap())
                .unwrap();
        assert_eq!(
            h.len(),
            s["status"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum::<u64>()
        );
    }
    // And the reader accepts what the writer wrote.
    volley::record::read_record(&dir.join("run.json")).unwrap();
}

#[test]
fn reader_rejects_other_versions_clearly() {
    let dir = temp_dir("schema-version");
    let path = dir.join("old.json");
    std::fs::write(&path, r#"{"schema_version": 99}"#).unwrap();
    let err = volley::record::read_record(&path).unwrap_err().to_string();
    assert!(
        err.contains("version 99") && err.contains("reads version 2"),
        "{err}"
    );
    // Version 1 records (before the drain left the rates and attempts that never left the
    // machine left the request counts) are refused with what to do, not misread.
    std::fs::write(
        &path,
        r#"{"schema_version": 1, "tool": {"name": "volley", "version": "0.1.0"}}"#,
    )
    .unwrap();
    let err = volley::record::read_record(&path).unwrap_err().to_string();
    assert!(
        err.contains("version 1 (written by volley 0.1.0)")
            && err.contains("render it with the volley version that wrote it"),
        "{err}"
    );
    std::fs::write(&path, r#"{"hello": 1}"#).unwrap();
    let err = volley::record::read_record(&path).unwrap_err().to_string();
    assert!(err.contains("not a volley run record"), "{err}");
}
