use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;

use super::*;
use crate::export::{LatencyBuckets, ScopeFigures};

fn snapshot() -> LiveSnapshot {
    LiveSnapshot {
        unix_ms: 1_700_000_000_123,
        scopes: vec![ScopeFigures {
            requests: 7,
            statuses: vec![(200, 6), (500, 1)],
            errors: vec![("status_5xx", 1)],
            latency: LatencyBuckets {
                count: 6,
                sum_s: 0.06,
                ..LatencyBuckets::default()
            },
            ..ScopeFigures::default()
        }],
        labels: vec![("run_id".into(), "ab12".into())],
    }
}

/// A one-request HTTP server answering `answer`; sends back the request's raw bytes.
fn endpoint(answer: &'static str) -> (String, mpsc::Receiver<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/api/v1/write", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 8192];
        // Reads the head, then Content-Length bytes of body.
        loop {
            let n = c.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
            let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .unwrap()
                .parse()
                .unwrap();
            if got.len() >= end + 4 + len || n == 0 {
                break;
            }
        }
        c.write_all(answer.as_bytes()).unwrap();
        let _ = tx.send(got);
    });
    (url, rx)
}

#[test]
fn the_body_decodes_back_to_every_series_with_sorted_labels() {
    let body = encode(&write_request(&snapshot()));
    let raw = snap::raw::Decoder::new().decompress_vec(&body).unwrap();
    let back: WriteRequest = prost::Message::decode(raw.as_slice()).unwrap();
    assert_eq!(back, write_request(&snapshot()));
    let name = |ts: &TimeSeries| {
        ts.labels
            .iter()
            .find(|l| l.name == "__name__")
            .unwrap()
            .value
            .clone()
    };
    let requests = back
        .timeseries
        .iter()
        .find(|ts| name(ts) == "volley_requests_total")
        .unwrap();
    assert_eq!(
        requests.samples,
        [Sample {
            value: 7.0,
            timestamp: 1_700_000_000_123
        }]
    );
    for ts in &back.timeseries {
        assert!(
            ts.labels
                .iter()
                .any(|l| l.name == "run_id" && l.value == "ab12")
        );
        let names: Vec<&str> = ts.labels.iter().map(|l| l.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
    }
    let inf = back.timeseries.iter().find(|ts| {
        name(ts) == "volley_latency_seconds_bucket" && ts.labels.iter().any(|l| l.value == "+Inf")
    });
    assert_eq!(inf.unwrap().samples[0].value, 6.0);
}

#[test]
fn a_push_posts_snappy_protobuf_and_fails_clearly() {
    let (url, got) = endpoint("HTTP/1.1 204 No Content\r\n\r\n");
    RemoteWrite::new(&url).unwrap().push(&snapshot()).unwrap();
    let request = got.recv().unwrap();
    let end = request.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
    assert!(head.starts_with("post /api/v1/write http/1.1"), "{head}");
    assert!(head.contains("content-encoding: snappy"), "{head}");
    assert!(
        head.contains("x-prometheus-remote-write-version: 0.1.0"),
        "{head}"
    );
    assert_eq!(request[end + 4..], encode(&write_request(&snapshot())));

    let (url, _) = endpoint(
        "HTTP/1.1 400 Bad Request\r\nContent-Length: 22\r\n\r\nout of order sample\r\n\r\n",
    );
    let err = RemoteWrite::new(&url)
        .unwrap()
        .push(&snapshot())
        .unwrap_err();
    assert!(
        matches!(&err, PushError::Status(400, why) if why == "out of order sample"),
        "{err}"
    );
    let down = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/api/v1/write", l.local_addr().unwrap())
    };
    let err = RemoteWrite::new(&down)
        .unwrap()
        .push(&snapshot())
        .unwrap_err();
    assert!(matches!(err, PushError::Refused), "{err}");
    assert!(RemoteWrite::new("https://127.0.0.1:1/x").is_err());
}

#[test]
fn a_urls_user_information_is_sent_as_basic_auth_and_never_shown() {
    let (url, got) = endpoint("HTTP/1.1 204 No Content\r\n\r\n");
    let with_auth = url.replacen("://", "://user:s3cret@", 1);
    RemoteWrite::new(&with_auth)
        .unwrap()
        .push(&snapshot())
        .unwrap();
    let request = got.recv().unwrap();
    let head = String::from_utf8_lossy(&request).to_ascii_lowercase();
    // base64("user:s3cret")
    assert!(
        head.contains("authorization: basic dxnlcjpzm2nyzxq="),
        "{head}"
    );
    let err = RemoteWrite::new("https://user:s3cret@127.0.0.1:1/x").unwrap_err();
    assert!(!err.to_string().contains("s3cret"), "{err}");
}
