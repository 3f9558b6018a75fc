//! Comparing runs: is B faster or slower than A, or is the difference noise?
//!
//! # The method
//!
//! Each *variant* is one configuration measured one or more times (`--repeat N` writes N
//! records). The first variant is the baseline. For every metric (throughput, latency mean and
//! percentiles, error rate) and every other variant:
//!
//! - **Repeated runs** (enough of them that an exact rank test can reach p < α; e.g. 4 and 4, or
//!   5 and 3 — with 3 and 3 it cannot): one value per run. The per-variant figure is the **median
//!   over runs**, with a 95 % percentile-bootstrap confidence interval. The test is the two-sided
//!   **Mann–Whitney U** test over the per-run values (exact permutation distribution, ties
//!   included), and the interval of the change is a 95 % bootstrap interval of the difference of
//!   medians. Runs are the independent unit, so this is sound without assuming normality.
//! - **Single runs** (or too few repeats): the noise is estimated from the per-second series —
//!   per-second throughput, p50, p90, p99 and error rate. Seconds are autocorrelated, so the
//!   standard error of their mean uses the effective sample size n·(1 − ρ)/(1 + ρ) (ρ = lag-1
//!   autocorrelation), and the change gets a normal-approximation 95 % interval and p-value. It
//!   still misses run-to-run variation (a warm cache, a noisy neighbour, a different JIT state),
//!   so these verdicts are marked **weak**. Metrics without a series (mean, p95, p99.9, max) get no
//!   verdict from single runs.
//!
//! The verdict is "faster"/"slower" (throughput, latency; "fewer errors"/"more errors" for the
//! error rate) only when **both** p < α (0.05) **and** the whole 95 % interval of the change lies
//! beyond the practical threshold (default ±2 %; ±0.1 percentage points for the error rate);
//! otherwise "no significant difference". Direction is per metric: more throughput is faster,
//! more latency is slower. The bootstrap uses a fixed seed, so a comparison re-rendered from the
//! same records says the same thing.

use std::path::PathBuf;

pub use super::metric::Metric;
use super::stats;
use crate::record::model::RunRecord;

/// Significance level of the tests.
pub const ALPHA: f64 = 0.05;
/// Confidence level of the intervals.
pub const LEVEL: f64 = 0.95;
/// Default practical threshold: smaller relative changes are never called a difference, %.
pub const DEFAULT_THRESHOLD_PCT: f64 = 2.0;
/// Practical threshold for the error rate, percentage points.
pub const ERROR_RATE_THRESHOLD_PP: f64 = 0.1;
/// Fewest full seconds per side for a per-second (single-run) verdict.
pub const MIN_SECONDS: usize = 5;
/// Fewest runs for a confidence interval of a variant's median.
const MIN_RUNS_FOR_CI: usize = 3;
/// 97.5th percentile of the standard normal distribution.
const Z_975: f64 = 1.959_964;

/// One configuration, measured once or repeatedly.
#[derive(Debug, Clone)]
pub struct Variant {
    /// Its name in tables and charts.
    pub label: String,
    /// Where its records came from (file or folder).
    pub source: PathBuf,
    /// Its runs (at least one).
    pub runs: Vec<RunRecord>,
}

/// A variant's figure for one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The median over runs (one run: its value), in the metric's unit.
    pub value: Option<f64>,
    /// 95 % bootstrap interval of that median (three runs or more).
    pub ci: Option<(f64, f64)>,
    /// Per-run values (runs without the figure left out).
    pub values: Vec<f64>,
}

/// How a change was tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Mann–Whitney U over per-run values, bootstrap interval of the difference of medians.
    Repeats,
    /// Per-second samples with an autocorrelation-corrected standard error (weak).
    PerSecond,
}

/// The conclusion about one metric of one variant against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Significantly better (faster, or fewer errors).
    Better,
    /// Significantly worse (slower, or more errors).
    Worse,
    /// Not distinguishable from noise, or smaller than the practical threshold.
    NoSignificantDifference,
    /// Nothing to test (a figure missing, too little data).
    NotEnoughData,
}

/// One variant against the baseline, for one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Change of the figure: % of the baseline (relative metrics) or percentage points (error
    /// rate). `None` when either figure is missing or the baseline is 0.
    pub change: Option<f64>,
    /// 95 % interval of the change, same unit.
    pub ci: Option<(f64, f64)>,
    /// Two-sided p-value of the test.
    pub p_value: Option<f64>,
    /// The test used.
    pub method: Option<Method>,
    /// The conclusion.
    pub verdict: Verdict,
}

