//! The 95 % confidence intervals of a run's figures, by batch means (docs/measurement.md,
//! "Uncertainty").
//!
//! Latencies and rates of neighbouring seconds are correlated, so the seconds are not
//! independent samples. Batch means (sectioning, for the percentiles) treat each batch of whole
//! seconds as one estimate of the figure; the spread of the batch estimates, over the effective
//! number of batches (n over their integrated autocorrelation time), bounds the whole run's
//! figure: `value ± t(0.975, n_eff − 1) · sd(batch figures) / √n_eff`.

use hdrhistogram::Histogram;

use crate::record::batches::Batches;
use crate::record::group_series::GroupSeries;
use crate::record::model::{Autocorrelation, Bound, BoundFigure, Ci95, PrecisionGoal, RunRecord};
use crate::record::recorder::new_histogram;
use crate::record::series::{SecondStats, us_to_ms};

use super::stats;

/// The fewest batches an interval is computed from.
pub const MIN_BATCHES: usize = 5;

/// The fewest responses above a percentile in every batch for that percentile's interval
/// (a batch of 1,000 responses bounds p99, not p99.9).
pub const MIN_ABOVE: f64 = 10.0;

/// Whether `n` responses hold at least `need` above quantile `q` (`n × (1 − q)`, float rounding
/// forgiven: 100 responses hold 10 above p90, where 100 × (1 − 0.9) computes to 9.999…).
pub fn enough_above(n: f64, q: f64, need: f64) -> bool {
    n * (1.0 - q) >= need - 1e-9
}

/// What the intervals are computed from: a run's seconds and its latency in batches.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The measured window, s (the seconds inside it are whole batches; what follows, the
    /// drain's responses, goes to the last batch).
    pub window_s: f64,
    /// The per-second series (throughput batches).
    pub series: &'a [SecondStats],
    /// Each latency batch's length, s.
    pub batch_s: u64,
    /// The latency histogram in batches (µs), from batch 0.
    pub batches: &'a [Histogram<u64>],
    /// The run's throughput, req/s (the centre of its interval).
    pub rps: f64,
    /// The run's whole latency histogram, µs (the centre of the latency intervals).
    pub latency: &'a Histogram<u64>,
}

/// How this build takes the batches' autocorrelation out.
pub const AUTOCORRELATION: Autocorrelation = Autocorrelation::InitialPositiveSequence;

/// The intervals of every figure the run has enough batches for, each centred on the run's
/// own figure.
pub fn ci95(input: &Input<'_>) -> Ci95 {
    ci95_by(input, AUTOCORRELATION)
}

/// [`ci95`] with the autocorrelation taken out by `method` (a record's own, to verify it).
pub fn ci95_by(input: &Input<'_>, method: Autocorrelation) -> Ci95 {
    let mut ci = Ci95 {
        autocorrelation: method,
        rps: rps_bound(input, method),
        ..Ci95::default()
    };
    if input.latency.is_empty() {
        return ci;
    }
    // The figures after the rate ask ever fewer responses above them per batch (mean, p50 …
    // p99.9), so each coarsens the batches further from where the one before left them.
    let mut batches = Some((latency_batches(input), input.batch_s));
    for figure in BoundFigure::ALL.into_iter().skip(1) {
        batches = batches.and_then(|(hs, b)| coarsened(hs, b, figure));
        let value = figure_of(figure, input.latency);
        let bound = batches.as_ref().and_then(|(hs, b)| {
            let values: Vec<f64> = hs.iter().map(|h| figure_of(figure, h)).collect();
            bound(value, &values, *b, method)
        });
        ci.set(
            figure,
            bound.map(|b| at_resolution(b, figure, input.latency)),
        );
    }
    ci
}

