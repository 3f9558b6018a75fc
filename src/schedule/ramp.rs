//! A level that moves linearly between targets over time: the shape of every load profile.
//!
//! `ramping-vus` reads it as a VU count, `ramping-arrival-rate` as requests per second, ladders as
//! steps (a zero-length stage jumps, a stage to the same target holds). All functions are pure.

use std::time::Duration;

/// One stage: move linearly from the previous level to `target` over `duration`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    /// How long the move takes (zero = jump).
    pub duration: Duration,
    /// The level at the end of the stage (VUs, or requests per second).
    pub target: f64,
}

/// A piecewise-linear level over time, starting at `start`.
#[derive(Debug, Clone, PartialEq)]
pub struct Ramp {
    start: f64,
    stages: Vec<Stage>,
    /// Per stage: (start time, start level, cumulative integral at start).
    marks: Vec<(Duration, f64, f64)>,
    /// Arrivals of one share (`--segment`): its events are the whole schedule's events
    /// `offset`, `offset + stride`, … (see [`Ramp::interleaved`]).
    share: Option<ArrivalShare>,
}

/// Which events of a whole arrival schedule one share owns: `offset + k·stride`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ArrivalShare {
    offset: u64,
    stride: u64,
}

impl Ramp {
    /// A ramp from `start` through `stages`.
    pub fn new(start: f64, stages: Vec<Stage>) -> Self {
        let mut marks = Vec::with_capacity(stages.len());
        let (mut t, mut level, mut area) = (Duration::ZERO, start, 0.0);
        for s in &stages {
            marks.push((t, level, area));
            area += (level + s.target) / 2.0 * s.duration.as_secs_f64();
            t += s.duration;
            level = s.target;
        }
        Self {
            start,
            stages,
            marks,
            share: None,
        }
    }

    /// Share `offset` of `stride` shares of this arrival schedule: levels divided by `stride`
    /// (the share's rate), and its event `k` is the whole schedule's event
    /// `offset + k·stride`, due at the same instant, so the shares' events are exactly the
    /// whole's, each once. `stride` ≥ 1, `offset` < `stride`; a share of a share is not made.
    pub fn interleaved(&self, offset: u64, stride: u64) -> Self {
        let n = stride.max(1) as f64;
        let stages = self
            .stages
            .iter()
            .map(|s| Stage {
                duration: s.duration,
                target: s.target / n,
            })
            .collect();
        Self {
            share: Some(ArrivalShare {
                offset: offset.min(stride.max(1) - 1),
                stride: stride.max(1),
            }),
            ..Self::new(self.start / n, stages)
        }
    }

    /// A level held constant for `duration`.
    pub fn constant(level: f64, duration: Duration) -> Self {
        Self::new(
            level,
            vec![Stage {
                duration,
                target: level,
            }],
        )
    }

    /// The stages.
    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// When the last stage ends.
    pub fn total(&self) -> Duration {
        self.stages.iter().map(|s| s.duration).sum()
    }

    /// Whether the level never changes: every stage holds the starting level.
    pub fn is_constant(&self) -> bool {
        self.stages.iter().all(|s| s.target == self.start)
    }

    /// The highest level reached.
    pub fn peak(&self) -> f64 {
        self.stages
            .iter()
            .map(|s| s.target)
            .fold(self.start, f64::max)
    }

    /// The level at `t` (the last target after the end).
    pub fn level_at(&self, t: Duration) -> f64 {
        for (s, &(from, level, _)) in self.stages.iter().zip(&self.marks) {
            let end = from + s.duration;
            if t < end {
                let f = (t - from).as_secs_f64() / s.duration.as_secs_f64();
                return level + (s.target - level) * f;
            }
        }
        self.stages.last().map_or(self.start, |s| s.target)
    }

    /// Whether VU `index` (0-based) is active at `t`: the level is above `index`.
    pub fn vu_active(&self, index: u32, t: Duration) -> bool {
        t < self.total() && self.level_at(t) >= f64::from(index) + 1.0 - 1e-9
    }

