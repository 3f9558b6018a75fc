//! Watching the target during a run (`--watch`): its Prometheus metrics and its processes.
//!
//! - [`text`]: the Prometheus / OpenMetrics text format, line by line.
//! - [`select`]: PromQL-style selectors (`name{label=~"re"}`).
//! - [`prom`]: the kept series of one endpoint, and what each scrape adds (rates, values,
//!   histogram quantiles per interval), bounded in series and buckets.
//! - [`scrape`]: the HTTP GET of a page (deadline, byte cap, failures by kind).
//! - [`process`]: CPU seconds, RSS, threads and open fds of a process tree, from `/proc`.
//!
//! A watcher runs on a thread of its own ([`spawn_prom`]), never on a worker: it scrapes once
//! per interval on a fixed grid from its start (no drift) and sends each [`PromTick`] down a
//! channel; the run's observer drains the channel at each per-second snapshot. Nothing here
//! imports the pipeline: `watch` sits with the leaves (it uses none of volley's other modules).

pub mod process;
pub mod prom;
pub mod scrape;
pub mod select;
pub mod text;

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prom::{PromWatch, Reading, SeriesId};
use scrape::{Failures, ScrapeError, Scraper};

/// What one scrape of one endpoint gave.
#[derive(Debug, Clone, PartialEq)]
pub struct PromTick {
    /// When the scrape started, seconds since the watcher's start.
    pub t_s: f64,
    /// Its readings (empty when it failed).
    pub readings: Vec<Reading>,
    /// Series first kept at this scrape (appended to the watch's list, in order): the observer
    /// keeps its own copy of the series list from these.
    pub new_series: Vec<SeriesId>,
    /// Selected samples dropped at the series cap.
    pub over_cap: usize,
    /// Failures so far, by kind (cumulative).
    pub failures: Failures,
}

/// One endpoint: its scraper, its series, its failures.
#[derive(Debug)]
pub struct PromWatcher {
    scraper: Scraper,
    watch: PromWatch,
    failures: Failures,
    /// Whether the watch has selectors (then a page where nothing matched is a failure).
    selective: bool,
}

impl PromWatcher {
    /// A watcher of `scraper`'s endpoint keeping what `watch` selects.
    pub fn new(scraper: Scraper, watch: PromWatch, selective: bool) -> Self {
        Self {
            scraper,
            watch,
            failures: Failures::default(),
            selective,
        }
    }

    /// Scrapes once (blocking, bounded by the scraper's timeout); `t_s` is the scrape's time.
    pub fn tick(&mut self, t_s: f64) -> PromTick {
        let known = self.watch.series().len();
        let mut tick = PromTick {
            t_s,
            readings: Vec::new(),
            new_series: Vec::new(),
            over_cap: 0,
            failures: Failures::default(),
        };
        match self.scraper.scrape() {
            Ok(page) => {
                let got = self.watch.ingest(&page, t_s);
                if got.matched == 0 && self.selective {
                    self.failures.count(&ScrapeError::NothingMatched);
                }
                tick.readings = got.readings;
                tick.over_cap = got.over_cap;
                tick.new_series = self.watch.series()[known..].to_vec();
            }
            Err(e) => self.failures.count(&e),
        }
        tick.failures = self.failures.clone();
        tick
    }
}

/// A running watcher thread; dropping the receiver or calling [`WatchThread::stop`] ends it.
#[derive(Debug)]
pub struct WatchThread {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<()>,
}

impl WatchThread {
    /// Stops the thread after its current scrape (at most one scrape timeout) and joins it.
    pub fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.handle.join();
    }
}

/// Starts a thread that calls [`PromWatcher::tick`] every `interval` (first at once), on a
/// fixed grid from now, and sends each tick to the returned receiver.
pub fn spawn_prom(
    mut watcher: PromWatcher,
    interval: Duration,
) -> std::io::Result<(WatchThread, mpsc::Receiver<PromTick>)> {
    let (tx, rx) = mpsc::channel();
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let handle = std::thread::Builder::new()
        .name("volley-watch".into())
        .spawn(move || {
            let start = Instant::now();
            for n in 1u32.. {
                let tick = watcher.tick(start.elapsed().as_secs_f64());
                if tx.send(tick).is_err() {
                    return;
                }
                let next = start + interval * n;
                let wait = next.saturating_duration_since(Instant::now());
                match stop_rx.recv_timeout(wait) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
            }
        })?;
    Ok((
        WatchThread {
            stop: stop_tx,
            handle,
        },
        rx,
    ))
}
