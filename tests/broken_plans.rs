//! Broken plans are refused before any load is sent, each with a clear message and its
//! file:line:col. `volley check` exits 2 for every one of them.

mod common;

use common::*;

const GOOD_HEAD: &str = r#"[target]
base_url = "http://127.0.0.1:9"
"#;

/// (name, plan text, expected location "line:col" or "" for file-level, expected message part)
fn cases() -> Vec<(&'static str, String, &'static str, &'static str)> {
    let step = "[[scenario.step]]\nname = \"s\"\npath = \"/\"\n";
    let scenario = |load: &str| {
        format!("{GOOD_HEAD}[[scenario]]\nname = \"a\"\n[scenario.load]\n{load}\n{step}")
    };
    let limited = |line: &str| {
        format!(
            "{GOOD_HEAD}{line}\n[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n{step}"
        )
    };
    // A `[target.tls]` key of an https:// target, with the step above.
    let tls_option = |line: &str| {
        format!(
            "[target]\nbase_url = \"https://127.0.0.1:9\"\n[target.tls]\n{line}\n[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n{step}"
        )
    };
    vec![
        ("header limit too small", limited("max_header_size = \"100\""), "3:19", "max_header_size must be between 1KiB and 16MiB"),
        ("bad body size", limited("max_body_size = \"lots\""), "3:17", "is not a size like"),
        ("zero body size", limited("max_body_size = 0"), "3:17", "max_body_size must be at least 1 byte"),
        ("unknown key", format!("{GOOD_HEAD}[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n[[scenario.step]]\nname = \"s\"\npath = \"/\"\nmetod = \"GET\"\n"), "12:1", "unknown field `metod`"),
        ("wrong type", scenario("profile = \"constant-vus\"\nvus = \"ten\"\nduration = \"1s\""), "7:7", "`vus`: invalid type: string \"ten\", expected a whole number, 0 or more"),
        ("misspelt key", scenario("profile = \"constant-vus\"\nvsu = 2\nduration = \"1s\""), "7:1", "unknown field `vsu`, expected one of `profile`, `vus`"),
        ("misspelt key's hint", scenario("profile = \"constant-vus\"\nvsu = 2\nduration = \"1s\""), "7:1", "hint: did you mean `vus`?"),
        ("key outside its table", format!("vus = 2\n{}", scenario("profile = \"constant-vus\"\nvus = 2\nduration = \"1s\"")), "1:1", "hint: `vus` belongs in [scenario.load]"),
        ("duplicate key", scenario("profile = \"constant-vus\"\nvus = 2\nvus = 3\nduration = \"1s\""), "8:1", "`vus` is given twice in its table"),
        ("duplicate table", format!("{GOOD_HEAD}[target]\ntimeout = \"1s\"\n"), "3:2", "table [target] is given twice"),
        ("threshold of the wrong type", format!("{}[thresholds]\nlatency = [3]\n", scenario("profile = \"constant-vus\"\nvus = 1\nduration = \"1s\"")), "13:11", "`latency`: expected conditions (\"p95 < 5ms\") or tables"),
        ("think of the wrong type", format!("{GOOD_HEAD}[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n{step}think = 5\n"), "12:9", "`think`: expected a duration (\"100ms\") or a distribution"),
        ("unknown profile", scenario("profile = \"ramping-vu\"\nstages = []"), "6:11", "unknown profile `ramping-vu`"),
        ("key of another profile", scenario("profile = \"constant-vus\"\nvus = 2\nduration = \"1s\"\nrate = 5"), "6:11", "`rate` does not apply to profile constant-vus"),
        ("missing key", scenario("profile = \"constant-arrival-rate\"\nrate = 5\nduration = \"1s\""), "6:11", "needs `max_vus`"),
        ("negative duration", scenario("profile = \"constant-vus\"\nvus = 2\nduration = \"-5s\""), "8:12", "negative"),
        ("bad duration", scenario("profile = \"constant-vus\"\nvus = 2\nduration = \"soon\""), "8:12", "not a duration"),
        ("rate 0", scenario("profile = \"constant-arrival-rate\"\nrate = 0\nduration = \"1s\"\nmax_vus = 5"), "5:1", "must be greater than 0"),
        ("stages that never end", scenario("profile = \"ramping-vus\"\nstages = [{ duration = \"0s\", target = 5 }]"), "5:1", "would never send anything"),
        ("zero vus", scenario("profile = \"constant-vus\"\nvus = 0\nduration = \"1s\""), "5:1", "`vus` must be at least 1"),
        ("undefined variable", format!("{GOOD_HEAD}[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n[[scenario.step]]\nname = \"s\"\npath = \"/tasks/{{{{ task_idd }}}}\"\n"), "11:8", "undefined variable `task_idd`"),
        ("undefined plan variable", format!("{GOOD_HEAD}[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n[[scenario.step]]\nname = \"s\"\npath = \"/tasks/{{{{ vars.nope }}}}\"\n"), "11:8", "undefined `vars.nope`: the plan has no [vars]"),
        ("check status out of range", format!("{GOOD_HEAD}[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n{step}[scenario.step.checks]\nstatus = [999]\n"), "13:10", "checks.status lists HTTP status codes"),
        ("template syntax", format!("{GOOD_HEAD}[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n[[scenario.step]]\nname = \"s\"\npath = \"/{{{{ vu \"\n"), "11:8", "syntax error"),
        ("unreadable csv", format!("{GOOD_HEAD}[data.users]\nfile = \"missing.csv\"\n[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n{step}"), "4:8", "cannot read CSV file"),
        ("base url with a query", "[target]\nbase_url = \"http://127.0.0.1:9/api?key=SECRET\"\n[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n[[scenario.step]]\nname = \"s\"\npath = \"/\"\n".to_string(), "2:12", "`http://127.0.0.1:9/api?…`: a base URL's query would not be sent"),
        ("bad target header", format!("{GOOD_HEAD}headers = {{ \"bad name\" = \"x\" }}\n[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n{step}"), "", "[target] headers: `bad name: x`: the header name"),
        ("bad url", "[target]\nbase_url = \"not a url\"\n[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n[[scenario.step]]\nname = \"s\"\npath = \"/\"\n".to_string(), "2:12", "not a valid URL"),
        ("blank operation", format!("{GOOD_HEAD}[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n[[scenario.step]]\nname = \"s\"\noperation = \" \"\npath = \"/\"\n"), "11:13", "operation ` ` is empty"),
        ("duplicate step", format!("{GOOD_HEAD}[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n{step}{step}"), "13:8", "defined twice"),
        ("bad threshold metric", format!("{}[thresholds]\nlatncy = [\"p95 < 5ms\"]\n", scenario("profile = \"constant-vus\"\nvus = 1\nduration = \"1s\"")), "13:10", "unknown metric `latncy`"),
        ("bad threshold condition", format!("{}[thresholds]\nlatency = [\"p95 5ms\"]\n", scenario("profile = \"constant-vus\"\nvus = 1\nduration = \"1s\"")), "13:12", "expected a comparison"),
        ("threshold on a missing step", format!("{}[thresholds]\n\"latency{{step=nope}}\" = [\"p95 < 5ms\"]\n", scenario("profile = \"constant-vus\"\nvus = 1\nduration = \"1s\"")), "13:24", "filters on something the plan does not have"),
        ("extract without source", format!("{GOOD_HEAD}[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n{step}[scenario.step.extract]\nid = {{}}\n"), "13:6", "exactly one of json, header, regex"),
        ("no scenario", format!("scenario = []\n{GOOD_HEAD}"), "", "no [[scenario]]"),
        ("ladder with mixed phases", scenario("profile = \"ladder\"\nphases = [{ vus = 10, rate = 5.0, duration = \"1s\" }]"), "7:46", "either `vus` or `rate`"),
        ("unknown preset", scenario("profile = \"ladder\"\npreset = \"huge\""), "5:1", "unknown ladder preset `huge`"),
        ("0-RTT over HTTP 1.1", tls_option("zero_rtt = true"), "4:12", "built for HTTP/3 only"),
        ("unknown TLS version", tls_option("version = \"1.1\""), "4:11", "is not 1.2 or 1.3"),
    ]
}

