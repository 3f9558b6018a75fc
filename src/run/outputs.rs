//! What a finished run leaves behind: the record where the user asked for it (`--json`) and the
//! results folder (`run.json`, `summary.txt`, `report.md`, `report.html`).

use std::path::PathBuf;

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

/// What [`write_outputs`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// The `--json` record, when one was asked for.
    pub json: Option<PathBuf>,
    /// The results folder and its files.
    pub files: ResultFiles,
}

/// Writes the outputs of a finished run: the `--json` record first, then the results folder.
pub fn write_outputs(record: &RunRecord, outputs: &Outputs) -> Result<Written, Error> {
    if let Some(path) = &outputs.json {
        write_record(path, record)?;
    }
    let files = write_results(&outputs.out, record)?;
    Ok(Written {
        json: outputs.json.clone(),
        files,
    })
}
