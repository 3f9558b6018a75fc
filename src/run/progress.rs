//! The progress line as an [`Observer`]: redrawn on stderr every tick.

use crate::engine::{Clock, Live, Observer};
use crate::report::progress::{Progress, ProgressView};

/// Draws [`Progress`] from the run's running totals.
#[derive(Default)]
pub struct ProgressLine {
    line: Option<(Progress, Clock)>,
}

impl Observer for ProgressLine {
    fn start(&mut self, clock: &Clock) {
        self.line = Some((Progress::new(clock.measured), *clock));
    }

    fn tick(&mut self, live: &Live) {
        if let Some((progress, clock)) = self.line.as_mut() {
            progress.draw(&ProgressView::at(
                live.now,
                clock.start,
                clock.measure_start,
                live.requests,
                live.errors,
            ));
        }
    }

    fn finish(&mut self) {
        if let Some((progress, _)) = self.line.as_mut() {
            progress.finish();
        }
    }
}
