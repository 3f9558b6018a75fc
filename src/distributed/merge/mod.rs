//! The exact merge of the records of the N shares of one test (`volley merge`).
//!
//! The merged record is what one generator running the whole test would have written, as far
//! as the records allow (docs/distributed.md, "Merged records"):
//!
//! - counts (requests, errors, statuses, error kinds, bytes, iterations, arrivals, checks) are
//!   summed; latency histograms (whole run, service, send lag, every group) are added bucket
//!   by bucket, so every percentile is the one the union of the responses has;
//! - time is the wall clock: each share's measuring began at its `share.measure_started_at`.
//!   **The merged window** runs from the earliest share's start of measuring to the latest
//!   share's end of window; every rate is divided by it. Series second `k` of a share that
//!   began measuring `d` seconds after the earliest is merged second `k + round(d)`;
//! - thresholds are judged again on the merged figures; one that ended a share's run
//!   (`abort_on_fail`) has failed;
//! - each generator's own figures (CPU, lag, warnings, its machine) are kept side by side in
//!   `merged.shares`.
//!
//! It refuses, saying which files: records that are not shares, of different tests (plan
//! hashes), of different volley versions or share counts, two records of one share, and a
//! missing share (unless told to merge what there is, as the coordinator does for lost
//! generators: the record then names the missing shares).

mod figures;
mod grouped;
mod parts;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::time::SystemTime;

use crate::analysis::interval;
use crate::record::RunRecord;
use crate::record::batches::Batches;
use crate::record::group_series::GroupSeries;
use crate::record::model::RunConfig;
use crate::record::shares::{LostShare, Merged, ShareFigures};

/// The merged record's latency batches and the intervals computed from them and its series;
/// none when a share's load was not steady (`unsteady`, as the shares' records say), or the
/// shares measured apart ([`crate::record::shares::shares_apart`]).
fn uncertainty(
    merged: &mut RunRecord,
    batches: &Batches,
    unsteady: Option<String>,
) -> Result<(), MergeError> {
    if let Some(why) = unsteady {
        merged.summary.ci95 = Some(crate::record::model::Ci95::unsteady(why));
        for g in &mut merged.groups {
            g.batches = None;
        }
        return Ok(());
    }
    group_uncertainty(merged)?;
    let latency = crate::record::decode_histogram(&merged.histograms.latency_us).map_err(|e| {
        MergeError::Field {
            record: "the merged record".into(),
            why: format!("histograms.latency_us: {e}"),
        }
    })?;
    let hs = batches.histograms();
    merged.summary.ci95 = Some(interval::ci95(&interval::Input {
        window_s: merged.summary.duration_s,
        series: &merged.series,
        batch_s: batches.batch_s(),
        batches: &hs,
        rps: merged.summary.rps,
        latency: &latency,
    }));
    if !batches.is_empty() {
        merged.histograms.batches_us = batches.encode();
        merged.histograms.batch_s = batches.batch_s();
    }
    Ok(())
}

/// Each merged group's intervals, from its shares' seconds merged (`groups[].batches`), for a
/// group that starts with the measured window.
fn group_uncertainty(merged: &mut RunRecord) -> Result<(), MergeError> {
    let field = |name: &str, e: crate::record::HistogramError| MergeError::Field {
        record: "the merged record".into(),
        why: format!("groups `{name}`: {e}"),
    };
    for g in &mut merged.groups {
        let Some(b) = g
            .batches
            .as_ref()
            .filter(|_| g.start_s.unwrap_or(0.0).abs() <= 1e-3)
        else {
            g.batches = None;
            continue;
        };
        let seconds = GroupSeries::from_record(b).map_err(|e| field(&g.name, e))?;
        let latency =
            crate::record::decode_histogram(&g.histogram_us).map_err(|e| field(&g.name, e))?;
        g.ci95 = Some(interval::of_group(
            &merged.series,
            &seconds,
            g.window_s,
            g.rps,
            &latency,
            interval::AUTOCORRELATION,
        ));
    }
    Ok(())
}

