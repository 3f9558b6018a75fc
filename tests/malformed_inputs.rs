//! No panic is reachable from user input. A corpus of malformed plans and data files
//! (`tests/malformed/`) and bad flags and URLs goes through the real `volley` binary (damaged
//! records: `malformed_records.rs`). Each is refused with exit code 2 and a message naming what
//! is wrong and where (`file:line:col` in plans), or — a plan whose templates cannot render —
//! runs to its end and counts `template_error`. Never a panic, never a hang: every command runs
//! under a deadline.

mod common;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use common::deadline::{assert_no_panic, assert_refused, run};
use common::*;
use serde_json::Value;

const MALFORMED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/malformed");

fn plan(name: &str) -> PathBuf {
    Path::new(MALFORMED).join("plans").join(name)
}

/// (file in tests/malformed/plans, location after the path — `line:col`, or "" for the file
/// alone — and what the message says).
const BAD_PLANS: &[(&str, &str, &str)] = &[
    ("empty.toml", "1:1", "missing field `target`"),
    ("blank.toml", "1:1", "missing field `target`"),
    ("binary-junk.toml", "1:29", "key with no value"),
    ("png-junk.toml", "1:1", "not UTF-8 text (byte 0x89)"),
    ("invalid-utf8.toml", "3:12", "not UTF-8 text (byte 0xe9)"),
    ("bad-toml.toml", "1:8", "unclosed table, expected `]`"),
    (
        "duplicate-key.toml",
        "2:1",
        "`name` is given twice in its table",
    ),
    (
        "wrong-type-target.toml",
        "1:10",
        "invalid type: integer `5`",
    ),
    (
        "wrong-type-vus.toml",
        "7:7",
        "`vus`: invalid type: string \"ten\", expected a whole number",
    ),
    (
        "precision-bare-number.toml",
        "13:7",
        "expected a string\n  hint: write `p50` as a string with its unit, e.g. \"3%\"",
    ),
    (
        "huge-vus.toml",
        "7:7",
        "invalid value: integer `99999999999`",
    ),
    (
        "absurd-vus.toml",
        "5:1",
        "`vus` = 4000000000 is more than volley allows",
    ),
    (
        "huge-integer.toml",
        "8:14",
        "`iterations`: invalid type: integer `99999999999999999999999` as i128, expected a whole number, 0 or more",
    ),
    (
        "huge-duration.toml",
        "8:12",
        "`99999999999999999999h` is not a duration",
    ),
    (
        "too-long-duration.toml",
        "8:12",
        "longer than the longest duration",
    ),
    ("negative-duration.toml", "8:12", "negative"),
    ("nan-duration.toml", "8:12", "not a valid number of seconds"),
    ("nan-rate.toml", "5:1", "rate NaN must be greater than 0"),
    ("inf-rate.toml", "5:1", "rate inf must be greater than 0"),
    (
        "negative-rate.toml",
        "5:1",
        "rate -100 must be greater than 0",
    ),
    (
        "absurd-rate.toml",
        "5:1",
        "a load of inf iterations per second is more than volley allows",
    ),
    (
        "absurd-stage-target.toml",
        "5:1",
        "a load of 1.000e300 VUs is more than volley allows",
    ),
    (
        "inf-stage-target.toml",
        "8:24",
        "stage target inf must be ≥ 0",
    ),
    (
        "zero-max-vus-ladder.toml",
        "5:1",
        "`max_vus` must be at least 1",
    ),
    ("deep-nesting.toml", "4:88", "max recursion depth met"),
    (
        "deep-inline-tables.toml",
        "4:488",
        "max recursion depth met",
    ),
    ("template-syntax.toml", "11:8", "syntax error"),
    ("template-unclosed.toml", "12:8", "syntax error"),
    (
        "template-undefined.toml",
        "11:8",
        "undefined variable `nope`",
    ),
    (
        "template-in-base-url.toml",
        "2:12",
        "unable to calculate 1 // 0",
    ),
    ("csv-broken.toml", "4:8", "broken.csv row 2: CSV error"),
    ("csv-uneven.toml", "4:8", "uneven.csv row 2: CSV error"),
    ("csv-empty.toml", "4:8", "has no data rows"),
    (
        "csv-binary.toml",
        "4:8",
        "binary.csv row 2: CSV parse error",
    ),
    ("csv-missing.toml", "4:8", "cannot read CSV file"),
    ("csv-a-directory.toml", "4:8", "is not a regular file"),
    (
        "secret-header-bad-name.toml",
        "3:18",
        "`X Api Key` is not a header name",
    ),
    ("path-with-space.toml", "11:8", "a path cannot hold spaces"),
    (
        "header-bad-name.toml",
        "12:26",
        "header name is empty or has invalid characters",
    ),
];

