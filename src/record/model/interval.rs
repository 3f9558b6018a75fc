//! A run's figures with their uncertainty: 95 % confidence intervals by batch means
//! (docs/measurement.md, "Uncertainty").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One figure with its 95 % confidence interval: `value ± half_width`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bound {
    /// The figure itself, as the summary has it (ms for latencies, req/s for throughput).
    pub value: f64,
    /// Half the interval's width, in the figure's unit: the interval is `value ± half_width`.
    pub half_width: f64,
    /// The batches the interval was computed from.
    pub batches: u32,
    /// Each batch's length, s (the last one takes what follows it: the drain's responses).
    pub batch_s: u64,
    /// The batches' effective number: n over their autocorrelation time, as
    /// `ci95.autocorrelation` says it was estimated.
    pub effective: f64,
}

/// How a run's intervals took the batches' autocorrelation out (docs/measurement.md,
/// "Uncertainty"): records written before the field have [`Lag1`](Self::Lag1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Autocorrelation {
    /// n_eff = n·(1 − ρ)/(1 + ρ) when the lag-1 autocorrelation ρ is above 2/√n, else n
    /// (volley before 2026-11-29).
    #[default]
    Lag1,
    /// n_eff = n / τ, τ the integrated autocorrelation time by Geyer's initial positive
    /// sequence (at least 1).
    InitialPositiveSequence,
}

impl Bound {
    /// The half-width as a share of the figure (0.02 for ±2 %); `None` for a figure of 0.
    pub fn relative(&self) -> Option<f64> {
        (self.value != 0.0).then(|| self.half_width / self.value.abs())
    }
}

/// The 95 % confidence intervals of a run's headline figures. A figure is absent when the run
/// had too few batches for it (fewer than 5 of at least a second, or too few responses in each
/// for its percentile).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ci95 {
    /// How the batches' autocorrelation was taken out (absent in records written before it was
    /// recorded: [`Autocorrelation::Lag1`]).
    #[serde(default)]
    pub autocorrelation: Autocorrelation,
    /// Throughput (`summary.rps`), req/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rps: Option<Bound>,
    /// Mean latency (`summary.latency_ms.mean`), ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ms: Option<Bound>,
    /// Median latency, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<Bound>,
    /// 90th percentile latency, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90_ms: Option<Bound>,
    /// 95th percentile latency, ms (absent in records written before it had one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<Bound>,
    /// 99th percentile latency, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<Bound>,
    /// 99.9th percentile latency, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_9_ms: Option<Bound>,
    /// A run asked to last until precise (`--precision`, `[precision]`): what it asked and
    /// whether it got there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<PrecisionOutcome>,
    /// Why the run has no intervals although it has the seconds for them: its load did not
    /// hold one level (a ramp, a ladder, scenarios that start or end apart), and batch means
    /// assume every second measures the same load. In words, e.g. "scenario `up` changes its
    /// load over time (a ramp or a ladder)"; absent for a steady load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsteady: Option<String>,
}

/// What a result group's intervals are computed from (`groups[].batches` of run.json): its
/// latency in batches and its requests per second, kept so that `volley verify` and a merge can
/// compute them again.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupBatches {
    /// Each batch's length, s.
    pub batch_s: u64,
    /// The group's latency histogram in batches (HDR V2, base64, µs), from batch 0: batch *j*
    /// holds the group's responses that completed in seconds [j·batch_s, (j+1)·batch_s).
    pub latency_us: Vec<String>,
    /// The group's requests finished in each second since measuring began, from second 0.
    pub requests: Vec<u64>,
}

/// A figure an interval is kept for, by its name in `--precision` and `[precision]`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum BoundFigure {
    /// Throughput.
    Rps,
    /// Mean latency.
    Mean,
    /// Median latency.
    P50,
    /// 90th percentile latency.
    P90,
    /// 95th percentile latency.
    P95,
    /// 99th percentile latency.
    P99,
    /// 99.9th percentile latency.
    #[serde(rename = "p99.9")]
    P99_9,
}

impl BoundFigure {
    /// Every figure, in the order reports show them.
    pub const ALL: [Self; 7] = [
        Self::Rps,
        Self::Mean,
        Self::P50,
        Self::P90,
        Self::P95,
        Self::P99,
        Self::P99_9,
    ];

