//! A/B until decided (`volley ab`, a suite's `repeat = "until-decided"`): short runs A B A B …,
//! and after each pair a look at the chosen metrics, stopping as soon as each is decided —
//! better, worse, or equivalent within the threshold — or the budget is spent.
//!
//! # The design (`docs/measurement.md`, "A/B until decided")
//!
//! Looking after every pair and stopping at the first call inflates false calls: five looks at
//! α = 0.05 each call an A/A difference about 14 % of the time. The looks therefore share one
//! α = 0.05 by **alpha spending** (Lan & DeMets, 1983) with the Pocock-type function
//! α(t) = α · ln(1 + (e − 1) · t), t = pairs / `max_pairs`: the looks up to pair j have spent
//! α(t_j), and look j may use the increment α(t_j) − α(t_{j−1}) (nothing before
//! [`MIN_PAIRS`], whose look takes what the earlier pairs left), divided among the k metrics
//! (Bonferroni). A false call needs some look of some metric to reject at its own level, so by
//! the union bound the chance of any false call over the whole sequence is at most
//! Σ increments = α(1) = α, whatever the correlation of the looks (the bound is conservative:
//! the looks of one sequence are strongly correlated). Stopping early, at the time budget or
//! once decided, only removes looks, so it never raises that chance.
//!
//! Each look is a paired t test on the per-pair differences of the logarithms of the per-run
//! figures (the error rate: of the values, in percentage points) — A and B of a pair ran back
//! to back, so a slow drift of the machine's speed cancels — and its interval at 1 − a, with a
//! the look's level. Better or
//! worse: the whole interval lies beyond ±T; equivalent: the interval at 1 − 2a (two one-sided
//! tests at a) lies within ±T. A metric once decided stays decided.
//!
//! A tail metric (p99, p99.9: [`Metric::is_tail`]) is called better or worse only when the call
//! survives leaving out any one pair — the same look on every subset of all pairs but one — as
//! `volley compare` guards its tail calls: one run whose tail jumped must not carry a call. It
//! needs [`MIN_GUARDED_RUNS`] pairs; a call withheld leaves the metric undecided, and the look
//! says why ([`Look::withheld`]).

use super::compare::{MIN_GUARDED_RUNS, TailGuard};
use super::gate::Part;
use super::metric::Metric;
use super::stats::{Difference, mean, variance, without};
use crate::record::model::RunRecord;
pub use crate::record::suite_decision::Stopped;

/// The false-call rate a whole sequence is held to.
pub const ALPHA: f64 = 0.05;
/// Pairs before the first look: a t test of two runs a side has two degrees of freedom.
pub const MIN_PAIRS: u32 = 3;

/// A figure a sequence decides: a metric of the runs, or of one scenario, step or phase of
/// them (`--metric p50{step=pay}`).
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The metric.
    pub metric: Metric,
    /// The part of plan runs it is taken from; `None`: the run's.
    pub part: Option<Part>,
}

impl Figure {
    /// The metric of the whole runs.
    pub fn of_runs(metric: Metric) -> Self {
        Self { metric, part: None }
    }

    /// Its value in run `r`; `None` when the run lacks it (or the part).
    pub fn value(&self, r: &RunRecord) -> Option<f64> {
        match &self.part {
            None => self.metric.of_run(r),
            Some(part) => self.metric.of_group(part.group_in(r)?),
        }
    }

    /// Whether run `r` holds enough responses above the figure's quantile to judge it
    /// ([`Metric::enough_responses`]); always for figures that are not latency quantiles.
    pub fn enough_responses(&self, r: &RunRecord) -> bool {
        if self.metric.quantile().is_none() {
            return true;
        }
        self.responses(r)
            .is_some_and(|n| self.metric.enough_responses(n))
    }

