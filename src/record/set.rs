//! Finding the records behind a path the user gave: a `run.json`, a results folder holding one,
//! or a folder of repeated runs (`repeat-1/run.json` … `repeat-N/run.json`).

use std::path::{Path, PathBuf};

use super::{RunRecord, read_record};
use crate::error::Error;

/// The record file name inside a results folder.
pub const RECORD_FILE: &str = "run.json";

/// Reads every record `path` stands for, in run order: the file itself; `path/run.json`; or
/// `*/run.json` one level down (repeats), ordered by folder name with numbers compared as
/// numbers (`repeat-2` before `repeat-10`). Fails when there is none, or when any is unreadable.
pub fn read_runs(path: &Path) -> Result<Vec<(PathBuf, RunRecord)>, Error> {
    if !path.is_dir() {
        return Ok(vec![(path.to_path_buf(), read_record(path)?)]);
    }
    let direct = path.join(RECORD_FILE);
    if direct.is_file() {
        return Ok(vec![(direct.clone(), read_record(&direct)?)]);
    }
    let entries = std::fs::read_dir(path).map_err(|cause| Error::File {
        action: crate::error::FileAction::Read,
        path: path.to_path_buf(),
        cause,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path().join(RECORD_FILE))
        .filter(|p| p.is_file())
        .collect();
    if files.is_empty() && path.join(super::suite::SUITE_FILE).is_file() {
        return Err(suite_folder(path));
    }
    if files.is_empty() {
        return Err(Error::Record {
            path: path.to_path_buf(),
            why: format!(
                "a folder without {RECORD_FILE}, and none of its subfolders holds one (expected a \
                 run record, a results folder, or a folder of repeats)"
            ),
        });
    }
    files.sort_by_key(|f| natural_key(f));
    files
        .into_iter()
        .map(|f| read_record(&f).map(|r| (f, r)))
        .collect()
}

/// Why a suite's results folder is not one test: it holds a folder per target, each compared
/// as a variant of its own (named, with the command that compares them: the targets that
/// hold runs).
fn suite_folder(path: &Path) -> Error {
    let mut targets: Vec<PathBuf> = std::fs::read_dir(path)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| read_runs(p).is_ok())
        .collect();
    targets.sort();
    let names: Vec<String> = targets
        .iter()
        .filter_map(|t| Some(t.file_name()?.to_string_lossy().into_owned()))
        .collect();
    let shown: Vec<String> = targets.iter().map(|t| t.display().to_string()).collect();
    Error::Record {
        path: path.to_path_buf(),
        why: format!(
            "a suite's results folder (suite.json), whose targets ({}) are each a test of their \
             own; compare them: volley compare {}",
            names.join(", "),
            shown.join(" ")
        ),
    }
}

/// A sort key that compares runs of digits by value: "repeat-10" → ["repeat-", 10].
fn natural_key(p: &Path) -> Vec<(String, u64)> {
    let name = p
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut key = Vec::new();
    let mut text = String::new();
    let mut digits = String::new();
    for c in name.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            if !digits.is_empty() {
                key.push((
                    std::mem::take(&mut text),
                    digits.parse().unwrap_or(u64::MAX),
                ));
                digits.clear();
            }
            text.push(c);
        }
    }
    key.push((text, digits.parse().unwrap_or(0)));
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;
    use crate::record::write_record;

    #[test]
    fn files_folders_and_repeats() {
        let dir = std::env::temp_dir().join(format!("volley-set-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for i in [1, 2, 10] {
            let r = record(&format!("r{i}"), 1, 10, 1000, 0, 0.0);
            write_record(&dir.join(format!("repeat-{i}")).join(RECORD_FILE), &r).unwrap();
        }
        let names: Vec<String> = read_runs(&dir)
            .unwrap()
            .into_iter()
            .map(|(_, r)| r.name)
            .collect();
        assert_eq!(names, ["r1", "r2", "r10"]);
        let one = read_runs(&dir.join("repeat-2")).unwrap();
        assert_eq!(one[0].1.name, "r2");
        let file = read_runs(&dir.join("repeat-10").join(RECORD_FILE)).unwrap();
        assert_eq!(file[0].1.name, "r10");
        std::fs::create_dir_all(dir.join("empty")).unwrap();
        let err = read_runs(&dir.join("empty")).unwrap_err().to_string();
        assert!(err.contains("none of its subfolders"), "{err}");
        assert!(read_runs(&dir.join("missing.json")).is_err());
        // A suite's folder whose targets hold repeats names them (it said none was there).
        let suite = dir.join("suite");
        for t in ["a", "b"] {
            let r = record(t, 1, 10, 1000, 0, 0.0);
            write_record(&suite.join(t).join("repeat-1").join(RECORD_FILE), &r).unwrap();
        }
        std::fs::write(suite.join(super::super::suite::SUITE_FILE), "{}").unwrap();
        // A target that failed before its first run holds only its server.log.
        std::fs::create_dir_all(suite.join("c")).unwrap();
        let err = read_runs(&suite).unwrap_err().to_string();
        let cmd = format!(
            "volley compare {} {}",
            suite.join("a").display(),
            suite.join("b").display()
        );
        assert!(
            err.contains("whose targets (a, b)") && err.contains(&cmd),
            "{err}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
