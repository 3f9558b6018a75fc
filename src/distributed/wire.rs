//! What a coordinator and its generators say to each other: JSON over plain HTTP/1.1, every
//! request with `Authorization: Bearer TOKEN` (docs/distributed.md, "Protocol").
//!
//! | request | body | reply |
//! |---|---|---|
//! | `POST /v1/register` | [`Register`] | [`Registered`], or 409 and [`Refused`] |
//! | `POST /v1/start` | [`Poll`] | [`StartReply`] |
//! | `POST /v1/snapshot` | [`Snapshot`] | [`Reply`] |
//! | `POST /v1/heartbeat` | [`Poll`] | [`Reply`] |
//! | `POST /v1/record` | the share's `run.json` | [`Reply`] |
//!
//! Histograms travel as the record writes them (HDR V2, base64: [`encode_histogram`]).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::record::error_kind::ErrorKind;
use crate::record::recorder::{Counters, GroupInterval, IntervalSnapshot, Tally};
use crate::record::{HistogramError, decode_histogram, encode_histogram};

/// Path of each request.
pub mod path {
    /// A generator registers.
    pub const REGISTER: &str = "/v1/register";
    /// A generator asks when to start.
    pub const START: &str = "/v1/start";
    /// A generator sends one second of its share.
    pub const SNAPSHOT: &str = "/v1/snapshot";
    /// A generator says it is alive.
    pub const HEARTBEAT: &str = "/v1/heartbeat";
    /// A generator sends its final record.
    pub const RECORD: &str = "/v1/record";
}

/// A generator's registration.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Register {
    /// The hash of the test it was given (`share.plan_hash`).
    pub plan_hash: String,
    /// Its volley version (records merge only across one version).
    pub version: String,
    /// The share it must run (`--segment`, `JOB_COMPLETION_INDEX`); `None`: any free one.
    pub index: Option<u32>,
    /// The share count it was told (`--segment i/N`); `None`: the coordinator's.
    pub count: Option<u32>,
    /// Its host name, for messages.
    pub host: String,
    /// The whole test's configuration, as one generator running all of it would record it:
    /// the merged record states it when a generator is lost (absent from older versions).
    #[serde(default)]
    pub whole: Option<Box<crate::record::model::RunConfig>>,
}

/// A registration accepted: the share to run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Registered {
    /// The share, from 0.
    pub index: u32,
    /// The share count.
    pub count: u32,
    /// Whether its snapshots must carry each result group's figures (the coordinator judges
    /// thresholds on scenarios or steps, or shows them on its metrics page).
    #[serde(default)]
    pub groups: bool,
}

/// A request refused, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Refused {
    /// What is wrong, in words.
    pub error: String,
}

/// A request of a registered generator that carries nothing else.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Poll {
    /// Its share.
    pub share: u32,
}

/// Whether the test may start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StartReply {
    /// Not every share has registered yet.
    Waiting {
        /// Shares registered.
        registered: u32,
        /// Of how many.
        count: u32,
    },
    /// Every share has registered: start at this wall-clock instant.
    Start {
        /// Milliseconds since the Unix epoch (a whole second).
        start_at_unix_ms: u64,
    },
    /// The test will not start (shares missing after the wait, or stopped).
    Failed {
        /// Why.
        error: String,
    },
}

/// The coordinator's answer to a snapshot, a heartbeat or a record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// Set when every generator must stop.
    pub stop: Option<StopOrder>,
}

/// Why every generator must stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StopOrder {
    /// `abort_on_fail` thresholds failed on the whole test.
    Abort {
        /// When, seconds since measuring began (the coordinator's count).
        at_s: f64,
        /// Which (indices into the plan's thresholds), each with the value it failed with.
        thresholds: Vec<(usize, Option<f64>)>,
    },
    /// The test was stopped (a lost generator with `on_lost = "stop"`).
    Interrupt {
        /// Why, in words.
        why: String,
    },
}