#[test]
fn malformed_plans_are_refused_where_they_are_wrong() {
    let mut seen = std::collections::BTreeSet::new();
    for &(file, location, message) in BAD_PLANS {
        seen.insert(file);
        let path = plan(file);
        let at = match location {
            "" => format!("{}", path.display()),
            l => format!("{}:{l}", path.display()),
        };
        for command in ["check", "run"] {
            let o = run(&[OsStr::new(command), path.as_os_str()]);
            assert_refused(&format!("{command} {file}"), &o, &[&at, message]);
        }
    }
    // Every file of the corpus is in the table (or below, with the templates that render badly).
    let files = std::fs::read_dir(Path::new(MALFORMED).join("plans")).unwrap();
    for f in files {
        let name = f.unwrap().file_name().into_string().unwrap();
        assert!(
            seen.contains(name.as_str()) || RENDER_FAILURES.iter().any(|(n, _)| *n == name),
            "{name} is not checked"
        );
    }
}

/// Plans whose templates compile but cannot render: (file, what the failure says).
const RENDER_FAILURES: &[(&str, &str)] = &[
    ("template-endless-loop.toml", "ran out of fuel"),
    ("template-huge-range.toml", "range has too many elements"),
    ("template-recursion.toml", "recursion limit"),
    ("template-huge-output.toml", "would exceed 16 MiB"),
    (
        "template-division-by-zero.toml",
        "unable to calculate 1 // 0",
    ),
    (
        "template-path-with-space.toml",
        "the rendered path `/a b` holds spaces",
    ),
    (
        "template-header-line-break.toml",
        "header `X-Injected` holds a line break",
    ),
];

#[test]
fn templates_that_cannot_render_are_stopped_and_counted() {
    let dir = temp_dir("malformed-render");
    for &(file, message) in RENDER_FAILURES {
        let path = plan(file);
        // `check` renders one request per step: the plan's mistake, with the step.
        let o = run(&[OsStr::new("check"), path.as_os_str()]);
        assert_refused(
            &format!("check {file}"),
            &o,
            &[&path.display().to_string(), "step `s`", message],
        );
        // A run renders per request: each one fails as template_error, and the run still
        // ends on time (every request failed: exit 1) with its record.
        let json = dir.join(format!("{file}.json"));
        let o = run(&[
            OsStr::new("run"),
            path.as_os_str(),
            OsStr::new("--time-scale"),
            OsStr::new("0.3"),
            OsStr::new("-q"),
            OsStr::new("--json"),
            json.as_os_str(),
            OsStr::new("--out"),
            dir.join("results").as_os_str(),
        ]);
        assert_no_panic(&format!("run {file}"), &o);
        assert_eq!(o.code, Some(1), "run {file}:\n{}", o.stderr);
        common::verified(&json);
        let record: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert!(
            errors_of(&record, "template_error") > 0,
            "run {file}: {}",
            record["summary"]
        );
        // A request that cannot be built never leaves the machine: an attempt and an error,
        // not a request.
        assert_eq!(
            errors_of(&record, "template_error"),
            summary_u64(&record, "attempts"),
            "run {file}: every attempt is a template error: {}",
            record["summary"]
        );
        assert_eq!(summary_u64(&record, "requests"), 0, "{}", record["summary"]);
    }
}

