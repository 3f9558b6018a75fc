//! The live terminal view: a full-screen picture of the run while it goes (elapsed and load
//! shape, requests/s and errors/s over the last minute, latency now and for the whole run, status
//! codes and error kinds, per scenario and step, per `--group-by` value (`grouped`), the
//! target's watched figures (`watched`), the generator's CPU and send lag with its warnings, the
//! thresholds' state). `q` or Ctrl-C stops the run cleanly: its record is written.
//!
//! It is an [`Observer`]: on the control thread it only clones what it is handed and sends it
//! over a channel; a thread of its own gathers the figures (`state`), reads the keys and
//! redraws (`draw`) at most [`FRAMES_PER_SEC`] times a second. Nothing is done per request.
//! The terminal is given back on every way out (`terminal`).

mod draw;
mod grouped;
mod state;
mod terminal;
mod watched;

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};

use crate::engine::{Clock, CpuTimes, Live, Observer, StopHandle, process_cpu};
use crate::plan::Plan;
use crate::record::model::Ci95;
use crate::record::recorder::IntervalSnapshot;
use crate::record::series::SecondStats;
use crate::run::watching::WatchFeed;

use state::State;

/// Redraws per second, at most.
pub const FRAMES_PER_SEC: u32 = 4;
/// A run planned shorter than this (warm-up included) keeps the progress line; one without a
/// planned end shows the view once it has run this long.
pub const MIN_RUN: Duration = Duration::from_secs(3);
/// How the record names a run stopped with the `q` key (`interrupted`).
pub const STOPPED_BY_KEY: &str = "key q";

/// Whether the view may be shown: stderr is a terminal that can draw it, and not under CI
/// (`CI` set to anything but `false` or `0`).
pub fn possible() -> bool {
    use std::io::IsTerminal;
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    std::io::stderr().is_terminal() && !ci && !dumb
}

/// Whether `plan` runs long enough for the view (see [`MIN_RUN`]).
pub fn long_enough(plan: &Plan) -> bool {
    let ends: Option<Vec<Duration>> = plan
        .scenarios
        .iter()
        .map(|sc| sc.duration().map(|d| sc.start_after + d))
        .collect();
    ends.is_none_or(|ends| ends.into_iter().max().unwrap_or_default() >= MIN_RUN)
}

/// What the view's thread is handed.
enum Message {
    Interval(Box<IntervalSnapshot>),
    Second(Box<SecondStats>),
    Tick(Live),
    Ci95(Box<(Ci95, Vec<Ci95>)>),
}

/// What the view needs besides the figures.
#[derive(Clone)]
struct Control {
    stop: StopHandle,
    /// Ctrl-C is raised as SIGINT for the process's signal watcher (see `engine::signals`).
    signals: bool,
    color: bool,
    /// What the watcher of the run (`--watch`) last published.
    watched: WatchFeed,
}

/// The live view as an observer of one run.
pub struct LiveView {
    plan: Plan,
    control: Control,
    tx: Option<Sender<Message>>,
    thread: Option<JoinHandle<()>>,
}

impl LiveView {
    /// A view of the run of `plan`, which `q` and Ctrl-C stop through `stop`; `signals`: the run
    /// handles SIGINT itself (Ctrl-C is then passed on as one); `color`: draw in colour.
    pub fn new(plan: &Plan, stop: StopHandle, signals: bool, color: bool) -> Self {
        Self {
            plan: plan.clone(),
            control: Control {
                stop,
                signals,
                color,
                watched: WatchFeed::default(),
            },
            tx: None,
            thread: None,
        }
    }

    /// Where the run's [`Watcher`](crate::run::watching::Watcher) leaves its latest figures
    /// for the view's `--watch` panel ([`Watcher::feed`](crate::run::watching::Watcher::feed)).
    pub fn watch_feed(&self) -> WatchFeed {
        self.control.watched.clone()
    }

    fn send(&self, message: Message) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(message);
        }
    }

    /// Ends the view's thread and waits for it: the terminal is back when this returns.
    fn close(&mut self) {
        self.tx = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        terminal::give_back();
    }
}

