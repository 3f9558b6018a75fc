//! The whole frame at the size the tests' terminal has (132×42), drawn into a buffer: the
//! `--group-by` and `--watch` panels appear when the run has them, and the other panels keep
//! their place.

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::{View, draw};
use crate::engine::Clock;
use crate::plan::Plan;
use crate::plan::read::{ReadOptions, read_str};
use crate::record::recorder::{IntervalSnapshot, ValueInterval, ValueKey};
use crate::run::live_view::state::State;
use crate::run::watching::{ProcessNow, ProcessState, WatchNow};

fn plan(extra_target: &str, watch: &str) -> Plan {
    let text = format!(
        "[target]\nbase_url = \"http://127.0.0.1:9\"\n{extra_target}\n\
         [[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"constant-vus\"\n\
         vus = 4\nduration = \"8s\"\n[[scenario.step]]\nname = \"a\"\npath = \"/\"\n{watch}"
    );
    read_str(
        &text,
        std::path::Path::new("t.toml"),
        &ReadOptions::default(),
    )
    .and_then(|d| d.prepare())
    .unwrap()
}

fn state(plan: Plan) -> State {
    let start = Instant::now();
    let clock = Clock {
        start,
        measure_start: start,
        measured: Some(Duration::from_secs(8)),
    };
    State::new(plan, clock)
}

