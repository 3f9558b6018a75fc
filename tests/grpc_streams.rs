//! gRPC streams (issue 27): server, client and bidirectional streaming against the built-in
//! target's `volley.target.v1.Streams`, whose streams follow a known schedule (ticks after T ms,
//! then one every G ms; each echo D ms after its message arrived). The measured time to first
//! message, gaps and round trips must match that truth within max(0.2 ms, 3 %), in both load
//! models; every record passes the verifier. Then interop: volley against a Python `grpcio`
//! server, and `grpcurl` against volley's target.

mod common;

use std::path::Path;
use std::process::Command;

use common::query_api::binary;
use common::streams::{
    CLOSED, OPEN, PythonPeer, accurate, missed, near_schedule, near_truth, step_streams,
    stream_plan,
};
use common::{run_json, run_json_ok, run_volley, serial, target, temp_dir};
use serde_json::Value;

const PROTO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/proto/volley_target.proto");

/// Writes a plan against `base` with one scenario of `load` and one step `stream` of `step`.
fn plan(dir: &Path, base: &str, load: &str, step: &str, extra: &str) -> String {
    stream_plan(
        dir,
        base,
        &format!("proto = [\"{PROTO}\"]\n"),
        load,
        step,
        extra,
    )
}

fn server_streams_match_the_schedule(load: &str, name: &str) {
    let _serial = serial();
    accurate(|| {
        let t = target();
        let dir = temp_dir(name);
        // Time to the first tick holds the send lag and the call's way to the target's task; a
        // 50 ms first tick's 3 % covers them. The gaps are the schedule's own.
        let step = "grpc = \"volley.target.v1.Streams/Ticks\"\n\
                json = { count = 10, gap_ms = 10, first_ms = 50 }";
        let plan = plan(&dir, &t.base_url(), load, step, "");
        let r = run_json_ok(&dir, &["run", &plan]);
        let s = step_streams(&r);
        let streams = s["streams"].as_u64().unwrap();
        assert!(streams >= 8, "{s:#}");
        assert_eq!(s["failed"], 0);
        assert_eq!(s["messages"].as_u64(), Some(10 * streams), "{s:#}");
        assert_eq!(s["ended"]["eof"].as_u64(), Some(streams));
        assert!(s.get("sent").is_none(), "a server stream sends one message");
        near_schedule(s, 50.0, 10.0, Some(140.0));
    });
}

#[test]
fn server_streams_match_the_schedule_in_the_closed_model() {
    server_streams_match_the_schedule(CLOSED, "grpc-ticks-closed");
}

#[test]
fn server_streams_match_the_schedule_in_the_open_model() {
    server_streams_match_the_schedule(OPEN, "grpc-ticks-open");
}

/// One closed-model run of 5-message echo streams to `Chat` with the target answering each
/// message `delay_ms` after it arrives; returns the step's stream figures.
fn chat(dir: &Path, base: &str, delay_ms: u32) -> Value {
    let step = format!(
        "grpc = \"volley.target.v1.Streams/Chat\"\n\
         json = {{ message = \"hi {{{{ vu }}}}\", delay_ms = {delay_ms} }}\n\
         grpc_stream = {{ count = 5, echo = true }}"
    );
    let extra = "[thresholds]\nround_trip = [\"p50 < 30ms\"]";
    let r = run_json_ok(dir, &["run", &plan(dir, base, CLOSED, &step, extra)]);
    assert_eq!(r["thresholds"][0]["passed"], true, "{:#}", r["thresholds"]);
    step_streams(&r).clone()
}

