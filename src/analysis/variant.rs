//! A variant: one configuration, measured once or repeatedly — what a comparison compares and
//! the like-for-like checks look at; [`read_variants`] reads them from the paths a user gives
//! (`volley compare A B`), each a run, a results folder or a folder of repeats.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::record::model::RunRecord;
use crate::record::set::read_runs;

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

impl Variant {
    /// The run a comparison takes the variant's scenarios, steps and phases from: its first run
    /// that has any, else its first.
    pub fn parts_run(&self) -> Option<&RunRecord> {
        let runs = &self.runs;
        runs.iter().find(|r| !r.groups.is_empty()).or(runs.first())
    }
}

/// Reads each path as one variant and names them.
pub fn read_variants(paths: &[PathBuf], labels: &[String]) -> Result<Vec<Variant>, Error> {
    if !labels.is_empty() && labels.len() != paths.len() {
        return Err(Error::Invalid {
            what: "--labels".into(),
            why: format!(
                "{} labels for {} runs; give one per run, in order",
                labels.len(),
                paths.len()
            ),
        });
    }
    let mut variants = Vec::new();
    for path in paths {
        let runs = read_runs(path)?.into_iter().map(|(_, r)| r).collect();
        variants.push(Variant {
            label: String::new(),
            source: path.clone(),
            runs,
        });
    }
    let names = if labels.is_empty() {
        default_labels(&variants)
    } else {
        labels.to_vec()
    };
    for (v, name) in variants.iter_mut().zip(names) {
        v.label = name;
    }
    Ok(variants)
}

/// The run names when they tell the variants apart, else the folder names, else A, B, C….
fn default_labels(variants: &[Variant]) -> Vec<String> {
    let distinct = |names: &[String]| {
        names.iter().all(|n| !n.is_empty())
            && names.iter().collect::<HashSet<_>>().len() == names.len()
    };
    let by_name: Vec<String> = variants
        .iter()
        .map(|v| v.runs.first().map(|r| r.name.clone()).unwrap_or_default())
        .collect();
    if distinct(&by_name) {
        return by_name;
    }
    let by_folder: Vec<String> = variants.iter().map(|v| folder_name(&v.source)).collect();
    if distinct(&by_folder) {
        return by_folder;
    }
    (0..variants.len())
        .map(|i| {
            let letter = (b'A' + (i % 26) as u8) as char;
            if i < 26 {
                letter.to_string()
            } else {
                format!("{letter}{}", i / 26)
            }
        })
        .collect()
}

/// The results folder a path names: the folder itself, or the folder of a `run.json`.
fn folder_name(p: &Path) -> String {
    let folder = if p.is_dir() { Some(p) } else { p.parent() };
    folder
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
