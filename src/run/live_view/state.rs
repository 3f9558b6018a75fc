//! What the live view shows, gathered on its own thread from what the run's observer hands over:
//! the merged seconds, each worker's interval snapshots and the running totals. Every figure is
//! defined in docs/measurement.md ("The live view").

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::engine::{Clock, CpuTimes, Live, UsageShares};
use crate::plan::threshold::{Counts, Filter, Observed, ThresholdMetric};
use crate::plan::{Plan, check_list};
use crate::record::error_kind::ErrorKind;
use crate::record::model::{GroupKind, WarningCode};
use crate::record::recorder::{Counters, IntervalSnapshot, new_histogram};
use crate::record::series::SecondStats;
use crate::run::watching::WatchNow;

use super::grouped::Grouped;

/// Seconds the sparklines cover.
pub(super) const SPARK_SECONDS: usize = 60;
/// Generator CPU (the process's, over its worker threads) at or above this share is a warning,
/// as a saturated worker thread is in the record's warnings.
const BUSY_CPU: f64 = crate::analysis::SATURATED_UTILIZATION;
/// Send lag p99 above this is a warning, ms (as in the record's warnings).
const LAG_LIMIT_MS: f64 = crate::analysis::LAG_P99_LIMIT_MS;

/// CPU steal as the live view shows it: the share of the machine's CPU time its hypervisor
/// took, 0–1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct StealNow {
    /// Over the last second or so.
    pub last_second: f64,
    /// Since the run's start.
    pub so_far: f64,
}

/// A warning seen during the run: what, when it was first seen and how often since.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Seen {
    /// Seconds since the run's start when first seen.
    pub at_s: f64,
    /// What, in words (updated with the latest value).
    pub message: String,
    /// Seconds it was seen in.
    pub times: u32,
    code: WarningCode,
}

/// The live view's figures.
pub(super) struct State {
    pub plan: Plan,
    pub clock: Clock,
    /// When the figures were last brought up to date.
    pub now: Instant,
    /// The latest merged seconds, oldest first (at most [`SPARK_SECONDS`]).
    pub seconds: VecDeque<SecondStats>,
    /// Latency of every measured response so far, µs.
    pub latency: Histogram<u64>,
    /// Measured totals so far (of the snapshots received).
    pub counts: Counters,
    /// Running totals of the latest tick (warm-up included).
    pub live: Option<Live>,
    /// Responses by status code, ascending.
    pub statuses: Vec<(u16, u64)>,
    /// Failures by kind.
    pub errors: [u64; ErrorKind::COUNT],
    /// Per result group: the run's counters so far and those of its latest seconds.
    pub groups: Vec<GroupCounts>,
    /// Per check id: [passed, failed].
    pub checks: Vec<[u64; 2]>,
    /// Send lag p99 of the latest second, the largest of the workers', ms.
    pub lag_p99_ms: Option<(u64, f64)>,
    /// Process CPU over wall time over the worker threads, since the last sample (0–1).
    pub cpu: Option<f64>,
    usage: UsageShares,
    /// CPU steal, sampled about once a second (none where it cannot be read).
    pub steal: Option<StealNow>,
    steal_start: Option<CpuTimes>,
    /// Warnings as they happened.
    pub warnings: Vec<Seen>,
    /// Seconds covered by the merged seconds so far (the rates' denominator).
    pub measured_s: f64,
    /// The 95 % intervals over the merged seconds so far, narrowing as the run goes.
    pub ci95: Option<crate::record::model::Ci95>,
    /// Each result group's 95 % intervals so far, by group id (empty while none, and for a
    /// run that keeps no group intervals).
    pub group_ci95: Vec<crate::record::model::Ci95>,
    /// Per `--group-by` key, its values' figures so far.
    pub grouped: Grouped,
    /// What the watches (`--watch`) said last, once they have said anything.
    pub watched: Option<WatchNow>,
    /// Streams ended so far and their messages.
    pub streams: crate::record::recorder::StreamTally,
    /// The latencies of the streams ended so far (none before the first).
    pub stream_latency: Option<Box<crate::record::recorder::StreamLatencies>>,
}

/// Seconds a group's own counters are kept for: a worker may report a second or two ahead of the
/// latest second every worker has reported, which is the one the view shows.
const RECENT_SECONDS: usize = 4;

