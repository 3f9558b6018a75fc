//! Comparing runs: is B faster or slower than A, the same within a threshold, or can the data not
//! tell yet?
//!
//! # The method
//!
//! Each *variant* is one configuration measured one or more times (`--repeat N` writes N
//! records). The first variant is the baseline. For every metric (throughput, latency mean and
//! percentiles, error rate) and every other variant:
//!
//! - **Repeated runs** (three or more on each side): each run is one sample, its whole-run
//!   figure one value. A variant's figure is the **geometric mean over its runs** (the error
//!   rate: the arithmetic mean, in %), with a 95 % t interval. The change is tested with
//!   **Student's two-sample t test on the logarithms** of the per-run values (pooled variance,
//!   n + m − 2 degrees of freedom; the error rate: on the values, in percentage points). The point
//!   change is the ratio of the geometric means − 1, and its 95 % interval is the t interval of
//!   the difference of mean logs, exponentiated: a relative change and its interval can never
//!   pass −100 %.
//! - **Single runs**: each run's own 95 % interval of the figure (`summary.ci95`: batch means
//!   over its seconds, their autocorrelation taken out; throughput, mean, p50…p99.9) is its
//!   standard error (half-width over t₀.₉₇₅ at the effective batches − 1 degrees of freedom);
//!   the log ratio gets a delta-method standard error and Welch's degrees of freedom
//!   ([`Method::RunIntervals`]). Where a run has no interval of the figure (the error rate, an
//!   older record), and for **two runs** a side, the noise is estimated from the per-second
//!   series instead (throughput, p50, p90, p99, error rate): each side's standard error uses the
//!   effective sample size n·(1 − ρ)/(1 + ρ) (ρ = lag-1 autocorrelation) ([`Method::PerSecond`]).
//!   Neither can see run-to-run variation (a warm cache, a noisy neighbour), so these verdicts
//!   are marked **weak**.
//!
//! **Plans' parts** ([`groups`]): with [`CompareOptions::groups`] (`volley compare`, suites), each
//! scenario, step and phase that is not the run itself gets the same rows for seven metrics
//! ([`Metric::OF_GROUPS`]), tested the same way over repeats; single runs are tested by each
//! run's own interval of the part ([`Method::RunIntervals`], weak). Their tests join the one
//! Holm family below.
//!
//! The **max** is never judged ([`ChangeVerdict::NotJudged`]): one request per run sets it, so
//! its change and interval are shown but it is kept out of the calls and the correction. A call
//! on **p99 or p99.9** (tail figures one run's jump can carry) must also hold on every subset
//! that leaves one run out of either side (`robust`), else it is inconclusive — so it needs
//! [`MIN_GUARDED_RUNS`] runs a side, and says so ([`TailGuard`]).
//!
//! Every other p-value of one comparison (all metrics, all variants) is adjusted by **Holm's
//! step-down correction**, so the chance that any metric is called a difference when none
//! exists stays at α = 0.05 for the whole comparison, not per metric. Then, per metric, with T
//! the practical threshold (default ±2 %; ±0.1 percentage points for the error rate):
//!
//! - [`ChangeVerdict::Better`] / [`ChangeVerdict::Worse`] ("faster"/"slower", "fewer errors"/"more errors"):
//!   the adjusted p < α **and** the whole 95 % interval lies beyond ±T.
//! - [`ChangeVerdict::Equivalent`] ("no significant difference"): the whole 95 % interval lies within
//!   ±T — equivalence shown, not merely a difference not found.
//! - [`ChangeVerdict::Inconclusive`] otherwise, with the runs per variant that would likely settle it
//!   ([`RunsNeeded`]): the smallest n at which (t₀.₉₇₅ + t₀.₈) · s · √(2/n) fits in the distance
//!   between the change and the threshold (s: the pooled per-run standard deviation), i.e. 80 %
//!   power if the change stays at its estimate; for a change beyond T the interval must also
//!   clear 0 at Bonferroni's α/k, the first step of Holm's correction.
//!
//! # Why a t test on logarithms, not a rank test or a bootstrap
//!
//! An exact Mann–Whitney test at 4 vs 4 runs can never give p below 2/70 ≈ 0.029, at 5 vs 5
//! never below 2/252 ≈ 0.008: after any correction across the nine metrics (Holm's first step
//! asks for p < 0.05/9 ≈ 0.0056) it could never call anything; so can no permutation test. A
//! percentile bootstrap of 4 or 5 values is too narrow (a resampled median of four values takes a
//! handful of values), which is how A/A splits were called different. A per-run figure is itself
//! a mean or a quantile of thousands of requests, so across runs it is close to normal on the log
//! scale, and the log makes changes multiplicative (intervals stay above −100 %). The variance is
//! pooled because the null hypothesis that matters — a false call — is "the same configuration
//! twice", under which both sides share one distribution and the pooled test is exact; Welch's
//! correction guards another null (equal means, unequal spreads) at the price of about half the
//! degrees of freedom at 4–5 runs a side, which on a busy machine cut the detection of a true
//! 10 % change at 5 vs 5 from 97 % to 80 % (same records, `bench/compare.sh`). A heavy-tailed
//! figure (max, p99.9) gets a wide interval and so an inconclusive verdict rather than a false
//! call. `bench/compare.sh` measures the result against the built-in target: the share of A/A
//! splits with any call, and the detection rate of a 10 % change.
//!
//! # Order and drift
//!
//! When every run of one variant was taken before every run of the other, a slow drift of the
//! machine looks like a difference. If the runs within each variant also trend in time (a common
//! slope, fitted within variants, with p < α) in the direction of the change, the comparison
//! warns that order and drift are confounded and marks the change
//! ([`Change::confounded`]); each scenario, step and phase is checked the same way on its own
//! figures, in the same warning. `volley suite` interleaves its targets' repeats (A B C A B C …) by
//! default so that this cannot happen.

