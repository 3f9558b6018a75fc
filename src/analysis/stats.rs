//! Small, dependency-free statistics for comparisons: medians, the Mann–Whitney U test, bootstrap
//! confidence intervals, and the effective sample size of an autocorrelated series.
//!
//! Everything here is deterministic: the bootstrap uses a fixed seed so a report regenerated from
//! the same records says the same thing.

/// Seed of the bootstrap's random generator (fixed: reports must be reproducible).
pub const BOOTSTRAP_SEED: u64 = 0x766f_6c6c_6579; // "volley"
/// Bootstrap resamples per interval.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;
/// Pooled sample sizes up to this use the exact distribution of U; larger ones the normal
/// approximation (which is accurate there).
const EXACT_MAX_N: usize = 60;

/// The median of `xs` (mean of the middle two for an even count); `None` when empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    quantile(xs, 0.5)
}

/// The `q` quantile (0–1) of `xs` with linear interpolation between order statistics; `None`
/// when empty.
pub fn quantile(xs: &[f64], q: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    Some(quantile_sorted(&v, q))
}

fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Arithmetic mean; `None` when empty.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Sample variance (n − 1 in the denominator); 0 for fewer than two values.
pub fn variance(xs: &[f64]) -> f64 {
    let Some(m) = mean(xs) else { return 0.0 };
    if xs.len() < 2 {
        return 0.0;
    }
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Two-sided p-value of the Mann–Whitney U test (Wilcoxon rank-sum) that `a` and `b` come from
/// the same distribution. Ties get mid-ranks. For pooled sizes up to 60 the p-value is exact: the
/// distribution of the rank sum over every way of splitting the pooled values, ties included
/// (a permutation test on ranks); beyond, the normal approximation with tie correction. `None`
/// when either side is empty.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return None;
    }
    // Doubled mid-ranks are integers: rank r (1-based) of a tie group spanning i..j is (i+j)/2.
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let total = pooled.len();
    let mut ranks2 = vec![0usize; total];
    let mut i = 0;
    while i < total {
        let mut j = i;
        while j + 1 < total && pooled[j + 1].0 == pooled[i].0 {
            j += 1;
        }
        for r in &mut ranks2[i..=j] {
            *r = i + j + 2; // (i+1 + j+1), i.e. twice the mid-rank
        }
        i = j + 1;
    }
    let observed2: usize = pooled
        .iter()
        .zip(&ranks2)
        .filter(|(p, _)| p.1)
        .map(|(_, r)| r)
        .sum();
    // E[2·R_a] = n (N + 1).
    let expected2 = (n * (total + 1)) as f64;
    let deviation = (observed2 as f64 - expected2).abs();
    if total <= EXACT_MAX_N {
        return Some(exact_p(&ranks2, n, expected2, deviation));
    }
    // Normal approximation of U with tie correction and continuity correction.
    let (nf, mf, tf) = (n as f64, m as f64, total as f64);
    let mut ties = 0.0;
    let mut i = 0;
    while i < total {
        let j = (i..total)
            .take_while(|&k| pooled[k].0 == pooled[i].0)
            .count();
        let t = j as f64;
        ties += t * t * t - t;
        i += j;
    }
    let sigma = (nf * mf / 12.0 * ((tf + 1.0) - ties / (tf * (tf - 1.0)))).sqrt();
    if sigma == 0.0 {
        return Some(1.0);
    }
    let z = ((deviation / 2.0) - 0.5).max(0.0) / sigma;
    Some((2.0 * (1.0 - normal_cdf(z))).min(1.0))
}

/// Exact two-sided p-value: the share of all C(N, n) choices of n doubled ranks whose sum deviates
/// from its mean by at least the observed deviation. Counted by dynamic programming over
/// (items chosen, sum), in f64 (C(60, 30) ≈ 1.2e17 is represented closely enough).
fn exact_p(ranks2: &[usize], n: usize, expected2: f64, deviation: f64) -> f64 {
    let max_sum: usize = ranks2.iter().sum();
    // ways[k][s]: number of ways to choose k of the items seen so far with doubled-rank sum s.
    let mut ways = vec![vec![0f64; max_sum + 1]; n + 1];
    ways[0][0] = 1.0;
    for &r in ranks2 {
        for k in (1..=n).rev() {
            let (lower, upper) = ways.split_at_mut(k);
            let prev = &lower[k - 1];
            let cur = &mut upper[0];
            for s in (r..=max_sum).rev() {
                if prev[s - r] != 0.0 {
                    cur[s] += prev[s - r];
                }
            }
        }
    }
    let all: f64 = ways[n].iter().sum();
    let extreme: f64 = ways[n]
        .iter()
        .enumerate()
        .filter(|(s, _)| (*s as f64 - expected2).abs() >= deviation - 1e-9)
        .map(|(_, w)| w)
        .sum();
    (extreme / all).min(1.0)
}