#[test]
fn bidirectional_round_trips_are_the_echo_delay() {
    let _serial = serial();
    accurate(|| {
        let t = target();
        let dir = temp_dir("grpc-chat");
        // Each message after the reply to the one before; the target answers 20 ms after each
        // arrives. Its timer wakes late, never early: on this VM a core idle for 20 ms wakes
        // 0.4–0.8 ms late (measured: p50 20.45–20.8 ms, while the same streams with no delay
        // take 0.1 ms), which the nominal 20 ms does not know and the target does not report for
        // streams. So every round trip is held to [20 ms, 20 ms + 1.5 ms), as the peers' timers are
        // in tests/http3.rs.
        let s = chat(&dir, &t.base_url(), 20);
        let streams = s["streams"].as_u64().unwrap();
        assert!(streams >= 8, "{s:#}");
        assert_eq!(s["failed"], 0);
        assert_eq!(s["messages"].as_u64(), Some(5 * streams));
        let sent = &s["sent"];
        assert_eq!(sent["messages"].as_u64(), Some(5 * streams), "{s:#}");
        assert_eq!(sent["round_trips"].as_u64(), Some(5 * streams));
        let round_trip = sent["round_trip_ms"]["p50"].as_f64().unwrap();
        let gap = s["message_gap_ms"]["p50"].as_f64().unwrap();
        for (what, p50) in [("round trip", round_trip), ("gap", gap)] {
            assert!(
                (20.0..21.5).contains(&p50),
                "{what} p50 {p50} ms against 20 ms"
            );
        }
        // Echo: the replies are the round trips apart, and the stream is five of them (each round
        // trip's wake-up and transport share adds up five times, so the stream is held to five
        // measured round trips, not to five delays).
        let stream = s["stream_ms"]["p50"].as_f64().unwrap();
        near_truth("stream p50", stream, 5.0 * round_trip);
    });
}

#[test]
fn replies_that_overtake_each_other_are_matched_by_id() {
    let _serial = serial();
    accurate(|| {
        let t = target();
        let dir = temp_dir("grpc-match");
        // Six messages 10 ms apart, each rendered with its index; the target answers the even ones
        // 40 ms after they arrive and the odd ones after 20, so each odd reply overtakes the even
        // one before it. By id, the round trips are 20 and 40 ms; in order they would all be 30.
        let step = "grpc = \"volley.target.v1.Streams/Chat\"\n\
                body = '{\"message\": \"m{{ seq }}\", \"delay_ms\": {{ 40 if seq % 2 == 0 else 20 }}}'\n\
                grpc_stream = { count = 6, interval = \"10ms\", match = \"$.message\" }";
        let load = "profile = \"iterations\"\nvus = 2\niterations = 8";
        let r = run_json_ok(&dir, &["run", &plan(&dir, &t.base_url(), load, step, "")]);
        let s = step_streams(&r);
        assert_eq!(
            (s["streams"].as_u64(), s["failed"].as_u64()),
            (Some(8), Some(0)),
            "{s:#}"
        );
        assert_eq!(s["sent"]["messages"], 48);
        assert_eq!(s["sent"]["round_trips"], 48);
        let rtt = &s["sent"]["round_trip_ms"];
        near_truth("round trip p25", rtt["p25"].as_f64().unwrap(), 20.0);
        near_truth("round trip p75", rtt["p75"].as_f64().unwrap(), 40.0);
    });
}

#[test]
fn every_message_of_a_streaming_request_side_counts_in_the_bytes_sent() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("grpc-bytes");
    let load = "profile = \"iterations\"\nvus = 2\niterations = 4";
    let per_stream = |count: u64| {
        let step = format!(
            "grpc = \"volley.target.v1.Streams/Chat\"\n\
             json = {{ message = \"hi\", delay_ms = 1 }}\n\
             grpc_stream = {{ count = {count}, echo = true }}"
        );
        let r = run_json_ok(&dir, &["run", &plan(&dir, &t.base_url(), load, &step, "")]);
        assert_eq!(r["summary"]["requests"], 4);
        r["summary"]["bytes_sent"].as_u64().unwrap() / 4
    };
    // The framed EchoRequest: 5 bytes of frame header, "hi" (2 + 2) and delay_ms (1 + 8).
    assert_eq!(per_stream(5) - per_stream(1), 4 * (5 + 4 + 9));
}

#[test]
fn client_streams_send_on_their_schedule_and_read_one_reply() {
    let _serial = serial();
    accurate(|| {
        let t = target();
        let dir = temp_dir("grpc-collect");
        let step = "grpc = \"volley.target.v1.Streams/Collect\"\n\
                json = { seq = 1 }\n\
                grpc_stream = { count = 6, interval = \"10ms\" }";
        let plan = plan(&dir, &t.base_url(), OPEN, step, "");
        let r = run_json_ok(&dir, &["run", &plan]);
        let s = step_streams(&r);
        let streams = s["streams"].as_u64().unwrap();
        assert!(streams >= 40, "{s:#}");
        assert_eq!(s["messages"].as_u64(), Some(streams), "one reply each");
        assert_eq!(s["sent"]["messages"].as_u64(), Some(6 * streams));
        assert_eq!(s["sent"]["round_trips"], 0);
        // The last of six messages 10 ms apart leaves at 50 ms; the reply follows the close.
        near_truth("stream p50", s["stream_ms"]["p50"].as_f64().unwrap(), 50.0);
    });
}