/// One second of one generator's share: its threads' interval snapshots, summed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    /// The share.
    pub share: u32,
    /// Second index since measuring began.
    pub second: u64,
    /// Length of the interval, seconds (1 except for the last).
    pub span_s: f64,
    /// Its counters.
    pub counters: Counters,
    /// Latencies of responses finished in it, µs (HDR V2, base64).
    pub latency: String,
    /// Requests in flight when it ended.
    pub in_flight: u64,
    /// Per group (when the plan has `abort_on_fail` thresholds).
    pub groups: Vec<SnapshotGroup>,
    /// Checks counted in it, by check id: [passed, failed].
    pub checks: Vec<[u64; 2]>,
    /// Its statuses, error kinds, dropped and completed iterations (the coordinator's metrics
    /// page).
    #[serde(default)]
    pub tally: WireTally,
}

/// A [`Tally`] on the wire: error kinds by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WireTally {
    /// Responses by status code.
    pub statuses: Vec<(u16, u64)>,
    /// Failures by kind name ([`ErrorKind::name`]).
    pub errors: Vec<(String, u64)>,
    /// Open model: iterations dropped.
    pub dropped: u64,
    /// Iterations completed inside their scenario's window.
    pub completed: u64,
    /// Streams recorded, and their messages.
    #[serde(default)]
    pub streams: crate::record::recorder::StreamTally,
}

impl WireTally {
    /// `t`, for the wire.
    pub fn of(t: &Tally) -> Self {
        Self {
            statuses: t.statuses.clone(),
            errors: t
                .errors
                .iter()
                .map(|(k, n)| (k.name().to_string(), *n))
                .collect(),
            dropped: t.dropped,
            completed: t.completed,
            streams: t.streams,
        }
    }

    /// Back to a [`Tally`]; a kind this version does not know is refused.
    pub fn decode(&self) -> Result<Tally, UnknownErrorKind> {
        let errors = self
            .errors
            .iter()
            .map(|(name, n)| {
                ErrorKind::from_name(name)
                    .map(|k| (k, *n))
                    .ok_or_else(|| UnknownErrorKind(name.clone()))
            })
            .collect::<Result<_, _>>()?;
        Ok(Tally {
            statuses: self.statuses.clone(),
            errors,
            dropped: self.dropped,
            completed: self.completed,
            streams: self.streams,
        })
    }
}

/// An error kind on the wire that this version does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown error kind `{0}`")]
pub struct UnknownErrorKind(pub String);

/// Why a snapshot from the wire is refused.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// A histogram that does not decode.
    #[error(transparent)]
    Histogram(#[from] HistogramError),
    /// An error kind this version does not know.
    #[error(transparent)]
    ErrorKind(#[from] UnknownErrorKind),
}

/// One group's part of a [`Snapshot`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapshotGroup {
    /// Group id.
    pub group: usize,
    /// Its counters.
    pub counters: Counters,
    /// Its latencies, µs (HDR V2, base64).
    pub latency: String,
    /// Its statuses, error kinds, dropped and completed iterations.
    #[serde(default)]
    pub tally: WireTally,
}

impl Snapshot {
    /// `s` of share `share`, for the wire.
    pub fn of(share: u32, s: &IntervalSnapshot) -> Self {
        Self {
            share,
            second: s.second,
            span_s: s.span_s,
            counters: s.counters,
            latency: encode_histogram(&s.latency),
            in_flight: s.in_flight,
            groups: s
                .groups
                .iter()
                .map(|g| SnapshotGroup {
                    group: g.group,
                    counters: g.counters,
                    latency: encode_histogram(&g.latency),
                    tally: WireTally::of(&g.tally),
                })
                .collect(),
            checks: s.checks.clone(),
            tally: WireTally::of(&s.tally),
        }
    }

