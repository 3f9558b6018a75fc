//! Run records: arbitrary bytes through the `run.json` reader, and every valid record through
//! what `volley report` (text, Markdown, HTML with charts) and `volley compare` make of it. A
//! record is user input: it can be edited, truncated, or written by another tool.

#![no_main]

use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use volley::analysis::compare::{CompareOptions, Variant, compare};
use volley::report::{self, Format, comparison};

fuzz_target!(|data: &[u8]| {
    let Ok(record) = volley::record::parse_record(data, Path::new("run.json")) else {
        return;
    };
    for format in [Format::Text, Format::Markdown, Format::Html] {
        let _ = report::render(&record, format);
    }
    // The record against itself, as two single runs.
    let variant = |label: &str| Variant {
        label: label.into(),
        source: PathBuf::from(label),
        runs: vec![record.clone()],
    };
    let variants = [variant("a"), variant("b")];
    // As `volley compare` judges them: the plans' parts too.
    let options = CompareOptions {
        threshold_pct: 2.0,
        groups: true,
    };
    let c = compare(&variants, options);
    let _ = comparison::text(&variants, &c);
});
