//! The exporter as an [`Observer`]: it turns the workers' per-second interval snapshots into the
//! cumulative figures of each exported scope (the whole run, each scenario, each step) and
//! publishes them as a [`LiveSnapshot`] that the metrics page and the remote-write pusher read.
//! It runs on the control thread, off the hot path; the workers do no extra work for it but keep
//! each group's interval figures (see [`Observer::wants_groups`]) when the plan has groups.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;

use crate::engine::{Clock, CpuTimes, Live, Observer, UsageShares, process_cpu};
use crate::plan::Plan;
use crate::record::model::{GroupKind, LoadModel};
use crate::record::recorder::{Counters, IntervalSnapshot, Tally};
use crate::record::series::SecondStats;
use crate::schedule::Ramp;

use super::{LiveSnapshot, ScopeFigures};

/// The latest snapshot: written by the [`Exporter`], read by the page and the pusher.
pub type Shared = Arc<Mutex<LiveSnapshot>>;

/// A new, empty shared snapshot.
pub fn shared() -> Shared {
    Arc::new(Mutex::new(LiveSnapshot::default()))
}

/// The schedule of one scenario, for the gauges the plan defines (active VUs, asked rate).
struct Schedule {
    start_after: Duration,
    duration: Option<Duration>,
    ramp: Ramp,
    model: LoadModel,
}

impl Schedule {
    /// (VUs the closed model runs, rate the open model asks) at `t` since the schedule's
    /// origin; zero outside the scenario's time.
    fn at(&self, t: Duration) -> (u64, f64) {
        let Some(rel) = t.checked_sub(self.start_after) else {
            return (0, 0.0);
        };
        if self.duration.is_some_and(|d| rel >= d) {
            return (0, 0.0);
        }
        let level = self.ramp.level_at(rel).max(0.0);
        if self.model == LoadModel::Open {
            (0, level)
        } else {
            ((level + 1e-9).floor() as u64, 0.0)
        }
    }
}

/// Fills the shared [`LiveSnapshot`] as the run goes (see the module doc).
pub struct Exporter {
    shared: Shared,
    scopes: Vec<ScopeFigures>,
    /// Per scope: the scenarios (indices) whose schedule gives its gauges.
    gauges_from: Vec<Vec<usize>>,
    /// Scope of each plan group (`None`: a phase, not exported).
    by_group: Vec<Option<usize>>,
    schedules: Vec<Schedule>,
    origin: Option<Instant>,
    /// Completed iterations per second not yet merged, per scope.
    completed: BTreeMap<u64, Vec<u64>>,
    /// The generator's CPU and steal shares (`None`: the figures are not this process's, a
    /// coordinator's).
    generator: Option<UsageShares>,
}

impl Exporter {
    /// An exporter for `plan` publishing into `shared` (now: every figure at zero).
    pub fn new(plan: &Plan, shared: Shared) -> Self {
        let schedules: Vec<Schedule> = plan
            .scenarios
            .iter()
            .map(|sc| Schedule {
                start_after: sc.start_after,
                duration: sc.duration(),
                ramp: sc.profile.ramp().clone(),
                model: sc.profile.model(),
            })
            .collect();
        let mut scopes = vec![scope("", "", true)];
        let mut gauges_from = vec![(0..schedules.len()).collect::<Vec<_>>()];
        let mut by_group = Vec::with_capacity(plan.groups.len());
        for g in &plan.groups {
            let (figures, from) = match g.kind {
                GroupKind::Scenario => (
                    scope(&g.name, "", true),
                    plan.scenarios.iter().position(|s| s.name == g.name),
                ),
                GroupKind::Step => (
                    scope(g.scenario.as_deref().unwrap_or(""), &g.name, false),
                    None,
                ),
                GroupKind::Phase => {
                    by_group.push(None);
                    continue;
                }
            };
            by_group.push(Some(scopes.len()));
            scopes.push(figures);
            gauges_from.push(from.into_iter().collect());
        }
        let mut exporter = Self {
            shared,
            scopes,
            gauges_from,
            by_group,
            schedules,
            origin: None,
            completed: BTreeMap::new(),
            generator: Some(UsageShares::new(plan.threads)),
        };
        exporter.gauges(None);
        exporter.publish();
        exporter
    }

    /// An exporter of the whole run only, publishing into `shared`: for a writer that knows no
    /// plan (a coordinator given none), so no scenario or step scopes and no schedule gauges.
    pub fn whole_run(shared: Shared) -> Self {
        let exporter = Self {
            shared,
            scopes: vec![scope("", "", true)],
            gauges_from: vec![Vec::new()],
            by_group: Vec::new(),
            schedules: Vec::new(),
            origin: None,
            completed: BTreeMap::new(),
            generator: None,
        };
        exporter.publish();
        exporter
    }

