use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use super::*;
use crate::watch::prom::PromWatch;
use crate::watch::select::Selector;
use crate::watch::{PromTick, PromWatcher, spawn_prom};

/// A one-connection server on 127.0.0.1:0 that reads the request, then does `answer`.
fn serve_once(answer: impl FnOnce(&mut std::net::TcpStream) + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/metrics", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let _ = conn.read(&mut buf);
        answer(&mut conn);
    });
    url
}

fn reply(raw: &'static str) -> String {
    serve_once(move |c| {
        let _ = c.write_all(raw.as_bytes());
    })
}

fn scraper(url: &str) -> Scraper {
    let mut s = Scraper::new(url).unwrap();
    s.timeout = Duration::from_millis(300);
    s
}

#[test]
fn every_failure_is_counted_by_kind_and_none_is_fatal() {
    let refused = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/metrics", l.local_addr().unwrap())
    };
    let silent = serve_once(|c| {
        let mut buf = [0u8; 16];
        let _ = c.read(&mut buf); // Holds the connection until the client gives up.
    });
    let html = reply(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 15\r\n\r\n<html></html>\r\n",
    );
    let html_untyped = reply("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n<!doctype html>");
    let missing = reply("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
    let endless = serve_once(|c| {
        let _ = c.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n");
        while c.write_all(b"x 1\n").is_ok() {}
    });
    let cases: [(&str, usize); 6] = [
        (&refused, 0),
        (&silent, 1),
        (&missing, 2),
        (&html, 3),
        (&html_untyped, 3),
        (&endless, 4),
    ];
    for (url, kind) in cases {
        let mut s = scraper(url);
        s.max_bytes = 64 * 1024;
        let err = s.scrape().unwrap_err();
        assert_eq!(err.kind(), kind, "{url}: {err}");
    }
    let ok =
        reply("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 6\r\n\r\nup 1\n\n");
    let mut w = PromWatcher::new(
        scraper(&ok),
        PromWatch::new(vec![Selector::parse("down").unwrap()], 10),
        true,
    );
    let tick = w.tick(0.0);
    assert_eq!(tick.failures.by_kind[6], 1, "nothing matched");
    assert_eq!(tick.failures.last.as_deref(), Some("no series matched"));
    let mut w = PromWatcher::new(scraper(&refused), PromWatch::new(Vec::new(), 10), false);
    assert_eq!(
        (w.tick(0.0).failures.total(), w.tick(1.0).failures.total()),
        (1, 2)
    );
}

#[test]
fn chunked_bodies_and_bad_urls() {
    let chunked = reply(
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: text/plain; version=0.0.4\r\n\r\n5\r\nup 1\n\r\n7;x=y\r\ndown 0\n\r\n0\r\n\r\n",
    );
    assert_eq!(scraper(&chunked).scrape().unwrap(), "up 1\ndown 0\n");
    for bad in [
        "https://127.0.0.1:1/metrics",
        "127.0.0.1:9090/metrics",
        "http:///x",
    ] {
        assert!(Scraper::new(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_watch_thread_ticks_on_its_grid_and_stops() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/metrics", listener.local_addr().unwrap());
    drop(listener); // Refused every time: the ticks still come, with their failures counted.
    let w = PromWatcher::new(scraper(&url), PromWatch::new(Vec::new(), 10), false);
    let (thread, rx) = spawn_prom(w, Duration::from_millis(20)).unwrap();
    let ticks: Vec<PromTick> = rx.iter().take(3).collect();
    thread.stop();
    assert_eq!(
        ticks.iter().map(|t| t.failures.total()).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert!(ticks[2].t_s >= 0.04, "{}", ticks[2].t_s);
}
