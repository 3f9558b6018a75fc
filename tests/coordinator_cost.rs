//! The coordinator's cost per generator (`bench/coordinator.sh`; ignored in the test suite):
//! a real `volley coordinate` process, and N simulated generators (threads of this process)
//! that register and then post one snapshot per second each, as a generator at
//! `VOLLEY_BENCH_RPS` requests per second would (its latencies spread over the histogram as a
//! real run's are). Samples the coordinator's CPU time and resident memory from `/proc` and
//! prints them per generator and per second.
//!
//! `VOLLEY_BENCH_WORKERS` (default 50), `VOLLEY_BENCH_SECONDS` (default 30),
//! `VOLLEY_BENCH_RPS` (default 2000).

mod common;

use std::time::{Duration, Instant};

use volley::distributed::join::client::CoordinatorClient;
use volley::distributed::wire::{Poll, Register, Registered, Reply, Snapshot, StartReply, path};
use volley::record::recorder::{Counters, IntervalSnapshot, new_histogram};

const TOKEN: &str = "bench-token";

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// (CPU seconds, resident bytes) of process `pid`.
fn usage(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    // /proc counts in USER_HZ, 100 on Linux whatever the kernel's own tick.
    let hz = 100.0;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let rss_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|l| l.trim().strip_suffix("kB"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    (ticks / hz, rss_kib * 1024)
}

/// One second of a generator at `rps` requests per second, latencies around 1–20 ms.
fn second(k: u64, rps: u64) -> IntervalSnapshot {
    let mut latency = new_histogram();
    for _ in 0..rps {
        let us = 800.0 * (fastrand::f64() * 3.2).exp();
        latency.record(us as u64).unwrap();
    }
    IntervalSnapshot {
        second: k,
        span_s: 1.0,
        counters: Counters {
            requests: rps,
            bytes_sent: rps * 80,
            bytes_received: rps * 200,
            ..Counters::default()
        },
        latency,
        in_flight: 10,
        groups: Vec::new(),
        checks: Vec::new(),
        tally: Default::default(),
        breakdown: Default::default(),
    }
}

/// A simulated generator: registers, waits for the start, posts `seconds` snapshots.
fn generator(url: String, seconds: u64, rps: u64) {
    let client = CoordinatorClient::new(&url, TOKEN).unwrap();
    let r: Registered = client
        .post(
            path::REGISTER,
            &Register {
                plan_hash: "sha256:bench".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                index: None,
                count: None,
                host: "bench".into(),
                whole: None,
            },
        )
        .unwrap();
    let poll = Poll { share: r.index };
    loop {
        match client.post::<_, StartReply>(path::START, &poll).unwrap() {
            StartReply::Start { .. } => break,
            StartReply::Failed { error } => panic!("{error}"),
            StartReply::Waiting { .. } => std::thread::sleep(Duration::from_millis(200)),
        }
    }
    let begin = Instant::now();
    for k in 0..seconds {
        // Made before its second is due, as a generator's observer has it ready then.
        let body = Snapshot::of(r.index, &second(k, rps));
        let due = begin + Duration::from_secs(k + 1);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        let _: Reply = client.post(path::SNAPSHOT, &body).unwrap();
    }
}

#[test]
#[ignore = "a measurement (bench/coordinator.sh), not a test"]
fn coordinator_cost_per_generator() {
    let workers = env_or("VOLLEY_BENCH_WORKERS", 50);
    let seconds = env_or("VOLLEY_BENCH_SECONDS", 30);
    let rps = env_or("VOLLEY_BENCH_RPS", 2000);
    let dir = common::temp_dir("coordinator-cost");
    let log = std::fs::File::create(dir.join("stderr.txt")).unwrap();
    let mut coordinator = common::volley()
        .args(["coordinate", "--workers", &workers.to_string()])
        .args(["--listen", "127.0.0.1:0", "--token", TOKEN, "-q"])
        .arg("--out")
        .arg(dir.join("merged"))
        .stderr(log)
        .spawn()
        .unwrap();
    let url = common::coordinated::listening_url(&dir);
    let pid = coordinator.id();
    let (cpu0, rss0) = usage(pid);
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || generator(url, seconds, rps))
        })
        .collect();
    // Sampled from the first snapshot's second on (registration and the wait excluded).
    std::thread::sleep(Duration::from_secs(3));
    let (cpu1, _) = usage(pid);
    let started = Instant::now();
    let mut peak_rss = 0;
    while started.elapsed() < Duration::from_secs(seconds.saturating_sub(2).max(1)) {
        peak_rss = peak_rss.max(usage(pid).1);
        std::thread::sleep(Duration::from_millis(200));
    }
    let (cpu2, rss2) = usage(pid);
    let wall = started.elapsed().as_secs_f64();
    for t in threads {
        t.join().unwrap();
    }
    let _ = coordinator.kill();
    let _ = coordinator.wait();
    let snapshots = workers as f64 * wall;
    let cpu = cpu2 - cpu1;
    println!(
        "coordinator cost: {workers} generators × 1 snapshot/s at {rps} req/s each, {wall:.1} s measured"
    );
    println!("  registration and wait: {:.3} CPU s", cpu1 - cpu0);
    println!(
        "  CPU: {:.1}% of one core = {:.0} µs per snapshot = {:.3}% of a core per generator",
        cpu / wall * 100.0,
        cpu / snapshots * 1e6,
        cpu / wall * 100.0 / workers as f64
    );
    println!(
        "  RSS: {:.1} MiB before, {:.1} MiB peak, {:.1} MiB at the end: {:.1} KiB per generator",
        rss0 as f64 / 1048576.0,
        peak_rss as f64 / 1048576.0,
        rss2 as f64 / 1048576.0,
        (peak_rss.saturating_sub(rss0)) as f64 / 1024.0 / workers as f64
    );
    println!(
        "  snapshot body: {} bytes",
        serde_json::to_vec(&Snapshot::of(0, &second(0, rps)))
            .unwrap()
            .len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