mod change;
#[cfg(test)]
mod count_tests;
mod drift;
pub mod groups;
mod robust;
#[cfg(test)]
mod single_run_tests;
#[cfg(test)]
pub(crate) mod tests;

pub use super::metric::Metric;
use super::stats;
pub use super::variant::Variant;

/// Significance level of the tests, for the whole comparison (after Holm's correction).
pub const ALPHA: f64 = 0.05;
/// Confidence level of the intervals.
pub const LEVEL: f64 = 0.95;
/// Power assumed when estimating the runs that would settle an inconclusive verdict.
pub const POWER: f64 = 0.8;
/// Default practical threshold: smaller relative changes are never called a difference, %.
pub const DEFAULT_THRESHOLD_PCT: f64 = 2.0;
/// Practical threshold for the error rate, percentage points.
pub const ERROR_RATE_THRESHOLD_PP: f64 = 0.1;
/// Fewest full seconds per side for a per-second (single-run) verdict.
pub const MIN_SECONDS: usize = 5;
/// Fewest runs per side for a test over runs (and for an interval of a variant's figure).
pub const MIN_REPEATS: usize = 3;
/// Fewest runs per side for a call on a tail metric (p99, p99.9): leaving any one out must
/// still leave [`MIN_REPEATS`].
pub const MIN_GUARDED_RUNS: usize = MIN_REPEATS + 1;
// `ChangeVerdict`'s words spell the count out.
const _: () = assert!(MIN_GUARDED_RUNS == 4);
/// Most runs per variant [`RunsNeeded`] counts up to.
pub const MAX_RUNS_NEEDED: u32 = 200;

/// A variant's figure for one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The geometric mean over runs (the error rate: the arithmetic mean; one run: its value),
    /// in the metric's unit.
    pub value: Option<f64>,
    /// 95 % t interval of that figure (three runs or more; computed on the log scale for
    /// relative metrics); one run: the run's own batch-means interval (`summary.ci95`).
    pub ci: Option<(f64, f64)>,
    /// Per-run values (runs without the figure left out, and for relative metrics runs whose
    /// figure is 0).
    pub values: Vec<f64>,
}

/// How a change was tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Student's t test over per-run values (on their logarithms for relative metrics).
    Repeats,
    /// Per-second samples with an autocorrelation-corrected standard error (weak).
    PerSecond,
    /// A figure in single runs: each run's own batch-means interval (`summary.ci95`, or a
    /// scenario's, step's or phase's `groups[].ci95`) as its standard error (weak).
    RunIntervals,
}

/// How many runs per variant would likely settle an inconclusive verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsNeeded {
    /// About this many runs of each variant.
    About(u32),
    /// More than this many ([`MAX_RUNS_NEEDED`]): the change sits on the threshold.
    MoreThan(u32),
}