fn screen(state: &State) -> String {
    let mut term = Terminal::new(TestBackend::new(132, 42)).unwrap();
    let view = View {
        state,
        stopping: false,
        color: false,
    };
    term.draw(|f| draw(f, &view)).unwrap();
    let buffer = term.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn value(v: &[u8], exchanges: u64, latency_us: u64) -> ValueInterval {
    ValueInterval {
        key: ValueKey::Value(v.into()),
        exchanges,
        errors: 0,
        latency_us: vec![(latency_us, exchanges)],
    }
}

/// The panels every run's screen has, with or without group-by tables and watches.
fn assert_panels(text: &str) {
    for panel in [
        "status codes",
        "scenarios, steps and phases",
        "generator",
        "thresholds",
    ] {
        assert!(text.contains(panel), "{panel}:\n{text}");
    }
}

#[test]
fn without_group_by_or_watch_nothing_changes() {
    let text = screen(&state(plan("", "")));
    assert!(!text.contains("grouped by"), "{text}");
    assert!(!text.contains("--watch"), "{text}");
    assert_panels(&text);
}

#[test]
fn cpu_steal_is_in_the_generator_panel_when_it_can_be_read() {
    let mut s = state(plan("", ""));
    assert!(!screen(&s).contains("CPU steal"));
    s.steal = Some(crate::run::live_view::state::StealNow {
        last_second: 0.005,
        so_far: 0.0234,
    });
    let text = screen(&s);
    assert!(
        text.contains("CPU steal (hypervisor): 0.50% last second, 2.3% since the start"),
        "{text}"
    );
    assert_panels(&text);
}

#[test]
fn group_by_values_and_watched_figures_have_panels_of_their_own() {
    let mut s = state(plan(
        "group_by = [\"header:X-Backend\", \"status\"]",
        "[[watch]]\npid = 1\n",
    ));
    let mut snapshot = IntervalSnapshot::of_requests(0, 100, 1_000);
    snapshot.breakdown.grouped = vec![
        vec![value(b"b1", 75, 1_000), value(b"b2", 25, 40_000)],
        vec![value(b"200", 100, 1_000)],
    ];
    s.interval(&snapshot);
    let mut second = crate::record::series::SecondStats::without_responses(0, 1.0, 0);
    second.requests = 100;
    s.second(&second);
    s.watched = Some(WatchNow {
        prom: Vec::new(),
        processes: vec![ProcessNow {
            pid: 1,
            command: "init".into(),
            state: ProcessState::Sampled {
                cpu_cores: 0.5,
                rss_bytes: 10 << 20,
            },
        }],
    });
    let text = screen(&s);
    assert!(
        text.contains("grouped by header:X-Backend · 2 value(s)"),
        "{text}"
    );
    assert!(text.contains("grouped by status · 1 value(s)"), "{text}");
    let row = |v: &str| {
        text.lines()
            .find(|l| l.contains(&format!("│{v} ")))
            .unwrap_or_else(|| panic!("no row {v}:\n{text}"))
            .to_string()
    };
    let b1 = row("b1");
    let b1: Vec<&str> = b1.split_whitespace().collect();
    // value, share %, req/s (the latest merged second's), p99 ms, errors
    assert_eq!(&b1[..5], ["│b1", "75.0", "75", "1.00", "0"], "{text}");
    assert!(row("b2").contains("40.0"), "b2's p99: {text}");
    assert!(
        text.contains("pid 1 (init): CPU 50.0% · RSS 10.0 MiB"),
        "{text}"
    );
    assert_panels(&text);
}

#[test]
fn a_run_with_streams_shows_their_latencies_under_the_requests() {
    let text = screen(&state(plan("", "")));
    assert!(!text.contains("first message"), "no streams: {text}");
    let mut s = state(plan("", "websocket = { count = 3 }"));
    let text = screen(&s);
    let row = |text: &str, name: &str| {
        let line = text.lines().find(|l| l.contains(name));
        let line = line.unwrap_or_else(|| panic!("no row {name}:\n{text}"));
        line.split('│')
            .nth(1)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    // Before the first stream ends, its rows wait.
    assert!(row(&text, "first message").ends_with('-'), "{text}");
    let mut snapshot = IntervalSnapshot::of_requests(0, 10, 1_000);
    let mut l = crate::record::recorder::StreamLatencies::default();
    l.first.record(2_000).unwrap();
    l.gap.record_n(10_000, 2).unwrap();
    l.round_trip.record_n(25_000, 3).unwrap();
    snapshot.breakdown.streams = Some(Box::new(l));
    s.interval(&snapshot);
    let text = screen(&s);
    let figures = |name: &str| {
        let r = row(&text, name);
        r.split_whitespace()
            .skip(name.split(' ').count())
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(figures("first message"), ["2.00"; 3], "{text}");
    assert!(
        figures("message gap").iter().all(|f| f.starts_with("10.0")),
        "{text}"
    );
    assert!(
        figures("round trip").iter().all(|f| f.starts_with("25.0")),
        "{text}"
    );
    assert_panels(&text);
}

#[test]
fn the_group_rows_show_each_groups_p99_with_its_interval_once_it_has_one() {
    let mut s = state(plan("", ""));
    let before = screen(&s);
    assert!(before.contains("p99 ms (95 %)"), "{before}");
    let bound = crate::record::model::Bound {
        value: 5.38,
        half_width: 0.02,
        batches: 8,
        batch_s: 1,
        effective: 8.0,
    };
    s.group_ci95 = vec![
        crate::record::model::Ci95::default(),
        crate::record::model::Ci95 {
            p99_ms: Some(bound),
            ..Default::default()
        },
    ];
    let after = screen(&s);
    let row = after
        .lines()
        .find(|l| l.contains("step") && l.contains(" a "))
        .expect("the step's row");
    assert!(row.contains("5.38 ± 0.020"), "{row}");
}

#[test]
fn the_header_says_how_precise_the_goals_are_so_far() {
    let mut s = state(plan(
        "[precision]\np50 = \"2%\"\n\"p99{step=a}\" = \"5%\"\n",
        "",
    ));
    let before = screen(&s);
    assert!(
        before.contains(
            "precision: p50 no interval yet (asked ±2 %), p99{step=a} no interval yet (asked ±5 %)"
        ),
        "{before}"
    );
    let bound = |value, half_width| crate::record::model::Bound {
        value,
        half_width,
        batches: 8,
        batch_s: 1,
        effective: 8.0,
    };
    s.ci95 = Some(crate::record::model::Ci95 {
        p50_ms: Some(bound(2.0, 0.02)),
        ..Default::default()
    });
    s.group_ci95 = vec![
        crate::record::model::Ci95::default(),
        crate::record::model::Ci95 {
            p99_ms: Some(bound(5.0, 0.4)),
            ..Default::default()
        },
    ];
    let after = screen(&s);
    assert!(
        after.contains("precision: p50 ±1.0 % (asked ±2 %), p99{step=a} ±8.0 % (asked ±5 %)"),
        "{after}"
    );
}

#[test]
fn the_group_rows_show_the_latest_full_seconds_rate_while_a_worker_is_ahead() {
    let mut s = state(plan("", ""));
    let snapshot = |second, requests| {
        let mut snapshot = IntervalSnapshot::of_requests(second, requests, 1_000);
        snapshot.breakdown.groups = vec![snapshot.counters; 2];
        snapshot
    };
    s.interval(&snapshot(0, 100));
    let mut second = crate::record::series::SecondStats::without_responses(0, 1.0, 0);
    second.requests = 100;
    s.second(&second);
    // One worker has reported second 1 (and a phase change cut it short) before the others did.
    s.interval(&snapshot(1, 40));
    let mut partial = crate::record::series::SecondStats::without_responses(1, 0.4, 0);
    partial.requests = 40;
    s.second(&partial);
    let text = screen(&s);
    let row = text
        .lines()
        .find(|l| l.contains("step") && l.contains(" a "))
        .expect("the step's row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells[3..6],
        ["140", "100", "0"],
        "requests, req/s, errors: {row}"
    );
}
