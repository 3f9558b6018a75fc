//! Segments: one generator's share of a test that N generators run together
//! (`--segment i/N`), and how each part of a load profile is divided so that the N shares add
//! up exactly to the whole.
//!
//! Shares are numbered from 0, like Kubernetes' `JOB_COMPLETION_INDEX`: `0/3`, `1/3`, `2/3`.
//! Every division is an interleave: share `i` of `N` owns the whole's items `i`, `i + N`,
//! `i + 2N`, … — VUs, arrivals, iterations, data rows — the same rule by which the engine
//! spreads one share over its worker threads. So the remainder of a division goes to the first
//! shares (10 VUs over 3: 4, 3, 3), deterministically, and no two shares ever own one item.
//!
//! All functions are pure.

use std::time::Duration;

use super::{Ramp, Stage};

/// Most shares one test may be divided into.
pub const MAX_SEGMENTS: u32 = 100_000;

/// Share `index` (0-based) of `count` shares of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Segment {
    index: u32,
    count: u32,
}

/// Why a segment is not valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SegmentError {
    /// Not of the form `i/N`.
    #[error("`{0}` is not a segment: write i/N, e.g. 0/3 (shares are numbered from 0)")]
    Syntax(String),
    /// N is 0 or too large.
    #[error("`{text}`: the number of shares must be between 1 and {MAX_SEGMENTS}")]
    Count {
        /// The segment as written.
        text: String,
    },
    /// i ≥ N.
    #[error(
        "`{text}`: shares are numbered from 0, so share {index} of {count} does not exist \
         (use 0/{count} … {last}/{count})",
        last = count - 1
    )]
    Index {
        /// The segment as written.
        text: String,
        /// The share asked for.
        index: u32,
        /// The number of shares.
        count: u32,
    },
}

impl Segment {
    /// The whole test: share 0 of 1.
    pub const WHOLE: Segment = Segment { index: 0, count: 1 };

    /// Share `index` of `count` (0 ≤ `index` < `count` ≤ [`MAX_SEGMENTS`]).
    pub fn new(index: u32, count: u32) -> Result<Self, SegmentError> {
        let text = format!("{index}/{count}");
        if count == 0 || count > MAX_SEGMENTS {
            return Err(SegmentError::Count { text });
        }
        if index >= count {
            return Err(SegmentError::Index { text, index, count });
        }
        Ok(Self { index, count })
    }

    /// Parses `i/N` (0-based `i`, as Kubernetes' `JOB_COMPLETION_INDEX`).
    pub fn parse(text: &str) -> Result<Self, SegmentError> {
        let syntax = || SegmentError::Syntax(text.to_string());
        let (i, n) = text.trim().split_once('/').ok_or_else(syntax)?;
        let index: u32 = i.trim().parse().map_err(|_| syntax())?;
        let count: u32 = n.trim().parse().map_err(|_| syntax())?;
        Self::new(index, count).map_err(|e| match e {
            SegmentError::Count { .. } => SegmentError::Count {
                text: text.to_string(),
            },
            SegmentError::Index { index, count, .. } => SegmentError::Index {
                text: text.to_string(),
                index,
                count,
            },
            other => other,
        })
    }

    /// The share of an Indexed Job's pod: `JOB_COMPLETION_INDEX` (0-based) of `count`.
    pub fn from_job_index(job_completion_index: &str, count: u32) -> Result<Self, SegmentError> {
        Self::parse(&format!("{}/{count}", job_completion_index.trim()))
    }

    /// This share's number, 0-based.
    pub fn index(self) -> u32 {
        self.index
    }

    /// How many shares the test is divided into.
    pub fn count(self) -> u32 {
        self.count
    }

    /// Whether this is the whole test (1 share).
    pub fn is_whole(self) -> bool {
        self.count == 1
    }

    /// Whether this share owns the whole's item `n` (0-based).
    pub fn owns(self, n: u64) -> bool {
        n % u64::from(self.count) == u64::from(self.index)
    }

    /// The whole's number of this share's item `k` (0-based): `index + k·count`.
    pub fn whole_index(self, k: u64) -> u64 {
        u64::from(self.index).saturating_add(k.saturating_mul(u64::from(self.count)))
    }

    /// How many of the whole's items `0 … total − 1` this share owns: `total / N`, plus one for
    /// the first `total mod N` shares.
    pub fn share_of(self, total: u64) -> u64 {
        let n = u64::from(self.count);
        total / n + u64::from(u64::from(self.index) < total % n)
    }