/// One record to merge.
#[derive(Debug, Clone)]
pub struct Input {
    /// Where it came from (a path), for messages and `merged.shares[].source`.
    pub source: String,
    /// The record.
    pub record: RunRecord,
}

/// Why records cannot be merged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no records to merge")]
    Empty,
    /// A record without `share`.
    #[error(
        "{0}: not the record of a share of a test (it has no `share`): only runs made with \
         `--segment i/N` can be merged"
    )]
    NotAShare(String),
    /// A record that is itself a merge.
    #[error("{0}: already a merged record")]
    AlreadyMerged(String),
    /// Records of different tests.
    #[error("{a} and {b} are shares of different tests (test {hash_a} against {hash_b})")]
    DifferentTests {
        /// One record.
        a: String,
        /// The other.
        b: String,
        /// Its test's hash.
        hash_a: String,
        /// The other's.
        hash_b: String,
    },
    /// Records of different volley versions.
    #[error(
        "{a} was written by volley {version_a}, {b} by volley {version_b}: merge records of one version"
    )]
    DifferentVersions {
        /// One record.
        a: String,
        /// The other.
        b: String,
        /// Its version.
        version_a: String,
        /// The other's.
        version_b: String,
    },
    /// Records of tests divided differently.
    #[error("{a} is a share of {count_a}, {b} of {count_b}")]
    DifferentCounts {
        /// One record.
        a: String,
        /// The other.
        b: String,
        /// Its share count.
        count_a: u32,
        /// The other's.
        count_b: u32,
    },
    /// Two records of one share.
    #[error("overlapping segments: {a} and {b} are both share {share}")]
    Overlap {
        /// One record.
        a: String,
        /// The other.
        b: String,
        /// The share, `i/N`.
        share: String,
    },
    /// Shares without a record.
    #[error("missing {}: {} of {count} shares given ({})", missing_list(.missing, *.count), .have.len(), have_list(.have, *.count))]
    Missing {
        /// The shares missing.
        missing: Vec<u32>,
        /// The shares given.
        have: Vec<u32>,
        /// The share count.
        count: u32,
    },
    /// A record's field that cannot be merged.
    #[error("{record}: {why}")]
    Field {
        /// The record.
        record: String,
        /// What is wrong.
        why: String,
    },
}

fn missing_list(missing: &[u32], count: u32) -> String {
    let names: Vec<String> = missing.iter().map(|i| format!("{i}/{count}")).collect();
    format!(
        "share{} {}",
        if missing.len() == 1 { "" } else { "s" },
        names.join(", ")
    )
}

fn have_list(have: &[u32], count: u32) -> String {
    let names: Vec<String> = have.iter().map(|i| format!("{i}/{count}")).collect();
    names.join(", ")
}

/// One share's record with its place in the merged window.
pub(crate) struct PlacedShare<'a> {
    pub(crate) source: &'a str,
    pub(crate) record: &'a RunRecord,
    pub(crate) index: u32,
    /// When it began measuring, seconds after the merged window began.
    pub(crate) offset_s: f64,
}

/// What a coordinator knows of the generators it lost: what they reported before, and the
/// whole test's configuration.
#[derive(Debug, Clone, Default)]
pub struct Lost {
    /// The lost shares' reported figures.
    pub shares: Vec<LostShare>,
    /// The whole test as one generator would run it; the merged record states it when shares
    /// are missing (their load is in no figure, but it was asked).
    pub whole: Option<RunConfig>,
}

/// Merges the records of a test's shares. With `allow_missing`, shares without a record are
/// named in `merged.missing` instead of refused (a coordinator with lost generators).
pub fn merge(inputs: &[Input], allow_missing: bool) -> Result<RunRecord, MergeError> {
    merge_with(
        inputs,
        allow_missing.then(Lost::default).as_ref(),
        Beside::default(),
    )
}

