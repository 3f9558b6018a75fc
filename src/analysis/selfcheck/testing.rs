//! Constructed groups for the self-check tests.

use std::collections::BTreeMap;

use crate::analysis::percentiles;
use crate::record::encode_histogram;
use crate::record::model::{Group, GroupKind};
use crate::record::recorder::new_histogram;

/// A group of `requests` responses, all 200, each 2 ms.
pub fn group(kind: GroupKind, name: &str, scenario: Option<&str>, requests: u64) -> Group {
    let mut h = new_histogram();
    for _ in 0..requests {
        h.record(2000).unwrap();
    }
    let mut status = BTreeMap::new();
    if requests > 0 {
        status.insert("200".to_string(), requests);
    }
    Group {
        kind,
        name: name.into(),
        scenario: scenario.map(str::to_string),
        operation: None,
        start_s: None,
        end_s: None,
        target_vus: None,
        target_rps: None,
        requests,
        errors: 0,
        not_sent: 0,
        drained: 0,
        window_s: 0.0,
        iterations: None,
        arrival: None,
        rps: 0.0,
        latency_ms: percentiles(&h),
        status,
        errors_by_kind: BTreeMap::new(),
        histogram_us: encode_histogram(&h),
        think_s: 0.0,
        ramp_from: None,
        pacing_s: 0.0,
        streams: None,
        ci95: None,
        batches: None,
    }
}

/// A phase group over `[start_s, end_s)`.
pub fn phase(scenario: &str, start_s: f64, end_s: f64, requests: u64) -> Group {
    Group {
        start_s: Some(start_s),
        end_s: Some(end_s),
        ..group(
            GroupKind::Phase,
            &format!("{start_s}–{end_s} s"),
            Some(scenario),
            requests,
        )
    }
}
