//! The live view's panels for what a run is asked to show, for real in tmux (132×42): the
//! `--group-by` panel against the built-in target answering as three backends (one of them
//! slow), checked against the record's `grouped` table; and the `--watch` panel with a
//! `volley serve` process and its `/metrics` page watched, checked against the record's
//! `watch` section. Skipped (loudly) only when tmux is not installed.

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::tmux::{Tmux, number_before, pane_command};
use serde_json::Value;
use volley::server::{self, Backends, TargetConfig};

/// The cells of the screen's row whose first cell is `first` (`│b1  33.3  120 …│`), split on
/// blanks: value, share %, req/s, p99 ms, errors.
fn row(screen: &str, first: &str) -> Option<Vec<String>> {
    screen.lines().find_map(|line| {
        let cell = line
            .split('│')
            .find(|c| c.split_whitespace().next() == Some(first))?;
        Some(cell.split_whitespace().map(str::to_string).collect())
    })
}

fn num(cell: &str) -> f64 {
    cell.replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {cell}"))
}

/// The q key, then the exit and the record.
fn stop(tmux: &Tmux, dir: &Path) -> Value {
    tmux.keys("q");
    let exit = dir.join("exit");
    common::wait_until("volley to exit after q", Duration::from_secs(30), || {
        exit.exists()
    });
    common::valid_record(&dir.join("run.json"))
}

