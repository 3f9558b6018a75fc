use super::*;

/// A suite "file" in examples/, so `plan = "suite-plan.toml"` names a real plan.
fn read_text(text: &str) -> Result<Suite, Error> {
    read_str(
        text,
        Path::new("examples/test-suite.toml"),
        &SuiteReadOptions::default(),
    )
}

const GOOD: &str = r#"
plan = "suite-plan.toml"
repeats = 2
[smoke]
max_error_rate = 0.05
[[target]]
name = "a"
base_url = "http://127.0.0.1:18081/api"
command = ["volley", "serve", "--port", "18081"]
env = { X = "1" }
health_url = "http://127.0.0.1:18081/"
health_timeout = "3s"
reset = ["sh", "-c", "true"]
stop_grace = "1s"
[[target]]
name = "b_2"
base_url = "http://127.0.0.1:18082"
"#;

#[test]
fn a_valid_suite_with_defaults() {
    let s = read_text(GOOD).unwrap();
    assert_eq!(s.name, "test-suite");
    assert_eq!(s.repeats, 2);
    assert_eq!(s.order, Order::Interleaved, "repeats take turns by default");
    let sequential =
        read_text(&GOOD.replace("repeats = 2", "repeats = 2\norder = \"sequential\"")).unwrap();
    assert_eq!(sequential.order, Order::Sequential);
    let smoke = s.smoke.as_ref().unwrap();
    assert_eq!((smoke.time_scale, smoke.max_error_rate), (None, 0.05));
    let [a, b] = &s.targets[..] else { panic!() };
    assert_eq!(a.plan.target.base_url, "http://127.0.0.1:18081/api");
    assert_eq!(a.plan.target.base_path, "/api");
    assert_eq!(a.plan.name, "a");
    assert_eq!(a.smoke_plan.as_ref().unwrap().name, "a-smoke");
    assert_eq!(a.health.path, "/");
    assert_eq!(a.health.timeout, Duration::from_secs(3));
    assert_eq!(a.stop_grace, Duration::from_secs(1));
    assert_eq!(a.reset.as_ref().unwrap().env["X"], "1");
    let here = std::env::current_dir().unwrap();
    assert_eq!(a.command.as_ref().unwrap().cwd, here.join("examples"));
    assert!(b.command.is_none() && b.reset.is_none());
    assert_eq!(b.health.url, "http://127.0.0.1:18082");
    assert_eq!(b.health.timeout, HEALTH_TIMEOUT);
    assert_eq!(b.stop_grace, STOP_GRACE);
    // The smoke plan is the suite's, ten times shorter; --time-scale shortens both.
    let full = a.plan.scenarios[0].duration().unwrap();
    let smoke_len = a.smoke_plan.as_ref().unwrap().scenarios[0]
        .duration()
        .unwrap();
    assert!((smoke_len.as_secs_f64() - full.as_secs_f64() * 0.1).abs() < 1e-6);
    let short = read_str(
        GOOD,
        Path::new("examples/test-suite.toml"),
        &SuiteReadOptions {
            time_scale: 0.5,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        short.targets[0].plan.scenarios[0].duration(),
        Some(full / 2)
    );
    let short_smoke = short.targets[0].smoke_plan.as_ref().unwrap().scenarios[0]
        .duration()
        .unwrap();
    assert!((short_smoke.as_secs_f64() - full.as_secs_f64() * 0.05).abs() < 1e-6);
}

#[test]
fn find_max_settings_take_the_cli_defaults_and_the_time_scale() {
    let text = "plan = \"suite-plan.toml\"\n[find_max]\nslo = \"p99<50ms,errors<1%\"\n\
                model = \"closed\"\nstep = \"2s\"\nstart = 4.0\nresolution = \"0.5%\"\n\
                validation_steps = 1\n[[target]]\nname = \"a\"\n\
                base_url = \"http://127.0.0.1:1\"\n";
    let s = read_str(
        text,
        Path::new("examples/x.toml"),
        &SuiteReadOptions {
            time_scale: 0.5,
            ..Default::default()
        },
    )
    .unwrap();
    let f = s.find_max.unwrap();
    assert_eq!(f.model, crate::record::model::LoadModel::Closed);
    assert_eq!(f.slo.len(), 2);
    assert_eq!(f.slo_text, "p99<50ms,errors<1%");
    assert_eq!(f.budget, Duration::from_secs(90));
    assert_eq!(f.step, Duration::from_secs(1));
    assert_eq!(f.warmup, Duration::from_millis(500));
    assert_eq!((f.start, f.max, f.max_in_flight), (Some(4.0), None, 1000));
    assert_eq!((f.resolution, f.validation_steps), (0.005, 1));
}

#[test]
fn a_suite_file_in_the_current_directory_runs_its_commands_there() {
    let text = "plan = \"examples/suite-plan.toml\"\n[[target]]\nname = \"a\"\n\
                base_url = \"http://127.0.0.1:1\"\ncommand = [\"true\"]\n";
    let s = read_str(text, Path::new("suite.toml"), &SuiteReadOptions::default()).unwrap();
    assert_eq!(
        s.targets[0].command.as_ref().unwrap().cwd,
        std::env::current_dir().unwrap()
    );
}

/// A target and a plan line that are right, for the cases to break one thing beside them.
const TARGET: &str = "[[target]]\nname = \"a\"\nbase_url = \"http://127.0.0.1:1\"\n";
const PLAN: &str = "plan = \"suite-plan.toml\"\n";

/// Each case's suite text fails with an input error located at `at` (in the suite file) that
/// says `why`.
fn assert_located(cases: Vec<(String, &str, &str)>) {
    for (text, at, why) in cases {
        let err = read_text(&text).expect_err(&text);
        assert!(err.is_input(), "{err}");
        let msg = err.to_string();
        assert!(
            msg.starts_with("examples/test-suite.toml") && msg.contains(at) && msg.contains(why),
            "expected `{at}` and `{why}` in:\n{msg}\nfor:\n{text}"
        );
    }
}

/// Mistakes in the suite's own keys.
#[test]
fn the_suite_s_own_mistakes_are_located() {
    assert_located(vec![
        (
            format!("{PLAN}tagret = 1\n{TARGET}"),
            ":2:1",
            "unknown field `tagret`",
        ),
        (
            TARGET.to_string(),
            "examples/test-suite.toml:1:1: ",
            "the suite has no test for target `a`",
        ),
        (
            format!("plan = \"nope.toml\"\n{TARGET}"),
            ":1:8",
            "not found",
        ),
        (
            format!("{PLAN}repeats = 0\n{TARGET}"),
            ":2:11",
            "repeats = 0 is out of range",
        ),
        (
            format!("{PLAN}order = \"random\"\n{TARGET}"),
            ":2:9",
            "order = \"random\" is not an order",
        ),
        (
            format!("name = \" \"\n{PLAN}{TARGET}"),
            ":1:8",
            "the name is empty",
        ),
    ]);
}

/// Mistakes in `[find_max]`.
#[test]
fn find_max_mistakes_are_located() {
    assert_located(vec![
        (
            format!("{PLAN}[find_max]\nslo = \"p99 fast\"\n{TARGET}"),
            ":3:7",
            "`p99 fast`",
        ),
        (
            format!("{PLAN}[find_max]\nslo = \"p99<5ms\"\nmodel = \"half-open\"\n{TARGET}"),
            ":4:9",
            "unknown model `half-open`",
        ),
        (
            format!("{PLAN}repeats = 3\n[find_max]\nslo = \"p99<5ms\"\n{TARGET}"),
            ":2:11",
            "with [find_max] each target gets one search",
        ),
        (
            format!("plan = \"002-ladder.toml\"\n[find_max]\nslo = \"p99<5ms\"\n{TARGET}"),
            ":1:8",
            "find-max needs a plan with one scenario; this one has 2",
        ),
        (
            format!("{PLAN}[find_max]\nslo = \"p99<5ms\"\nbudgte = \"1m\"\n{TARGET}"),
            ":4:1",
            "unknown field `budgte`",
        ),
        (
            format!("{PLAN}[find_max]\nslo = \"p99<5ms\"\nresolution = \"1\"\n{TARGET}"),
            ":4:14",
            "`1` has no `%`",
        ),
        (
            format!("{PLAN}[find_max]\nslo = \"p99<5ms\"\nresolution = \"20%\"\n{TARGET}"),
            ":4:14",
            "up to 10%",
        ),
        (
            format!("{PLAN}[find_max]\nslo = \"p99<5ms\"\nvalidation_steps = 11\n{TARGET}"),
            ":4:20",
            "a validation of 11 steps is more than 10",
        ),
    ]);
}

/// Mistakes in a `[[target]]`.
#[test]
fn target_mistakes_are_located() {
    assert_located(vec![
        // A command line as one string would need a shell to split it: refused.
        (
            format!("{PLAN}{TARGET}command = \"volley serve --port 1; rm -rf x\"\n"),
            ":5:11",
            "invalid type: string",
        ),
        (
            PLAN.to_string(),
            "examples/test-suite.toml: ",
            "the suite has no [[target]]",
        ),
        (
            format!("{PLAN}{TARGET}{TARGET}"),
            ":6:8",
            "target `a` is defined twice",
        ),
        (
            format!("{PLAN}[[target]]\nname = \"a b\"\nbase_url = \"http://x\"\n"),
            ":3:8",
            "`a b` cannot name a target",
        ),
        (
            format!("{PLAN}[[target]]\nname = \"a\"\nbase_url = \"ftp://x\"\n"),
            ":4:12",
            "is not http",
        ),
        (
            format!("{PLAN}{TARGET}command = []\n"),
            ":5:11",
            "command is empty",
        ),
        (
            format!("{PLAN}{TARGET}reset = [\"\"]\n"),
            ":5:9",
            "reset is empty",
        ),
        (
            format!("{PLAN}{TARGET}health_timeout = \"soon\"\n"),
            ":5:18",
            "not a duration",
        ),
        (
            format!("{PLAN}{TARGET}health_url = \"ftp://x/\"\n"),
            ":5:14",
            "only http:// and https://",
        ),
        (
            format!("{PLAN}{TARGET}cwd = \".\"\n"),
            ":2:1",
            "has cwd or env but no command or reset",
        ),
        (
            format!("{PLAN}{TARGET}command = [\"true\"]\ncwd = \"no-such-dir\"\n"),
            ":6:7",
            "does not exist",
        ),
    ]);
}

/// Mistakes in `[smoke]`.
#[test]
fn smoke_mistakes_are_located() {
    assert_located(vec![
        (
            format!("{PLAN}[smoke]\nmax_error_rate = \"150%\"\n{TARGET}"),
            ":3:18",
            "max_error_rate must be",
        ),
        (
            format!("{PLAN}[smoke]\ntime_scale = 0.0\n{TARGET}"),
            ":3:14",
            "positive factor",
        ),
        (
            format!("{PLAN}[smoke]\nplan = \"gone.toml\"\n{TARGET}"),
            ":3:8",
            "smoke plan",
        ),
    ]);
}

#[test]
fn an_invalid_plan_is_reported_in_the_plan_file() {
    let dir = std::env::temp_dir().join(format!("volley-suite-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("plan.toml"), "[target]\nbase_url = \"http://x\"\n").unwrap();
    let text =
        "plan = \"plan.toml\"\n[[target]]\nname = \"a\"\nbase_url = \"http://127.0.0.1:1\"\n";
    let err = read_str(text, &dir.join("s.toml"), &SuiteReadOptions::default()).unwrap_err();
    assert!(err.is_input());
    assert!(err.to_string().contains("plan.toml"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn error_rates() {
    assert_eq!(error_rate(&toml::Value::String("1%".into())), Some(0.01));
    assert_eq!(error_rate(&toml::Value::String(" 5 % ".into())), Some(0.05));
    assert_eq!(error_rate(&toml::Value::Float(0.02)), Some(0.02));
    assert_eq!(error_rate(&toml::Value::Integer(0)), Some(0.0));
    assert_eq!(error_rate(&toml::Value::String("1".into())), None);
    assert_eq!(error_rate(&toml::Value::String("120%".into())), None);
    assert_eq!(error_rate(&toml::Value::Float(-0.1)), None);
}

/// Targets `a` and `b` of a suite without a plan of its own, with the plans given.
fn two_plans(a: &str, b: &str) -> String {
    format!(
        "[[target]]\nname = \"a\"\nbase_url = \"http://127.0.0.1:18081\"\nplan = \"{a}\"\n\
         vars = {{ title = \"from-a\" }}\n\
         [[target]]\nname = \"b\"\nbase_url = \"http://127.0.0.1:18082\"\nplan = \"{b}\"\n"
    )
}

/// The body of the target's first request, rendered for VU 1.
fn first_body(t: &SuiteTarget) -> String {
    let sc = &t.plan.scenarios[0];
    let crate::plan::StepRequest::Dynamic(req) = &sc.steps[0].request else {
        panic!("the step is templated")
    };
    let ctx = t
        .plan
        .templates
        .context(0, 0, &sc.name, &Default::default());
    crate::plan::render::render_owned(&t.plan.templates, req, &ctx)
        .unwrap()
        .body
}

#[test]
fn targets_run_plans_of_their_own_with_their_vars() {
    let s = read_text(&two_plans("002-rest-plan.toml", "002-grpc-plan.toml")).unwrap();
    assert!(s.plan_path.is_none());
    assert!(s.notes.is_empty(), "{:?}", s.notes);
    let [a, b] = &s.targets[..] else { panic!() };
    assert!(a.plan_path.ends_with("002-rest-plan.toml"));
    assert!(b.plan_path.ends_with("002-grpc-plan.toml"));
    assert!(b.plan.scenarios[0].steps[0].grpc.is_some());
    assert!(first_body(a).contains("from-a task 1"), "{}", first_body(a));
    assert!(first_body(b).contains("task 1"), "{}", first_body(b));
    // --set wins over a target's vars, for every target.
    let set = read_str(
        &two_plans("002-rest-plan.toml", "002-grpc-plan.toml"),
        Path::new("examples/test-suite.toml"),
        &SuiteReadOptions {
            sets: vec![(
                crate::plan::set_key::SetKey::Var("title".into()),
                "cli".into(),
            )],
            only: vec!["b".into()],
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(set.targets.len(), 1, "--only b");
    assert!(first_body(&set.targets[0]).contains("cli task 1"));
}

#[test]
fn different_loads_are_refused_unless_allowed() {
    let text = two_plans("002-rest-plan.toml", "suite-plan.toml");
    let e = read_text(&text).unwrap_err().to_string();
    assert!(
        e.contains("examples/test-suite.toml:9:"),
        "the second plan: {e}"
    );
    assert!(
        e.contains(
            "do not get the same load: scenario 1 (`crud` vs `ramp`): 16 VUs for 30.0s vs up to \
             32 VUs over 17.0s (3 stages)"
        ),
        "{e}"
    );
    let s = read_text(&format!("allow_different_load = true\n{text}")).unwrap();
    assert_eq!(s.notes.len(), 4, "{:?}", s.notes);
    assert!(s.notes[0].ends_with("(allow_different_load = true)"));
    assert!(
        s.notes[1].starts_with("operation `create_task` is measured on a but not on b"),
        "{:?}",
        s.notes
    );
    assert!(s.notes[3].starts_with("operation `root` is measured on b but not on a"));
}

#[test]
fn only_names_targets_and_every_target_needs_a_plan() {
    let e = read_str(
        GOOD,
        Path::new("examples/test-suite.toml"),
        &SuiteReadOptions {
            only: vec!["c".into()],
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("`c` is not a target of examples/test-suite.toml"),
        "{e}"
    );
    assert!(e.contains("its targets are a, b_2"), "{e}");
    let e = read_text(&GOOD.replace("plan = \"suite-plan.toml\"\n", ""))
        .unwrap_err()
        .to_string();
    assert!(e.contains("the suite has no test for target `a`"), "{e}");
}

#[test]
fn the_suites_tags_tag_every_targets_runs() {
    let text = format!("{GOOD}\n[tags]\ntestid = \"suite-1\"\n");
    let s = read_text(&text).unwrap();
    for t in &s.targets {
        assert_eq!(t.plan.tags["testid"], "suite-1");
        assert_eq!(t.smoke_plan.as_ref().unwrap().tags["testid"], "suite-1");
    }
    let bad = read_text(&format!("{GOOD}\n[tags]\nrun_id = \"x\"\n")).unwrap_err();
    assert!(bad.to_string().contains("volley's own"), "{bad}");
}

#[test]
fn a_searched_plans_precision_is_judged_by_the_steps_not_its_own_load() {
    // A ramp of 2 s asking for precision: a run of it would be refused, but a search replaces
    // its load with steps of constant load, --step long.
    let dir = std::env::temp_dir().join(format!("volley-suite-precision-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("ramp.toml");
    std::fs::write(
        &plan,
        "[target]\nbase_url = \"http://127.0.0.1:1\"\n[precision]\np50 = \"3%\"\n\
         [[scenario]]\nname = \"up\"\n[scenario.load]\nprofile = \"ramping-vus\"\n\
         stages = [{ duration = \"2s\", target = 4 }]\n\
         [[scenario.step]]\nname = \"get\"\npath = \"/\"\n",
    )
    .unwrap();
    let suite = |step: &str| {
        let text = format!(
            "plan = {:?}\n[find_max]\nslo = \"p99<5ms\"\nstep = \"{step}\"\n{TARGET}",
            plan.display().to_string()
        );
        read_text(&text)
    };
    assert!(suite("6s").is_ok(), "{:?}", suite("6s").err());
    let why = suite("3s").unwrap_err().to_string();
    assert!(why.contains("each step measures for 3s"), "{why}");
    std::fs::remove_dir_all(&dir).unwrap();
}
