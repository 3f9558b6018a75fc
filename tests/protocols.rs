//! The protocol seam against real servers on 127.0.0.1: HTTP/1.1 over TCP and TLS, h2c, h2 over
//! TLS, gRPC over both, TLS verification, and source-address spreading.

mod common;

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use volley::proto::ErrorKind;
use volley::proto::client::{Client, ClientConfig, Connection, Protocol};
use volley::proto::grpc::{GrpcCode, GrpcMethod, GrpcSchema};
use volley::proto::message::{Capture, Request};
use volley::proto::source::parse_source_addrs;
use volley::proto::tls::TlsOptions;
use volley::server::{self, RunningTarget, TargetConfig};

/// Every exchange of these tests ends within this (they talk to local servers).
const LIMIT: Duration = Duration::from_secs(10);

/// Stops a target off the runtime's thread, so client connection tasks can still run (and close
/// their connections) meanwhile instead of making the target wait out its grace period.
async fn stop(target: RunningTarget) {
    tokio::task::spawn_blocking(move || target.stop())
        .await
        .unwrap();
}

fn tls_target() -> RunningTarget {
    server::spawn_tls(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    })
    .expect("TLS target starts")
}

/// Writes the target's CA to a file for `ca_file`.
fn ca_file(target: &RunningTarget, name: &str) -> PathBuf {
    let dir = common::temp_dir(name);
    let path = dir.join("ca.pem");
    std::fs::write(&path, target.ca_pem().expect("a TLS target")).unwrap();
    path
}

fn config(addr: SocketAddr, protocol: Protocol, tls: Option<TlsOptions>) -> ClientConfig {
    ClientConfig {
        addr,
        tls,
        protocol,
        keepalive: true,
        source_addrs: Vec::new(),
    }
}

fn trusting(ca: PathBuf) -> Option<TlsOptions> {
    Some(TlsOptions {
        server_name: "localhost".into(),
        ca_file: Some(ca),
        ..TlsOptions::default()
    })
}

async fn exchange(
    conn: &mut Connection,
    req: &volley::proto::client::PreparedRequest,
) -> Result<volley::proto::message::Response, ErrorKind> {
    tokio::time::timeout(LIMIT, conn.exchange(req))
        .await
        .expect("exchange finishes in time")
}

fn schema() -> GrpcSchema {
    let proto = concat!(env!("CARGO_MANIFEST_DIR"), "/proto/volley_target.proto");
    GrpcSchema::compile(&[proto.into()], &[]).unwrap()
}

fn method(name: &str) -> GrpcMethod {
    schema().method(name).unwrap()
}

/// `volley_target_connections_total` from the target's `/metrics`.
async fn connections_accepted(target: &RunningTarget) -> u64 {
    let client = Client::new(ClientConfig::http1(target.addr())).unwrap();
    let mut req = Request::get("t", "/metrics");
    req.capture.body_limit = 1 << 20;
    let req = client.prepare(&req).unwrap();
    let r = exchange(&mut client.connection(), &req).await.unwrap();
    let text = String::from_utf8(r.captured.unwrap().body.to_vec()).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("volley_target_connections_total"))
        .unwrap();
    // The /metrics request's own connection counts too.
    line.rsplit(' ').next().unwrap().parse::<u64>().unwrap() - 1
}

#[tokio::test]
async fn http1_plain_with_timing_and_capture() {
    let target = common::target();
    let client = Client::new(ClientConfig::http1(target.addr())).unwrap();
    let mut req = Request::get("127.0.0.1", "/bytes/100");
    req.capture = Capture {
        body_limit: 10,
        headers: true,
    };
    let req = client.prepare(&req).unwrap();
    let mut conn = client.connection();
    let first = exchange(&mut conn, &req).await.unwrap();
    assert_eq!(first.status, 200);
    assert_eq!(conn.connections_opened(), 1);
    assert!(first.timing.connect_us > 0, "{:?}", first.timing);
    assert_eq!(first.timing.tls_us, 0);
    let captured = first.captured.unwrap();
    assert_eq!(&captured.body[..], b"0123456789");
    assert!(captured.truncated);
    assert_eq!(captured.headers["content-length"], "100");
    let second = exchange(&mut conn, &req).await.unwrap();
    assert_eq!(
        (second.timing.connect_us, conn.connections_opened()),
        (0, 0),
        "keep-alive reuses the connection"
    );
    assert!(second.bytes_received > 100);
    stop(target).await;
}