    /// The responses in run `r` behind the figure's latency: the run's, or its part's.
    fn responses(&self, r: &RunRecord) -> Option<u64> {
        let encoded = match &self.part {
            None => Some(&r.histograms.latency_us),
            Some(part) => part.group_in(r).map(|g| &g.histogram_us),
        };
        encoded.and_then(|e| crate::record::responses_in(e))
    }

    /// The error rate's counts in run `r`, (attempts charged, failed of them); `None` for the
    /// other metrics and a run without the part.
    pub fn error_counts(&self, r: &RunRecord) -> Option<(u64, u64)> {
        if self.metric != Metric::ErrorRate {
            return None;
        }
        match &self.part {
            None => Some(r.summary.error_counts()),
            Some(part) => Some(part.group_in(r)?.error_counts()),
        }
    }

    /// Its name in words: "latency p50", "latency p50 of step `pay`".
    pub fn label(&self) -> String {
        match &self.part {
            None => self.metric.label().to_string(),
            Some(part) => format!("{} of {part}", self.metric.label()),
        }
    }
}

/// What a sequence is asked to decide, and its horizon.
#[derive(Debug, Clone, PartialEq)]
pub struct Design {
    /// The figures to decide (each counts in the Bonferroni split of a look's α).
    pub metrics: Vec<Figure>,
    /// Most pairs (A and B runs) the sequence may take: the horizon the α is spent over.
    pub max_pairs: u32,
    /// Practical threshold for the relative metrics, % (the error rate's is `volley compare`'s
    /// fixed 0.1 percentage points).
    pub threshold_pct: f64,
    /// Variants compared with the baseline (1 for `volley ab`; a suite's targets after the
    /// first): each look's α is split among metrics × comparisons.
    pub comparisons: u32,
}

/// A metric's state after a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// B better than A by more than the threshold (faster, fewer errors).
    Better,
    /// B worse than A by more than the threshold.
    Worse,
    /// Within ±threshold of each other.
    Equivalent,
    /// Not decided yet.
    Undecided,
}

impl Call {
    /// Whether the metric is decided.
    pub fn decided(self) -> bool {
        self != Self::Undecided
    }

    /// The call in words, for metric `m`: "faster", "slower", "equivalent", "undecided".
    pub fn words(self, m: Metric) -> &'static str {
        match self {
            Self::Better => m.words().0,
            Self::Worse => m.words().1,
            Self::Equivalent => "equivalent",
            Self::Undecided => "undecided",
        }
    }
}

/// One metric at one look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    /// The metric.
    pub metric: Metric,
    /// Pairs done at this look.
    pub pairs: u32,
    /// The change of B against A, % (percentage points for the error rate).
    pub change: f64,
    /// Its interval at the look's level, 1 − a, same unit (for an equivalence: at 1 − 2a, the
    /// two one-sided tests that showed it).
    pub interval: (f64, f64),
    /// Its interval at 1 − a whatever the call (what an equivalence the counts took back shows).
    pub at_level: (f64, f64),
    /// The look's level for this metric: the α it may spend.
    pub level: f64,
    /// What the look decided.
    pub call: Call,
    /// A tail metric's call that the look made but leaving one pair out took away (the
    /// metric stays undecided), and why.
    pub withheld: Option<TailGuard>,
}

impl Design {
    /// Why run `r` cannot give a figure's value: the first part (`{step=…}`) it lacks, with the
    /// parts it has; `None` when it has them all.
    pub fn missing_part(&self, r: &RunRecord) -> Option<String> {
        let part = self
            .metrics
            .iter()
            .filter_map(|f| f.part.as_ref())
            .find(|p| p.group_in(r).is_none())?;
        let has: Vec<String> = r
            .groups
            .iter()
            .map(|g| format!("{} `{}`", g.kind.word(), g.path()))
            .collect();
        Some(match has.is_empty() {
            true => format!("the runs have no {part}: they have no scenarios, steps or phases"),
            false => format!("the runs have no {part}; they have {}", has.join(", ")),
        })
    }

