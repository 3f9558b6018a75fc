//! The stream figures of a run's record: each group's, and the whole run's, from the merged
//! recorder, with the objectives their streams were judged against.

use crate::plan::Plan;
use crate::record::model::{StreamFigures, StreamSlo};
use crate::record::recorder::StreamStats;

/// The one objective set the streaming steps picked by `belongs` share; none when they have
/// none or differ.
fn shared_slo(plan: &Plan, belongs: impl Fn(usize, Option<usize>) -> bool) -> Option<StreamSlo> {
    let mut found: Option<StreamSlo> = None;
    for (si, sc) in plan.scenarios.iter().enumerate() {
        for step in sc.steps.iter().filter(|s| belongs(si, s.group)) {
            let Some(slo) = step.stream.as_ref().and_then(|s| s.objectives()) else {
                continue;
            };
            match found {
                Some(f) if f != slo => return None,
                _ => found = Some(slo),
            }
        }
    }
    found
}

/// The figures of group `group`'s streams over its window of `window_s` seconds.
pub(super) fn group(
    plan: &Plan,
    group: usize,
    stats: Option<&StreamStats>,
    window_s: f64,
) -> Option<StreamFigures> {
    let stats = stats?;
    let slo = shared_slo(plan, |si, step_group| {
        let sc = &plan.scenarios[si];
        step_group == Some(group)
            || sc.group == Some(group)
            || sc.phases.iter().any(|p| p.group == group)
    });
    Some(crate::record::streams::figures(stats, window_s, slo))
}

/// The figures of the whole run's streams over the measured window of `window_s` seconds.
pub(super) fn whole(
    plan: &Plan,
    stats: Option<&StreamStats>,
    window_s: f64,
) -> Option<StreamFigures> {
    let slo = shared_slo(plan, |_, _| true);
    Some(crate::record::streams::figures(stats?, window_s, slo))
}
