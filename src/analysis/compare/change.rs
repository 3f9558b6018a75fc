//! One metric of one variant against the baseline: the variants' figures, the test of the
//! change, and (once the whole comparison's correction is known) the verdict.

use super::groups::GroupKey;
use super::{
    ALPHA, Change, ChangeVerdict, Estimate, LEVEL, MAX_RUNS_NEEDED, MIN_REPEATS, MIN_SECONDS,
    Method, Metric, MetricRow, POWER, RunsNeeded, Variant,
};
use crate::analysis::stats::{self, Difference};
use crate::record::model::{Bound, RunRecord};

/// What a row measures: the runs as a whole, or one scenario, step or phase of them.
#[derive(Debug, Clone, Copy)]
pub(super) enum Scope<'a> {
    /// The run's figures (`summary`).
    Run,
    /// One group's figures (`groups[]`).
    Group(&'a GroupKey),
}

impl Scope<'_> {
    /// The figure of `metric` in this scope of run `r`.
    pub(super) fn value(self, metric: Metric, r: &RunRecord) -> Option<f64> {
        match self {
            Self::Run => metric.of_run(r),
            Self::Group(key) => metric.of_group(key.find(r)?),
        }
    }

    /// The error rate's counts in this scope of run `r`: (attempts charged, failed of them).
    fn error_counts(self, r: &RunRecord) -> Option<(u64, u64)> {
        match self {
            Self::Run => Some(r.summary.error_counts()),
            Self::Group(key) => Some(key.find(r)?.error_counts()),
        }
    }

    /// Responses in this scope of run `r`: its latency histogram's count; `None` when the
    /// histogram is unreadable.
    fn responses(self, r: &RunRecord) -> Option<u64> {
        let encoded = match self {
            Self::Run => &r.histograms.latency_us,
            Self::Group(key) => &key.find(r)?.histogram_us,
        };
        crate::record::responses_in(encoded)
    }

    /// The run's own batch-means interval of the figure in this scope.
    fn bound(self, metric: Metric, r: &RunRecord) -> Option<Bound> {
        match self {
            Self::Run => metric.bound_of_run(r).copied(),
            Self::Group(key) => metric.bound_of_group(key.find(r)?).copied(),
        }
    }
}

/// A change measured and tested, not yet judged: the verdict needs the p-value adjusted across
/// the whole comparison.
#[derive(Debug, Clone)]
pub(super) struct Tested {
    /// The point change, % or percentage points.
    change: Option<f64>,
    /// The difference on the test's scale (log ratio, or percentage points).
    diff: Option<Difference>,
    method: Option<Method>,
    /// Pooled per-run standard deviation on the test's scale (tests over runs only).
    sd: Option<f64>,
    /// Runs of the larger side.
    runs: usize,
    /// The error rate: Newcombe's 95 % interval of the difference of the sides' pooled
    /// rates, pp ([`crate::analysis::proportion`]); an equivalence must lie within it too.
    counts: Option<(f64, f64)>,
}

impl Tested {
    /// The unadjusted two-sided p-value, when there was a test.
    pub(super) fn p_value(&self) -> Option<f64> {
        self.diff.map(|d| d.p_value())
    }