    /// Why run `r` (of side `side`, "A" or "B") cannot give a percentile a value: the first
    /// figure whose quantile it holds fewer than half the responses it needs above — far
    /// enough short that the runs of the same test would be too, so the sequence could never
    /// decide it; `None` when it holds enough for all, or none at all (a run that failed says
    /// so itself).
    pub fn too_few_responses(&self, r: &RunRecord, side: &str) -> Option<String> {
        self.metrics.iter().find_map(|figure| {
            let q = figure.metric.quantile()?;
            let need = (crate::analysis::interval::MIN_ABOVE / (1.0 - q)).round() as u64;
            let held = figure.responses(r)?;
            (held > 0 && held < need / 2).then(|| {
                format!(
                    "{}: {side}'s first run holds {} responses, and it is judged only in runs of \
                     {} or more (10 above it; in fewer it is the run's slowest few), so no pair \
                     would decide it; make each run longer, or decide a lower percentile",
                    figure.label(),
                    crate::units::thousands(held),
                    crate::units::thousands(need)
                )
            })
        })
    }

    /// The α spent by the looks up to `pairs` pairs, over all metrics.
    pub fn spent(&self, pairs: u32) -> f64 {
        if pairs < MIN_PAIRS {
            return 0.0;
        }
        let t = (f64::from(pairs) / f64::from(self.max_pairs.max(MIN_PAIRS))).min(1.0);
        ALPHA * (1.0 + (std::f64::consts::E - 1.0) * t).ln()
    }

    /// The level of each metric's test at the look after `pairs` pairs.
    pub fn level(&self, pairs: u32) -> f64 {
        let k = (self.metrics.len() * self.comparisons.max(1) as usize).max(1) as f64;
        (self.spent(pairs) - self.spent(pairs.saturating_sub(1))) / k
    }

    /// The threshold of `m` in its unit (% or percentage points): `volley compare`'s, so that
    /// the comparison written after the decision draws the same line.
    fn threshold(&self, m: Metric) -> f64 {
        crate::analysis::compare::threshold(m, self.threshold_pct)
    }

    /// Looks at metric `m` after `pairs` pairs, from its per-run values on each side (`a` the
    /// baseline, pair by pair). `None` while it cannot be tested: fewer than [`MIN_PAIRS`]
    /// pairs, or a run without the figure or, on a relative metric, with one not above 0 — a
    /// run whose every request failed (0 req/s, no latency) is a result no log-scale test can
    /// hold, and leaving its pair out would let the runs that worked call the sides equivalent,
    /// so the metric stays undecided from then on (the comparison afterwards shows the run).
    pub fn look(&self, m: Metric, a: &[f64], b: &[f64], pairs: u32) -> Option<Look> {
        let level = self.level(pairs);
        let relative = m.relative();
        let scale = |x: f64| if relative { x.ln() } else { x };
        if level <= 0.0 || !a.iter().chain(b).all(|&v| usable(m, v)) || a.len() < MIN_PAIRS as usize
        {
            return None;
        }
        let (a, b): (Vec<f64>, Vec<f64>) =
            a.iter().zip(b).map(|(&x, &y)| (scale(x), scale(y))).unzip();
        let d = paired(&a, &b)?;
        let unit = |x: f64| if relative { 100.0 * x.exp_m1() } else { x };
        let (lo, hi) = d.interval(1.0 - level);
        let (lo2, hi2) = d.interval(1.0 - 2.0 * level);
        let t = self.threshold(m);
        let (lo, hi, lo2, hi2) = (unit(lo), unit(hi), unit(lo2), unit(hi2));
        let up = |better: bool| if better { Call::Better } else { Call::Worse };
        let mut call = if lo > t {
            up(m.higher_is_better())
        } else if hi < -t {
            up(!m.higher_is_better())
        } else if lo2 >= -t && hi2 <= t {
            Call::Equivalent
        } else {
            Call::Undecided
        };
        let called = matches!(call, Call::Better | Call::Worse);
        let above = lo > t;
        let withheld = (called && m.is_tail())
            .then(|| {
                tail_withheld(&a, &b, level, |l, h| {
                    beyond_threshold(unit(l), unit(h), t, above)
                })
            })
            .flatten();
        if withheld.is_some() {
            call = Call::Undecided;
        }
        // An equivalence is shown with the interval that showed it (1 − 2a).
        let interval = match call {
            Call::Equivalent => (lo2, hi2),
            _ => (lo, hi),
        };
        Some(Look {
            metric: m,
            pairs,
            change: unit(d.estimate),
            interval,
            at_level: (lo, hi),
            level,
            call,
            withheld,
        })
    }
}