#[test]
fn bad_flags_and_urls_are_refused_naming_the_flag() {
    let url = "http://127.0.0.1:9/";
    let good_plan = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/malformed/ok-plan.toml");
    let cases: &[(&[&str], &str)] = &[
        (&[], "the following required arguments were not provided"),
        (&["ftp://127.0.0.1/"], "scheme `ftp` is not http"),
        (&["http://"], "invalid URL"),
        (&["http://127.0.0.1:99999/"], "invalid URL"),
        (&["http://[::1/"], "invalid URL"),
        (&["127.0.0.1:8080"], "invalid URL"),
        (&[url, "-c", "0"], "connections (-c)"),
        (&[url, "-c", "4294967296"], "--connections"),
        (&[url, "-c", "2000000"], "is more than volley allows"),
        (&[url, "-c", "-3"], "unexpected argument '-3'"),
        (&[url, "--duration=-5s"], "negative"),
        (&[url, "-d", "1e30"], "not a valid number of seconds"),
        (&[url, "-d", "400d"], "longer than the longest duration"),
        (&[url, "-d", "nan"], "not a valid number of seconds"),
        (&[url, "-d", "soon"], "not a duration like"),
        (&[url, "-n", "0"], "requests (-n)"),
        (&[url, "-n", "99999999999999999999"], "--requests"),
        (&[url, "--rate", "0"], "the rate must be greater than 0"),
        (&[url, "--rate", "nan"], "the rate must be greater than 0"),
        (&[url, "--rate", "inf"], "the rate must be greater than 0"),
        (&[url, "--rate", "-5"], "the rate must be greater than 0"),
        (&[url, "--rate", "1e20"], "is more than volley allows"),
        (&[url, "--timeout", "0"], "timeout"),
        (
            &[url, "--timeout", "1e12"],
            "longer than the longest duration",
        ),
        (&[url, "--warmup", "1e30"], "--warmup"),
        (&[url, "-H", "NoColon"], "expected `Name: value`"),
        (&[url, "-H", "Bad Name: x"], "invalid characters"),
        (&[url, "-H", "X-Key: a\r\nInjected: 1"], "line break"),
        (&[url, "-m", "G T"], "not a valid HTTP method"),
        (&[url, "--threads", "0"], "threads"),
        (&[url, "--body-file", "/nonexistent/volley"], "--body-file"),
        (&[url, "--repeat", "0"], "--repeat"),
        (
            &["report", "/nonexistent/run.json"],
            "cannot read /nonexistent/run.json",
        ),
        (&["report", "x.json", "-f", "pdf"], "'pdf'"),
        (&["compare", "/nonexistent/a"], "cannot read"),
        (&["compare", "a", "b", "--threshold", "nan"], "--threshold"),
        (
            &["run", "/nonexistent/plan.toml"],
            "cannot read plan /nonexistent/plan.toml",
        ),
        (&["run", good_plan, "--set", "noequals"], "is not KEY=VALUE"),
        (
            &["run", good_plan, "--set", "msx=5"],
            "--set msx: the plan has no variable `msx`: [vars] does not define it and no \
             template reads vars.msx",
        ),
        (
            &["run", good_plan, "--set", "a.b.c=1"],
            "`a.b.c`: use vars.NAME (or NAME), target.base_url",
        ),
        (&["run", good_plan, "--time-scale", "0"], "--time-scale"),
        (&["run", good_plan, "--time-scale", "nan"], "--time-scale"),
        (
            &["run", good_plan, "--time-scale", "1e300"],
            "longer than the longest duration",
        ),
        (
            &["run", good_plan, "--set", "target.base_url=nope"],
            "not a valid URL",
        ),
        (
            &["run", good_plan, "--set", "target.timeout=-1s"],
            "negative",
        ),
        (
            &["run", good_plan, "--secret-header", "X Y"],
            "--secret-header: `X Y` is not a header name",
        ),
        (
            &[url, "--secret-header", ""],
            "--secret-header: `` is not a header name",
        ),
        (&["find-max", url, "--slo", "p99 fast"], "--slo"),
        (
            &["find-max", url, "--slo", "p99<5ms", "--start", "0"],
            "start 0 must be a positive number",
        ),
        (
            &["find-max", url, "--slo", "p99<5ms", "--start", "nan"],
            "must be a positive number",
        ),
        (
            &["find-max", url, "--slo", "p99<5ms", "--max", "1e300"],
            "is more than volley allows",
        ),
        (
            &[
                "find-max", url, "--slo", "p99<5ms", "--start", "10", "--max", "5",
            ],
            "start 10 is above max 5",
        ),
        (
            &["find-max", url, "--slo", "p99<5ms", "--step", "0s"],
            "a step must last longer than 0",
        ),
        (
            &[
                "find-max",
                url,
                "--slo",
                "p99<5ms",
                "--step",
                "3s",
                "--precision",
                "p50=3%",
            ],
            "each step measures for 3s (--step; in a suite, [find_max] step), and a precision \
             goal needs at least 5 one-second batches",
        ),
        (
            &[
                "find-max",
                good_plan,
                "--slo",
                "p99<5ms",
                "--step",
                "4s",
                "--precision",
                "p50=3%",
            ],
            "each step measures for 4s (--step",
        ),
        (&["serve", "--port", "70000"], "--port"),
        (&["serve", "--bind", "not-an-ip"], "--bind"),
        (
            &["suite", "/nonexistent/suite.toml"],
            "/nonexistent/suite.toml",
        ),
    ];
    for &(args, message) in cases {
        let o = run(args);
        assert_refused(&format!("volley {args:?}"), &o, &[message]);
    }
    // An output that cannot be written is named (exit 1: not the input's fault).
    let ca = "/nonexistent/dir/ca.pem";
    let o = run(&["serve", "--port", "0", "--tls", "--ca-file", ca]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stderr
            .contains(&format!("cannot write the CA certificate to {ca}")),
        "{}",
        o.stderr
    );
    // An argument that is not UTF-8 at all.
    let o = run(&[
        OsString::from(url),
        OsString::from("-H"),
        OsString::from_vec(b"X-Key: \xff\xfe".to_vec()),
    ]);
    assert_refused("a header that is not UTF-8", &o, &["invalid UTF-8"]);
}