#[tokio::test]
async fn http1_over_tls_with_ca_file() {
    let target = tls_target();
    let ca = ca_file(&target, "h1-tls");
    let client = Client::new(config(target.addr(), Protocol::Http1, trusting(ca))).unwrap();
    assert!(client.probe().await.is_ok());
    let req = client.prepare(&Request::get("localhost", "/")).unwrap();
    let mut conn = client.connection();
    for i in 0..3 {
        let r = exchange(&mut conn, &req).await.unwrap();
        assert_eq!(r.status, 200);
        if i == 0 {
            assert!(r.timing.tls_us > 0, "{:?}", r.timing);
        } else {
            assert_eq!(r.timing.tls_us, 0);
        }
    }
    stop(target).await;
}

#[tokio::test]
async fn self_signed_certificate_fails_verification_then_passes_with_cacert_or_insecure() {
    let target = tls_target();
    let req = Request::get("localhost", "/");
    for protocol in [Protocol::Http1, Protocol::Http2] {
        // Verification on, built-in roots: the throw-away CA is not trusted.
        let verified = Some(TlsOptions {
            server_name: "localhost".into(),
            ..TlsOptions::default()
        });
        let client = Client::new(config(target.addr(), protocol, verified)).unwrap();
        let err = client.probe().await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::TlsCertificate);
        assert!(err.message.contains("--cacert"), "{}", err.message);
        assert!(ErrorKind::TlsCertificate.hint().contains("--insecure"));
        let prepared = client.prepare(&req).unwrap();
        let got = exchange(&mut client.connection(), &prepared).await;
        assert_eq!(got.unwrap_err(), ErrorKind::TlsCertificate);

        // A wrong name is a certificate error too, even with the right CA.
        let ca = ca_file(&target, "verify");
        let wrong_name = Some(TlsOptions {
            server_name: "example.invalid".into(),
            ca_file: Some(ca.clone()),
            ..TlsOptions::default()
        });
        let client = Client::new(config(target.addr(), protocol, wrong_name)).unwrap();
        assert_eq!(
            client.probe().await.unwrap_err().kind,
            ErrorKind::TlsCertificate
        );

        // The CA file makes it trusted; so does insecure.
        for tls in [
            trusting(ca),
            Some(TlsOptions {
                insecure: true,
                ..TlsOptions::default()
            }),
        ] {
            let client = Client::new(config(target.addr(), protocol, tls)).unwrap();
            let prepared = client.prepare(&req).unwrap();
            let r = exchange(&mut client.connection(), &prepared).await.unwrap();
            assert_eq!(r.status, 200);
        }
    }
    stop(target).await;
}

#[tokio::test]
async fn plain_client_against_tls_port_and_tls_client_against_plain_port() {
    let plain = common::target();
    let insecure = Some(TlsOptions {
        insecure: true,
        ..TlsOptions::default()
    });
    let client = Client::new(config(plain.addr(), Protocol::Http1, insecure)).unwrap();
    let err = client.probe().await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Tls, "{}", err.message);
    stop(plain).await;
}

#[tokio::test]
async fn h2c_streams_share_one_connection() {
    let target = common::target();
    let client = Client::new(config(target.addr(), Protocol::Http2, None)).unwrap();
    let req = client
        .prepare(&Request::get("127.0.0.1", "/delay?ms=20"))
        .unwrap();
    let first = client.connection();
    let mut all: Vec<Connection> = (1..16).map(|_| first.share().unwrap()).collect();
    all.push(first);
    let started = std::time::Instant::now();
    let tasks: Vec<_> = all
        .into_iter()
        .map(|mut conn| {
            let req = req.clone();
            tokio::spawn(async move {
                let mut statuses = Vec::new();
                for _ in 0..3 {
                    let r = exchange(&mut conn, &req).await.unwrap();
                    statuses.push(r.status);
                }
                statuses
            })
        })
        .collect();
    for t in tasks {
        assert_eq!(t.await.unwrap(), vec![200, 200, 200]);
    }
    // 16 streams × 3 sequential 20 ms requests ran concurrently: about 60 ms, not 16 × 60.
    assert!(
        started.elapsed() < Duration::from_millis(600),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        connections_accepted(&target).await,
        1,
        "one shared connection"
    );
    stop(target).await;
}

#[tokio::test]
async fn h2c_without_keepalive_opens_a_connection_per_request() {
    let target = common::target();
    let client = Client::new(ClientConfig {
        keepalive: false,
        ..config(target.addr(), Protocol::Http2, None)
    })
    .unwrap();
    let req = client.prepare(&Request::get("127.0.0.1", "/")).unwrap();
    let mut conn = client.connection();
    for _ in 0..5 {
        let r = exchange(&mut conn, &req).await.unwrap();
        assert_eq!((r.status, conn.connections_opened()), (200, 1));
        assert!(r.timing.connect_us > 0);
    }
    drop(conn);
    assert_eq!(connections_accepted(&target).await, 5);
    stop(target).await;
}

