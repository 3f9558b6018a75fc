//! What a path given to `volley verify` stands for: a record (`run.json`, a merged record), a
//! results folder, a folder of repeats, or a suite (`suite.json` or its folder); and the checks
//! each gets.

use std::path::{Path, PathBuf};

use super::Violation;
use crate::error::{Error, FileAction};
use crate::record::set::{RECORD_FILE, read_runs};
use crate::record::suite::{SUITE_FILE, SuiteOutcome};
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
    let suite = if path.is_dir() {
        path.join(SUITE_FILE)
    } else {
        path.to_path_buf()
    };
    if suite.file_name().is_some_and(|n| n == SUITE_FILE) && suite.is_file() {
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
    let text = std::fs::read_to_string(file).map_err(|cause| Error::File {
        action: FileAction::Read,
        path: file.to_path_buf(),
        cause,
    })?;
    let outcome: SuiteOutcome = serde_json::from_str(&text).map_err(|e| Error::Record {
        path: file.to_path_buf(),
        why: format!("not a volley suite file: {e}"),
    })?;
    let folder = file.parent().unwrap_or(Path::new("."));
    let mut checked = Vec::new();
    let mut records = Vec::new();
    for t in &outcome.targets {
        let mut runs = Vec::new();
        for rel in &t.records {
            let path = folder.join(rel);
            let path = if path.is_dir() {
                path.join(RECORD_FILE)
            } else {
                path
            };
            let r = read_record(&path)?;
            checked.push(record_file(path, &r));
            runs.push(r);
        }
        records.push(runs);
    }
    checked.push(Checked {
        file: file.to_path_buf(),
        violations: super::suite(&outcome, &records),
        notes: Vec::new(),
    });
    Ok(checked)
}
