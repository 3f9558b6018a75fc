//! `--from-har` details, on the recording committed under `tests/import/` (headless Chromium
//! against `volley serve`, made by `tests/import/record_har.py`) and on small HARs made here:
//! what is left out, secrets never written, values extracted only when unambiguous, think
//! times, and errors that say where.

use super::*;

/// The committed recording.
/// The fixture, read when the tests run (the image's build copies no test files).
fn recording() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/import/volley-serve.har"
    ))
    .unwrap()
}

fn import(har: &str, options: &HarOptions) -> Imported {
    import_text("rec.har", "rec", har, options).unwrap_or_else(|e| panic!("{e}"))
}

/// The recording with one more secret header on every request and a secret query parameter
/// on the GET of a task.
fn with_injected_secrets() -> String {
    let mut har: serde_json::Value = serde_json::from_str(&recording()).unwrap();
    for entry in har["log"]["entries"].as_array_mut().unwrap() {
        let headers = entry["request"]["headers"].as_array_mut().unwrap();
        headers.push(serde_json::json!({"name": "X-Auth-Token", "value": "inj3cted-s3cret"}));
        let url = entry["request"]["url"].as_str().unwrap().to_string();
        if url.ends_with("/tasks/1") && entry["request"]["method"] == "GET" {
            entry["request"]["url"] = format!("{url}?api_key=qu3ry-s3cret&page=2").into();
        }
    }
    har.to_string()
}

/// A HAR of `(method, url, request body, response JSON)` entries, one second apart.
fn har_of(entries: &[(&str, &str, Option<&str>, &str)]) -> String {
    let entries: Vec<serde_json::Value> = entries
        .iter()
        .enumerate()
        .map(|(i, (method, url, body, response))| {
            let mut request = serde_json::json!({"method": method, "url": url, "headers": []});
            if let Some(b) = body {
                request["postData"] =
                    serde_json::json!({"mimeType": "application/json", "text": b});
            }
            serde_json::json!({
                "startedDateTime": format!("2024-05-01T10:00:0{i}.000Z"),
                "time": 50,
                "request": request,
                "response": {"status": 200, "headers": [],
                    "content": {"mimeType": "application/json", "text": response}},
            })
        })
        .collect();
    serde_json::json!({"log": {"version": "1.2", "entries": entries}}).to_string()
}

#[test]
fn secrets_of_the_recording_never_reach_the_plan_or_the_notes() {
    let plan = import(&with_injected_secrets(), &HarOptions::default());
    let everything = format!("{}\n{}", plan.text, plan.notes.join("\n"));
    for secret in [
        "s3cr3t-t0ken-4242",
        "k3y-abc-999",
        "theme=dark",
        "inj3cted-s3cret",
        "qu3ry-s3cret",
    ] {
        assert!(
            !everything.contains(secret),
            "{secret} written:\n{everything}"
        );
    }
    for reference in [
        "Authorization = '{{ env.AUTHORIZATION }}'",
        "X-Api-Key = '{{ env.X_API_KEY }}'",
        "Cookie = '{{ env.COOKIE }}'",
        "api_key={{ env.API_KEY }}&page=2",
    ] {
        assert!(plan.text.contains(reference), "{reference}:\n{}", plan.text);
    }
    // The same value on every step: one variable; a template is not moved to [target]
    // headers, so each step names it.
    assert_eq!(plan.text.matches("{{ env.X_AUTH_TOKEN }}").count(), 8);
    assert!(
        plan.text
            .contains("secret_headers = ['X-Api-Key', 'X-Auth-Token']"),
        "{}",
        plan.text
    );
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("set AUTHORIZATION in the environment")),
        "{:?}",
        plan.notes
    );
}

#[test]
fn secrets_named_alike_get_variables_of_their_own() {
    let mut har: serde_json::Value = serde_json::from_str(&har_of(&[
        ("GET", "http://h/a?api_key=two-val-5678", None, "{}"),
        ("GET", "http://h/b", None, "{}"),
    ]))
    .unwrap();
    for (i, v) in ["one-val-1234", "three-val-9012"].iter().enumerate() {
        har["log"]["entries"][i]["request"]["headers"] =
            serde_json::json!([{"name": "Api-Key", "value": v}]);
    }
    let plan = import(&har.to_string(), &HarOptions::default());
    assert!(
        plan.text.contains("path = '/a?api_key={{ env.API_KEY }}'"),
        "{}",
        plan.text
    );
    assert!(plan.text.contains("Api-Key = '{{ env.API_KEY_2 }}'"));
    assert!(plan.text.contains("Api-Key = '{{ env.API_KEY_3 }}'"));
    for value in ["one-val-1234", "two-val-5678", "three-val-9012"] {
        assert!(!plan.text.contains(value), "{}", plan.text);
    }
}

#[test]
fn static_assets_are_left_out_unless_included() {
    let plan = import(&recording(), &HarOptions::default());
    assert_eq!(
        plan.text.matches("[[scenario.step]]").count(),
        8,
        "{}",
        plan.text
    );
    assert!(!plan.text.contains("/bytes/64") && !plan.text.contains("favicon"));
    assert!(
        plan.notes
            .iter()
            .any(|n| n.starts_with("left out 2 static asset(s)"))
    );
    let all = import(
        &recording(),
        &HarOptions {
            include_static: true,
            ..HarOptions::default()
        },
    );
    assert_eq!(all.text.matches("[[scenario.step]]").count(), 10);
    assert!(all.text.contains("path = '/bytes/64'") && all.text.contains("/favicon.ico"));
}

