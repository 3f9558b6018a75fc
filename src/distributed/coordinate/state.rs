//! What the coordinator knows, and how each request and each tick of its clock changes it. No
//! I/O: the HTTP side (`super::http`) and the main loop (`super::run`) call these methods
//! under one lock.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::export::live::Shared;
use crate::plan::Plan;
use crate::plan::segment::{Distributed, OnLost};
use crate::record::RunRecord;
use crate::record::recorder::IntervalSnapshot;
use crate::run::LiveJudge;

use super::super::wire::{Register, Registered, Reply, StartReply, StopOrder};
use super::metrics::LiveMetrics;

/// How long after the last generator registers the test starts, at least (then rounded up to a
/// whole wall-clock second, so that the shares' seconds line up).
pub const START_DELAY: Duration = Duration::from_secs(1);

/// Where one share stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareStatus {
    /// No generator has it yet.
    Free,
    /// A generator has it and is alive.
    Running,
    /// Its record arrived.
    Done,
    /// Its generator died or went silent.
    Lost,
}

/// One share.
#[derive(Debug)]
pub(super) struct ShareState {
    pub(super) status: ShareStatus,
    pub(super) host: String,
    /// Whether its generator asked for it (`--segment`, `JOB_COMPLETION_INDEX`) rather than
    /// was given the first free share.
    pub(super) asked: bool,
    pub(super) last_seen: Instant,
    pub(super) record: Option<RunRecord>,
    /// Requests, errors and connections opened in its snapshots so far, and the seconds they
    /// covered.
    pub(super) requests: u64,
    pub(super) errors: u64,
    pub(super) connections: u64,
    pub(super) seconds: u64,
}

/// Something worth telling the user.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A generator took a share.
    Registered(u32, String),
    /// Every share is taken: the test starts then.
    Starting(SystemTime),
    /// The wait for generators ended without all of them.
    BarrierFailed(String),
    /// A generator was lost.
    Lost(u32, Duration),
    /// A share's record arrived.
    Done(u32),
    /// Every generator was told to stop.
    Stopping(StopOrder),
}

/// A request refused: its HTTP status and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 400, 404 or 409.
    pub status: u16,
    /// Why, in words.
    pub why: String,
}

fn refuse(status: u16, why: impl Into<String>) -> Refusal {
    Refusal {
        status,
        why: why.into(),
    }
}

/// The coordinator's state.
pub struct CoordinatorState {
    pub(super) count: u32,
    /// The test's hash: the plan's, or the first generator's when no plan was given.
    pub(super) plan_hash: Option<String>,
    version: String,
    pub(super) shares: Vec<ShareState>,
    /// When the generators must have registered by.
    barrier_deadline: Instant,
    pub(super) start_at: Option<SystemTime>,
    /// The same instant on the monotonic clock.
    start_instant: Option<Instant>,
    pub(super) failed: Option<String>,
    pub(super) stop: Option<StopOrder>,
    plan: Option<Arc<Plan>>,
    judge: Option<LiveJudge>,
    /// The whole test's live metrics page, when asked for.
    live: Option<LiveMetrics>,
    settings: Distributed,
    /// Requests per second index, summed over the shares that reported it: (reporters, requests).
    pub(super) seconds: BTreeMap<u64, (u32, u64)>,
    events: Vec<Event>,
    /// The whole test's configuration: the plan's, or the first generator's word for it.
    pub(super) whole: Option<crate::record::model::RunConfig>,
    /// The signal the coordinator received, if one came.
    pub(super) interrupted: Option<&'static str>,
}

