//! Watching the target during a run (`--watch`): its Prometheus metrics and its processes.
//!
//! - [`text`]: the Prometheus / OpenMetrics text format, line by line.
//! - [`select`]: PromQL-style selectors (`name{label=~"re"}`).
//! - [`prom`]: the kept series of one endpoint, and what each scrape adds (rates, values,
//!   histogram quantiles per interval), bounded in series and buckets.
//! - [`scrape`]: the HTTP GET of a page (deadline, byte cap, failures by kind).
//! - [`process`]: CPU seconds, RSS, threads and open fds of a process tree, from `/proc`.
//!
//! - [`spec`]: what to watch (`--watch prom=URL`, `pid=N`, `[[watch]]`), typed and validated.
//!
//! A watcher runs on a thread of its own ([`spawn_ticks`]), never on a worker: it scrapes or
//! samples once per interval on a fixed grid from the run's measuring start (no drift, the same
//! seconds as the run's own series) and sends each tick down a channel; the run's observer drains
//! the channel. Nothing here imports the pipeline: `watch` sits with the leaves (it uses none of
//! volley's other modules).

pub mod process;
pub mod prom;
pub mod scrape;
pub mod select;
pub mod spec;
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
    /// Stops the thread after its current tick (at most one scrape timeout) and one last tick
    /// when half an interval or more has passed since the previous one (so a run's last second
    /// is not lost to a race with the grid), then joins it.
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
    spawn_ticks(Instant::now(), interval, move |t_s| watcher.tick(t_s))
}

/// Starts a thread that calls `tick(t_s)` at once, then at every `origin + k × interval` still
/// ahead (a fixed grid: no drift, and aligned with whatever else counts seconds from `origin`),
/// and once more when stopped (see [`WatchThread::stop`]); `t_s` is the time of the call in
/// seconds since `origin` (negative before it). Each result goes to the returned receiver.
pub fn spawn_ticks<T: Send + 'static>(
    origin: Instant,
    interval: Duration,
    mut tick: impl FnMut(f64) -> T + Send + 'static,
) -> std::io::Result<(WatchThread, mpsc::Receiver<T>)> {
    let (tx, rx) = mpsc::channel();
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let interval = interval.max(Duration::from_millis(1));
    let since = move |at: Instant| -> f64 {
        match at.checked_duration_since(origin) {
            Some(d) => d.as_secs_f64(),
            None => -origin.duration_since(at).as_secs_f64(),
        }
    };
    let handle = std::thread::Builder::new()
        .name("volley-watch".into())
        .spawn(move || {
            let mut last = Instant::now();
            if tx.send(tick(since(last))).is_err() {
                return;
            }
            loop {
                let next = next_on_grid(origin, interval, Instant::now());
                let wait = next.saturating_duration_since(Instant::now());
                let stopped = !matches!(
                    stop_rx.recv_timeout(wait),
                    Err(mpsc::RecvTimeoutError::Timeout)
                );
                if stopped && last.elapsed() < interval / 2 {
                    return;
                }
                last = Instant::now();
                if tx.send(tick(since(last))).is_err() || stopped {
                    return;
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

/// The first point of the grid `origin + k × interval` (k any integer) after `now`.
fn next_on_grid(origin: Instant, interval: Duration, now: Instant) -> Instant {
    let step = interval.as_secs_f64();
    match now.checked_duration_since(origin) {
        Some(d) => {
            let k = (d.as_secs_f64() / step).floor() + 1.0;
            origin + interval.mul_f64(k)
        }
        None => {
            let k = (origin.duration_since(now).as_secs_f64() / step).ceil() - 1.0;
            origin
                .checked_sub(interval.mul_f64(k.max(0.0)))
                .unwrap_or(now)
        }
    }
}