    /// The verdict for `metric` with practical threshold `limit` (% or pp), given the p-value
    /// adjusted across the `family` tests of the comparison.
    pub(super) fn conclude(
        &self,
        metric: Metric,
        limit: f64,
        p_adjusted: Option<f64>,
        family: usize,
    ) -> Change {
        let Some(diff) = self.diff else {
            return Change {
                change: self.change,
                ci: None,
                p_value: None,
                p_adjusted: None,
                method: None,
                verdict: ChangeVerdict::NotEnoughData,
                confounded: false,
            };
        };
        let (lo, hi) = diff.interval(LEVEL);
        let (down, up) = bounds(metric, limit);
        let beyond = lo > up || hi < down;
        let inside = lo >= down && hi <= up;
        // An error rate's runs can agree exactly (no error in any, or the same few in each)
        // from too few attempts to show anything: the pooled counts must show the same — a
        // call beyond ±T on the same side, an equivalence within it.
        let counted = match self.counts {
            Some((l, h)) if beyond => (lo > up && l > up) || (hi < down && h < down),
            Some((l, h)) if inside => l >= down && h <= up,
            _ => true,
        };
        let significant = p_adjusted.is_some_and(|p| p < ALPHA);
        let verdict = if significant && beyond && counted {
            if (lo > up) == metric.higher_is_better() {
                ChangeVerdict::Better
            } else {
                ChangeVerdict::Worse
            }
        } else if inside && counted {
            ChangeVerdict::Equivalent
        } else {
            ChangeVerdict::Inconclusive {
                // The runs' spread says nothing of what the counts lack.
                runs_needed: counted
                    .then(|| self.runs_needed(&diff, down, up, family))
                    .flatten(),
                tail_guard: None,
            }
        };
        // Where the counts held the verdict back, shown with the span of both intervals.
        let (lo, hi) = match self.counts {
            Some((l, h)) if !counted => (lo.min(l), hi.max(h)),
            _ => (lo, hi),
        };
        Change {
            change: self.change,
            ci: Some((from_scale_change(metric, lo), from_scale_change(metric, hi))),
            p_value: Some(diff.p_value()),
            p_adjusted,
            method: self.method,
            verdict,
            confounded: false,
        }
    }

    /// Runs per variant at which the interval would likely (with [`POWER`]) clear the threshold
    /// — and, for a change beyond it, 0 at Bonferroni's α/k — or fit inside it.
    fn runs_needed(
        &self,
        diff: &Difference,
        down: f64,
        up: f64,
        family: usize,
    ) -> Option<RunsNeeded> {
        let sd = self.sd?;
        let d = diff.estimate;
        let from = self.runs + 1;
        let max = MAX_RUNS_NEEDED as usize;
        let n = if d > up || d < down {
            let margin = if d > up { d - up } else { down - d };
            let bonferroni = 1.0 - ALPHA / family.max(1) as f64;
            let clear = stats::runs_needed(sd, margin, LEVEL, POWER, from, max);
            let called = stats::runs_needed(sd, d.abs(), bonferroni, POWER, from, max);
            clear.zip(called).map(|(a, b)| a.max(b))
        } else {
            stats::runs_needed(sd, (up - d).min(d - down), LEVEL, POWER, from, max)
        };
        Some(match n {
            Some(n) => RunsNeeded::About(n as u32),
            None => RunsNeeded::MoreThan(MAX_RUNS_NEEDED),
        })
    }
}

/// The metric's figures for every variant and the tests of every variant against the first;
/// the row's changes are left empty for [`Tested::conclude`] to fill.
pub(super) fn row(
    variants: &[Variant],
    metric: Metric,
    scope: Scope<'_>,
) -> (MetricRow, Vec<Option<Tested>>) {
    let estimates: Vec<Estimate> = variants
        .iter()
        .map(|v| estimate(v, metric, scope))
        .collect();
    let tests = variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            (i > 0).then(|| {
                let sides = [&variants[0], v];
                test(sides, [&estimates[0], &estimates[i]], metric, scope)
            })
        })
        .collect();
    let row = MetricRow {
        metric,
        estimates,
        changes: vec![None; variants.len()],
    };
    (row, tests)
}

/// A value on the test's scale: its logarithm for relative metrics, itself for the error rate.
pub(super) fn to_scale(metric: Metric, x: f64) -> f64 {
    if metric.relative() { x.ln() } else { x }
}

fn from_scale(metric: Metric, x: f64) -> f64 {
    if metric.relative() { x.exp() } else { x }
}

/// A difference on the test's scale as a change: % for relative metrics, pp for the error rate.
pub(super) fn from_scale_change(metric: Metric, d: f64) -> f64 {
    if metric.relative() {
        d.exp_m1() * 100.0
    } else {
        d
    }
}

