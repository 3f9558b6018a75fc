//! Small figures every report formats the same way: shares as percentages, observed values.

use crate::record::model::ThresholdUnit;

/// A share of `total`, %; 0 when `total` is 0.
pub fn share_pct(total: u64, part: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * part as f64 / total as f64
    }
}

/// `12.34%`.
pub fn pct(v: f64) -> String {
    format!("{v:.2}%")
}

/// An observed value: three decimals at most, trailing zeros dropped (`93.5`, `0.012`).
pub fn number(v: f64) -> String {
    let text = format!("{v:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() || text == "-" {
        "0".into()
    } else {
        text.to_string()
    }
}

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
