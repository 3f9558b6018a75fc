//! `volley verify`: the invariants every record must satisfy, checked from the record alone
//! (and, for a suite or a merged record, the records beside it). `docs/measurement.md`
//! ("Invariants") has one line per [`Rule`]; every integration test that writes a record runs
//! these checks, so a figure path that stops adding up fails CI where it was written.
//!
//! Each failure is a [`Violation`]: the JSON path of the figure, the rule, and both sides of the
//! equation ("summary.rps: 333.3 ≠ (1000 − 0) / 0.011 s = 90,909.1").
//!
//! Layout: `counts` (attempts, requests, errors, groups), `rates` (every rate over its
//! window, windows inside the run, the series), `ladder` (percentiles ordered), `outcome`
//! (status, first line and exit code), `generator` (CPU steal and its warning), `find_max` (a
//! search's headline figures from its steps), `intervals` (the 95 % intervals from the batches), `merged` (a merged record against its shares),
//! [`suite`] (a suite's statuses against its records), `files` (what a path stands for).

mod counts;
mod files;
mod find_max;
mod generator;
mod intervals;
mod ladder;
mod merged;
mod outcome;
mod rates;
mod selfchecks;
mod streams;
mod suite;

use std::fmt;

use crate::record::model::RunRecord;

pub use files::{Checked, verify_path};
pub use merged::shares as merged_against_shares;
pub use suite::suite;

/// An invariant of a record (docs/measurement.md, "Invariants").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// attempts = requests + not sent.
    AttemptsAddUp,
    /// requests + not sent = responses (Σ status) + failures without a response.
    ResponsesAddUp,
    /// errors = Σ errors by kind; not sent ≤ errors ≤ attempts; 4xx (5xx) errors ≤ 4xx (5xx)
    /// statuses; each kind that is never sent adds up to `not_sent`.
    ErrorsAddUp,
    /// success rate = 1 − error rate (the attempts the generator could not make left out).
    SuccessRate,
    /// Each latency histogram holds one value per response; the latency buckets count every
    /// response, at the bounds the run asked for.
    HistogramCount,
    /// Scenarios add up to the run, steps to their scenario; phases never hold more than their
    /// scenario.
    GroupsAddUp,
    /// Every rate is its count over its own window (throughput, bytes, arrivals, groups).
    RateOverWindow,
    /// Every group's window lies inside the run's, and its span agrees with its length.
    WindowInsideRun,
    /// The per-second series covers the window and adds up to the run's counts.
    SeriesAddsUp,
    /// Asked against achieved adds up: unsent = due − started − dropped, completed ≤ started.
    ArrivalAddsUp,
    /// min ≤ p10 ≤ … ≤ p99.99 ≤ max, and min ≤ mean ≤ max, for every latency ladder.
    PercentilesOrdered,
    /// The run's and each group's latency ladder is what its histogram gives.
    LadderFromHistogram,
    /// The recorded outcome (status, first line, exit code) is what the figures give.
    OutcomeAgrees,
    /// A threshold that ended the run has failed.
    ThresholdsAgree,
    /// A merged record is the sum of its shares: counts, and histograms added exactly.
    MergedAddsUp,
    /// A suite's per-target status agrees with that target's records.
    SuiteStatusAgrees,
    /// The 95 % intervals are what the latency batches and the series give; the batches hold
    /// every response.
    IntervalsAgree,
    /// Stream counts, histograms and rates agree; a scenario's streams are its steps'.
    StreamsAddUp,
    /// HTTP/3: lost packets ≤ packets sent; datagrams sent ≤ packets sent; send calls ≤
    /// datagrams sent; at least one connection.
    QuicAddsUp,
    /// The CPU steal share is a share (0–1), and a run whose share reached the limit carries the
    /// `cpu_steal` warning.
    StealWarned,
    /// A search's maximum, peak, break and lower bound are what its steps give, and the
    /// record's figures are those of the step the maximum comes from.
    FindMaxAgrees,
    /// A self-check that warns is also a warning; the schedule check's figures are the
    /// record's, and a passed one has none that fails it.
    SelfChecksAgree,
}