#[test]
fn every_broken_plan_is_refused_with_its_location() {
    let dir = temp_dir("broken");
    let cases = cases();
    assert!(cases.len() >= 15);
    for (name, text, location, message) in cases {
        let path = dir.join(format!("{}.toml", name.replace(' ', "-")));
        std::fs::write(&path, &text).unwrap();
        let out = volley().arg("check").arg(&path).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        let at = if location.is_empty() {
            format!("{}: ", path.display())
        } else {
            format!("{}:{location}: ", path.display())
        };
        assert!(
            stderr.contains(&at),
            "{name}: expected `{at}` in:\n{stderr}\n--- plan:\n{text}"
        );
        assert!(
            stderr.contains(message),
            "{name}: expected `{message}` in:\n{stderr}"
        );
        // And `run` refuses it the same way, before sending anything.
        let out = volley().arg("run").arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{name} (run)");
    }
}

#[test]
fn response_limits_in_a_plan_are_accepted() {
    let dir = temp_dir("limits-plan");
    let path = dir.join("limits.toml");
    std::fs::write(
        &path,
        format!("{GOOD_HEAD}max_header_size = \"2MiB\"\nmax_body_size = 1048576\n[[scenario]]\nname = \"a\"\n[scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"1s\"\n[[scenario.step]]\nname = \"s\"\npath = \"/\"\n"),
    )
    .unwrap();
    let out = volley().arg("check").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn check_renders_one_request_per_step() {
    let out = volley()
        .args([
            "check",
            concat!(env!("CARGO_MANIFEST_DIR"), "/examples/003-tasks-crud.toml"),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("POST /tasks HTTP/1.1"), "{stdout}");
    assert!(stdout.contains("GET /tasks/<task_id> HTTP/1.1"), "{stdout}");
    assert!(stdout.contains(r#""title":"task 1-0""#), "{stdout}");
}

/// The reference plan in docs/plans.md (every key, commented) is a valid plan: `volley check`
/// passes it, its data file beside it.
#[test]
fn the_reference_plan_in_the_docs_checks() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/plans.md"));
    let doc = doc.unwrap();
    let plan = doc
        .split("```toml\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains("[[scenario]]") && b.contains("[target]"))
        .expect("docs/plans.md has a whole plan");
    let dir = temp_dir("docs-reference-plan");
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/accounts.csv");
    std::fs::copy(examples, dir.join("accounts.csv")).unwrap();
    std::fs::write(dir.join("plan.toml"), plan).unwrap();
    let (code, out, err) = run_volley(&["check", dir.join("plan.toml").to_str().unwrap()]);
    assert_eq!(code, Some(0), "docs/plans.md's reference plan: {err}");
    assert!(out.contains("step get_task:"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Plans that passed `volley check` and could not work: a variable only a later step extracts
/// (the run once spun through 784,580 unsent attempts in 0.5 s), unique rows for more VUs than
/// rows, a CSV column or an environment variable that is not there, a data file that is no
/// file or too large. Each is refused at its line, before any load.
#[test]
fn plans_that_cannot_work_are_refused_at_their_line() {
    let dir = temp_dir("cannot-work");
    std::fs::write(dir.join("users.csv"), "id,name\n1,ada\n2,grace\n").unwrap();
    let load = "[scenario.load]\nprofile = \"constant-vus\"\nvus = 5\nduration = \"1s\"\n";
    let data =
        |mode: &str, file: &str| format!("[data.users]\nfile = \"{file}\"\nmode = \"{mode}\"\n");
    let cases: Vec<(&str, String, &str, &str, Vec<&str>)> = vec![
        (
            "extracted later",
            format!(
                "{GOOD_HEAD}[[scenario]]\nname = \"a\"\n{load}[[scenario.step]]\nname = \"read\"\n\
                 path = \"/tasks/{{{{ id }}}}\"\n[[scenario.step]]\nname = \"create\"\npath = \"/\"\n\
                 [scenario.step.extract]\nid = {{ json = \"/id\" }}\n"
            ),
            "11:8",
            "undefined variable `id`",
            vec![],
        ),
        (
            "unique rows short",
            format!(
                "{GOOD_HEAD}{}[[scenario]]\nname = \"a\"\n{load}[[scenario.step]]\nname = \"s\"\n\
                 path = \"/u/{{{{ data.users.id }}}}\"\n",
                data("unique", "users.csv")
            ),
            "5:8",
            "gives each VU a row of its own, but `users` has 2 rows for the 5 VUs",
            vec![],
        ),
        (
            "unknown column",
            format!(
                "{GOOD_HEAD}{}[[scenario]]\nname = \"a\"\n{load}[[scenario.step]]\nname = \"s\"\n\
                 path = \"/u/{{{{ data.users.nmae }}}}\"\n",
                data("sequential", "users.csv")
            ),
            "14:8",
            "data file `users` has no column `nmae`; its columns: id, name",
            vec![],
        ),
        (
            "unset env",
            format!(
                "{GOOD_HEAD}[[scenario]]\nname = \"a\"\n{load}[[scenario.step]]\nname = \"s\"\n\
                 path = \"/{{{{ env.VOLLEY_TEST_SURELY_UNSET }}}}\"\n"
            ),
            "11:8",
            "VOLLEY_TEST_SURELY_UNSET is not set in the environment",
            vec![],
        ),
        (
            "data from a device",
            format!(
                "{GOOD_HEAD}{}[[scenario]]\nname = \"a\"\n{load}[[scenario.step]]\nname = \"s\"\n\
                 path = \"/\"\n",
                data("sequential", "/dev/zero")
            ),
            "4:8",
            "is not a regular file",
            vec![],
        ),
        (
            "data over the limit",
            format!(
                "{GOOD_HEAD}{}[[scenario]]\nname = \"a\"\n{load}[[scenario.step]]\nname = \"s\"\n\
                 path = \"/\"\n",
                data("sequential", "users.csv")
            ),
            "4:8",
            "over the limit of 10 bytes for a data file; raise it with --max-data-size",
            vec!["--max-data-size", "10B"],
        ),
    ];
    for (name, text, location, message, flags) in cases {
        let path = dir.join(format!("{}.toml", name.replace(' ', "-")));
        std::fs::write(&path, &text).unwrap();
        let out = volley()
            .arg("check")
            .arg(&path)
            .args(&flags)
            .env_remove("VOLLEY_TEST_SURELY_UNSET")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        let at = format!("{}:{location}: ", path.display());
        assert!(
            stderr.contains(&at),
            "{name}: expected `{at}` in:\n{stderr}\n{text}"
        );
        assert!(
            stderr.contains(message),
            "{name}: expected `{message}` in:\n{stderr}"
        );
    }
}

/// `--precision` and `[precision]` goals that cannot be read or met are refused, saying what
/// and where (issue 30).
#[test]
fn bad_precision_goals_are_refused_with_what_and_where() {
    for (goal, says) in [
        (
            "p98=2%",
            "`p98` is not a figure with an interval (rps, mean, p50, p90, p95, p99, p99.9)",
        ),
        ("p99=0%", "`0%` is not a share above 0% and up to 50%"),
        ("p99=2", "`2` has no `%`: a share is a percentage"),
        ("p99=2%,p50=1%", "one goal at a time"),
        ("p99", "`p99` is not FIGURE=SHARE like p99=2%"),
        (
            "p99{step=request}=2%",
            "step `request`: a run of one URL has no scenarios or steps of its own",
        ),
        ("p99{step=pay}x=2%", "goes on after its `}`"),
    ] {
        let (code, _, err) = common::run_volley(&["http://127.0.0.1:1/", "--precision", goal]);
        assert_eq!(code, Some(2), "{goal}: {err}");
        assert!(err.contains(says), "{goal}: {err}");
    }
    let dir = common::temp_dir("uncertainty-plan");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "name = \"p\"\n[target]\nbase_url = \"http://127.0.0.1:1\"\n\
         [precision]\np99 = \"two\"\n\
         [[scenario]]\nname = \"s\"\nload = { profile = \"constant-vus\", vus = 1, duration = \"1s\" }\n\
         [[scenario.step]]\nname = \"get\"\npath = \"/\"\n",
    )
    .unwrap();
    let (code, _, err) = common::run_volley(&["check", plan.to_str().unwrap()]);
    assert_ne!(code, Some(0), "{err}");
    assert!(
        err.contains("plan.toml:5:7") && err.contains("`two` is not a share"),
        "{err}"
    );
    // A count of iterations, not a time, ends the run: nothing to stop within.
    let (code, _, err) =
        common::run_volley(&["http://127.0.0.1:1/", "-n", "3000", "--precision", "p50=2%"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("the run ends after a number of requests (-n), not at a set time")
            && !err.contains("scenario"),
        "{err}"
    );
    // Beside another scenario, one that ends by a count may end apart from it.
    std::fs::write(
        &plan,
        "name = \"p\"\n[target]\nbase_url = \"http://127.0.0.1:1\"\n\
         [precision]\np50 = \"50%\"\n\
         [[scenario]]\nname = \"long\"\nload = { profile = \"constant-vus\", vus = 1, duration = \"8s\" }\n\
         [[scenario.step]]\nname = \"get\"\npath = \"/\"\n\
         [[scenario]]\nname = \"short\"\nload = { profile = \"iterations\", vus = 2, iterations = 400 }\n\
         [[scenario.step]]\nname = \"get\"\npath = \"/\"\n",
    )
    .unwrap();
    let (code, _, err) = common::run_volley(&["check", plan.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "scenario `short` ends after a number of iterations, so it may end apart from `long`"
        ),
        "{err}"
    );
    // Each VU that stops after its own iterations lowers the load: a ramp down, alone too.
    std::fs::write(
        &plan,
        "name = \"p\"\n[target]\nbase_url = \"http://127.0.0.1:1\"\n\
         [precision]\np50 = \"50%\"\n\
         [[scenario]]\nname = \"each\"\nload = { profile = \"per-vu-iterations\", vus = 2, iterations = 400 }\n\
         [[scenario.step]]\nname = \"get\"\npath = \"/\"\n",
    )
    .unwrap();
    let (code, _, err) = common::run_volley(&["check", plan.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("each VU of scenario `each` stops after its own iterations"),
        "{err}"
    );
}
