//! ws-crates: CPU per echoed message for two WebSocket client crates,
//! tokio-tungstenite and fastwebsockets, against one tokio-tungstenite echo server.
//!
//!   ws-crates serve PORT
//!   ws-crates client tungstenite|fast URL CONNS MESSAGES SIZE
//!
//! The client runs every connection on one current-thread tokio runtime (like one volley
//! worker). Phases: setup (TCP connect + WebSocket handshake, all connections concurrently),
//! echo (each connection: send SIZE-byte binary message, wait for its echo, MESSAGES times),
//! close (close 1000, wait for the peer's close). CPU is getrusage(RUSAGE_SELF) user+system.

use std::error::Error;
use std::time::Instant;

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::LocalSet;

type Res<T> = Result<T, Box<dyn Error>>;

/// (user, system) CPU seconds of this process, getrusage(RUSAGE_SELF).
fn cpu_user_sys() -> (f64, f64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a valid out-pointer for getrusage.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    assert_eq!(rc, 0, "getrusage failed");
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

fn cpu_secs() -> f64 {
    let (u, s) = cpu_user_sys();
    u + s
}

fn usage() -> ! {
    eprintln!(
        "usage:\n  ws-crates serve PORT\n  ws-crates client tungstenite|fast URL CONNS MESSAGES SIZE"
    );
    std::process::exit(2)
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let local = LocalSet::new();
    match args.get(1).map(String::as_str) {
        Some("serve") if args.len() == 3 => {
            let port: u16 = args[2].parse()?;
            local.block_on(&rt, serve(port))
        }
        Some("client") if args.len() == 7 => {
            let which = args[2].clone();
            let url = args[3].clone();
            let conns: usize = args[4].parse()?;
            let messages: usize = args[5].parse()?;
            let size: usize = args[6].parse()?;
            match which.as_str() {
                "tungstenite" | "fast" => {}
                _ => usage(),
            }
            local.block_on(&rt, client(which, url, conns, messages, size))
        }
        _ => usage(),
    }
}

// ---------------------------------------------------------------- server (held constant)

async fn serve(port: u16) -> Res<()> {
    use tokio_tungstenite::tungstenite::Message;
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("ws-crates: echo server on 127.0.0.1:{port} (tokio-tungstenite)");
    let ping_every: u64 = std::env::var("WS_CRATES_PING_EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    loop {
        let (sock, _) = listener.accept().await?;
        sock.set_nodelay(true)?;
        tokio::task::spawn_local(async move {
            let Ok(mut ws) = tokio_tungstenite::accept_async(sock).await else {
                return;
            };
            // Pings are answered by tungstenite itself (the pong goes out on the next
            // read/write/flush); a received close is answered the same way.
            let (mut echoed, mut pongs, mut close_code) = (0u64, 0u64, None);
            while let Some(msg) = ws.next().await {
                match msg {
                    Ok(m @ (Message::Binary(_) | Message::Text(_))) => {
                        if ws.send(m).await.is_err() {
                            break;
                        }
                        echoed += 1;
                        // Check-only mode (not used by run.sh): also ping the client
                        // after every N echoes, to exercise the clients' auto-pong.
                        if ping_every > 0 && echoed % ping_every == 0 {
                            let ping = Message::Ping(echoed.to_be_bytes().to_vec().into());
                            if ws.send(ping).await.is_err() {
                                break;
                            }
                        }
                    }
                    Ok(Message::Ping(_)) => {
                        let _ = ws.flush().await;
                    }
                    Ok(Message::Pong(_)) => pongs += 1,
                    Ok(Message::Close(cf)) => close_code = cf.map(|c| u16::from(c.code)),
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            if ping_every > 0 {
                eprintln!("server: conn done echoed={echoed} pongs={pongs} close_code={close_code:?}");
            }
        });
    }
}

// ---------------------------------------------------------------- client driver

struct Target {
    host_port: String,
    path: String,
}

fn parse_ws_url(url: &str) -> Res<Target> {
    let rest = url.strip_prefix("ws://").ok_or("only ws:// URLs are supported")?;
    let (host_port, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    Ok(Target { host_port: host_port.to_string(), path: path.to_string() })
}

async fn client(which: String, url: String, conns: usize, messages: usize, size: usize) -> Res<()> {
    let target = std::rc::Rc::new(parse_ws_url(&url)?);
    let payload: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();

    let cpu0 = cpu_secs();
    let t0 = Instant::now();

    let (echoed, phases, (echo_user, echo_sys)) = if which == "tungstenite" {
        run_phases(conns, |i| tung::connect(target.clone(), url.clone(), i), |ws| {
            tung::echo(ws, payload.clone(), messages)
        }, tung::close)
        .await?
    } else {
        run_phases(conns, |i| fast::connect(target.clone(), i), |ws| {
            fast::echo(ws, payload.clone(), messages)
        }, fast::close)
        .await?
    };

    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_secs() - cpu0;
    let [setup, echo, close] = phases;
    let msgs = echoed as f64;
    println!(
        "client={which} conns={conns} messages={messages} size={size} echoed={echoed} \
         echo_wall_s={:.4} echo_cpu_s={:.4} cpu_us_per_msg={:.3} user_us_per_msg={:.3} \
         sys_us_per_msg={:.3} msgs_per_s={:.0} \
         setup_wall_s={:.4} setup_cpu_s={:.4} close_wall_s={:.4} close_cpu_s={:.4} \
         total_wall_s={wall:.4} total_cpu_s={cpu:.4}",
        echo.0,
        echo.1,
        echo.1 * 1e6 / msgs,
        echo_user * 1e6 / msgs,
        echo_sys * 1e6 / msgs,
        msgs / echo.0,
        setup.0,
        setup.1,
        close.0,
        close.1,
    );
    Ok(())
}

/// Runs the three phases over all connections concurrently on the current thread.
/// Returns messages echoed, (wall, cpu) seconds per phase, and the echo phase's
/// (user, system) CPU seconds.
async fn run_phases<W, C, CF, E, EF, X, XF>(
    conns: usize,
    connect: C,
    echo: E,
    close: X,
) -> Res<(usize, [(f64, f64); 3], (f64, f64))>
where
    W: 'static,
    C: Fn(usize) -> CF,
    CF: Future<Output = Res<W>> + 'static,
    E: Fn(W) -> EF,
    EF: Future<Output = Res<(W, usize)>> + 'static,
    X: Fn(W) -> XF,
    XF: Future<Output = Res<()>> + 'static,
{
    let mut phases = [(0.0, 0.0); 3];
    let mark = || (Instant::now(), cpu_secs());
    let done = |m: (Instant, f64)| (m.0.elapsed().as_secs_f64(), cpu_secs() - m.1);

    let m = mark();
    let mut hs = Vec::with_capacity(conns);
    for i in 0..conns {
        hs.push(tokio::task::spawn_local(connect(i)));
    }
    let mut socks = Vec::with_capacity(conns);
    for h in hs {
        socks.push(h.await?.map_err(|e| format!("connect: {e}"))?);
    }
    phases[0] = done(m);

    let m = mark();
    let us0 = cpu_user_sys();
    let hs: Vec<_> = socks.into_iter().map(|w| tokio::task::spawn_local(echo(w))).collect();
    let mut socks = Vec::with_capacity(conns);
    let mut echoed = 0;
    for h in hs {
        let (w, n) = h.await?.map_err(|e| format!("echo: {e}"))?;
        echoed += n;
        socks.push(w);
    }
    phases[1] = done(m);
    let us1 = cpu_user_sys();
    let echo_user_sys = (us1.0 - us0.0, us1.1 - us0.1);

    let m = mark();
    let hs: Vec<_> = socks.into_iter().map(|w| tokio::task::spawn_local(close(w))).collect();
    for h in hs {
        h.await?.map_err(|e| format!("close: {e}"))?;
    }
    phases[2] = done(m);
    Ok((echoed, phases, echo_user_sys))
}

async fn dial(t: &Target) -> Res<TcpStream> {
    let s = TcpStream::connect(&t.host_port).await?;
    s.set_nodelay(true)?;
    Ok(s)
}

// ---------------------------------------------------------------- tokio-tungstenite client

mod tung {
    use super::*;
    use tokio_tungstenite::WebSocketStream;
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    use tokio_tungstenite::tungstenite::{Bytes, Message};

    pub type Ws = WebSocketStream<TcpStream>;

    pub async fn connect(t: std::rc::Rc<Target>, url: String, _i: usize) -> Res<Ws> {
        let s = dial(&t).await?;
        // Our own dialed stream; the handshake runs over it (status/headers checked,
        // Sec-WebSocket-Accept verified by tungstenite).
        let (ws, resp) = tokio_tungstenite::client_async(url, s).await?;
        if resp.status().as_u16() != 101 {
            return Err(format!("handshake status {}", resp.status()).into());
        }
        Ok(ws)
    }

    pub async fn echo(mut ws: Ws, payload: Vec<u8>, messages: usize) -> Res<(Ws, usize)> {
        let size = payload.len();
        let (first, last) = (payload.first().copied(), payload.last().copied());
        // One Bytes for the whole loop; each send clones it (refcount, no copy/alloc here).
        // tungstenite copies it into its write buffer and masks it there.
        let payload = Bytes::from(payload);
        let mut n = 0;
        for _ in 0..messages {
            ws.send(Message::Binary(payload.clone())).await?; // feed + flush
            loop {
                match ws.next().await {
                    Some(Ok(Message::Binary(b))) => {
                        if b.len() != size || b.first().copied() != first || b.last().copied() != last {
                            return Err("echo payload mismatch".into());
                        }
                        break;
                    }
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    Some(Ok(other)) => return Err(format!("unexpected message {other:?}").into()),
                    Some(Err(e)) => return Err(e.into()),
                    None => return Err("connection ended mid-echo".into()),
                }
            }
            n += 1;
        }
        Ok((ws, n))
    }

    pub async fn close(mut ws: Ws) -> Res<()> {
        ws.close(Some(CloseFrame { code: CloseCode::Normal, reason: "".into() })).await?;
        // Wait for the server's close reply; tungstenite ends the stream after it.
        let mut got_close = false;
        while let Some(m) = ws.next().await {
            match m {
                Ok(Message::Close(Some(cf))) => {
                    if u16::from(cf.code) != 1000 {
                        return Err(format!("close code {}", u16::from(cf.code)).into());
                    }
                    got_close = true;
                }
                Ok(Message::Close(None)) => got_close = true,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        if !got_close {
            return Err("no close reply".into());
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- fastwebsockets client

mod fast {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD as B64;
    use fastwebsockets::{Frame, OpCode, Payload, Role, WebSocket, WebSocketError};
    use sha1::{Digest, Sha1};

    pub type Ws = WebSocket<TcpStream>;

    const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

    /// HTTP/1.1 upgrade done by hand on our own stream (no hyper), then after_handshake.
    pub async fn connect(t: std::rc::Rc<Target>, i: usize) -> Res<Ws> {
        let mut s = dial(&t).await?;
        let mut nonce = [0u8; 16];
        let seed = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_nanos() as u64;
        nonce[..8].copy_from_slice(&seed.to_le_bytes());
        nonce[8..].copy_from_slice(&seed.rotate_left(29).to_le_bytes());
        let key = B64.encode(nonce);
        let req = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n",
            t.path, t.host_port
        );
        s.write_all(req.as_bytes()).await?;

        let mut buf = Vec::with_capacity(1024);
        let end = loop {
            if buf.len() > 16 * 1024 {
                return Err("handshake response too large".into());
            }
            let mut chunk = [0u8; 1024];
            let n = s.read(&mut chunk).await?;
            if n == 0 {
                return Err("EOF during handshake".into());
            }
            buf.extend_from_slice(&chunk[..n]);
            if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
        };
        // The server sends nothing after its 101 until we send, so nothing may follow.
        if end != buf.len() {
            return Err("bytes after handshake response".into());
        }
        let head = std::str::from_utf8(&buf[..end])?;
        let mut lines = head.split("\r\n");
        let status = lines.next().unwrap_or("");
        if !status.starts_with("HTTP/1.1 101") {
            return Err(format!("handshake status line {status:?}").into());
        }
        let want = B64.encode(Sha1::digest(format!("{key}{GUID}").as_bytes()));
        let accept = lines
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("sec-websocket-accept"))
            .map(|(_, v)| v.trim());
        if accept != Some(want.as_str()) {
            return Err("bad Sec-WebSocket-Accept".into());
        }

        let mut ws = WebSocket::after_handshake(s, Role::Client);
        ws.set_auto_close(true); // defaults, stated
        ws.set_auto_pong(true);
        Ok(ws)
    }

    pub async fn echo(mut ws: Ws, payload: Vec<u8>, messages: usize) -> Res<(Ws, usize)> {
        let size = payload.len();
        let (first, last) = (payload.first().copied(), payload.last().copied());
        // Role::Client masks the payload in place (Frame::mask -> Payload::to_mut): a
        // BorrowedMut payload is masked in our buffer without allocating (a Borrowed one
        // would be copied into a fresh Vec). So refill one scratch buffer per message.
        let mut scratch = vec![0u8; size];
        let mut n = 0;
        for _ in 0..messages {
            scratch.copy_from_slice(&payload);
            ws.write_frame(Frame::binary(Payload::BorrowedMut(&mut scratch))).await?;
            loop {
                let f = ws.read_frame().await?;
                match f.opcode {
                    OpCode::Binary => {
                        // tungstenite sends each message as one frame; FragmentCollector
                        // is not needed against this server.
                        if !f.fin {
                            return Err("fragmented echo (unexpected)".into());
                        }
                        let b: &[u8] = &f.payload;
                        if b.len() != size || b.first().copied() != first || b.last().copied() != last {
                            return Err("echo payload mismatch".into());
                        }
                        break;
                    }
                    OpCode::Ping | OpCode::Pong => continue, // auto_pong answers pings
                    op => return Err(format!("unexpected opcode {op:?}").into()),
                }
            }
            n += 1;
        }
        Ok((ws, n))
    }

    pub async fn close(mut ws: Ws) -> Res<()> {
        ws.write_frame(Frame::close(1000, b"")).await?;
        loop {
            match ws.read_frame().await {
                Ok(f) if f.opcode == OpCode::Close => {
                    let code = (f.payload.len() >= 2)
                        .then(|| u16::from_be_bytes([f.payload[0], f.payload[1]]));
                    if code.is_some_and(|c| c != 1000) {
                        return Err(format!("close code {code:?}").into());
                    }
                    return Ok(());
                }
                Ok(_) => continue,
                Err(WebSocketError::UnexpectedEOF) => return Err("EOF before close reply".into()),
                Err(e) => return Err(e.into()),
            }
        }
    }
}
