//! The control loop: runs on the calling thread while the workers send their snapshots; merges
//! them into the series, hands them to the observers, judges thresholds and precision goals as
//! they come, and enforces the hard deadline (duration + timeout) so a run always ends.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::observe::{self, Live, TICK};
use super::{Abort, RunShared, ThreadUsage, WorkerMessage, WorkerResult};
use crate::analysis::interval::{group_so_far, met};
use crate::error::Error;
use crate::record::batches::Batches;
use crate::record::group_series::GroupSeries;
use crate::record::model::Ci95;
use crate::record::recorder::{IntervalSnapshot, Recorder};
use crate::record::series::{SecondStats, SeriesBuilder};

/// What the control loop gathers from the workers, at the end.
pub(super) struct Collected {
    pub(super) totals: Recorder,
    pub(super) series: Vec<SecondStats>,
    pub(super) batches: Batches,
    /// Each result group's seconds, when the run keeps its groups' intervals (else empty).
    pub(super) groups: Vec<GroupSeries>,
    pub(super) precise_at: Option<Duration>,
    pub(super) threads: Vec<ThreadUsage>,
    pub(super) interrupted: Option<&'static str>,
    pub(super) last_finish: Option<Instant>,
    pub(super) abort: Option<Abort>,
}

pub(super) async fn control_loop(
    run: &RunShared,
    observers: &mut observe::Observers<'_>,
    mut rx: mpsc::UnboundedReceiver<WorkerMessage>,
) -> Result<Collected, Error> {
    let mut hard_deadline = run
        .end
        .map(|end| end + run.plan.target.timeout + Duration::from_secs(1));
    let mut tick = tokio::time::interval(TICK);
    let workers = run.plan.threads;
    let mut c = Control {
        series: SeriesBuilder::new(workers),
        totals: Recorder::with_groups(run.plan.groups.len(), run.check_count, false),
        abort: None,
        threads: Vec::with_capacity(workers),
        last_finish: None,
        precise_at: None,
        // A load that changes has no intervals (docs/measurement.md, "Uncertainty").
        wants_ci: observers.wants_ci95() && !run.plan.unsteady().is_some_and(|u| u.mixes_loads()),
        ci_seconds: 0,
        groups: if run.group_intervals {
            vec![GroupSeries::new(); run.plan.groups.len()]
        } else {
            Vec::new()
        },
    };
    let mut failure = None;
    let mut deadline_hit = false;
    let mut done = 0;
    while done < workers {
        tokio::select! {
            msg = rx.recv() => match msg {
                Some(WorkerMessage::Interval(s)) => {
                    c.interval(*s, observers);
                    c.uncertainty(run, observers);
                    c.judge(run, observers);
                }
                Some(WorkerMessage::Done(result)) => {
                    done += 1;
                    c.worker_done(*result, observers);
                    if done < workers {
                        c.judge(run, observers);
                    }
                }
                Some(WorkerMessage::Failed(why)) => {
                    failure = Some(why);
                    run.stop.abort();
                }
                None => break,
            },
            _ = tick.tick() => {
                let live = live_totals(run);
                observers.each(|o| o.tick(&live));
            }
            () = sleep_opt(hard_deadline) => {
                // Every request has its own timeout, so this only fires if something is stuck.
                deadline_hit = true;
                hard_deadline = None;
                run.stop.abort();
            }
        }
    }
    observers.each(|o| o.finish());
    if let Some(why) = failure {
        return Err(Error::Engine(why));
    }
    // A signal (see `signals`) or a stop request; not the hard deadline nor a threshold.
    let interrupted = run.stop.signal.get().copied().or_else(|| {
        let ours = deadline_hit || c.abort.is_some() || c.precise_at.is_some();
        (run.stop.is_aborted() && !ours).then_some("stop requested")
    });
    let (series, batches) = c.series.finish();
    Ok(Collected {
        totals: c.totals,
        series,
        batches,
        groups: c.groups,
        precise_at: c.precise_at,
        threads: c.threads,
        interrupted,
        last_finish: c.last_finish,
        abort: c.abort,
    })
}

