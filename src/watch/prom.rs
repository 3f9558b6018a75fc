//! A Prometheus watch's series: what each scrape adds, as per-interval readings.
//!
//! Definitions (per series, between two successful scrapes at `t0` and `t1`, seconds):
//! - **counter** (and a summary's `_sum`/`_count`): rate = (v1 − v0) / (t1 − t0), per second; a
//!   value below the previous one is a reset (the target restarted) and the rate is v1 / (t1 − t0),
//!   as Prometheus's `rate()` counts it. The first scrape only sets the baseline; a series that
//!   first appears on a later page counts from zero (the target created it in that interval).
//! - **gauge**, untyped, a summary's quantiles: the value at `t1`.
//! - **histogram**: the bucket counts' increase over the interval (a reset as for counters), then
//!   rate = the `+Inf` bucket's increase / (t1 − t0), and the quantiles [`QUANTILES`] of that
//!   increase, interpolated linearly within a bucket as `histogram_quantile()` does (a quantile
//!   in the `+Inf` bucket is the largest finite bound). No quantile for an interval without
//!   observations.
//!
//! Memory is bounded whatever the target exposes: at most `max_series` series are kept (the first
//! ones selected, in page order; later ones are counted in [`Ingested::over_cap`]), at most
//! [`MAX_BUCKETS`] buckets per histogram; the page itself is capped by the scraper.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::select::Selector;
use super::text::{ExpositionLine, ExpositionSample, Kind, Suffix, family, parse_line};

/// Series kept per watch unless told otherwise.
pub const DEFAULT_MAX_SERIES: usize = 100;
/// Buckets kept per histogram series; further bounds are ignored.
pub const MAX_BUCKETS: usize = 64;
/// The quantiles reported for a histogram, per interval.
pub const QUANTILES: [f64; 3] = [0.5, 0.9, 0.99];
/// `# TYPE` lines remembered per page.
const MAX_TYPES: usize = 10_000;

/// What a watched series is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesId {
    /// The sample (or, for a histogram, family) name.
    pub name: String,
    /// Its labels, sorted, as `{a="x",b="y"}` (empty when none); a histogram's `le` left out.
    pub labels: String,
    /// Its family's declared kind.
    pub kind: Kind,
}

/// What a reading measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReadingStat {
    /// Per second over the interval (counters, a histogram's count).
    Rate,
    /// The value at the scrape (gauges).
    Value,
    /// A histogram's quantile over the interval, in the metric's unit.
    Quantile(f64),
}

/// One number a scrape adds to a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// Index into [`PromWatch::series`].
    pub series: usize,
    /// What it is.
    pub stat: ReadingStat,
    /// The number.
    pub value: f64,
    /// A quantile's bucket: the bounds the quantile lies between, (lower, upper; +∞ for the
    /// last bucket). `value` is only an estimate inside them (interpolated as Prometheus's
    /// `histogram_quantile()` does). `None` for other readings.
    pub bucket: Option<(f64, f64)>,
}

/// What one page gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ingested {
    /// New readings (none for a series' first scrape when it is a rate).
    pub readings: Vec<Reading>,
    /// Samples that the selectors selected (kept or over the cap).
    pub matched: usize,
    /// Selected samples dropped because `max_series` series were already kept.
    pub over_cap: usize,
    /// Lines that were not valid exposition text.
    pub skipped: usize,
}

#[derive(Debug, Clone)]
enum State {
    Counter {
        last: Option<f64>,
    },
    Gauge,
    /// `last`: the previous scrape's (bound, cumulative count), ascending; `now`: this page's.
    /// `appeared`: first seen on a later page, so its previous counts were zero.
    Histogram {
        last: Vec<(f64, f64)>,
        now: Vec<(f64, f64)>,
        appeared: bool,
    },
}

/// One `--watch prom=URL`: its selectors, its kept series and their last values.
#[derive(Debug)]
pub struct PromWatch {
    selectors: Vec<Selector>,
    max_series: usize,
    series: Vec<SeriesId>,
    states: Vec<State>,
    index: HashMap<String, usize>,
    last_t_s: Option<f64>,
}

