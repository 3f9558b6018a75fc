//! A coordinated test's processes: a `volley coordinate` on 127.0.0.1:0 and `--join`
//! generators, each writing into a folder of the test, and what they leave there.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::{Spawned, spawn_volley, valid_record};

pub const TOKEN: &str = "test-token-0123456789";

/// A coordinator started with `args` (after `coordinate`), its merged results under
/// `dir/merged/`; returns it and its URL once it listens.
pub fn coordinator(dir: &Path, args: &[&str]) -> (Spawned, String) {
    let file = |name: &str| std::fs::File::create(dir.join(name)).unwrap();
    let mut cmd = super::volley();
    cmd.arg("coordinate")
        .args(args)
        .args(["--listen", "127.0.0.1:0", "--token", TOKEN])
        .args(if args.contains(&"--wait") {
            &[][..]
        } else {
            &["--wait", "60s"][..]
        })
        .arg("--out")
        .arg(dir.join("merged"))
        .stdin(std::process::Stdio::null())
        .stdout(file("stdout.txt"))
        .stderr(file("stderr.txt"));
    let spawned = Spawned {
        child: cmd.spawn().expect("volley coordinate starts"),
        dir: dir.to_path_buf(),
        started: std::time::Instant::now(),
    };
    let url = listening_url(dir);
    (spawned, url)
}

/// A generator: `args` then `--join URL --token T`, into `dir/w<i>/`.
pub fn generator(dir: &Path, i: usize, args: &[&str], url: &str, env: &[(&str, &str)]) -> Spawned {
    let sub = dir.join(format!("w{i}"));
    std::fs::create_dir_all(&sub).unwrap();
    let mut all = args.to_vec();
    // `--token=T` here, `--token T` for the coordinator: both spellings are redacted.
    let token = format!("--token={TOKEN}");
    all.extend(["--join", url, &token]);
    spawn_volley(&sub, &all, env)
}

/// The URL a coordinator whose stderr goes to `dir/stderr.txt` says it listens on, once it does.
pub fn listening_url(dir: &Path) -> String {
    let mut url = String::new();
    super::wait_until("the coordinator listens", Duration::from_secs(20), || {
        url = stderr_of(dir)
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_default()
            .to_string();
        !url.is_empty()
    });
    url
}

pub fn stderr_of(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default()
}

/// The merged record the coordinator wrote.
/// No file of the test holds the token: the merged results, the generators' output.
pub fn merged(dir: &Path) -> Value {
    let folder = super::only_subfolder(&dir.join("merged"));
    // The record is written first, the reports after it: wait for the last of them.
    super::wait_until(
        "the merged reports",
        std::time::Duration::from_secs(30),
        || folder.join("report.html").exists(),
    );
    for entry in walk(dir) {
        // A temporary file of an atomic write may be renamed away between listing and reading.
        let Ok(bytes) = std::fs::read(&entry) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        assert!(!text.contains(TOKEN), "{} holds the token", entry.display());
    }
    valid_record(&folder.join("run.json"))
}

/// Every file under `dir`.
pub fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

pub fn plan(dir: &Path, base_url: &str, load: &str, extra: &str) -> String {
    let path = dir.join("plan.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"coordinated\"\nthreads = 1\n[target]\nbase_url = \"{base_url}\"\n\
             [[scenario]]\nname = \"get\"\n[scenario.load]\n{load}\n\
             [[scenario.step]]\nname = \"root\"\npath = \"/\"\n{extra}"
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// `n` generators joining at `join`, generator `i` running share `i/n` of `plan`.
pub fn share_generators(dir: &Path, plan: &str, join: &str, n: usize) -> Vec<Spawned> {
    (0..n)
        .map(|i| {
            let segment = format!("{i}/{n}");
            generator(dir, i, &["run", plan, "--segment", &segment], join, &[])
        })
        .collect()
}

/// Waits until the coordinator has counted requests of the running test (60 s at most, the
/// coordinator's wait for its generators; then fails with what each process said).
pub fn wait_until_running(dir: &Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let running = || {
        let text = stderr_of(dir);
        let last = text.lines().rfind(|l| l.contains("generators running"));
        last.is_some_and(|l| !l.contains(", 0 requests"))
    };
    while !running() {
        if std::time::Instant::now() > deadline {
            let generators: Vec<String> = (0..)
                .map(|i| dir.join(format!("w{i}")))
                .take_while(|w| w.is_dir())
                .map(|w| format!("{}:\n{}", w.display(), stderr_of(&w)))
                .collect();
            panic!(
                "timed out waiting for the test runs\ncoordinator:\n{}\n{}",
                stderr_of(dir),
                generators.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits for each process, at most `limit` each.
pub fn finish(spawned: Vec<Spawned>, limit: Duration) -> Vec<super::Finished> {
    spawned.into_iter().map(|s| s.wait(limit)).collect()
}