/// A result group's intervals, as [`ci95_by`] a run's, from the group's own seconds: its
/// latency batches and requests per second, over the spans of the run's seconds
/// (`run_series`), the group's window (s), rate (req/s) and whole latency (µs).
pub fn of_group(
    run_series: &[SecondStats],
    group: &GroupSeries,
    window_s: f64,
    rps: f64,
    latency: &Histogram<u64>,
    method: Autocorrelation,
) -> Ci95 {
    let series: Vec<SecondStats> = run_series
        .iter()
        .map(|s| group_second(s, group.requests()))
        .collect();
    let batches = group.batches();
    let hs = batches.histograms();
    ci95_by(
        &Input {
            window_s,
            series: &series,
            batch_s: batches.batch_s(),
            batches: &hs,
            rps,
            latency,
        },
        method,
    )
}

/// The intervals over the seconds of a run so far (`done`: the seconds every worker reported,
/// in the order they completed; `batches`: their latency): the whole seconds from the first
/// are the window, their mean rate the throughput.
pub fn so_far(done: &[SecondStats], batches: &Batches) -> Ci95 {
    so_far_of(done, batches, None)
}

/// A result group's intervals over the seconds of the run so far, from its own seconds, as
/// [`so_far`] the run's.
pub fn group_so_far(done: &[SecondStats], group: &GroupSeries) -> Ci95 {
    so_far_of(done, group.batches(), Some(group.requests()))
}

/// A group's second: the run's second `s` (its time and span) with the group's requests of that
/// second (`requests`, by second from 0).
fn group_second(s: &SecondStats, requests: &[u64]) -> SecondStats {
    SecondStats {
        requests: requests.get(s.t_s as usize).copied().unwrap_or(0),
        ..SecondStats::without_responses(s.t_s, s.span_s, 0)
    }
}

/// [`so_far`] with each second's requests taken from `requests` (a group's) when given.
fn so_far_of(done: &[SecondStats], batches: &Batches, requests: Option<&[u64]>) -> Ci95 {
    let mut whole: Vec<&SecondStats> = done.iter().filter(|s| s.span_s >= 0.999).collect();
    whole.sort_by_key(|s| s.t_s);
    let window = whole
        .iter()
        .enumerate()
        .take_while(|(i, s)| s.t_s == *i as u64)
        .count();
    let series: Vec<SecondStats> = whole
        .into_iter()
        .take(window)
        .map(|s| match requests {
            Some(r) => group_second(s, r),
            None => s.clone(),
        })
        .collect();
    let sent: u64 = series.iter().map(|s| s.requests).sum();
    let hs = batches.histograms();
    let mut total = new_histogram();
    for h in &hs {
        let _ = total.add(h);
    }
    ci95(&Input {
        window_s: window as f64,
        series: &series,
        batch_s: batches.batch_s(),
        batches: &hs,
        rps: if window == 0 {
            0.0
        } else {
            sent as f64 / window as f64
        },
        latency: &total,
    })
}

/// Whether `goal` is met by the intervals `ci` (the run's, or its part's): its figure has an
/// interval whose half-width is within the asked share of the figure.
pub fn met(ci: &Ci95, goal: &PrecisionGoal) -> bool {
    ci.get(goal.figure)
        .and_then(Bound::relative)
        .is_some_and(|r| r <= goal.share)
}

/// The relative half-width of goal `goal`'s figure in run `r`'s final intervals: the run's
/// (`summary.ci95`) or its part's (`groups[].ci95`); `None` without an interval.
pub fn goal_got(r: &RunRecord, goal: &PrecisionGoal) -> Option<f64> {
    let ci = match &goal.part {
        Some(part) => part.group_in(r).and_then(|g| g.ci95.as_ref()),
        None => r.summary.ci95.as_ref(),
    };
    ci.and_then(|c| c.get(goal.figure))
        .and_then(Bound::relative)
}

/// A latency figure of a histogram of µs, in ms.
fn figure_of(figure: BoundFigure, h: &Histogram<u64>) -> f64 {
    match figure.quantile() {
        Some(q) => us_to_ms(h.value_at_quantile(q)),
        None => h.mean() / 1000.0,
    }
}

