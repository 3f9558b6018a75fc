//! The merged record's parts: the per-second series, the result groups, checks, thresholds,
//! the schedule check and warnings.

use std::collections::BTreeMap;

use super::figures::{merged_arrival, merged_histogram, sum_maps};
use super::{MergeError, PlacedShare};
use crate::analysis::percentiles;
use crate::plan::threshold::{self, Threshold};
use crate::record::batches::Batches;
use crate::record::encode_histogram;
use crate::record::group_series::GroupSeries;
use crate::record::model::{
    CheckResult, Group, GroupKind, RunRecord, ThresholdResult, Warning, WarningCode,
};
use crate::record::selfcheck::{SelfCheck, SelfCheckCode, SelfCheckOutcome};
use crate::record::series::SecondStats;
use crate::run::{RecordView, windows::per_sec};

/// The latency batches aligned as the series are (a share's second `k` is merged second
/// `k + round(offset)`), at the longest batch length of the shares.
pub(super) fn batches(parts: &[PlacedShare]) -> Result<Batches, MergeError> {
    let mut merged = Batches::new();
    for p in parts {
        let h = &p.record.histograms;
        let own = Batches::decode(h.batch_s, &h.batches_us).map_err(|e| MergeError::Field {
            record: p.source.to_string(),
            why: format!("histograms.batches_us: {e}"),
        })?;
        merged.add_shifted(&own, p.offset_s.round() as u64);
    }
    Ok(merged)
}

/// The series aligned by wall-clock second: a share's second `k` is merged second
/// `k + round(offset)`. Counts are summed, requests in flight too; a merged second's span is
/// the longest of its parts'. The records keep no per-second histograms, so a second's
/// percentiles are merged only when one share alone has it, and are null otherwise.
pub(super) fn series(parts: &[PlacedShare]) -> Vec<SecondStats> {
    let mut by_second: BTreeMap<u64, (SecondStats, usize)> = BTreeMap::new();
    for p in parts {
        let shift = p.offset_s.round() as u64;
        for s in &p.record.series {
            let t_s = s.t_s + shift;
            let entry = by_second.entry(t_s).or_insert_with(|| {
                let mut zero = s.clone();
                zero.t_s = t_s;
                (zero, 0)
            });
            let (m, n) = entry;
            if *n > 0 {
                m.span_s = m.span_s.max(s.span_s);
                m.requests += s.requests;
                m.not_sent += s.not_sent;
                m.errors += s.errors;
                m.bytes_sent += s.bytes_sent;
                m.bytes_received += s.bytes_received;
                m.in_flight += s.in_flight;
                (m.p50_ms, m.p90_ms, m.p99_ms) = (None, None, None);
            }
            *n += 1;
        }
    }
    by_second.into_values().map(|(s, _)| s).collect()
}

/// Where a group's window begins in its share, seconds after that share began measuring.
fn group_start(r: &RunRecord, g: &Group) -> f64 {
    if let Some(start) = g.start_s {
        return start;
    }
    let scenario = match g.kind {
        GroupKind::Scenario => Some(&g.name),
        _ => g.scenario.as_ref(),
    };
    let start_after = r
        .config
        .scenarios
        .iter()
        .find(|s| Some(&s.name) == scenario)
        .map_or(0.0, |s| s.start_after_s);
    (start_after - r.config.warmup_s).max(0.0)
}

/// The groups, merged by (kind, scenario, name) in the first share's order. A group's merged
/// window runs from its earliest start to its latest end on the wall clock, like the run's.
pub(super) fn groups(parts: &[PlacedShare]) -> Result<Vec<Group>, MergeError> {
    let first = parts[0].record;
    first
        .groups
        .iter()
        .map(|g| {
            let same =
                |o: &&Group| o.kind == g.kind && o.name == g.name && o.scenario == g.scenario;
            let mine: Vec<(&PlacedShare, &Group)> = parts
                .iter()
                .filter_map(|p| p.record.groups.iter().find(same).map(|o| (p, o)))
                .collect();
            merge_group(&mine)
        })
        .collect()
}