impl Change {
    /// The verdict in words for `metric`: "faster", "slower", "no significant difference", …,
    /// with "(weak)" when it rests on single runs.
    pub fn words(&self, metric: Metric) -> String {
        let (better, worse) = metric.words();
        let word = match self.verdict {
            Verdict::Better => better,
            Verdict::Worse => worse,
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::NotEnoughData => "not enough data",
        };
        match (self.method, self.verdict) {
            (Some(Method::PerSecond), Verdict::Better | Verdict::Worse) => format!("{word} (weak)"),
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
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self {
            threshold_pct: DEFAULT_THRESHOLD_PCT,
        }
    }
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
    /// Why the runs are not like-for-like (empty when they are).
    pub mismatches: Vec<String>,
    /// Other things the reader should know (interrupted runs, warnings, weak verdicts).
    pub notes: Vec<String>,
    /// The practical threshold used, %.
    pub threshold_pct: f64,
}

/// Compares `variants` (the first is the baseline).
pub fn compare(variants: &[Variant], options: CompareOptions) -> Comparison {
    let rows: Vec<MetricRow> = Metric::ALL
        .iter()
        .map(|&metric| metric_row(variants, metric, options))
        .collect();
    let mut notes = super::like_for_like::run_notes(variants);
    let weak = rows
        .iter()
        .flat_map(|r| r.changes.iter().flatten())
        .any(|c| c.method == Some(Method::PerSecond));
    if weak {
        notes.push(
            "verdicts marked (weak) rest on single runs: the noise is estimated from per-second \
             samples, which are autocorrelated and miss run-to-run variation; repeat each test \
             (--repeat 5) for a sound verdict"
                .into(),
        );
    }
    if let Some(base) = variants.first() {
        for v in &variants[1..] {
            let (n, m) = (base.runs.len(), v.runs.len());
            if n > 1 && m > 1 && stats::min_p_value(n, m) > ALPHA {
                notes.push(format!(
                    "{} runs of {} and {} of {}: too few for a rank test to reach p < {ALPHA} \
                     (at least 4 and 4 are needed), so per-second samples were used",
                    n, base.label, m, v.label
                ));
            }
        }
    }
    Comparison {
        labels: variants.iter().map(|v| v.label.clone()).collect(),
        runs: variants.iter().map(|v| v.runs.len()).collect(),
        rows,
        mismatches: super::like_for_like::mismatches(variants),
        notes,
        threshold_pct: options.threshold_pct,
    }
}

fn metric_row(variants: &[Variant], metric: Metric, options: CompareOptions) -> MetricRow {
    let estimates: Vec<Estimate> = variants.iter().map(|v| estimate(v, metric)).collect();
    let changes = variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            (i > 0).then(|| {
                change(
                    &variants[0],
                    v,
                    &estimates[0],
                    &estimates[i],
                    metric,
                    options,
                )
            })
        })
        .collect();
    MetricRow {
        metric,
        estimates,
        changes,
    }
}

fn estimate(v: &Variant, metric: Metric) -> Estimate {
    let values: Vec<f64> = v.runs.iter().filter_map(|r| metric.of_run(r)).collect();
    let ci = (values.len() >= MIN_RUNS_FOR_CI)
        .then(|| stats::bootstrap_ci(&values, stats::median, LEVEL))
        .flatten();
    Estimate {
        value: stats::median(&values),
        ci,
        values,
    }
}

fn change(
    base: &Variant,
    other: &Variant,
    a: &Estimate,
    b: &Estimate,
    metric: Metric,
    options: CompareOptions,
) -> Change {
    let scale = |reference: f64| -> Option<f64> {
        if metric.relative() {
            (reference != 0.0).then(|| 100.0 / reference)
        } else {
            Some(1.0)
        }
    };
    let change = match (a.value, b.value) {
        (Some(x), Some(y)) => scale(x).map(|s| (y - x) * s),
        _ => None,
    };
    let none = |change| Change {
        change,
        ci: None,
        p_value: None,
        method: None,
        verdict: Verdict::NotEnoughData,
    };
    let repeats = a.values.len() > 1
        && b.values.len() > 1
        && stats::min_p_value(a.values.len(), b.values.len()) <= ALPHA;
    let (method, p, ci) = if repeats {
        let Some(s) = a.value.and_then(scale) else {
            return none(change);
        };
        let p = stats::mann_whitney_p(&a.values, &b.values);
        let ci = stats::bootstrap_diff_ci(&a.values, &b.values, stats::median, LEVEL)
            .map(|(lo, hi)| (lo * s, hi * s));
        (Method::Repeats, p, ci)
    } else {
        let xs = seconds(base, metric);
        let ys = seconds(other, metric);
        let count = |runs: &[Vec<f64>]| runs.iter().map(Vec::len).sum::<usize>();
        if count(&xs) < MIN_SECONDS || count(&ys) < MIN_SECONDS {
            return none(change);
        }
        let Some((p, ci)) = per_second_test(&xs, &ys, scale) else {
            return none(change);
        };
        (Method::PerSecond, Some(p), Some(ci))
    };
    let threshold = if metric.relative() {
        options.threshold_pct
    } else {
        ERROR_RATE_THRESHOLD_PP
    };
    let verdict = match (p, ci) {
        (Some(p), Some((lo, hi))) if p < ALPHA && (lo > threshold || hi < -threshold) => {
            if (lo > 0.0) == metric.higher_is_better() {
                Verdict::Better
            } else {
                Verdict::Worse
            }
        }
        (Some(_), Some(_)) => Verdict::NoSignificantDifference,
        _ => Verdict::NotEnoughData,
    };
    Change {
        change,
        ci,
        p_value: p,
        method: Some(method),
        verdict,
    }
}

