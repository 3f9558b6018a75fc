//! Reading the stream figures of a record, and the oracle's tolerance (tests/streams.rs,
//! tests/grpc_streams.rs).

use serde_json::Value;

/// The stream figures of the step group `stream`.
pub fn step_streams(r: &Value) -> &Value {
    let g = r["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["kind"] == "step" && g["name"] == "stream")
        .expect("a step group `stream`");
    &g["streams"]
}

/// Asserts a measured median is the truth within max(0.2 ms, 3 %).
pub fn near_truth(what: &str, measured: f64, truth_ms: f64) {
    let tolerance = (truth_ms * 0.03).max(0.2);
    assert!(
        (measured - truth_ms).abs() <= tolerance,
        "{what}: measured {measured} ms against {truth_ms} ms (± {tolerance})"
    );
}