#[test]
fn the_group_by_panel_shows_each_values_share_rate_and_p99() {
    let _serial = common::serial();
    let ms = Duration::from_millis;
    let target = server::spawn_with_backends(
        TargetConfig {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            threads: 1,
            capacity: None,
        },
        Backends::new(3, &[ms(1), ms(1), ms(40)]).unwrap(),
    )
    .expect("target starts");
    let dir = common::temp_dir("live-view-group-by");
    let args = format!(
        "{}/ -c 6 -d 60s --threads 2 --group-by header:X-Backend",
        target.base_url()
    );
    let command = pane_command(&dir, &args, "TERM=xterm-256color");
    let Some(tmux) = Tmux::start(&dir, &command) else {
        return;
    };
    let mut screen = String::new();
    let rows = |screen: &str| ["b1", "b2", "b3"].map(|b| row(screen, b));
    common::wait_until("the group-by panel", Duration::from_secs(30), || {
        screen = tmux.screen();
        // A merged second at least: a rate for each value, and a p99 for each.
        screen.contains("grouped by header:X-Backend · 3 value(s)")
            && rows(&screen).iter().all(|r| {
                r.as_ref()
                    .is_some_and(|r| r.len() == 5 && r[2] != "0" && r[3] != "-")
            })
    });
    let [b1, b2, b3] = rows(&screen).map(Option::unwrap);
    let shares: Vec<f64> = [&b1, &b2, &b3].iter().map(|r| num(&r[1])).collect();
    for (b, share) in ["b1", "b2", "b3"].iter().zip(&shares) {
        assert!((25.0..=42.0).contains(share), "{b}: {share}%\n{screen}");
    }
    let total: f64 = shares.iter().sum();
    assert!((total - 100.0).abs() <= 0.3, "{total}\n{screen}");
    // The slow backend's p99 is its 40 ms; the others' well under it.
    let p99: Vec<f64> = [&b1, &b2, &b3].iter().map(|r| num(&r[3])).collect();
    assert!(p99[2] >= 38.0, "b3 waits 40 ms: {p99:?}\n{screen}");
    assert!(p99[0] < p99[2] && p99[1] < p99[2], "{p99:?}\n{screen}");
    for r in [&b1, &b2, &b3] {
        assert_eq!(r[4], "0", "no errors\n{screen}");
    }
    // The rates of one merged second add up to the run's requests/s of that second (each
    // worker's snapshot cuts its second a little differently for the two).
    let rates: f64 = [&b1, &b2, &b3].iter().map(|r| num(&r[2])).sum();
    let now = number_before(&screen, " now · last 60 s").expect("requests/s now") as f64;
    assert!(
        (rates - now).abs() <= 0.25 * now + 10.0,
        "values {rates}/s, run {now}/s\n{screen}"
    );

    let record = stop(&tmux, &dir);
    let table = record["grouped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["selector"] == "header:X-Backend")
        .unwrap_or_else(|| panic!("no table: {}", record["grouped"]));
    let values = table["values"].as_array().unwrap();
    let names: Vec<&str> = values
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b1", "b2", "b3"], "the values the panel showed");
    for (v, (shown_share, shown_p99)) in values.iter().zip(shares.iter().zip(&p99)) {
        let share = v["share_pct"].as_f64().unwrap();
        assert!(
            (share - shown_share).abs() <= 5.0,
            "{}: record {share}%, screen {shown_share}%",
            v["value"]
        );
        // Within a factor 2, give or take 5 ms: a fast value's p99 is its few slowest
        // requests, and the screen was read seconds before the run ended (the full suite on 2
        // CPUs once gave 4.28 ms on screen against 10.7 ms for the whole run).
        let p99 = v["latency_ms"]["p99"].as_f64().unwrap();
        assert!(
            *shown_p99 >= p99 * 0.5 - 5.0 && *shown_p99 <= p99 * 2.0 + 5.0,
            "{}: record p99 {p99} ms, screen {shown_p99} ms",
            v["value"]
        );
    }
}

/// `volley serve` as a process of its own on a free port, answering; killed by the caller.
fn serve() -> (std::process::Child, String) {
    let port = common::closed_port();
    let child = Command::new(env!("CARGO_BIN_EXE_volley"))
        .args(["serve", "--port", &port.to_string(), "--threads", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    common::wait_until("volley serve answers", Duration::from_secs(20), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    (child, format!("http://127.0.0.1:{port}"))
}

/// Kills the serve process by its pid when the test ends, passed or not.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_watch_panel_shows_the_targets_cpu_rss_and_scraped_figures() {
    let _serial = common::serial();
    let (child, base) = serve();
    let served = Killed(child);
    let pid = served.0.id();
    let dir = common::temp_dir("live-view-watch");
    let args = format!(
        "{base}/ -c 4 -d 60s --threads 1 --watch pid={pid} --watch prom={base}/metrics \
         --watch-metric volley_target_requests_total"
    );
    let command = pane_command(&dir, &args, "TERM=xterm-256color");
    let Some(tmux) = Tmux::start(&dir, &command) else {
        return;
    };
    let mut screen = String::new();
    let figure = "volley_target_requests_total{path=\"/\",status=\"200\"} (per s): ";
    // A few scrapes in: the latest figures are those of a loaded second (the first ones may
    // describe the moment before the load).
    common::wait_until("the watch panel", Duration::from_secs(30), || {
        screen = tmux.screen();
        screen.contains(" · RSS ")
            && screen.contains(figure)
            && number_before(&screen, " scrapes,").is_some_and(|n| n >= 4)
    });
    assert!(screen.contains("target (--watch)"), "{screen}");
    let line = screen
        .lines()
        .find(|l| l.contains(&format!("pid {pid} (")))
        .unwrap_or_else(|| panic!("no line for pid {pid}:\n{screen}"));
    assert!(line.contains("serve"), "the command: {line}");
    let after = |label: &str, unit: &str| -> f64 {
        let from = line.find(label).unwrap() + label.len();
        let to = from + line[from..].find(unit).unwrap();
        num(line[from..to].trim())
    };
    let (cpu_pct, rss_mib) = (after("CPU ", "%"), after("RSS ", "MiB"));
    assert!(cpu_pct >= 0.0, "{line}");
    assert!((1.0..4096.0).contains(&rss_mib), "{line}");
    let prom = screen
        .lines()
        .find(|l| l.contains("prom http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no prom line:\n{screen}"));
    assert!(prom.contains(" failed"), "{prom}");
    let at = screen.find(figure).unwrap() + figure.len();
    let target_rate = num(screen[at..].split_whitespace().next().unwrap());
    let now = number_before(&screen, " now · last 60 s").expect("requests/s now") as f64;
    // The target counts what volley sent: about the same rate (different cuts of time).
    assert!(
        target_rate > 0.0 && (target_rate - now).abs() <= 0.5 * now + 50.0,
        "target {target_rate}/s, volley {now}/s\n{screen}"
    );

    let record = stop(&tmux, &dir);
    let p = &record["watch"]["processes"][0];
    assert_eq!(p["pid"].as_u64(), Some(u64::from(pid)), "{p:#}");
    let peak_mib = p["peak_rss_bytes"].as_f64().unwrap() / (1024.0 * 1024.0);
    assert!(
        rss_mib <= peak_mib * 1.05 + 0.1 && rss_mib >= peak_mib * 0.5,
        "screen RSS {rss_mib} MiB, record's peak {peak_mib} MiB"
    );
    assert!(p["mean_cores"].as_f64().unwrap() > 0.0, "{p:#}");
    assert!(record["watch"]["prom"][0]["scrapes"].as_u64().unwrap() >= 2);
}

#[test]
fn a_run_with_streams_shows_their_latencies_as_the_record_has_them() {
    let _serial = common::serial();
    let target = common::target();
    let dir = common::temp_dir("live-view-streams");
    // Each WebSocket message echoed after 5 ms, the next sent after each reply: every round
    // trip and every gap is the delay.
    let plan = dir.join("plan.toml");
    let text = format!(
        "[target]\nbase_url = \"{}\"\n[[scenario]]\nname = \"ws\"\n[scenario.load]\n\
         profile = \"constant-vus\"\nvus = 2\nduration = \"60s\"\n[[scenario.step]]\n\
         name = \"chat\"\npath = \"/ws?delay_ms=5\"\nbody = \"hi\"\n\
         websocket = {{ count = 4, echo = true }}\n",
        target.base_url()
    );
    std::fs::write(&plan, text).unwrap();
    let args = format!("run {} --threads 1", plan.display());
    let command = pane_command(&dir, &args, "TERM=xterm-256color");
    let Some(tmux) = Tmux::start(&dir, &command) else {
        return;
    };
    let mut screen = String::new();
    let figures = |screen: &str, name: &str| {
        let first = name.split(' ').next().unwrap();
        let r = row(screen, first)?;
        let cells = r.len() == 3 + name.split(' ').count() && r.last()? != "-";
        cells.then(|| r[r.len() - 3..].iter().map(|c| num(c)).collect::<Vec<_>>())
    };
    common::wait_until("the stream latency rows", Duration::from_secs(30), || {
        screen = tmux.screen();
        ["first message", "message gap", "round trip"]
            .iter()
            .all(|n| figures(&screen, n).is_some())
    });
    let round_trip = figures(&screen, "round trip").unwrap();
    let gap = figures(&screen, "message gap").unwrap();
    for (what, p) in [("round trip", &round_trip), ("gap", &gap)] {
        assert!((5.0..7.0).contains(&p[0]), "{what} p50 {p:?}\n{screen}");
    }
    let record = stop(&tmux, &dir);
    let group = record["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["kind"] == "step" && g["name"] == "chat")
        .expect("the step's group");
    let recorded = group["streams"]["sent"]["round_trip_ms"]["p50"]
        .as_f64()
        .unwrap();
    assert!(
        (recorded - round_trip[0]).abs() <= 0.5,
        "record p50 {recorded} ms, screen {round_trip:?}"
    );
}
