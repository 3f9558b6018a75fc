//! The `/chaos/` paths, observed from a raw client.

use std::io::ErrorKind;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;

use super::client::{Conn, IO_TIMEOUT};
use super::{EXCLUSIVE, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_reset_sends_rst() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    c.send("GET", "/chaos/reset", &[], b"").await.unwrap();
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(IO_TIMEOUT, c.stream.read(&mut buf))
        .await
        .expect("reset in time");
    assert_eq!(read.map_err(|e| e.kind()), Err(ErrorKind::ConnectionReset));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_garbage_is_not_http() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    c.send("GET", "/chaos/garbage", &[], b"").await.unwrap();
    let bytes = c.read_to_end().await.expect("clean close");
    assert_eq!(bytes, b"NOT-HTTP garbage\r\n\r\n");
    let mut headers = [httparse::EMPTY_HEADER; 8];
    assert!(httparse::Response::new(&mut headers).parse(&bytes).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_close_ends_before_the_body() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    c.send("GET", "/chaos/close", &[], b"").await.unwrap();
    let bytes = c.read_to_end().await.expect("clean close");
    let mut headers = [httparse::EMPTY_HEADER; 8];
    let mut resp = httparse::Response::new(&mut headers);
    let httparse::Status::Complete(head_len) = resp.parse(&bytes).unwrap() else {
        panic!("incomplete head: {bytes:?}");
    };
    assert_eq!(resp.code, Some(200));
    let cl = resp
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"));
    assert_eq!(cl.unwrap().value, b"100");
    assert_eq!(bytes.len(), head_len, "no body before EOF");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_hang_never_answers_and_does_not_block_stop() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    c.send("GET", "/chaos/hang", &[], b"").await.unwrap();
    let mut buf = [0u8; 64];
    let waited = tokio::time::timeout(Duration::from_millis(300), c.stream.read(&mut buf)).await;
    assert!(waited.is_err(), "got an answer: {waited:?}");
    let t = Instant::now();
    target.stop();
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "stop took {:?}",
        t.elapsed()
    );
    let after = tokio::time::timeout(IO_TIMEOUT, c.stream.read(&mut buf)).await;
    assert!(
        matches!(after, Ok(Ok(0)) | Ok(Err(_))),
        "connection not closed: {after:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_slow_trickles_then_keeps_alive_for_chaos_only() {
    let _alone = EXCLUSIVE.write().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    let t = Instant::now();
    let r = c.get("/chaos/slow?bytes_per_sec=1000&bytes=300").await;
    let took = t.elapsed();
    assert_eq!((r.status, r.body.len()), (200, 300));
    eprintln!("300 bytes at 1000 B/s took {took:?}");
    assert!(
        (Duration::from_millis(250)..Duration::from_millis(600)).contains(&took),
        "took {took:?}"
    );
    // Same connection: default size, bad parameters, unknown chaos path.
    let r = c.get("/chaos/slow?bytes_per_sec=100000").await;
    assert_eq!((r.status, r.body.len()), (200, 1024));
    assert_eq!(c.get("/chaos/slow").await.status, 400);
    assert_eq!(c.get("/chaos/nope").await.status, 404);
    // A non-chaos request on a chaos connection: 421, then close.
    let r = c.get("/").await;
    assert_eq!(r.status, 421);
    assert_eq!(c.read_to_end().await.unwrap(), b"");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_on_a_reused_hyper_connection_is_misdirected() {
    let _shared = EXCLUSIVE.read().await;
    let target = start(None);
    let mut c = Conn::connect(target.addr()).await;
    assert_eq!(c.get("/").await.status, 200);
    assert_eq!(c.get("/chaos/reset").await.status, 421);
    assert_eq!(c.get("/").await.status, 200);
}