/// The conclusion about one metric of one variant against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeVerdict {
    /// Better by more than the threshold (faster, or fewer errors): Holm-adjusted p < α and the
    /// whole interval beyond the threshold.
    Better,
    /// Worse by more than the threshold (slower, or more errors).
    Worse,
    /// Equivalent: the whole interval lies within ±threshold ("no significant difference").
    Equivalent,
    /// Neither shown: the interval crosses the threshold, or the change did not survive the
    /// correction for the number of tests.
    Inconclusive {
        /// Runs per variant that would likely settle it; `None` for single runs' (weak) tests,
        /// where the answer is to repeat the runs at all.
        runs_needed: Option<RunsNeeded>,
        /// A tail metric whose t test made the call, withheld by the guard, and why.
        tail_guard: Option<TailGuard>,
    },
    /// Nothing to test (a figure missing, too little data).
    NotEnoughData,
    /// Never judged: the max is one request per run (shown with its change and interval, not
    /// in Holm's family).
    NotJudged,
}

/// Why a call on a tail metric (p99, p99.9) that its t test made was withheld: it must hold on
/// every subset that leaves one run out of either side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailGuard {
    /// A side has fewer than [`MIN_GUARDED_RUNS`] runs: leaving one out leaves too few to
    /// test, so one run's tail cannot be ruled out as the cause.
    TooFewRuns,
    /// Leaving some run out takes the call away: that one run carries it.
    OneRunCarriesIt,
}

/// One variant against the baseline, for one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Change of the figure: % of the baseline (ratio of the figures − 1) for relative metrics,
    /// percentage points for the error rate. `None` when either figure is missing or the
    /// baseline's is 0.
    pub change: Option<f64>,
    /// 95 % interval of the change, same unit (for relative metrics never below −100 %).
    pub ci: Option<(f64, f64)>,
    /// Two-sided p-value of "no change", before the correction.
    pub p_value: Option<f64>,
    /// The p-value adjusted by Holm's correction across every test of the comparison.
    pub p_adjusted: Option<f64>,
    /// The test used.
    pub method: Option<Method>,
    /// The conclusion.
    pub verdict: ChangeVerdict,
    /// Every run of one side came before every run of the other, and the runs drift in time in
    /// the direction of this change: the change may be the drift.
    pub confounded: bool,
}

impl Change {
    /// Whether a difference is called (better or worse).
    pub fn is_called(&self) -> bool {
        matches!(self.verdict, ChangeVerdict::Better | ChangeVerdict::Worse)
    }

    /// The verdict in words for `metric`: "faster", "slower", "no significant difference",
    /// "inconclusive", …, with "(weak)" when it rests on single runs.
    pub fn words(&self, metric: Metric) -> String {
        let (better, worse) = metric.words();
        let word = match self.verdict {
            ChangeVerdict::Better => better,
            ChangeVerdict::Worse => worse,
            ChangeVerdict::Equivalent => "no significant difference",
            ChangeVerdict::Inconclusive {
                tail_guard: Some(TailGuard::TooFewRuns),
                ..
            } => "inconclusive (a tail needs 4 runs a side)",
            ChangeVerdict::Inconclusive {
                tail_guard: Some(TailGuard::OneRunCarriesIt),
                ..
            } => "inconclusive (one run carries it)",
            ChangeVerdict::Inconclusive { .. } => "inconclusive",
            ChangeVerdict::NotEnoughData => return "not enough data".into(),
            ChangeVerdict::NotJudged => return "not judged (one request per run)".into(),
        };
        match self.method {
            Some(Method::PerSecond | Method::RunIntervals) => format!("{word} (weak)"),
            _ => word.to_string(),
        }
    }
}

/// One metric across all variants.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricRow {
    /// The metric.
    pub metric: Metric,
    /// Per variant, in order.
    pub estimates: Vec<Estimate>,
    /// Per variant against the baseline; `None` for the baseline itself.
    pub changes: Vec<Option<Change>>,
}

/// Settings of a comparison.
#[derive(Debug, Clone, Copy)]
pub struct CompareOptions {
    /// Practical threshold for relative changes, %.
    pub threshold_pct: f64,
    /// Whether the plans' scenarios, steps and phases are judged too ([`groups`]), in the same
    /// Holm family as the run's figures.
    pub groups: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self {
            threshold_pct: DEFAULT_THRESHOLD_PCT,
            groups: false,
        }
    }
}

impl CompareOptions {
    /// The default threshold, with the plans' scenarios, steps and phases judged too (a
    /// folder of repeats' spread, a suite's comparison).
    pub fn with_parts() -> Self {
        Self {
            groups: true,
            ..Self::default()
        }
    }

    /// What `volley compare` judges: the run's figures and the plans' scenarios, steps and
    /// phases, at the practical threshold `threshold_pct` (%), which must be a percentage ≥ 0.
    pub fn of_command(threshold_pct: f64) -> Result<Self, crate::Error> {
        if !(threshold_pct.is_finite() && threshold_pct >= 0.0) {
            return Err(crate::Error::Invalid {
                what: "--threshold".into(),
                why: "must be a percentage ≥ 0, e.g. 2".into(),
            });
        }
        Ok(Self {
            threshold_pct,
            groups: true,
        })
    }
}