/// What a coordinator's merged record holds besides the shares' records, known before it is
/// built.
#[derive(Debug, Clone, Default)]
pub struct Beside {
    /// The merged record's id, as the coordinator's exported series were labelled (none: a new
    /// one).
    pub run_id: Option<String>,
    /// The whole test was stopped at the coordinator, by this signal (whatever each
    /// generator's record says).
    pub interrupted: Option<String>,
    /// The coordinator's outputs' warnings (remote-write pushes that failed).
    pub warnings: Vec<crate::record::model::Warning>,
}

/// Merges what there is of a test whose generators were lost: the shares without a record are
/// named in `merged.missing` with what they reported (`merged.lost`), their connections are in
/// the summary, and the configuration is the whole test's, as asked.
/// `beside` is what the coordinator adds (its signal, its outputs' warnings).
pub fn merge_lost(inputs: &[Input], lost: &Lost, beside: Beside) -> Result<RunRecord, MergeError> {
    merge_with(inputs, Some(lost), beside)
}

fn merge_with(
    inputs: &[Input],
    lost: Option<&Lost>,
    beside: Beside,
) -> Result<RunRecord, MergeError> {
    let (count, missing) = check(inputs, lost.is_some())?;
    let mut anchors = Vec::with_capacity(inputs.len());
    for i in inputs {
        let share = i.record.share.as_ref().expect("checked");
        let at = humantime::parse_rfc3339_weak(&share.measure_started_at).map_err(|e| {
            MergeError::Field {
                record: i.source.clone(),
                why: format!("share.measure_started_at: {e}"),
            }
        })?;
        anchors.push((at, share.index));
    }
    let origin = anchors.iter().map(|a| a.0).min().expect("not empty");
    let mut parts: Vec<PlacedShare> = inputs
        .iter()
        .zip(&anchors)
        .map(|(i, &(at, index))| PlacedShare {
            source: &i.source,
            record: &i.record,
            index,
            offset_s: since(origin, at),
        })
        .collect();
    parts.sort_by_key(|p| p.index);
    let window = parts
        .iter()
        .map(|p| p.offset_s + p.record.summary.duration_s)
        .fold(0.0, f64::max);
    let mut merged = figures::record(&parts, window)?;
    let lost = lost
        .map(|l| Lost {
            shares: l
                .shares
                .iter()
                .filter(|s| missing.contains(&s.index))
                .cloned()
                .collect(),
            whole: l.whole.clone(),
        })
        .unwrap_or_default();
    if !missing.is_empty() {
        // The load asked is the whole test's; the arrival figures cover only the shares there.
        merged.summary.target_rps = None;
        if let Some(whole) = &lost.whole {
            merged.config = RunConfig {
                threads: merged.config.threads,
                ..whole.clone()
            };
        }
    }
    merged.summary.connections_opened += lost
        .shares
        .iter()
        .map(|s| s.connections_opened)
        .sum::<u64>();
    merged.series = parts::series(&parts);
    crate::record::series::fit_to_window(&mut merged.series, window);
    merged.groups = parts::groups(&parts)?;
    uncertainty(&mut merged, &parts::batches(&parts)?, unsteady(&parts))?;
    if crate::record::shares::rates_apart(windows(&parts)) {
        without_rate_intervals(&mut merged);
    }
    merged.checks = parts::checks(&parts);
    merged.merged = Some(Merged {
        count,
        plan_hash: inputs[0]
            .record
            .share
            .as_ref()
            .expect("checked")
            .plan_hash
            .clone(),
        measure_started_at: humantime::format_rfc3339_micros(origin).to_string(),
        shares: parts.iter().map(share_figures).collect(),
        missing,
        lost: lost.shares,
    });
    if let Some(signal) = beside.interrupted {
        merged.interrupted = Some(signal);
    }
    if let Some(id) = beside.run_id {
        merged.run_id = id;
    }
    merged.thresholds = parts::thresholds(&parts, &merged)?;
    merged.self_checks = parts::self_checks(&parts, &merged);
    merged.warnings = parts::warnings(&parts, &merged, count);
    merged.warnings.extend(beside.warnings);
    crate::analysis::verdict::settle(&mut merged);
    Ok(merged)
}

