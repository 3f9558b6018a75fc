//! Secrets stay secret: Authorization, Cookie and headers marked secret reach the target with
//! their real values, and appear nowhere volley writes — stdout, stderr, `run.json` (its
//! configuration and recorded command line), `summary.txt`, `report.md`, `report.html`, the
//! reports `volley report` renders, `volley check`'s rendered requests. Also: the built-in target
//! listens on loopback unless told otherwise.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

const AUTH: &str = "Bearer vly-auth-5f1c0e";
const COOKIE: &str = "session=vly-cookie-9a7e2b";
const API_KEY: &str = "vly-apikey-33d0aa";
/// A token given as a URL's user information (`http://TOKEN@host/`).
const URL_TOKEN: &str = "vlytoken-77e1d4";
/// Distinctive parts of the values: none may appear anywhere, in any form.
const NEEDLES: [&str; 4] = ["5f1c0e", "9a7e2b", "33d0aa", "77e1d4"];

/// Asserts that no secret appears in `text`, which is `what`.
fn assert_clean(what: &str, text: &str) {
    for needle in NEEDLES {
        assert!(
            !text.contains(needle),
            "{what} holds a secret ({needle}):\n{text}"
        );
    }
}

/// The command line a record holds, as written.
fn recorded_command(record: &Value) -> Vec<&str> {
    record["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect()
}

/// Every file of a results folder, and `volley report` in each format.
fn assert_results_clean(results: &Path) {
    let folder = only_subfolder(results);
    for file in ["run.json", "summary.txt", "report.md", "report.html"] {
        let path = folder.join(file);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_clean(&path.display().to_string(), &text);
    }
    for format in ["txt", "md", "html"] {
        let record = folder.join("run.json");
        let (code, stdout, stderr) =
            run_volley(&["report", record.to_str().unwrap(), "-f", format]);
        assert_eq!(code, Some(0), "{stderr}");
        assert_clean(&format!("volley report -f {format}"), &stdout);
    }
}

#[test]
fn quick_mode_sends_secrets_and_writes_none() {
    let t = target();
    let dir = temp_dir("redact-quick");
    let json = dir.join("run.json");
    let results = dir.join("results");
    let out = volley()
        .arg(format!("{}/headers", t.base_url()))
        .args(["-n", "20", "-c", "2", "--threads", "1"])
        .args(["-H", &format!("Authorization: {AUTH}")])
        .args(["--header", &format!("Cookie: {COOKIE}")])
        .arg(format!("-HX-Api-Key: {API_KEY}"))
        .args(["--secret-header", "x-api-key", "--json"])
        .arg(&json)
        .arg("--out")
        .arg(&results)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_clean("stdout", &stdout);
    assert_clean("stderr", &stderr);

    let text = std::fs::read_to_string(&json).unwrap();
    assert_clean("--json run.json", &text);
    let record: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(status_of(&record, "200"), 20, "{}", record["summary"]);
    assert_eq!(
        record["config"]["headers"],
        serde_json::json!([
            "Authorization: [redacted]",
            "Cookie: [redacted]",
            "X-Api-Key: [redacted]"
        ])
    );
    assert_eq!(
        record["config"]["secret_headers"],
        serde_json::json!(["x-api-key"])
    );
    let command = recorded_command(&record);
    for arg in [
        "Authorization: [redacted]",
        "Cookie: [redacted]",
        "-HX-Api-Key: [redacted]",
    ] {
        assert!(command.contains(&arg), "{arg} not in {command:?}");
    }
    assert_results_clean(&results);
    // The reports show which headers were sent, without their values.
    let md = std::fs::read_to_string(only_subfolder(&results).join("report.md")).unwrap();
    assert!(md.contains("Authorization: [redacted]"), "{md}");
}

#[test]
fn plans_send_secrets_and_write_none() {
    let t = target();
    let dir = temp_dir("redact-plan");
    let plan = dir.join("secret.toml");
    // Step 1 asks the target which headers it received; step 2 stores what it said as a task,
    // which this test then reads from the target itself.
    std::fs::write(
        &plan,
        format!(
            r#"[target]
base_url = "{base}"
headers = {{ Authorization = "{AUTH}" }}
secret_headers = ["X-Api-Key"]

[[scenario]]
name = "s"
[scenario.load]
profile = "iterations"
vus = 1
iterations = 1

[[scenario.step]]
name = "seen"
path = "/headers"
headers = {{ Cookie = "{COOKIE}", X-Api-Key = "{{{{ vars.key }}}}" }}
[scenario.step.extract]
auth = {{ json = "/authorization" }}
cookie = {{ json = "/cookie" }}
key = {{ json = "/x-api-key" }}

[[scenario.step]]
name = "store"
method = "POST"
path = "/tasks"
json = {{ title = "{{{{ auth }}}}|{{{{ cookie }}}}|{{{{ key }}}}" }}
"#,
            base = t.base_url()
        ),
    )
    .unwrap();
    let set_key = format!("key={API_KEY}");

    let out = volley()
        .args(["check", plan.to_str().unwrap(), "--set", &set_key])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_clean("volley check", &stdout);
    assert!(stdout.contains("X-Api-Key: [redacted]"), "{stdout}");
    assert!(stdout.contains("Cookie: [redacted]"), "{stdout}");

    let results = dir.join("results");
    let out = volley()
        .args(["run", plan.to_str().unwrap(), "--set", &set_key, "--out"])
        .arg(&results)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    assert_clean("stdout", &stdout);
    assert_clean("stderr", &stderr);
    assert_results_clean(&results);
    common::verified(&only_subfolder(&results));
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(only_subfolder(&results).join("run.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary_u64(&record, "errors"), 0, "{}", record["summary"]);
    assert!(
        record["command"]
            .as_array()
            .unwrap()
            .contains(&Value::from("key=[redacted]")),
        "{}",
        record["command"]
    );

    // What the target received: the real values, every one.
    let tasks = http_get(&t.base_url(), "/tasks");
    assert!(
        tasks.contains(&format!("{AUTH}|{COOKIE}|{API_KEY}")),
        "{tasks}"
    );
}

/// Every spelling clap accepts is redacted, because redaction reads the command line as clap
/// did: short flags clustered (`-qH VALUE`, as `-kqH` would be with https), a value attached (`-HVALUE`), `--flag=value`, a URL's user
/// information. (`--token`, both spellings, is checked by every test of `tests/coordinate.rs`.)
#[test]
fn every_spelling_of_a_secret_is_redacted() {
    let t = target();
    let dir = temp_dir("redact-spellings");
    let json = dir.join("run.json");
    let results = dir.join("results");
    let url = format!("{}/headers", t.base_url()).replacen("://", &format!("://{URL_TOKEN}@"), 1);
    let out = volley()
        .arg(&url)
        .args(["-n", "20", "-c", "2", "--threads", "1"])
        .args(["-qH", &format!("Authorization: {AUTH}")])
        .arg(format!("-HCookie: {COOKIE}"))
        .arg(format!("--header=X-Api-Key: {API_KEY}"))
        .args(["--secret-header=x-api-key", "--json"])
        .arg(&json)
        .arg("--out")
        .arg(&results)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_clean("stdout", &String::from_utf8_lossy(&out.stdout));
    assert_clean("stderr", &stderr);
    let text = std::fs::read_to_string(&json).unwrap();
    assert_clean("--json run.json", &text);
    common::verified(&json);
    let record: Value = serde_json::from_str(&text).unwrap();
    let command = recorded_command(&record);
    for arg in [
        "-qH",
        "Authorization: [redacted]",
        "-HCookie: [redacted]",
        "--header=X-Api-Key: [redacted]",
    ] {
        assert!(command.contains(&arg), "{arg} not in {command:?}");
    }
    assert!(
        command
            .iter()
            .any(|a| a.starts_with("http://[redacted]@127.0.0.1:")),
        "{command:?}"
    );
    assert_results_clean(&results);
}

/// A URL's user information is sent as `Authorization: Basic`, a user alone (a token) too, as
/// curl sends it; what the target received is read back through a group (the echo of
/// `/headers`), which is why this test's record holds it.
#[test]
fn a_urls_user_information_is_sent() {
    use base64::Engine as _;
    let t = target();
    let dir = temp_dir("redact-userinfo-sent");
    for (userinfo, pair) in [("tok", "tok:"), ("u:p%40ss", "u:p@ss")] {
        let url =
            format!("{}/headers", t.base_url()).replacen("://", &format!("://{userinfo}@"), 1);
        let (_, record) = run_json(
            &dir,
            &[
                &url,
                "-n",
                "2",
                "-c",
                "1",
                "--group-by",
                "json:$.authorization",
            ],
        );
        let expected = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        );
        let groups = record["grouped"][0]["values"].to_string();
        assert!(groups.contains(&expected), "{expected} not in {groups}");
    }
}

/// Grouping by a secret header would write its values into the record: refused, with why.
#[test]
fn grouping_by_a_secret_header_is_refused() {
    let t = target();
    for header in ["Set-Cookie", "authorization", "X-Api-Key"] {
        let (code, _, stderr) = run_volley(&[
            &t.base_url(),
            "-n",
            "1",
            "--secret-header",
            "x-api-key",
            "--group-by",
            &format!("header:{header}"),
        ]);
        assert_eq!(code, Some(2), "{header}: {stderr}");
        assert!(stderr.contains("groups by a secret header"), "{stderr}");
    }
}

#[test]
fn the_built_in_target_listens_on_loopback_unless_told_otherwise() {
    let (mut child, line) = serve_process();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        line.starts_with("volley serve: listening on http://127.0.0.1:"),
        "{line}"
    );
}