#[test]
fn stream_thresholds_and_limits_apply_to_grpc_streams() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("grpc-limits");
    let step = "grpc = \"volley.target.v1.Streams/Ticks\"\n\
                json = { count = 100, gap_ms = 2 }\n\
                grpc_stream = { max_messages = 4, slo = { ttft = \"1us\" } }";
    let extra = "[thresholds]\nmessage_gap_ms = [\"p99 < 1us\"]";
    let load = "profile = \"iterations\"\nvus = 2\niterations = 6";
    let plan = plan(&dir, &t.base_url(), load, step, extra);
    let (out, r) = run_json(&dir, &["run", &plan]);
    assert_ne!(out.status.code(), Some(0), "the gap threshold fails");
    let s = step_streams(&r);
    assert_eq!(
        s["failed"], 0,
        "a stream stopped at its limit is no failure: {s:#}"
    );
    assert_eq!(s["ended"]["limit"], 6);
    assert_eq!(s["messages"], 24);
    assert_eq!(s["goodput"]["good"], 0, "nobody meets a 1 µs TTFT");
    assert_eq!(s["goodput"]["judged"], 6);
}

#[test]
fn grpc_stream_options_that_cannot_apply_are_refused_where_they_are() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("grpc-refused");
    let cases = [
        (
            "grpc = \"volley.target.v1.Echo/Echo\"\ngrpc_stream = {}",
            "is a unary method",
        ),
        (
            "grpc = \"volley.target.v1.Streams/Ticks\"\ngrpc_stream = { count = 3 }",
            "client sends one message",
        ),
        (
            "grpc = \"volley.target.v1.Streams/Collect\"\ngrpc_stream = { echo = true }",
            "replies once",
        ),
        (
            "grpc = \"volley.target.v1.Streams/Chat\"\n\
             grpc_stream = { echo = true, interval = \"1ms\" }",
            "pick one pace",
        ),
        (
            "grpc = \"volley.target.v1.Streams/Chat\"\ngrpc_stream = { count = 0 }",
            "at least 1",
        ),
        ("path = \"/\"\ngrpc_stream = {}", "needs a gRPC step"),
        (
            "grpc = \"volley.target.v1.Streams/Collect\"\n\
             json = { count = \"{{ seq }}\" }\ngrpc_stream = { count = 2, match = \"$.count\" }",
            "replies are not round trips",
        ),
        (
            "grpc = \"volley.target.v1.Streams/Chat\"\n\
             json = { message = \"hi\" }\ngrpc_stream = { count = 2, match = \"$.message\" }",
            "one id every time",
        ),
        (
            "grpc = \"volley.target.v1.Streams/Ticks\"\njson = { count = \"{{ seq }}\" }",
            "seq",
        ),
        (
            "grpc = \"volley.target.v1.Streams/Ticks\"\ngrpc_stream = { slo = { tpot = \"5ms\" } }",
            "grpc_stream.slo.tpot",
        ),
        (
            "grpc = \"volley.target.v1.Streams/Ticks\"\ngrpc_stream = { slo = { ttft = \"fast\" } }",
            "grpc_stream.slo.ttft",
        ),
    ];
    for (step, why) in cases {
        let plan = plan(&dir, &t.base_url(), CLOSED, step, "");
        let (code, _, err) = run_volley(&["check", &plan]);
        assert_ne!(code, Some(0), "{step}");
        assert!(err.contains(why), "{step}: {err}");
        assert!(err.contains("plan.toml:"), "located: {err}");
    }
}

#[test]
fn streams_of_a_python_grpcio_server_are_measured() {
    let _serial = serial();
    let peer = PythonPeer::start("grpc_stream_server.py", "grpcio");
    let dir = temp_dir("grpc-python");
    let base = peer.base();
    let load = "profile = \"iterations\"\nvus = 2\niterations = 6";
    let step = "grpc = \"volley.target.v1.Streams/Ticks\"\n\
                json = { count = 5, gap_ms = 10, first_ms = 20 }";
    let r = run_json_ok(&dir, &["run", &plan(&dir, &base, load, step, "")]);
    let s = step_streams(&r);
    assert_eq!(
        (s["streams"].as_u64(), s["failed"].as_u64()),
        (Some(6), Some(0))
    );
    assert_eq!(s["messages"], 30);
    // Python's sleep is coarser than the target's timer: within a millisecond.
    let gap = s["message_gap_ms"]["p50"].as_f64().unwrap();
    assert!((gap - 10.0).abs() < 1.0, "gap p50 {gap} ms");
    let step = "grpc = \"volley.target.v1.Streams/Chat\"\n\
                json = { message = \"hi\" }\n\
                grpc_stream = { count = 5, echo = true }";
    let r = run_json_ok(&dir, &["run", &plan(&dir, &base, load, step, "")]);
    let s = step_streams(&r);
    assert_eq!(s["failed"], 0, "{s:#}");
    assert_eq!(s["messages"], 30);
    assert_eq!(s["sent"]["round_trips"], 30);
}