/// One result group's counters as the live view keeps them.
#[derive(Debug, Clone, Copy)]
pub struct GroupCounts {
    /// Measured so far.
    pub total: Counters,
    /// Those of the latest few seconds, each with its second since measuring began (slot:
    /// second mod [`RECENT_SECONDS`]; `u64::MAX`: none yet).
    recent: [(u64, Counters); RECENT_SECONDS],
}

impl Default for GroupCounts {
    fn default() -> Self {
        Self {
            total: Counters::default(),
            recent: [(u64::MAX, Counters::default()); RECENT_SECONDS],
        }
    }
}

impl GroupCounts {
    /// Adds one worker's counters of `second`.
    fn add(&mut self, second: u64, c: &Counters) {
        self.total.merge(c);
        let slot = &mut self.recent[second as usize % RECENT_SECONDS];
        if slot.0 == u64::MAX || slot.0 < second {
            *slot = (second, Counters::default());
        } else if slot.0 > second {
            // A worker this far behind the others: its second is no longer shown.
            return;
        }
        slot.1.merge(c);
    }

    /// The counters of second `t` (since measuring began), if it is one of the latest few;
    /// `None` also when the group had nothing in it.
    pub fn in_second(&self, t: u64) -> Option<&Counters> {
        let (second, c) = &self.recent[t as usize % RECENT_SECONDS];
        (*second == t).then_some(c)
    }
}

impl State {
    pub(super) fn new(plan: Plan, clock: Clock) -> Self {
        let groups = vec![GroupCounts::default(); plan.groups.len()];
        let checks = vec![[0, 0]; check_list(&plan).len()];
        let grouped = Grouped::new(&plan);
        let usage = UsageShares::new(plan.threads);
        Self {
            plan,
            clock,
            now: clock.start,
            seconds: VecDeque::with_capacity(SPARK_SECONDS + 1),
            latency: new_histogram(),
            counts: Counters::default(),
            live: None,
            statuses: Vec::new(),
            errors: [0; ErrorKind::COUNT],
            groups,
            checks,
            lag_p99_ms: None,
            cpu: None,
            usage,
            steal: None,
            steal_start: None,
            warnings: Vec::new(),
            measured_s: 0.0,
            ci95: None,
            group_ci95: Vec::new(),
            grouped,
            watched: None,
            streams: Default::default(),
            stream_latency: None,
        }
    }

    /// Time since the run's start (warm-up included).
    pub(super) fn elapsed(&self) -> Duration {
        self.now.saturating_duration_since(self.clock.start)
    }

    /// The run's planned length, warm-up included (`None`: until its iterations are done).
    pub(super) fn planned(&self) -> Option<Duration> {
        let warmup = self.clock.measure_start.duration_since(self.clock.start);
        self.clock.measured.map(|m| m + warmup)
    }

    /// One worker's snapshot of one second.
    pub(super) fn interval(&mut self, s: &IntervalSnapshot) {
        let _ = self.latency.add(&s.latency);
        self.counts.merge(&s.counters);
        self.streams.add(&s.tally.streams);
        if let Some(l) = &s.breakdown.streams {
            self.stream_latency.get_or_insert_with(Box::default).add(l);
        }
        for &(code, n) in &s.breakdown.statuses {
            match self.statuses.binary_search_by_key(&code, |(c, _)| *c) {
                Ok(i) => self.statuses[i].1 += n,
                Err(i) => self.statuses.insert(i, (code, n)),
            }
        }
        for &(kind, n) in &s.breakdown.errors {
            self.errors[kind.index()] += n;
        }
        for (g, c) in self.groups.iter_mut().zip(&s.breakdown.groups) {
            g.add(s.second, c);
        }
        self.grouped.add(s.second, &s.breakdown.grouped);
        for (a, b) in self.checks.iter_mut().zip(&s.checks) {
            a[0] += b[0];
            a[1] += b[1];
        }
        let lag_ms = s.breakdown.lag_p99_us as f64 / 1000.0;
        match &mut self.lag_p99_ms {
            Some((second, worst)) if *second == s.second => *worst = worst.max(lag_ms),
            Some((second, _)) if *second > s.second => {}
            _ => self.lag_p99_ms = Some((s.second, lag_ms)),
        }
        if self.is_open() && lag_ms > LAG_LIMIT_MS {
            self.warn(
                WarningCode::SchedulingLag,
                format!("requests sent late: send lag p99 {lag_ms:.2} ms > {LAG_LIMIT_MS} ms"),
            );
        }
        if s.counters.dropped > 0 {
            let dropped = self.counts.dropped;
            self.warn(
                WarningCode::DroppedRequests,
                format!("{dropped} iterations dropped: every VU was busy (the in-flight cap)"),
            );
        }
    }