fn merge_group(mine: &[(&PlacedShare, &Group)]) -> Result<Group, MergeError> {
    let g = mine[0].1;
    let starts = mine
        .iter()
        .map(|(p, o)| p.offset_s + group_start(p.record, o));
    let ends = mine
        .iter()
        .map(|(p, o)| p.offset_s + group_start(p.record, o) + o.window_s);
    let start = starts.fold(f64::INFINITY, f64::min);
    let window = ends.fold(0.0, f64::max) - start;
    let sum = |f: fn(&Group) -> u64| mine.iter().map(|(_, o)| f(o)).sum::<u64>();
    let (requests, drained) = (sum(|o| o.requests), sum(|o| o.drained));
    let parts: Vec<PlacedShare> = mine
        .iter()
        .map(|(p, _)| PlacedShare {
            source: p.source,
            record: p.record,
            index: p.index,
            offset_s: p.offset_s,
        })
        .collect();
    let latency = merged_histogram(
        &parts,
        |r| {
            r.groups
                .iter()
                .find(|o| o.kind == g.kind && o.name == g.name && o.scenario == g.scenario)
                .map(|o| &o.histogram_us)
        },
        &format!("groups `{}`", g.name),
    )?
    .expect("every group has one");
    let shifted = |f: fn(&Group) -> Option<f64>| {
        mine.iter()
            .filter_map(|(p, o)| f(o).map(|v| v + p.offset_s))
            .collect::<Vec<f64>>()
    };
    Ok(Group {
        kind: g.kind,
        name: g.name.clone(),
        scenario: g.scenario.clone(),
        operation: g.operation.clone(),
        start_s: shifted(|o| o.start_s).into_iter().reduce(f64::min),
        end_s: shifted(|o| o.end_s).into_iter().reduce(f64::max),
        target_vus: sum_opt(mine.iter().map(|(_, o)| o.target_vus)),
        target_rps: sum_opt(mine.iter().map(|(_, o)| o.target_rps)),
        requests,
        errors: sum(|o| o.errors),
        not_sent: sum(|o| o.not_sent),
        drained,
        window_s: window,
        rps: per_sec(requests - drained, window),
        iterations: sum_opt(mine.iter().map(|(_, o)| o.iterations)),
        arrival: merged_arrival(mine.iter().map(|(_, o)| o.arrival), window),
        latency_ms: percentiles(&latency),
        status: sum_maps(mine.iter().map(|(_, o)| &o.status)),
        errors_by_kind: sum_maps(mine.iter().map(|(_, o)| &o.errors_by_kind)),
        histogram_us: encode_histogram(&latency),
        ramp_from: sum_opt(mine.iter().map(|(_, o)| o.ramp_from)),
        think_s: mine.iter().map(|(_, o)| o.think_s).sum(),
        pacing_s: mine.iter().map(|(_, o)| o.pacing_s).sum(),
        streams: crate::record::streams::merged(
            mine.iter().filter_map(|(_, o)| o.streams.as_ref()),
            window,
            &format!("groups `{}`.streams", g.name),
        )
        .map_err(|e| MergeError::Field {
            record: mine[0].0.source.to_string(),
            why: e.to_string(),
        })?,
        ci95: None,
        batches: group_seconds(mine)?.map(|s| s.to_record()),
    })
}

/// A group's seconds in every share that has the group, aligned as the series are (a share's
/// second `k` is merged second `k + round(offset)`); none unless each of them kept its own.
fn group_seconds(mine: &[(&PlacedShare, &Group)]) -> Result<Option<GroupSeries>, MergeError> {
    let mut merged = GroupSeries::new();
    for (p, o) in mine {
        let Some(b) = &o.batches else {
            return Ok(None);
        };
        let own = GroupSeries::from_record(b).map_err(|e| MergeError::Field {
            record: p.source.to_string(),
            why: format!("groups `{}`.batches: {e}", o.name),
        })?;
        merged.add_shifted(&own, p.offset_s.round() as u64);
    }
    Ok(Some(merged))
}

fn sum_opt<T: std::iter::Sum<T>>(values: impl Iterator<Item = Option<T>>) -> Option<T> {
    let present: Vec<T> = values.flatten().collect();
    (!present.is_empty()).then(|| present.into_iter().sum())
}

/// Checks summed by (scenario, step, check), in the first share's order.
pub(super) fn checks(parts: &[PlacedShare]) -> Vec<CheckResult> {
    let key = |c: &CheckResult| (c.scenario.clone(), c.step.clone(), c.check.clone());
    let mut totals: BTreeMap<_, (u64, u64)> = BTreeMap::new();
    for c in parts.iter().flat_map(|p| &p.record.checks) {
        let t = totals.entry(key(c)).or_insert((0, 0));
        t.0 += c.passed;
        t.1 += c.failed;
    }
    parts[0]
        .record
        .checks
        .iter()
        .map(|c| {
            let (passed, failed) = totals[&key(c)];
            CheckResult {
                passed,
                failed,
                ..c.clone()
            }
        })
        .collect()
}

/// The thresholds judged on the merged record. One that ended a share's run has failed: it
/// says when (the earliest, on the merged clock) and with the value that share saw then.
pub(super) fn thresholds(
    parts: &[PlacedShare],
    merged: &RunRecord,
) -> Result<Vec<ThresholdResult>, MergeError> {
    let view = RecordView::new(merged);
    parts[0]
        .record
        .thresholds
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let th = parse(t).map_err(|why| MergeError::Field {
                record: parts[0].source.to_string(),
                why: format!("thresholds[{i}]: {why}"),
            })?;
            let observed = th.observe(&view);
            let abort = parts
                .iter()
                .filter_map(|p| {
                    let own = p.record.thresholds.get(i).filter(|o| o.aborted)?;
                    Some((
                        p.offset_s + own.aborted_at_s.unwrap_or(0.0),
                        own.observed_at_abort,
                    ))
                })
                .min_by(|a, b| a.0.total_cmp(&b.0));
            Ok(ThresholdResult::judged(
                t.metric.clone(),
                t.condition.clone(),
                observed,
                th.metric.unit(),
                th.passes(observed),
                abort,
            ))
        })
        .collect()
}

