//! What a finished run leaves behind: the record where the user asked for it (`--json`) and the
//! results folder (`run.json`, `summary.txt`, `report.md`, `report.html`).
//!
//! Both places are checked before the first request ([`Outputs::check`]): a folder given as
//! `--json`, a file given as `--out`, a place volley cannot write once lost the whole
//! measurement after it ran. When writing one still fails, the other is written anyway
//! ([`write_outputs`] says which failed and where the rest is).

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::record::{RunRecord, write_record};
use crate::report::{ResultFiles, write_results};

/// Where a run's outputs go.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// `--json FILE`: the record, written first (every report is made from it).
    pub json: Option<PathBuf>,
    /// The folder in which the run's results folder is created.
    pub out: PathBuf,
}

/// What [`write_outputs`] wrote, and what it could not.
#[derive(Debug)]
pub struct Written {
    /// The `--json` record, when one was asked for and written.
    pub json: Option<PathBuf>,
    /// The results folder and its files, when it was written.
    pub files: Option<ResultFiles>,
    /// The outputs that could not be written: what (`--json`, the results folder) and why.
    pub failed: Vec<(&'static str, Error)>,
}

impl Outputs {
    /// Checks that every output can be written, before anything is measured: `--json` names a
    /// file (not a folder, not a device) in a folder volley can write; `--out` names a folder
    /// (made if missing) volley can write in. The error says which and why (an input error:
    /// exit 2).
    pub fn check(&self) -> Result<(), Error> {
        if let Some(json) = &self.json {
            check_file("--json", json)?;
        }
        check_folder("--out", &self.out)
    }
}

fn invalid(what: &str, path: &Path, why: String) -> Error {
    Error::Invalid {
        what: format!("{what} {}", path.display()),
        why,
    }
}

/// `path` can be written as a file: if it exists it is a regular file, and its folder takes
/// new files (the record is written beside it first, then renamed over it).
fn check_file(what: &str, path: &Path) -> Result<(), Error> {
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(invalid(
                what,
                path,
                "is a folder; give the path of a file, e.g. run.json".into(),
            ));
        }
        if !meta.is_file() {
            return Err(invalid(
                what,
                path,
                "is not a regular file (a device or a FIFO); give the path of a file".into(),
            ));
        }
    }
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    check_folder(what, folder).map_err(|e| match e {
        Error::Invalid { why, .. } => invalid(what, path, why),
        other => other,
    })
}

/// `path` is a folder (made if missing) in which a file can be created.
fn check_folder(what: &str, path: &Path) -> Result<(), Error> {
    if path.exists() && !path.is_dir() {
        return Err(invalid(what, path, "is a file, not a folder".into()));
    }
    std::fs::create_dir_all(path)
        .map_err(|e| invalid(what, path, format!("cannot create the folder: {e}")))?;
    let probe = path.join(format!(".volley-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(invalid(what, path, format!("cannot write there: {e}"))),
    }
}

/// Writes the outputs of a finished run: the `--json` record first, then the results folder.
/// One that fails does not stop the other; [`Written::failed`] says which failed.
pub fn write_outputs(record: &RunRecord, outputs: &Outputs) -> Written {
    let mut failed = Vec::new();
    let json = outputs
        .json
        .as_ref()
        .and_then(|path| match write_record(path, record) {
            Ok(()) => Some(path.clone()),
            Err(e) => {
                failed.push(("--json", e));
                None
            }
        });
    let files = match write_results(&outputs.out, record) {
        Ok(files) => Some(files),
        Err(e) => {
            failed.push(("the results folder", e));
            None
        }
    };
    Written {
        json,
        files,
        failed,
    }
}

impl Written {
    /// Whether every output was written.
    pub fn complete(&self) -> bool {
        self.failed.is_empty()
    }

    /// What was written, for a message: "the record at run.json", "the results in
    /// volley-results/quick-…/"; empty when nothing was.
    pub fn kept(&self) -> Vec<String> {
        let mut kept = Vec::new();
        if let Some(json) = &self.json {
            kept.push(format!("the record at {}", json.display()));
        }
        if let Some(files) = &self.files {
            kept.push(format!("the results in {}", files.dir.display()));
        }
        kept
    }
}
