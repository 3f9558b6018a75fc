//! Integration tests of the built-in target server (`volley serve`): every
//! route over real loopback connections, with a raw HTTP client.

#[path = "target/backends.rs"]
mod backends;
#[path = "target/chaos.rs"]
mod chaos;
#[path = "target/client.rs"]
mod client;
#[path = "target/oracle.rs"]
mod oracle;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use client::{Conn, IO_TIMEOUT};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use volley::server::{Capacity, RunningTarget, TargetConfig, TargetError, spawn};

/// Timing-sensitive tests hold this exclusively and the others hold it shared,
/// so timings are measured on an otherwise idle machine.
static EXCLUSIVE: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

fn start(capacity: Option<Capacity>) -> RunningTarget {
    spawn(TargetConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        threads: 2,
        capacity,
    })
    .expect("target starts")
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn root_keep_alive_head_and_not_found() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    for _ in 0..3 {
        let r = c.get("/").await;
        assert_eq!((r.status, r.text()), (200, "ok\n"));
    }
    let r = c.request("HEAD", "/", &[], b"").await;
    assert_eq!((r.status, r.header("content-length")), (200, Some("3")));
    assert_eq!(c.request("POST", "/", &[], b"x").await.status, 405);
    assert_eq!(c.get("/nope").await.status, 404);
    assert_eq!(c.get("/").await.status, 200, "still alive after errors");
    target.stop();
}

