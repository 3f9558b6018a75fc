//! What a suite's rounds decided (`repeats = "until-decided"`), typed for scripts:
//! `suite.json` `decisions`, one per target after the first, beside the same in words
//! (`decided`).

use serde::{Deserialize, Serialize};

use super::model::Part;

/// The comparison of one target with the first, as its rounds left it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteDecision {
    /// The target compared.
    pub target: String,
    /// The first target, which it was compared with.
    pub baseline: String,
    /// Pairs of runs (rounds in which both ran) the comparison used.
    pub pairs: u32,
    /// Why its rounds stopped.
    pub stopped: Stopped,
    /// Each metric asked (`[until_decided] metrics`), in that order.
    pub metrics: Vec<MetricDecision>,
}

/// Why a sequence of A/B pairs stopped (`volley ab`; a suite's comparison of a target with the
/// first: its rounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// Every metric decided.
    Decided,
    /// `max_pairs` pairs (`--max-runs`, `max_runs` rounds) run.
    MaxRuns,
    /// The time budget spent.
    MaxTime,
    /// A run was interrupted (Ctrl-C), or a signal stopped the suite before its turn.
    Interrupted,
    /// A run failed (a suite's target that failed or aborted, or whose baseline did, runs no
    /// more).
    Failed,
    /// The runs given ran out (a replay of two folders of runs).
    RunsSpent,
    /// No metric left undecided could be decided by more pairs: each has a run without a
    /// value a look can test.
    Undecidable,
}

/// One metric's call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricDecision {
    /// The metric, as `[until_decided] metrics` names it: `p50`, `throughput`, `errors`, ….
    pub metric: String,
    /// The scenario, step or phase it is taken from (`{"step": "pay"}`); absent for the runs'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<Part>,
    /// The target against the first: better or worse by more than the threshold, equivalent
    /// within it, or undecided.
    pub call: MetricCall,
    /// The change at the latest look, % (the error rate: percentage points); absent before a
    /// look could test it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<f64>,
    /// Its interval at that look (same unit; an equivalence's at 1 − 2a).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<[f64; 2]>,
    /// The pair whose look decided it; absent while undecided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at_pair: Option<u32>,
}

/// A metric's call, in the metric's own direction (faster or fewer errors is `better`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricCall {
    /// Better than the first target by more than the threshold.
    Better,
    /// Worse by more than the threshold.
    Worse,
    /// Within ±threshold of it.
    Equivalent,
    /// Not decided.
    Undecided,
}