#[tokio::test]
async fn h2_timeouts_reset_the_stream_then_give_up_the_connection() {
    let target = common::target();
    let client = Client::new(config(target.addr(), Protocol::Http2, None)).unwrap();
    let slow = client
        .prepare(&Request::get("127.0.0.1", "/delay?ms=2000"))
        .unwrap();
    let fast = client.prepare(&Request::get("127.0.0.1", "/")).unwrap();
    let mut conn = client.connection();
    assert_eq!(exchange(&mut conn, &fast).await.unwrap().status, 200);
    let time_out = async |conn: &mut Connection| {
        let r = tokio::time::timeout(Duration::from_millis(50), conn.exchange(&slow)).await;
        assert!(r.is_err(), "the slow request timed out");
        conn.discard();
    };
    time_out(&mut conn).await;
    exchange(&mut conn, &fast).await.unwrap();
    assert_eq!(
        conn.connections_opened(),
        0,
        "one timeout keeps the connection"
    );
    time_out(&mut conn).await;
    time_out(&mut conn).await;
    exchange(&mut conn, &fast).await.unwrap();
    assert_eq!(conn.connections_opened(), 1, "two in a row open a new one");
    drop(conn);
    stop(target).await;
}

#[tokio::test]
async fn h2_over_tls_by_alpn() {
    let target = tls_target();
    let ca = ca_file(&target, "h2-tls");
    let client = Client::new(config(target.addr(), Protocol::Http2, trusting(ca))).unwrap();
    client.probe().await.unwrap();
    let mut post = Request::get("localhost", "/echo");
    post.method = http::Method::POST;
    post.body = Bytes::from_static(b"hello h2");
    post.capture.body_limit = 100;
    let post = client.prepare(&post).unwrap();
    let mut conn = client.connection();
    let r = exchange(&mut conn, &post).await.unwrap();
    assert_eq!(r.status, 200);
    assert!(r.timing.tls_us > 0);
    assert_eq!(&r.captured.unwrap().body[..], b"hello h2");
    let missing = client
        .prepare(&Request::get("localhost", "/status/503"))
        .unwrap();
    let r = exchange(&mut conn, &missing).await.unwrap();
    assert_eq!((r.status, r.error()), (503, Some(ErrorKind::Http5xx)));
    stop(target).await;
}

#[tokio::test]
async fn http3_is_served_beside_tls_advertised_by_alt_svc_and_shared_by_streams() {
    let target = server::spawn_http3(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    })
    .expect("HTTP/3 target starts");
    let ca = ca_file(&target, "h3-alt-svc");
    // Over TCP, every response names the UDP port HTTP/3 answers on.
    let tcp = Client::new(config(target.addr(), Protocol::Http1, trusting(ca.clone()))).unwrap();
    let mut head = Request::get("localhost", "/");
    head.capture.headers = true;
    let head = tcp.prepare(&head).unwrap();
    let r = exchange(&mut tcp.connection(), &head).await.unwrap();
    let alt_svc = r.captured.unwrap().headers["alt-svc"].clone();
    let port = target.addr().port();
    assert_eq!(alt_svc, format!("h3=\":{port}\"; ma=86400").as_str());
    // Over QUIC: the handshake is the TLS figure (no TCP connect), ALPN h3.
    let quic = Client::new(config(target.addr(), Protocol::Http3, trusting(ca))).unwrap();
    assert!(quic.probe().await.unwrap().tls_us > 0);
    let mut post = Request::get("localhost", "/echo");
    post.method = http::Method::POST;
    post.body = Bytes::from_static(b"hello h3");
    post.capture.body_limit = 100;
    let post = quic.prepare(&post).unwrap();
    let mut first = quic.connection();
    let r = exchange(&mut first, &post).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!((r.timing.connect_us, first.connections_opened()), (0, 1));
    assert!(r.timing.tls_us > 0);
    let negotiated = r.timing.tls.expect("the handshake's outcome");
    assert_eq!(negotiated.alpn_name(), Some("h3"));
    assert_eq!(&r.captured.unwrap().body[..], b"hello h3");
    // A second stream handle shares the connection; a failed route is a status.
    let mut second = first.share().expect("HTTP/3 multiplexes");
    let missing = quic
        .prepare(&Request::get("localhost", "/status/503"))
        .unwrap();
    let r = exchange(&mut second, &missing).await.unwrap();
    assert_eq!((r.status, r.error()), (503, Some(ErrorKind::Http5xx)));
    assert_eq!(second.connections_opened(), 0);
    drop((first, second));
    stop(target).await;
}

