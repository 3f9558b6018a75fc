//! The pusher of remote write (`--prometheus-rw URL`) and OTLP (`--otlp`): a thread of its own
//! that pushes the latest [`LiveSnapshot`] to a [`Sink`] every second, and at once when asked
//! (the end of a run), each push bounded by the sink's timeout. Failures are counted, never
//! fatal: the run neither waits for the endpoint nor loses anything it measured.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::LiveSnapshot;
use super::http_post::PushError;
use super::live::Shared;

/// Where snapshots are pushed: one protocol's encoding and endpoint.
pub trait Sink: Send + 'static {
    /// Pushes one snapshot, stamped with the time of the push (blocking, at most
    /// [`timeout`](Sink::timeout)).
    fn push(&mut self, snapshot: &LiveSnapshot) -> Result<(), PushError>;
    /// The longest one push takes.
    fn timeout(&self) -> Duration;
}

/// How often the pusher pushes.
pub const PUSH_EVERY: Duration = Duration::from_secs(1);

/// Pushes done and failed since the stats were last taken.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushStats {
    /// Pushes tried.
    pub pushes: u64,
    /// Of which failed.
    pub failed: u64,
    /// The first failure, in words.
    pub first_error: Option<String>,
    /// The latest failure, in words.
    pub last_error: Option<String>,
}

impl PushStats {
    fn count(&mut self, result: &Result<(), PushError>) {
        self.pushes += 1;
        if let Err(e) = result {
            self.failed += 1;
            let why = e.to_string();
            self.first_error.get_or_insert_with(|| why.clone());
            self.last_error = Some(why);
        }
    }
}

#[derive(Default)]
struct State {
    closing: bool,
    flush_asked: u64,
    flush_done: u64,
    stats: PushStats,
}

#[derive(Default)]
struct Inner {
    state: Mutex<State>,
    wake: Condvar,
    done: Condvar,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The running pusher; stopped (after one last push) by [`Pusher::close`] or when dropped.
pub struct Pusher {
    inner: Arc<Inner>,
    thread: Option<JoinHandle<()>>,
    /// The longest a flush waits: a push under way, then its own push, and a margin.
    flush_wait: Duration,
}

impl Pusher {
    /// Pushes `shared` once now (the answer is returned: a down endpoint is known at the start),
    /// then every [`PUSH_EVERY`] on a thread of its own.
    pub fn start(mut sink: impl Sink, shared: Shared) -> (Self, Result<(), PushError>) {
        let inner = Arc::new(Inner::default());
        let first = push(&mut sink, &shared);
        inner.lock().stats.count(&first);
        let flush_wait = sink.timeout() * 2 + Duration::from_secs(1);
        let worker = inner.clone();
        let thread = std::thread::Builder::new()
            .name("volley-push".into())
            .spawn(move || run(&mut sink, &shared, &worker))
            .ok();
        let pusher = Self {
            inner,
            thread,
            flush_wait,
        };
        (pusher, first)
    }

    /// Pushes the latest snapshot now and waits for the answer (two pushes' deadlines at most:
    /// one may be under way).
    pub fn flush(&self) {
        let mut state = self.inner.lock();
        state.flush_asked += 1;
        let asked = state.flush_asked;
        self.inner.wake.notify_all();
        let _ = self
            .inner
            .done
            .wait_timeout_while(state, self.flush_wait, |s| s.flush_done < asked);
    }

    /// The pushes since the last call.
    pub fn take_stats(&self) -> PushStats {
        std::mem::take(&mut self.inner.lock().stats)
    }

    /// Pushes one last time and stops the thread.
    pub fn close(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.inner.lock().closing = true;
        self.inner.wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Pusher {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(sink: &mut impl Sink, shared: &Shared, inner: &Inner) {
    loop {
        let (closing, asked) = {
            let state = inner.lock();
            let (state, _) = inner
                .wake
                .wait_timeout_while(state, PUSH_EVERY, |s| {
                    !s.closing && s.flush_done == s.flush_asked
                })
                .unwrap_or_else(|e| e.into_inner());
            (state.closing, state.flush_asked)
        };
        let result = push(sink, shared);
        let mut state = inner.lock();
        state.stats.count(&result);
        state.flush_done = asked;
        inner.done.notify_all();
        if closing {
            return;
        }
    }
}

/// Pushes the latest snapshot, stamped now (each push's samples are newer than the last's).
fn push(sink: &mut impl Sink, shared: &Shared) -> Result<(), PushError> {
    let mut snapshot = shared.lock().unwrap_or_else(|e| e.into_inner()).clone();
    snapshot.unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    sink.push(&snapshot)
}
