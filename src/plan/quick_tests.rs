//! Quick mode: flags checked, desugared, and read like a plan file.

use super::*;
use crate::proto::conn::Limits;

fn err(input: RunInput) -> String {
    input
        .validate()
        .and_then(Draft::prepare)
        .unwrap_err()
        .to_string()
}

#[test]
fn defaults_are_a_closed_ten_second_run() {
    let spec = RunInput::new("http://127.0.0.1:9/x?y=1")
        .validate()
        .unwrap()
        .prepare()
        .unwrap();
    let scenario = &spec.scenarios[0];
    assert_eq!(scenario.max_vus(), DEFAULT_CONNECTIONS);
    assert!(!scenario.is_open());
    assert_eq!(scenario.duration(), Some(DEFAULT_DURATION));
    assert_eq!(spec.target.addr.port(), 9);
    let StepRequest::Static(r) = &scenario.steps[0].request else {
        panic!("quick mode requests are static");
    };
    let text = String::from_utf8_lossy(r.prepared.http1_bytes().unwrap()).into_owned();
    assert!(text.starts_with("GET /x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"));
}

#[test]
fn bad_inputs_say_what_is_wrong() {
    assert!(err(RunInput::new("not a url")).contains("not a valid URL"));
    assert!(err(RunInput::new("ftp://127.0.0.1/")).contains("scheme `ftp`"));
    let mut i = RunInput::new("http://127.0.0.1/");
    i.requests = Some(0);
    assert!(err(i).contains("at least 1"));
    let mut i = RunInput::new("http://127.0.0.1/");
    i.rate_per_sec = Some(-5.0);
    assert!(err(i).contains("not a positive number"));
    let mut i = RunInput::new("http://127.0.0.1/");
    i.headers = vec!["NoColon".into()];
    assert!(err(i).contains("expected `Name: value`"));
    let mut i = RunInput::new("http://127.0.0.1/");
    i.headers = vec!["X-Key: s3cr3t\r\nInjected: 1".into()];
    i.secret_headers = vec!["x-key".into()];
    let e = err(i);
    assert!(
        e.contains("`X-Key: [redacted]`: the value contains a line break"),
        "{e}"
    );
    let mut i = RunInput::new("http://127.0.0.1/");
    i.duration = Some(Duration::from_secs(1));
    i.requests = Some(5);
    assert!(err(i).contains("not both"));
    let mut i = RunInput::new("http://127.0.0.1/");
    i.method = "GE T".into();
    assert!(err(i).contains("not a valid HTTP method"));
}

#[test]
fn response_limits_are_checked() {
    let mut i = RunInput::new("http://127.0.0.1/");
    i.max_header_bytes = Some(8192);
    i.max_body_bytes = Some(1 << 20);
    let limits = i.validate().unwrap().prepare().unwrap().target.limits;
    assert_eq!(limits.max_head_bytes, 8192);
    assert_eq!(limits.max_body_bytes, Some(1 << 20));
    let limits = RunInput::new("http://127.0.0.1/")
        .validate()
        .unwrap()
        .prepare()
        .unwrap()
        .target
        .limits;
    assert_eq!(limits, Limits::default());
    let mut i = RunInput::new("http://127.0.0.1/");
    i.max_header_bytes = Some(10);
    assert!(err(i).contains("invalid --max-header-size: must be between 1KiB and 16MiB"));
    let mut i = RunInput::new("http://127.0.0.1/");
    i.max_body_bytes = Some(0);
    assert!(err(i).contains("invalid --max-body-size: must be at least 1 byte"));
}

#[test]
fn threads_never_exceed_concurrency() {
    let mut i = RunInput::new("http://127.0.0.1/");
    i.concurrency = Some(1);
    i.threads = Some(8);
    assert_eq!(i.validate().unwrap().prepare().unwrap().threads, 1);
}

/// A plan file's text with `[target]` at `base_url` and these scenario lines.
fn plan_text(base_url: &str, scenario: &str) -> String {
    format!("[target]\nbase_url = \"{base_url}\"\n[[scenario]]\nname = \"default\"\n{scenario}")
}

