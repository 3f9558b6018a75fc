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
    let same = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
    let mut variants = Vec::new();
    let mut files: Vec<HashSet<PathBuf>> = Vec::new();
    for path in paths {
        let runs = read_runs(path)?;
        let these: HashSet<PathBuf> = runs.iter().map(|(f, _)| same(f)).collect();
        if let Some(i) = files.iter().position(|f| !f.is_disjoint(&these)) {
            return Err(Error::Invalid {
                what: path.display().to_string(),
                why: format!(
                    "it holds runs {} holds too (given twice): runs against themselves \
                     compare nothing",
                    paths[i].display()
                ),
            });
        }
        files.push(these);
        one_test(path, &runs)?;
        let runs = runs.into_iter().map(|(_, r)| r).collect();
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

/// A folder of repeats is one test: its runs share their name and target. A folder of a
/// suite's targets is not, and a comparison would pool their figures as if it were.
fn one_test(path: &Path, runs: &[(PathBuf, RunRecord)]) -> Result<(), Error> {
    let test = |r: &RunRecord| (r.name.clone(), r.config.url.clone());
    let Some((_, first)) = runs.first() else {
        return Ok(());
    };
    let mut seen = vec![(runs[0].0.as_path(), test(first))];
    for (file, r) in runs {
        if !seen.iter().any(|(_, t)| *t == test(r)) {
            seen.push((file, test(r)));
        }
    }
    if seen.len() == 1 {
        return Ok(());
    }
    let folder = |f: &Path| f.parent().unwrap_or(f).display().to_string();
    let tests: Vec<String> = seen
        .iter()
        .map(|(f, (name, url))| format!("`{name}` against {url} ({})", folder(f)))
        .collect();
    let each: Vec<String> = seen.iter().map(|(f, _)| folder(f)).collect();
    Err(Error::Invalid {
        what: path.display().to_string(),
        why: format!(
            "its runs are {} different tests: {}; a folder of repeats is one test, and a \
             comparison would pool them as one. Compare them: volley compare {}",
            seen.len(),
            tests.join(", "),
            each.join(" ")
        ),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;
    use crate::record::set::RECORD_FILE;
    use crate::record::write_record;

    #[test]
    fn a_folder_of_different_tests_is_not_one_variant() {
        let dir = std::env::temp_dir().join(format!("volley-variant-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let write = |folder: &str, name: &str| {
            let r = record(name, 1, 10, 1000, 0, 0.0);
            write_record(&dir.join(folder).join(RECORD_FILE), &r).unwrap();
        };
        // Repeats: one test.
        write("repeat-1", "api");
        write("repeat-2", "api");
        assert_eq!(
            read_variants(std::slice::from_ref(&dir), &[]).unwrap()[0]
                .runs
                .len(),
            2
        );
        // A suite's targets: two.
        write("slower", "slower");
        let err = read_variants(std::slice::from_ref(&dir), &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("its runs are 2 different tests: `api` against")
                && err.contains(&format!(
                    "volley compare {}",
                    dir.join("repeat-1").display()
                )),
            "{err}"
        );
        // The same runs twice compare nothing (it printed 'inconclusive').
        let one = dir.join("repeat-1");
        let twice = [one.clone(), dir.join("repeat-2/../repeat-1")];
        let err = read_variants(&twice, &[]).unwrap_err().to_string();
        assert!(err.contains("(given twice)"), "{err}");
        // So is a run inside a folder given beside it.
        let inside = [dir.join("repeat-1"), dir.join("repeat-1").join(RECORD_FILE)];
        let err = read_variants(&inside, &[]).unwrap_err().to_string();
        assert!(err.contains("(given twice)"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