#[test]
fn grpcurl_calls_every_streaming_method_of_the_target() {
    let Some(grpcurl) = binary(
        "VOLLEY_GRPCURL",
        "grpcurl",
        "go install github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.3",
    ) else {
        return;
    };
    let _serial = serial();
    let t = target();
    let addr = t.base_url().trim_start_matches("http://").to_string();
    let call = |method: &str, data: &str| {
        let out = Command::new(&grpcurl)
            .args(["-plaintext", "-d", data, &addr])
            .arg(format!("volley.target.v1.Streams/{method}"))
            .output()
            .expect("grpcurl runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // Over server reflection: the target describes its streaming methods.
    let ticks = call("Ticks", r#"{"count": 3, "gap_ms": 1}"#);
    assert_eq!(ticks.matches('{').count(), 3, "{ticks}");
    assert!(ticks.contains(r#""seq": "2""#), "{ticks}");
    let collect = call("Collect", r#"{"seq": 1} {"seq": 2} {"seq": 3}"#);
    assert!(collect.contains(r#""count": "3""#), "{collect}");
    let chat = call(
        "Chat",
        r#"{"message": "a"} {"message": "b", "delay_ms": 1}"#,
    );
    assert!(chat.contains(r#""message": "a""#) && chat.contains(r#""message": "b""#));
}

/// The streams of the scenario `scenario`'s group.
fn scenario_streams<'a>(r: &'a Value, scenario: &str) -> &'a Value {
    let g = r["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["kind"] == "scenario" && g["name"] == scenario)
        .unwrap_or_else(|| panic!("no scenario {scenario}"));
    &g["streams"]
}

#[test]
fn example_006_grpc_streams_runs_and_reads_its_schedule() {
    let _serial = serial();
    accurate(|| {
        let t = target();
        let dir = temp_dir("example-006");
        let example = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/006-grpc-streams.toml"
        );
        let base = format!("target.base_url={}", t.base_url());
        let args = ["run", example, "--set", &base, "--time-scale", "0.4"];
        let r = run_json_ok(&dir, &args);
        let ticks = scenario_streams(&r, "ticks");
        let streams = ticks["streams"].as_u64().unwrap();
        assert_eq!(ticks["messages"].as_u64(), Some(20 * streams));
        near_truth(
            "ticks gap p50",
            ticks["message_gap_ms"]["p50"].as_f64().unwrap(),
            10.0,
        );
        assert_eq!(ticks["goodput"]["good"].as_u64(), Some(streams));
        let collect = scenario_streams(&r, "collect");
        let streams = collect["streams"].as_u64().unwrap();
        assert_eq!(collect["sent"]["messages"].as_u64(), Some(10 * streams));
        let chat = scenario_streams(&r, "chat");
        let rtt = chat["sent"]["round_trip_ms"]["p50"].as_f64().unwrap();
        // A 2 ms delay: the loopback's way there and back is above 3 % of it, so within 0.5 ms.
        if !(2.0..2.5).contains(&rtt) {
            missed(format!("round trip p50 {rtt} ms, not within 2.0–2.5"));
        }
        let report =
            std::fs::read_to_string(common::only_subfolder(&dir.join("results")).join("report.md"))
                .unwrap();
        for table in ["## Streams", "## Stream sends and goodput", "TTFT ≤ 50 ms"] {
            assert!(report.contains(table), "{table} missing from report.md");
        }
    });
}

#[test]
fn a_suite_compares_the_stream_figures_of_its_targets() {
    let _serial = serial();
    let dir = temp_dir("grpc-suite");
    let step = "grpc = \"volley.target.v1.Streams/Chat\"\n\
                json = { message = \"hi\", delay_ms = 2 }\n\
                grpc_stream = { count = 5, echo = true }";
    let load = "profile = \"constant-vus\"\nvus = 2\nduration = \"1s\"";
    let plan = plan(&dir, "http://127.0.0.1:9", load, step, "");
    let mut suite = format!("name = \"streams\"\nplan = \"{plan}\"\n");
    for name in ["one", "two"] {
        let port = common::closed_port();
        suite += &format!(
            "\n[[target]]\nname = \"{name}\"\nbase_url = \"http://127.0.0.1:{port}\"\n\
             command = [\"volley\", \"serve\", \"--port\", \"{port}\", \"--threads\", \"1\"]\n\
             health_timeout = \"10s\"\n"
        );
    }
    let file = dir.join("suite.toml");
    std::fs::write(&file, suite).unwrap();
    let results = dir.join("results");
    let out = common::volley()
        .arg("suite")
        .arg(&file)
        .arg("--out")
        .arg(&results)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let folder = common::only_subfolder(&results);
    for name in ["one", "two"] {
        common::verified(&folder.join(name).join("run.json"));
    }
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    for row in [
        "| TTFT p50 (ms) |",
        "| message gap p99 (ms) |",
        "| round trip p50 (ms) |",
    ] {
        assert!(
            md.contains(row),
            "{row} missing from the suite's comparison:\n{md}"
        );
    }
    assert!(
        !md.contains("| TPOT p50"),
        "no LLM stream, no TPOT row:\n{md}"
    );
}

#[test]
fn paced_bidirectional_messages_are_each_answered_after_the_delay() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("grpc-chat-paced");
    // Five messages 5 ms apart, each answered 20 ms after it arrived: the replies overlap the
    // sends, and no reply waits for the one before it.
    let step = "grpc = \"volley.target.v1.Streams/Chat\"\n\
                json = { message = \"hi\", delay_ms = 20 }\n\
                grpc_stream = { count = 5, interval = \"5ms\" }";
    let load = "profile = \"iterations\"\nvus = 2\niterations = 10";
    let r = run_json_ok(&dir, &["run", &plan(&dir, &t.base_url(), load, step, "")]);
    let s = step_streams(&r);
    assert_eq!(s["sent"]["round_trips"], 50, "{s:#}");
    let rtt = &s["sent"]["round_trip_ms"];
    // The target's timer wakes late, never early (0.4–0.8 ms on a loaded VM), as in the echo
    // test above: [20, 21.5) ms.
    let p50 = rtt["p50"].as_f64().unwrap();
    assert!(
        (20.0..21.5).contains(&p50),
        "round trip p50 {p50} ms against 20 ms"
    );
    // Had replies waited for the one before, a stream's last would come back at 80 ms (each
    // 15 ms after the one before it); 60 leaves room for one stall of the host.
    let max = rtt["max"].as_f64().unwrap();
    assert!(
        max < 60.0,
        "a reply waited for the one before: max {max} ms"
    );
    // The replies come 5 ms apart, as the messages went: on the generator's 1 ms send grid.
    let gap = s["message_gap_ms"]["p50"].as_f64().unwrap();
    assert!((gap - 5.0).abs() < 1.0, "gap p50 {gap} ms");
}

#[test]
fn a_server_that_answers_before_the_client_is_done_decides_with_its_status() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("grpc-early-status");
    // The first message is refused (delay_ms out of range): the target ends the call with
    // INVALID_ARGUMENT while the client still has four messages to send.
    let step = "grpc = \"volley.target.v1.Streams/Chat\"\n\
                json = { message = \"hi\", delay_ms = -1 }\n\
                grpc_stream = { count = 5, interval = \"20ms\" }";
    let load = "profile = \"iterations\"\nvus = 1\niterations = 3";
    let (out, r) = run_json(&dir, &["run", &plan(&dir, &t.base_url(), load, step, "")]);
    assert_ne!(out.status.code(), None);
    let s = step_streams(&r);
    assert_eq!(s["failed"], 3, "{s:#}");
    // The call's own status (INVALID_ARGUMENT, a client error), not a protocol error.
    let kinds = &r["summary"]["errors_by_kind"];
    assert_eq!(kinds["grpc_client_error"], 3, "{kinds:#}");
    assert!(kinds.get("protocol").is_none(), "{kinds:#}");
}

#[test]
fn round_trips_of_shares_merge_exactly() {
    let _serial = serial();
    let t = target();
    let dir = temp_dir("grpc-merge");
    let step = "grpc = \"volley.target.v1.Streams/Chat\"\n\
                json = { message = \"hi\", delay_ms = 1 }\n\
                grpc_stream = { count = 3, echo = true }";
    let load = "profile = \"iterations\"\nvus = 2\niterations = 8";
    let plan = plan(&dir, &t.base_url(), load, step, "");
    let mut paths = Vec::new();
    for i in 0..2 {
        let sub = dir.join(format!("s{i}"));
        std::fs::create_dir_all(&sub).unwrap();
        run_json_ok(&sub, &["run", &plan, "--segment", &format!("{i}/2")]);
        paths.push(sub.join("run.json"));
    }
    let merged = dir.join("merged");
    let (code, _, stderr) = run_volley(&[
        "merge",
        paths[0].to_str().unwrap(),
        paths[1].to_str().unwrap(),
        "-o",
        merged.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    common::verified(&merged.join("run.json"));
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("run.json")).unwrap()).unwrap();
    let sent = &step_streams(&r)["sent"];
    // 8 streams of 3 messages, each answered: every share's round trips, exactly.
    assert_eq!(sent["messages"], 24, "{sent:#}");
    assert_eq!(sent["round_trips"], 24, "{sent:#}");
    assert_eq!(r["summary"]["streams"]["sent"]["round_trips"], 24);
}

/// `volley check` shows what each gRPC step sends — a request decoded from its protobuf, a
/// stream's first message — and refuses a rendered message the type does not have a field for,
/// as a run would fail every call; with extracted variables' placeholders it only says so.
#[test]
fn check_shows_what_grpc_steps_send_and_refuses_what_cannot_be_encoded() {
    let example = |name: &str| format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) = run_volley(&["check", &example("006-grpc-streams.toml")]);
    assert_eq!(code, Some(0), "{err}");
    for shown in [
        r#"{"count":20,"first_ms":5.0,"gap_ms":10.0} (20 bytes of protobuf)"#,
        r#"message (seq 0): {"seq":0} (0 bytes of protobuf)"#,
        r#"message (seq 0): {"delay_ms":2,"message":"hello 1"} (18 bytes of protobuf)"#,
    ] {
        assert!(out.contains(shown), "{shown}\n{out}");
    }
    let (code, out, err) = run_volley(&["check", &example("002-grpc-plan.toml")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(r#""title":"task task 1"} (13 bytes of protobuf)"#),
        "{out}"
    );
    assert!(
        out.contains("(not encoded here, for a placeholder: "),
        "{out}"
    );

    let dir = temp_dir("grpc-check");
    // No `json` and a templated header: the empty message, as a run sends it.
    let step = "grpc = \"volley.target.v1.Echo/Echo\"\nheaders = { \"X-Vu\" = \"{{ vu }}\" }";
    let (code, out, err) =
        run_volley(&["check", &plan(&dir, "http://127.0.0.1:9", CLOSED, step, "")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("\n    {} (0 bytes of protobuf)\n"), "{out}");
    // A scenario that extracts a variable, and a message without its placeholder.
    let again = "grpc = \"volley.target.v1.Echo/Echo\"\njson = { message = \"hi\" }\n\
                 [scenario.step.extract]\nsaid = { json = \"/message\" }\n\
                 [[scenario.step]]\nname = \"again\"\ngrpc = \"volley.target.v1.Echo/Echo\"\n\
                 json = { message = \"hi {{ vu }}\", nope = 1 }";
    for (step, why) in [
        (
            again,
            "step `again` of scenario `s`: the data does not fit volley.target.v1.EchoRequest: \
             unrecognized field name 'nope'",
        ),
        (
            "grpc = \"volley.target.v1.Echo/Echo\"\njson = { message = \"hi {{ vu }}\", nope = 1 }",
            "step `stream` of scenario `s`: the data does not fit volley.target.v1.EchoRequest: \
             unrecognized field name 'nope'",
        ),
        (
            "grpc = \"volley.target.v1.Streams/Chat\"\n\
             json = { message = \"hi {{ seq }}\", delai_ms = 2 }\ngrpc_stream = { count = 2, echo = true }",
            "its stream's message: the data does not fit volley.target.v1.EchoRequest: \
             unrecognized field name 'delai_ms'",
        ),
    ] {
        let plan = plan(&dir, "http://127.0.0.1:9", CLOSED, step, "");
        let (code, _, err) = run_volley(&["check", &plan]);
        assert_eq!(code, Some(2), "{step}: {err}");
        assert!(err.contains(why), "{step}: {err}");
    }
}