    /// The earliest time ≥ `t` (before the end) at which VU `index` is active, if any.
    pub fn vu_next_active(&self, index: u32, t: Duration) -> Option<Duration> {
        let need = f64::from(index) + 1.0 - 1e-9;
        for (s, &(from, level, _)) in self.stages.iter().zip(&self.marks) {
            let end = from + s.duration;
            if end <= t || s.duration.is_zero() {
                continue;
            }
            let at = t.max(from);
            let level_at = self.level_at(at);
            if level_at >= need {
                return Some(at);
            }
            if s.target > level_at && s.target >= need {
                // Linear between (from, level) and (end, target).
                let f = (need - level) / (s.target - level);
                let when = from + s.duration.mul_f64(f.clamp(0.0, 1.0));
                return Some(when.max(at).min(end));
            }
        }
        None
    }

    /// Arrivals: when event `n` (0-based) is due, reading the level as a rate per second, i.e. the
    /// first `t` at which the integral of the rate reaches `n`. `None` if it never does before
    /// the end.
    pub fn due(&self, n: u64) -> Option<Duration> {
        // A share's event n is the whole's event offset + n·stride, at the share's area
        // (offset + n·stride) / stride.
        let n = match self.share {
            Some(ArrivalShare { offset, stride }) => {
                offset.saturating_add(n.saturating_mul(stride)) as f64 / stride as f64
            }
            None => n as f64,
        };
        self.due_area(n)
    }

    /// When the integral of the rate (the level read per second) first reaches `n`, from the
    /// start; `None` if it never does before the end. [`Ramp::due`] at a fractional index: a
    /// Poisson stream's arrivals ([`super::PoissonStream`]).
    pub fn due_area(&self, n: f64) -> Option<Duration> {
        for (s, &(from, level, area)) in self.stages.iter().zip(&self.marks) {
            let d = s.duration.as_secs_f64();
            let stage_area = (level + s.target) / 2.0 * d;
            // Events exactly at a stage's end belong to the next stage (or to no one at the end).
            if d == 0.0 || area + stage_area <= n {
                continue;
            }
            let left = n - area;
            if left <= 0.0 {
                return Some(from);
            }
            // area(τ) = level·τ + a·τ², a = (target − level) / 2d; solve area(τ) = left in the
            // form that stays accurate when a is 0 or negative.
            let a = (s.target - level) / (2.0 * d);
            let disc = (level * level + 4.0 * a * left).max(0.0);
            let denom = level + disc.sqrt();
            if denom <= 0.0 {
                continue;
            }
            let tau = (2.0 * left / denom).min(d);
            return Some(from + Duration::from_secs_f64(tau));
        }
        None
    }

