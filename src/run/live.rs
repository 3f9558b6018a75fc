//! Thresholds judged during the run (`abort_on_fail`): the control thread accumulates the workers'
//! per-second snapshots and checks the thresholds after their grace period.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::plan::threshold::{Counts, Filter, Observed};
use crate::plan::{Plan, check_list};
use crate::record::model::GroupKind;
use crate::record::recorder::{Counters, IntervalSnapshot, new_histogram};

use crate::engine::{Abort, Observer};

/// Cumulative figures of the run so far: of the seconds every worker has reported. A second only
/// some workers have reported is held back, so that a rate is never judged on part of the
/// workers' requests over the whole time (which failed `rps > N` thresholds that held).
///
/// The distributed coordinator judges a whole test with one, fed each generator's seconds as
/// one "worker" each.
pub struct LiveJudge {
    enabled: bool,
    workers: usize,
    total: (Histogram<u64>, Counters),
    groups: Vec<(Histogram<u64>, Counters)>,
    checks: Vec<[u64; 2]>,
    seconds: f64,
    /// Seconds not yet reported by every worker: how many have, and their figures so far.
    pending: BTreeMap<u64, (usize, Box<LiveFigures>)>,
}

/// The figures of one second (or of the run so far).
struct LiveFigures {
    total: (Histogram<u64>, Counters),
    groups: Vec<(Histogram<u64>, Counters)>,
    checks: Vec<[u64; 2]>,
    end_s: f64,
}

impl LiveFigures {
    fn new(groups: usize, checks: usize) -> Self {
        Self {
            total: (new_histogram(), Counters::default()),
            groups: (0..groups)
                .map(|_| (new_histogram(), Counters::default()))
                .collect(),
            checks: vec![[0, 0]; checks],
            end_s: 0.0,
        }
    }

    fn add(&mut self, s: &IntervalSnapshot) {
        let _ = self.total.0.add(&s.latency);
        self.total.1.merge(&s.counters);
        for g in &s.groups {
            if let Some((h, c)) = self.groups.get_mut(g.group) {
                let _ = h.add(&g.latency);
                c.merge(&g.counters);
            }
        }
        for (a, b) in self.checks.iter_mut().zip(&s.checks) {
            a[0] += b[0];
            a[1] += b[1];
        }
        self.end_s = self.end_s.max(s.second as f64 + s.span_s);
    }
}

impl LiveJudge {
    /// A judge of `plan`'s `abort_on_fail` thresholds, fed by `plan.threads` workers with
    /// `checks` checks (the length of [`check_list`]).
    pub fn new(plan: &Plan, checks: usize) -> Self {
        Self::with_workers(plan, checks, plan.threads)
    }

    /// Like [`new`](Self::new), fed by `workers` sources of snapshots (the coordinator's
    /// generators).
    pub fn with_workers(plan: &Plan, checks: usize, workers: usize) -> Self {
        let enabled = plan.thresholds.iter().any(|t| t.abort_on_fail);
        let groups = if enabled { plan.groups.len() } else { 0 };
        let part = LiveFigures::new(groups, checks);
        Self {
            enabled,
            workers: workers.max(1),
            total: part.total,
            groups: part.groups,
            checks: part.checks,
            seconds: 0.0,
            pending: BTreeMap::new(),
        }
    }

    /// Adds one worker's snapshot; its second counts once every worker has reported it.
    pub fn add(&mut self, s: &IntervalSnapshot) {
        if !self.enabled {
            return;
        }
        let (groups, checks) = (self.groups.len(), self.checks.len());
        let (reported, part) = self
            .pending
            .entry(s.second)
            .or_insert_with(|| (0, Box::new(LiveFigures::new(groups, checks))));
        part.add(s);
        *reported += 1;
        self.settle();
    }

    /// A worker has finished: it reports no later second, so seconds the others have reported
    /// are complete without it.
    pub fn worker_done(&mut self) {
        self.workers = self.workers.saturating_sub(1).max(1);
        if self.enabled {
            self.settle();
        }
    }