fn read(text: &str) -> Draft {
    crate::plan::read::read_str(
        text,
        std::path::Path::new("t.toml"),
        &ReadOptions::default(),
    )
    .unwrap()
}

fn wire(plan: &Plan) -> Vec<u8> {
    let StepRequest::Static(r) = &plan.scenarios[0].steps[0].request else {
        panic!("a static request");
    };
    r.prepared
        .http1_bytes()
        .map_or_else(|| r.request.body.to_vec(), <[u8]>::to_vec)
}

#[test]
fn quick_mode_and_the_same_plan_file_load_into_the_same_request_and_profile() {
    let mut i = RunInput::new("http://127.0.0.1:9/x?y=1");
    i.method = "post".into();
    i.headers = vec!["Content-Type: text/plain".into(), "X-A: 1".into()];
    i.body = "hello".into();
    i.concurrency = Some(4);
    i.duration = Some(Duration::from_secs(2));
    let quick = i.validate().unwrap().prepare().unwrap();
    let file = read(&plan_text(
        "http://127.0.0.1:9",
        "[scenario.load]\nprofile = \"constant-vus\"\nvus = 4\nduration = \"2s\"\n\
         [[scenario.step]]\nname = \"request\"\nmethod = \"POST\"\npath = \"/x?y=1\"\nbody = \"hello\"\n\
         headers = { X-A = \"1\", Content-Type = \"text/plain\" }\n",
    ))
    .prepare()
    .unwrap();
    assert_eq!(wire(&quick), wire(&file));
    assert_eq!(
        format!("{:?}", quick.scenarios[0].profile),
        format!("{:?}", file.scenarios[0].profile)
    );
    // Quick mode keeps its own marks: the URL as written, no per-step groups.
    assert_eq!(quick.target.base_url, "http://127.0.0.1:9/x?y=1");
    assert!(quick.groups.is_empty() && quick.source.is_none());
    assert_eq!(quick.quick.as_ref().unwrap().body_bytes, 5);
}

#[test]
fn an_open_quick_run_with_a_request_count_is_an_arrival_rate_with_iterations() {
    let mut i = RunInput::new("http://127.0.0.1:9/");
    i.rate_per_sec = Some(50.0);
    i.requests = Some(30);
    let quick = i.validate().unwrap().prepare().unwrap();
    let file = read(&plan_text(
        "http://127.0.0.1:9",
        "[scenario.load]\nprofile = \"constant-arrival-rate\"\nrate = 50\nmax_vus = 1000\n\
         iterations = 30\n[[scenario.step]]\nname = \"request\"\npath = \"/\"\n",
    ))
    .prepare()
    .unwrap();
    let profile = format!("{:?}", quick.scenarios[0].profile);
    assert_eq!(profile, format!("{:?}", file.scenarios[0].profile));
    assert!(profile.contains("limit: Some(30)"), "{profile}");
}

#[test]
fn flags_are_literal_never_templates_and_headers_keep_their_order_and_repeats() {
    let mut i = RunInput::new("http://127.0.0.1:9/q?a={{x}}");
    i.headers = vec![
        "Cookie: a=1".into(),
        "X-T: {{ vars.nope }}".into(),
        "Cookie: b=2".into(),
    ];
    i.body = "{{ not a template }}".into();
    let plan = i.validate().unwrap().prepare().unwrap();
    let text = String::from_utf8(wire(&plan)).unwrap();
    assert!(text.starts_with("GET /q?a={{x}} HTTP/1.1\r\n"), "{text}");
    let cookie_a = text.find("Cookie: a=1").unwrap();
    let cookie_b = text.find("Cookie: b=2").unwrap();
    assert!(cookie_a < text.find("X-T: {{ vars.nope }}").unwrap());
    assert!(text.find("X-T").unwrap() < cookie_b, "{text}");
    assert!(text.ends_with("\r\n\r\n{{ not a template }}"), "{text}");
}