#[tokio::test]
async fn http3_to_a_port_without_quic_fails_its_handshake_in_words() {
    let target = tls_target();
    let ca = ca_file(&target, "h3-no-quic");
    let quic = Client::new(config(target.addr(), Protocol::Http3, trusting(ca))).unwrap();
    // Nothing listens on the UDP port: the probe answers within its own limit, in words.
    let e = tokio::time::timeout(Duration::from_secs(20), quic.probe())
        .await
        .expect("the probe gives up by itself")
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::QuicHandshake, "{e}");
    assert!(e.message.contains("UDP"), "{e}");
    // A request timeout during the handshake finds the connection not established: the engine
    // counts it as connect_timeout (no TCP connection was accepted, so no TLS-handshake one).
    let req = quic.prepare(&Request::get("localhost", "/")).unwrap();
    let mut conn = quic.connection();
    let cut = tokio::time::timeout(Duration::from_millis(300), conn.exchange(&req)).await;
    assert!(cut.is_err(), "nothing answers, so nothing completes");
    assert_eq!(conn.phase(), volley::proto::conn::ConnPhase::Connecting);
    stop(target).await;
}

async fn grpc_calls(target: &RunningTarget, tls: Option<TlsOptions>) {
    let client = Client::new(config(target.addr(), Protocol::Http2, tls)).unwrap();
    let mut conn = client.connection();

    let echo = method("volley.target.v1.Echo/Echo");
    let message = echo
        .encode_json(r#"{"message": "hi", "delayMs": 5}"#)
        .unwrap();
    let mut req = Request::grpc("localhost", &echo, message);
    req.headers.push(("x-volley-test".into(), "1".into()));
    req.capture.body_limit = 1024;
    let req = client.prepare(&req).unwrap();
    let r = exchange(&mut conn, &req).await.unwrap();
    assert_eq!((r.status, r.grpc_status), (200, Some(GrpcCode::Ok)));
    assert_eq!(r.error(), None);
    assert!(r.timing.wait_us >= 5_000, "{:?}", r.timing);
    let reply = echo.decode_json(&r.captured.unwrap().body).unwrap();
    assert_eq!(reply, serde_json::json!({"message": "hi"}));

    // The gRPC Tasks service and REST /tasks share one store.
    let create = method("volley.target.v1.Tasks/CreateTask");
    let req = Request::grpc(
        "localhost",
        &create,
        create.encode_json(r#"{"title": "from grpc"}"#).unwrap(),
    );
    let mut req = req;
    req.capture.body_limit = 1024;
    let r = exchange(&mut conn, &client.prepare(&req).unwrap())
        .await
        .unwrap();
    let task = create.decode_json(&r.captured.unwrap().body).unwrap();
    let id = task["id"].as_str().unwrap().to_owned();
    let rest = Client::new(config(
        target.addr(),
        Protocol::Http2,
        client_tls_for_rest(target),
    ))
    .unwrap();
    let mut get = Request::get("localhost", format!("/tasks/{id}"));
    get.capture.body_limit = 1024;
    let r = exchange(&mut rest.connection(), &rest.prepare(&get).unwrap())
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&r.captured.unwrap().body).unwrap();
    assert_eq!(json["title"], "from grpc");

    // A missing task: NOT_FOUND, counted as a caller-side gRPC error.
    let get = method("volley.target.v1.Tasks/GetTask");
    let req = Request::grpc(
        "localhost",
        &get,
        get.encode_json(r#"{"id": 999999}"#).unwrap(),
    );
    let r = exchange(&mut conn, &client.prepare(&req).unwrap())
        .await
        .unwrap();
    assert_eq!(r.grpc_status, Some(GrpcCode::NotFound));
    assert_eq!(r.error(), Some(ErrorKind::GrpcClientError));
}

/// The same trust as the gRPC client, for a REST client of the same target.
fn client_tls_for_rest(target: &RunningTarget) -> Option<TlsOptions> {
    target.ca_pem().map(|_| TlsOptions {
        insecure: true,
        ..TlsOptions::default()
    })
}

#[tokio::test]
async fn grpc_over_h2c() {
    let target = common::target();
    grpc_calls(&target, None).await;
    stop(target).await;
}

#[tokio::test]
async fn grpc_over_tls() {
    let target = tls_target();
    let ca = ca_file(&target, "grpc-tls");
    grpc_calls(&target, trusting(ca)).await;
    stop(target).await;
}

#[tokio::test]
async fn grpc_needs_http2_and_unknown_methods_are_unimplemented() {
    let target = common::target();
    let echo = method("volley.target.v1.Echo/Echo");
    let h1 = Client::new(ClientConfig::http1(target.addr())).unwrap();
    let req = Request::grpc("x", &echo, Bytes::new());
    assert!(h1.prepare(&req).is_err());

    let client = Client::new(config(target.addr(), Protocol::Http2, None)).unwrap();
    let mut req = Request::grpc("x", &echo, Bytes::new());
    req.path_and_query = "/volley.target.v1.Echo/Nope".into();
    let r = exchange(&mut client.connection(), &client.prepare(&req).unwrap())
        .await
        .unwrap();
    assert_eq!(r.grpc_status, Some(GrpcCode::Unimplemented));
    assert_eq!(r.error(), Some(ErrorKind::GrpcServerError));
    stop(target).await;
}

/// A minimal HTTP/1.1 server that records each connection's peer address.
async fn peer_recording_server(
    connections: usize,
) -> (SocketAddr, tokio::task::JoinHandle<Vec<SocketAddr>>) {
    raw_server(
        connections,
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    )
    .await
}

/// A server that answers each of `connections` connections' first request with `response`
/// (written in two halves) and records the peers.
async fn raw_server(
    connections: usize,
    response: &'static [u8],
) -> (SocketAddr, tokio::task::JoinHandle<Vec<SocketAddr>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let mut peers = Vec::new();
        for _ in 0..connections {
            let (mut stream, peer) = listener.accept().await.unwrap();
            peers.push(peer);
            let mut buf = [0u8; 1024];
            let mut seen = Vec::new();
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = stream.read(&mut buf).await.unwrap();
                assert!(n > 0);
                seen.extend_from_slice(&buf[..n]);
            }
            let (a, b) = response.split_at(response.len() / 2);
            stream.write_all(a).await.unwrap();
            stream.flush().await.unwrap();
            tokio::time::sleep(Duration::from_millis(5)).await;
            stream.write_all(b).await.unwrap();
        }
        peers
    });
    (addr, server)
}

