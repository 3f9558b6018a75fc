//! Analysis: from what the engine measured to the figures people read — percentiles, buckets,
//! the summary, and warnings about the run itself.

pub mod compare;
pub mod gate;
pub mod interval;
pub mod like_for_like;
pub mod metric;
pub mod proportion;
pub mod repeat_precision;
pub mod selfcheck;
pub mod sequential;
pub mod spectrum;
pub mod stats;
pub mod variant;
pub mod verdict;
pub mod verify;
mod warnings;
mod watch;

pub use crate::record::figures::{latency_buckets, percentiles};
pub use warnings::{LAG_P99_LIMIT_MS, SATURATED_UTILIZATION, STEAL_SHARE_LIMIT, diagnose, stolen};