/// The smallest two-sided p-value an exact rank test can give with `n` and `m` values: two of
/// the C(n + m, n) splits are the most extreme. With 3 and 3 runs it is 0.1, so no difference
/// could ever be significant at 0.05.
pub fn min_p_value(n: usize, m: usize) -> f64 {
    let (small, total) = (n.min(m), n + m);
    let mut c = 1.0f64;
    for i in 0..small {
        c = c * (total - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

/// Percentile-bootstrap confidence interval (`level`, e.g. 0.95) of `stat(b) − stat(a)`,
/// resampling each side with replacement. `None` when either side is empty.
pub fn bootstrap_diff_ci(
    a: &[f64],
    b: &[f64],
    stat: fn(&[f64]) -> Option<f64>,
    level: f64,
) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(BOOTSTRAP_SEED);
    let mut diffs = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let mut ra = vec![0.0; a.len()];
    let mut rb = vec![0.0; b.len()];
    for _ in 0..BOOTSTRAP_RESAMPLES {
        resample(&mut rng, a, &mut ra);
        resample(&mut rng, b, &mut rb);
        diffs.push(stat(&rb)? - stat(&ra)?);
    }
    diffs.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some((
        quantile_sorted(&diffs, tail),
        quantile_sorted(&diffs, 1.0 - tail),
    ))
}

/// Percentile-bootstrap confidence interval (`level`) of `stat(xs)`. `None` when empty.
pub fn bootstrap_ci(xs: &[f64], stat: fn(&[f64]) -> Option<f64>, level: f64) -> Option<(f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(BOOTSTRAP_SEED);
    let mut r = vec![0.0; xs.len()];
    let mut stats = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        resample(&mut rng, xs, &mut r);
        stats.push(stat(&r)?);
    }
    stats.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some((
        quantile_sorted(&stats, tail),
        quantile_sorted(&stats, 1.0 - tail),
    ))
}

fn resample(rng: &mut fastrand::Rng, from: &[f64], into: &mut [f64]) {
    for slot in into.iter_mut() {
        *slot = from[rng.usize(..from.len())];
    }
}

/// Lag-1 autocorrelation of a series (0 for fewer than three values or no variance).
pub fn lag1_autocorrelation(xs: &[f64]) -> f64 {
    let Some(m) = mean(xs) else { return 0.0 };
    if xs.len() < 3 {
        return 0.0;
    }
    let denom: f64 = xs.iter().map(|x| (x - m).powi(2)).sum();
    if denom == 0.0 {
        return 0.0;
    }
    let num: f64 = xs.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum();
    num / denom
}

/// Effective number of independent samples in an autocorrelated series, by the AR(1)
/// approximation n·(1 − ρ)/(1 + ρ) with ρ the lag-1 autocorrelation (negative ρ is taken as 0, so
/// this never claims more samples than there are). At least 1 for a non-empty series.
pub fn effective_n(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let rho = lag1_autocorrelation(xs).clamp(0.0, 0.95);
    (xs.len() as f64 * (1.0 - rho) / (1.0 + rho)).max(1.0)
}

/// Standard normal cumulative distribution function.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * (1.0 + erf(z / std::f64::consts::SQRT_2))
}