    /// A second every worker reported, merged.
    pub(super) fn second(&mut self, s: &SecondStats) {
        self.measured_s += s.span_s;
        self.seconds.push_back(s.clone());
        while self.seconds.len() > SPARK_SECONDS {
            self.seconds.pop_front();
        }
    }

    /// The running totals of a tick; samples the process's CPU and the machine's CPU steal
    /// (`times`: its counters now) about once a second.
    pub(super) fn tick(&mut self, live: &Live, cpu: Duration, times: Option<CpuTimes>) {
        self.now = live.now;
        self.live = Some(*live);
        self.steal_start = self.steal_start.or(times);
        let (cpu, steal) = self.usage.sample(live.now, cpu, times);
        if let Some(last_second) = steal {
            self.steal_seen(last_second, times);
        }
        let Some(share) = cpu else {
            return;
        };
        self.cpu = Some(share);
        if share >= BUSY_CPU {
            self.warn(
                WarningCode::GeneratorSaturated,
                format!(
                    "generator CPU {:.0}% of its {} thread(s): it may be the bottleneck",
                    share * 100.0,
                    self.plan.threads
                ),
            );
        }
    }

    /// The steal share of the last second, and since the first reading (`times`: the counters
    /// now); a warning while the latter is at or above the record's limit
    /// ([`crate::analysis::stolen`]), so the view warns when the record would if the run ended
    /// now: a stolen first second that the later ones dilute below the limit is no warning.
    fn steal_seen(&mut self, last_second: f64, times: Option<CpuTimes>) {
        let so_far = times
            .zip(self.steal_start)
            .and_then(|(t, start)| t.steal_share_since(&start))
            .unwrap_or(last_second);
        self.steal = Some(StealNow {
            last_second,
            so_far,
        });
        if crate::analysis::stolen(Some(so_far)).is_some() {
            self.warn(
                WarningCode::CpuSteal,
                format!(
                    "CPU steal: the hypervisor took {:.1}% of this machine's CPU time so far: \
                     the figures are slower and noisier than the machine's own",
                    so_far * 100.0
                ),
            );
        } else {
            self.warnings.retain(|w| w.code != WarningCode::CpuSteal);
        }
    }

    fn warn(&mut self, code: WarningCode, message: String) {
        let at_s = self.elapsed().as_secs_f64();
        match self.warnings.iter_mut().find(|w| w.code == code) {
            Some(w) => {
                w.message = message;
                w.times += 1;
            }
            None => self.warnings.push(Seen {
                at_s,
                message,
                times: 1,
                code,
            }),
        }
    }

    /// Whether any scenario is open-model (the send lag means something).
    pub(super) fn is_open(&self) -> bool {
        self.plan.has_open_scenario()
    }

    /// The latest full second, if any.
    pub(super) fn last_second(&self) -> Option<&SecondStats> {
        self.seconds.iter().rev().find(|s| s.span_s >= 0.999)
    }

    /// Each threshold as written, with its value now (`None`: nothing measured for it yet),
    /// whether it holds now, and whether the view judges it at all (not the latency of one
    /// scenario, step or phase: the view keeps no latency per group; not a stream figure,
    /// judged when the run ends).
    pub(super) fn thresholds(&self) -> Vec<(String, Option<f64>, bool, bool)> {
        self.plan
            .thresholds
            .iter()
            .map(|t| {
                let observed = t.observe(self);
                let per_group_latency = t.metric == ThresholdMetric::Latency && t.filter.is_some();
                let live = !(per_group_latency || t.metric.of_streams());
                (
                    format!("{} {}", t.metric_text, t.condition_text),
                    observed,
                    t.passes(observed),
                    live,
                )
            })
            .collect()
    }

