//! Think time: a VU's pause after a step's response, before its next request — a fixed
//! duration, or drawn per request from a distribution (uniform, exponential, normal), as
//! Gatling's and Locust's pauses are. It is never part of a latency; the record counts it as
//! its own figure (`groups[].think_s`).

use std::time::Duration;

/// A step's think time.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Think {
    /// None: the next request follows at once.
    #[default]
    None,
    /// Always this long.
    Fixed(Duration),
    /// Uniformly between the two bounds.
    Uniform(Duration, Duration),
    /// Exponentially distributed with this mean.
    Exponential(Duration),
    /// Normally distributed with this mean and standard deviation, cut at 0.
    Normal(Duration, Duration),
}

impl Think {
    /// Whether the step thinks at all.
    pub fn is_none(&self) -> bool {
        matches!(self, Self::None | Self::Fixed(Duration::ZERO))
    }

    /// The mean think time (a normal distribution's, before the cut at 0).
    pub fn mean(&self) -> Duration {
        match *self {
            Self::None => Duration::ZERO,
            Self::Fixed(d) | Self::Exponential(d) | Self::Normal(d, _) => d,
            Self::Uniform(lo, hi) => (lo + hi) / 2,
        }
    }

    /// One think time drawn from the distribution with the thread's generator.
    pub fn draw(&self) -> Duration {
        let secs = |d: Duration| d.as_secs_f64();
        let s = match *self {
            Self::None => return Duration::ZERO,
            Self::Fixed(d) => return d,
            Self::Uniform(lo, hi) => secs(lo) + fastrand::f64() * (secs(hi) - secs(lo)),
            Self::Exponential(mean) => -(1.0 - fastrand::f64()).ln() * secs(mean),
            Self::Normal(mean, sd) => {
                // Box–Muller: two uniforms → one standard normal.
                let (u, v) = (1.0 - fastrand::f64(), fastrand::f64());
                let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
                secs(mean) + z * secs(sd)
            }
        };
        // At most a day: a drawn pause stays a pause.
        Duration::from_secs_f64(s.clamp(0.0, 86_400.0))
    }

    /// The think time in words: `100ms`, `uniform 50ms–150ms`, `exponential, mean 100ms`,
    /// `normal 100ms ± 20ms`.
    pub fn describe(&self) -> String {
        let f = |d: Duration| humantime::format_duration(d).to_string();
        match *self {
            Self::None => "none".into(),
            Self::Fixed(d) => f(d),
            Self::Uniform(lo, hi) => format!("uniform {}–{}", f(lo), f(hi)),
            Self::Exponential(m) => format!("exponential, mean {}", f(m)),
            Self::Normal(m, sd) => format!("normal {} ± {}", f(m), f(sd)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(t: Think) -> (f64, f64) {
        let n = 100_000;
        let v: Vec<f64> = (0..n).map(|_| t.draw().as_secs_f64() * 1000.0).collect();
        let mean = v.iter().sum::<f64>() / n as f64;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        (mean, sd)
    }

    #[test]
    fn draws_follow_their_distribution() {
        let ms = Duration::from_millis;
        assert_eq!(stats(Think::Fixed(ms(100))), (100.0, 0.0));
        let (mean, sd) = stats(Think::Uniform(ms(50), ms(150)));
        assert!(
            (mean - 100.0).abs() < 1.0 && (sd - 28.87).abs() < 0.5,
            "{mean} {sd}"
        );
        let (mean, sd) = stats(Think::Exponential(ms(100)));
        assert!(
            (mean - 100.0).abs() < 2.0 && (sd - 100.0).abs() < 3.0,
            "{mean} {sd}"
        );
        let (mean, sd) = stats(Think::Normal(ms(100), ms(20)));
        assert!(
            (mean - 100.0).abs() < 0.5 && (sd - 20.0).abs() < 0.5,
            "{mean} {sd}"
        );
        assert_eq!(Think::Uniform(ms(50), ms(150)).mean(), ms(100));
    }
}