/// The error function (Abramowitz & Stegun 7.1.26, absolute error < 1.5e-7).
fn erf(x: f64) -> f64 {
    let sign = if x < 0.0 { -1.0 } else { 1.0 };
    let x = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    sign * (1.0 - poly * (-x * x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_quantiles() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.25), Some(2.0));
        assert_eq!(variance(&[1.0]), 0.0);
        assert!((variance(&[1.0, 2.0, 3.0, 4.0]) - 5.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn mann_whitney_exact_matches_tables() {
        // Complete separation of 5 and 5: 2 of 252 splits are as extreme.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        let p = mann_whitney_p(&a, &b).unwrap();
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        assert!((min_p_value(5, 5) - 2.0 / 252.0).abs() < 1e-12);
        // 3 and 3 can never reach 0.05.
        assert!((mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap() - 0.1).abs() < 1e-12);
        // Identical samples: nothing to see.
        assert_eq!(mann_whitney_p(&[1.0; 4], &[1.0; 4]), Some(1.0));
        // Interleaved: large p. U = 12 for a = 1,3,5,7,9 vs b = 2,4,6,8,10 (scipy: p = 0.69).
        let p = mann_whitney_p(&[1.0, 3.0, 5.0, 7.0, 9.0], &[2.0, 4.0, 6.0, 8.0, 10.0]).unwrap();
        assert!((p - 0.690_476).abs() < 1e-5, "{p}");
        assert_eq!(mann_whitney_p(&[], &[1.0]), None);
    }

    #[test]
    fn mann_whitney_with_ties_is_exact() {
        // scipy.stats.mannwhitneyu([1,2,2,3],[2,3,3,4], method="exact") does not handle ties;
        // the permutation distribution over mid-ranks does: enumerate by hand.
        let a = [1.0, 2.0, 2.0, 3.0];
        let b = [2.0, 3.0, 3.0, 4.0];
        let p = mann_whitney_p(&a, &b).unwrap();
        let brute = brute_force_p(&a, &b);
        assert!((p - brute).abs() < 1e-12, "{p} vs {brute}");
    }

    fn brute_force_p(a: &[f64], b: &[f64]) -> f64 {
        let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
        let rank = |x: f64| {
            let below = pooled.iter().filter(|&&y| y < x).count() as f64;
            let equal = pooled.iter().filter(|&&y| y == x).count() as f64;
            below + (equal + 1.0) / 2.0
        };
        let ranks: Vec<f64> = pooled.iter().map(|&x| rank(x)).collect();
        let n = a.len();
        let expected = n as f64 * (pooled.len() + 1) as f64 / 2.0;
        let observed: f64 = ranks[..n].iter().sum();
        let (mut extreme, mut all) = (0u32, 0u32);
        for mask in 0u32..(1 << pooled.len()) {
            if mask.count_ones() as usize != n {
                continue;
            }
            let s: f64 = (0..pooled.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| ranks[i])
                .sum();
            all += 1;
            if (s - expected).abs() >= (observed - expected).abs() - 1e-9 {
                extreme += 1;
            }
        }
        f64::from(extreme) / f64::from(all)
    }

    #[test]
    fn mann_whitney_normal_approximation_for_large_samples() {
        let a: Vec<f64> = (0..40).map(f64::from).collect();
        let b: Vec<f64> = (0..40).map(|i| f64::from(i) + 0.5).collect();
        let p = mann_whitney_p(&a, &b).unwrap();
        assert!(p > 0.5, "{p}");
        let c: Vec<f64> = (100..140).map(f64::from).collect();
        assert!(mann_whitney_p(&a, &c).unwrap() < 1e-10);
    }

    #[test]
    fn bootstrap_intervals_are_reproducible_and_sensible() {
        let a = [10.0, 10.2, 9.9, 10.1, 10.0];
        let b = [12.0, 12.1, 11.9, 12.2, 12.0];
        let ci = bootstrap_diff_ci(&a, &b, median, 0.95).unwrap();
        assert!(ci.0 > 1.5 && ci.1 < 2.5, "{ci:?}");
        assert_eq!(ci, bootstrap_diff_ci(&a, &b, median, 0.95).unwrap());
        let ci = bootstrap_ci(&a, median, 0.95).unwrap();
        assert!(ci.0 >= 9.9 && ci.1 <= 10.2, "{ci:?}");
        assert_eq!(bootstrap_ci(&[], median, 0.95), None);
    }

    #[test]
    fn autocorrelation_shrinks_the_sample() {
        let white = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0];
        assert_eq!(effective_n(&white), 8.0);
        let trend: Vec<f64> = (0..20).map(f64::from).collect();
        assert!(effective_n(&trend) < 3.0, "{}", effective_n(&trend));
        assert_eq!(effective_n(&[]), 0.0);
    }

    #[test]
    fn normal_cdf_values() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(-1.959_964) - 0.025).abs() < 1e-6);
    }
}
