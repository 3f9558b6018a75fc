//! Client CPU per request for each protocol of `volley::proto`, against the built-in target.
//!
//! Two processes, so each can be pinned to its own CPU (see `bench/grpc.sh`, which runs this):
//!
//! ```text
//! taskset -c 1 proto_cpu serve DIR          # plain + TLS targets; writes DIR/addrs, DIR/ca.pem
//! taskset -c 0 proto_cpu measure DIR [SECONDS] [ROUNDS] [MODES]
//! ```
//!
//! `measure` runs every mode for SECONDS (default 5) per round, modes alternating within a round
//! so that drift hits them alike, ROUNDS rounds (default 3), and prints the median client CPU µs
//! per request (user + system time of the client thread — the runtime is current-thread, so the
//! HTTP/2 connection tasks run on it too — divided by the requests completed) and req/s.
//! Modes: h1, h1-tls, h2c, h2-tls, grpc, grpc-tls, hyper-h2c (the same h2c load through
//! `hyper::client::conn::http2`, for the choice of HTTP/2 client), h3 (HTTP/3 over QUIC, against
//! the TLS target's UDP port of the same number; the quinn endpoint's driver runs on the
//! measured thread too).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use nix::time::{ClockId, clock_gettime};
use volley::proto::client::PreparedRequest;
use volley::proto::client::{Client, ClientConfig, Connection, Protocol};
use volley::proto::grpc::GrpcSchema;
use volley::proto::message::Request;
use volley::proto::tls::TlsOptions;
use volley::server::{self, TargetConfig};

/// Requests in flight in every mode.
const IN_FLIGHT: usize = 64;
/// HTTP/2 connections (IN_FLIGHT / H2_CONNECTIONS streams each).
const H2_CONNECTIONS: usize = 4;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => serve(Path::new(&args[1])),
        Some("measure") => {
            let dir = PathBuf::from(&args[1]);
            let secs = args.get(2).map_or(5, |s| s.parse().expect("SECONDS"));
            let rounds = args.get(3).map_or(3, |s| s.parse().expect("ROUNDS"));
            let modes: Vec<String> = args.get(4).map_or_else(
                || {
                    "h1 h1-tls h2c h2-tls grpc grpc-tls hyper-h2c"
                        .split(' ')
                        .map(String::from)
                        .collect()
                },
                |m| m.split([' ', ',']).map(String::from).collect(),
            );
            measure(&dir, Duration::from_secs(secs), rounds, &modes);
        }
        _ => eprintln!(
            "usage: proto_cpu serve DIR | proto_cpu measure DIR [SECONDS] [ROUNDS] [MODES]"
        ),
    }
}

/// Runs a plain and a TLS target with HTTP/3 beside (one worker thread each) until stdin
/// closes.
fn serve(dir: &Path) {
    let config = TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    };
    let plain = server::spawn(config.clone()).expect("plain target");
    let tls = server::spawn_http3(config).expect("TLS and HTTP/3 target");
    std::fs::write(dir.join("ca.pem"), tls.ca_pem().unwrap()).unwrap();
    std::fs::write(
        dir.join("addrs"),
        format!("{} {}\n", plain.addr(), tls.addr()),
    )
    .unwrap();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
    plain.stop();
    tls.stop();
}

fn measure(dir: &Path, per_run: Duration, rounds: usize, modes: &[String]) {
    let addrs = std::fs::read_to_string(dir.join("addrs")).expect("run `serve` first");
    let mut addrs = addrs
        .split_whitespace()
        .map(|a| a.parse::<SocketAddr>().unwrap());
    let (plain, tls) = (addrs.next().unwrap(), addrs.next().unwrap());
    let ca = dir.join("ca.pem");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let mut results: Vec<Vec<(f64, f64)>> = vec![Vec::new(); modes.len()];
    for round in 1..=rounds {
        for (i, mode) in modes.iter().enumerate() {
            let (cpu_us_per_req, per_sec) =
                local.block_on(&rt, run_mode(mode, plain, tls, &ca, per_run));
            println!(
                "round {round} {mode:<10} {cpu_us_per_req:>8.2} cpu_us/req {per_sec:>10.0} req/s"
            );
            results[i].push((cpu_us_per_req, per_sec));
        }
    }
    println!("\nmedians over {rounds} rounds of {per_run:?}, {IN_FLIGHT} in flight:");
    println!("  {:<10} {:>12} {:>10}", "mode", "cpu_us/req", "req/s");
    for (mode, mut r) in modes.iter().zip(results) {
        r.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (cpu, _) = r[r.len() / 2];
        r.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (_, rate) = r[r.len() / 2];
        println!("  {mode:<10} {cpu:>12.2} {rate:>10.0}");
    }
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).expect("thread CPU clock");
    Duration::new(t.tv_sec() as u64, t.tv_nsec() as u32)
}

