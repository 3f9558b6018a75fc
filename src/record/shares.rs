//! The record's fields for tests run by several generators: the share a record is of
//! (`--segment i/N`), and, in a merged record, where its figures came from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::model::{Environment, Generator, Warning};

/// The share of a test this record is of (`volley run --segment i/N`, quick mode too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Share {
    /// Which share, numbered from 0 (as `JOB_COMPLETION_INDEX`).
    pub index: u32,
    /// How many shares the test was divided into.
    pub count: u32,
    /// The hash of the whole test, the same in every share's record, so that `volley merge`
    /// refuses records of different tests: `sha256:` and 64 hex digits over the plan file, the
    /// data files it reads, `--set` and `--time-scale` (plans), or over every flag that shapes
    /// the load and the requests (quick mode) — never over the share or generator-local
    /// options (`--segment`, `--threads`, `--out`, output flags).
    pub plan_hash: String,
    /// When measuring began (the end of warm-up), on this generator's wall clock (RFC 3339,
    /// UTC, microseconds): `series[k]` covers [k, k + 1) seconds after it. Merges align the
    /// shares' series and windows by it.
    pub measure_started_at: String,
}

/// Where a merged record's figures came from (`volley merge`; the coordinator).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Merged {
    /// How many shares the test was divided into.
    pub count: u32,
    /// The hash of the test (every share's `share.plan_hash`).
    pub plan_hash: String,
    /// When the merged window began (the earliest share's `measure_started_at`); merged
    /// `series[k]` covers [k, k + 1) seconds after it.
    pub measure_started_at: String,
    /// Each generator's own figures, by share number.
    pub shares: Vec<ShareFigures>,
    /// Shares whose record is missing (a lost generator): their load is in no figure.
    #[serde(default)]
    pub missing: Vec<u32>,
    /// What the lost generators had reported before they were lost (the coordinator's count of
    /// their snapshots); absent when none was, and in records of older versions. Only their
    /// connections are in the summary (`summary.connections_opened`): their requests have no
    /// latencies to merge, so they are in no other figure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<LostShare>,
}

/// How far apart shares may begin or end measuring, in seconds, before the merged window's
/// seconds measure different loads (some with every share's load, some with only some).
pub const APART_S: f64 = 1.0;

/// Why merged shares measured different loads, when they did: they began or ended measuring
/// more than [`APART_S`] apart. `windows` are each share's `(offset_s, duration_s)` in the
/// merged window ([`ShareFigures`]). A merged record so made has no intervals
/// (`summary.ci95.unsteady`, docs/measurement.md "Merged and repeated runs").
pub fn shares_apart(windows: impl Iterator<Item = (f64, f64)> + Clone) -> Option<String> {
    let (began, ended) = spreads(windows);
    (began > APART_S || ended > APART_S).then(|| {
        format!(
            "the shares began measuring {began:.1} s apart and ended {ended:.1} s apart, so \
             some seconds hold only some shares' load"
        )
    })
}

/// How far apart the shares began and ended measuring, s: the spreads of their windows'
/// starts and ends.
pub fn spreads(windows: impl Iterator<Item = (f64, f64)> + Clone) -> (f64, f64) {
    let spread = |of: fn((f64, f64)) -> f64| {
        let (lo, hi) = windows
            .clone()
            .map(of)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(x), hi.max(x))
            });
        if hi >= lo { hi - lo } else { 0.0 }
    };
    (
        spread(|(offset, _)| offset),
        spread(|(offset, duration)| offset + duration),
    )
}

/// Shares that began or ended further apart than this share of the shortest share's window
/// leave the merged rates without an interval.
pub const RATES_APART_SHARE: f64 = 0.01;

/// Whether merged shares began or ended more than [`RATES_APART_SHARE`] of the shortest
/// share's window apart. The rates are then over a window whose edges hold only some shares'
/// load, below the rate of the seconds where all ran by about that share, and an interval made
/// from the seconds would sit beside its figure (0.42 s apart over 6 s: 3,546 ± 83 req/s,
/// while every whole second held 3,678–3,877). So the run's and the groups' `rps` have none;
/// their latencies keep theirs.
pub fn rates_apart(windows: impl Iterator<Item = (f64, f64)> + Clone) -> bool {
    let shortest = windows.clone().map(|w| w.1).fold(f64::INFINITY, f64::min);
    let (began, ended) = spreads(windows);
    shortest.is_finite() && began.max(ended) > RATES_APART_SHARE * shortest
}

impl Merged {
    /// [`shares_apart`] over this record's shares.
    pub fn apart(&self) -> Option<String> {
        shares_apart(self.windows())
    }

    /// [`rates_apart`] over this record's shares.
    pub fn rates_apart(&self) -> bool {
        rates_apart(self.windows())
    }

    /// Each share's `(offset_s, duration_s)` in the merged window.
    fn windows(&self) -> impl Iterator<Item = (f64, f64)> + Clone {
        self.shares.iter().map(|s| (s.offset_s, s.duration_s))
    }
}

/// What a lost generator had reported before it was lost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LostShare {
    /// Which share.
    pub index: u32,
    /// Measured seconds it reported.
    pub seconds: u64,
    /// Requests it reported.
    pub requests: u64,
    /// Failed attempts it reported.
    pub errors: u64,
    /// Connections it reported opened.
    pub connections_opened: u64,
}

/// One generator's figures, kept beside the merged ones.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShareFigures {
    /// Which share.
    pub index: u32,
    /// The record it came from (a path), when merged from files.
    pub source: Option<String>,
    /// When this generator began measuring, seconds after the merged window began.
    pub offset_s: f64,
    /// Its own measured window, seconds.
    pub duration_s: f64,
    /// Its requests (reached the network, the drain's included).
    pub requests: u64,
    /// Its failed attempts.
    pub errors: u64,
    /// Its throughput over its own window, requests per second.
    pub rps: f64,
    /// Set when a signal or stop request ended its run early.
    pub interrupted: Option<String>,
    /// Its machine.
    pub environment: Environment,
    /// Its own CPU, memory and send lag.
    pub generator: Generator,
    /// Its own warnings.
    pub warnings: Vec<Warning>,
    /// What it watched on the target's side (`[[watch]]`, `--watch`), exactly as its own
    /// record has it (one value per second of its own `series`). Kept side by side, never
    /// merged: generators scrape the target's page each at its own instants, and a process is
    /// watched on each generator's own machine, so no sum or mean of them is a figure of the
    /// target (docs/measurement.md). Absent when it watched nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<super::watch::Watched>,
}
