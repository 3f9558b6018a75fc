//! The run façade: the one way to run a plan. Quick mode, `volley run`, `volley demo`, each
//! find-max step and each suite run call [`execute`]: it runs the engine with the observers the
//! caller asked for (the progress line, live views, the outputs' live figures), then builds the
//! run's record once. [`output`] is the seam of what a run leaves behind ([`Outputs`]).
//!
//! Layout: `build` makes the record from the plan and the engine's outcome, with [`windows`]
//! (each group's measured window and arrival figures), [`load`] (the load each scenario was
//! given), [`thresholds`] (thresholds judged on a record) and [`expected`] (the VU time the
//! profile implies, for the Little's-law self-check); [`progress`] is the progress line as an
//! observer, [`live_view`] the live terminal view, another; `live` judges `abort_on_fail`
//! thresholds during the run; [`watching`] watches the target's side (`--watch`, a suite's
//! target processes) and gives the record's `watch` section.

mod build;
pub mod expected;
mod live;
pub mod live_view;
pub mod load;
mod no_connection;
pub mod output;
pub mod progress;
pub mod show;
mod streams;
pub mod thresholds;
pub mod watching;
pub mod windows;

use std::io::IsTerminal;
use std::time::Duration;

pub(crate) use crate::engine::SignalError;
pub(crate) use crate::engine::signal_runtime;
pub use crate::engine::{
    Abort, Clock, Live, Observer, StopHandle, TICK, hold_signals, peak_rss_bytes, process_cpu,
    raise_open_files, release_signals, signal_received, stop_handle, watch_signals,
};
use crate::error::Error;
use crate::plan::Plan;
use crate::record::RunRecord;

pub use build::{Beside, build_record, run_config};
pub use live::LiveJudge;
pub use load::{describe_scenario, scenario_load};
pub use output::{Output, OutputError, Outputs, Written};
pub use thresholds::RecordView;

/// How to run: what is not part of the test itself.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Draw the progress line on stderr (only when stderr is a terminal).
    pub progress: bool,
    /// With `progress`: show the live terminal view instead of the progress line, when
    /// [`live_view::possible`] and the run is [`live_view::long_enough`].
    pub live_view: bool,
    /// Draw the live view in colour.
    pub color: bool,
    /// Stop cleanly on SIGINT/SIGTERM (see [`crate::engine::RunOptions::handle_signals`]).
    pub handle_signals: bool,
    /// The command line, as the record keeps it (secrets are redacted when written).
    pub command: crate::redact::Argv,
    /// The tick of the open model's send grid (see [`crate::engine::RunOptions::send_grid`]);
    /// none: the default.
    pub send_grid: Option<Duration>,
    /// `abort_on_fail` thresholds are judged by a distributed test's coordinator on the whole
    /// test (through an observer of the caller's), not on this share's own figures.
    pub remote_judge: bool,
}

/// What a run shows on stderr while it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Nothing (`-q`).
    Nothing,
    /// The one-line progress (`--no-tui`), when stderr is a terminal.
    Progress,
    /// The live terminal view when stderr is a terminal, `CI` is not set and the run is longer
    /// than a few seconds; else the progress line.
    View,
}

impl Shown {
    /// From `-q` and `--no-tui`.
    pub fn from_flags(quiet: bool, no_tui: bool) -> Self {
        match (quiet, no_tui) {
            (true, _) => Self::Nothing,
            (false, true) => Self::Progress,
            (false, false) => Self::View,
        }
    }
}

impl Options {
    /// The options of a run a command starts: signal handling, what `shown` says (the live
    /// view in colour when `color`), the open model's send grid tick (`None`: the default).
    pub fn for_command(
        command: &crate::redact::Argv,
        shown: Shown,
        color: bool,
        send_grid: Option<Duration>,
    ) -> Self {
        Self {
            progress: shown != Shown::Nothing,
            live_view: shown == Shown::View,
            color,
            handle_signals: true,
            command: command.clone(),
            send_grid,
            remote_judge: false,
        }
    }
}

/// Runs `plan`, `outputs` (started) reading its live figures, and returns its record. The
/// record is not written: the caller hands it to [`Outputs::finish`] once it has shown it.
pub fn execute(plan: &Plan, options: &Options, outputs: &mut Outputs) -> Result<RunRecord, Error> {
    execute_with(plan, options, stop_handle(), &mut [], outputs)
}

/// Like [`execute`], stoppable through `stop`, with the caller's `observers` watching too.
pub fn execute_with(
    plan: &Plan,
    options: &Options,
    stop: StopHandle,
    observers: &mut [&mut dyn Observer],
    outputs: &mut Outputs,
) -> Result<RunRecord, Error> {
    let engine_options = crate::engine::RunOptions {
        handle_signals: options.handle_signals,
        send_grid: options.send_grid,
    };
    let mut progress = progress::ProgressLine::default();
    let mut thresholds = live::LiveThresholds::new(plan);
    let mut watcher = match plan.watch.is_empty() {
        true => None,
        false => Some(watching::Watcher::new(&plan.watch)?),
    };
    let mut view = (options.progress
        && options.live_view
        && live_view::possible()
        && live_view::long_enough(plan))
    .then(|| live_view::LiveView::new(plan, stop.clone(), options.handle_signals, options.color));
    if let (Some(view), Some(watcher)) = (&view, &mut watcher) {
        watcher.feed(view.watch_feed());
    }
    let mut dead = no_connection::NoConnection::default();
    let mut live = outputs.observer(plan);
    let mut all: Vec<&mut dyn Observer> = Vec::with_capacity(observers.len() + 6);
    all.push(&mut dead);
    if let Some(live) = live.as_mut() {
        all.push(live);
    }
    if !options.remote_judge {
        all.push(&mut thresholds);
    }
    if let Some(view) = view.as_mut() {
        all.push(view);
    } else if options.progress && std::io::stderr().is_terminal() {
        all.push(&mut progress);
    }
    if let Some(w) = &mut watcher {
        all.push(w);
    }
    for o in observers.iter_mut() {
        all.push(&mut **o);
    }
    let outcome = crate::engine::run_with(plan, &engine_options, stop, &mut all);
    drop(all);
    let outcome = outcome?;
    let beside = Beside {
        run_id: outputs.run_id().to_string(),
        watch: watcher.map(|w| w.into_record(outcome.series.len())),
        warnings: outputs.run_ended(),
    };
    Ok(build_record(plan, &outcome, &options.command, beside))
}