/// Seconds from `origin` to `at` (≥ 0).
/// Why the merged seconds measure different loads, if they do: a share's own load was not
/// steady (its record's `unsteady`), or the shares measured apart.
fn unsteady(parts: &[PlacedShare]) -> Option<String> {
    let own = parts.iter().find_map(|p| {
        let ci = p.record.summary.ci95.as_ref()?;
        ci.unsteady.clone()
    });
    own.or_else(|| crate::record::shares::shares_apart(windows(parts)))
}

/// Each share's `(offset_s, duration_s)` in the merged window.
fn windows(parts: &[PlacedShare<'_>]) -> impl Iterator<Item = (f64, f64)> + Clone {
    parts
        .iter()
        .map(|p| (p.offset_s, p.record.summary.duration_s))
}

/// The run's and the groups' rates lose their intervals: the shares measured apart
/// ([`crate::record::shares::rates_apart`]).
pub(crate) fn without_rate_intervals(r: &mut RunRecord) {
    let intervals = r.groups.iter_mut().filter_map(|g| g.ci95.as_mut());
    for ci in r.summary.ci95.iter_mut().chain(intervals) {
        ci.rps = None;
    }
}

fn since(origin: SystemTime, at: SystemTime) -> f64 {
    at.duration_since(origin).map_or(0.0, |d| d.as_secs_f64())
}

/// Checks that the inputs are the shares of one test; returns the share count and the shares
/// missing.
fn check(inputs: &[Input], allow_missing: bool) -> Result<(u32, Vec<u32>), MergeError> {
    let first = inputs.first().ok_or(MergeError::Empty)?;
    let mut by_share: BTreeMap<u32, &str> = BTreeMap::new();
    let share_of = |i: &Input| {
        if i.record.merged.is_some() {
            return Err(MergeError::AlreadyMerged(i.source.clone()));
        }
        i.record
            .share
            .clone()
            .ok_or_else(|| MergeError::NotAShare(i.source.clone()))
    };
    let head = share_of(first)?;
    for i in inputs {
        let s = share_of(i)?;
        if s.plan_hash != head.plan_hash {
            return Err(MergeError::DifferentTests {
                a: first.source.clone(),
                b: i.source.clone(),
                hash_a: head.plan_hash.clone(),
                hash_b: s.plan_hash,
            });
        }
        if i.record.tool.version != first.record.tool.version {
            return Err(MergeError::DifferentVersions {
                a: first.source.clone(),
                b: i.source.clone(),
                version_a: first.record.tool.version.clone(),
                version_b: i.record.tool.version.clone(),
            });
        }
        if s.count != head.count {
            return Err(MergeError::DifferentCounts {
                a: first.source.clone(),
                b: i.source.clone(),
                count_a: head.count,
                count_b: s.count,
            });
        }
        if let Some(other) = by_share.insert(s.index, &i.source) {
            return Err(MergeError::Overlap {
                a: other.to_string(),
                b: i.source.clone(),
                share: format!("{}/{}", s.index, s.count),
            });
        }
    }
    let missing: Vec<u32> = (0..head.count)
        .filter(|i| !by_share.contains_key(i))
        .collect();
    if !missing.is_empty() && !allow_missing {
        return Err(MergeError::Missing {
            missing,
            have: by_share.keys().copied().collect(),
            count: head.count,
        });
    }
    Ok((head.count, missing))
}

fn share_figures(p: &PlacedShare) -> ShareFigures {
    let r = p.record;
    ShareFigures {
        index: p.index,
        source: Some(p.source.to_string()),
        offset_s: p.offset_s,
        duration_s: r.summary.duration_s,
        requests: r.summary.requests,
        errors: r.summary.errors,
        rps: r.summary.rps,
        interrupted: r.interrupted.clone(),
        environment: r.environment.clone(),
        generator: r.generator.clone(),
        warnings: r.warnings.clone(),
        watch: r.watch.clone(),
    }
}
