//! The live progress line on stderr.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::units::thousands;

/// What the progress line shows at one moment.
#[derive(Debug, Clone, Copy)]
pub struct ProgressView {
    /// Time since measuring began (zero during warm-up).
    pub elapsed: Duration,
    /// Still warming up.
    pub warming_up: bool,
    /// Measured requests finished so far.
    pub requests: u64,
    /// Of those, failed.
    pub errors: u64,
}

impl ProgressView {
    /// The view at `now` of a run whose load starts at `start` and whose measured part starts at
    /// `measure_start` (the same instant when no warm-up was asked for: then the line never says
    /// "warm-up", not even in the moment before the load starts).
    pub fn at(
        now: Instant,
        start: Instant,
        measure_start: Instant,
        requests: u64,
        errors: u64,
    ) -> Self {
        Self {
            elapsed: now.saturating_duration_since(measure_start),
            warming_up: measure_start > start && now < measure_start,
            requests,
            errors,
        }
    }
}

/// Redraws one line on stderr with `\r`; computes the current rate from successive views.
pub struct Progress {
    total: Option<Duration>,
    last: Option<(Instant, u64)>,
    rate: f64,
    drawn: bool,
}

impl Progress {
    /// A progress line for a run of `total` measured time (`None`: until its iterations are done).
    pub fn new(total: Option<Duration>) -> Self {
        Self {
            total,
            last: None,
            rate: 0.0,
            drawn: false,
        }
    }

    /// Draws the line for `view`.
    pub fn draw(&mut self, view: &ProgressView) {
        let now = Instant::now();
        if let Some((then, requests)) = self.last {
            let dt = now.duration_since(then).as_secs_f64();
            if dt > 0.0 {
                self.rate = view.requests.saturating_sub(requests) as f64 / dt;
            }
        }
        self.last = Some((now, view.requests));
        let line = self.line(view);
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(line.as_bytes());
        let _ = err.flush();
        self.drawn = true;
    }

    /// The line for `view`, with the rate last computed.
    fn line(&self, view: &ProgressView) -> String {
        let position = match self.total {
            Some(d) => format!(
                "{:>6.1}s / {:.1}s",
                view.elapsed.as_secs_f64().min(d.as_secs_f64()),
                d.as_secs_f64()
            ),
            None => format!("{:>6.1}s", view.elapsed.as_secs_f64()),
        };
        let phase = if view.warming_up { " warm-up" } else { "" };
        format!(
            "\r[{position}]{phase}  {} req  {:.0} req/s  {} errors\x1b[K",
            thousands(view.requests),
            self.rate,
            thousands(view.errors)
        )
    }

    /// Clears the line.
    pub fn finish(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(b"\r\x1b[K");
            let _ = err.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_up_is_shown_only_when_asked_for() {
        let progress = Progress::new(Some(Duration::from_secs(10)));
        let now = Instant::now();
        // No warm-up: the load starts 30 ms from now and is measured from then on.
        let start = now + Duration::from_millis(30);
        for at in [now, start, start + Duration::from_secs(1)] {
            let line = progress.line(&ProgressView::at(at, start, start, 0, 0));
            assert!(!line.contains("warm-up"), "{line:?}");
        }
        // A 2 s warm-up: said during it, not after.
        let measured = start + Duration::from_secs(2);
        let during = progress.line(&ProgressView::at(now, start, measured, 0, 0));
        assert!(during.contains("warm-up"), "{during:?}");
        let after = progress.line(&ProgressView::at(measured, start, measured, 5, 0));
        assert!(
            !after.contains("warm-up") && after.contains("5 req"),
            "{after:?}"
        );
    }
}