    /// Counts every pending second that all running workers have reported, in time order.
    fn settle(&mut self) {
        while let Some(entry) = self.pending.first_entry() {
            if entry.get().0 < self.workers {
                return;
            }
            let (_, part) = entry.remove();
            let _ = self.total.0.add(&part.total.0);
            self.total.1.merge(&part.total.1);
            for ((h, c), (ph, pc)) in self.groups.iter_mut().zip(&part.groups) {
                let _ = h.add(ph);
                c.merge(pc);
            }
            for (a, b) in self.checks.iter_mut().zip(&part.checks) {
                a[0] += b[0];
                a[1] += b[1];
            }
            self.seconds = self.seconds.max(part.end_s);
        }
    }

    /// The `abort_on_fail` thresholds failing now (after their grace period), each with the
    /// value observed: indices into the plan's thresholds. `elapsed`: time since measuring
    /// began.
    pub fn failing(&self, plan: &Plan, elapsed: Duration) -> Vec<(usize, Option<f64>)> {
        if !self.enabled || self.seconds == 0.0 {
            return Vec::new();
        }
        let view = View { judge: self, plan };
        plan.thresholds
            .iter()
            .enumerate()
            .filter(|(_, t)| t.abort_on_fail && elapsed >= t.grace)
            .filter_map(|(i, t)| {
                let observed = t.observe(&view);
                // Nothing measured yet is not a failure while the run goes on.
                (observed.is_some() && !t.passes(observed)).then_some((i, observed))
            })
            .collect()
    }
}

struct View<'a> {
    judge: &'a LiveJudge,
    plan: &'a Plan,
}

impl View<'_> {
    fn matching(&self, filter: &Filter) -> Vec<usize> {
        self.plan
            .groups
            .iter()
            .enumerate()
            .filter(|(i, g)| match filter {
                Filter::Scenario(s) => g.kind == GroupKind::Scenario && &g.name == s,
                Filter::Step(s) => g.kind == GroupKind::Step && &g.name == s,
                Filter::Phase(p) => {
                    g.kind == GroupKind::Phase
                        && (&g.name == p || phase_number(self.plan, *i).is_some_and(|n| &n == p))
                }
            })
            .map(|(i, _)| i)
            .collect()
    }
}

/// The 1-based number of phase group `group` within its scenario.
fn phase_number(plan: &Plan, group: usize) -> Option<String> {
    plan.scenarios.iter().find_map(|sc| {
        sc.phases
            .iter()
            .position(|p| p.group == group)
            .map(|i| (i + 1).to_string())
    })
}

impl Observed for View<'_> {
    fn latency(&self, filter: Option<&Filter>) -> Option<Histogram<u64>> {
        match filter {
            None => Some(self.judge.total.0.clone()),
            Some(f) => {
                let mut h = new_histogram();
                for g in self.matching(f) {
                    let _ = h.add(&self.judge.groups[g].0);
                }
                Some(h)
            }
        }
    }

    fn counts(&self, filter: Option<&Filter>) -> Counts {
        let of = Counts::of;
        match filter {
            None => of(&self.judge.total.1),
            Some(f) => self
                .matching(f)
                .into_iter()
                .fold(Counts::default(), |a, g| {
                    let c = of(&self.judge.groups[g].1);
                    Counts {
                        requests: a.requests + c.requests,
                        attempts: a.attempts + c.attempts,
                        errors: a.errors + c.errors,
                        generator_limited: a.generator_limited + c.generator_limited,
                    }
                }),
        }
    }

    fn checks(&self, filter: Option<&Filter>) -> (u64, u64) {
        filtered_checks(self.plan, &self.judge.checks, filter)
    }

    /// During the run: requests so far over the seconds measured so far.
    fn throughput(&self, filter: Option<&Filter>) -> Option<f64> {
        (self.judge.seconds > 0.0).then(|| self.counts(filter).requests as f64 / self.judge.seconds)
    }
}