impl PromWatch {
    /// A watch keeping what any of `selectors` selects (everything when there are none), at most
    /// `max_series` series.
    pub fn new(selectors: Vec<Selector>, max_series: usize) -> Self {
        Self {
            selectors,
            max_series,
            series: Vec::new(),
            states: Vec::new(),
            index: HashMap::new(),
            last_t_s: None,
        }
    }

    /// The series kept so far, in the order first seen ([`Reading::series`] indexes this).
    pub fn series(&self) -> &[SeriesId] {
        &self.series
    }

    /// Reads one scraped page, taken at `t_s` seconds (any clock, increasing).
    pub fn ingest(&mut self, page: &str, t_s: f64) -> Ingested {
        let dt = self.last_t_s.map(|t0| t_s - t0).filter(|dt| *dt > 0.0);
        let mut out = Ingested::default();
        let mut types: HashMap<&str, Kind> = HashMap::new();
        let mut histograms = Vec::new();
        for line in page.lines() {
            match parse_line(line) {
                None => out.skipped += 1,
                Some(ExpositionLine::Nothing) => {}
                Some(ExpositionLine::Type(name, kind)) => {
                    if types.len() < MAX_TYPES {
                        types.insert(name, kind);
                    }
                }
                Some(ExpositionLine::Sample(s)) => {
                    self.sample(&s, &types, dt, &mut out, &mut histograms)
                }
            }
        }
        for i in histograms {
            self.close_histogram(i, dt, &mut out.readings);
        }
        self.last_t_s = Some(t_s);
        out
    }

    fn sample(
        &mut self,
        s: &ExpositionSample<'_>,
        types: &HashMap<&str, Kind>,
        dt: Option<f64>,
        out: &mut Ingested,
        histograms: &mut Vec<usize>,
    ) {
        let (fam, suffix) = family(s.name, |n| types.get(n).copied());
        let kind = types.get(fam).copied().unwrap_or(Kind::Untyped);
        let histogram = kind == Kind::Histogram;
        if suffix == Suffix::Created || (histogram && suffix != Suffix::Bucket) {
            return; // A histogram's count is its +Inf bucket; _sum is not watched.
        }
        if !self.selectors.is_empty() && !self.selectors.iter().any(|x| x.matches(fam, s)) {
            return;
        }
        out.matched += 1;
        let name = if histogram { fam } else { s.name };
        let Some(i) = self.series_index(name, s, kind, histogram) else {
            out.over_cap += 1;
            return;
        };
        match &mut self.states[i] {
            State::Counter { last } => {
                let v = s.value;
                if let (Some(v0), Some(dt)) = (*last, dt) {
                    let increase = if v >= v0 { v - v0 } else { v };
                    out.readings
                        .push(reading(i, ReadingStat::Rate, increase / dt));
                }
                *last = Some(v);
            }
            State::Gauge => out.readings.push(reading(i, ReadingStat::Value, s.value)),
            State::Histogram { now, .. } => {
                let le = s.label("le").and_then(super::text::parse_value);
                if let Some(le) = le
                    && now.len() < MAX_BUCKETS
                {
                    if now.is_empty() {
                        histograms.push(i);
                    }
                    now.push((le, s.value));
                }
            }
        }
    }

    /// The index of the series, made if there is room.
    fn series_index(
        &mut self,
        name: &str,
        s: &ExpositionSample<'_>,
        kind: Kind,
        histogram: bool,
    ) -> Option<usize> {
        let labels = render_labels(s, histogram);
        let mut key = String::with_capacity(name.len() + labels.len());
        key.push_str(name);
        key.push_str(&labels);
        if let Some(&i) = self.index.get(&key) {
            return Some(i);
        }
        if self.series.len() >= self.max_series {
            return None;
        }
        let rate = kind == Kind::Counter
            || (kind == Kind::Summary && (name.ends_with("_sum") || name.ends_with("_count")));
        // A series that first appears on a later page started from zero since the previous
        // page: its whole count is that interval's increase (the target created it then).
        let appeared = self.last_t_s.is_some();
        let state = match (histogram, rate) {
            (true, _) => State::Histogram {
                last: Vec::new(),
                now: Vec::new(),
                appeared,
            },
            (false, true) => State::Counter {
                last: appeared.then_some(0.0),
            },
            (false, false) => State::Gauge,
        };
        let i = self.series.len();
        self.series.push(SeriesId {
            name: name.to_string(),
            labels,
            kind,
        });
        self.states.push(state);
        self.index.insert(key, i);
        Some(i)
    }

