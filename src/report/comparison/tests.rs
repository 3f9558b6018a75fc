//! Tests of the comparison's words: repeats alone, and the reports' tables.

use super::*;
use crate::analysis::compare::{CompareOptions, compare};
use crate::record::fixture::record;

fn variant(label: &str, n: u64, latency_us: u64) -> Variant {
    Variant {
        label: label.into(),
        source: label.into(),
        runs: (0..n)
            .map(|i| record(label, 6, 1000 + i, latency_us + i, 0, 0.02))
            .collect(),
    }
}

#[test]
fn repeats_alone_report_their_spread() {
    let v = [variant("quick", 5, 2000)];
    let c = compare(&v, CompareOptions::default());
    let md = markdown(&v, &c);
    assert!(
        md.starts_with("# volley comparison: quick: 5 runs of one test\n"),
        "{md}"
    );
    assert!(md.contains("| throughput (req/s) | 1,002.0 ["), "{md}");
    assert!(!md.contains("## Statistics"), "{md}");
    assert!(text(&v, &c).contains("the spread of each figure over 5 runs"));
}

#[test]
fn text_and_markdown_carry_the_verdict() {
    let v = [variant("a", 4, 5000), variant("b", 4, 6000)];
    let c = compare(&v, CompareOptions::default());
    let md = markdown(&v, &c);
    assert!(
        md.contains("- **b vs a: latency mean slower (+20.0%)"),
        "{md}"
    );
    assert!(md.contains("| latency mean (ms) | b | +20.0% | "), "{md}");
    let txt = text(&v, &c);
    assert!(
        txt.contains("b vs a: latency mean slower (+20.0%)"),
        "{txt}"
    );
    assert!(!txt.contains("NOT LIKE-FOR-LIKE"), "{txt}");
}

#[test]
fn single_runs_say_whose_interval_is_in_brackets() {
    let v = [variant("a", 1, 5000), variant("b", 1, 5100)];
    let txt = text(&v, &compare(&v, CompareOptions::default()));
    // Before, "Changes are against the baseline." and nothing of the brackets.
    assert!(
        txt.contains("In brackets, where a run has one: its own 95%"),
        "{txt}"
    );
    let v = [variant("a", 1, 5000), variant("b", 3, 5100)];
    let txt = text(&v, &compare(&v, CompareOptions::default()));
    assert!(
        txt.contains("a variant of one run shows that run's own"),
        "{txt}"
    );
}
