//! The latest figures of each watch, for the live view: the [`Watcher`](super::Watcher)
//! publishes them on a [`WatchFeed`] after each drain (once a second, on the control thread:
//! a few strings and numbers), and the view's thread takes them when it draws.

use std::sync::{Arc, Mutex};

use super::align::{ProcOutcome, ProcTick};

/// What every watch of the run says now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchNow {
    /// One per Prometheus watch, in the plan's order.
    pub prom: Vec<PromNow>,
    /// One per process watch, in the plan's order.
    pub processes: Vec<ProcessNow>,
}

/// A Prometheus watch now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromNow {
    /// The page scraped (credentials redacted).
    pub url: String,
    /// Scrapes so far (failed ones included).
    pub scrapes: u64,
    /// Failed scrapes so far.
    pub failed: u64,
    /// The most recent failure, as a message.
    pub last_failure: Option<String>,
    /// Each kept figure as the reports name it (`name{labels} (per s)`), with its value in the
    /// latest second of the run that has one: a counter's rate per second between the last two
    /// scrapes, a gauge's value at the last one, a histogram's quantile over that interval.
    pub figures: Vec<(String, f64)>,
}

/// A process watch now.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessNow {
    /// The watched process.
    pub pid: u32,
    /// Its command line (empty if unreadable).
    pub command: String,
    /// What its latest samples say.
    pub state: ProcessState,
}

/// What a process watch's latest samples say.
#[derive(Debug, Clone, PartialEq)]
pub enum ProcessState {
    /// Fewer than two samples yet (CPU is a difference between two).
    Waiting,
    /// The tree's figures between its last two samples.
    Sampled {
        /// CPU time used over wall time between them, cores (1.0: one core busy).
        cpu_cores: f64,
        /// Resident memory at the last one, bytes.
        rss_bytes: u64,
    },
    /// The process is gone, since `at_s` seconds after measuring began.
    Exited {
        /// When it was seen gone, seconds since measuring began (negative: in the warm-up).
        at_s: f64,
    },
    /// `/proc` could not be read, or its thread could not start.
    Failed(String),
}

impl ProcessState {
    /// The state the latest of `ticks` give (`error`: the watch's thread could not start).
    pub(super) fn of(ticks: &[ProcTick], error: Option<&str>) -> Self {
        if let Some(e) = error {
            return Self::Failed(e.to_string());
        }
        let Some(last) = ticks.last() else {
            return Self::Waiting;
        };
        match &last.outcome {
            ProcOutcome::Exited => return Self::Exited { at_s: last.t_s },
            ProcOutcome::Failed(e) => return Self::Failed(e.clone()),
            ProcOutcome::Sample(_) => {}
        }
        let mut samples = ticks.iter().rev().filter_map(|t| match &t.outcome {
            ProcOutcome::Sample(s) => Some((t.t_s, s)),
            _ => None,
        });
        match (samples.next(), samples.next()) {
            (Some((t1, s1)), Some((t0, s0))) if t1 > t0 => Self::Sampled {
                cpu_cores: (s1.cpu_s - s0.cpu_s).max(0.0) / (t1 - t0),
                rss_bytes: s1.rss_bytes,
            },
            _ => Self::Waiting,
        }
    }
}

/// Where the watcher leaves its latest figures for a live view (cloned: both ends share one).
#[derive(Debug, Clone, Default)]
pub struct WatchFeed(Arc<Mutex<Option<WatchNow>>>);

impl WatchFeed {
    /// Leaves `now` for the view, in place of what it had not taken yet.
    pub fn publish(&self, now: WatchNow) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(now);
        }
    }

    /// What was published since the last call, if anything.
    pub fn take(&self) -> Option<WatchNow> {
        self.0.lock().ok()?.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::process::ProcSample;

    fn sample(t_s: f64, cpu_s: f64, rss_bytes: u64) -> ProcTick {
        ProcTick {
            t_s,
            outcome: ProcOutcome::Sample(ProcSample {
                cpu_s,
                rss_bytes,
                threads: 1,
                fds: 3,
                processes: 1,
                fds_unreadable: 0,
            }),
        }
    }

    #[test]
    fn cpu_is_taken_between_the_last_two_samples_and_an_exit_is_said() {
        assert_eq!(ProcessState::of(&[], None), ProcessState::Waiting);
        assert_eq!(
            ProcessState::of(&[sample(0.0, 1.0, 5)], None),
            ProcessState::Waiting
        );
        let ticks = [
            sample(0.0, 1.0, 5),
            sample(1.0, 1.2, 6),
            sample(2.0, 1.7, 7),
        ];
        assert_eq!(
            ProcessState::of(&ticks, None),
            ProcessState::Sampled {
                cpu_cores: 0.5,
                rss_bytes: 7
            }
        );
        let mut gone = ticks.to_vec();
        gone.push(ProcTick {
            t_s: 2.5,
            outcome: ProcOutcome::Exited,
        });
        assert_eq!(
            ProcessState::of(&gone, None),
            ProcessState::Exited { at_s: 2.5 }
        );
        assert_eq!(
            ProcessState::of(&ticks, Some("no thread")),
            ProcessState::Failed("no thread".into())
        );
    }

    #[test]
    fn the_feed_hands_over_the_latest_once() {
        let feed = WatchFeed::default();
        let view = feed.clone();
        assert_eq!(view.take(), None);
        feed.publish(WatchNow::default());
        let mut second = WatchNow::default();
        second.processes.push(ProcessNow {
            pid: 1,
            command: String::new(),
            state: ProcessState::Waiting,
        });
        feed.publish(second.clone());
        assert_eq!(view.take(), Some(second), "the latest");
        assert_eq!(view.take(), None);
    }
}