    fn matching(&self, filter: &Filter) -> impl Iterator<Item = usize> + '_ {
        let phase_number = |group: usize| {
            self.plan.scenarios.iter().find_map(|sc| {
                sc.phases
                    .iter()
                    .position(|p| p.group == group)
                    .map(|i| (i + 1).to_string())
            })
        };
        let filter = filter.clone();
        self.plan
            .groups
            .iter()
            .enumerate()
            .filter(move |(i, g)| match &filter {
                Filter::Scenario(s) => g.kind == GroupKind::Scenario && &g.name == s,
                Filter::Step(s) => g.kind == GroupKind::Step && &g.name == s,
                Filter::Phase(p) => {
                    g.kind == GroupKind::Phase
                        && (&g.name == p || phase_number(*i).is_some_and(|n| &n == p))
                }
            })
            .map(|(i, _)| i)
    }
}

impl Observed for State {
    fn latency(&self, filter: Option<&Filter>) -> Option<Histogram<u64>> {
        // The view keeps no latency per group: such thresholds wait for the record.
        filter.is_none().then(|| self.latency.clone())
    }

    fn counts(&self, filter: Option<&Filter>) -> Counts {
        let of = Counts::of;
        match filter {
            None => of(&self.counts),
            Some(f) => self.matching(f).fold(Counts::default(), |a, g| {
                let c = of(&self.groups[g].total);
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
        crate::run::live::filtered_checks(&self.plan, &self.checks, filter)
    }

    fn throughput(&self, filter: Option<&Filter>) -> Option<f64> {
        (self.measured_s > 0.0).then(|| self.counts(filter).requests as f64 / self.measured_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::read::{ReadOptions, read_str};
    use crate::record::recorder::Breakdown;

    fn plan() -> Plan {
        let text = "[target]\nbase_url = \"http://127.0.0.1:9\"\n\
            [[scenario]]\nname = \"s\"\n[scenario.load]\nprofile = \"constant-vus\"\n\
            vus = 4\nduration = \"8s\"\n[[scenario.step]]\nname = \"a\"\npath = \"/\"\n\
            [thresholds]\nerrors = [\"rate < 0.1\"]\n\"errors{step=a}\" = [\"rate < 0.1\"]\n\
            \"latency{step=a}\" = [\"p99 < 5ms\"]\nlatency = [\"p99 < 5ms\"]\n";
        let options = ReadOptions {
            threads: Some(2),
            ..Default::default()
        };
        read_str(text, std::path::Path::new("t.toml"), &options)
            .and_then(|d| d.prepare())
            .unwrap()
    }

    fn snapshot(second: u64, ok: u64, failed: u64, step: usize) -> IntervalSnapshot {
        let mut latency = new_histogram();
        for _ in 0..ok + failed {
            latency.record(2_000).unwrap();
        }
        let counters = Counters {
            requests: ok + failed,
            errors: failed,
            ..Counters::default()
        };
        let mut groups = vec![Counters::default(); 2];
        groups[step] = counters;
        IntervalSnapshot {
            second,
            span_s: 1.0,
            counters,
            latency,
            in_flight: 0,
            groups: Vec::new(),
            checks: Vec::new(),
            tally: Default::default(),
            breakdown: Breakdown {
                statuses: [(200, ok), (500, failed)]
                    .into_iter()
                    .filter(|(_, n)| *n > 0)
                    .collect(),
                errors: if failed > 0 {
                    vec![(ErrorKind::Http5xx, failed)]
                } else {
                    Vec::new()
                },
                lag_p99_us: 0,
                groups,
                grouped: Vec::new(),
                streams: None,
            },
        }
    }

    #[test]
    fn a_worker_seconds_behind_does_not_wipe_a_newer_second_of_a_group() {
        let mut g = GroupCounts::default();
        let requests = |n| Counters {
            requests: n,
            ..Counters::default()
        };
        g.add(5, &requests(30));
        // Second 1 shares second 5's slot: counted in the total, not shown.
        g.add(1, &requests(7));
        assert_eq!(g.in_second(5).map(|c| c.requests), Some(30));
        assert_eq!(g.in_second(1).map(|c| c.requests), None);
        assert_eq!(g.total.requests, 37);
        g.add(9, &requests(4));
        assert_eq!(g.in_second(9).map(|c| c.requests), Some(4));
        assert_eq!(g.in_second(5), None, "a newer second takes the slot");
    }

    #[test]
    fn snapshots_add_up_and_thresholds_are_judged_on_them() {
        let plan = plan();
        let step = plan.groups.iter().position(|g| g.name == "a").unwrap();
        let start = Instant::now();
        let clock = Clock {
            start,
            measure_start: start,
            measured: Some(Duration::from_secs(8)),
        };
        let mut s = State::new(plan, clock);
        assert_eq!(s.planned(), Some(Duration::from_secs(8)));
        // Two workers' second 0, then one worker's second 1.
        s.interval(&snapshot(0, 90, 0, step));
        s.interval(&snapshot(0, 80, 20, step));
        s.interval(&snapshot(1, 10, 0, step));
        assert_eq!(s.counts.requests, 200);
        assert_eq!(s.statuses, vec![(200, 180), (500, 20)]);
        assert_eq!(s.errors[ErrorKind::Http5xx.index()], 20);
        assert_eq!(s.groups[step].total.requests, 200);
        let in_second = |s: &State, t| s.groups[step].in_second(t).map(|c| c.requests);
        assert_eq!(
            in_second(&s, 0),
            Some(190),
            "second 0's, while a worker has reported second 1"
        );
        assert_eq!(in_second(&s, 1), Some(10));
        assert_eq!(in_second(&s, 2), None);
        assert_eq!(s.latency.len(), 200);
        let judged = |what: &str| {
            let all = s.thresholds();
            let (_, v, passes, live) = all.into_iter().find(|t| t.0 == what).unwrap();
            (v, passes, live)
        };
        assert_eq!(judged("errors rate < 0.1"), (Some(0.1), false, true));
        assert_eq!(
            judged("errors{step=a} rate < 0.1"),
            (Some(0.1), false, true)
        );
        assert_eq!(judged("latency{step=a} p99 < 5ms"), (None, false, false));
        let (p99, passes, live) = judged("latency p99 < 5ms");
        assert!(p99.is_some_and(|v| (v - 2.0).abs() < 0.01), "{p99:?}");
        assert!(passes && live);
    }

    /// A state whose run starts now, and the ticks `ms` milliseconds after that start.
    fn started() -> (State, impl Fn(u64) -> Live) {
        let start = Instant::now();
        let clock = Clock {
            start,
            measure_start: start,
            measured: None,
        };
        let live = move |ms: u64| Live {
            now: start + Duration::from_millis(ms),
            requests: 0,
            errors: 0,
        };
        (State::new(plan(), clock), live)
    }

    #[test]
    fn a_busy_generator_is_a_warning_once_with_a_count() {
        let (mut s, live) = started();
        // Two worker threads, each fully busy: 2 s of CPU a second.
        s.tick(&live(0), Duration::ZERO, None);
        s.tick(&live(1000), Duration::from_secs(2), None);
        s.tick(&live(2000), Duration::from_secs(4), None);
        assert!(s.cpu.is_some_and(|c| (c - 1.0).abs() < 1e-9), "{:?}", s.cpu);
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        assert_eq!(s.warnings[0].times, 2);
        assert!((s.warnings[0].at_s - 1.0).abs() < 1e-9);
    }

    #[test]
    fn cpu_steal_is_shown_each_second_and_warned_about_while_the_run_so_far_is_at_the_limit() {
        let (mut s, live) = started();
        let times = |steal, total| Some(CpuTimes { steal, total });
        s.tick(&live(0), Duration::ZERO, times(0, 0));
        // 0.25 % of the CPU time in the first second: shown, not warned about.
        s.tick(&live(1000), Duration::ZERO, times(1, 400));
        assert_eq!(
            s.steal,
            Some(StealNow {
                last_second: 0.0025,
                so_far: 0.0025
            })
        );
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        // 1.75 % in the second: 1 % so far, at or above the limit.
        s.tick(&live(2000), Duration::ZERO, times(8, 800));
        assert_eq!(s.steal.map(|x| x.last_second), Some(0.0175));
        assert_eq!(s.steal.map(|x| x.so_far), Some(0.01));
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        assert!(s.warnings[0].message.contains("1.0%"), "{:?}", s.warnings);
        // Quiet seconds dilute it below the limit (8 of 2,000 = 0.4 %): the record would not
        // warn if the run ended now, so neither does the view.
        s.tick(&live(3000), Duration::ZERO, times(8, 2000));
        assert_eq!(s.steal.map(|x| x.so_far), Some(0.004));
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }
}