impl Observer for LiveView {
    fn wants_group_values(&self) -> bool {
        !self.plan.target.group_by.is_empty()
    }

    fn wants_stream_latencies(&self) -> bool {
        self.plan.has_streams()
    }

    fn start(&mut self, clock: &Clock) {
        let (tx, rx) = channel();
        let state = State::new(self.plan.clone(), *clock);
        let control = self.control.clone();
        let thread = std::thread::Builder::new()
            .name("volley-view".into())
            .spawn(move || show(state, &rx, &control));
        if let Ok(thread) = thread {
            self.tx = Some(tx);
            self.thread = Some(thread);
        }
    }

    fn interval(&mut self, snapshot: &IntervalSnapshot) {
        self.send(Message::Interval(Box::new(snapshot.clone())));
    }

    fn second(&mut self, second: &SecondStats) {
        self.send(Message::Second(Box::new(second.clone())));
    }

    fn wants_ci95(&self) -> bool {
        true
    }

    fn ci95(&mut self, ci: &Ci95, groups: &[Ci95]) {
        self.send(Message::Ci95(Box::new((ci.clone(), groups.to_vec()))));
    }

    fn tick(&mut self, live: &Live) {
        self.send(Message::Tick(*live));
    }

    fn finish(&mut self) {
        self.close();
    }
}

impl Drop for LiveView {
    fn drop(&mut self) {
        self.close();
    }
}

/// The view's thread: gathers, reads keys, redraws; returns when the run's observer is done.
fn show(mut state: State, rx: &Receiver<Message>, control: &Control) {
    let frame = Duration::from_secs(1) / FRAMES_PER_SEC;
    let mut screen = None;
    let mut tried = false;
    let mut next_draw = Instant::now();
    let mut stopping = false;
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(message) => {
                apply(&mut state, message);
                while let Ok(message) = rx.try_recv() {
                    apply(&mut state, message);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if !tried && (state.planned().is_some() || state.elapsed() >= MIN_RUN) {
            tried = true;
            screen = terminal::Screen::take().ok();
        }
        let Some(s) = screen.as_mut() else { continue };
        if keys(control, &mut stopping) {
            screen = None;
            continue;
        }
        let now = Instant::now();
        if now >= next_draw {
            next_draw = now + frame;
            if let Some(watched) = control.watched.take() {
                state.watched = Some(watched);
            }
            let view = draw::View {
                state: &state,
                stopping,
                color: control.color,
            };
            if s.term.draw(|f| draw::draw(f, &view)).is_err() {
                screen = None;
            }
        }
    }
}

fn apply(state: &mut State, message: Message) {
    match message {
        Message::Interval(s) => state.interval(&s),
        Message::Second(s) => state.second(&s),
        Message::Tick(live) => state.tick(&live, process_cpu(), CpuTimes::now()),
        Message::Ci95(ci) => {
            let (run, groups) = *ci;
            state.ci95 = Some(run);
            state.group_ci95 = groups;
        }
    }
}

/// Reads the keys waiting: `q` stops the run, Ctrl-C too (a second one exits at once, as
/// without the view). Returns true when the terminal must be given back now.
fn keys(control: &Control, stopping: &mut bool) -> bool {
    while event::poll(Duration::ZERO).unwrap_or(false) {
        let Ok(Event::Key(key)) = event::read() else {
            continue;
        };
        if key.kind != KeyEventKind::Press {
            continue;
        }
        let ctrl_c =
            key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        if matches!(key.code, KeyCode::Char('q' | 'Q')) && !ctrl_c {
            if !*stopping {
                control.stop.interrupt_by(STOPPED_BY_KEY);
                *stopping = true;
            }
        } else if ctrl_c {
            let again = *stopping;
            if again {
                // The process is about to exit: the terminal first.
                terminal::give_back();
            }
            if control.signals || again {
                let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGINT);
            } else {
                control.stop.interrupt_by("SIGINT");
            }
            *stopping = true;
            if again {
                return true;
            }
        }
    }
    false
}
