//! The watcher: an [`Observer`] that watches the target's side while a run lasts — its
//! Prometheus pages (`--watch prom=URL`) and process trees (`--watch pid=N`, the commands a
//! suite starts) — and gives the record's `watch` section.
//!
//! Each watch runs on a thread of its own ([`crate::watch::spawn_ticks`]), on a grid of its
//! interval from the start of measuring, so its seconds are the run's own; the control thread only
//! drains their channels (at each second and at the end; at each tick too when a live view shows
//! the latest figures). Nothing here touches a worker. A failed
//! scrape is counted and the watch goes on; a process that exits is noted and no longer sampled.
//!
//! `align` turns the ticks into the record's per-second lists; `latest` is what a live view is
//! handed after each drain ([`Watcher::feed`]).

mod align;
mod latest;

use std::sync::mpsc::Receiver;
use std::time::Duration;

use crate::engine::{Clock, Live, Observer};
use crate::error::Error;
use crate::record::series::SecondStats;
use crate::record::watch::Watched;
use crate::watch::process::{ProcSample, ProcessError, ProcessWatch};
use crate::watch::prom::PromWatch;
use crate::watch::scrape::Scraper;
use crate::watch::spec::{Process, Prom, Source, Spec};
use crate::watch::{PromTick, PromWatcher, WatchThread, spawn_ticks};

use align::PromColumns;
pub use align::{ProcOutcome, ProcTick};
pub use latest::{ProcessNow, ProcessState, PromNow, WatchFeed, WatchNow};

/// A Prometheus watch: what it scrapes, and what its thread has sent so far.
struct PromState {
    spec: Prom,
    interval: Duration,
    /// Taken by [`Watcher::start`].
    watcher: Option<PromWatcher>,
    rx: Option<Receiver<PromTick>>,
    columns: PromColumns,
    /// Why its thread could not start, if so.
    error: Option<String>,
}

/// A process watch.
struct ProcState {
    spec: Process,
    interval: Duration,
    command: String,
    rx: Option<Receiver<ProcTick>>,
    ticks: Vec<ProcTick>,
    error: Option<String>,
}

/// Watches what a plan's `watch` names, for one run.
pub struct Watcher {
    prom: Vec<PromState>,
    procs: Vec<ProcState>,
    threads: Vec<WatchThread>,
    /// Where a live view takes the latest figures, if one shows them, and whether anything was
    /// published there yet (then only news is).
    feed: Option<(WatchFeed, bool)>,
}

impl Watcher {
    /// A watcher of `specs`: every URL resolved and every process looked up now, so that what
    /// cannot be watched at all is said before the run.
    pub fn new(specs: &[Spec]) -> Result<Watcher, Error> {
        let mut w = Watcher {
            prom: Vec::new(),
            procs: Vec::new(),
            threads: Vec::new(),
            feed: None,
        };
        for spec in specs {
            let invalid = |why: String| Error::Invalid {
                what: format!("watch {}", spec.describe()),
                why,
            };
            match &spec.source {
                Source::Prom(p) => {
                    let mut scraper = Scraper::new(&p.url).map_err(|e| invalid(e.why))?;
                    scraper.timeout = p.timeout;
                    let watch = PromWatch::new(p.selectors.clone(), p.max_series);
                    w.prom.push(PromState {
                        spec: p.clone(),
                        interval: spec.interval,
                        watcher: Some(PromWatcher::new(scraper, watch, !p.selectors.is_empty())),
                        rx: None,
                        columns: PromColumns::default(),
                        error: None,
                    });
                }
                Source::Process(p) => {
                    if !std::path::Path::new(&format!("/proc/{}/stat", p.pid)).exists() {
                        return Err(invalid(format!(
                            "no process {} is running (or /proc cannot be read)",
                            p.pid
                        )));
                    }
                    w.procs.push(ProcState {
                        spec: *p,
                        interval: spec.interval,
                        command: command_line(p.pid),
                        rx: None,
                        ticks: Vec::new(),
                        error: None,
                    });
                }
            }
        }
        Ok(w)
    }

    /// Hands the latest figures to `feed` after each drain, which then happens at every
    /// [`TICK`](crate::engine::TICK) too (a live view shows them).
    pub fn feed(&mut self, feed: WatchFeed) {
        self.feed = Some((feed, false));
    }