/// Whether an interval `(lo, hi)` lies beyond the threshold `t` on the side of a call `above`
/// it (else below −t).
fn beyond_threshold(lo: f64, hi: f64, t: f64, above: bool) -> bool {
    if above { lo > t } else { hi < -t }
}

/// Why a tail metric's call on the paired values `a`, `b` (log scale for relative metrics) is
/// withheld, if it is: fewer than [`MIN_GUARDED_RUNS`] pairs, or some pair without which the
/// interval at 1 − `level` no longer `holds` (given on the log scale).
fn tail_withheld(
    a: &[f64],
    b: &[f64],
    level: f64,
    holds: impl Fn(f64, f64) -> bool,
) -> Option<TailGuard> {
    if a.len() < MIN_GUARDED_RUNS {
        return Some(TailGuard::TooFewRuns);
    }
    let every = (0..a.len()).all(|i| {
        paired(&without(a, i), &without(b, i)).is_some_and(|d| {
            let (lo, hi) = d.interval(1.0 - level);
            holds(lo, hi)
        })
    });
    (!every).then_some(TailGuard::OneRunCarriesIt)
}

/// Whether `v` is a value of metric `m` a look can test: finite, and above 0 for a relative
/// metric (tested on the log scale).
fn usable(m: Metric, v: f64) -> bool {
    v.is_finite() && (!m.relative() || v > 0.0)
}

/// A sequence so far: each side's per-run values of each metric, and each metric's latest
/// look (the deciding one, once decided).
#[derive(Debug, Clone, PartialEq)]
pub struct Sequence {
    /// The design it follows.
    pub design: Design,
    /// Per metric (in `design.metrics` order): the baseline's per-run values, then B's (NaN
    /// where a run had none).
    values: Vec<[Vec<f64>; 2]>,
    /// Per metric: the error rate's counts pooled over each side's runs, (attempts charged,
    /// failed of them); zeros for the other metrics.
    counts: Vec<[(u64, u64); 2]>,
    /// Per metric: the latest look.
    pub looks: Vec<Option<Look>>,
    /// Pairs done.
    pub pairs: u32,
    /// Why it stopped, once it has.
    pub stopped: Option<Stopped>,
}

impl Sequence {
    /// A sequence of `design` with no pair yet.
    pub fn new(design: Design) -> Self {
        let k = design.metrics.len();
        Self {
            design,
            values: vec![[Vec::new(), Vec::new()]; k],
            counts: vec![[(0, 0); 2]; k],
            looks: vec![None; k],
            pairs: 0,
            stopped: None,
        }
    }

