//! WebSocket streams (issue 27): volley against the built-in target's `/ws` echo, which sends
//! each message back `delay_ms` after it arrived. The measured round trips and gaps must match
//! that truth within max(0.2 ms, 3 %), in both load models; a close with an error code is an
//! error of its own kind; every record passes the verifier. Then interop: a Python
//! `websockets` echo server that pings its clients.

mod common;

use std::path::Path;

use common::streams::{
    CLOSED, OPEN, PythonPeer, accurate, missed, near_truth, step_streams, stream_plan,
};
use common::{run_json, run_json_ok, run_volley, serial, target, temp_dir};

/// Writes a plan against `base` with one scenario of `load` and one step `stream` of `step`.
fn plan(dir: &Path, base: &str, load: &str, step: &str, extra: &str) -> String {
    stream_plan(dir, base, "", load, step, extra)
}

fn echoes_are_the_delay(load: &str, name: &str) {
    let _serial = serial();
    accurate(|| {
        let t = target();
        let dir = temp_dir(name);
        // Each message after the reply to the one before; each reply 20 ms after its message
        // arrived: every round trip is 20 ms and the loopback's way there and back.
        let step = "path = \"/ws?delay_ms=20\"\nbody = \"hello\"\n\
                websocket = { count = 5, echo = true }";
        let extra = "[thresholds]\nround_trip = [\"p50 < 30ms\"]";
        let plan = plan(&dir, &t.base_url(), load, step, extra);
        let r = run_json_ok(&dir, &["run", &plan]);
        assert_eq!(r["thresholds"][0]["passed"], true, "{:#}", r["thresholds"]);
        assert_eq!(r["summary"]["status"]["101"], r["summary"]["requests"]);
        let s = step_streams(&r);
        let streams = s["streams"].as_u64().unwrap();
        assert!(streams >= 8, "{s:#}");
        assert_eq!(s["failed"], 0, "{s:#}");
        assert_eq!(s["messages"].as_u64(), Some(5 * streams));
        assert_eq!(s["ended"]["eof"].as_u64(), Some(streams));
        let sent = &s["sent"];
        assert_eq!(sent["messages"].as_u64(), Some(5 * streams), "{s:#}");
        assert_eq!(sent["round_trips"].as_u64(), Some(5 * streams));
        let rtt = sent["round_trip_ms"]["p50"].as_f64().unwrap();
        near_truth("round trip p50", rtt, 20.0);
        let gap = s["message_gap_ms"]["p50"].as_f64().unwrap();
        near_truth("gap p50", gap, 20.0);
        // Every stream opens its own connection: the upgrade is each one's wait.
        assert_eq!(r["summary"]["connections_opened"], r["summary"]["requests"]);
    });
}

#[test]
fn echo_round_trips_are_the_delay_in_the_closed_model() {
    echoes_are_the_delay(CLOSED, "ws-echo-closed");
}

#[test]
fn echo_round_trips_are_the_delay_in_the_open_model() {
    echoes_are_the_delay(OPEN, "ws-echo-open");
}

#[test]
fn paced_messages_come_back_on_their_own_schedule() {
    let _serial = serial();
    accurate(|| {
        let t = target();
        let dir = temp_dir("ws-paced");
        // One message every 10 ms, each echoed 30 ms after it arrived: the replies overlap the
        // sends, each round trip still 30 ms and the replies 10 ms apart.
        let step = "path = \"/ws?delay_ms=30\"\nbody = \"0123456789\"\n\
                websocket = { count = 6, interval = \"10ms\", binary = true }";
        let r = run_json_ok(&dir, &["run", &plan(&dir, &t.base_url(), CLOSED, step, "")]);
        let s = step_streams(&r);
        let streams = s["streams"].as_u64().unwrap();
        assert_eq!(s["failed"], 0, "{s:#}");
        assert_eq!(s["messages"].as_u64(), Some(6 * streams));
        let rtt = s["sent"]["round_trip_ms"]["p50"].as_f64().unwrap();
        near_truth("round trip p50", rtt, 30.0);
        let gap = s["message_gap_ms"]["p50"].as_f64().unwrap();
        near_truth("gap p50", gap, 10.0);
    });
}