impl CoordinatorState {
    /// A coordinator of `count` shares of `plan` (its hash and thresholds; `None`: whatever the
    /// first generator runs, judged only in the merged record), waiting `wait` for them.
    pub fn new(
        count: u32,
        plan: Option<Arc<Plan>>,
        wait: Duration,
        settings: Distributed,
        now: Instant,
    ) -> Self {
        let plan_hash = plan
            .as_ref()
            .and_then(|p| p.share.as_ref().map(|s| s.plan_hash.clone()));
        let whole = plan.as_deref().map(crate::run::run_config);
        let judge = plan.as_ref().map(|p| {
            let checks = crate::plan::check_list(p).len();
            LiveJudge::with_workers(p, checks, count as usize)
        });
        Self {
            count,
            plan_hash,
            version: env!("CARGO_PKG_VERSION").to_string(),
            shares: (0..count)
                .map(|_| ShareState {
                    status: ShareStatus::Free,
                    host: String::new(),
                    asked: false,
                    last_seen: now,
                    record: None,
                    requests: 0,
                    errors: 0,
                    connections: 0,
                    seconds: 0,
                })
                .collect(),
            barrier_deadline: now + wait,
            start_at: None,
            start_instant: None,
            failed: None,
            stop: None,
            plan,
            judge,
            live: None,
            settings,
            seconds: BTreeMap::new(),
            events: Vec::new(),
            whole,
            interrupted: None,
        }
    }

    /// Publishes the whole test's live figures into `shared` (the metrics page, remote write).
    pub fn with_metrics(mut self, shared: Shared) -> Self {
        self.live = Some(LiveMetrics::new(self.plan.as_deref(), shared, self.count));
        self
    }

    /// Whether the generators' snapshots must carry each result group's figures: thresholds
    /// on scenarios or steps are judged live, or the metrics page shows them.
    fn wants_groups(&self) -> bool {
        let judged = self
            .plan
            .as_ref()
            .is_some_and(|p| p.thresholds.iter().any(|t| t.abort_on_fail));
        judged || self.live.as_ref().is_some_and(LiveMetrics::wants_groups)
    }

    /// Which shares may still send seconds.
    fn running_mask(&self) -> Vec<bool> {
        self.shares
            .iter()
            .map(|s| s.status == ShareStatus::Running)
            .collect()
    }

    /// The events since the last call.
    pub fn events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    fn reply(&self) -> Reply {
        Reply {
            stop: self.stop.clone(),
        }
    }

    /// A generator registers: it gets the share it asked for, or the first free one.
    pub fn register(&mut self, r: &Register, now: Instant) -> Result<Registered, Refusal> {
        if r.version != self.version {
            return Err(refuse(
                409,
                format!(
                    "this generator runs volley {}, the coordinator {}: records merge only \
                     across one version",
                    r.version, self.version
                ),
            ));
        }
        match &self.plan_hash {
            Some(h) if *h != r.plan_hash => {
                return Err(refuse(
                    409,
                    format!(
                        "this generator's test is {}, the coordinator's {h}: run the same plan \
                         (file, data files, --set, --time-scale) everywhere",
                        r.plan_hash
                    ),
                ));
            }
            _ => {}
        }
        if let Some(n) = r.count
            && n != self.count
        {
            return Err(refuse(
                409,
                format!(
                    "this generator was told the test has {n} shares, the coordinator {}",
                    self.count
                ),
            ));
        }
        if self.start_at.is_some() || self.failed.is_some() {
            return Err(refuse(409, "the test has started already"));
        }
        let index = match r.index {
            Some(i) if i >= self.count => {
                return Err(refuse(
                    409,
                    format!(
                        "share {i} does not exist: shares are 0 … {}",
                        self.count - 1
                    ),
                ));
            }
            Some(i) if self.shares[i as usize].status != ShareStatus::Free => {
                return Err(refuse(409, self.taken(i)));
            }
            Some(i) => i,
            None => self
                .shares
                .iter()
                .position(|s| s.status == ShareStatus::Free)
                .ok_or_else(|| refuse(409, format!("all {} shares are taken", self.count)))?
                as u32,
        };
        self.plan_hash.get_or_insert_with(|| r.plan_hash.clone());
        if self.whole.is_none() {
            self.whole = r.whole.as_deref().cloned();
        }
        let share = &mut self.shares[index as usize];
        share.status = ShareStatus::Running;
        share.asked = r.index.is_some();
        share.host = r.host.clone();
        share.last_seen = now;
        self.events.push(Event::Registered(index, r.host.clone()));
        if self.shares.iter().all(|s| s.status == ShareStatus::Running) {
            let at = whole_second_after(SystemTime::now() + START_DELAY);
            let ahead = at.duration_since(SystemTime::now()).unwrap_or_default();
            self.start_at = Some(at);
            self.start_instant = Some(now + ahead);
            if let Some(live) = &mut self.live {
                live.start(now + ahead);
            }
            self.events.push(Event::Starting(at));
        }
        Ok(Registered {
            index,
            count: self.count,
            groups: self.wants_groups(),
        })
    }