    /// Adds a pair of runs (A's and B's) and looks at every metric not decided yet; returns
    /// whether every metric is now decided.
    pub fn add_pair(&mut self, a: &RunRecord, b: &RunRecord) -> bool {
        self.pairs += 1;
        for (i, figure) in self.design.metrics.iter().enumerate() {
            let m = figure.metric;
            // A percentile without enough responses above it is the run's slowest: no value.
            let value = |r: &RunRecord| {
                let v = figure.value(r).filter(|_| figure.enough_responses(r));
                v.unwrap_or(f64::NAN)
            };
            self.values[i][0].push(value(a));
            self.values[i][1].push(value(b));
            for (side, r) in [a, b].into_iter().enumerate() {
                let (charged, failed) = figure.error_counts(r).unwrap_or((0, 0));
                let pooled = &mut self.counts[i][side];
                *pooled = (pooled.0 + charged, pooled.1 + failed);
            }
            if self.decided_at(i) {
                continue;
            }
            let [va, vb] = &self.values[i];
            if let Some(look) = self.design.look(m, va, vb, self.pairs) {
                self.looks[i] = Some(by_counts(look, self.counts[i], self.design.threshold(m)));
            }
        }
        self.decided()
    }

    /// Whether metric `i` (in `design.metrics` order) can never be decided: it is not, and a
    /// run so far has no value a look can test (every request failed, a part it lacks, or a
    /// percentile with too few responses above it), which stays in its pairs.
    pub fn undecidable(&self, i: usize) -> bool {
        let m = self.design.metrics[i].metric;
        !self.decided_at(i) && !self.values[i].iter().flatten().all(|&v| usable(m, v))
    }

    /// Whether metric `i` is decided.
    fn decided_at(&self, i: usize) -> bool {
        self.looks[i].is_some_and(|l| l.call.decided())
    }

    /// Why the sequence should stop now without a budget spent: every metric decided, or every
    /// one left undecided undecidable; `None` while more pairs could decide something.
    pub fn settled(&self) -> Option<Stopped> {
        let k = self.design.metrics.len();
        if self.decided() {
            Some(Stopped::Decided)
        } else if (0..k).all(|i| self.decided_at(i) || self.undecidable(i)) {
            Some(Stopped::Undecidable)
        } else {
            None
        }
    }

    /// Whether every metric is decided.
    pub fn decided(&self) -> bool {
        (0..self.looks.len()).all(|i| self.decided_at(i))
    }
}

/// An error rate's call stands only if the pooled counts show it too (runs can agree exactly
/// from too few attempts to say anything of 0.1 pp): Newcombe's interval of the difference
/// ([`crate::analysis::proportion`]) within ±`t` for an equivalence (at 1 − 2a), beyond it on
/// the same side for a call (at 1 − a); else undecided, shown with both intervals' span at
/// 1 − a.
fn by_counts(mut look: Look, [a, b]: [(u64, u64); 2], t: f64) -> Look {
    if look.metric != Metric::ErrorRate || !look.call.decided() {
        return look;
    }
    let (equivalent, above) = (look.call == Call::Equivalent, look.interval.0 > t);
    let level = 1.0 - look.level * if equivalent { 2.0 } else { 1.0 };
    let shown = crate::analysis::proportion::difference_pp(a, b, level);
    let holds = shown.is_some_and(|(lo, hi)| match equivalent {
        true => lo >= -t && hi <= t,
        false => beyond_threshold(lo, hi, t, above),
    });
    if !holds {
        look.call = Call::Undecided;
        let wide = crate::analysis::proportion::difference_pp(a, b, 1.0 - look.level);
        let (lo, hi) = look.at_level;
        look.interval = wide.map_or((lo, hi), |(l, h)| (lo.min(l), hi.max(h)));
    }
    look
}

/// The paired test of `b − a`: the mean of the per-pair differences, its standard error
/// sd/√n and n − 1 degrees of freedom. `None` for fewer than two pairs.
fn paired(a: &[f64], b: &[f64]) -> Option<Difference> {
    let d: Vec<f64> = a.iter().zip(b).map(|(a, b)| b - a).collect();
    if d.len() < 2 {
        return None;
    }
    let n = d.len() as f64;
    Some(Difference {
        estimate: mean(&d)?,
        se: (variance(&d) / n).sqrt(),
        df: n - 1.0,
    })
}

#[cfg(test)]
mod tests;
