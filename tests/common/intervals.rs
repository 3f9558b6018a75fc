//! Reading a record's 95 % intervals (docs/measurement.md, "Uncertainty"): the run's and a
//! group's, each as (value, half-width) (tests/uncertainty.rs, tests/precision_parts.rs).

use serde_json::Value;

/// The interval of `field` (`p50_ms`, `rps`) in a record: (value, half-width).
pub fn bound(record: &Value, field: &str) -> Option<(f64, f64)> {
    value_and_half(&record["summary"]["ci95"][field])
}

/// The interval of `field` of the record's group of `kind` named `name`: (value, half-width).
pub fn group_bound(record: &Value, kind: &str, name: &str, field: &str) -> Option<(f64, f64)> {
    value_and_half(&super::group(record, kind, name)["ci95"][field])
}

/// An interval's (value, half-width).
pub fn value_and_half(b: &Value) -> Option<(f64, f64)> {
    Some((b["value"].as_f64()?, b["half_width"].as_f64()?))
}
