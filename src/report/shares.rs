//! The "Generators" table of a merged record (a distributed test): each generator's own
//! figures side by side — its share, start offset, requests, rate, CPU, memory, send lag and
//! warnings — and a row for each missing share, so a report says which part of the load is in
//! no figure.

use super::table::Table;
use crate::record::RunRecord;
use crate::units::{bytes, ms, thousands};

/// The table, when the record is a merge of shares.
pub fn table(r: &RunRecord) -> Option<Table> {
    let m = r.merged.as_ref()?;
    let mut t = Table::new(
        "Generators",
        &[
            "Share",
            "Start (s)",
            "Requests",
            "Errors",
            "req/s",
            "CPU (s)",
            "Peak RSS",
            "Send lag p99",
            "<Host",
            "<Warnings",
        ],
    )
    .with_note(
        "Each generator's own figures (its share of the load, its own window and machine); the \
         figures above are the merge of these. Start: when it began measuring, seconds after \
         the first. A MISSING share's load is in no figure.",
    );
    let mut rows: Vec<(u32, Vec<String>)> = m
        .shares
        .iter()
        .map(|s| {
            let lag = s
                .generator
                .lag_ms
                .as_ref()
                .map_or("—".into(), |l| format!("{} ms", ms(l.p99)));
            let mut warnings: Vec<&str> = s.warnings.iter().map(|w| w.code.name()).collect();
            if let Some(why) = &s.interrupted {
                warnings.push(why);
            }
            let cells = vec![
                format!("{}/{}", s.index, m.count),
                format!("{:.3}", s.offset_s),
                thousands(s.requests),
                thousands(s.errors),
                format!("{:.1}", s.rps),
                format!("{:.2}", s.generator.cpu_s),
                bytes(s.generator.peak_rss_bytes as f64),
                lag,
                s.environment.hostname.clone(),
                if warnings.is_empty() {
                    "—".into()
                } else {
                    warnings.join(", ")
                },
            ];
            (s.index, cells)
        })
        .collect();
    for &i in &m.missing {
        let mut cells = vec![format!("{i}/{}", m.count)];
        cells.extend(std::iter::repeat_n("—".to_string(), 8));
        cells.push("MISSING: no record (generator lost)".into());
        rows.push((i, cells));
    }
    rows.sort_by_key(|(i, _)| *i);
    for (_, cells) in rows {
        t.push(cells);
    }
    Some(t)
}