/// ±`limit` (% or pp) on the test's scale: (lower, upper).
pub(super) fn bounds(metric: Metric, limit: f64) -> (f64, f64) {
    if metric.relative() {
        let down = if limit < 100.0 {
            (-limit / 100.0).ln_1p()
        } else {
            f64::NEG_INFINITY
        };
        (down, (limit / 100.0).ln_1p())
    } else {
        (-limit, limit)
    }
}

fn estimate(v: &Variant, metric: Metric, scope: Scope<'_>) -> Estimate {
    let values: Vec<f64> = v
        .runs
        .iter()
        .filter_map(|r| scope.value(metric, r))
        .filter(|&x| !metric.relative() || x > 0.0)
        .collect();
    let scaled: Vec<f64> = values.iter().map(|&x| to_scale(metric, x)).collect();
    let m = stats::mean(&scaled);
    // A percentile with too few responses above it in some run has no interval over runs
    // (as it has no test): each run's figure is its slowest few.
    let over_runs = values.len() >= MIN_REPEATS && enough_above(v, metric, scope);
    let ci = m.filter(|_| over_runs).map(|m| {
        let n = scaled.len() as f64;
        let half =
            stats::t_quantile(0.5 + LEVEL / 2.0, n - 1.0) * (stats::variance(&scaled) / n).sqrt();
        let (lo, hi) = (from_scale(metric, m - half), from_scale(metric, m + half));
        if metric.relative() {
            (lo, hi)
        } else {
            (lo.max(0.0), hi.min(100.0))
        }
    });
    // One run: its own interval, from its batches.
    let ci = ci.or_else(|| match v.runs.as_slice() {
        [one] => scope
            .bound(metric, one)
            .map(|b| (b.value - b.half_width, b.value + b.half_width)),
        _ => None,
    });
    Estimate {
        value: m.map(|m| from_scale(metric, m)),
        ci,
        values,
    }
}

fn test(
    [base, other]: [&Variant; 2],
    [a, b]: [&Estimate; 2],
    metric: Metric,
    scope: Scope<'_>,
) -> Tested {
    let change = match (a.value, b.value) {
        (Some(x), Some(y)) if metric.relative() => (x > 0.0).then(|| (y / x - 1.0) * 100.0),
        (Some(x), Some(y)) => Some(y - x),
        _ => None,
    };
    let mut t = Tested {
        change,
        diff: None,
        method: None,
        sd: None,
        runs: a.values.len().max(b.values.len()),
        counts: None,
    };
    if metric == Metric::ErrorRate {
        let pooled = |v: &Variant| {
            let counts = v.runs.iter().filter_map(|r| scope.error_counts(r));
            crate::analysis::proportion::pooled(counts)
        };
        t.counts = crate::analysis::proportion::difference_pp(pooled(base), pooled(other), LEVEL);
    }
    if a.values.len() >= MIN_REPEATS && b.values.len() >= MIN_REPEATS {
        if !enough_above(base, metric, scope) || !enough_above(other, metric, scope) {
            return t;
        }
        let xs: Vec<f64> = a.values.iter().map(|&x| to_scale(metric, x)).collect();
        let ys: Vec<f64> = b.values.iter().map(|&x| to_scale(metric, x)).collect();
        t.diff = stats::student(&xs, &ys);
        t.sd = Some(stats::pooled_sd(&xs, &ys));
        t.method = Some(Method::Repeats);
    } else if let (Some(x), Some(y)) = (a.value, b.value) {
        let (diff, method) = match scope {
            // The runs' own intervals where both have one (the figures of `summary.ci95`);
            // else, for a run's other figures and records without intervals, its seconds.
            Scope::Run => match by_intervals(base, other, metric, scope) {
                Some(d) => (Some(d), Method::RunIntervals),
                None => (per_second(base, other, metric, x, y), Method::PerSecond),
            },
            Scope::Group(_) => (
                by_intervals(base, other, metric, scope),
                Method::RunIntervals,
            ),
        };
        t.diff = diff;
        t.method = diff.map(|_| method);
    }
    t
}