    /// Why share `i`, asked for, cannot be had: a share is never given twice.
    fn taken(&self, i: u32) -> String {
        let (share, count) = (&self.shares[i as usize], self.count);
        if share.asked {
            format!(
                "share {i}/{count} is taken already: {} asked for it too (--segment or \
                 JOB_COMPLETION_INDEX); give each generator a different share",
                share.host
            )
        } else {
            format!(
                "share {i}/{count} is taken already: the coordinator gave it to {}, which \
                 registered without asking for a share, before this generator asked for it; \
                 a share is never given twice, so give every generator its share (--segment \
                 i/N or JOB_COMPLETION_INDEX) or none of them",
                share.host
            )
        }
    }

    /// The share of a request, if it is registered and not lost.
    fn share_mut(&mut self, share: u32, now: Instant) -> Result<&mut ShareState, Refusal> {
        let count = self.count;
        let s = self
            .shares
            .get_mut(share as usize)
            .ok_or_else(|| refuse(404, format!("share {share} does not exist")))?;
        match s.status {
            ShareStatus::Free => Err(refuse(
                409,
                format!("share {share}/{count} is not registered"),
            )),
            ShareStatus::Lost => Err(refuse(
                409,
                format!(
                    "share {share}/{count} was lost (silent too long): the test goes on without it"
                ),
            )),
            _ => {
                s.last_seen = now;
                Ok(s)
            }
        }
    }