/// The `abort_on_fail` thresholds as an [`Observer`]: judged on the seconds every running worker
/// has reported, after each snapshot and each worker's end.
pub(super) struct LiveThresholds<'a> {
    judge: LiveJudge,
    plan: &'a Plan,
}

impl<'a> LiveThresholds<'a> {
    /// The `abort_on_fail` thresholds of `plan` (none: an observer that never stops the run).
    pub(super) fn new(plan: &'a Plan) -> Self {
        Self {
            judge: LiveJudge::new(plan, check_list(plan).len()),
            plan,
        }
    }
}

impl Observer for LiveThresholds<'_> {
    /// A threshold on a scenario or step is judged on that group's figures.
    fn wants_groups(&self) -> bool {
        self.plan.thresholds.iter().any(|t| t.abort_on_fail)
    }

    fn interval(&mut self, snapshot: &IntervalSnapshot) {
        self.judge.add(snapshot);
    }

    fn worker_done(&mut self) {
        self.judge.worker_done();
    }

    fn stop(&mut self, elapsed: Duration) -> Option<Abort> {
        let thresholds = self.judge.failing(self.plan, elapsed);
        (!thresholds.is_empty()).then_some(Abort {
            at: elapsed,
            thresholds,
        })
    }
}

/// Passed and failed checks of `plan` (counts in [`check_list`] order) that `filter` covers.
pub(super) fn filtered_checks(
    plan: &Plan,
    checks: &[[u64; 2]],
    filter: Option<&Filter>,
) -> (u64, u64) {
    check_list(plan)
        .iter()
        .zip(checks)
        .filter(|((scenario, step, _), _)| match filter {
            None | Some(Filter::Phase(_)) => true,
            Some(Filter::Scenario(s)) => scenario == s,
            Some(Filter::Step(s)) => step == s,
        })
        .fold((0, 0), |(p, f), (_, c)| (p + c[0], f + c[1]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::read::{ReadOptions, read_str};

    fn plan(threads: usize) -> Plan {
        let text = "[target]\nbase_url = \"http://127.0.0.1:9\"\n\
            [[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"constant-vus\"\n\
            vus = 4\nduration = \"8s\"\n[[scenario.step]]\nname = \"a\"\npath = \"/\"\n\
            [thresholds]\nrps = [{ condition = \"> 150\", abort_on_fail = true }]\n";
        let options = ReadOptions {
            threads: Some(threads),
            ..Default::default()
        };
        read_str(text, std::path::Path::new("t.toml"), &options)
            .and_then(|d| d.prepare())
            .unwrap()
    }

    fn snapshot(second: u64, requests: u64) -> IntervalSnapshot {
        IntervalSnapshot {
            second,
            span_s: 1.0,
            counters: Counters {
                requests,
                ..Counters::default()
            },
            latency: new_histogram(),
            in_flight: 0,
            groups: Vec::new(),
            checks: Vec::new(),
            tally: Default::default(),
            breakdown: Default::default(),
        }
    }

    #[test]
    fn a_rate_is_judged_on_the_seconds_every_worker_reported() {
        let plan = plan(4);
        assert_eq!(plan.threads, 4);
        let mut judge = LiveJudge::new(&plan, 0);
        let at = Duration::from_secs(1);
        // Four workers at 95 req/s each: 380 req/s, well above 150. Judged after one worker's
        // report (95 req/s over the whole second), it used to fail and abort the run.
        for worker in 1..=4 {
            judge.add(&snapshot(0, 95));
            assert!(
                judge.failing(&plan, at).is_empty(),
                "failed after {worker} of 4 workers reported"
            );
        }
        // Then the target stalls: (380 + 40 + 0) / 3 s = 140 req/s fails, and says so.
        for second in [1, 2] {
            for _ in 0..4 {
                judge.add(&snapshot(second, if second == 1 { 10 } else { 0 }));
            }
        }
        let failed = judge.failing(&plan, Duration::from_secs(3));
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert_eq!(failed[0].0, 0);
        assert!((failed[0].1.unwrap() - 140.0).abs() < 1e-9, "{failed:?}");
    }
}