    /// What every watch says now (see [`WatchNow`]).
    pub fn now(&self) -> WatchNow {
        WatchNow {
            prom: self
                .prom
                .iter()
                .map(|p| p.columns.now(&p.spec, p.error.as_deref()))
                .collect(),
            processes: self
                .procs
                .iter()
                .map(|p| ProcessNow {
                    pid: p.spec.pid,
                    command: p.command.clone(),
                    state: ProcessState::of(&p.ticks, p.error.as_deref()),
                })
                .collect(),
        }
    }

    /// Takes what the threads have sent so far, and hands the latest figures to the feed.
    fn drain(&mut self) {
        let mut new = false;
        for p in &mut self.prom {
            if let Some(rx) = &p.rx {
                for tick in rx.try_iter() {
                    p.columns.add(tick);
                    new = true;
                }
            }
        }
        for p in &mut self.procs {
            if let Some(rx) = &p.rx {
                let before = p.ticks.len();
                p.ticks.extend(rx.try_iter());
                new |= p.ticks.len() > before;
            }
        }
        if matches!(&self.feed, Some((_, published)) if new || !*published) {
            let now = self.now();
            if let Some((feed, published)) = &mut self.feed {
                feed.publish(now);
                *published = true;
            }
        }
    }

    /// The record's `watch` section for a run whose `series` has `seconds` entries.
    pub fn into_record(mut self, seconds: usize) -> Watched {
        self.stop();
        Watched {
            prom: std::mem::take(&mut self.prom)
                .into_iter()
                .map(|p| {
                    p.columns
                        .record(&p.spec, p.interval, p.error.as_deref(), seconds)
                })
                .collect(),
            processes: self
                .procs
                .iter()
                .map(|p| {
                    align::process(
                        &p.spec,
                        &p.command,
                        p.interval,
                        &p.ticks,
                        p.error.as_deref(),
                        seconds,
                    )
                })
                .collect(),
        }
    }

    /// Stops every thread (each after its current tick and one last one) and takes what they sent.
    fn stop(&mut self) {
        for t in self.threads.drain(..) {
            t.stop();
        }
        self.drain();
    }
}

impl Observer for Watcher {
    fn start(&mut self, clock: &Clock) {
        let origin = clock.measure_start;
        for p in &mut self.prom {
            let Some(mut watcher) = p.watcher.take() else {
                continue;
            };
            match spawn_ticks(origin, p.interval, move |t_s| watcher.tick(t_s)) {
                Ok((thread, rx)) => {
                    self.threads.push(thread);
                    p.rx = Some(rx);
                }
                Err(e) => p.error = Some(format!("cannot start its thread: {e}")),
            }
        }
        for p in &mut self.procs {
            let mut watch = ProcessWatch::new(p.spec.pid);
            let sample = move |t_s| ProcTick {
                t_s,
                outcome: outcome(watch.sample()),
            };
            match spawn_ticks(origin, p.interval, sample) {
                Ok((thread, rx)) => {
                    self.threads.push(thread);
                    p.rx = Some(rx);
                }
                Err(e) => p.error = Some(format!("cannot start its thread: {e}")),
            }
        }
    }

    fn second(&mut self, _second: &SecondStats) {
        self.drain();
    }

    fn tick(&mut self, _live: &Live) {
        // A live view shows the latest figures: taken as they come, not only at each second.
        if self.feed.is_some() {
            self.drain();
        }
    }

    fn finish(&mut self) {
        self.stop();
    }
}

/// One scrape of each Prometheus watch now, before the run: a message for each that fails (the
/// run goes on all the same; its failed scrapes are counted and reported).
pub fn probe(specs: &[Spec]) -> Vec<String> {
    specs
        .iter()
        .filter_map(|spec| {
            let Source::Prom(p) = &spec.source else {
                return None;
            };
            let what = spec.describe();
            let mut scraper = match Scraper::new(&p.url) {
                Ok(s) => s,
                Err(e) => return Some(format!("watch {what}: {}", e.why)),
            };
            scraper.timeout = p.timeout;
            let e = scraper.scrape().err()?;
            Some(format!(
                "watch {what}: {e} before the run; the run goes on and failed scrapes are \
                 counted in its report"
            ))
        })
        .collect()
}

fn outcome(r: Result<ProcSample, ProcessError>) -> ProcOutcome {
    match r {
        Ok(s) => ProcOutcome::Sample(s),
        Err(ProcessError::Exited(_)) => ProcOutcome::Exited,
        Err(e) => ProcOutcome::Failed(e.to_string()),
    }
}

/// `/proc/PID/cmdline`, arguments joined by spaces (empty if unreadable).
fn command_line(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    raw.split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}