/// Latencies of `rounds` sequential `target` requests on each of `conns`
/// concurrent keep-alive connections (after one warm-up request each).
async fn latencies(addr: SocketAddr, conns: usize, rounds: usize, target: &str) -> Vec<Duration> {
    let clients: Vec<_> = (0..conns)
        .map(|_| {
            let target = target.to_owned();
            tokio::spawn(async move {
                let mut c = Conn::connect(addr).await;
                assert_eq!(c.get(&target).await.status, 200);
                let mut samples = Vec::new();
                for _ in 0..rounds {
                    let t = Instant::now();
                    let r = c.get(&target).await;
                    samples.push(t.elapsed());
                    assert_eq!(r.status, 200);
                }
                samples
            })
        })
        .collect();
    let mut samples = Vec::new();
    for client in clients {
        samples.extend(client.await.unwrap());
    }
    samples
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delay_p50_is_precise_under_20_connections() {
    let _alone = EXCLUSIVE.write().await;
    let target = start(None);
    // Absolute: below the 11+ ms that a 1 ms-granular timer gives in every try; a quiet machine
    // gives 10.0-10.3 ms. A busy one (the other test binaries, a fuzzer on the other core) pushed
    // single tries to 10.8-11.2 ms, so the best of three tries is judged: a coarse timer fails
    // all three, noise rarely spoils all three.
    let bound = Duration::from_micros(if cfg!(debug_assertions) {
        12_000
    } else {
        10_950
    });
    let mut tries = Vec::new();
    for _ in 0..3 {
        let samples = latencies(target.addr(), 20, 20, "/delay?ms=10").await;
        let min = *samples.iter().min().unwrap();
        assert!(min >= Duration::from_millis(10), "answered early: {min:?}");
        let p50 = median(samples);
        // The same load without a delay: what the server and this same-machine client cost by
        // themselves. The delay itself adds at most 0.5 ms to the median (tokio's 1 ms timer
        // alone adds 1-2 ms).
        let overhead = median(latencies(target.addr(), 20, 20, "/delay?ms=0").await);
        eprintln!(
            "/delay?ms=10 with 20 connections: p50 {p50:?}, min {min:?}; ms=0 p50 {overhead:?}"
        );
        if p50 <= Duration::from_micros(10_500) + overhead && p50 <= bound {
            target.stop();
            return;
        }
        tries.push((p50, overhead));
    }
    panic!(
        "p50 above 10.5 ms + overhead or {bound:?} in all three tries (p50, overhead): {tries:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delay_distributions_and_bad_parameters() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    let t = Instant::now();
    assert_eq!(c.get("/delay?ms=2.5").await.status, 200);
    assert!(t.elapsed() >= Duration::from_micros(2500));
    for dist in ["fixed", "uniform", "exp"] {
        assert_eq!(c.get(&format!("/delay?ms=1&dist={dist}")).await.status, 200);
    }
    for bad in [
        "/delay",
        "/delay?ms=x",
        "/delay?ms=-3",
        "/delay?ms=1&dist=zipf",
    ] {
        assert_eq!(c.get(bad).await.status, 400, "{bad}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_codes() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    let r = c.get("/status/503").await;
    assert_eq!((r.status, r.text()), (503, "503 Service Unavailable\n"));
    assert_eq!(c.request("POST", "/status/201", &[], b"").await.status, 201);
    assert_eq!(c.get("/status/599").await.status, 599);
    let r = c.get("/status/204").await;
    assert_eq!((r.status, r.body.len()), (204, 0));
    // Beyond 599 but within three digits: a code clients must cope with.
    assert_eq!(c.get("/status/999").await.status, 999);
    for bad in ["/status/1000", "/status/99", "/status/abc", "/status/100"] {
        assert_eq!(c.get(bad).await.status, 400, "{bad}");
    }
    assert_eq!(c.get("/").await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_bodies() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    let r = c.get("/bytes/0").await;
    assert_eq!((r.status, r.body.len()), (200, 0));
    let r = c.get("/bytes/5").await;
    assert_eq!((r.status, r.text()), (200, "01234"));
    let n = 3 * 1024 * 1024 + 7;
    let r = c.get(&format!("/bytes/{n}")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/octet-stream"));
    assert_eq!(r.body.len(), n);
    assert!(r.body.iter().all(|b| b.is_ascii()));
    let r = c.request("HEAD", "/bytes/100", &[], b"").await;
    assert_eq!((r.status, r.header("content-length")), (200, Some("100")));
    assert_eq!(c.get("/bytes/104857601").await.status, 400);
    assert_eq!(c.get("/bytes/-1").await.status, 400);
    let r = c.request("HEAD", "/bytes/104857600", &[], b"").await;
    assert_eq!(
        (r.status, r.header("content-length")),
        (200, Some("104857600"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echo_returns_body_and_content_type() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    let r = c
        .request(
            "POST",
            "/echo",
            &[("Content-Type", "application/x-test")],
            b"hello",
        )
        .await;
    assert_eq!((r.status, r.text()), (200, "hello"));
    assert_eq!(r.header("content-type"), Some("application/x-test"));
    let big: Vec<u8> = (0..1024 * 1024).map(|i| (i % 251) as u8).collect();
    let r = c.request("POST", "/echo", &[], &big).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), None);
    assert!(r.body == big, "1 MiB echo differs");
    let r = c.request("POST", "/echo", &[], b"").await;
    assert_eq!((r.status, r.body.len()), (200, 0));
    assert_eq!(c.get("/echo").await.status, 405);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_crud_round_trip() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    let json_ct = [("Content-Type", "application/json")];
    let post = |body: serde_json::Value| body.to_string().into_bytes();

    assert_eq!(c.get("/tasks").await.json(), json!([]));
    let r = c
        .request(
            "POST",
            "/tasks",
            &json_ct,
            &post(json!({"title": "write tests"})),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let created = r.json();
    let id = created["id"].as_u64().expect("integer id");
    assert_eq!(created, json!({"title": "write tests", "id": id}));
    assert_eq!(r.header("location"), Some(format!("/tasks/{id}").as_str()));

    let r = c
        .request("POST", "/tasks", &json_ct, &post(json!({"n": 2})))
        .await;
    let id2 = r.json()["id"].as_u64().unwrap();
    assert_ne!(id, id2);

    let list = c.get("/tasks").await.json();
    assert_eq!(
        list,
        json!([{"title": "write tests", "id": id}, {"n": 2, "id": id2}])
    );
    assert_eq!(c.get(&format!("/tasks/{id}")).await.json(), created);

    let r = c
        .request(
            "PUT",
            &format!("/tasks/{id}"),
            &json_ct,
            &post(json!({"done": true})),
        )
        .await;
    assert_eq!((r.status, r.json()), (200, json!({"done": true, "id": id})));
    assert_eq!(
        c.get(&format!("/tasks/{id}")).await.json(),
        json!({"done": true, "id": id})
    );

    let r = c.request("DELETE", &format!("/tasks/{id}"), &[], b"").await;
    assert_eq!((r.status, r.body.len()), (204, 0));
    let r = c.get(&format!("/tasks/{id}")).await;
    assert_eq!(r.status, 404);
    assert!(r.json()["error"].is_string());
    assert_eq!(
        c.request("DELETE", &format!("/tasks/{id}"), &[], b"")
            .await
            .status,
        404
    );
    assert_eq!(
        c.request("PUT", "/tasks/9999", &json_ct, b"{}")
            .await
            .status,
        404
    );
    assert_eq!(c.get("/tasks/abc").await.status, 404);

    for bad in [&b"{not json"[..], b"[1,2]", b"\"text\"", b""] {
        let r = c.request("POST", "/tasks", &json_ct, bad).await;
        assert_eq!(r.status, 400, "{:?}", String::from_utf8_lossy(bad));
        assert!(r.json()["error"].is_string());
    }
    let r = c
        .request("PUT", &format!("/tasks/{id2}"), &json_ct, b"{oops")
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(c.get("/tasks").await.json(), json!([{"n": 2, "id": id2}]));
    assert_eq!(c.request("PATCH", "/tasks", &[], b"").await.status, 405);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_by_route_template_and_status() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    for _ in 0..3 {
        c.get("/").await;
    }
    c.get("/status/503").await;
    c.get("/status/503").await;
    c.get("/tasks/999").await;
    c.get("/nope").await;
    let r = c.get("/metrics").await;
    assert_eq!(r.status, 200);
    assert!(
        r.header("content-type")
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = r.text();
    for line in [
        "volley_target_requests_total{path=\"/\",status=\"200\"} 3",
        "volley_target_requests_total{path=\"/status/{code}\",status=\"503\"} 2",
        "volley_target_requests_total{path=\"/tasks/{id}\",status=\"404\"} 1",
        "volley_target_requests_total{path=\"unmatched\",status=\"404\"} 1",
        "volley_target_in_flight 1",
        "volley_target_connections_total 1",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    assert!(
        !text.contains("path=\"/metrics\""),
        "a scrape counts after it answers"
    );
    let text = c.get("/metrics").await.text().to_owned();
    assert!(text.contains("volley_target_requests_total{path=\"/metrics\",status=\"200\"} 1\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capacity_mode_caps_throughput_at_workers_over_service_time() {
    let _alone = EXCLUSIVE.write().await;
    // 4 workers x 20 ms = 200 req/s; 32 clients keep the queue full.
    let target = start(Some(Capacity {
        workers: 4,
        service_time: Duration::from_millis(20),
    }));
    let addr = target.addr();
    let total = 240;
    let issued = Arc::new(AtomicUsize::new(0));
    let began = Instant::now();
    let clients: Vec<_> = (0..32)
        .map(|_| {
            let issued = Arc::clone(&issued);
            tokio::spawn(async move {
                let mut c = Conn::connect(addr).await;
                let mut latencies = Vec::new();
                while issued.fetch_add(1, Ordering::Relaxed) < total {
                    let t = Instant::now();
                    assert_eq!(c.get("/").await.status, 200);
                    latencies.push(t.elapsed());
                }
                latencies
            })
        })
        .collect();
    // /metrics bypasses the queue even while it is full: once every client has a request out,
    // a scrape that queued would wait 100 ms or more (28+ ahead of it at 200 per second); the
    // best of three scrapes, so that one preemption of a busy host does not count.
    while issued.load(Ordering::Relaxed) < 32 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let mut m = Conn::connect(addr).await;
    let mut scrape = Duration::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        assert_eq!(m.get("/metrics").await.status, 200);
        scrape = scrape.min(t.elapsed());
    }

    let mut latencies = Vec::new();
    for client in clients {
        latencies.extend(client.await.unwrap());
    }
    let elapsed = began.elapsed();
    let rate = total as f64 / elapsed.as_secs_f64();
    let p50 = median(latencies);
    eprintln!("capacity 4x20ms: {rate:.1} req/s, p50 latency {p50:?}, scrape {scrape:?}");
    assert!(
        (170.0..=230.0).contains(&rate),
        "throughput {rate:.1} req/s"
    );
    // Queueing: 32 in flight / 200 per second = 160 ms each.
    assert!(
        p50 >= Duration::from_millis(100),
        "p50 {p50:?} shows no queueing"
    );
    assert!(
        scrape < Duration::from_millis(60),
        "scrape queued: {scrape:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_prior_knowledge() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut s = tokio::net::TcpStream::connect(target.addr()).await.unwrap();
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]); // SETTINGS
    // HEADERS, END_STREAM | END_HEADERS, stream 1; HPACK static-table entries
    // :method GET (2), :scheme http (6), :path / (4).
    out.extend_from_slice(&[0, 0, 3, 1, 5, 0, 0, 0, 1, 0x82, 0x86, 0x84]);
    s.write_all(&out).await.unwrap();
    let (mut status, mut data) = (None, Vec::new());
    loop {
        let mut head = [0u8; 9];
        tokio::time::timeout(IO_TIMEOUT, s.read_exact(&mut head))
            .await
            .unwrap()
            .unwrap();
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let (kind, flags) = (head[3], head[4]);
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut payload = vec![0u8; len];
        s.read_exact(&mut payload).await.unwrap();
        match kind {
            4 if flags & 1 == 0 => s.write_all(&[0, 0, 0, 4, 1, 0, 0, 0, 0]).await.unwrap(),
            1 if stream == 1 => status = payload.first().copied(),
            0 if stream == 1 => {
                data.extend_from_slice(&payload);
                if flags & 1 == 1 {
                    break;
                }
            }
            7 => panic!("GOAWAY: {payload:?}"),
            _ => {}
        }
    }
    assert_eq!(status, Some(0x88), ":status 200 (static table index 8)");
    assert_eq!(data, b"ok\n");
}

#[test]
fn spawn_and_stop_from_sync_code() {
    let _shared = EXCLUSIVE.blocking_read();
    let target = start(None);
    let addr = target.addr();
    assert_eq!(
        target.base_url(),
        format!("http://127.0.0.1:{}", addr.port())
    );
    assert_ne!(addr.port(), 0);
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.ends_with("\r\n\r\nok\n"), "{response}");
    drop(target); // Drop stops too.
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "still listening"
    );
}

#[test]
fn bind_errors_name_the_address() {
    let _shared = EXCLUSIVE.blocking_read();
    let target = start(None);
    let taken: SocketAddr = target.addr();
    let err = spawn(TargetConfig {
        bind: taken,
        threads: 1,
        capacity: None,
    })
    .unwrap_err();
    assert!(matches!(err, TargetError::Bind { addr, .. } if addr == taken));
    assert!(err.to_string().contains(&taken.to_string()), "{err}");
    let err = spawn(TargetConfig {
        capacity: Some(Capacity {
            workers: 0,
            service_time: Duration::from_millis(1),
        }),
        ..TargetConfig::default()
    })
    .unwrap_err();
    assert!(matches!(err, TargetError::InvalidConfig(_)), "{err}");
}
