//! What a path given to `volley verify` stands for: a record (`run.json`, a merged record), a
//! results folder, a folder of repeats, or a suite (`suite.json` or its folder); and the checks
//! each gets.

use std::path::{Path, PathBuf};

use super::Violation;
use crate::error::Error;
use crate::record::set::read_runs;
use crate::record::suite::SuiteOutcome;
use crate::record::{RunRecord, read_record};

/// One file checked, with what it breaks (nothing, when it verifies).
#[derive(Debug)]
pub struct Checked {
    /// The file.
    pub file: PathBuf,
    /// Its violations, each with its JSON path.
    pub violations: Vec<Violation>,
    /// What could not be checked, and why (a merged record whose shares' files are gone).
    pub notes: Vec<String>,
}

/// Checks every record `path` stands for (a suite's with its own file); fails only when a file
/// cannot be read or is not a volley record.
pub fn verify_path(path: &Path) -> Result<Vec<Checked>, Error> {
    if let Some(suite) = crate::record::suite::suite_file(path) {
        return suite_file(&suite);
    }
    read_runs(path)?
        .into_iter()
        .map(|(file, r)| Ok(record_file(file, &r)))
        .collect()
}

/// A record's own checks, and a merged record's against its shares when their files are there.
fn record_file(file: PathBuf, r: &RunRecord) -> Checked {
    let mut violations = super::record(r);
    let mut notes = Vec::new();
    if let Some(m) = &r.merged {
        let sources: Vec<&str> = m
            .shares
            .iter()
            .filter_map(|s| s.source.as_deref())
            .collect();
        let found: Vec<RunRecord> = sources
            .iter()
            .filter_map(|s| read_record(&locate(&file, s)).ok())
            .collect();
        if !m.shares.is_empty() && found.len() == m.shares.len() {
            violations.extend(super::merged::shares(r, &found));
        } else {
            notes.push(format!(
                "{} of {} shares' records found: the merged histograms were not compared with \
                 theirs",
                found.len(),
                m.shares.len()
            ));
        }
    }
    Checked {
        file,
        violations,
        notes,
    }
}

/// A share's record as the merged one names it: as given to `volley merge` (relative to where
/// it ran), or beside the merged record.
fn locate(merged: &Path, source: &str) -> PathBuf {
    let given = PathBuf::from(source);
    if given.is_file() {
        return given;
    }
    merged.parent().unwrap_or(Path::new(".")).join(given)
}

/// A suite: each target's records, then the suite's statuses against them.
fn suite_file(file: &Path) -> Result<Vec<Checked>, Error> {
    let outcome = SuiteOutcome::read(file)?;
    let mut checked = Vec::new();
    for t in &outcome.targets {
        for (path, r) in t.record_files(&outcome.folder).into_iter().zip(&t.runs) {
            checked.push(record_file(path, r));
        }
    }
    checked.push(Checked {
        file: file.to_path_buf(),
        violations: super::suite(&outcome),
        notes: Vec::new(),
    });
    Ok(checked)
}
