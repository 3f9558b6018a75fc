//! `volley new --from-har` and `--from-openapi` on real files: a HAR that headless Chromium
//! recorded against `volley serve` (`tests/import/record_har.py`) and the published Swagger
//! Petstore 3.0 document. Each imported plan passes `volley check` and runs against a fresh
//! built-in target on 127.0.0.1 port 0; every record passes `volley verify`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use serde_json::Value;

/// The secrets the HAR plan reads from the environment, with values made up here.
const SECRETS: &[(&str, &str)] = &[
    ("AUTHORIZATION", "Bearer env-s3cret-4242"),
    ("X_API_KEY", "env-k3y-999"),
    ("COOKIE", "theme=dark"),
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/import")
        .join(name)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs volley with `args`; the secrets' variables set only when `secrets`.
fn volley_with(args: &[&str], secrets: bool) -> Output {
    let mut c = volley();
    for (name, value) in SECRETS {
        if secrets {
            c.env(name, value);
        } else {
            c.env_remove(name);
        }
    }
    c.args(args).output().unwrap()
}

/// Runs the plan ten-to-twenty times shorter with `--json`; returns the exit code and the
/// verified record.
fn run_plan(plan: &str, dir: &Path, secrets: bool) -> (Option<i32>, Value) {
    let json = dir.join("run.json");
    let out = volley_with(
        &[
            "run",
            plan,
            "--time-scale",
            "0.05",
            "--json",
            json.to_str().unwrap(),
            "-q",
        ],
        secrets,
    );
    assert!(json.is_file(), "no record: {}", text(&out.stderr));
    verified(&json);
    let record = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (out.status.code(), record)
}

/// (step, passed, failed) of every check of a record.
fn checks(record: &Value) -> Vec<(String, u64, u64)> {
    record["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["step"].as_str().unwrap().to_string(),
                c["passed"].as_u64().unwrap(),
                c["failed"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_har_recorded_by_chromium_becomes_a_plan_that_replays_the_session() {
    let target = target();
    let dir = temp_dir("from-har");
    let plan = dir.join("plan.toml");
    let plan_s = plan.to_str().unwrap();
    let har = fixture("volley-serve.har");
    let base = target.base_url();
    let args = [
        "new",
        "--from-har",
        har.to_str().unwrap(),
        "--base-url",
        &base,
        "-o",
        plan_s,
    ];
    let out = volley_with(&args, false);
    let notes = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{notes}");
    assert!(notes.contains("left out 2 static asset(s)"), "{notes}");
    assert!(
        notes.contains("get_tasks: its path sends /id of the response of post_tasks: extracted there as `task_id`"),
        "{notes}"
    );
    assert!(
        notes.contains("set AUTHORIZATION in the environment"),
        "{notes}"
    );
    assert!(notes.contains("wrote ") && notes.contains("8 step(s) from 10 request(s)"));
    let written = std::fs::read_to_string(&plan).unwrap();
    let recorded = std::fs::read_to_string(&har).unwrap();
    for secret in ["s3cr3t-t0ken-4242", "k3y-abc-999", "theme=dark"] {
        assert!(recorded.contains(secret), "the fixture holds {secret}");
        assert!(
            !written.contains(secret) && !notes.contains(secret),
            "{secret} leaked"
        );
    }
    assert!(
        written.contains("path = '/tasks/{{ task_id }}'"),
        "{written}"
    );

    // Without the secrets in the environment the plan is refused, naming the variable.
    let refused = volley_with(&["check", plan_s], false);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("AUTHORIZATION is not set"),
        "{}",
        text(&refused.stderr)
    );
    let check = volley_with(&["check", plan_s], true);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
    assert!(
        text(&check.stdout).contains("DELETE /tasks/"),
        "{}",
        text(&check.stdout)
    );

    // Every VU creates its own task and reads, updates and deletes that one: with the id left
    // as recorded (/tasks/1) all but the first iteration's reads and deletes would fail.
    let (code, record) = run_plan(plan_s, &dir, true);
    assert_eq!(code, Some(0), "{}", record["thresholds"]);
    let checks = checks(&record);
    let steps: Vec<&str> = checks.iter().map(|(s, _, _)| s.as_str()).collect();
    assert_eq!(
        steps,
        [
            "get_home",
            "post_tasks",
            "get_tasks",
            "put_tasks",
            "get_headers",
            "post_echo",
            "get_delay",
            "delete_tasks"
        ]
    );
    let iterations = checks[0].1;
    assert!(iterations >= 10, "{checks:?}");
    for (step, passed, failed) in &checks {
        assert_eq!(*failed, 0, "{step}: {checks:?}");
        assert!(*passed + 1 >= iterations, "{step}: {checks:?}");
    }
    let kept = std::fs::read_to_string(dir.join("run.json")).unwrap();
    for (_, value) in SECRETS {
        assert!(!kept.contains(value), "{value} is in the record");
    }
    target.stop();
}

#[test]
fn the_petstore_openapi_document_becomes_a_plan_that_runs() {
    let target = target();
    let dir = temp_dir("from-openapi");
    let plan = dir.join("plan.toml");
    let plan_s = plan.to_str().unwrap();
    let spec = fixture("petstore-openapi.yaml");
    let base = target.base_url();
    let new = |extra: &[&str]| {
        let mut args = vec![
            "new",
            "--from-openapi",
            spec.to_str().unwrap(),
            "--base-url",
            &base,
            "-o",
            plan_s,
            "--force",
        ];
        args.extend_from_slice(extra);
        volley_with(&args, false)
    };
    let out = new(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("19 step(s), one per operation"));
    let check = volley_with(&["check", plan_s], false);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
    let shown = text(&check.stdout);
    assert!(
        shown.contains("POST /pet HTTP/1.1") && shown.contains(r#""name":"doggie""#),
        "{shown}"
    );

    // volley serve has no /pet: every check fails and so does the error threshold (exit 99),
    // but the run completes and its record holds a check per operation.
    let (code, record) = run_plan(plan_s, &dir, false);
    assert_eq!(code, Some(99));
    let checks = checks(&record);
    assert_eq!(checks.len(), 19, "{checks:?}");
    assert_eq!(checks[0].0, "update_pet");
    assert!(
        checks
            .iter()
            .all(|(_, passed, failed)| *passed == 0 && *failed > 0)
    );
    assert!(
        record["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["check"] == "status in [200]")
    );

    // --operations: these, in this order.
    let out = new(&["--operations", "placeOrder,getPetById"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&plan).unwrap();
    assert_eq!(written.matches("[[scenario.step]]").count(), 2);
    assert!(written.find("place_order").unwrap() < written.find("get_pet_by_id").unwrap());
    let unknown = new(&["--operations", "fly"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("no operation with operationId fly"));
    target.stop();
}
