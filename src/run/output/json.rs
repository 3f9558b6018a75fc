//! `--json FILE`: the record where the user asked for it, besides the results folder.

use std::path::PathBuf;

use super::{Kept, Output, OutputError, checks};
use crate::error::Error;
use crate::export::live::Shared;
use crate::record::{RunRecord, write_record};

/// The record written to one file (atomically: beside it first, then renamed over it).
#[derive(Debug, Clone)]
pub struct JsonFile {
    path: PathBuf,
}

impl JsonFile {
    /// The record goes to `path`.
    pub fn new(path: PathBuf) -> Self {
        Self { path }
    }
}

impl Output for JsonFile {
    fn name(&self) -> &'static str {
        "--json"
    }

    /// `--json` names a file (not a folder, not a device) in a folder volley can write.
    fn start(&mut self, _: &Shared) -> Result<Option<String>, OutputError> {
        checks::check_file("--json", &self.path)?;
        Ok(None)
    }

    fn finish(&mut self, record: &RunRecord) -> Result<Option<Kept>, Error> {
        write_record(&self.path, record)?;
        Ok(Some(Kept::Record(self.path.clone())))
    }
}