/// A threshold as the record writes it, parsed again to be judged.
fn parse(t: &ThresholdResult) -> Result<Threshold, threshold::ThresholdError> {
    let (metric, filter) = threshold::parse_metric(&t.metric)?;
    let (stat, op, bound) = threshold::parse_recorded_condition(metric, &t.condition)?;
    Ok(Threshold {
        metric_text: t.metric.clone(),
        condition_text: t.condition.clone(),
        metric,
        filter,
        stat,
        op,
        bound,
        abort_on_fail: false,
        grace: std::time::Duration::ZERO,
    })
}

/// The merged record's warnings: those of the merged figures, then each share's own that
/// the merged figures do not repeat (saying which share), then the merge's own.
pub(super) fn warnings(parts: &[PlacedShare], merged: &RunRecord, count: u32) -> Vec<Warning> {
    let mut out = crate::analysis::diagnose(merged);
    for p in parts {
        for w in &p.record.warnings {
            if !out.iter().any(|o| o.code == w.code) {
                out.push(Warning {
                    code: w.code.clone(),
                    message: format!("share {}/{count}: {}", p.index, w.message),
                });
            }
        }
    }
    // Warned about where the rates lose their intervals: apart by over 1 % of the window, or
    // by over a second (every interval lost) in a run long enough that 1 % is more.
    let windows = || super::windows(parts);
    let shares = crate::record::shares::shares_apart(windows());
    if crate::record::shares::rates_apart(windows()) || shares.is_some() {
        let (began, ended) = crate::record::shares::spreads(windows());
        out.push(Warning {
            code: WarningCode::SharesNotTogether,
            message: format!(
                "the shares began measuring {began:.2} s apart and ended {ended:.2} s apart: the \
                 merged window spans them all ({:.1} s), so the rates are what the generators \
                 achieved together over it, not at full load, and have no interval; start the \
                 shares together (the coordinator)",
                merged.summary.duration_s
            ),
        });
    }
    if let Some(m) = merged.merged.as_ref().filter(|m| !m.missing.is_empty()) {
        let names: Vec<String> = m.missing.iter().map(|i| format!("{i}/{count}")).collect();
        out.push(Warning {
            code: WarningCode::SharesMissing,
            message: format!(
                "share(s) {} are missing: their load is in no figure",
                names.join(", ")
            ),
        });
    }
    out
}

/// The merged record's self-checks: those its own figures allow (Little's law is judged in
/// each share's own record, where the VUs and the window are one generator's), and the
/// schedule check the shares made ([`schedule_kept`]).
pub(super) fn self_checks(parts: &[PlacedShare], merged: &RunRecord) -> Vec<SelfCheck> {
    use crate::analysis::selfcheck::{ExpectedLoad, Sends, run};
    let load = ExpectedLoad::NotApplicable(
        "a merged record: Little's law is judged in each share's own record, where the VUs and \
         the window are one generator's"
            .into(),
    );
    let mut checks = run(merged, &load, &Sends::NotApplicable(String::new()));
    schedule_kept(parts, &mut checks);
    checks
}

/// The merged record's schedule check: the shares' own (each tested its own sample of sends,
/// which the records do not carry): the first share that failed it, else passed when some share
/// passed it and none failed.
fn schedule_kept(parts: &[PlacedShare], checks: &mut [SelfCheck]) {
    let Some(merged) = checks
        .iter_mut()
        .find(|c| c.code == SelfCheckCode::ScheduleKept)
    else {
        return;
    };
    let theirs = |p: &PlacedShare| -> Option<SelfCheck> {
        let c = p
            .record
            .self_checks
            .iter()
            .find(|c| c.code == merged.code)?;
        Some(SelfCheck {
            message: format!("share {}: {}", p.index, c.message),
            ..c.clone()
        })
    };
    let found: Vec<SelfCheck> = parts.iter().filter_map(theirs).collect();
    let pick = |o: SelfCheckOutcome| found.iter().find(|c| c.outcome == o);
    match pick(SelfCheckOutcome::Failed).or_else(|| pick(SelfCheckOutcome::Passed)) {
        Some(c) => *merged = c.clone(),
        None => {
            merged.message = "no share tested its schedule (closed model, or records of older \
                              versions): each share's sample of sends stays in its own record"
                .into();
        }
    }
}