/// One scenario, step or phase across all variants.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupRows {
    /// Which group.
    pub key: groups::GroupKey,
    /// One row per metric of [`Metric::OF_GROUPS`].
    pub rows: Vec<MetricRow>,
}

/// The full comparison.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Variant labels; the first is the baseline.
    pub labels: Vec<String>,
    /// Runs per variant.
    pub runs: Vec<usize>,
    /// One row per metric.
    pub rows: Vec<MetricRow>,
    /// Per scenario, step and phase (when asked: [`CompareOptions::groups`]).
    pub groups: Vec<GroupRows>,
    /// Why the runs are not like-for-like (empty when they are).
    pub mismatches: Vec<String>,
    /// Where the order of the runs is confounded with a drift (empty when it is not).
    pub warnings: Vec<String>,
    /// Other things the reader should know (interrupted runs, warnings, weak verdicts).
    pub notes: Vec<String>,
    /// The practical threshold used for relative metrics, %.
    pub threshold_pct: f64,
    /// How many tests Holm's correction spans (all metrics of all variants that got a test).
    pub tests: usize,
}

impl Comparison {
    /// The practical threshold of `metric`: % for relative metrics, percentage points for the
    /// error rate.
    pub fn threshold(&self, metric: Metric) -> f64 {
        threshold(metric, self.threshold_pct)
    }
}

/// The practical threshold of `metric` in its unit: `threshold_pct` (%) for the relative
/// metrics, [`ERROR_RATE_THRESHOLD_PP`] for the error rate.
pub(crate) fn threshold(metric: Metric, threshold_pct: f64) -> f64 {
    if metric.relative() {
        threshold_pct
    } else {
        ERROR_RATE_THRESHOLD_PP
    }
}

/// A row measured and tested, awaiting the comparison's correction.
type Pending = (MetricRow, Vec<Option<change::Tested>>);

/// Compares `variants` (the first is the baseline).
pub fn compare(variants: &[Variant], options: CompareOptions) -> Comparison {
    // Stream figures only where some run has them.
    let mut tested: Vec<Pending> = Metric::ALL
        .iter()
        .map(|&metric| change::row(variants, metric, change::Scope::Run))
        .filter(|(row, _)| {
            !row.metric.of_streams() || row.estimates.iter().any(|e| !e.values.is_empty())
        })
        .collect();
    let keys = if options.groups {
        groups::keys(variants)
    } else {
        Vec::new()
    };
    let mut by_group: Vec<Vec<Pending>> = keys
        .iter()
        .map(|key| {
            Metric::OF_GROUPS
                .iter()
                .map(|&metric| change::row(variants, metric, change::Scope::Group(key)))
                .collect()
        })
        .collect();
    let family = judge(
        tested
            .iter_mut()
            .chain(by_group.iter_mut().flatten())
            .collect(),
        options.threshold_pct,
    );
    let mut rows: Vec<MetricRow> = tested.into_iter().map(|(row, _)| row).collect();
    let mut group_rows: Vec<Vec<MetricRow>> = by_group
        .into_iter()
        .map(|rows| rows.into_iter().map(|(row, _)| row).collect())
        .collect();
    let mut scopes: Vec<(change::Scope, &mut [MetricRow])> =
        std::iter::once((change::Scope::Run, rows.as_mut_slice()))
            .chain(
                keys.iter()
                    .zip(group_rows.iter_mut())
                    .map(|(key, rows)| (change::Scope::Group(key), rows.as_mut_slice())),
            )
            .collect();
    let warnings = drift::check(variants, &mut scopes);
    let groups = keys
        .into_iter()
        .zip(group_rows)
        .map(|(key, rows)| GroupRows { key, rows })
        .collect();
    Comparison {
        labels: variants.iter().map(|v| v.label.clone()).collect(),
        runs: variants.iter().map(|v| v.runs.len()).collect(),
        notes: notes(variants, &rows),
        rows,
        groups,
        mismatches: super::like_for_like::mismatches(variants),
        warnings,
        threshold_pct: options.threshold_pct,
        tests: family,
    }
}