    /// Its name in flags, plans and reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rps => "rps",
            Self::Mean => "mean",
            Self::P50 => "p50",
            Self::P90 => "p90",
            Self::P95 => "p95",
            Self::P99 => "p99",
            Self::P99_9 => "p99.9",
        }
    }

    /// Its field in `summary.ci95` of run.json: `rps`, `mean_ms`, `p50_ms`, … `p99_9_ms`.
    pub fn field(self) -> &'static str {
        match self {
            Self::Rps => "rps",
            Self::Mean => "mean_ms",
            Self::P50 => "p50_ms",
            Self::P90 => "p90_ms",
            Self::P95 => "p95_ms",
            Self::P99 => "p99_ms",
            Self::P99_9 => "p99_9_ms",
        }
    }

    /// The figure named `name` (as [`name`](Self::name) writes it; `throughput` for `rps`).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            // As `volley compare --metric` and `volley ab --metric` name it.
            "throughput" => Some(Self::Rps),
            _ => Self::ALL.into_iter().find(|f| f.name() == name),
        }
    }

    /// A latency percentile's quantile (0.99 for p99); `None` for the rate and the mean.
    pub fn quantile(self) -> Option<f64> {
        match self {
            Self::P50 => Some(0.5),
            Self::P90 => Some(0.9),
            Self::P95 => Some(0.95),
            Self::P99 => Some(0.99),
            Self::P99_9 => Some(0.999),
            Self::Rps | Self::Mean => None,
        }
    }
}

impl Ci95 {
    /// A load that did not hold one level: no intervals, `why` in `unsteady`, and
    /// `autocorrelation` the method a steady load's intervals would have had (not `lag1`, which
    /// marks older records).
    pub fn unsteady(why: String) -> Self {
        Ci95 {
            autocorrelation: Autocorrelation::InitialPositiveSequence,
            unsteady: Some(why),
            ..Ci95::default()
        }
    }

    /// The interval of `figure`, if the run had one.
    pub fn get(&self, figure: BoundFigure) -> Option<&Bound> {
        match figure {
            BoundFigure::Rps => self.rps.as_ref(),
            BoundFigure::Mean => self.mean_ms.as_ref(),
            BoundFigure::P50 => self.p50_ms.as_ref(),
            BoundFigure::P90 => self.p90_ms.as_ref(),
            BoundFigure::P95 => self.p95_ms.as_ref(),
            BoundFigure::P99 => self.p99_ms.as_ref(),
            BoundFigure::P99_9 => self.p99_9_ms.as_ref(),
        }
    }

    /// Sets the interval of `figure`.
    pub fn set(&mut self, figure: BoundFigure, bound: Option<Bound>) {
        let slot = match figure {
            BoundFigure::Rps => &mut self.rps,
            BoundFigure::Mean => &mut self.mean_ms,
            BoundFigure::P50 => &mut self.p50_ms,
            BoundFigure::P90 => &mut self.p90_ms,
            BoundFigure::P95 => &mut self.p95_ms,
            BoundFigure::P99 => &mut self.p99_ms,
            BoundFigure::P99_9 => &mut self.p99_9_ms,
        };
        *slot = bound;
    }
}

/// A precision a run was asked to reach: `figure`'s half-width within `share` of it — the
/// run's figure, or with `part` that scenario's, step's or phase's own (`p99{step=pay}=2%`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PrecisionGoal {
    /// The figure.
    pub figure: BoundFigure,
    /// The largest half-width asked, as a share of the figure (0.02 for 2 %).
    pub share: f64,
    /// The part of the plan whose figure it is; absent for the run's own (and in records
    /// before parts could be asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<super::Part>,
}

impl PrecisionGoal {
    /// The goal's figure as written: `p99`, `p99{step=pay}`.
    pub fn label(&self) -> String {
        match &self.part {
            Some(p) => format!("{}{}", self.figure.name(), p.filter()),
            None => self.figure.name().to_string(),
        }
    }
}

/// What a run asked to last until precise got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PrecisionOutcome {
    /// The goals asked.
    pub goals: Vec<PrecisionGoal>,
    /// Every goal was met: the run stopped then (`at_s`), before its maximum length.
    pub reached: bool,
    /// When the goals were met, s since measuring began; null when they never were (the run
    /// went on to its maximum length, or was interrupted or stopped by a failed threshold
    /// first).
    pub at_s: Option<f64>,
}
