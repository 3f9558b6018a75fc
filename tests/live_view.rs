//! The live terminal view, for real: volley runs in a tmux session of a fixed size against the
//! built-in target; the test reads the screen with `tmux capture-pane`, checks the figures on it
//! against the run's record, stops the run with `q`, and checks that the record is complete and
//! the terminal given back. Skipped (loudly) only when tmux is not installed.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::tmux::{Tmux, number_before, pane_command, status_count};

#[test]
fn the_live_view_shows_the_run_and_q_stops_it_with_its_record() {
    let _serial = common::serial();
    let target = common::target();
    let dir = common::temp_dir("live-view");
    let url = format!("http://{}/", target.addr());
    let Some(tmux) = Tmux::start(
        &dir,
        &pane_command(
            &dir,
            &format!("{url} -c 4 -d 60s --threads 2"),
            "TERM=xterm-256color",
        ),
    ) else {
        return;
    };
    // The view is up once it shows figures: seconds measured and 200s counted.
    let mut screen = String::new();
    common::wait_until(
        "the live view to show figures",
        Duration::from_secs(30),
        || {
            screen = tmux.screen();
            screen.contains("last second") && status_count(&screen, "200").is_some_and(|n| n >= 100)
        },
    );
    assert!(
        tmux.alternate_on(),
        "the view draws on the alternate screen:\n{screen}"
    );
    assert!(screen.contains(&url), "the URL is in the title:\n{screen}");
    assert!(
        screen.contains("VUs (closed model)"),
        "the load shape:\n{screen}"
    );
    assert!(screen.contains("q or Ctrl-C"), "{screen}");
    let shown_requests = number_before(&screen, " requests ·").expect("a request count");
    let shown_200 = status_count(&screen, "200").unwrap();
    tmux.keys("q");
    let exit = dir.join("exit");
    common::wait_until("volley to exit after q", Duration::from_secs(30), || {
        exit.exists()
    });
    let code = std::fs::read_to_string(&exit).unwrap();
    assert_eq!(
        code.trim(),
        "130",
        "stopped early, as Ctrl-C: {}",
        tmux.screen()
    );

    let record = common::valid_record(&dir.join("run.json"));
    assert_eq!(
        record["interrupted"], "key q",
        "the record says how it ended"
    );
    let requests = common::summary_u64(&record, "requests");
    let ok = common::status_of(&record, "200");
    assert_eq!(ok, requests, "only 200s: {record}");
    assert!(
        shown_requests <= requests && shown_200 <= ok,
        "the screen showed {shown_requests} requests ({shown_200} × 200) before the record's \
         {requests} ({ok} × 200)"
    );
    // Order of magnitude: the view showed what the run had done a moment before `q`.
    assert!(
        requests < shown_requests.max(1) * 10,
        "screen {shown_requests} vs record {requests}"
    );
    assert!(
        common::summary_f64(&record, "duration_s") < 50.0,
        "stopped early"
    );
    common::assert_complete_results(&volley_results(&dir));

    // The terminal is back: the primary screen with the summary, cooked mode and echo on.
    let after = tmux.history();
    assert!(
        !tmux.alternate_on(),
        "still on the alternate screen:\n{after}"
    );
    assert!(
        after.contains("Interrupted (key q)"),
        "the summary is printed:\n{after}"
    );
    let stty = std::fs::read_to_string(dir.join("stty.txt")).unwrap();
    let modes: Vec<&str> = stty.split_whitespace().collect();
    for mode in ["icanon", "echo", "isig"] {
        assert!(modes.contains(&mode), "{mode} not restored: {stty}");
    }
}

fn volley_results(dir: &Path) -> PathBuf {
    common::only_subfolder(&dir.join("results"))
}

/// `--no-tui`, and `CI=true` without it, keep the one-line progress: the pane never switches
/// to the alternate screen and shows the progress line while the run goes.
#[test]
fn no_tui_and_ci_keep_the_progress_line() {
    let _serial = common::serial();
    let target = common::target();
    let url = format!("http://{}/", target.addr());
    for (name, flags, env) in [("no-tui", "--no-tui", ""), ("ci", "", "CI=true")] {
        let dir = common::temp_dir(&format!("live-view-{name}"));
        let Some(tmux) = Tmux::start(
            &dir,
            &pane_command(&dir, &format!("{url} -c 2 -d 4s {flags}"), env),
        ) else {
            return;
        };
        let mut screen = String::new();
        let mut alternate = false;
        common::wait_until("the progress line", Duration::from_secs(30), || {
            screen = tmux.screen();
            alternate |= tmux.alternate_on();
            screen.contains(" req/s ") && screen.contains("s / 4.0s]")
        });
        common::wait_until("volley to exit", Duration::from_secs(30), || {
            alternate |= tmux.alternate_on();
            dir.join("exit").exists()
        });
        assert!(!alternate, "{name}: the live view started:\n{screen}");
        assert!(!screen.contains("status codes"), "{name}: {screen}");
        let code = std::fs::read_to_string(dir.join("exit")).unwrap();
        assert_eq!(code.trim(), "0", "{name}: {}", tmux.screen());
    }
}

#[test]
fn a_scenario_that_has_done_its_iterations_says_finished() {
    let _serial = common::serial();
    let target = common::target();
    let dir = common::temp_dir("live-view-finished");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "[target]\nbase_url = \"http://{}\"\n\
             [[scenario]]\nname = \"quick\"\n[scenario.load]\nprofile = \"iterations\"\n\
             vus = 1\niterations = 5\n[[scenario.step]]\nname = \"a\"\npath = \"/\"\n\
             [[scenario]]\nname = \"long\"\n[scenario.load]\nprofile = \"constant-vus\"\n\
             vus = 1\nduration = \"60s\"\n[[scenario.step]]\nname = \"b\"\npath = \"/\"\n",
            target.addr()
        ),
    )
    .unwrap();
    let command = pane_command(
        &dir,
        &format!("run {}", plan.display()),
        "TERM=xterm-256color",
    );
    let Some(tmux) = Tmux::start(&dir, &command) else {
        return;
    };
    let mut screen = String::new();
    common::wait_until("the finished scenario", Duration::from_secs(30), || {
        screen = tmux.screen();
        screen.contains("quick: finished (5 iterations)")
    });
    assert!(screen.contains("long: 1 VU (closed model)"), "{screen}");
    tmux.keys("q");
    let exit = dir.join("exit");
    common::wait_until("volley to exit after q", Duration::from_secs(30), || {
        exit.exists()
    });
    common::valid_record(&dir.join("run.json"));
}
