//! The results folder every run leaves behind: the record (`run.json`) and each report format's
//! file ([`crate::report::Format::ALL`]), in a new folder per run, in a folder given, or as one
//! run of a series of repeats.

use std::path::{Path, PathBuf};

use super::{Kept, Output, OutputError, checks};
use crate::error::Error;
use crate::export::live::Shared;
use crate::record::RunRecord;
use crate::record::set::RECORD_FILE;
use crate::report::repeats::{repeat_dir, write_spread};
use crate::report::{folder_name, new_folder, write_results_into};

/// Where the runs' folders go.
#[derive(Debug, Clone)]
enum Layout {
    /// A new folder per run, `<parent>/<name>-<UTC start time>/` (`-2`, `-3` … when taken).
    New,
    /// This very folder (made if missing); refused at the start if it holds a record already.
    Exact,
    /// Runs of one test, `<parent>/<name>-<time>/repeat-<i>/`, and their spread at the top of
    /// the folder, rewritten after each run (a series cut short still has the spread of what
    /// ran).
    Repeats {
        /// The series' folder, made with the first run.
        folder: Option<PathBuf>,
        /// The test's name in the spread.
        label: String,
        /// The runs so far.
        runs: Vec<RunRecord>,
    },
}

/// The results folder (see the module doc).
#[derive(Debug, Clone)]
pub struct ResultsFolder {
    path: PathBuf,
    layout: Layout,
}

impl ResultsFolder {
    /// A new folder per run in `parent` (`--out`).
    pub fn new(parent: &Path) -> Self {
        Self {
            path: parent.to_path_buf(),
            layout: Layout::New,
        }
    }

    /// The run's files in `dir` itself (`volley merge -o DIR`, a suite's target).
    pub fn exact(dir: &Path) -> Self {
        Self {
            path: dir.to_path_buf(),
            layout: Layout::Exact,
        }
    }

    /// Repeated runs of the test `label` (`--repeat N`), in one new folder of `parent`.
    pub fn repeats(parent: &Path, label: &str) -> Self {
        Self {
            path: parent.to_path_buf(),
            layout: Layout::Repeats {
                folder: None,
                label: label.to_string(),
                runs: Vec::new(),
            },
        }
    }
}

impl Output for ResultsFolder {
    fn name(&self) -> &'static str {
        "the results folder"
    }

    /// The folder is one (made if missing) volley can write in; an exact folder holds no
    /// record yet.
    fn start(&mut self, _: &Shared) -> Result<Option<String>, OutputError> {
        if matches!(self.layout, Layout::Exact) && self.path.join(RECORD_FILE).exists() {
            return Err(Error::Invalid {
                what: format!("--out {}", self.path.display()),
                why: format!("holds a {RECORD_FILE} already"),
            }
            .into());
        }
        checks::check_folder("--out", &self.path)?;
        Ok(None)
    }

    fn finish(&mut self, record: &RunRecord) -> Result<Option<Kept>, Error> {
        let dir = match &mut self.layout {
            Layout::New => new_folder(&self.path, &folder_name(record))?,
            Layout::Exact => self.path.clone(),
            Layout::Repeats { folder, runs, .. } => {
                let top = match folder {
                    Some(dir) => dir.clone(),
                    None => folder
                        .insert(new_folder(&self.path, &folder_name(record))?)
                        .clone(),
                };
                runs.push(record.clone());
                repeat_dir(&top, runs.len() as u32)
            }
        };
        let files = write_results_into(&dir, record)?;
        if let Layout::Repeats {
            folder: Some(top),
            label,
            runs,
        } = &self.layout
        {
            write_spread(top, label, runs, None)?;
        }
        Ok(Some(Kept::Folder(files.dir)))
    }
}
