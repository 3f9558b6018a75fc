//! SIGINT, SIGTERM and SIGHUP at each moment of a run — at start-up, before the first
//! response, during warm-up, mid-run, while the record and reports are written — leave a
//! whole, schema-valid record and never a truncated or temporary file; a second SIGINT exits
//! at once.
//!
//! Each signal is sent once something observable shows the moment has come, never after a sleep:
//! a listener of the test accepting volley's first connection; the target's `/metrics` counting
//! requests; and, for the writing of the reports (a few milliseconds otherwise), a marker file
//! that volley creates when `VOLLEY_TEST_PAUSE_BEFORE_RENAME` names it: its first atomic write
//! then waits, temporary file written and not yet renamed, until the test removes the marker.

mod common;

use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use common::*;
use nix::sys::signal::Signal;
use serde_json::Value;

/// Generous bound on the exit after a signal (the stop itself takes milliseconds).
const EXIT_LIMIT: Duration = Duration::from_secs(10);
/// What a run waiting for a signal would last without one.
const LONG: &str = "60s";

/// The record of an interrupted run, checked: exit 130, whole files, `interrupted` set.
fn interrupted(dir: &Path, finished: &Finished, signal: &str) -> Value {
    assert_eq!(finished.code, Some(130), "{}", finished.stderr);
    let record = valid_record(&dir.join("run.json"));
    let folder = assert_complete_results(&only_subfolder(&dir.join("results")));
    assert_eq!(record["summary"], folder["summary"]);
    assert_no_temporary_files(dir);
    assert_eq!(record["interrupted"], signal);
    let codes = warning_codes(&record);
    assert!(codes.contains(&"interrupted"), "{codes:?}");
    record
}

#[test]
fn a_signal_before_the_first_response_leaves_an_empty_valid_record() {
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        // A listener that accepts and never answers: the first request never completes.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let dir = temp_dir(&format!("sig-first-{signal}"));
        let run = spawn_volley(&dir, &[&url, "-d", LONG, "-c", "1", "--timeout", LONG], &[]);
        let mut accepted = None;
        wait_until("volley's first connection", EXIT_LIMIT, || {
            accepted = listener.accept().ok();
            accepted.is_some()
        });
        run.signal(signal);
        let finished = run.wait(EXIT_LIMIT);
        let record = interrupted(&dir, &finished, signal.as_str());
        assert_eq!(summary_u64(&record, "requests"), 0);
    }
}

/// Whether `pid` has `file` open.
fn has_open(pid: u32, file: &Path) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == file))
}

#[test]
fn a_signal_while_the_plan_loads_leaves_an_empty_valid_record() {
    // A plan with a 1M-row data file takes most of a second to load; the file is open while its
    // rows are read, and the signal is sent then.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let dir = temp_dir("sig-plan-load");
    let mut csv = String::from("id\n");
    for i in 0..1_000_000 {
        csv.push_str(&format!("ACC-{i:08}\n"));
    }
    let rows = dir.join("rows.csv");
    std::fs::write(&rows, csv).unwrap();
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"load\"\n[target]\nbase_url = \"http://{}\"\n\
             [data.rows]\nfile = \"rows.csv\"\n\
             [[scenario]]\nname = \"s\"\n\
             [scenario.load]\nprofile = \"constant-vus\"\nvus = 1\nduration = \"{LONG}\"\n\
             [[scenario.step]]\nname = \"get\"\npath = \"/{{{{ data.rows.id }}}}\"\n",
            listener.local_addr().unwrap()
        ),
    )
    .unwrap();
    let run = spawn_volley(&dir, &["run", plan.to_str().unwrap()], &[]);
    wait_until("volley reading the data file", EXIT_LIMIT, || {
        has_open(run.child.id(), &rows)
    });
    run.signal(Signal::SIGTERM);
    let finished = run.wait(EXIT_LIMIT);
    let record = interrupted(&dir, &finished, "SIGTERM");
    assert_eq!(summary_u64(&record, "requests"), 0);
    assert!(
        listener.accept().is_err(),
        "the run should have been stopped before it connected"
    );
}

#[test]
fn a_signal_during_warm_up_leaves_a_valid_record_with_nothing_measured() {
    let t = target();
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        let before = served(&t, "/", 200);
        let url = format!("{}/", t.base_url());
        let dir = temp_dir(&format!("sig-warmup-{signal}"));
        let run = spawn_volley(&dir, &[&url, "--warmup", LONG, "-d", "1s", "-c", "2"], &[]);
        wait_until("warm-up requests", EXIT_LIMIT, || {
            served(&t, "/", 200) > before + 10
        });
        run.signal(signal);
        let finished = run.wait(EXIT_LIMIT);
        let record = interrupted(&dir, &finished, signal.as_str());
        assert_eq!(
            summary_u64(&record, "requests"),
            0,
            "warm-up is not measured"
        );
    }
}

/// Whether process `pid` holds back SIGINT, SIGTERM and SIGHUP (`SigBlk` in its status).
fn holds_signals(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigBlk:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .unwrap_or(0);
    let bit = |s: Signal| 1u64 << (s as u32 - 1);
    [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP]
        .iter()
        .all(|s| mask & bit(*s) != 0)
}

