//! The tail metrics' guard: a call on p99 or p99.9 must survive leaving out any one run.
//!
//! A run's p99 rests on its slowest 1 % of requests, its p99.9 on its slowest 0.1 %: one run
//! whose tail jumped (a GC pause, a noisy neighbour for a second) moves its figure far more than
//! the others', and at 4 or 5 runs a side that one value can carry a t test past Holm's line.
//! So a faster/slower call on these metrics stands only if the same test, on every subset that
//! leaves one run out of either side, still gives a p below α once scaled by the metric's Holm
//! factor, with the whole interval beyond the threshold on the same side. (A rank test cannot
//! replace the t test at these sizes: see the module documentation of `compare`.)

use super::change::{bounds, to_scale};
use super::{ALPHA, LEVEL, MIN_GUARDED_RUNS, MIN_REPEATS, Metric, TailGuard};
use crate::analysis::stats::{self, without};

/// Why a call `above` the threshold (the change's interval beyond +T; else below −T) on the
/// per-run values `a` (baseline) and `b` is withheld, if it is: a side with too few runs to
/// leave one out, or some run without which the same test — its p-value scaled by `holm` (the
/// metric's adjusted p over its raw p, ≥ 1), its interval against the threshold `limit` (% or
/// pp) — no longer makes the call.
pub(super) fn withheld(
    metric: Metric,
    a: &[f64],
    b: &[f64],
    limit: f64,
    holm: f64,
    above: bool,
) -> Option<TailGuard> {
    if a.len().min(b.len()) < MIN_GUARDED_RUNS {
        return Some(TailGuard::TooFewRuns);
    }
    let xs: Vec<f64> = a.iter().map(|&x| to_scale(metric, x)).collect();
    let ys: Vec<f64> = b.iter().map(|&x| to_scale(metric, x)).collect();
    let (down, up) = bounds(metric, limit);
    let holds = |xs: &[f64], ys: &[f64]| {
        if xs.len() < MIN_REPEATS || ys.len() < MIN_REPEATS {
            return false;
        }
        let Some(d) = stats::student(xs, ys) else {
            return false;
        };
        let (lo, hi) = d.interval(LEVEL);
        let beyond = if above { lo > up } else { hi < down };
        beyond && d.p_value() * holm < ALPHA
    };
    let every = (0..xs.len()).all(|i| holds(&without(&xs, i), &ys))
        && (0..ys.len()).all(|i| holds(&xs, &without(&ys, i)));
    (!every).then_some(TailGuard::OneRunCarriesIt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_outlying_run_cannot_carry_a_call_but_a_shift_of_all_runs_does() {
        let a = [10.0, 10.2, 9.9, 10.1, 10.0];
        // Every run of B 20 % slower: the call holds whichever run is left out.
        let shifted = [12.0, 12.1, 11.9, 12.2, 12.0];
        assert_eq!(withheld(Metric::P99, &a, &shifted, 2.0, 9.0, true), None);
        // B like A but for two runs whose tail jumped: leaving one out leaves one jump, and
        // the other subsets of B are no longer beyond the threshold.
        let jumped = [10.1, 9.9, 10.0, 14.0, 14.5];
        assert_eq!(
            withheld(Metric::P99, &a, &jumped, 2.0, 1.0, true),
            Some(TailGuard::OneRunCarriesIt)
        );
        assert!(Metric::P99_9.is_tail() && !Metric::P50.is_tail());
    }

    #[test]
    fn a_withheld_call_says_why() {
        let (a, shifted) = ([10.0, 10.2, 9.9, 10.1], [12.0, 12.1, 11.9, 12.2]);
        let why = |a: &[f64], b: &[f64]| withheld(Metric::P99, a, b, 2.0, 9.0, true);
        assert_eq!(why(&a, &shifted), None);
        // Three runs a side: leaving one out leaves two, too few to rule out one run's tail.
        assert_eq!(why(&a[..3], &shifted[..3]), Some(TailGuard::TooFewRuns));
        assert_eq!(why(&a, &shifted[..3]), Some(TailGuard::TooFewRuns));
        assert_eq!(
            why(&a, &[10.1, 9.9, 14.0, 14.5]),
            Some(TailGuard::OneRunCarriesIt)
        );
    }
}
