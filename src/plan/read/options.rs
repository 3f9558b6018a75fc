//! What the command line changes in a plan it reads.

use std::time::Duration;

use super::{Resolve, system_resolve};

/// Choices from the command line that change a plan.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// `--set key=value` ([`crate::plan::set_key::SetKey`]), in the order given (a later one of
    /// a key wins).
    pub sets: Vec<(crate::plan::set_key::SetKey, String)>,
    /// `--time-scale`: multiplies every duration of the load profiles (0.1 = ten times shorter).
    pub time_scale: f64,
    /// `--threads`.
    pub threads: Option<usize>,
    /// `--secret-header`: more headers whose values are secret (besides the plan's own).
    pub secret_headers: Vec<String>,
    /// How `target.base_url`'s host becomes an address: [`system_resolve`] unless a test or the
    /// fuzzer needs one that never leaves the machine.
    pub resolve: Resolve,
    /// Whether gRPC steps without `[target] proto` may fetch their schema from the target by
    /// server reflection while the plan is read (a network call). Off, such steps are an error.
    pub reflection: bool,
    /// `--segment i/N`: read only this share of the test; `None` = the whole.
    pub segment: Option<crate::schedule::Segment>,
    /// `--max-data-size`: the largest data file read, bytes.
    pub max_data_bytes: u64,
    /// `--tag KEY=VALUE`: tags added to (or replacing) the plan's `[tags]`.
    pub tags: Vec<(String, String)>,
    /// `--group-by`: more selectors grouping every step's responses (besides `[target]
    /// group_by`), as written.
    pub group_by: Vec<String>,
    /// `--expect-status`: the statuses that are a success for every HTTP step without a
    /// `checks.status` of its own (sorted codes); empty: none added.
    pub expect_status: Vec<u16>,
    /// `--buckets`: the latency buckets' upper bounds, over the plan's `[report] buckets`;
    /// empty: the plan's (or volley's 1-2-5).
    pub latency_buckets: Vec<Duration>,
    /// `--precision`: the precision goals, over the plan's `[precision]`; empty: the plan's.
    pub precision: Vec<crate::record::model::PrecisionGoal>,
    /// `--seed`: the Poisson arrivals' seed, over the plan's `seed`.
    pub seed: Option<u64>,
    /// The caller runs the plan at loads of its own (find-max's steps), not the plan's: what
    /// only the plan's own load must allow (a steady load for `--precision`) is not checked.
    pub load_replaced: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            sets: Vec::new(),
            time_scale: 1.0,
            threads: None,
            secret_headers: Vec::new(),
            resolve: system_resolve,
            reflection: true,
            segment: None,
            max_data_bytes: crate::plan::data::DEFAULT_MAX_DATA_BYTES,
            tags: Vec::new(),
            group_by: Vec::new(),
            expect_status: Vec::new(),
            latency_buckets: Vec::new(),
            precision: Vec::new(),
            seed: None,
            load_replaced: false,
        }
    }
}