/// A signal that comes while volley starts up — parsing its flags, before the handler's thread
/// runs — waits for the handler instead of killing it (59 runs of 60 died so, without a
/// record). Sent as soon as `main` has held the signals back (its first act; the microseconds
/// between `exec` and `main` are the only window left).
#[test]
fn a_signal_at_start_up_still_ends_in_a_record() {
    let t = target();
    let url = format!("{}/", t.base_url());
    for trial in 0..20 {
        let dir = temp_dir(&format!("sig-start-{trial}"));
        let signal = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP][trial % 3];
        let run = spawn_volley(&dir, &[&url, "-d", LONG, "-c", "1"], &[]);
        let pid = run.child.id();
        wait_until("volley to hold its signals", EXIT_LIMIT, || {
            holds_signals(pid)
        });
        run.signal(signal);
        let finished = run.wait(EXIT_LIMIT);
        interrupted(&dir, &finished, signal.as_str());
    }
}

#[test]
fn a_signal_mid_run_keeps_what_was_measured() {
    let t = target();
    // SIGHUP (the terminal closed) stops a run as SIGTERM does; it once left no file at all.
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        let before = served(&t, "/", 200);
        let url = format!("{}/", t.base_url());
        let dir = temp_dir(&format!("sig-mid-{signal}"));
        let run = spawn_volley(&dir, &[&url, "-d", LONG, "-c", "2"], &[]);
        wait_until("measured requests", EXIT_LIMIT, || {
            served(&t, "/", 200) > before + 200
        });
        run.signal(signal);
        let finished = run.wait(EXIT_LIMIT);
        let record = interrupted(&dir, &finished, signal.as_str());
        assert!(summary_u64(&record, "requests") >= 200);
        assert_eq!(status_of(&record, "200"), summary_u64(&record, "requests"));
        // The duration is what ran, not the 60 s asked for.
        assert!(summary_f64(&record, "duration_s") < 30.0);
    }
}

/// Starts a short run whose first atomic write (the `--json` record) pauses before its rename;
/// returns once it is paused there, with the marker's path.
fn paused_in_writing(
    t: &volley::server::RunningTarget,
    name: &str,
) -> (Spawned, std::path::PathBuf) {
    let dir = temp_dir(name);
    let marker = dir.join("paused");
    let url = format!("{}/", t.base_url());
    let marker_text = marker.display().to_string();
    let run = spawn_volley(
        &dir,
        &[&url, "-n", "200", "-c", "2"],
        &[(volley::record::PAUSE_ENV, marker_text.as_str())],
    );
    wait_until("the record's write to pause", EXIT_LIMIT, || {
        marker.exists()
    });
    // Paused: the temporary file is whole and the final one not there yet.
    assert!(!dir.join("run.json").exists());
    (run, marker)
}

#[test]
fn a_signal_while_the_record_is_written_lets_the_writing_finish() {
    let t = target();
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        let (run, marker) = paused_in_writing(&t, &format!("sig-writing-{signal}"));
        let dir = run.dir.clone();
        run.signal(signal);
        std::fs::remove_file(&marker).unwrap();
        let finished = run.wait(EXIT_LIMIT);
        // The run had finished: its record is whole and not marked interrupted; every
        // report is written.
        assert_eq!(finished.code, Some(0), "{}", finished.stderr);
        let record = valid_record(&dir.join("run.json"));
        assert!(record["interrupted"].is_null());
        assert_eq!(summary_u64(&record, "requests"), 200);
        let folder = assert_complete_results(&only_subfolder(&dir.join("results")));
        assert_eq!(record["summary"], folder["summary"]);
        assert_no_temporary_files(&dir);
    }
}

/// Sends SIGINT twice, the second once volley has said it got the first (two signals sent at
/// once may reach it as one: pending signals of a kind are not queued).
fn second_sigint(run: &Spawned) {
    run.signal(Signal::SIGINT);
    wait_until("volley to see the first SIGINT", EXIT_LIMIT, || {
        std::fs::read_to_string(run.dir.join("stderr.txt"))
            .is_ok_and(|e| e.contains("Ctrl-C again to exit at once"))
    });
    run.signal(Signal::SIGINT);
}

#[test]
fn a_second_sigint_exits_at_once_even_while_writing() {
    let t = target();
    let (run, marker) = paused_in_writing(&t, "sig-second-writing");
    let dir = run.dir.clone();
    second_sigint(&run);
    // The write would wait for the marker for 60 s: exiting now is the second SIGINT's doing.
    let finished = run.wait(Duration::from_secs(5));
    assert_eq!(finished.code, Some(130), "{}", finished.stderr);
    assert!(marker.exists(), "exited while still paused");
    // The complete file or nothing, and no temporary file left (one was, in 9 of 20 trials).
    assert!(!dir.join("run.json").exists());
    assert_no_temporary_files(&dir);
}

#[test]
fn a_second_sigint_mid_run_exits_at_once() {
    let t = target();
    let before = served(&t, "/", 200);
    let url = format!("{}/", t.base_url());
    let dir = temp_dir("sig-second-mid");
    let run = spawn_volley(&dir, &[&url, "-d", LONG, "-c", "2"], &[]);
    wait_until("measured requests", EXIT_LIMIT, || {
        served(&t, "/", 200) > before + 100
    });
    second_sigint(&run);
    let finished = run.wait(EXIT_LIMIT);
    assert_eq!(finished.code, Some(130), "{}", finished.stderr);
    // Whatever got written before the exit is whole.
    for path in [dir.join("run.json")] {
        if path.exists() {
            valid_record(&path);
        }
    }
}

/// `volley serve` stops cleanly on SIGINT, SIGTERM and SIGHUP (a closed terminal), exit 0;
/// SIGHUP once killed it by the default action.
#[test]
fn serve_stops_cleanly_on_each_signal() {
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // The banner is written once the handlers are in place.
        let (child, line) = common::serve_process();
        assert!(line.contains("listening on"), "{line}");
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{signal}: {stderr}");
        assert!(
            stderr.contains("volley serve: stopping"),
            "{signal}: {stderr}"
        );
    }
}