#[test]
fn every_frame_counts_in_the_bytes_sent() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("ws-bytes");
    let load = "profile = \"iterations\"\nvus = 2\niterations = 4";
    let per_stream = |count: u64| {
        let step = format!(
            "path = \"/ws\"\nbody = \"hello\"\nwebsocket = {{ count = {count}, echo = true }}"
        );
        let r = run_json_ok(&dir, &["run", &plan(&dir, &t.base_url(), load, &step, "")]);
        assert_eq!(r["summary"]["requests"], 4);
        assert_eq!(r["summary"]["errors"], 0);
        r["summary"]["bytes_sent"].as_u64().unwrap() / 4
    };
    // A client frame of "hello": 2 bytes of header, a 4-byte mask, 5 of payload.
    assert_eq!(per_stream(5) - per_stream(1), 4 * (2 + 4 + 5));
}

#[test]
fn a_close_with_an_error_code_is_a_websocket_close_error() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("ws-close");
    let load = "profile = \"iterations\"\nvus = 2\niterations = 6";
    let run = |code: u16| {
        // The target closes after two echoes; the stream asked for five.
        let step = format!(
            "path = \"/ws?close_after=2&code={code}\"\nbody = \"x\"\n\
             websocket = {{ count = 5, echo = true }}"
        );
        let args = ["run", &plan(&dir, &t.base_url(), load, &step, "")];
        let (_, r) = run_json(&dir, &args);
        r
    };
    let r = run(1011);
    assert_eq!(r["summary"]["errors"], 6, "{:#}", r["summary"]);
    assert_eq!(r["summary"]["errors_by_kind"]["websocket_close"], 6);
    assert_eq!(step_streams(&r)["messages"], 12);
    // A normal close ends the stream early, and is no error.
    let r = run(1000);
    assert_eq!(r["summary"]["errors"], 0, "{:#}", r["summary"]);
    assert_eq!(step_streams(&r)["messages"], 12);
}

