//! What an error rate's own counts can show. Runs whose error rates agree exactly — none at all,
//! in every run — give a t interval of zero width over the runs, which would call two sides
//! equivalent within 0.1 percentage points from 90 requests: 0 errors in 90 is what a true
//! rate of 1 % gives two times in five. The counts bound it: the difference of the two sides'
//! pooled rates has Newcombe's hybrid score interval (method 10 of Newcombe, Statistics in
//! Medicine 1998), built from each side's Wilson score interval, which stays honest at 0 and
//! at small counts where the normal approximation collapses.

use super::stats;

/// Degrees of freedom at which Student's t is the standard normal for our purposes.
const NORMAL_DF: f64 = 1e7;

/// The Wilson score interval of `failed` of `charged` at two-sided `level` (0.95), as
/// fractions; `None` without attempts.
pub fn wilson(failed: u64, charged: u64, level: f64) -> Option<(f64, f64)> {
    if charged == 0 {
        return None;
    }
    let z = stats::t_quantile(0.5 + level / 2.0, NORMAL_DF);
    let (n, p) = (charged as f64, failed as f64 / charged as f64);
    let z2n = z * z / n;
    let centre = (p + z2n / 2.0) / (1.0 + z2n);
    let half = z / (1.0 + z2n) * (p * (1.0 - p) / n + z2n / (4.0 * n)).sqrt();
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// Newcombe's interval of `b`'s rate minus `a`'s at two-sided `level`, percentage points;
/// each side is (attempts charged, failed of them), pooled over its runs. `None` when a side
/// has no attempts.
pub fn difference_pp(a: (u64, u64), b: (u64, u64), level: f64) -> Option<(f64, f64)> {
    let rate = |(charged, failed): (u64, u64)| failed as f64 / charged as f64;
    let (la, ua) = wilson(a.1, a.0, level)?;
    let (lb, ub) = wilson(b.1, b.0, level)?;
    let (pa, pb) = (rate(a), rate(b));
    let d = pb - pa;
    let lo = d - ((pb - lb).powi(2) + (ua - pa).powi(2)).sqrt();
    let hi = d + ((ub - pb).powi(2) + (pa - la).powi(2)).sqrt();
    Some((100.0 * lo, 100.0 * hi))
}

/// Attempts charged and failed, summed over `runs`' counts.
pub fn pooled(runs: impl Iterator<Item = (u64, u64)>) -> (u64, u64) {
    runs.fold((0, 0), |(c, f), (rc, rf)| (c + rc, f + rf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_the_published_values() {
        // Newcombe (1998), table I: 0 of 10 → 0–0.2775; 1 of 29 → 0.0061–0.1718.
        let (lo, hi) = wilson(0, 10, 0.95).unwrap();
        assert!(lo == 0.0 && (hi - 0.2775).abs() < 5e-4, "{lo} {hi}");
        let (lo, hi) = wilson(1, 29, 0.95).unwrap();
        assert!(
            (lo - 0.0061).abs() < 5e-4 && (hi - 0.1718).abs() < 5e-4,
            "{lo} {hi}"
        );
        assert!(wilson(0, 0, 0.95).is_none());
    }

    #[test]
    fn newcombes_difference_matches_the_published_values() {
        // Newcombe (1998), table II, 56/70 − 48/80 → 0.0524–0.3339 (method 10).
        let (lo, hi) = difference_pp((80, 48), (70, 56), 0.95).unwrap();
        assert!(
            (lo - 5.24).abs() < 0.01 && (hi - 33.39).abs() < 0.01,
            "{lo} {hi}"
        );
    }

    #[test]
    fn no_errors_in_few_attempts_shows_little_and_in_many_shows_much() {
        // 0 of 90 a side: a 0.1 pp equivalence is far out of reach.
        let (lo, hi) = difference_pp((90, 0), (90, 0), 0.90).unwrap();
        assert!(lo < -2.0 && hi > 2.0, "{lo} {hi}");
        // 0 of 100,000 a side: within ±0.01 pp.
        let (lo, hi) = difference_pp((100_000, 0), (100_000, 0), 0.90).unwrap();
        assert!(lo > -0.01 && hi < 0.01, "{lo} {hi}");
    }
}