    /// How many events fall due strictly before `t` (reading the level as a rate per second).
    pub fn count_before(&self, t: Duration) -> u64 {
        let mut area = 0.0;
        for (s, &(from, level, start_area)) in self.stages.iter().zip(&self.marks) {
            let end = from + s.duration;
            if t >= end {
                area = start_area + (level + s.target) / 2.0 * s.duration.as_secs_f64();
                continue;
            }
            if t > from {
                let tau = (t - from).as_secs_f64();
                let now = self.level_at(t);
                area = start_area + (level + now) / 2.0 * tau;
            } else {
                area = start_area;
            }
            break;
        }
        // Events at 0, 1, …: those with index < area are due before t.
        match self.share {
            None => (area - 1e-6).ceil().max(0.0) as u64,
            // The whole's events before t, then those of them this share owns.
            Some(ArrivalShare { offset, stride }) => {
                let whole = (area * stride as f64 - 1e-6).ceil().max(0.0) as u64;
                whole.saturating_sub(offset).div_ceil(stride)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    fn stage(d: f64, target: f64) -> Stage {
        Stage {
            duration: secs(d),
            target,
        }
    }

    /// Report 000: 0→500 VUs over 1 m, hold 2 m, 500→0 over 30 s.
    fn report_000() -> Ramp {
        Ramp::new(
            0.0,
            vec![stage(60.0, 500.0), stage(120.0, 500.0), stage(30.0, 0.0)],
        )
    }

    #[test]
    fn levels_follow_the_stages() {
        let r = report_000();
        assert_eq!(r.total(), secs(210.0));
        for (t, level) in [
            (0.0, 0.0),
            (30.0, 250.0),
            (60.0, 500.0),
            (100.0, 500.0),
            (195.0, 250.0),
            (300.0, 0.0),
        ] {
            assert!((r.level_at(secs(t)) - level).abs() < 1e-6, "t={t}");
        }
        assert_eq!(r.peak(), 500.0);
    }

    #[test]
    fn vus_activate_and_deactivate_in_order() {
        let r = report_000();
        assert!(!r.vu_active(0, secs(0.0)));
        assert!(r.vu_active(0, secs(0.2)));
        assert!(!r.vu_active(249, secs(29.9)));
        assert!(r.vu_active(249, secs(30.0)));
        assert!(r.vu_active(499, secs(100.0)));
        assert!(!r.vu_active(499, secs(181.0)));
        assert!(!r.vu_active(0, secs(210.0)));
        // VU 249 (the 250th) becomes active when the level reaches 250: at 30 s.
        let t = r.vu_next_active(249, secs(0.0)).unwrap();
        assert!((t.as_secs_f64() - 30.0).abs() < 1e-6, "{t:?}");
        assert_eq!(r.vu_next_active(10, secs(100.0)), Some(secs(100.0)));
        assert_eq!(r.vu_next_active(499, secs(181.0)), None);
        assert_eq!(r.vu_next_active(500, secs(0.0)), None);
    }

    #[test]
    fn ladder_steps_jump() {
        let r = Ramp::new(
            0.0,
            vec![
                stage(0.0, 10.0),
                stage(2.0, 10.0),
                stage(0.0, 50.0),
                stage(2.0, 50.0),
            ],
        );
        assert!(r.vu_active(9, secs(0.0)));
        assert!(!r.vu_active(10, secs(1.99)));
        assert!(r.vu_active(49, secs(2.0)));
        assert_eq!(r.vu_next_active(30, secs(0.5)), Some(secs(2.0)));
    }

    #[test]
    fn constant_rate_is_evenly_spaced() {
        let r = Ramp::constant(2000.0, secs(10.0));
        assert_eq!(r.due(0), Some(Duration::ZERO));
        assert!((r.due(1).unwrap().as_secs_f64() - 0.0005).abs() < 1e-9);
        assert!((r.due(2000).unwrap().as_secs_f64() - 1.0).abs() < 1e-9);
        assert!(r.due(19_999).is_some());
        assert_eq!(
            r.due(20_000),
            None,
            "the event at the end is not part of the run"
        );
        assert_eq!(r.count_before(secs(1.0)), 2000);
        assert_eq!(r.count_before(secs(0.0001)), 1);
        assert_eq!(r.count_before(secs(10.0)), 20_000);
    }

    #[test]
    fn ramping_rate_integrates() {
        // 0 → 100/s over 10 s: 500 events; event n at sqrt(n/5) s.
        let r = Ramp::new(0.0, vec![stage(10.0, 100.0)]);
        for n in [1u64, 20, 125, 499] {
            let expected = (n as f64 / 5.0).sqrt();
            assert!(
                (r.due(n).unwrap().as_secs_f64() - expected).abs() < 1e-6,
                "n={n}"
            );
        }
        assert_eq!(r.due(500), None);
        // Ramp down: 100 → 0 over 10 s, also 500 events, dense at first.
        let down = Ramp::new(100.0, vec![stage(10.0, 0.0)]);
        let t1 = down.due(1).unwrap().as_secs_f64();
        assert!((t1 - 0.010_005).abs() < 1e-4, "{t1}");
        assert!(down.due(499).unwrap() < secs(10.0));
        // due and count_before agree.
        for n in [0u64, 1, 77, 250, 499] {
            let t = r.due(n).unwrap();
            assert_eq!(r.count_before(t), n, "n={n}");
        }
    }

    #[test]
    fn zero_rate_stages_produce_nothing() {
        let r = Ramp::new(
            0.0,
            vec![stage(5.0, 0.0), stage(0.0, 10.0), stage(1.0, 10.0)],
        );
        let t = r.due(0).unwrap();
        assert_eq!(t, secs(5.0));
        assert!((r.due(9).unwrap().as_secs_f64() - 5.9).abs() < 1e-9);
        assert_eq!(r.due(10), None);
    }
}