    /// Back to an interval snapshot; a histogram that does not decode, or an error kind this
    /// version does not know, is refused.
    pub fn decode(&self) -> Result<IntervalSnapshot, SnapshotError> {
        let groups = self
            .groups
            .iter()
            .map(|g| {
                Ok(GroupInterval {
                    group: g.group,
                    counters: g.counters,
                    latency: decode_histogram(&g.latency)?,
                    tally: g.tally.decode()?,
                })
            })
            .collect::<Result<Vec<_>, SnapshotError>>()?;
        Ok(IntervalSnapshot {
            second: self.second,
            span_s: self.span_s,
            counters: self.counters,
            latency: decode_histogram(&self.latency)?,
            in_flight: self.in_flight,
            groups,
            checks: self.checks.clone(),
            tally: self.tally.decode()?,
            // The per-second breakdown of live views; the final records carry the rest.
            breakdown: Default::default(),
        })
    }
}

/// Adds `s` (another thread's part of the same second) into `into`.
pub fn add_snapshot(into: &mut IntervalSnapshot, s: &IntervalSnapshot) {
    into.span_s = into.span_s.max(s.span_s);
    into.counters.merge(&s.counters);
    add_histogram(&mut into.latency, &s.latency);
    into.in_flight += s.in_flight;
    into.tally.add(&s.tally);
    for g in &s.groups {
        match into.groups.iter_mut().find(|o| o.group == g.group) {
            Some(o) => {
                o.counters.merge(&g.counters);
                add_histogram(&mut o.latency, &g.latency);
                o.tally.add(&g.tally);
            }
            None => into.groups.push(g.clone()),
        }
    }
    if into.checks.len() < s.checks.len() {
        into.checks.resize(s.checks.len(), [0, 0]);
    }
    for (a, b) in into.checks.iter_mut().zip(&s.checks) {
        a[0] += b[0];
        a[1] += b[1];
    }
}

fn add_histogram(into: &mut Histogram<u64>, h: &Histogram<u64>) {
    // Every histogram of volley's has the same bounds, so adding never fails.
    let _ = into.add(h);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::recorder::new_histogram;

    fn second(requests: u64, latency_us: u64) -> IntervalSnapshot {
        let mut latency = new_histogram();
        latency.record(latency_us).unwrap();
        IntervalSnapshot {
            second: 3,
            span_s: 1.0,
            counters: Counters {
                requests,
                ..Counters::default()
            },
            latency: latency.clone(),
            in_flight: 2,
            groups: vec![GroupInterval {
                group: 1,
                counters: Counters::default(),
                latency,
                tally: Default::default(),
            }],
            checks: vec![[requests, 0]],
            tally: Tally {
                statuses: vec![(200, requests)],
                errors: vec![(ErrorKind::Timeout, 1)],
                dropped: 1,
                completed: requests,
                streams: Default::default(),
            },
            breakdown: Default::default(),
        }
    }

    #[test]
    fn a_snapshot_survives_the_wire_exactly() {
        let mut s = second(5, 1200);
        add_snapshot(&mut s, &second(7, 90_000));
        let text = serde_json::to_string(&Snapshot::of(2, &s)).unwrap();
        let back: Snapshot = serde_json::from_str(&text).unwrap();
        assert_eq!(back.share, 2);
        let d = back.decode().unwrap();
        assert_eq!(d.counters.requests, 12);
        assert_eq!(d.latency, s.latency);
        assert_eq!(d.latency.len(), 2);
        assert_eq!(d.groups.len(), 1);
        assert_eq!(d.groups[0].latency.len(), 2);
        assert_eq!(d.checks, vec![[12, 0]]);
        assert_eq!(d.in_flight, 4);
        assert_eq!(d.tally.statuses, vec![(200, 12)]);
        assert_eq!(d.tally.errors, vec![(ErrorKind::Timeout, 2)]);
        assert_eq!((d.tally.dropped, d.tally.completed), (2, 12));
    }

    #[test]
    fn a_damaged_histogram_is_refused() {
        let mut w = Snapshot::of(0, &second(1, 10));
        w.latency = "bm90IGEgaGlzdG9ncmFt".into();
        assert!(w.decode().is_err());
    }
}