#[test]
fn the_task_id_a_response_made_is_extracted_and_echoed_headers_are_not() {
    let plan = import(&recording(), &HarOptions::default());
    assert!(
        plan.text.contains("task_id = { json = '/id' }"),
        "{}",
        plan.text
    );
    assert_eq!(
        plan.text.matches("path = '/tasks/{{ task_id }}'").count(),
        3
    );
    // GET /headers echoes what the browser sent: the client's own values, not the server's.
    assert_eq!(
        plan.text.matches("[scenario.step.extract]").count(),
        1,
        "{}",
        plan.text
    );
    let said: Vec<&String> = plan
        .notes
        .iter()
        .filter(|n| n.contains("extracted"))
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("get_tasks: its path sends /id of the response of post_tasks"));
    // Hop-by-hop and compression headers are gone; cookies the jar does not have are secrets.
    for gone in [
        "Host =",
        "Connection =",
        "Content-Length =",
        "Accept-Encoding =",
    ] {
        assert!(!plan.text.contains(gone), "{gone}");
    }
}

#[test]
fn a_value_held_twice_by_its_response_is_ambiguous_and_left_as_recorded() {
    let har = har_of(&[
        (
            "POST",
            "http://h/orders",
            None,
            r#"{"id":"ord-4711x","parent_id":"ord-4711x"}"#,
        ),
        ("GET", "http://h/orders/ord-4711x", None, "{}"),
    ]);
    let plan = import(&har, &HarOptions::default());
    assert!(
        plan.text.contains("path = '/orders/ord-4711x'"),
        "{}",
        plan.text
    );
    assert!(!plan.text.contains("extract"));
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("holds in 2 fields (/id, /parent_id)")),
        "{:?}",
        plan.notes
    );
}

#[test]
fn values_the_client_sent_first_are_its_own_and_numbers_keep_their_type() {
    let har = har_of(&[
        (
            "POST",
            "http://h/carts",
            Some(r#"{"label":"my-cart-label"}"#),
            r#"{"label":"my-cart-label","cartId":90210,"token":"tok-abcdef123"}"#,
        ),
        ("GET", "http://h/carts/my-cart-label", None, "{}"),
        (
            "POST",
            "http://h/checkout",
            Some(r#"{"cart":90210,"ref":"90210","t":"tok-abcdef123"}"#),
            "{}",
        ),
    ]);
    let plan = import(&har, &HarOptions::default());
    assert!(
        plan.text.contains("path = '/carts/my-cart-label'"),
        "{}",
        plan.text
    );
    assert!(
        plan.text.contains("cart_id = { json = '/cartId' }"),
        "{}",
        plan.text
    );
    assert!(plan.text.contains("token = { json = '/token' }"));
    assert!(
        plan.text.contains(
            "json = { cart = '{{ cart_id }}', ref = '{{ cart_id | string }}', t = '{{ token }}' }"
        ),
        "{}",
        plan.text
    );
}

#[test]
fn think_times_come_from_the_gaps_and_times_with_offsets_are_read() {
    let plan = import(&recording(), &HarOptions::default());
    let thinks = plan.text.matches("think = \"").count();
    assert!((3..=7).contains(&thinks), "{}", plan.text);
    // The recording pauses 150 ms after creating the task.
    let after_post = plan.text.split("name = 'post_tasks'").nth(1).unwrap();
    let think: u64 = after_post
        .split("think = \"")
        .nth(1)
        .unwrap()
        .split("ms")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((140..400).contains(&think), "{think}");
    let z = epoch_ms("2024-05-01T10:00:00.250Z").unwrap();
    assert_eq!(epoch_ms("2024-05-01T12:00:00.250+02:00"), Some(z));
    assert_eq!(z, 1_714_557_600_250.0);
    assert_eq!(epoch_ms("yesterday"), None);
}

#[test]
fn base_url_retargets_the_plan_and_its_origin_headers() {
    let plan = import(
        &recording(),
        &HarOptions {
            base_url: Some("http://127.0.0.1:9/".into()),
            ..HarOptions::default()
        },
    );
    assert!(plan.text.contains("base_url = 'http://127.0.0.1:9'"));
    assert!(plan.text.contains("Origin = 'http://127.0.0.1:9'"));
    assert!(
        !plan.text.contains("42307'") && !plan.text.contains("42307/'"),
        "{}",
        plan.text
    );
    let bad = import_text(
        "r.har",
        "r",
        &recording(),
        &HarOptions {
            base_url: Some("ftp://x".into()),
            ..HarOptions::default()
        },
    );
    assert!(
        bad.unwrap_err()
            .to_string()
            .starts_with("--base-url: `ftp://x`")
    );
}

#[test]
fn malformed_files_say_where() {
    let err = |text: &str| {
        import_text("r.har", "r", text, &HarOptions::default())
            .unwrap_err()
            .to_string()
    };
    assert!(err("{").starts_with("r.har: not JSON"), "{}", err("{"));
    assert!(err(r#"{"entries": []}"#).starts_with("r.har: log.entries: not a HAR"));
    let bad_url = har_of(&[
        ("GET", "http://h/", None, "{}"),
        ("GET", "not a url", None, "{}"),
    ]);
    assert!(
        err(&bad_url).starts_with("r.har: log.entries[1].request.url: `not a url` is not a URL"),
        "{}",
        err(&bad_url)
    );
    let no_method = r#"{"log":{"entries":[{"request":{"url":"http://h/"}}]}}"#;
    assert!(err(no_method).contains("log.entries[0]: not a HAR entry: missing field `method`"));
    let only_assets = har_of(&[("GET", "http://h/app.js", None, "{}")]);
    assert!(err(&only_assets).contains("no request left to import (left out 1 static asset"));
}
