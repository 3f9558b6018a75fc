use super::*;
use crate::plan::read::{ReadOptions, read_str};
use crate::record::error_kind::ErrorKind;
use crate::record::recorder::{GroupInterval, new_histogram};

fn plan() -> Plan {
    let text = "[target]\nbase_url = \"http://127.0.0.1:9\"\n\
        [[scenario]]\nname = \"browse\"\n[scenario.load]\nprofile = \"constant-vus\"\n\
        vus = 4\nduration = \"8s\"\n[[scenario.step]]\nname = \"home\"\npath = \"/\"\n";
    read_str(
        text,
        std::path::Path::new("t.toml"),
        &ReadOptions::default(),
    )
    .and_then(|d| d.prepare())
    .unwrap()
}

fn snapshot(second: u64, groups: &[usize]) -> IntervalSnapshot {
    let mut latency = new_histogram();
    latency.record(2_000).unwrap();
    latency.record(40_000).unwrap();
    let counters = Counters {
        requests: 3,
        errors: 1,
        ..Counters::default()
    };
    let tally = Tally {
        statuses: vec![(200, 2)],
        errors: vec![(ErrorKind::Timeout, 1)],
        dropped: 0,
        completed: 3,
        streams: crate::record::recorder::StreamTally {
            streams: 1,
            received: 5,
            sent: 2,
        },
    };
    IntervalSnapshot {
        second,
        span_s: 1.0,
        counters,
        latency: latency.clone(),
        in_flight: 1,
        groups: groups
            .iter()
            .map(|&group| GroupInterval {
                group,
                counters,
                latency: latency.clone(),
                tally: tally.clone(),
            })
            .collect(),
        checks: Vec::new(),
        tally,
        breakdown: Default::default(),
    }
}

fn second(t_s: u64, in_flight: u64) -> SecondStats {
    SecondStats::without_responses(t_s, 1.0, in_flight)
}

#[test]
fn the_scopes_add_up_the_workers_seconds() {
    let plan = plan();
    let shared = shared();
    let mut e = Exporter::new(&plan, shared.clone());
    assert!(e.wants_groups());
    let published = || shared.lock().unwrap().clone();
    // Before the run: every scope at zero, the gauges of the plan's models present.
    let zero = published();
    assert_eq!(zero.scopes.len(), 3, "{zero:?}");
    assert_eq!(zero.scopes[0].active_vus, Some(0));
    assert_eq!(zero.scopes[0].asked_per_s, None);
    let groups: Vec<usize> = (0..plan.groups.len()).collect();
    let start = Instant::now();
    e.start(&Clock {
        start,
        measure_start: start,
        measured: Some(Duration::from_secs(8)),
    });
    // Two workers, two seconds each.
    for s in [0, 0, 1, 1] {
        e.interval(&snapshot(s, &groups));
    }
    e.second(&second(1, 2));
    e.tick(&Live {
        now: start + Duration::from_secs(2),
        requests: 0,
        errors: 0,
    });
    let now = published();
    let whole = &now.scopes[0];
    assert_eq!(whole.requests, 12);
    assert_eq!(whole.statuses, vec![(200, 8)]);
    assert_eq!(whole.errors, vec![("timeout", 4)]);
    assert_eq!(whole.latency.count, 8);
    assert_eq!(whole.in_flight, Some(2));
    assert_eq!(whole.active_vus, Some(4));
    // Second 1: 2 workers × 3 completed iterations.
    assert_eq!(whole.achieved_per_s, Some(6.0));
    let streams = whole.streams.unwrap();
    assert_eq!(
        (streams.streams, streams.received, streams.sent),
        (4, 20, 8)
    );
    let series = super::super::series(&now);
    let sent = series.iter().find(|s| {
        s.name == "volley_stream_messages_total"
            && s.labels.contains(&("direction".into(), "sent".into()))
            && s.labels.contains(&("step".into(), String::new()))
    });
    assert_eq!(sent.map(|s| s.value), Some(8.0));
    let step = now.scopes.iter().find(|s| s.step == "home").unwrap();
    assert_eq!((step.scenario.as_str(), step.requests), ("browse", 12));
    assert_eq!(step.achieved_per_s, None);
    assert_eq!(step.in_flight, None);
    let scenario = now
        .scopes
        .iter()
        .find(|s| s.scenario == "browse" && s.step.is_empty());
    assert_eq!(scenario.unwrap().active_vus, Some(4));
    // After the run: nothing runs, the counters stay.
    e.finish();
    let end = published();
    assert_eq!(end.scopes[0].active_vus, Some(0));
    assert_eq!(end.scopes[0].in_flight, Some(0));
    assert_eq!(end.scopes[0].requests, 12);
}

#[test]
fn the_generator_gauges_are_sampled_a_second_apart() {
    let shared = shared();
    let mut e = Exporter::new(&plan(), shared.clone());
    let t0 = Instant::now();
    let mut tick = |at: Duration| {
        e.tick(&Live {
            now: t0 + at,
            requests: 0,
            errors: 0,
        });
        shared.lock().unwrap().scopes[0].clone()
    };
    let first = tick(Duration::ZERO);
    assert_eq!((first.generator_cpu, first.generator_steal), (None, None));
    // The machine's counters move in ticks of 10 ms: wait for the next one, so that the second
    // reading has CPU time to share out.
    let read = CpuTimes::now();
    while read.is_some() && CpuTimes::now().map(|t| t.total) == read.map(|t| t.total) {
        std::hint::spin_loop();
    }
    let second = tick(Duration::from_secs(1));
    assert!(second.generator_cpu.is_some_and(|c| c >= 0.0), "{second:?}");
    if read.is_some() {
        let steal = second.generator_steal;
        assert!(steal.is_some_and(|s| (0.0..=1.0).contains(&s)), "{steal:?}");
        let page = super::super::exposition::render(&shared.lock().unwrap());
        assert!(page.contains("volley_generator_steal_ratio{scenario=\"\",step=\"\"} "));
    }
}

#[test]
fn the_latency_buckets_add_up_like_the_histogram() {
    let mut a = new_histogram();
    let mut b = new_histogram();
    for us in [90, 800, 1_500] {
        a.record(us).unwrap();
    }
    for us in [1_500, 40_000, 90_000_000] {
        b.record(us).unwrap();
    }
    let mut sum = super::super::LatencyBuckets::from_hdr_us(&a);
    sum.add_hdr_us(&b);
    let _ = a.add(&b);
    let whole = super::super::LatencyBuckets::from_hdr_us(&a);
    assert_eq!(sum.le, whole.le);
    assert_eq!(sum.count, 6);
    // ≤ 100 µs: 1; ≤ 1 ms: 2; ≤ 2.5 ms: 4; ≤ 60 s: 5 (90 s only in +Inf).
    assert_eq!((sum.le[0], sum.le[3], sum.le[4], sum.le[17]), (1, 2, 4, 5));
}