/// A percentile's half-width is at least the width of the histogram's bucket that holds it
/// (1 µs up to 2,048 µs, then 3 significant digits): the recorder cannot place the figure more
/// finely, so batches that all fall in one bucket do not make it exact.
fn at_resolution(mut b: Bound, figure: BoundFigure, latency: &Histogram<u64>) -> Bound {
    if let Some(q) = figure.quantile() {
        let bucket = latency.equivalent_range(latency.value_at_quantile(q));
        b.half_width = b.half_width.max(us_to_ms(bucket));
    }
    b
}

/// The whole batches inside the window, the last one holding every later response too.
fn latency_batches(input: &Input<'_>) -> Vec<Histogram<u64>> {
    let whole = whole_batches(input.window_s, input.batch_s);
    let mut out: Vec<Histogram<u64>> = input.batches.iter().take(whole.max(1)).cloned().collect();
    if let Some(last) = out.last_mut() {
        for later in input.batches.iter().skip(whole.max(1)) {
            let _ = last.add(later);
        }
    }
    out
}

/// The whole batches of `batch_s` seconds a window of `window_s` seconds holds (a partial last
/// one is no batch of its own).
pub fn whole_batches(window_s: f64, batch_s: u64) -> usize {
    ((window_s.max(0.0) + 1e-6) / batch_s.max(1) as f64).floor() as usize
}

/// The batches merged pairwise until each has enough responses for `figure` (and none is
/// empty), as long as at least [`MIN_BATCHES`] remain; with their length, s.
fn coarsened(
    mut hs: Vec<Histogram<u64>>,
    mut batch_s: u64,
    figure: BoundFigure,
) -> Option<(Vec<Histogram<u64>>, u64)> {
    let enough = |hs: &[Histogram<u64>]| {
        let fewest = hs.iter().map(Histogram::len).min().unwrap_or(0) as f64;
        let q = figure.quantile().unwrap_or(0.0);
        fewest > 0.0 && enough_above(fewest, q, MIN_ABOVE.min(fewest))
    };
    while hs.len() >= MIN_BATCHES {
        if enough(&hs) {
            return Some((hs, batch_s));
        }
        hs = pairwise(hs);
        batch_s *= 2;
    }
    None
}

/// Neighbours merged two by two (an odd last one joins the pair before it).
fn pairwise(hs: Vec<Histogram<u64>>) -> Vec<Histogram<u64>> {
    let odd = hs.len() % 2 == 1;
    let mut out: Vec<Histogram<u64>> = hs
        .chunks(2)
        .map(|pair| {
            let mut h = pair[0].clone();
            for more in &pair[1..] {
                let _ = h.add(more);
            }
            h
        })
        .collect();
    if odd && out.len() >= 2 {
        let tail = out.pop().expect("two or more");
        let _ = out.last_mut().expect("one left").add(&tail);
    }
    out
}

/// Throughput in batches of whole seconds inside the window (a partial last second is left
/// out: it is too short to be a batch, and the drain's responses finish in it).
fn rps_bound(input: &Input<'_>, method: Autocorrelation) -> Option<Bound> {
    let whole: Vec<&SecondStats> = input
        .series
        .iter()
        .filter(|s| s.span_s >= 0.999 && (s.t_s + 1) as f64 <= input.window_s + 1e-6)
        .collect();
    let mut batch_s = 1usize;
    while whole.len() / (batch_s * 2) >= MIN_BATCHES
        && whole.len() / batch_s > crate::record::batches::MAX_BATCHES as usize
    {
        batch_s *= 2;
    }
    let values: Vec<f64> = whole
        .chunks(batch_s)
        .filter(|c| c.len() == batch_s)
        .map(|c| {
            let requests: u64 = c.iter().map(|s| s.requests).sum();
            let span: f64 = c.iter().map(|s| s.span_s).sum();
            requests as f64 / span
        })
        .collect();
    if values.len() < MIN_BATCHES {
        return None;
    }
    bound(input.rps, &values, batch_s as u64, method)
}