#[test]
fn steps_that_cannot_be_websockets_are_refused_where_they_are() {
    let _serial = serial();
    let dir = temp_dir("ws-refused");
    let base = "http://127.0.0.1:9";
    for (step, extra, why) in [
        (
            "path = \"/ws\"\nmethod = \"POST\"\nwebsocket = {}",
            "",
            "opens with a GET",
        ),
        (
            "path = \"/ws\"\nbody = \"hi\"\nwebsocket = { match = \"$.id\" }",
            "",
            "`match` needs a message template that gives each message its id",
        ),
        ("path = \"/ws/{{ seq }}\"\nwebsocket = {}", "", "seq"),
        (
            "path = \"/ws\"\nbody = \"{{ seq }}\"\nwebsocket = { match = \"$.a[x]\" }",
            "",
            "websocket.match",
        ),
        (
            "path = \"/ws\"\nsse = {}\nwebsocket = {}",
            "",
            "neither SSE nor gRPC",
        ),
        (
            "path = \"/ws\"\nwebsocket = { echo = true, interval = \"1ms\" }",
            "",
            "websocket has both `echo` and `interval`",
        ),
        (
            "path = \"/ws\"\nwebsocket = { count = 0 }",
            "",
            "websocket.count and max_messages are at least 1",
        ),
        (
            "path = \"/ws\"\nwebsocket = { count = 101, interval = \"100ms\" }",
            "",
            "not within the request timeout of 10s",
        ),
        (
            "path = \"/sse?events=3&gap_ms=1\"\nsse = {}",
            "[thresholds]\nround_trip = [\"p95 < 10ms\"]",
            "`round_trip` is a figure of round trips",
        ),
        (
            "path = \"/ws\"\nwebsocket = {}",
            "[thresholds]\ntpot = [\"p95 < 10ms\"]",
            "`tpot` is a figure of LLM streams",
        ),
        (
            "path = \"/ws\"\nwebsocket = {}",
            "[thresholds]\ngoodput = [\"> 1\"]",
            "`goodput` is a figure of streams with objectives",
        ),
    ] {
        let plan = plan(&dir, base, CLOSED, step, extra);
        let (code, _, err) = run_volley(&["check", &plan]);
        assert_ne!(code, Some(0), "{step}");
        assert!(err.contains(why), "{step}: {err}");
        assert!(err.contains("plan.toml:"), "located: {err}");
    }
    let http2 = plan(&dir, base, CLOSED, "path = \"/ws\"\nwebsocket = {}", "");
    let text = std::fs::read_to_string(&http2).unwrap().replace(
        "timeout = \"10s\"",
        "timeout = \"10s\"\nprotocol = \"http2\"",
    );
    std::fs::write(&http2, text).unwrap();
    let (code, _, err) = run_volley(&["check", &http2]);
    assert_ne!(code, Some(0));
    assert!(err.contains("RFC 8441"), "{err}");
    // What a step sends over its WebSocket is shown: written out, or its first rendered.
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/008-websocket.toml");
    let (code, out, err) = run_volley(&["check", example]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("    each message: {\"message\":\"hello\"}\n"),
        "{out}"
    );
    assert!(
        out.contains("    each message: (32 bytes, binary)\n"),
        "{out}"
    );
    let seq = "path = \"/ws\"\nbody = \"n{{ seq }}\"\nwebsocket = { count = 2 }";
    let (code, out, err) = run_volley(&["check", &plan(&dir, base, CLOSED, seq, "")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("    message (seq 0): n0\n"), "{out}");
}

#[test]
fn a_python_websockets_server_is_measured_and_its_pings_answered() {
    let _serial = serial();
    let peer = PythonPeer::start("ws_echo_server.py", "websockets");
    let dir = temp_dir("ws-python");
    let base = peer.base();
    let load = "profile = \"iterations\"\nvus = 2\niterations = 4";
    // 30 messages 20 ms apart: 600 ms, three times the peer's pong deadline, under its pings
    // every 20 ms. A client that did not answer them would be closed with 1011.
    let step = "path = \"/\"\nbody = \"ping me\"\n\
                websocket = { count = 30, interval = \"20ms\" }";
    let r = run_json_ok(&dir, &["run", &plan(&dir, &base, load, step, "")]);
    assert_eq!(r["summary"]["errors"], 0, "{:#}", r["summary"]);
    let s = step_streams(&r);
    assert_eq!(
        (s["streams"].as_u64(), s["failed"].as_u64()),
        (Some(4), Some(0))
    );
    assert_eq!(s["messages"], 120);
    assert_eq!(s["sent"]["round_trips"], 120);
    // Python answers at once: round trips well under the 20 ms between messages.
    let rtt = s["sent"]["round_trip_ms"]["p50"].as_f64().unwrap();
    assert!(rtt < 10.0, "round trip p50 {rtt} ms");
}

#[test]
fn replies_that_overtake_each_other_are_matched_by_id() {
    let _serial = serial();
    let peer = PythonPeer::start("ws_echo_server.py", "websockets");
    let dir = temp_dir("ws-match");
    let load = "profile = \"iterations\"\nvus = 2\niterations = 6";
    // Six messages 10 ms apart, each rendered with its index; the peer answers the even ones
    // after 40 ms and the odd ones after 20, so each odd reply overtakes the even one before it.
    let step = "path = \"/\"\n\
                body = '{\"id\": \"m{{ seq }}\", \"delay_ms\": {{ 40 if seq % 2 == 0 else 20 }}}'\n\
                websocket = { count = 6, interval = \"10ms\", match = \"$.id\" }";
    let r = run_json_ok(&dir, &["run", &plan(&dir, &peer.base(), load, step, "")]);
    assert_eq!(r["summary"]["errors"], 0, "{:#}", r["summary"]);
    let s = step_streams(&r);
    assert_eq!(
        (s["streams"].as_u64(), s["messages"].as_u64()),
        (Some(6), Some(36))
    );
    assert_eq!(s["sent"]["round_trips"], 36);
    // By id, half the round trips are 20 ms and half 40 ms (Python's timers add a little). In
    // order, each reply would be paired with the message sent before it: all 30 ms.
    let rtt = &s["sent"]["round_trip_ms"];
    let (p25, p75) = (rtt["p25"].as_f64().unwrap(), rtt["p75"].as_f64().unwrap());
    assert!((20.0..24.0).contains(&p25), "p25 {p25} ms: {rtt:#}");
    assert!((40.0..45.0).contains(&p75), "p75 {p75} ms: {rtt:#}");
}

#[test]
fn a_message_that_cannot_be_rendered_cuts_its_stream_short() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("ws-message-template");
    // The first message renders; the second asks minijinja for a range too long to make.
    let step = "path = \"/ws?delay_ms=1\"\n\
                body = \"m{{ range(seq * 100000000) | length }}\"\n\
                websocket = { count = 3, echo = true }";
    let load = "profile = \"iterations\"\nvus = 1\niterations = 2";
    let (out, r) = run_json(&dir, &["run", &plan(&dir, &t.base_url(), load, step, "")]);
    assert_ne!(out.status.code(), Some(0), "every request failed");
    let summary = &r["summary"];
    assert_eq!(
        summary["errors_by_kind"]["message_template"], 2,
        "{summary:#}"
    );
    // Each stream was opened and sent its first message: a request, with its bytes.
    assert_eq!(
        (summary["requests"].as_u64(), summary["not_sent"].as_u64()),
        (Some(2), Some(0))
    );
    assert!(summary["bytes_sent"].as_u64().unwrap() > 0);
    let s = step_streams(&r);
    assert_eq!(
        (s["streams"].as_u64(), s["failed"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(s["sent"]["messages"], 2, "{s:#}");
}

#[test]
fn example_008_websocket_runs_and_reads_its_echo() {
    let _serial = serial();
    accurate(|| {
        let t = target();
        let dir = temp_dir("example-008");
        let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/008-websocket.toml");
        let base = format!("target.base_url={}", t.base_url());
        let args = ["run", example, "--set", &base, "--time-scale", "0.4"];
        let r = run_json_ok(&dir, &args);
        let scenario = |name: &str| {
            r["groups"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["kind"] == "scenario" && g["name"] == name)
                .unwrap_or_else(|| panic!("no scenario {name}"))["streams"]
                .clone()
        };
        let chat = scenario("chat");
        let streams = chat["streams"].as_u64().unwrap();
        assert_eq!(chat["sent"]["round_trips"].as_u64(), Some(20 * streams));
        let rtt = chat["sent"]["round_trip_ms"]["p50"].as_f64().unwrap();
        // A 2 ms delay: the loopback's way there and back is above 3 % of it, so within 0.5 ms.
        if !(2.0..2.5).contains(&rtt) {
            missed(format!("round trip p50 {rtt} ms, not within 2.0–2.5"));
        }
        let ticker = scenario("ticker");
        let rtt = ticker["sent"]["round_trip_ms"]["p50"].as_f64().unwrap();
        near_truth("ticker round trip p50", rtt, 25.0);
        let report =
            std::fs::read_to_string(common::only_subfolder(&dir.join("results")).join("report.md"))
                .unwrap();
        for table in ["## Streams", "## Stream sends and goodput", "TTFT ≤ 50 ms"] {
            assert!(report.contains(table), "{table} missing from report.md");
        }
    });
}