/// Whether every precision goal of the run is met by the intervals so far: the run's (`ci`),
/// or a named part's own (`groups`, by group id).
fn precise(run: &RunShared, ci: &Ci95, groups: &[Ci95]) -> bool {
    run.plan.precision.iter().all(|goal| match &goal.part {
        None => met(ci, goal),
        Some(part) => run
            .plan
            .group_of(part)
            .and_then(|i| groups.get(i))
            .is_some_and(|g| met(g, goal)),
    })
}

/// What the control loop gathers from the workers.
struct Control {
    series: SeriesBuilder,
    totals: Recorder,
    abort: Option<Abort>,
    threads: Vec<ThreadUsage>,
    last_finish: Option<Instant>,
    /// When the run's precision goals were met.
    precise_at: Option<Duration>,
    /// Some observer follows the intervals as they narrow, and the load is steady enough to
    /// have them.
    wants_ci: bool,
    /// Seconds the intervals were last computed over.
    ci_seconds: usize,
    /// Each result group's seconds (empty when the run keeps no group intervals).
    groups: Vec<GroupSeries>,
}

impl Control {
    /// After a second every worker reported: the intervals so far to the observers that follow
    /// them, and a run asked to last until precise stopped once every goal is met.
    fn uncertainty(&mut self, run: &RunShared, observers: &mut observe::Observers<'_>) {
        let goals = &run.plan.precision;
        if self.precise_at.is_some() || (!self.wants_ci && goals.is_empty()) {
            return;
        }
        let done = self.series.done();
        if done.len() == self.ci_seconds {
            return;
        }
        self.ci_seconds = done.len();
        let ci = crate::analysis::interval::so_far(done, self.series.batches());
        // Each group's intervals, once, for the observers and for goals on a part.
        let parts = goals.iter().any(|g| g.part.is_some());
        let groups: Vec<Ci95> = match self.wants_ci || parts {
            true => self.groups.iter().map(|g| group_so_far(done, g)).collect(),
            false => Vec::new(),
        };
        if self.wants_ci {
            observers.each(|o| o.ci95(&ci, &groups));
        }
        if !goals.is_empty() && precise(run, &ci, &groups) {
            self.precise_at = Some(Instant::now().saturating_duration_since(run.measure_start));
            run.stop.abort();
        }
    }

    /// One worker's second: to the observers, and into the series (a second every worker has
    /// reported goes to the observers merged).
    fn interval(&mut self, s: IntervalSnapshot, observers: &mut observe::Observers<'_>) {
        observers.each(|o| o.interval(&s));
        for g in &s.groups {
            if let Some(seconds) = self.groups.get_mut(g.group) {
                seconds.add(s.second, &g.latency, g.counters.requests);
            }
        }
        if let Some(second) = self.series.add(s) {
            observers.each(|o| o.second(second));
        }
    }

    fn worker_done(&mut self, result: WorkerResult, observers: &mut observe::Observers<'_>) {
        self.totals.merge(&result.recorder);
        for last in result.last_intervals {
            self.interval(last, observers);
        }
        observers.each(|o| o.worker_done());
        self.threads.push(ThreadUsage {
            cpu: result.cpu,
            wall: result.wall,
        });
        self.last_finish = self.last_finish.max(Some(result.finished));
    }

    /// Stops the run when an observer says so (an `abort_on_fail` threshold failing on the
    /// seconds judged so far); the first such moment is kept.
    fn judge(&mut self, run: &RunShared, observers: &mut observe::Observers<'_>) {
        if self.abort.is_some() {
            return;
        }
        let elapsed = Instant::now().saturating_duration_since(run.measure_start);
        if let Some(abort) = observers.stop(elapsed) {
            self.abort = Some(abort);
            run.stop.abort();
        }
    }
}

fn live_totals(run: &RunShared) -> Live {
    let (requests, errors) = run.live.iter().fold((0, 0), |(r, e), l| {
        (
            r + l.requests.load(Ordering::Relaxed),
            e + l.errors.load(Ordering::Relaxed),
        )
    });
    Live {
        now: Instant::now(),
        requests,
        errors,
    }
}

async fn sleep_opt(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d.into()).await,
        None => std::future::pending().await,
    }
}