/// The effective number of batches by `method`: n over their integrated autocorrelation time
/// (initial positive sequence), or — as records before it — n, and n·(1 − ρ)/(1 + ρ) when their
/// lag-1 autocorrelation ρ is significant (above 2/√n, white noise's 95 % bound).
fn effective_batches(values: &[f64], method: Autocorrelation) -> f64 {
    let n = values.len() as f64;
    match method {
        Autocorrelation::InitialPositiveSequence => n / stats::autocorrelation_time(values),
        Autocorrelation::Lag1 if stats::lag1_autocorrelation(values) <= 2.0 / n.sqrt() => n,
        Autocorrelation::Lag1 => stats::effective_n(values),
    }
}

/// `value ± t · sd / √n_eff` over the batch figures `values`.
fn bound(value: f64, values: &[f64], batch_s: u64, method: Autocorrelation) -> Option<Bound> {
    if values.len() < MIN_BATCHES {
        return None;
    }
    // Batches that all agree have no spread to correlate (their mean's rounding would
    // otherwise read as one long correlation).
    let agree = values.iter().all(|v| *v == values[0]);
    let effective = if agree {
        values.len() as f64
    } else {
        effective_batches(values, method)
    };
    if effective < 2.0 {
        return None;
    }
    let sd = stats::variance(values).sqrt();
    let t = stats::t_quantile(0.975, effective - 1.0);
    Some(Bound {
        value,
        half_width: t * sd / effective.sqrt(),
        batches: values.len() as u32,
        batch_s,
        effective,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(n: u64, rate: impl Fn(u64) -> u64) -> Vec<SecondStats> {
        (0..n)
            .map(|t| SecondStats {
                requests: rate(t),
                ..SecondStats::without_responses(t, 1.0, 0)
            })
            .collect()
    }

    fn input<'a>(
        series: &'a [SecondStats],
        batches: &'a [Histogram<u64>],
        total: &'a mut Histogram<u64>,
    ) -> Input<'a> {
        for h in batches {
            total.add(h).unwrap();
        }
        Input {
            window_s: series.len() as f64,
            series,
            batch_s: 1,
            batches,
            rps: 0.0,
            latency: total,
        }
    }

    #[test]
    fn a_steady_rate_has_a_narrow_interval_and_a_noisy_one_a_wide_one() {
        let steady = seconds(20, |_| 1000);
        let noisy = seconds(20, |t| if t % 2 == 0 { 900 } else { 1100 });
        let a = rps_bound(&input(&steady, &[], &mut new_histogram()), AUTOCORRELATION).unwrap();
        let b = rps_bound(&input(&noisy, &[], &mut new_histogram()), AUTOCORRELATION).unwrap();
        assert_eq!(a.half_width, 0.0);
        assert!(b.half_width > 30.0 && b.half_width < 100.0, "{b:?}");
        assert_eq!(b.batches, 20);
        // Four seconds are too few.
        assert!(
            rps_bound(
                &input(&seconds(4, |_| 10), &[], &mut new_histogram()),
                AUTOCORRELATION
            )
            .is_none()
        );
    }

    #[test]
    fn the_p99_interval_covers_the_truth_about_95_percent_of_the_time() {
        // Exponential latencies (mean 2 ms), 2,500 a second for 20 s: the true p99 is
        // 2 ms · ln 100 = 9.21 ms.
        let mut rng = fastrand::Rng::with_seed(7);
        let truth = 2.0 * 100f64.ln();
        let runs = 200;
        let mut covered = 0;
        for _ in 0..runs {
            let batches: Vec<Histogram<u64>> = (0..20)
                .map(|_| {
                    let mut h = new_histogram();
                    for _ in 0..2500 {
                        let u = 1.0 - rng.f64();
                        h.record((-2000.0 * u.ln()) as u64 + 1).unwrap();
                    }
                    h
                })
                .collect();
            let series = seconds(20, |_| 2500);
            let ci = ci95(&input(&series, &batches, &mut new_histogram()));
            let p99 = ci.p99_ms.unwrap();
            if (p99.value - truth).abs() <= p99.half_width {
                covered += 1;
            }
            // p99.9 needs 10,000 a batch: coarsened from 20 batches to 5 (none when those 5
            // happen to look autocorrelated: fewer than 2 effective).
            if let Some(p999) = ci.p99_9_ms {
                assert_eq!((p999.batches, p999.batch_s), (5, 4));
            }
        }
        let rate = covered as f64 / runs as f64;
        assert!((0.88..=0.995).contains(&rate), "coverage {rate}");
    }

    #[test]
    fn too_few_responses_for_a_percentile_leave_it_unbounded() {
        // Batches that alternate: no trend, so no autocorrelation to take out.
        let batches: Vec<Histogram<u64>> = (0..10)
            .map(|j| {
                let mut h = new_histogram();
                h.record_n(1000 + 10 * (j % 2), 100).unwrap();
                h
            })
            .collect();
        let series = seconds(10, |_| 100);
        let ci = ci95(&input(&series, &batches, &mut new_histogram()));
        assert!(ci.p50_ms.is_some());
        // p99 needs 1,000 a batch: 10 × 100 cannot give 5 such batches.
        assert!(ci.p99_ms.is_none());
        assert!(ci.p99_9_ms.is_none());
        // A steady trend (1.0 → 1.9 ms) is one long correlation: a few effective batches and an
        // interval over half the batches' range, not a narrow one; records of the lag-1 method
        // had fewer than 2 effective batches there, so none.
        let trend: Vec<Histogram<u64>> = (0..10)
            .map(|j| {
                let mut h = new_histogram();
                h.record_n(1000 + 100 * j, 100).unwrap();
                h
            })
            .collect();
        let mut total = new_histogram();
        let trend_input = input(&series, &trend, &mut total);
        let p50 = ci95(&trend_input).p50_ms.expect("an interval");
        assert!(p50.effective < 4.0 && p50.half_width > 0.45, "{p50:?}");
        assert!(
            ci95_by(&trend_input, Autocorrelation::Lag1)
                .p50_ms
                .is_none()
        );
    }

    #[test]
    fn batches_of_a_hundred_bound_p90_unmerged() {
        // 100 responses a second hold 10 above their p90: the seconds are the batches. 99 a
        // second would be merged in pairs, and 3 pairs are too few.
        let batches = |n: u64| {
            (0..6)
                .map(|_| {
                    let mut h = new_histogram();
                    (1..=n).for_each(|v| h.record(v * 100).unwrap());
                    h
                })
                .collect::<Vec<_>>()
        };
        let hundred = coarsened(batches(100), 1, BoundFigure::P90).unwrap();
        assert_eq!((hundred.0.len(), hundred.1), (6, 1));
        assert!(coarsened(batches(99), 1, BoundFigure::P90).is_none());
    }

    #[test]
    fn batches_in_one_bucket_leave_the_buckets_width() {
        // Every response took 19 µs: the batches agree exactly, but the histogram only says
        // "19 to 20 µs", so ±1 µs (5 %), never ±0 — and a goal of 2 % is not met.
        let batches: Vec<Histogram<u64>> = (0..10)
            .map(|_| {
                let mut h = new_histogram();
                h.record_n(19, 1000).unwrap();
                h
            })
            .collect();
        let series = seconds(10, |_| 1000);
        let ci = ci95(&input(&series, &batches, &mut new_histogram()));
        let p50 = ci.p50_ms.unwrap_or_else(|| panic!("{ci:?}"));
        assert_eq!((p50.value, p50.half_width), (0.019, 0.001), "{p50:?}");
        let goal = PrecisionGoal {
            figure: BoundFigure::P50,
            share: 0.02,
            part: None,
        };
        assert!(!met(&ci, &goal));
        // At 3 ms the buckets are 2 µs wide.
        let wide: Vec<Histogram<u64>> = (0..10)
            .map(|_| {
                let mut h = new_histogram();
                h.record_n(3000, 1000).unwrap();
                h
            })
            .collect();
        let p99 = ci95(&input(&series, &wide, &mut new_histogram())).p99_ms;
        assert_eq!(p99.map(|b| b.half_width), Some(0.002));
    }
}