#[test]
fn a_body_file_that_is_not_text_is_sent_byte_for_byte() {
    let dir = std::env::temp_dir().join(format!("volley-quick-body-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("body.bin");
    let bytes = [0u8, 0xff, 0xfe, b'{', b'{', 0x80];
    std::fs::write(&path, bytes).unwrap();
    let mut i = RunInput::new("http://127.0.0.1:9/upload");
    i.method = "PUT".into();
    i.body_file = Some(path);
    let plan = i.validate().unwrap().prepare().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(wire(&plan).ends_with(&bytes));
    let mut i = RunInput::new("http://127.0.0.1:9/");
    i.body_file = Some("/nonexistent/volley-body".into());
    let e = err(i);
    assert!(
        e.starts_with("invalid --body-file: cannot read /nonexistent/volley-body"),
        "{e}"
    );
}

/// A port on 127.0.0.1 with nothing listening (bound, then closed).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_grpc_url_without_a_call_is_refused_not_sent_as_plain_http() {
    for url in ["grpc://127.0.0.1:1", "GRPCS://user:secret@127.0.0.1:1/x"] {
        let e = RunInput::new(url).validate().unwrap_err().to_string();
        assert!(
            e.starts_with("invalid URL: a grpc")
                && e.contains("give --call package.Service/Method"),
            "{e}"
        );
        assert!(!e.contains("secret"), "{e}");
    }
    assert!(RunInput::new("http://127.0.0.1:1").validate().is_ok());
}

#[test]
fn reflection_waits_for_preparation_and_validation_needs_no_network() {
    let url = format!("grpc://127.0.0.1:{}", closed_port());
    let mut i = RunInput::new(url.clone());
    i.grpc = Some(GrpcInput {
        call: "tasks.v1.Tasks/Get".into(),
        data: r#"{"id": 1}"#.into(),
        ..GrpcInput::default()
    });
    // Validation succeeds without contacting anything; preparing asks the target.
    let draft = i.clone().validate().unwrap();
    assert!(draft.needs_target());
    let e = draft.prepare().unwrap_err().to_string();
    assert!(e.starts_with("invalid --call: "), "{e}");
    assert!(
        e.contains("without --proto, the schema comes from the server"),
        "{e}"
    );
    // A flag error is still found before the network: a malformed call.
    i.grpc.as_mut().unwrap().call = "no-slash".into();
    let e = i.validate().unwrap_err().to_string();
    assert!(e.starts_with("invalid --call: "), "{e}");
    // The same for a plan file: a template error is found in validation, the network only
    // in preparation, located at the step's call.
    let step = "[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n\
                [[scenario.step]]\nname = \"get\"\ngrpc = \"tasks.v1.Tasks/Get\"\n";
    let bad = plan_text(
        &url,
        &format!("{step}json = {{ id = \"{{{{ nope( }}}}\" }}\n"),
    );
    let e = crate::plan::read::read_str(
        &bad,
        std::path::Path::new("t.toml"),
        &ReadOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("t.toml:"), "{e}");
    let draft = read(&plan_text(&url, &format!("{step}json = {{ id = 1 }}\n")));
    assert!(draft.needs_target());
    let e = draft.prepare().unwrap_err().to_string();
    assert!(e.starts_with("t.toml:11:8"), "{e}");
    assert!(e.contains("the plan has no [target] proto"), "{e}");
}

#[test]
fn group_by_flags_become_the_targets_tables_for_the_one_step() {
    let mut i = RunInput::new("http://127.0.0.1:9/");
    i.group_by = vec![
        "header:X-Backend".into(),
        "status".into(),
        "json:$.id".into(),
    ];
    let plan = i.validate().unwrap().prepare().unwrap();
    let tables: Vec<String> = plan
        .target
        .group_by
        .iter()
        .map(|g| g.selector.to_string())
        .collect();
    assert_eq!(tables, ["header:X-Backend", "status", "json:$.id"]);
    assert_eq!(plan.target.group_by[0].pick, Some(0));
    let step = &plan.scenarios[0].steps[0];
    assert_eq!(step.group_by, [0, 1, 2]);
    assert!(step.capture, "json: needs the body");
    let mut i = RunInput::new("http://127.0.0.1:9/");
    i.group_by = vec!["backend".into()];
    let e = err(i);
    assert!(e.contains("--group-by"), "{e}");
    assert!(e.contains("`backend` is not a selector"), "{e}");
}
