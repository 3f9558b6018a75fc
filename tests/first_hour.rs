//! The conventions a new user expects: shell completions and a man page generated from the flags,
//! `volley new` writing a starter plan that `volley check` accepts and that runs against the
//! built-in target, `--from-curl`, and `--color` / `NO_COLOR` on every error line.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;
use serde_json::Value;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs volley with `args` and extra environment variables (the colour variables of the test
/// process removed, so its own environment cannot decide the result).
fn volley_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = volley();
    for name in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "CI"] {
        c.env_remove(name);
    }
    c.args(args).envs(env.iter().copied()).output().unwrap()
}

/// Whether a shell is installed (zsh and fish are optional on CI machines).
fn have(shell: &str) -> bool {
    Command::new(shell)
        .arg("-c")
        .arg("exit 0")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The shell's own syntax check of `script` (bash/zsh `-n`, fish `--no-execute`).
fn syntax_check(shell: &str, script: &Path) -> Output {
    let flag = if shell == "fish" {
        "--no-execute"
    } else {
        "-n"
    };
    Command::new(shell).arg(flag).arg(script).output().unwrap()
}

#[test]
fn completions_are_valid_scripts_that_know_every_subcommand_and_flag() {
    let dir = temp_dir("completions");
    let mut checked = Vec::new();
    for shell in ["bash", "zsh", "fish"] {
        let out = volley_env(&["completions", shell], &[]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        // Generated from the clap definitions: the newest subcommands and flags are in it.
        for word in [
            "find-max",
            "completions",
            "from-curl",
            "time-scale",
            "color",
        ] {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
        if !have(shell) {
            continue;
        }
        let path = dir.join(format!("volley.{shell}"));
        std::fs::write(&path, &script).unwrap();
        let check = syntax_check(shell, &path);
        assert!(
            check.status.success(),
            "{shell} rejects its script: {}",
            text(&check.stderr)
        );
        checked.push(shell);
    }
    assert!(checked.contains(&"bash"), "bash must be there to check");
    let (code, _, stderr) = run_volley(&["completions", "tcsh"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("bash") && stderr.contains("zsh"),
        "{stderr}"
    );
}

#[test]
fn the_man_page_renders_and_one_page_per_subcommand_is_written() {
    let out = volley_env(&["man"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let roff = text(&out.stdout);
    assert!(roff.starts_with(".ie \\n(.g .ds Aq"), "{}", &roff[..80]);
    assert!(roff.contains(".TH volley 1"), "no title line");
    assert!(roff.contains("volley\\-find\\-max") && roff.contains("\\-\\-color"));
    // groff renders it without a warning (when groff is installed; -k: UTF-8 input, as `man` reads it).
    let dir = temp_dir("man");
    let page = dir.join("volley.1");
    std::fs::write(&page, &roff).unwrap();
    if let Ok(render) = Command::new("groff")
        .args(["-k", "-man", "-Tutf8", "-ww", "-z"])
        .arg(&page)
        .output()
    {
        assert!(render.status.success(), "{}", text(&render.stderr));
        assert_eq!(text(&render.stderr), "", "groff warns");
    }
    let pages = dir.join("pages");
    let out = volley_env(&["man", "--dir", pages.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for name in [
        "volley.1",
        "volley-run.1",
        "volley-new.1",
        "volley-find-max.1",
    ] {
        let written = std::fs::read_to_string(pages.join(name)).unwrap_or_default();
        assert!(written.contains(".TH"), "{name} missing or empty");
    }
}

/// Loads a run's JSON record.
fn record(path: &Path) -> Value {
    common::verified(path);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_starter_plan_passes_check_and_runs_against_the_built_in_target() {
    let t = target();
    let dir = temp_dir("new");
    let plan = dir.join("plan.toml");
    let plan_s = plan.to_str().unwrap();
    let url = format!("{}/", t.base_url());
    let out = volley_env(&["new", &url, "-o", plan_s], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("volley check"),
        "says what to do next"
    );
    let written = std::fs::read_to_string(&plan).unwrap();
    assert!(written.contains("ramping-vus") && written.contains("[thresholds]"));
    // It never overwrites a plan unless told to.
    let again = volley_env(&["new", &url, "-o", plan_s], &[]);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    assert!(text(&again.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), written);

    let check = volley_env(&["check", plan_s], &[]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
    assert!(
        text(&check.stdout).contains("GET / HTTP/1.1"),
        "{}",
        text(&check.stdout)
    );

    // 35 s of stages at a time scale of 0.03: about a second of load.
    let json = dir.join("run.json");
    let run = volley_env(
        &[
            "run",
            plan_s,
            "--time-scale",
            "0.03",
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let rec = record(&json);
    let requests = rec["summary"]["requests"].as_u64().unwrap_or(0);
    assert!(requests > 10, "{}", rec["summary"]);
    assert_eq!(rec["checks"][0]["failed"], 0, "{}", rec["checks"]);
    let thresholds = rec["thresholds"].as_array().unwrap();
    assert_eq!(thresholds.len(), 2);
    assert!(
        thresholds.iter().all(|th| th["passed"] == true),
        "{thresholds:?}"
    );
    t.stop();
}

#[test]
fn a_browser_curl_line_becomes_a_step_that_runs() {
    let t = target();
    let base = t.base_url();
    // Chrome's "Copy as cURL (bash)" of a fetch() POST, pointed at the built-in target.
    let command = format!(
        r#"curl '{base}/echo?src=devtools' \
  -H 'accept: */*' \
  -H 'accept-language: en-GB,en;q=0.9' \
  -H 'content-type: application/json' \
  -b 'session=3f2a9c; theme=dark' \
  -H 'origin: {base}' \
  -H 'sec-fetch-mode: cors' \
  -H 'user-agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/124.0.0.0' \
  --data-raw $'{{"item":42,"note":"a gift\u0021 it\'s for mum"}}'"#
    );
    let dir = temp_dir("from-curl");
    let plan = dir.join("plan.toml");
    let plan_s = plan.to_str().unwrap();
    let out = volley_env(&["new", "--from-curl", &command, "-o", plan_s], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let check = volley_env(&["check", plan_s], &[]);
    let shown = text(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
    assert!(
        shown.contains("POST /echo?src=devtools HTTP/1.1"),
        "{shown}"
    );
    assert!(
        shown.contains(r#"{"item":42,"note":"a gift! it's for mum"}"#),
        "{shown}"
    );
    assert!(shown.contains("content-type: application/json"), "{shown}");
    let json = dir.join("run.json");
    let run = volley_env(
        &[
            "run",
            plan_s,
            "--time-scale",
            "0.02",
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let rec = record(&json);
    assert!(rec["summary"]["requests"].as_u64().unwrap_or(0) > 5);
    assert_eq!(rec["checks"][0]["failed"], 0, "{}", rec["checks"]);
    t.stop();

    // What a plan cannot express is refused by name, with exit code 2 and nothing written.
    for (bad, says) in [
        (
            "curl -F 'f=@a.txt' http://127.0.0.1:1/",
            "`-F` is not supported",
        ),
        (
            "curl --proxy-user a:b http://127.0.0.1:1/",
            "`--proxy-user` is not supported",
        ),
        (
            "curl http://127.0.0.1:1/ -d @body.json",
            "reads the body from a file",
        ),
        ("wget http://127.0.0.1:1/", "not curl"),
    ] {
        let out = volley_env(&["new", "--from-curl", bad, "-o", "-"], &[]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains(says),
            "{bad}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), "", "{bad}");
    }
}

#[test]
fn color_follows_the_flag_then_no_color_then_the_terminal() {
    const ESC: char = '\x1b';
    // Two kinds of error line: clap's (an unknown flag) and volley's own (a refused curl line).
    let clap_error: &[&str] = &["run", "--frobnicate"];
    let own_error: &[&str] = &["new", "--from-curl", "wget x", "-o", "-"];
    for args in [clap_error, own_error] {
        let colored = |extra: &[&str], env: &[(&str, &str)]| {
            let all: Vec<&str> = extra.iter().chain(args).copied().collect();
            let out = volley_env(&all, env);
            assert_eq!(out.status.code(), Some(2), "{all:?}");
            let stderr = text(&out.stderr);
            assert!(stderr.contains("error"), "{all:?}: {stderr}");
            stderr.contains(ESC)
        };
        // stderr is a pipe here: auto means no colour, unless CLICOLOR_FORCE says so.
        assert!(!colored(&[], &[]), "{args:?}");
        assert!(colored(&["--color", "always"], &[]), "{args:?}");
        assert!(
            colored(&["--color=always"], &[("NO_COLOR", "1")]),
            "{args:?}"
        );
        assert!(colored(&[], &[("CLICOLOR_FORCE", "1")]), "{args:?}");
        assert!(
            !colored(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]),
            "{args:?}"
        );
        assert!(
            !colored(&["--color", "never"], &[("CLICOLOR_FORCE", "1")]),
            "{args:?}"
        );
    }
    let out = volley_env(&["--color", "sometimes", "run", "x.toml"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("always"),
        "{}",
        text(&out.stderr)
    );
}