async fn run_mode(
    mode: &str,
    plain: SocketAddr,
    tls_addr: SocketAddr,
    ca: &Path,
    per_run: Duration,
) -> (f64, f64) {
    if mode == "hyper-h2c" {
        return hyper_h2c(plain, per_run).await;
    }
    let tls = mode.ends_with("-tls") || mode == "h3";
    let protocol = if mode.starts_with("h1") {
        Protocol::Http1
    } else if mode == "h3" {
        Protocol::Http3
    } else {
        Protocol::Http2
    };
    let client = Client::new(ClientConfig {
        addr: if tls { tls_addr } else { plain },
        tls: tls.then(|| TlsOptions {
            server_name: "localhost".into(),
            ca_file: Some(ca.into()),
            ..TlsOptions::default()
        }),
        protocol,
        keepalive: true,
        source_addrs: Vec::new(),
    })
    .expect("client");
    let request = if mode.starts_with("grpc") {
        let proto = concat!(env!("CARGO_MANIFEST_DIR"), "/proto/volley_target.proto");
        let schema = GrpcSchema::compile(&[proto.into()], &[]).unwrap();
        let echo = schema.method("volley.target.v1.Echo/Echo").unwrap();
        let message = echo.encode_json(r#"{"message": "hello"}"#).unwrap();
        Request::grpc("localhost", &echo, message)
    } else {
        Request::get("localhost", "/")
    };
    let request = Rc::new(client.prepare(&request).unwrap());
    let mut connections: Vec<Connection> = Vec::new();
    match protocol {
        Protocol::Http1 => connections.extend((0..IN_FLIGHT).map(|_| client.connection())),
        Protocol::Http2 | Protocol::Http3 => {
            for _ in 0..H2_CONNECTIONS {
                let first = client.connection();
                for _ in 1..IN_FLIGHT / H2_CONNECTIONS {
                    connections.push(first.share().unwrap());
                }
                connections.push(first);
            }
        }
    }
    // Warm up: open every connection before measuring.
    let warm = drive(connections, request.clone(), Duration::from_millis(300)).await;
    let cpu = thread_cpu();
    let start = Instant::now();
    let (_, done) = drive(warm.0, request, per_run).await;
    let wall = start.elapsed();
    let cpu = thread_cpu() - cpu;
    (
        cpu.as_secs_f64() * 1e6 / done as f64,
        done as f64 / wall.as_secs_f64(),
    )
}

/// Every connection loops on `request` until `for_how_long` passes; the connections and the
/// number of successful requests.
async fn drive(
    connections: Vec<Connection>,
    request: Rc<PreparedRequest>,
    for_how_long: Duration,
) -> (Vec<Connection>, u64) {
    let until = Instant::now() + for_how_long;
    let tasks: Vec<_> = connections
        .into_iter()
        .map(|mut conn| {
            let request = request.clone();
            tokio::task::spawn_local(async move {
                let mut ok = 0u64;
                while Instant::now() < until {
                    match conn.exchange(&request).await {
                        Ok(r) if r.error().is_none() => ok += 1,
                        other => panic!("request failed: {other:?}"),
                    }
                }
                (conn, ok)
            })
        })
        .collect();
    let mut out = Vec::new();
    let mut total = 0;
    for t in tasks {
        let (conn, ok) = t.await.unwrap();
        out.push(conn);
        total += ok;
    }
    (out, total)
}

/// The h2c load through hyper's HTTP/2 client connection, for comparison.
async fn hyper_h2c(addr: SocketAddr, per_run: Duration) -> (f64, f64) {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let mut senders = Vec::new();
    for _ in 0..H2_CONNECTIONS {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        let (sender, conn) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
                .await
                .unwrap();
        tokio::task::spawn_local(conn);
        senders.push(sender);
    }
    let uri: hyper::Uri = format!("http://{addr}/").parse().unwrap();
    let run = |for_how_long: Duration| {
        let until = Instant::now() + for_how_long;
        let tasks: Vec<_> = (0..IN_FLIGHT)
            .map(|i| {
                let mut sender = senders[i % H2_CONNECTIONS].clone();
                let uri = uri.clone();
                tokio::task::spawn_local(async move {
                    let mut ok = 0u64;
                    while Instant::now() < until {
                        // The same head as volley's h2c requests (which send a user-agent).
                        let req = hyper::Request::get(uri.clone())
                            .header("user-agent", concat!("volley/", env!("CARGO_PKG_VERSION")))
                            .body(Full::new(Bytes::new()))
                            .unwrap();
                        let response = sender.send_request(req).await.unwrap();
                        let body = response.into_body().collect().await.unwrap();
                        assert_eq!(&body.to_bytes()[..], b"ok\n");
                        ok += 1;
                    }
                    ok
                })
            })
            .collect::<Vec<_>>();
        async move {
            let mut total = 0;
            for t in tasks {
                total += t.await.unwrap();
            }
            total
        }
    };
    run(Duration::from_millis(300)).await;
    let cpu = thread_cpu();
    let start = Instant::now();
    let done = run(per_run).await;
    let wall = start.elapsed();
    let cpu = thread_cpu() - cpu;
    (
        cpu.as_secs_f64() * 1e6 / done as f64,
        done as f64 / wall.as_secs_f64(),
    )
}