/// Whether every run of `v` that has `metric` holds enough responses above it to judge it over
/// runs (only a latency quantile asks: p99 needs 1,000 responses, p99.9 10,000).
fn enough_above(v: &Variant, metric: Metric, scope: Scope<'_>) -> bool {
    let mut with = v.runs.iter().filter(|r| scope.value(metric, r).is_some());
    // Only a latency quantile needs its histogram read.
    metric.quantile().is_none()
        || with.all(|r| {
            scope
                .responses(r)
                .is_some_and(|n| metric.enough_responses(n))
        })
}

/// The weak test of a figure in two single runs: each run's own batch-means interval
/// (`summary.ci95`, or a group's `groups[].ci95`) as its standard error (half-width over
/// t₀.₉₇₅ at the effective batches − 1 degrees of freedom), the log ratio by the delta method,
/// Welch's degrees of freedom.
fn by_intervals(
    base: &Variant,
    other: &Variant,
    metric: Metric,
    scope: Scope<'_>,
) -> Option<Difference> {
    let side = |v: &Variant| -> Option<(f64, f64, f64)> {
        let [run] = v.runs.as_slice() else {
            return None;
        };
        let b = scope.bound(metric, run)?;
        let df = b.effective - 1.0;
        if df < 1.0 || b.value <= 0.0 {
            return None;
        }
        let se = b.half_width / stats::t_quantile(0.5 + LEVEL / 2.0, df);
        Some((b.value, se / b.value, df))
    };
    let (x, sa, da) = side(base)?;
    let (y, sb, db) = side(other)?;
    Some(stats::welch_from((y / x).ln(), sa * sa, da, sb * sb, db))
}

/// The per-second (weak) test: each side's mean of full seconds with an autocorrelation-
/// corrected standard error; the difference is that of the whole-run figures `x` and `y` (log
/// ratio, delta method, for relative metrics).
fn per_second(
    base: &Variant,
    other: &Variant,
    metric: Metric,
    x: f64,
    y: f64,
) -> Option<Difference> {
    if unsteady(base) || unsteady(other) {
        return None;
    }
    // Merged shares that measured apart have edge seconds with only some shares' load: no
    // rate from their seconds (as the merge gave the rates no interval).
    let apart = |v: &Variant| {
        let merged = |r: &RunRecord| r.merged.as_ref().is_some_and(|m| m.rates_apart());
        v.runs.iter().any(merged)
    };
    if metric == Metric::Throughput && (apart(base) || apart(other)) {
        return None;
    }
    let side = |v: &Variant| -> Option<(f64, f64, f64)> {
        let runs = seconds(v, metric);
        let all: Vec<f64> = runs.iter().flatten().copied().collect();
        if all.len() < MIN_SECONDS {
            return None;
        }
        let m = stats::mean(&all)?;
        let n_eff: f64 = runs.iter().map(|r| stats::effective_n(r)).sum();
        Some((m, stats::variance(&all) / n_eff.max(1.0), n_eff))
    };
    let (ma, va, na) = side(base)?;
    let (mb, vb, nb) = side(other)?;
    if !metric.relative() {
        return Some(stats::welch_from(y - x, va, na - 1.0, vb, nb - 1.0));
    }
    if x <= 0.0 || y <= 0.0 || ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    Some(stats::welch_from(
        (y / x).ln(),
        va / (ma * ma),
        na - 1.0,
        vb / (mb * mb),
        nb - 1.0,
    ))
}

/// Whether some run of `v` had a load that changed (`summary.ci95.unsteady`): its seconds
/// measure different loads, so their spread is no noise to test against.
pub(super) fn unsteady(v: &Variant) -> bool {
    v.runs.iter().any(|r| {
        let ci = r.summary.ci95.as_ref();
        ci.is_some_and(|c| c.unsteady.is_some())
    })
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
