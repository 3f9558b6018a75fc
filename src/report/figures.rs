//! Small figures every report formats the same way: shares as percentages, observed values.

use crate::record::model::{Bucket, ThresholdUnit};
use crate::units::ms;

pub use crate::units::{number, pct, share_pct};

/// A threshold's observed value in its unit: `7.25 ms`, `2.02%` (a ratio), `1234.5 req/s`,
/// `1234`.
pub fn observed(v: f64, unit: ThresholdUnit) -> String {
    match unit {
        ThresholdUnit::Ms => format!("{} ms", number(v)),
        ThresholdUnit::Ratio => pct(v * 100.0),
        ThresholdUnit::PerSecond => format!("{} req/s", number(v)),
        ThresholdUnit::Count => number(v),
    }
}

/// Each latency bucket's range in ms, as every report names it: `≤ 25`, `25–50`, `> 500`.
pub fn bucket_labels(buckets: &[Bucket]) -> Vec<String> {
    let mut previous: Option<f64> = None;
    buckets
        .iter()
        .map(|b| {
            let label = match (previous, b.le_ms) {
                (None, Some(le)) => format!("≤ {}", ms(Some(le))),
                (Some(lo), Some(le)) => format!("{}–{}", ms(Some(lo)), ms(Some(le))),
                (lo, None) => format!("> {}", ms(lo)),
            };
            previous = b.le_ms;
            label
        })
        .collect()
}

/// A CPU steal share (0–1) as a percentage of the machine's CPU time: "0.42%", "3.4%".
pub fn steal_percent(share: f64) -> String {
    let pct = share * 100.0;
    if pct < 1.0 {
        format!("{pct:.2}%")
    } else {
        format!("{pct:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_ranges() {
        let b = |le_ms| Bucket { le_ms, count: 0 };
        let labels = bucket_labels(&[b(Some(25.0)), b(Some(50.0)), b(None)]);
        assert_eq!(labels, ["≤ 25.00", "25.00–50.00", "> 50.00"]);
    }
}
