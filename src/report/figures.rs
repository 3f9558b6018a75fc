//! Small figures every report formats the same way: shares as percentages, observed values.

use crate::record::model::ThresholdUnit;

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
