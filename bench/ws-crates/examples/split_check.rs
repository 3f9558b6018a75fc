//! API check (not part of the benchmark): fastwebsockets with the `unstable-split` feature,
//! sending while receiving on ONE task (tokio::join! of a reader and a writer future, no
//! cancellation of read_frame, which is not cancel-safe), with auto_pong/auto_close off and
//! pings answered by hand. Run against `ws-crates serve` started with WS_CRATES_PING_EVERY=N.
//!
//!   cargo run --release --example split_check -- ws://127.0.0.1:PORT/ MESSAGES SIZE

use std::cell::Cell;
use std::time::Instant;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use fastwebsockets::{Frame, OpCode, Payload, Role, WebSocketError, after_handshake_split};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let a: Vec<String> = std::env::args().collect();
    let host = a[1].strip_prefix("ws://").unwrap().trim_end_matches('/').to_string();
    let (messages, size): (usize, usize) = (a[2].parse()?, a[3].parse()?);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(run(host, messages, size))
}

async fn run(host: String, messages: usize, size: usize) -> Res<()> {
    let mut s = TcpStream::connect(&host).await?;
    s.set_nodelay(true)?;
    let t_hs = Instant::now();
    let key = B64.encode([7u8; 16]);
    s.write_all(format!("GET / HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").as_bytes()).await?;
    let mut buf = Vec::new();
    while !buf.ends_with(b"\r\n\r\n") {
        let mut b = [0u8; 512];
        let n = s.read(&mut b).await?;
        assert!(n > 0);
        buf.extend_from_slice(&b[..n]);
    }
    assert!(buf.starts_with(b"HTTP/1.1 101"));
    println!("handshake {:?}", t_hs.elapsed());

    let (r, w) = s.into_split(); // TLS: tokio::io::split(stream)
    let (mut rd, mut wr) = after_handshake_split(r, w, Role::Client);
    rd.set_auto_pong(false);
    rd.set_auto_close(false);
    wr.set_auto_apply_mask(true);
    let wr = Mutex::new(wr);
    let received = Cell::new(0usize);
    let all_in = tokio::sync::Notify::new();
    let mut pings = 0;

    let reader = async {
        // send_fn is never called with auto_pong/auto_close off.
        let mut no_obligations = |_f: Frame<'_>| async { Ok::<(), WebSocketError>(()) };
        loop {
            let f = rd.read_frame(&mut no_obligations).await?;
            let at = Instant::now(); // per-message receive timestamp
            let _ = at;
            match f.opcode {
                OpCode::Binary => {
                    let payload: &[u8] = &f.payload;
                    assert_eq!(payload.len(), size);
                    received.set(received.get() + 1);
                    if received.get() == messages {
                        all_in.notify_one();
                    }
                }
                OpCode::Ping => {
                    pings += 1;
                    let mut p = f.payload.to_vec();
                    wr.lock().await.write_frame(Frame::pong(Payload::BorrowedMut(&mut p))).await?;
                }
                OpCode::Close => {
                    let code = (f.payload.len() >= 2).then(|| u16::from_be_bytes([f.payload[0], f.payload[1]]));
                    println!("close from server, code {code:?}");
                    return Ok::<(), WebSocketError>(());
                }
                op => panic!("unexpected {op:?}"),
            }
        }
    };
    let writer = async {
        let template = vec![0x5Au8; size];
        let mut scratch = vec![0u8; size];
        for _ in 0..messages {
            scratch.copy_from_slice(&template); // masked in place on send
            wr.lock().await.write_frame(Frame::binary(Payload::BorrowedMut(&mut scratch))).await?;
            tokio::time::sleep(std::time::Duration::from_micros(200)).await;
        }
        all_in.notified().await;
        wr.lock().await.write_frame(Frame::close(1000, b"")).await?;
        Ok::<(), WebSocketError>(())
    };
    let (a, b) = tokio::join!(reader, writer);
    a?;
    b?;
    println!("sent {messages} received {} pings answered {pings}", received.get());
    Ok(())
}