    /// How many of the whole's items `first … first + count − 1` this share owns.
    pub fn share_of_range(self, first: u64, count: u64) -> u64 {
        let end = first.saturating_add(count);
        self.share_of(end) - self.share_of(first)
    }

    /// This share of a VU count (or any count of slots, such as an in-flight cap).
    pub fn vus(self, total: u32) -> u32 {
        // At most `total`, so it fits.
        self.share_of(u64::from(total)) as u32
    }

    /// This share of a rate, per second.
    pub fn rate(self, per_sec: f64) -> f64 {
        per_sec / f64::from(self.count)
    }

    /// The rows of a data file of `len` rows that this share uses: `index`, `index + N`, …
    pub fn rows(self, len: usize) -> impl Iterator<Item = usize> {
        (self.index as usize..len).step_by(self.count as usize)
    }

    /// This share of an arrival schedule (a rate ramp): the share's rate, and the whole's
    /// arrivals `index`, `index + N`, … at the instants the whole has them.
    pub fn arrival_ramp(self, whole: &Ramp) -> Ramp {
        whole.interleaved(u64::from(self.index), u64::from(self.count))
    }

    /// This share of a VU ramp. The engine runs VU `v` while the level is at least `v + 1`; the
    /// share's VU `j` is the whole's VU `index + j·N`, so it must run exactly while the whole's
    /// level is at least `index + j·N + 1`, i.e. while `(level + N − 1 − index) / N ≥ j + 1`.
    /// That transformed level is piecewise linear, but with fractional ends; here it is rebuilt
    /// with integer levels only (a linear stage becomes a hold up to its first whole VU, the
    /// same line between its first and last whole VU, and a hold after), which keeps every
    /// VU's start and stop instants and makes the share's peak its real VU count.
    pub fn vu_ramp(self, whole: &Ramp) -> Ramp {
        let n = f64::from(self.count);
        let shift = f64::from(self.count - 1 - self.index);
        let f = |level: f64| (level + shift) / n;
        let mut out = IntegerRamp::new(floor(f(whole.level_at(Duration::ZERO))));
        let mut x = f(whole.level_at(Duration::ZERO));
        for s in whole.stages() {
            let y = f(s.target);
            out.stage(x, y, s.duration);
            x = y;
        }
        Ramp::new(out.start, out.stages)
    }
}

impl std::fmt::Display for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Segment {
    type Err = SegmentError;

    fn from_str(s: &str) -> Result<Self, SegmentError> {
        Self::parse(s)
    }
}

/// The engine's tolerance: VU `v` runs while the level is ≥ `v + 1 − 1e-9`.
const EPS: f64 = 1e-9;

/// The VUs a level runs, as the engine counts them.
fn floor(level: f64) -> f64 {
    (level + EPS).floor().max(0.0)
}

/// The first whole VU count at or above `level`.
fn ceil(level: f64) -> f64 {
    (level - EPS).ceil().max(0.0)
}

/// A ramp under construction whose levels are all whole VU counts.
struct IntegerRamp {
    start: f64,
    level: f64,
    stages: Vec<Stage>,
}

impl IntegerRamp {
    fn new(start: f64) -> Self {
        Self {
            start,
            level: start,
            stages: Vec::new(),
        }
    }

    fn push(&mut self, duration: Duration, target: f64) {
        if duration.is_zero() && target == self.level {
            return;
        }
        self.stages.push(Stage { duration, target });
        self.level = target;
    }

    /// The stage from (fractional) level `x` to `y` over `d`, with whole levels only.
    fn stage(&mut self, x: f64, y: f64, d: Duration) {
        if d.is_zero() {
            return self.push(d, floor(y));
        }
        // Where the line x → y reaches a level, as a part of `d`.
        let at = |level: f64| d.mul_f64(((level - x) / (y - x)).clamp(0.0, 1.0));
        let (first, last) = if y > x {
            (ceil(x), floor(y))
        } else {
            (floor(x), ceil(y))
        };
        let crosses = if y > x { first <= last } else { first >= last };
        if y == x || !crosses {
            return self.push(d, floor(x));
        }
        let (t1, t2) = (at(first), at(last).max(at(first)));
        // Up to the first whole level the VU count is x's; then the line itself, whole level
        // to whole level; then the count of y.
        self.push(t1, floor(x));
        self.push(Duration::ZERO, first);
        self.push(t2 - t1, last);
        self.push(Duration::ZERO, floor(y));
        self.push(d - t2, floor(y));
    }
}

#[cfg(test)]
mod tests;
