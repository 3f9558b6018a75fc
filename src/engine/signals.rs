//! SIGINT, SIGTERM and SIGHUP for the runs of one process (quick mode, `volley run`, `find-max`,
//! a generator of a distributed test, the coordinator).
//!
//! A watcher thread, started by the first run with [`RunOptions::handle_signals`] and kept for
//! the rest of the process (tokio never gives a signal back to its default action anyway):
//!
//! - the first SIGINT, SIGTERM or SIGHUP (a closed terminal: as SIGTERM) stops the current run
//!   cleanly (its record says which signal);
//!   a run begun after it (the next `--repeat`, the next find-max step) is stopped at once;
//! - a second SIGINT exits the process at once with code 130, whatever it is doing — the run,
//!   or writing its record and reports afterwards. Those are written atomically (a temporary
//!   file renamed over the target), so every file is whole or absent, never truncated.
//!
//! The handlers are in place before a run's workers start: once volley has sent a request, a
//! signal can no longer kill it before its record is written. The command line holds the
//! signals back first thing in `main` ([`hold_signals`]) and installs the watcher
//! ([`super::watch_signals`]) before it loads a plan, so that a signal during start-up too ends
//! in a record (of zero requests, marked interrupted): the watcher's thread alone lets them
//! through. Only the microseconds between `exec` and `main` remain where a signal kills the
//! process outright.
//!
//! Why a process-wide thread rather than the run's control loop: the control loop ends with the
//! run, and signals that arrived while the reports were being written were swallowed — a second
//! Ctrl-C did nothing there.
//!
//! [`RunOptions::handle_signals`]: super::RunOptions::handle_signals

use std::io::Write as _;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::Stop;
use crate::error::Error;

/// Why signals cannot be watched.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum SignalError {
    /// The watcher thread could not be started.
    #[error("cannot start the signal thread: {0}")]
    Thread(Arc<std::io::Error>),
    /// The watcher thread ended before it said whether its handlers were installed.
    #[error("the signal thread ended at start")]
    EndedAtStart,
    /// The watcher's runtime could not be built.
    #[error("cannot start the signal runtime: {0}")]
    Runtime(Arc<std::io::Error>),
    /// The SIGINT or SIGTERM handler could not be installed.
    #[error("cannot install signal handlers: {0}")]
    Handlers(Arc<std::io::Error>),
}

/// The watcher's view of the process.
pub(super) struct SignalWatcher {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The first signal received.
    signal: Option<&'static str>,
    /// The run going on, if any.
    run: Option<Arc<Stop>>,
}

/// The process's watcher, started on first use; its start-up error is kept and returned again.
pub(super) fn watcher() -> Result<&'static SignalWatcher, Error> {
    static WATCHER: OnceLock<Result<&'static SignalWatcher, SignalError>> = OnceLock::new();
    let w = WATCHER
        .get_or_init(start)
        .as_ref()
        .map(|w| *w)
        .map_err(|why| Error::Engine(why.to_string()))?;
    let _ = WATCHER_STARTED.set(w);
    Ok(w)
}

/// The watcher once started, for [`received`].
static WATCHER_STARTED: OnceLock<&'static SignalWatcher> = OnceLock::new();

impl SignalWatcher {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `stop` is the current run's; stopped at once if a signal came already.
    pub(super) fn begin_run(&self, stop: &Arc<Stop>) {
        let mut state = self.lock();
        if let Some(signal) = state.signal {
            interrupt(stop, signal);
        }
        state.run = Some(Arc::clone(stop));
    }

    /// The current run has ended.
    pub(super) fn end_run(&self) {
        self.lock().run = None;
    }

    fn received(&self, signal: &'static str) {
        let mut state = self.lock();
        if state.signal.is_none() {
            state.signal = Some(signal);
            let doing = match &state.run {
                Some(run) => {
                    interrupt(run, signal);
                    "stopping the run"
                }
                None => "finishing",
            };
            // Never a panic for a closed stderr: the run is stopping and must finish its record.
            let _ = writeln!(
                std::io::stderr(),
                "volley: {signal}: {doing} (Ctrl-C again to exit at once)"
            );
        } else if signal == "SIGINT" {
            // Second Ctrl-C: the user wants out now. A file being written is left whole or
            // not at all: its temporary file goes, the target keeps what it had.
            crate::record::abandon_writes();
            std::process::exit(130);
        }
    }
}