    /// A generator asks whether to start.
    pub fn start(&mut self, share: u32, now: Instant) -> Result<StartReply, Refusal> {
        if let Some(error) = &self.failed {
            return Ok(StartReply::Failed {
                error: error.clone(),
            });
        }
        self.share_mut(share, now)?;
        Ok(match (&self.stop, self.start_at) {
            (Some(StopOrder::Interrupt { why }), _) => StartReply::Failed { error: why.clone() },
            (_, Some(at)) => StartReply::Start {
                start_at_unix_ms: at
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64),
            },
            (_, None) => StartReply::Waiting {
                registered: self.registered(),
                count: self.count,
            },
        })
    }

    fn registered(&self) -> u32 {
        self.shares
            .iter()
            .filter(|s| s.status != ShareStatus::Free)
            .count() as u32
    }

    /// A generator says it is alive.
    pub fn heartbeat(&mut self, share: u32, now: Instant) -> Result<Reply, Refusal> {
        self.share_mut(share, now)?;
        Ok(self.reply())
    }

    /// One second of a share: summed into the test's, and judged.
    pub fn snapshot(
        &mut self,
        share: u32,
        s: &IntervalSnapshot,
        now: Instant,
    ) -> Result<Reply, Refusal> {
        let st = self.share_mut(share, now)?;
        st.requests += s.counters.requests;
        st.errors += s.counters.errors;
        st.connections += s.counters.connections_opened;
        st.seconds = st.seconds.max(s.second + 1);
        let second = self.seconds.entry(s.second).or_insert((0, 0));
        second.0 += 1;
        second.1 += s.counters.requests;
        if let Some(judge) = &mut self.judge {
            judge.add(s);
        }
        let running = self.running_mask();
        if let Some(live) = &mut self.live {
            live.add(share, s, &running);
        }
        self.judge(now);
        Ok(self.reply())
    }

    /// Judges the `abort_on_fail` thresholds on the whole test so far.
    fn judge(&mut self, now: Instant) {
        let (Some(judge), Some(plan), Some(start)) = (&self.judge, &self.plan, self.start_instant)
        else {
            return;
        };
        if self.stop.is_some() {
            return;
        }
        let elapsed = now.saturating_duration_since(start + plan.warmup);
        let failing = judge.failing(plan, elapsed);
        if !failing.is_empty() {
            let order = StopOrder::Abort {
                at_s: elapsed.as_secs_f64(),
                thresholds: failing,
            };
            self.events.push(Event::Stopping(order.clone()));
            self.stop = Some(order);
        }
    }

    /// A share's final record arrived.
    pub fn record(&mut self, record: RunRecord, now: Instant) -> Result<Reply, Refusal> {
        let Some(share) = record.share.clone() else {
            return Err(refuse(400, "not the record of a share (it has no `share`)"));
        };
        if Some(&share.plan_hash) != self.plan_hash.as_ref() || share.count != self.count {
            return Err(refuse(
                409,
                format!(
                    "the record is of share {}/{} of test {}, not of this test",
                    share.index, share.count, share.plan_hash
                ),
            ));
        }
        let st = self.share_mut(share.index, now)?;
        if st.status == ShareStatus::Done {
            return Err(refuse(
                409,
                format!("share {} sent its record already", share.index),
            ));
        }
        st.status = ShareStatus::Done;
        st.record = Some(record);
        if let Some(judge) = &mut self.judge {
            judge.worker_done();
        }
        self.events.push(Event::Done(share.index));
        self.judge(now);
        Ok(self.reply())
    }

    /// The clock moved on: the wait for generators may end, silent generators are lost, the
    /// live figures are published.
    pub fn tick(&mut self, now: Instant) {
        self.tick_shares(now);
        let running = self.running_mask();
        let totals = self
            .shares
            .iter()
            .fold((0, 0), |(r, e), s| (r + s.requests, e + s.errors));
        let finished = self.finished();
        if let Some(live) = &mut self.live {
            if finished {
                live.finish();
            } else {
                live.tick(now, &running, totals);
            }
        }
    }

    fn tick_shares(&mut self, now: Instant) {
        if self.failed.is_some() {
            return;
        }
        let Some(start) = self.start_instant else {
            if now >= self.barrier_deadline {
                let missing: Vec<String> = (0..self.count)
                    .filter(|&i| self.shares[i as usize].status == ShareStatus::Free)
                    .map(|i| format!("{i}/{}", self.count))
                    .collect();
                let why = format!(
                    "{} of {} generators registered in time; missing share{} {}",
                    self.registered(),
                    self.count,
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", ")
                );
                self.events.push(Event::BarrierFailed(why.clone()));
                self.failed = Some(why);
            }
            return;
        };
        let lost_after = self.settings.lost_after;
        for i in 0..self.count {
            let s = &mut self.shares[i as usize];
            let silent = now.saturating_duration_since(s.last_seen.max(start));
            if s.status == ShareStatus::Running && silent > lost_after {
                s.status = ShareStatus::Lost;
                self.events.push(Event::Lost(i, silent));
                if let Some(judge) = &mut self.judge {
                    judge.worker_done();
                }
                if self.settings.on_lost == OnLost::Stop && self.stop.is_none() {
                    let order = StopOrder::Interrupt {
                        why: format!("share {i}/{} was lost (on_lost = \"stop\")", self.count),
                    };
                    self.events.push(Event::Stopping(order.clone()));
                    self.stop = Some(order);
                }
            }
        }
    }

    /// A signal at the coordinator: every generator is told to stop and send what it measured
    /// (a silent one is lost as any other); before the start, the test will not start.
    pub fn interrupt(&mut self, signal: &'static str) {
        if self.interrupted.is_some() {
            return;
        }
        self.interrupted = Some(signal);
        if self.start_at.is_none() {
            let why = format!("{signal} at the coordinator before the start");
            self.events.push(Event::BarrierFailed(why.clone()));
            self.failed.get_or_insert(why);
            return;
        }
        if self.stop.is_none() {
            let order = StopOrder::Interrupt {
                why: format!("{signal} at the coordinator"),
            };
            self.events.push(Event::Stopping(order.clone()));
            self.stop = Some(order);
        }
    }

    /// Whether nothing more will come: every share is done or lost, or the test never started.
    pub fn finished(&self) -> bool {
        self.failed.is_some()
            || self
                .shares
                .iter()
                .all(|s| matches!(s.status, ShareStatus::Done | ShareStatus::Lost))
    }

    /// Shares running now.
    pub fn running(&self) -> u32 {
        self.shares
            .iter()
            .filter(|s| s.status == ShareStatus::Running)
            .count() as u32
    }
}

/// The first whole second of the wall clock at or after `t`.
pub fn whole_second_after(t: SystemTime) -> SystemTime {
    let since = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let whole = since.as_secs() + u64::from(since.subsec_nanos() > 0);
    SystemTime::UNIX_EPOCH + Duration::from_secs(whole)
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