    /// A histogram's page is complete: its rate and quantiles over the interval.
    fn close_histogram(&mut self, i: usize, dt: Option<f64>, out: &mut Vec<Reading>) {
        let State::Histogram {
            last,
            now,
            appeared,
        } = &mut self.states[i]
        else {
            return;
        };
        now.sort_by(|a, b| a.0.total_cmp(&b.0));
        if std::mem::take(appeared) && last.is_empty() {
            *last = now.iter().map(|b| (b.0, 0.0)).collect();
        }
        let same_bounds =
            last.len() == now.len() && last.iter().zip(now.iter()).all(|(a, b)| a.0 == b.0);
        if let (Some(dt), true) = (dt, same_bounds) {
            let reset = last.iter().zip(now.iter()).any(|(a, b)| b.1 < a.1);
            let delta: Vec<(f64, f64)> = now
                .iter()
                .zip(last.iter())
                .map(|(n, l)| (n.0, if reset { n.1 } else { n.1 - l.1 }))
                .collect();
            let total = delta.last().map_or(0.0, |b| b.1);
            out.push(reading(i, ReadingStat::Rate, total / dt));
            if total > 0.0 {
                for q in QUANTILES {
                    let (value, lower, upper) = quantile_bucket(q, &delta);
                    out.push(Reading {
                        bucket: Some((lower, upper)),
                        ..reading(i, ReadingStat::Quantile(q), value)
                    });
                }
            }
        }
        *last = std::mem::take(now);
    }
}

fn reading(series: usize, stat: ReadingStat, value: f64) -> Reading {
    Reading {
        series,
        stat,
        value,
        bucket: None,
    }
}

/// `{a="x",b="y"}` sorted by name (`le` left out for a histogram's bucket), escaped as in the
/// exposition format; empty when there are no labels.
fn render_labels(s: &ExpositionSample<'_>, histogram: bool) -> String {
    let mut labels: Vec<_> = s
        .labels
        .iter()
        .filter(|(k, _)| !(histogram && *k == "le"))
        .collect();
    if labels.is_empty() {
        return String::new();
    }
    labels.sort_by(|a, b| a.0.cmp(b.0));
    let mut out = String::from("{");
    for (n, (k, v)) in labels.iter().enumerate() {
        let sep = if n == 0 { "" } else { "," };
        let v = v
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n");
        let _ = write!(out, "{sep}{k}=\"{v}\"");
    }
    out.push('}');
    out
}

/// The `q` quantile of cumulative buckets `(bound, count)` ascending, `histogram_quantile()`'s
/// way: linear within the bucket where the rank falls, from the previous bound (0 for the first
/// bucket when its bound is positive); in the `+Inf` bucket, the largest finite bound.
pub fn quantile(q: f64, buckets: &[(f64, f64)]) -> f64 {
    quantile_bucket(q, buckets).0
}

/// The `q` quantile of cumulative buckets as [`quantile`] estimates it, with the bounds of the
/// bucket it lies in: (estimate, lower, upper). The quantile is somewhere between the bounds;
/// the estimate assumes the observations spread evenly over the bucket, which they seldom do
/// (a bucket of 20–50 ms whose every observation took 21 ms gives a p99 near 50).
pub fn quantile_bucket(q: f64, buckets: &[(f64, f64)]) -> (f64, f64, f64) {
    let Some(&(_, total)) = buckets.last() else {
        return (f64::NAN, f64::NAN, f64::NAN);
    };
    let rank = q * total;
    let mut prev = (0.0_f64, 0.0_f64);
    for &(le, count) in buckets {
        if count >= rank && count > prev.1 {
            if le.is_infinite() {
                return (prev.0, prev.0, f64::INFINITY);
            }
            let lower = if prev.0 == 0.0 && le <= 0.0 {
                le
            } else {
                prev.0
            };
            let estimate = lower + (le - lower) * (rank - prev.1) / (count - prev.1);
            return (estimate, lower, le);
        }
        prev = (le, count);
    }
    (prev.0, prev.0, prev.0)
}

#[cfg(test)]
#[path = "prom_tests.rs"]
mod tests;