/// Fills every row's changes: Holm across all their tests (the max is never judged), then
/// each verdict, with the tail guard on p99 and p99.9 calls over repeats. Returns the family's
/// size.
fn judge(pending: Vec<&mut Pending>, threshold_pct: f64) -> usize {
    let ps: Vec<f64> = pending
        .iter()
        .filter(|(row, _)| row.metric.judged())
        .flat_map(|(_, t)| t.iter().flatten().filter_map(change::Tested::p_value))
        .collect();
    let mut adjusted = stats::holm(&ps).into_iter();
    let family = ps.len();
    for (row, tests) in pending {
        let metric = row.metric;
        let limit = threshold(metric, threshold_pct);
        for (i, t) in tests.iter().enumerate() {
            let Some(t) = t else { continue };
            if !metric.judged() {
                let shown = t.conclude(metric, limit, None, family);
                row.changes[i] = Some(Change {
                    verdict: ChangeVerdict::NotJudged,
                    ..shown
                });
                continue;
            }
            let p_adj = t.p_value().and_then(|_| adjusted.next());
            let mut change = t.conclude(metric, limit, p_adj, family);
            // A tail's call over single runs rests on one run a side, which the guard exists to
            // rule out: it is withheld (docs/measurement.md, "tail guard").
            let weak = change.method != Some(Method::Repeats);
            if metric.is_tail() && change.is_called() && weak {
                change.verdict = ChangeVerdict::Inconclusive {
                    runs_needed: None,
                    tail_guard: Some(TailGuard::TooFewRuns),
                };
            } else if metric.is_tail() && change.is_called() {
                let holm = match (change.p_value, p_adj) {
                    (Some(p), Some(adj)) if p > 0.0 => adj / p,
                    _ => family as f64,
                };
                let (a, b) = (&row.estimates[0].values, &row.estimates[i].values);
                let above = change.ci.is_some_and(|(lo, _)| lo > 0.0);
                if let Some(why) = robust::withheld(metric, a, b, limit, holm, above) {
                    change.verdict = ChangeVerdict::Inconclusive {
                        runs_needed: None,
                        tail_guard: Some(why),
                    };
                }
            }
            row.changes[i] = Some(change);
        }
    }
    family
}

/// Whether a single run of `v` is too short for a weak test: no interval of its own (under 5
/// one-second batches) and fewer than [`MIN_SECONDS`] full seconds.
fn too_short(v: &Variant) -> bool {
    let [r] = v.runs.as_slice() else {
        return false;
    };
    let full = r.series.iter().filter(|s| s.span_s >= 0.999).count();
    r.summary.requests > 0
        && r.summary.ci95.as_ref().is_none_or(|c| c.rps.is_none())
        && full < MIN_SECONDS
}

fn notes(variants: &[Variant], rows: &[MetricRow]) -> Vec<String> {
    let mut notes = super::like_for_like::run_notes(variants);
    let used = |m: Method| {
        rows.iter()
            .flat_map(|r| r.changes.iter().flatten())
            .any(|c| c.method == Some(m))
    };
    let from = match (used(Method::RunIntervals), used(Method::PerSecond)) {
        (true, true) => Some(
            "each run's own 95 % intervals (or, for a figure without one, its \
                              per-second samples)",
        ),
        (true, false) => Some("each run's own 95 % intervals"),
        (false, true) => Some("per-second samples"),
        (false, false) => None,
    };
    if let Some(from) = from {
        notes.push(format!(
            "verdicts marked (weak) rest on single runs: the noise is estimated from {from}, \
             which miss run-to-run variation, and a tail (p99, p99.9) is not called from them; \
             repeat each test (--repeat 5) for a sound verdict"
        ));
    }
    let few = variants.iter().any(|v| v.runs.len() < MIN_REPEATS);
    if few && variants.iter().any(change::unsteady) {
        notes.push(
            "a load that changes (a ramp, a ladder, scenarios apart) has no weak verdict: \
             its seconds measure different loads, not noise; repeat each test (--repeat 3)"
                .into(),
        );
    } else if few && from.is_none() && variants.len() > 1 && variants.iter().any(too_short) {
        notes.push(format!(
            "no verdict from these runs: a single run gives one only from its own intervals or \
             from {MIN_SECONDS} full seconds or more, and these are too short; run each for \
             {MIN_SECONDS} s or more, or repeat each {MIN_REPEATS} times (--repeat {MIN_REPEATS})"
        ));
    }
    if let Some(base) = variants.first() {
        for v in &variants[1..] {
            let (n, m) = (base.runs.len(), v.runs.len());
            if n > 1 && m > 1 && n.min(m) < MIN_REPEATS {
                notes.push(format!(
                    "{n} runs of {} and {m} of {}: too few to measure run-to-run variation (at \
                     least {MIN_REPEATS} and {MIN_REPEATS} are needed), so per-second samples \
                     were used",
                    base.label, v.label
                ));
            }
        }
    }
    notes
}