    /// The scopes' gauges from the schedule at `now` (`None`: before the start or after the
    /// end: nothing runs).
    fn gauges(&mut self, now: Option<Instant>) {
        let t = match (now, self.origin) {
            (Some(now), Some(origin)) => Some(now.saturating_duration_since(origin)),
            _ => None,
        };
        for (scope, from) in self.scopes.iter_mut().zip(&self.gauges_from) {
            let (mut vus, mut rate, mut closed, mut open) = (0, 0.0, false, false);
            for s in from.iter().map(|&i| &self.schedules[i]) {
                let (v, r) = t.map_or((0, 0.0), |t| s.at(t));
                (vus, rate) = (vus + v, rate + r);
                let is_open = s.model == LoadModel::Open;
                (closed, open) = (closed || !is_open, open || is_open);
            }
            scope.active_vus = closed.then_some(vus);
            scope.asked_per_s = open.then_some(rate);
        }
    }

    fn publish(&self) {
        let unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let mut snapshot = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        snapshot.unix_ms = unix_ms;
        snapshot.scopes.clone_from(&self.scopes);
    }

    /// Adds one scope's interval figures; counts its completed iterations under `second`.
    fn add(&mut self, i: usize, second: u64, c: &Counters, h: &Histogram<u64>, t: &Tally) {
        let scope = &mut self.scopes[i];
        scope.requests += c.requests;
        for (kind, n) in &t.errors {
            match scope.errors.iter_mut().find(|(k, _)| *k == kind.name()) {
                Some((_, total)) => *total += n,
                None => scope.errors.push((kind.name(), *n)),
            }
        }
        for (status, n) in &t.statuses {
            match scope.statuses.iter_mut().find(|(s, _)| s == status) {
                Some((_, total)) => *total += n,
                None => scope.statuses.push((*status, *n)),
            }
        }
        scope.errors.sort_unstable();
        scope.statuses.sort_unstable();
        if let Some(dropped) = scope.dropped.as_mut() {
            *dropped += t.dropped;
        }
        if !t.streams.is_empty() {
            scope.streams.get_or_insert_default().add(&t.streams);
        }
        scope.latency.add_hdr_us(h);
        if scope.achieved_per_s.is_some() {
            let len = self.scopes.len();
            self.completed.entry(second).or_insert_with(|| vec![0; len])[i] += t.completed;
        }
    }
}

/// An empty scope; `iterations`: its iterations are counted (the whole run, a scenario).
fn scope(scenario: &str, step: &str, iterations: bool) -> ScopeFigures {
    ScopeFigures {
        scenario: scenario.to_string(),
        step: step.to_string(),
        dropped: iterations.then_some(0),
        achieved_per_s: iterations.then_some(0.0),
        in_flight: (scenario.is_empty() && step.is_empty()).then_some(0),
        ..ScopeFigures::default()
    }
}

impl Observer for Exporter {
    fn wants_groups(&self) -> bool {
        self.scopes.len() > 1
    }

    fn start(&mut self, clock: &Clock) {
        self.origin = Some(clock.start);
    }

    fn interval(&mut self, s: &IntervalSnapshot) {
        self.add(0, s.second, &s.counters, &s.latency, &s.tally);
        for g in &s.groups {
            if let Some(i) = self.by_group.get(g.group).copied().flatten() {
                self.add(i, s.second, &g.counters, &g.latency, &g.tally);
            }
        }
    }

    fn second(&mut self, second: &SecondStats) {
        self.scopes[0].in_flight = Some(second.in_flight);
        let row = self.completed.remove(&second.t_s);
        self.completed.retain(|s, _| *s > second.t_s);
        let span = second.span_s.max(1e-3);
        for (i, scope) in self.scopes.iter_mut().enumerate() {
            if let Some(rate) = scope.achieved_per_s.as_mut() {
                *rate = row.as_ref().map_or(0.0, |r| r[i] as f64 / span);
            }
        }
        self.publish();
    }

    fn tick(&mut self, live: &Live) {
        if let Some(g) = self.generator.as_mut() {
            let (cpu, steal) = g.sample(live.now, process_cpu(), CpuTimes::now());
            let run = &mut self.scopes[0];
            run.generator_cpu = cpu.or(run.generator_cpu);
            run.generator_steal = steal.or(run.generator_steal);
        }
        self.gauges(Some(live.now));
        self.publish();
    }

    fn finish(&mut self) {
        // Every worker is done: nothing is in flight or scheduled any more.
        self.gauges(None);
        self.scopes[0].in_flight = Some(0);
        self.publish();
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
