//! SIGINT and SIGTERM for the length of a suite.
//!
//! A suite handles signals itself rather than letting each run do it (the engine's own handling
//! exits the process on a second Ctrl-C, which would leave the suite's processes running). The
//! first signal stops the current run cleanly — its record says which signal — and makes the
//! suite skip what is left, stop its processes and write its report. A second SIGINT kills every
//! process the suite started (SIGKILL to their groups) and exits at once with code 130.

use std::io::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

use super::process::Registry;
use crate::error::Error;
use crate::run::{StopHandle, stop_handle};

/// The suite's view of signals: whether one arrived, and the run it must stop.
pub struct Interrupts {
    inner: Arc<Inner>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

struct Inner {
    state: Mutex<State>,
    registry: Registry,
}

#[derive(Default)]
struct State {
    signal: Option<&'static str>,
    run: Option<StopHandle>,
}

impl Interrupts {
    /// Without watching signals: only [`interrupt`](Self::interrupt) stops the suite.
    pub fn manual(registry: Registry) -> Self {
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                registry,
            }),
            shutdown: None,
            thread: None,
        }
    }

    /// Watches SIGINT and SIGTERM until dropped (a thread of its own). `registry` lists the
    /// processes a second Ctrl-C kills.
    pub fn watch(registry: Registry) -> Result<Self, Error> {
        let mut me = Self::manual(registry);
        let inner = me.inner.clone();
        let (stop_tx, stop_rx) = oneshot::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("volley-suite-signals".into())
            .spawn(move || watch_loop(&inner, stop_rx, &ready_tx))
            .map_err(|e| Error::Engine(format!("cannot start the signal thread: {e}")))?;
        // The handlers are in place once the thread says so: from here on a signal cannot kill
        // volley before its processes are stopped.
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(why)) => return Err(Error::Engine(why.to_string())),
            Err(_) => return Err(Error::Engine("the signal thread ended at start".into())),
        }
        me.shutdown = Some(stop_tx);
        me.thread = Some(thread);
        Ok(me)
    }

    /// The signal that interrupted the suite, if one did.
    pub fn signal(&self) -> Option<&'static str> {
        self.lock().signal
    }

    /// Interrupts the suite as `signal` would: stops the current run, if any.
    pub fn interrupt(&self, signal: &'static str) {
        self.inner.interrupt(signal);
    }

    /// A stop handle for the next run, stopped at once if the suite is already interrupted.
    pub fn begin_run(&self) -> StopHandle {
        let handle = stop_handle();
        let mut state = self.lock();
        if let Some(signal) = state.signal {
            handle.interrupt_by(signal);
        }
        state.run = Some(handle.clone());
        handle
    }

    /// The run begun last has ended.
    pub fn end_run(&self) {
        self.lock().run = None;
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.lock()
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn interrupt(&self, signal: &'static str) {
        let mut state = self.lock();
        state.signal.get_or_insert(signal);
        if let Some(run) = &state.run {
            run.interrupt_by(signal);
        }
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn watch_loop(
    inner: &Inner,
    mut shutdown: oneshot::Receiver<()>,
    ready: &std::sync::mpsc::Sender<Result<(), crate::run::SignalError>>,
) {
    let Some((runtime, mut signals)) = crate::run::signal_runtime(ready) else {
        return;
    };
    runtime.block_on(async {
        loop {
            let name = tokio::select! {
                _ = &mut shutdown => return,
                Some(name) = signals.next() => name,
            };
            let first = inner.lock().signal.is_none();
            if first {
                let _ = writeln!(
                    std::io::stderr(),
                    "volley suite: {name}: stopping the current run, then the started processes \
                     (Ctrl-C again to kill them and exit at once)"
                );
                inner.interrupt(name);
            } else if name == "SIGINT" {
                inner.registry.kill_all();
                crate::record::abandon_writes();
                let _ = writeln!(
                    std::io::stderr(),
                    "volley suite: second SIGINT: started processes killed; exiting"
                );
                std::process::exit(130);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_begun_after_an_interrupt_is_stopped_at_once() {
        let i = Interrupts::manual(Registry::default());
        assert_eq!(i.signal(), None);
        let run = i.begin_run();
        assert!(!run.is_interrupted());
        i.interrupt("SIGTERM");
        assert!(run.is_interrupted());
        i.interrupt("SIGINT");
        assert_eq!(i.signal(), Some("SIGTERM"), "the first signal is kept");
        i.end_run();
        assert!(i.begin_run().is_interrupted());
    }
}