fn interrupt(stop: &Stop, signal: &'static str) {
    let _ = stop.signal.set(signal);
    stop.abort();
}

/// Starts the watcher thread and returns once its handlers are installed.
fn start() -> Result<&'static SignalWatcher, SignalError> {
    let watcher: &'static SignalWatcher = Box::leak(Box::new(SignalWatcher {
        state: Mutex::new(State::default()),
    }));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("volley-signals".into())
        .spawn(move || watch(watcher, &ready_tx))
        .map_err(|e| SignalError::Thread(Arc::new(e)))?;
    match ready_rx.recv() {
        Ok(result) => result.map(|()| watcher),
        Err(_) => Err(SignalError::EndedAtStart),
    }
}

fn watch(
    watcher: &'static SignalWatcher,
    ready: &std::sync::mpsc::Sender<Result<(), SignalError>>,
) {
    let Some((runtime, mut signals)) = signal_runtime(ready) else {
        return;
    };
    runtime.block_on(async {
        while let Some(name) = signals.next().await {
            watcher.received(name);
        }
    });
}

/// The signals that stop a run: SIGINT, SIGTERM and SIGHUP (a closed terminal, treated as
/// SIGTERM), as streams of one signal-watching thread's runtime.
pub(crate) struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    /// The next signal, by name ("SIGINT", "SIGTERM", "SIGHUP"); `None` when the streams end.
    pub(crate) async fn next(&mut self) -> Option<&'static str> {
        tokio::select! {
            Some(()) = self.int.recv() => Some("SIGINT"),
            Some(()) = self.term.recv() => Some("SIGTERM"),
            Some(()) = self.hup.recv() => Some("SIGHUP"),
            else => None,
        }
    }
}

/// The signals a run handles, as a set for the thread masks.
fn run_signals() -> nix::sys::signal::SigSet {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        set.add(s);
    }
    set
}

/// Holds SIGINT, SIGTERM and SIGHUP back in the calling thread (and the threads it starts
/// after): called first thing in `main`, so that a signal that comes while volley starts up
/// waits for the thread that will handle it instead of killing the process (one that came
/// 0–3 ms after the start once killed 59 runs in 60).
pub fn hold_signals() {
    let _ = run_signals().thread_block();
}

/// Lets SIGINT, SIGTERM and SIGHUP through in the calling thread again: for a command that
/// watches no signal, whose default is then what it was (one pending is delivered now).
pub fn release_signals() {
    let _ = run_signals().thread_unblock();
}

/// For a signal-watching thread: its own runtime and the signals' streams, with `Ok(())` sent
/// on `ready` once they are installed and let through to this thread (every other thread holds
/// them back: see [`hold_signals`]), or the error (then `None`).
pub(crate) fn signal_runtime(
    ready: &std::sync::mpsc::Sender<Result<(), SignalError>>,
) -> Option<(tokio::runtime::Runtime, Signals)> {
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(SignalError::Runtime(Arc::new(e))));
            return None;
        }
    };
    // Signal streams register with the runtime they are made in.
    let installed = runtime.block_on(async {
        Ok::<_, std::io::Error>(Signals {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
        })
    });
    match installed {
        Ok(signals) => {
            // Installed: what was held back while volley started is delivered here now.
            let _ = run_signals().thread_unblock();
            let _ = ready.send(Ok(()));
            Some((runtime, signals))
        }
        Err(e) => {
            let _ = ready.send(Err(SignalError::Handlers(Arc::new(e))));
            None
        }
    }
}

/// The first signal the process's watcher received, if it runs and one came.
pub(crate) fn received() -> Option<&'static str> {
    let watcher = WATCHER_STARTED.get()?;
    watcher.lock().signal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_begun_after_a_signal_is_stopped_at_once() {
        let w = SignalWatcher {
            state: Mutex::new(State::default()),
        };
        let first = Arc::new(Stop::new());
        w.begin_run(&first);
        assert!(!first.is_aborted());
        w.received("SIGTERM");
        assert!(first.is_aborted());
        assert_eq!(first.signal.get(), Some(&"SIGTERM"));
        w.end_run();
        let next = Arc::new(Stop::new());
        w.begin_run(&next);
        assert!(next.is_aborted());
        assert_eq!(
            next.signal.get(),
            Some(&"SIGTERM"),
            "the first signal is kept"
        );
        // A second SIGTERM is not a second Ctrl-C: nothing happens (a SIGINT would exit).
        w.received("SIGTERM");
    }
}
