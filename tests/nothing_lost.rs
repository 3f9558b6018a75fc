//! Nothing measured is lost to a mistake that could be seen before the run (issue 25): output
//! paths are checked before the first request, an output that still fails keeps the others,
//! a full stdout is an error, and a flag's mistake names the flag.

mod common;

use std::process::Stdio;

use common::{run_volley, served, target, temp_dir};

#[test]
fn output_paths_are_checked_before_the_first_request() {
    let t = target();
    let url = format!("{}/", t.base_url());
    let dir = temp_dir("outputs-first");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let folder = dir.to_str().unwrap().to_string();
    let cases: [(&str, String, &str); 4] = [
        ("--json", folder.clone(), "is a folder"),
        (
            "--out",
            file.to_str().unwrap().to_string(),
            "is a file, not a folder",
        ),
        ("--json", "/proc/volley-x.json".into(), "cannot write there"),
        ("--json", "/dev/full".into(), "is not a regular file"),
    ];
    for (flag, path, why) in cases {
        let (code, _, stderr) = run_volley(&[&url, "-d", "2s", "-q", flag, &path]);
        assert_eq!(code, Some(2), "{flag} {path}: {stderr}");
        assert!(
            stderr.contains(&format!("invalid {flag} {path}: {why}")),
            "{stderr}"
        );
    }
    assert_eq!(served(&t, "/", 200), 0, "nothing was sent");
}

#[test]
fn an_output_that_fails_keeps_the_others_and_says_where() {
    let _serial = common::serial();
    let t = target();
    let url = format!("{}/", t.base_url());
    let dir = temp_dir("outputs-one-fails");
    let json_dir = dir.join("records");
    let json = json_dir.join("run.json");
    let out = dir.join("results");
    let child = common::volley()
        .args([&url, "-d", "2s", "-c", "2", "-q", "--json"])
        .arg(&json)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_until("requests", std::time::Duration::from_secs(20), || {
        served(&t, "/", 200) > 100
    });
    // The record's folder turns into a file while the run goes: its write must fail.
    std::fs::remove_dir_all(&json_dir).unwrap();
    std::fs::write(&json_dir, "not a folder").unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("could not write --json"), "{stderr}");
    let results = common::only_subfolder(&out);
    assert!(
        stderr.contains(&format!("kept: the results in {}", results.display())),
        "{stderr}"
    );
    common::assert_complete_results(&results);
}

#[test]
fn a_full_stdout_is_an_error_not_a_silent_loss() {
    let t = target();
    let dir = temp_dir("stdout-full");
    let output = common::volley()
        .args([
            &format!("{}/", t.base_url()),
            "-n",
            "50",
            "-c",
            "1",
            "--out",
        ])
        .arg(dir.join("results"))
        .stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("could not write to stdout: No space left"),
        "{stderr}"
    );
    // The results folder is whole all the same.
    common::assert_complete_results(&common::only_subfolder(&dir.join("results")));
}

#[test]
fn a_flags_mistake_names_the_flag() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["http://127.0.0.1:9/", "--cacert", "/x.pem"],
            "invalid TLS options",
        ),
        (
            &["https://127.0.0.1:9/", "--tls-version", "9"],
            "invalid --tls-version: TLS version `9`",
        ),
        (
            &["http://127.0.0.1:9/", "--streams", "0"],
            "invalid --streams: streams must be at least 1",
        ),
        (
            &["http://127.0.0.1:9/", "--source-addrs", "foo"],
            "invalid --source-addrs: \"foo\" is not an IP address",
        ),
        (
            &["http://127.0.0.1:9/", "--rate", "1e-300", "-d", "1s"],
            "less than one a day",
        ),
        (
            &["http://127.0.0.1:9/", "--join", "notaurl", "--token", "t"],
            "invalid --join",
        ),
    ];
    for (args, message) in cases {
        let (code, _, stderr) = run_volley(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(message),
            "{args:?}: expected {message:?} in {stderr}"
        );
        assert!(!stderr.contains("invalid URL"), "{args:?}: {stderr}");
    }
}

/// The soft open-file limit is raised to the hard one; a hard one below the connections asked
/// is said before the run.
#[test]
fn an_open_file_limit_below_the_connections_is_said() {
    let t = target();
    let dir = temp_dir("nofile");
    let out = std::process::Command::new("prlimit")
        .args(["--nofile=64:128"])
        .arg(env!("CARGO_BIN_EXE_volley"))
        .args([
            &format!("{}/", t.base_url()),
            "-n",
            "20",
            "-c",
            "500",
            "-q",
            "--out",
        ])
        .arg(dir.join("results"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: the open-file limit is 128, below the 500 connections"),
        "the soft limit 64 is raised to the hard 128, still short: {stderr}"
    );
}
