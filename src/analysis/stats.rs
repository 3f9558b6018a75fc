//! Small, dependency-free statistics for comparisons: Student's t distribution, Student's and
//! Welch's tests of a difference of means, Holm's correction for several tests, a trend within groups, the runs a
//! test would need, and the effective sample size of an autocorrelated series.
//!
//! Everything here is deterministic: a report regenerated from the same records says the same
//! thing. Why these tools and not a rank test or a bootstrap: see [`super::compare`].

/// `xs` without its `i`-th value: a leave-one-out subset.
pub fn without(xs: &[f64], i: usize) -> Vec<f64> {
    let mut rest = xs.to_vec();
    rest.remove(i);
    rest
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

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, 9 terms; relative error below 1e-13).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = G[1..]
        .iter()
        .enumerate()
        .fold(G[0], |s, (i, g)| s + g / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The regularized incomplete beta function I_x(a, b), by its continued fraction (modified
/// Lentz), on the side of x where it converges fast.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    for m in 1..=500 {
        let m = f64::from(m);
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom (df > 0, fractional allowed, as
/// Welch's test gives): the two-sided p-value of a t statistic.
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return 1.0;
    }
    if t.is_infinite() {
        return 0.0;
    }
    incomplete_beta(df / (df + t * t), df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The `q` quantile (0.5 ≤ q < 1) of Student's t with `df` degrees of freedom, e.g. 2.776 for
/// q = 0.975 and df = 4: Newton's method on [`t_two_sided_p`] from a Cornish–Fisher start, with
/// bisection as the fallback.
pub fn t_quantile(q: f64, df: f64) -> f64 {
    let tail = 1.0 - q.clamp(0.5, 1.0 - 1e-15);
    if tail >= 0.5 {
        return 0.0;
    }
    let upper = |t: f64| t_two_sided_p(t, df) / 2.0;
    let z = normal_upper_quantile(tail);
    let mut t = z
        + (z.powi(3) + z) / (4.0 * df)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * df * df);
    for _ in 0..50 {
        let step = (upper(t) - tail) / t_density(t, df);
        let next = t + step;
        if !next.is_finite() || next <= 0.0 {
            break;
        }
        t = next;
        if step.abs() <= 1e-12 * t.max(1.0) {
            return t;
        }
    }
    t_quantile_bisect(tail, df)
}

fn t_quantile_bisect(tail: f64, df: f64) -> f64 {
    let target = 2.0 * tail;
    let mut hi = 1.0;
    while t_two_sided_p(hi, df) > target && hi < 1e12 {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if t_two_sided_p(mid, df) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Density of Student's t with `df` degrees of freedom at `t`.
fn t_density(t: f64, df: f64) -> f64 {
    let ln = ln_gamma((df + 1.0) / 2.0)
        - ln_gamma(df / 2.0)
        - 0.5 * (df * std::f64::consts::PI).ln()
        - (df + 1.0) / 2.0 * (t * t / df).ln_1p();
    ln.exp()
}

/// The z with P(Z > z) = `tail` (0 < tail ≤ 0.5) for a standard normal Z (Abramowitz & Stegun
/// 26.2.23, absolute error below 4.5e-4: a starting point only).
fn normal_upper_quantile(tail: f64) -> f64 {
    let t = (-2.0 * tail.ln()).sqrt();
    t - (2.515_517 + 0.802_853 * t + 0.010_328 * t * t)
        / (1.0 + 1.432_788 * t + 0.189_269 * t * t + 0.001_308 * t * t * t)
}

/// An estimated difference `b − a` with its standard error and the degrees of freedom of its t
/// distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    /// The estimate, in the unit of the data.
    pub estimate: f64,
    /// Its standard error, same unit.
    pub se: f64,
    /// Degrees of freedom (Welch–Satterthwaite; fractional).
    pub df: f64,
}

impl Difference {
    /// Two-sided p-value of "no difference". With a zero standard error: 1 when the estimate is
    /// 0, else 0.
    pub fn p_value(&self) -> f64 {
        if self.se > 0.0 {
            t_two_sided_p(self.estimate / self.se, self.df)
        } else if self.estimate == 0.0 {
            1.0
        } else {
            0.0
        }
    }

    /// The two-sided interval at `level` (e.g. 0.95): estimate ± t·se.
    pub fn interval(&self, level: f64) -> (f64, f64) {
        let half = self.half_width(level);
        (self.estimate - half, self.estimate + half)
    }

    /// Half the width of the interval at `level`.
    pub fn half_width(&self, level: f64) -> f64 {
        if self.se > 0.0 {
            t_quantile(0.5 + level / 2.0, self.df) * self.se
        } else {
            0.0
        }
    }
}

/// Welch's test of `mean(b) − mean(a)` from each side's squared standard error of the mean and
/// its degrees of freedom (Welch–Satterthwaite). Degrees of freedom below 1 count as 1.
pub fn welch_from(diff: f64, se2_a: f64, df_a: f64, se2_b: f64, df_b: f64) -> Difference {
    let (df_a, df_b) = (df_a.max(1.0), df_b.max(1.0));
    let se2 = se2_a + se2_b;
    let df = if se2 > 0.0 {
        se2 * se2 / (se2_a * se2_a / df_a + se2_b * se2_b / df_b)
    } else {
        df_a + df_b
    };
    Difference {
        estimate: diff,
        se: se2.sqrt(),
        df: df.max(1.0),
    }
}

/// Student's two-sample test of `mean(b) − mean(a)` with the variance pooled over both sides
/// (n + m − 2 degrees of freedom): exact for normal samples of one distribution, the null
/// hypothesis of "the same configuration twice". `None` unless each side has two values or more.
pub fn student(a: &[f64], b: &[f64]) -> Option<Difference> {
    let (n, m) = (a.len(), b.len());
    if n < 2 || m < 2 {
        return None;
    }
    Some(Difference {
        estimate: mean(b)? - mean(a)?,
        se: pooled_sd(a, b) * (1.0 / n as f64 + 1.0 / m as f64).sqrt(),
        df: (n + m - 2) as f64,
    })
}

/// Standard deviation pooled over two samples (each weighted by its n − 1).
pub fn pooled_sd(a: &[f64], b: &[f64]) -> f64 {
    let df = (a.len() + b.len()).saturating_sub(2);
    if df == 0 {
        return 0.0;
    }
    let ss = variance(a) * a.len().saturating_sub(1) as f64
        + variance(b) * b.len().saturating_sub(1) as f64;
    (ss / df as f64).sqrt()
}

/// Holm's step-down adjustment of `ps` (in their order): the adjusted p-values, each compared
/// with α controls the chance of any false call among all of them at α.
pub fn holm(ps: &[f64]) -> Vec<f64> {
    let k = ps.len();
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&i, &j| ps[i].total_cmp(&ps[j]));
    let mut adjusted = vec![0.0; k];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((k - rank) as f64 * ps[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// The slope of y on x fitted within groups (each group centred on its own means, one common
/// slope), with the two-sided p-value that it is 0. `None` when there are no residual degrees
/// of freedom (fewer than groups + 2 points) or x does not vary within groups.
pub fn within_group_slope(groups: &[Vec<(f64, f64)>]) -> Option<(f64, f64)> {
    let (mut sxx, mut sxy, mut points) = (0.0, 0.0, 0usize);
    let mut centred = Vec::new();
    for g in groups.iter().filter(|g| !g.is_empty()) {
        let mx = g.iter().map(|p| p.0).sum::<f64>() / g.len() as f64;
        let my = g.iter().map(|p| p.1).sum::<f64>() / g.len() as f64;
        for &(x, y) in g {
            sxx += (x - mx).powi(2);
            sxy += (x - mx) * (y - my);
            centred.push((x - mx, y - my));
        }
        points += g.len();
    }
    let used = groups.iter().filter(|g| !g.is_empty()).count();
    let df = points.checked_sub(used + 1).filter(|&d| d > 0)? as f64;
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let residual: f64 = centred.iter().map(|(x, y)| (y - slope * x).powi(2)).sum();
    let se = (residual / df / sxx).sqrt();
    let p = if se > 0.0 {
        t_two_sided_p(slope / se, df)
    } else if slope == 0.0 {
        1.0
    } else {
        0.0
    };
    Some((slope, p))
}

/// The fewest runs per variant, from `from` up to `max`, at which a difference measured with
/// standard deviation `sd` per run (each side) would give an interval whose half-width, widened
/// for `power` (the chance of getting there, e.g. 0.8), stays within `margin`: (t_q + t_power) ·
/// sd · √(2/n) ≤ margin, with t on 2n − 2 degrees of freedom and t_q the two-sided `level`
/// quantile. `None` when even `max` runs would not do.
pub fn runs_needed(
    sd: f64,
    margin: f64,
    level: f64,
    power: f64,
    from: usize,
    max: usize,
) -> Option<usize> {
    let enough = |n: usize| {
        let df = (2 * n - 2) as f64;
        let z = t_quantile(0.5 + level / 2.0, df) + t_quantile(power, df);
        z * sd * (2.0 / n as f64).sqrt() <= margin
    };
    let from = from.max(2);
    if margin <= 0.0 || !enough(max) {
        return None;
    }
    // `enough` only turns true as n grows: bisect for the first n where it holds.
    let (mut lo, mut hi) = (from, max);
    if enough(lo) {
        return Some(lo);
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if enough(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Lag-1 autocorrelation of a series (0 for fewer than three values or no variance).
pub fn lag1_autocorrelation(xs: &[f64]) -> f64 {
    if xs.len() < 3 {
        return 0.0;
    }
    autocorrelation(xs, 1)
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

/// Autocorrelation of a series at lag `k` (the sample autocovariance at `k` over that at 0,
/// both over n; 0 when `k` is out of range or the series has no variance).
pub fn autocorrelation(xs: &[f64], k: usize) -> f64 {
    let Some(m) = mean(xs) else { return 0.0 };
    if k >= xs.len() {
        return 0.0;
    }
    let denom: f64 = xs.iter().map(|x| (x - m).powi(2)).sum();
    if denom == 0.0 {
        return 0.0;
    }
    let num: f64 = xs
        .iter()
        .zip(&xs[k..])
        .map(|(a, b)| (a - m) * (b - m))
        .sum();
    num / denom
}

/// Integrated autocorrelation time τ = 1 + 2·Σₖ ρₖ of a series, in samples, by Geyer's
/// initial positive sequence (Statistical Science 7(4), 1992): the pair sums
/// Γₘ = ρ₂ₘ + ρ₂ₘ₊₁ (ρ₀ = 1) are added while they stay positive, τ = 2·ΣΓₘ − 1. Taken as at
/// least 1, so a series never counts as more samples than it has. The variance of its mean is
/// var · τ / n.
pub fn autocorrelation_time(xs: &[f64]) -> f64 {
    let mut sum = 0.0;
    let mut m = 0;
    while 2 * m + 1 < xs.len() {
        let pair = autocorrelation(xs, 2 * m) + autocorrelation(xs, 2 * m + 1);
        if pair <= 0.0 {
            break;
        }
        sum += pair;
        m += 1;
    }
    (2.0 * sum - 1.0).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn means_and_variances() {
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(variance(&[1.0]), 0.0);
        assert!(close(variance(&[1.0, 2.0, 3.0, 4.0]), 5.0 / 3.0, 1e-12));
        assert!(close(
            pooled_sd(&[1.0, 3.0], &[2.0, 4.0, 6.0]),
            (10.0f64 / 3.0).sqrt(),
            1e-12
        ));
    }

    #[test]
    fn student_t_matches_tables() {
        // Two-sided 95 % critical values (any statistics table).
        for (df, t) in [
            (1.0, 12.706_205),
            (2.0, 4.302_653),
            (4.0, 2.776_445),
            (6.0, 2.446_912),
            (10.0, 2.228_139),
            (30.0, 2.042_272),
            (1e6, 1.959_966),
        ] {
            let q = t_quantile(0.975, df);
            assert!(close(q, t, 1e-5), "df {df}: {q} vs {t}");
            assert!(close(t_two_sided_p(t, df), 0.05, 1e-6), "df {df}");
        }
        assert!(close(t_quantile(0.995, 6.0), 3.707_428, 1e-5));
        assert!(close(t_quantile(0.9995, 2.0), 31.599_055, 1e-4));
        // The quantile inverts the tail probability, from 1 to 400 degrees of freedom.
        for df in [1.0, 1.7, 3.0, 8.0, 40.0, 398.0] {
            for q in [0.6, 0.8, 0.975, 0.999, 0.999_72] {
                let t = t_quantile(q, df);
                let p = t_two_sided_p(t, df);
                assert!(
                    close(p, 2.0 * (1.0 - q), 1e-9 * (1.0 - q).max(1e-3)),
                    "df {df} q {q}"
                );
            }
        }
        assert_eq!(t_quantile(0.5, 3.0), 0.0);
        assert!(close(t_quantile(0.8, 8.0), 0.888_889, 1e-5));
        // Fractional degrees of freedom lie between their neighbours.
        let q = t_quantile(0.975, 4.5);
        assert!(q < 2.776_445 && q > 2.570_582, "{q}");
        assert_eq!(t_two_sided_p(0.0, 5.0), 1.0);
        assert_eq!(t_two_sided_p(f64::INFINITY, 5.0), 0.0);
        // t = 2 on 10 df: p = 0.073388 (R: 2 * pt(-2, 10)).
        assert!(close(t_two_sided_p(2.0, 10.0), 0.073_388, 1e-6));
        assert!(close(t_two_sided_p(-2.0, 10.0), 0.073_388, 1e-6));
    }

    #[test]
    fn student_and_welch_match_worked_examples() {
        // Means 3 and 6, variances 2.5 and 10, n = 5 each. Student: pooled variance 6.25,
        // se = 2.5·√(2/5) = 1.581, t = 1.897 on 8 df, p = 0.0943 (R: t.test(b, a,
        // var.equal = TRUE)).
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [2.0, 4.0, 6.0, 8.0, 10.0];
        let d = student(&a, &b).unwrap();
        assert!(close(d.estimate, 3.0, 1e-12));
        assert!(close(d.se, 2.5f64.sqrt(), 1e-12));
        assert_eq!(d.df, 8.0);
        assert!(close(d.p_value(), 0.094_3, 5e-4), "{}", d.p_value());
        let (lo, hi) = d.interval(0.95);
        let half = 2.306_004 * d.se;
        assert!(close(lo, 3.0 - half, 1e-5) && close(hi, 3.0 + half, 1e-5));
        assert!(lo < 0.0, "p > 0.05, so the interval holds 0: {lo}");
        assert_eq!(student(&[1.0], &b), None);
        // Welch from the same parts: df = 2.5² / (0.5²/4 + 2²/4) = 5.882; t = 1.897,
        // p ≈ 0.108 (between 0.1067 on 6 df and 0.1164 on 5 df).
        let w = welch_from(3.0, 2.5 / 5.0, 4.0, 10.0 / 5.0, 4.0);
        assert!(close(w.se, d.se, 1e-12));
        assert!(close(w.df, 5.882_353, 1e-5), "{}", w.df);
        assert!((0.104..0.112).contains(&w.p_value()), "{}", w.p_value());
        // No spread: a point interval; p is 1 for no difference and 0 for any.
        let flat = student(&[2.0, 2.0], &[2.0, 2.0]).unwrap();
        assert_eq!((flat.p_value(), flat.interval(0.95)), (1.0, (0.0, 0.0)));
        assert_eq!(student(&[2.0, 2.0], &[3.0, 3.0]).unwrap().p_value(), 0.0);
    }

    #[test]
    fn holm_adjusts_step_down_and_stays_monotone() {
        let adjusted = holm(&[0.01, 0.04, 0.03, 0.005]);
        // Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, max(0.04·1, 0.06) = 0.06.
        let expected = [0.03, 0.06, 0.06, 0.02];
        for (a, e) in adjusted.iter().zip(expected) {
            assert!(close(*a, e, 1e-12), "{adjusted:?}");
        }
        assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0]);
        assert_eq!(holm(&[0.2, 0.01]), vec![0.2, 0.02]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn a_trend_within_groups_is_found_and_noise_is_not() {
        // Two groups with different levels and the same rising trend.
        let up = |level: f64, t0: f64| -> Vec<(f64, f64)> {
            (0..4)
                .map(|i| {
                    let t = t0 + f64::from(i);
                    (t, level + 0.5 * t + [0.05, -0.05, 0.02, -0.02][i as usize])
                })
                .collect()
        };
        let (slope, p) = within_group_slope(&[up(10.0, 0.0), up(20.0, 10.0)]).unwrap();
        assert!(close(slope, 0.5, 0.05) && p < 0.001, "{slope} {p}");
        let flat: Vec<(f64, f64)> = [1.0, 3.0, 2.0, 2.5]
            .iter()
            .enumerate()
            .map(|(i, y)| (i as f64, *y))
            .collect();
        let (_, p) = within_group_slope(&[flat.clone(), flat.clone()]).unwrap();
        assert!(p > 0.2, "{p}");
        assert_eq!(within_group_slope(&[flat[..2].to_vec()]), None);
    }

    #[test]
    fn runs_needed_grow_with_noise_and_shrink_with_the_margin() {
        let n = runs_needed(0.05, 0.05, 0.95, 0.8, 4, 1000).unwrap();
        // Normal approximation: 2·(1.96 + 0.84)²·(0.05/0.05)² ≈ 16, a little more with t.
        assert!((16..=20).contains(&n), "{n}");
        assert!(runs_needed(0.10, 0.05, 0.95, 0.8, 4, 1000).unwrap() > 3 * n);
        assert_eq!(runs_needed(0.001, 0.05, 0.95, 0.8, 4, 1000), Some(4));
        assert_eq!(runs_needed(0.5, 0.001, 0.95, 0.8, 4, 100), None);
        assert_eq!(runs_needed(0.5, 0.0, 0.95, 0.8, 4, 100), None);
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
    fn autocorrelation_time_of_white_noise_and_of_an_ar1_series() {
        let mut rng = fastrand::Rng::with_seed(3);
        let mut normal = || (0..12).map(|_| rng.f64()).sum::<f64>() - 6.0;
        let white: Vec<f64> = (0..4000).map(|_| normal()).collect();
        let tau = autocorrelation_time(&white);
        assert!((1.0..1.2).contains(&tau), "white noise: {tau}");
        // AR(1) with ρ = 0.6: τ = (1 + ρ)/(1 − ρ) = 4.
        let mut x = 0.0;
        let ar: Vec<f64> = (0..20_000)
            .map(|_| {
                x = 0.6 * x + normal();
                x
            })
            .collect();
        let tau = autocorrelation_time(&ar);
        assert!((3.5..4.5).contains(&tau), "AR(1) 0.6: {tau}");
        // Anticorrelated or constant: never fewer than 1.
        assert_eq!(
            autocorrelation_time(&[1.0, -1.0, 1.0, -1.0, 1.0, -1.0]),
            1.0
        );
        assert_eq!(autocorrelation_time(&[2.0; 8]), 1.0);
        assert_eq!(autocorrelation(&[1.0, 2.0], 5), 0.0);
    }
}
