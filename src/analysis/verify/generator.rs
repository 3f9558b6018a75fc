//! The generator's own figures: its CPU steal share is a share, and a run whose share reached
//! the limit says so in its warnings.

use super::{Findings, Rule};
use crate::analysis::{STEAL_SHARE_LIMIT, stolen};
use crate::record::model::{RunRecord, WarningCode};

/// [`Rule::StealWarned`].
pub(super) fn check(r: &RunRecord, f: &mut Findings) {
    let Some(share) = r.generator.steal_share else {
        return;
    };
    f.check(
        (0.0..=1.0).contains(&share),
        Rule::StealWarned,
        "generator.steal_share",
        share,
        || "a share of the machine's CPU time, 0–1".into(),
    );
    let warned = r.warnings.iter().any(|w| w.code == WarningCode::CpuSteal);
    f.check(
        warned || stolen(Some(share)).is_none(),
        Rule::StealWarned,
        "warnings",
        "no cpu_steal warning",
        || format!("a cpu_steal warning: generator.steal_share = {share} ≥ {STEAL_SHARE_LIMIT}"),
    );
}
