//! Units: formatting of counts, rates, sizes, durations (a leaf every layer may use).

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count of virtual users in words: `1 VU`, `32 VUs` (a fraction rounded to the nearest).
pub fn vus(n: f64) -> String {
    let n = n.round();
    if n == 1.0 {
        "1 VU".into()
    } else {
        format!("{n:.0} VUs")
    }
}

/// A rate with one decimal and thousands separators: `15959.14` → `15,959.1`.
pub fn rate(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let tenths = (v.abs() * 10.0).round() as u64;
    let sign = if v < 0.0 && tenths > 0 { "-" } else { "" };
    format!("{sign}{}.{}", thousands(tenths / 10), tenths % 10)
}

/// A byte count in binary units: `1536` → `1.50 KiB`.
pub fn bytes(n: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} {}", UNITS[0])
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

/// Milliseconds with precision that suits their size; `-` for none.
pub fn ms(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v < 1.0 => format!("{v:.3}"),
        Some(v) if v < 100.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.1}"),
    }
}

/// Seconds as a short human duration: `90` → `1m30s`, `2.5` → `2.5s`, `0.04` → `40 ms` (under
/// a tenth of a second, where one decimal would read 0.0s).
pub fn seconds(s: f64) -> String {
    if s < 0.01 {
        format!("{:.1} ms", s * 1e3)
    } else if s < 0.1 {
        format!("{:.0} ms", s * 1e3)
    } else if s < 60.0 {
        format!("{s:.1}s")
    } else {
        let total = s.round() as u64;
        format!("{}m{:02}s", total / 60, total % 60)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(rate(15_959.14), "15,959.1");
        assert_eq!(rate(0.04), "0.0");
        assert_eq!(rate(999.96), "1,000.0");
        assert_eq!(rate(-2.5), "-2.5");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.50 KiB");
        assert_eq!(ms(Some(0.1234)), "0.123");
        assert_eq!(ms(Some(12.345)), "12.35");
        assert_eq!(ms(None), "-");
        assert_eq!(seconds(2.5), "2.5s");
        assert_eq!(seconds(0.04), "40 ms");
        assert_eq!(seconds(0.0045), "4.5 ms");
        assert_eq!(seconds(90.0), "1m30s");
        assert_eq!(seconds(90.0), "1m30s");
    }
}
