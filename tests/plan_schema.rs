//! `schema/plan.schema.json` lets editors complete and check plans. It is generated from the
//! plan-file types; this test fails when they drift apart (rerun with `UPDATE_SCHEMA=1`), and
//! validates every example plan against it.

const SCHEMA_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/plan.schema.json");

#[test]
fn committed_plan_schema_matches_the_plan_types() {
    let generated =
        serde_json::to_value(schemars::schema_for!(volley::plan::file::PlanFile)).unwrap();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
        std::fs::write(SCHEMA_PATH, text).unwrap();
    }
    let committed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(SCHEMA_PATH).unwrap()).unwrap();
    assert_eq!(
        committed, generated,
        "schema/plan.schema.json is stale: run `UPDATE_SCHEMA=1 cargo test --test plan_schema`"
    );
}

#[test]
fn example_plans_validate_against_the_schema() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(SCHEMA_PATH).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let plan: toml::Value = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if plan.get("target").is_some_and(toml::Value::is_array) {
            // A suite (`[[target]]`, examples/suite.toml), not a plan: it must load as one.
            volley::suite::read(&path, &Default::default()).unwrap();
            continue;
        }
        let json = serde_json::to_value(&plan).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&json)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
        seen += 1;
    }
    assert!(seen >= 5);
    // And the schema does catch a misspelt key.
    let bad =
        serde_json::json!({"target": {"base_url": "http://x"}, "scenario": [], "treshold": {}});
    assert!(!validator.is_valid(&bad));
}