#[tokio::test]
async fn http1_captures_a_chunked_body_across_reads() {
    let (addr, server) = raw_server(
        1,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n",
    )
    .await;
    let client = Client::new(ClientConfig::http1(addr)).unwrap();
    let mut req = Request::get("t", "/");
    req.capture = Capture {
        body_limit: 64,
        headers: false,
    };
    let req = client.prepare(&req).unwrap();
    let r = exchange(&mut client.connection(), &req).await.unwrap();
    let captured = r.captured.unwrap();
    assert_eq!(&captured.body[..], b"hello, world");
    assert!(!captured.truncated);
    assert!(captured.headers.is_empty(), "headers were not asked for");
    server.await.unwrap();
}

#[tokio::test]
async fn source_addresses_are_spread_round_robin() {
    let (addr, server) = peer_recording_server(8).await;
    let source_addrs = parse_source_addrs("127.0.0.2-127.0.0.5").unwrap();
    let client = Client::new(ClientConfig {
        keepalive: false,
        source_addrs: source_addrs.clone(),
        ..ClientConfig::http1(addr)
    })
    .unwrap();
    let req = client.prepare(&Request::get("t", "/")).unwrap();
    let mut conn = client.connection();
    for _ in 0..8 {
        let r = exchange(&mut conn, &req).await.unwrap();
        assert_eq!((r.status, conn.connections_opened()), (200, 1));
    }
    let peers = tokio::time::timeout(LIMIT, server).await.unwrap().unwrap();
    let ips: Vec<IpAddr> = peers.iter().map(SocketAddr::ip).collect();
    assert_eq!(&ips[..4], &source_addrs[..], "round-robin order");
    assert_eq!(&ips[4..], &source_addrs[..]);
    assert_eq!(ips.iter().collect::<BTreeSet<_>>().len(), 4);
}

#[tokio::test]
async fn mixed_families_are_refused_before_the_run() {
    let err = Client::new(ClientConfig {
        source_addrs: vec!["::1".parse().unwrap()],
        ..ClientConfig::http1("127.0.0.1:1".parse().unwrap())
    })
    .unwrap_err();
    assert!(err.to_string().contains("IPv4 and IPv6"), "{err}");
}