impl Rule {
    /// The rule's stable name: `attempts_add_up`, `rate_over_window`, …
    pub fn name(self) -> &'static str {
        match self {
            Self::AttemptsAddUp => "attempts_add_up",
            Self::ResponsesAddUp => "responses_add_up",
            Self::ErrorsAddUp => "errors_add_up",
            Self::SuccessRate => "success_rate",
            Self::HistogramCount => "histogram_count",
            Self::GroupsAddUp => "groups_add_up",
            Self::RateOverWindow => "rate_over_window",
            Self::WindowInsideRun => "window_inside_run",
            Self::SeriesAddsUp => "series_adds_up",
            Self::ArrivalAddsUp => "arrival_adds_up",
            Self::PercentilesOrdered => "percentiles_ordered",
            Self::LadderFromHistogram => "ladder_from_histogram",
            Self::OutcomeAgrees => "outcome_agrees",
            Self::ThresholdsAgree => "thresholds_agree",
            Self::MergedAddsUp => "merged_adds_up",
            Self::SuiteStatusAgrees => "suite_status_agrees",
            Self::IntervalsAgree => "intervals_agree",
            Self::StreamsAddUp => "streams_add_up",
            Self::QuicAddsUp => "quic_adds_up",
            Self::StealWarned => "steal_warned",
            Self::FindMaxAgrees => "find_max_agrees",
            Self::SelfChecksAgree => "self_checks_agree",
        }
    }
}

/// One figure that breaks a rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The JSON path of the figure in its file: `summary.rps`, `groups[2].window_s`.
    pub path: String,
    /// The rule it breaks.
    pub rule: Rule,
    /// The figure as recorded.
    pub found: String,
    /// What the rule says it must be, with the figures that say so.
    pub expected: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} ≠ {} ({})",
            self.path,
            self.found,
            self.expected,
            self.rule.name()
        )
    }
}

/// Collects violations as the checks go.
#[derive(Debug, Default)]
pub(crate) struct Findings(Vec<Violation>);

impl Findings {
    /// Records a violation of `rule` at `path` when `holds` is false.
    fn check(
        &mut self,
        holds: bool,
        rule: Rule,
        path: impl Into<String>,
        found: impl fmt::Display,
        expected: impl FnOnce() -> String,
    ) {
        if !holds {
            self.0.push(Violation {
                path: path.into(),
                rule,
                found: found.to_string(),
                expected: expected(),
            });
        }
    }

    /// `found` must equal `expected` (counts).
    fn equal(
        &mut self,
        rule: Rule,
        path: impl Into<String>,
        found: u64,
        expected: u64,
        how: impl FnOnce() -> String,
    ) {
        self.check(found == expected, rule, path, found, || {
            format!("{} = {expected}", how())
        });
    }

    /// `found` must be within a rounding error of `expected` (rates, shares, seconds).
    fn close(
        &mut self,
        rule: Rule,
        path: impl Into<String>,
        found: f64,
        expected: f64,
        how: impl FnOnce() -> String,
    ) {
        self.check(near(found, expected), rule, path, found, || {
            format!("{} = {expected}", how())
        });
    }

    /// The violations found.
    fn into_vec(self) -> Vec<Violation> {
        self.0
    }
}

/// Whether two figures agree to within what JSON's decimal form and float arithmetic lose.
fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9_f64.max(1e-6 * a.abs().max(b.abs()))
}

/// Every invariant of one record, in the order of [`Rule`]; empty when it holds them all.
pub fn record(r: &RunRecord) -> Vec<Violation> {
    let mut f = Findings::default();
    counts::check(r, &mut f);
    rates::check(r, &mut f);
    ladder::check(r, &mut f);
    ladder::from_histograms(r, &mut f);
    intervals::check(r, &mut f);
    outcome::check(r, &mut f);
    merged::check(r, &mut f);
    streams::check(r, &mut f);
    quic(r, &mut f);
    generator::check(r, &mut f);
    find_max::check(r, &mut f);
    selfchecks::check(r, &mut f);
    f.into_vec()
}

/// The QUIC figures hold together: every datagram carries at least one packet, a call sends
/// at least one datagram, and only sent packets are lost.
fn quic(r: &RunRecord, f: &mut Findings) {
    let Some(q) = &r.summary.quic else { return };
    let pairs = [
        (
            "packets_lost",
            q.packets_lost,
            "packets_sent",
            q.packets_sent,
        ),
        (
            "datagrams_sent",
            q.datagrams_sent,
            "packets_sent",
            q.packets_sent,
        ),
        (
            "send_calls",
            q.send_calls,
            "datagrams_sent",
            q.datagrams_sent,
        ),
        (
            "zero_rtt_sent",
            q.zero_rtt_sent,
            "connections",
            q.connections,
        ),
        (
            "zero_rtt_accepted + zero_rtt_rejected",
            q.zero_rtt_accepted + q.zero_rtt_rejected,
            "zero_rtt_sent",
            q.zero_rtt_sent,
        ),
    ];
    for (name, found, bound, limit) in pairs {
        f.check(
            found <= limit,
            Rule::QuicAddsUp,
            format!("summary.quic.{name}"),
            found,
            || format!("≤ summary.quic.{bound} = {limit}"),
        );
    }
    f.check(
        q.connections > 0,
        Rule::QuicAddsUp,
        "summary.quic.connections",
        q.connections,
        || "at least 1 (the figures are absent without a connection)".into(),
    );
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_checks;