/// Per-second samples of a variant, one list per run (each run's autocorrelation is its own).
fn seconds(v: &Variant, metric: Metric) -> Vec<Vec<f64>> {
    v.runs
        .iter()
        .map(|r| {
            r.series
                .iter()
                .filter_map(|s| metric.of_second(s))
                .collect::<Vec<f64>>()
        })
        .filter(|xs| !xs.is_empty())
        .collect()
}

/// Welch-style test on per-second means with autocorrelation-corrected standard errors. Returns
/// the p-value and the 95 % interval of the change, scaled by `scale(baseline mean)`.
fn per_second_test(
    xs: &[Vec<f64>],
    ys: &[Vec<f64>],
    scale: impl Fn(f64) -> Option<f64>,
) -> Option<(f64, (f64, f64))> {
    let side = |runs: &[Vec<f64>]| -> Option<(f64, f64)> {
        let all: Vec<f64> = runs.iter().flatten().copied().collect();
        let m = stats::mean(&all)?;
        let n_eff: f64 = runs.iter().map(|r| stats::effective_n(r)).sum();
        Some((m, stats::variance(&all) / n_eff.max(1.0)))
    };
    let (ma, va) = side(xs)?;
    let (mb, vb) = side(ys)?;
    let s = scale(ma)?;
    let diff = mb - ma;
    let se = (va + vb).sqrt();
    let p = if se == 0.0 {
        if diff == 0.0 { 1.0 } else { 0.0 }
    } else {
        2.0 * (1.0 - stats::normal_cdf((diff / se).abs()))
    };
    Some((p, ((diff - Z_975 * se) * s, (diff + Z_975 * se) * s)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;

    fn variant(label: &str, runs: Vec<RunRecord>) -> Variant {
        Variant {
            label: label.into(),
            source: PathBuf::from(label),
            runs,
        }
    }

    fn repeats(label: &str, rate: u64, latency_us: u64) -> Variant {
        let runs = [0i64, 7, -5, 3, -2]
            .iter()
            .map(|d| {
                record(
                    label,
                    5,
                    (rate as i64 + d) as u64,
                    latency_us + d.unsigned_abs(),
                    0,
                    0.0,
                )
            })
            .collect();
        variant(label, runs)
    }

    fn row(c: &Comparison, m: Metric) -> &MetricRow {
        c.rows.iter().find(|r| r.metric == m).unwrap()
    }

    #[test]
    fn repeated_runs_find_a_real_change_in_the_right_direction() {
        let c = compare(
            &[repeats("5ms", 1000, 5000), repeats("6ms", 830, 6000)],
            CompareOptions::default(),
        );
        let p50 = row(&c, Metric::P50).changes[1].clone().unwrap();
        assert_eq!(p50.method, Some(Method::Repeats));
        assert_eq!(p50.verdict, Verdict::Worse, "{p50:?}");
        assert_eq!(p50.words(Metric::P50), "slower");
        assert!((p50.change.unwrap() - 20.0).abs() < 1.0, "{p50:?}");
        assert!(p50.p_value.unwrap() < 0.01);
        let rps = row(&c, Metric::Throughput).changes[1].clone().unwrap();
        assert_eq!(rps.verdict, Verdict::Worse);
        assert!(rps.change.unwrap() < -15.0);
        // The reverse comparison: the same change is an improvement.
        let c = compare(
            &[repeats("6ms", 830, 6000), repeats("5ms", 1000, 5000)],
            CompareOptions::default(),
        );
        assert_eq!(
            row(&c, Metric::Throughput).changes[1]
                .as_ref()
                .unwrap()
                .verdict,
            Verdict::Better
        );
        assert_eq!(
            row(&c, Metric::P99).changes[1]
                .as_ref()
                .unwrap()
                .words(Metric::P99),
            "faster"
        );
        assert!(c.mismatches.is_empty(), "{:?}", c.mismatches);
        let e = &row(&c, Metric::P50).estimates[0];
        assert_eq!(e.values.len(), 5);
        let (lo, hi) = e.ci.unwrap();
        assert!(lo <= e.value.unwrap() && e.value.unwrap() <= hi);
    }

    #[test]
    fn identical_configurations_show_no_difference() {
        let c = compare(
            &[repeats("a", 1000, 5000), repeats("b", 1001, 5001)],
            CompareOptions::default(),
        );
        for r in &c.rows {
            let ch = r.changes[1].as_ref().unwrap();
            assert!(
                matches!(ch.verdict, Verdict::NoSignificantDifference),
                "{:?}: {ch:?}",
                r.metric
            );
        }
    }

    #[test]
    fn single_runs_give_weak_verdicts_from_the_series() {
        let a = variant("a", vec![record("a", 10, 1000, 5000, 0, 0.05)]);
        let b = variant("b", vec![record("b", 10, 800, 6000, 0, 0.05)]);
        let c = compare(&[a.clone(), b], CompareOptions::default());
        let rps = row(&c, Metric::Throughput).changes[1].clone().unwrap();
        assert_eq!(rps.method, Some(Method::PerSecond));
        assert_eq!(rps.words(Metric::Throughput), "slower (weak)");
        // No series for p95: no verdict from single runs.
        let p95 = row(&c, Metric::P95).changes[1].clone().unwrap();
        assert_eq!(p95.verdict, Verdict::NotEnoughData);
        assert!(p95.change.unwrap() > 15.0);
        assert!(c.notes.iter().any(|n| n.contains("weak")), "{:?}", c.notes);
        // A noisy single run against a slightly different one: noise.
        let b = variant("b", vec![record("b", 10, 1010, 5000, 0, 0.05)]);
        let c = compare(&[a, b], CompareOptions::default());
        let rps = row(&c, Metric::Throughput).changes[1].clone().unwrap();
        assert_eq!(rps.verdict, Verdict::NoSignificantDifference, "{rps:?}");
    }

    #[test]
    fn short_runs_and_failed_runs_do_not_break_the_comparison() {
        let a = variant("a", vec![record("a", 2, 100, 1000, 0, 0.0)]);
        let failed = variant("b", vec![record("b", 2, 100, 1000, 100, 0.0)]);
        let mut empty = record("c", 0, 0, 0, 0, 0.0);
        empty.interrupted = Some("SIGINT".into());
        let c = compare(
            &[a, failed, variant("c", vec![empty])],
            CompareOptions::default(),
        );
        let errors = row(&c, Metric::ErrorRate);
        assert_eq!(errors.estimates[1].value, Some(100.0));
        assert_eq!(errors.changes[1].as_ref().unwrap().change, Some(100.0));
        assert_eq!(row(&c, Metric::P50).estimates[2].value, None);
        assert_eq!(
            row(&c, Metric::P50).changes[2].as_ref().unwrap().verdict,
            Verdict::NotEnoughData
        );
        assert!(
            c.notes.iter().any(|n| n.contains("c was interrupted")),
            "{:?}",
            c.notes
        );
        assert!(
            c.notes.iter().any(|n| n.contains("every request failed")),
            "{:?}",
            c.notes
        );
        assert!(
            c.mismatches.iter().any(|m| m.starts_with("duration asked")),
            "{:?}",
            c.mismatches
        );
    }

    #[test]
    fn too_few_repeats_fall_back_to_seconds_and_say_so() {
        let three = |label: &str, latency| {
            variant(
                label,
                (0..3)
                    .map(|i| record(label, 6, 1000 + i, latency, 0, 0.02))
                    .collect(),
            )
        };
        let c = compare(
            &[three("a", 5000), three("b", 6000)],
            CompareOptions::default(),
        );
        let p50 = row(&c, Metric::P50).changes[1].clone().unwrap();
        assert_eq!(p50.method, Some(Method::PerSecond));
        assert_eq!(p50.verdict, Verdict::Worse);
        assert!(
            c.notes.iter().any(|n| n.contains("too few")),
            "{:?}",
            c.notes
        );
    }

    #[test]
    fn mismatched_runs_are_flagged() {
        let a = record("a", 10, 1000, 5000, 0, 0.0);
        let mut b = record("b", 10, 1000, 5000, 0, 0.0);
        b.config.connections = Some(64);
        b.config.url = "http://127.0.0.1:9090/".into();
        b.tool.version = "0.2.0".into();
        b.summary.duration_s = 13.5 * 60.0;
        let c = compare(
            &[variant("A", vec![a]), variant("B", vec![b])],
            CompareOptions::default(),
        );
        let m = c.mismatches.join("\n");
        for expected in [
            "connections differs: A = 8; B = 64",
            "target URL differs",
            "tool version differs: A = 0.1.0; B = 0.2.0",
            "measured duration differs by more than 10%: A = 10.0s; B = 13m30s",
        ] {
            assert!(m.contains(expected), "{expected} not in\n{m}");
        }
    }
}
