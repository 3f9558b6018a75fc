//! `volley ab` in words: a line after each pair, and what the sequence decided.

use std::fmt::Write;

use crate::analysis::compare::{ERROR_RATE_THRESHOLD_PP, MIN_GUARDED_RUNS, TailGuard};
use crate::analysis::metric::Metric;
use crate::analysis::sequential::{ALPHA, Call, MIN_PAIRS, Sequence, Stopped};

/// Beside a sequence's decision and the comparison of its runs, which reads them another way.
pub const TABLE_NOTE: &str = "The decision is the sequence's (paired looks, α spent over the \
    sequence). The comparison table is `volley compare` over the same runs: unpaired, every \
    metric in one Holm family, a separate reading that can leave a decided metric inconclusive.";

/// One figure's state: "throughput slower −9.8% [−13.1%, −6.4%]" (as `volley compare` signs
/// its changes).
fn metric_state(seq: &Sequence, i: usize) -> String {
    let (f, look, pairs) = (&seq.design.metrics[i], seq.looks[i].as_ref(), seq.pairs);
    let m = f.metric;
    let Some(l) = look else {
        return match pairs >= MIN_PAIRS || seq.undecidable(i) {
            // The looks began and none could hold it: a NaN stays in its pairs.
            true => format!(
                "{} undecided: no look could hold it (a run lacked it, held fewer than 10 \
                 responses above it, or none succeeded)",
                f.label()
            ),
            false => format!("{} not tested yet", f.label()),
        };
    };
    let signed = |v: f64| super::comparison::signed(m, v);
    let withheld = match l.withheld {
        Some(TailGuard::TooFewRuns) => format!(" (a tail needs {MIN_GUARDED_RUNS} pairs)"),
        Some(TailGuard::OneRunCarriesIt) => " (one pair carries it)".to_string(),
        None => String::new(),
    };
    format!(
        "{} {}{withheld} {} [{}, {}]",
        f.label(),
        l.call.words(m),
        signed(l.change),
        signed(l.interval.0),
        signed(l.interval.1)
    )
}

/// The line after pair `seq.pairs`: every metric's state.
pub fn line(seq: &Sequence) -> String {
    let states: Vec<String> = seq
        .looks
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let state = metric_state(seq, i);
            match l {
                // Held from the pair that decided it, and said so.
                Some(l) if l.call != Call::Undecided && l.pairs < seq.pairs => {
                    format!("{state} (decided at pair {})", l.pairs)
                }
                _ => state,
            }
        })
        .collect();
    format!("pair {}: {}", seq.pairs, states.join("; "))
}

/// What the sequence decided, how many runs it took and why it stopped.
pub fn text(seq: &Sequence) -> String {
    let why = match seq.stopped {
        Some(Stopped::Decided) => "every metric decided".to_string(),
        Some(Stopped::MaxRuns) => format!("the run budget ({} pairs) spent", seq.design.max_pairs),
        Some(Stopped::MaxTime) => "the time budget spent".to_string(),
        Some(Stopped::Interrupted) => "a run was interrupted".to_string(),
        Some(Stopped::Failed) => "a run failed".to_string(),
        Some(Stopped::RunsSpent) => "the runs given ran out".to_string(),
        Some(Stopped::Undecidable) => {
            "more runs could decide nothing (a run had no value for each metric left)".to_string()
        }
        None => "still running".to_string(),
    };
    let mut o = format!(
        "A/B until decided: {} pair(s), {} runs; stopped: {why}\n",
        seq.pairs,
        2 * seq.pairs
    );
    for (i, look) in seq.looks.iter().enumerate() {
        let at = match look {
            Some(l) if l.call != Call::Undecided => {
                format!(
                    " — decided at pair {} (its look's α {:.4})",
                    l.pairs, l.level
                )
            }
            _ => String::new(),
        };
        let _ = writeln!(o, "  {}{at}", metric_state(seq, i));
    }
    let errors = seq
        .design
        .metrics
        .iter()
        .any(|f| f.metric == Metric::ErrorRate);
    let errors = match errors {
        true => format!(" (the error rate's: ±{ERROR_RATE_THRESHOLD_PP} pp)"),
        false => String::new(),
    };
    let _ = writeln!(
        o,
        "Intervals at each look's own level a (1 − a; an equivalence's 1 − 2a). Sequential design: α = {ALPHA} over the whole \
         sequence, spent over {} pairs (Pocock-type), split among {} metric(s), threshold \
         ±{}%{errors} (docs/measurement.md, \"A/B until decided\").",
        seq.design.max_pairs,
        seq.design.metrics.len(),
        seq.design.threshold_pct
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sequential::{Design, Figure};

    #[test]
    fn the_footer_gives_the_error_rates_own_threshold() {
        let seq = |metrics: Vec<Metric>| {
            Sequence::new(Design {
                metrics: metrics.into_iter().map(Figure::of_runs).collect(),
                max_pairs: 20,
                threshold_pct: 2.0,
                comparisons: 1,
            })
        };
        let with = text(&seq(vec![Metric::P50, Metric::ErrorRate]));
        assert!(
            with.contains("threshold ±2% (the error rate's: ±0.1 pp)"),
            "{with}"
        );
        let without = text(&seq(vec![Metric::P50]));
        assert!(!without.contains("error rate's"), "{without}");
    }

    #[test]
    fn a_figure_no_look_can_hold_and_one_decided_earlier_say_so() {
        let mut seq = Sequence::new(Design {
            metrics: vec![Figure::of_runs(Metric::P50), Figure::of_runs(Metric::P99)],
            max_pairs: 20,
            threshold_pct: 2.0,
            comparisons: 1,
        });
        // Runs of 500 responses: a p50 to decide, a p99 that is each run's slowest few.
        let run = |i: u64| crate::record::fixture::record("a", 5, 100, 5000 + i % 3, 0, 0.0);
        for i in 0..2 {
            seq.add_pair(&run(i), &run(i + 1));
        }
        // Before the first look, the p99 is known to be beyond any look (its runs hold it
        // with too few responses), the p50 is not tested yet.
        let l = line(&seq);
        assert!(l.contains("latency p50 not tested yet"), "{l}");
        assert!(
            l.contains("latency p99 undecided: no look could hold it"),
            "{l}"
        );
        assert_eq!(seq.settled(), None, "the p50 may still be decided");
        for i in 2..4 {
            seq.add_pair(&run(i), &run(i + 1));
        }
        let l = line(&seq);
        assert!(
            l.contains("latency p99 undecided: no look could hold it"),
            "{l}"
        );
        assert!(l.contains("(decided at pair 3)"), "{l}");
        // With the p50 decided, more pairs could decide nothing.
        assert_eq!(seq.settled(), Some(Stopped::Undecidable));
    }
}
