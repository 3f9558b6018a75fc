//! A variant: one configuration, measured once or repeatedly — what a comparison compares and
//! the like-for-like checks look at.

use std::path::PathBuf;

use crate::record::model::RunRecord;

/// One configuration, measured once or repeatedly.
#[derive(Debug, Clone)]
pub struct Variant {
    /// Its name in tables and charts.
    pub label: String,
    /// Where its records came from (file or folder).
    pub source: PathBuf,
    /// Its runs (at least one).
    pub runs: Vec<RunRecord>,
}
