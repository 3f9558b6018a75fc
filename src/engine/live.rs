//! Thresholds judged during the run (`abort_on_fail`): the control thread accumulates the workers'
//! per-second snapshots and checks the thresholds after their grace period.

use std::time::Duration;

use hdrhistogram::Histogram;

use crate::plan::threshold::{Counts, Filter, Observed};
use crate::plan::{Plan, check_list};
use crate::record::model::GroupKind;
use crate::record::recorder::{Counters, IntervalSnapshot, new_histogram};

/// Cumulative figures of the run so far.
pub(super) struct LiveJudge {
    enabled: bool,
    total: (Histogram<u64>, Counters),
    groups: Vec<(Histogram<u64>, Counters)>,
    checks: Vec<[u64; 2]>,
    seconds: f64,
}

impl LiveJudge {
    pub(super) fn new(plan: &Plan, checks: usize) -> Self {
        let enabled = plan.thresholds.iter().any(|t| t.abort_on_fail);
        Self {
            enabled,
            total: (new_histogram(), Counters::default()),
            groups: if enabled {
                (0..plan.groups.len())
                    .map(|_| (new_histogram(), Counters::default()))
                    .collect()
            } else {
                Vec::new()
            },
            checks: vec![[0, 0]; checks],
            seconds: 0.0,
        }
    }

    pub(super) fn add(&mut self, s: &IntervalSnapshot) {
        if !self.enabled {
            return;
        }
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
        self.seconds = self.seconds.max(s.second as f64 + s.span_s);
    }

    /// Indices of `abort_on_fail` thresholds failing now (after their grace period).
    pub(super) fn failing(&self, plan: &Plan, elapsed: Duration) -> Vec<usize> {
        if !self.enabled {
            return Vec::new();
        }
        let view = View { judge: self, plan };
        plan.thresholds
            .iter()
            .enumerate()
            .filter(|(_, t)| t.abort_on_fail && elapsed >= t.grace)
            .filter(|(_, t)| {
                let observed = t.observe(&view);
                // Nothing measured yet is not a failure while the run goes on.
                observed.is_some() && !t.passes(observed)
            })
            .map(|(i, _)| i)
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
        let of = |c: &Counters| Counts {
            requests: c.requests,
            attempts: c.attempts(),
            errors: c.errors,
        };
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
                    }
                }),
        }
    }

    fn checks(&self, filter: Option<&Filter>) -> (u64, u64) {
        check_list(self.plan)
            .iter()
            .zip(&self.judge.checks)
            .filter(|((scenario, step, _), _)| match filter {
                None | Some(Filter::Phase(_)) => true,
                Some(Filter::Scenario(s)) => scenario == s,
                Some(Filter::Step(s)) => step == s,
            })
            .fold((0, 0), |(p, f), (_, c)| (p + c[0], f + c[1]))
    }

    /// During the run: requests so far over the seconds measured so far.
    fn throughput(&self, filter: Option<&Filter>) -> Option<f64> {
        (self.judge.seconds > 0.0).then(|| self.counts(filter).requests as f64 / self.judge.seconds)
    }
}
