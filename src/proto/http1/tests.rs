use super::*;
use crate::proto::conn::MAX_HEADERS;

#[test]
fn request_bytes_have_defaults_and_length() {
    let r = RequestBytes::build(
        "POST",
        "127.0.0.1:8080",
        "/echo?x=1",
        &[("X-A".into(), "b".into())],
        b"hello",
        true,
    );
    let text = std::str::from_utf8(r.as_bytes()).unwrap();
    assert!(text.starts_with("POST /echo?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
    assert!(text.contains("X-A: b\r\n"));
    assert!(text.contains("Content-Length: 5\r\n"));
    assert!(!text.contains("Connection: close"));
    assert!(text.ends_with("\r\n\r\nhello"));
}

/// A one-shot server on 127.0.0.1: reads the request, writes `response`, closes.
fn canned(response: Vec<u8>) -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let mut buf = [0u8; 1024];
            let _ = std::io::Read::read(&mut s, &mut buf);
            let _ = std::io::Write::write_all(&mut s, &response);
        }
    });
    addr
}

/// The status of one exchange with a server sending `response`, the same with and without
/// raw capture (two code paths).
fn status_with(limits: Limits, response: &[u8]) -> Result<u16, ErrorKind> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let [plain, captured] = [false, true].map(|capture| {
        let addr = canned(response.to_vec());
        rt.block_on(async {
            let mut c = Http1Connection::new(addr, true).with_limits(limits);
            let req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
            c.exchange(req, true, capture).await.map(|r| r.status)
        })
    });
    assert_eq!(plain, captured);
    plain
}

fn body_limit(bytes: u64) -> Limits {
    Limits {
        max_body_bytes: Some(bytes),
        ..Limits::default()
    }
}

#[test]
fn body_limit_applies_to_every_framing() {
    let length = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789";
    let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                    5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n";
    let until_close = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n0123456789";
    for response in [&length[..], &chunked[..], &until_close[..]] {
        let text = String::from_utf8_lossy(response);
        assert_eq!(status_with(body_limit(10), response), Ok(200), "{text}");
        assert_eq!(status_with(Limits::default(), response), Ok(200), "{text}");
        assert_eq!(
            status_with(body_limit(9), response),
            Err(ErrorKind::BodyTooLarge),
            "{text}"
        );
    }
}

#[test]
fn head_limits_count_bytes_and_fields() {
    let mut big = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
    big.extend(std::iter::repeat_n(b'a', 2000));
    big.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
    let small = Limits {
        max_head_bytes: 1024,
        ..Limits::default()
    };
    assert_eq!(status_with(small, &big), Err(ErrorKind::HeaderTooLarge));
    assert_eq!(status_with(Limits::default(), &big), Ok(200));
    // Past the default: the buffer grows to the limit, not beyond.
    let mut huge = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 100_000));
    huge.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(
        status_with(Limits::default(), &huge),
        Err(ErrorKind::HeaderTooLarge)
    );
    let large = Limits {
        max_head_bytes: 128 * 1024,
        ..Limits::default()
    };
    assert_eq!(status_with(large, &huge), Ok(200));
    let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..=MAX_HEADERS {
        many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
    }
    many.extend_from_slice(b"Content-Length: 0\r\n\r\n");
    assert_eq!(
        status_with(Limits::default(), &many),
        Err(ErrorKind::HeaderTooLarge)
    );
}

#[test]
fn user_headers_replace_defaults_and_close_without_keepalive() {
    let r = RequestBytes::build(
        "GET",
        "h",
        "/",
        &[("host".into(), "other".into())],
        b"",
        false,
    );
    let text = std::str::from_utf8(r.as_bytes()).unwrap();
    assert!(text.contains("host: other\r\n"));
    assert!(!text.contains("Host: h"));
    assert!(text.contains("Connection: close\r\n"));
    assert!(!text.contains("Content-Length"));
}

/// Bodies far larger than the initial read buffer, in every framing, arrive whole (the
/// buffer grows while reads fill it), and a chunk-size line longer than the initial buffer
/// is still read (as it was with the former 16 KiB buffer).
#[test]
fn bodies_larger_than_the_initial_buffer_are_read_whole() {
    let body: Vec<u8> = (0..40_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let mut length =
        format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    length.extend_from_slice(&body);
    let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for part in body.chunks(5000) {
        chunked
            .extend_from_slice(format!("{:x};x={}\r\n", part.len(), "e".repeat(3000)).as_bytes());
        chunked.extend_from_slice(part);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let mut until_close = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
    until_close.extend_from_slice(&body);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for response in [length, chunked, until_close] {
        let addr = canned(response.clone());
        rt.block_on(async {
            let mut c = Http1Connection::new(addr, true);
            let req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
            let r = c.exchange(req, true, true).await.unwrap();
            assert_eq!(r.status, 200);
            assert_eq!(r.bytes_received, response.len() as u64);
            assert!(c.body() == &body[..], "body of {} bytes", c.body().len());
        });
    }
}
