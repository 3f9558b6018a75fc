//! The live progress line on stderr.

use std::io::Write;
use std::time::{Duration, Instant};

use super::format::thousands;

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
        let position = match self.total {
            Some(d) => format!(
                "{:>6.1}s / {:.1}s",
                view.elapsed.as_secs_f64().min(d.as_secs_f64()),
                d.as_secs_f64()
            ),
            None => format!("{:>6.1}s", view.elapsed.as_secs_f64()),
        };
        let phase = if view.warming_up { " warm-up" } else { "" };
        let line = format!(
            "\r[{position}]{phase}  {} req  {:.0} req/s  {} errors\x1b[K",
            thousands(view.requests),
            self.rate,
            thousands(view.errors)
        );
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(line.as_bytes());
        let _ = err.flush();
        self.drawn = true;
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
