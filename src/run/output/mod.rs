//! The output seam: what a run leaves behind. Every output — the results folder
//! ([`ResultsFolder`]), `--json` ([`JsonFile`]), the metrics page ([`MetricsPage`]), remote
//! write and OTLP ([`Pushes`]) — implements [`Output`], and every command hands its outputs to
//! one façade, [`Outputs`]: started once before the first request (nothing is measured that
//! could not be kept), fed the live figures each second off the hot path (one exporter observer
//! for all of them, see [`crate::export::live`]), asked after each run for what the record must
//! say about it (failed pushes), then given the complete record, and closed after the last run.
//!
//! A new output is one file here implementing [`Output`] and its flag on the command line
//! (`tests/architecture.rs` keeps every implementation in this folder).

mod checks;
mod folder;
mod json;
mod metrics;
mod push;

use std::path::PathBuf;

use crate::error::Error;
use crate::export::ExportError;
use crate::export::live::{Exporter, Shared, shared};
use crate::plan::Plan;
use crate::plan::tags::Tags;
use crate::record::model::Warning;
use crate::record::{RunRecord, new_run_id};

pub use folder::ResultsFolder;
pub use json::JsonFile;
pub use metrics::MetricsPage;
pub use push::Pushes;

/// Why an output could not start.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// It cannot be written where the user asked (`--json` a folder, `--out` not writable).
    #[error(transparent)]
    Invalid(#[from] Error),
    /// The metrics page cannot listen, the remote-write URL is not one volley can push to.
    #[error(transparent)]
    Export(#[from] ExportError),
}

impl OutputError {
    /// Whether the user's input was at fault (exit 2) — always: an output is asked for by a flag.
    pub fn is_input(&self) -> bool {
        match self {
            Self::Invalid(e) => e.is_input(),
            Self::Export(_) => true,
        }
    }
}

/// What an output kept of a run, for the messages that say where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// The record at this path (`--json`).
    Record(PathBuf),
    /// A results folder: the record and its reports.
    Folder(PathBuf),
}

impl std::fmt::Display for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Record(path) => write!(f, "the record at {}", path.display()),
            Self::Folder(dir) => write!(f, "the results in {}", dir.display()),
        }
    }
}

/// One place a run's figures go. Called in this order: [`start`](Self::start) once,
/// then per run [`run_ended`](Self::run_ended) and [`finish`](Self::finish), then
/// [`close`](Self::close) once.
pub trait Output {
    /// What it is, for messages: `--json`, `the results folder`, `the metrics page`.
    fn name(&self) -> &'static str;

    /// Whether it reads the live figures: the façade then keeps them up to date every second.
    fn reads_live_figures(&self) -> bool {
        false
    }

    /// Before the first request: checks that it can be written and starts it, reading `live`
    /// (the figures of the last second, kept by the façade) if it wants them. Returns a line to
    /// tell the user (where the page is), if any.
    fn start(&mut self, live: &Shared) -> Result<Option<String>, OutputError>;

    /// After each run, before its record is built: the warnings the record gets from this
    /// output (pushes that failed). Its final live figures are in by now.
    fn run_ended(&mut self) -> Vec<Warning> {
        Vec::new()
    }

    /// With each run's complete record: keeps it. Returns where, when it wrote something.
    fn finish(&mut self, record: &RunRecord) -> Result<Option<Kept>, Error>;

    /// After the last run.
    fn close(self: Box<Self>) {}
}

/// What [`Outputs::finish`] kept, and what it could not.
#[derive(Debug, Default)]
pub struct Written {
    /// Where each output that wrote something kept the run, in the outputs' order.
    pub kept: Vec<Kept>,
    /// The outputs that could not keep it: which ([`Output::name`]) and why.
    pub failed: Vec<(&'static str, Error)>,
}

impl Written {
    /// Whether every output kept the run.
    pub fn complete(&self) -> bool {
        self.failed.is_empty()
    }

    /// What was kept, for a message: "the record at run.json, the results in …"; "nothing"
    /// when nothing was.
    pub fn kept_text(&self) -> String {
        match self.kept.is_empty() {
            true => "nothing".into(),
            false => self
                .kept
                .iter()
                .map(Kept::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// The façade every command hands its outputs to (see the module doc). It also names each
/// run: the id its record and its exported series carry, a new one after each
/// [`finish`](Self::finish).
pub struct Outputs {
    list: Vec<Box<dyn Output>>,
    live: Option<Shared>,
    run_id: String,
}

impl Default for Outputs {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

impl Outputs {
    /// The outputs, in the order they are written: the record first (`--json`, the results
    /// folder), so that a failing report never loses the measurement.
    pub fn new(list: Vec<Box<dyn Output>>) -> Self {
        Self {
            list,
            live: None,
            run_id: new_run_id(),
        }
    }

    /// No output: a run whose caller keeps the record itself (a find-max step).
    pub fn none() -> Self {
        Self::default()
    }

    /// The id of the run under way (or the next): its record's `run_id`, its series' label.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Adds `output` after the others.
    pub fn with(mut self, output: impl Output + 'static) -> Self {
        self.list.push(Box::new(output));
        self
    }

    /// Starts every output before anything is measured, `plan`'s live series at zero (without
    /// a plan, the whole run's only: a coordinator given none). Returns the lines to tell the
    /// user. The first that cannot start stops it: nothing is run.
    pub fn start(&mut self, plan: Option<&Plan>) -> Result<Vec<String>, OutputError> {
        let live = shared();
        if self.list.iter().any(|o| o.reads_live_figures()) {
            self.label(&live, plan.map(|p| &p.tags));
            match plan {
                Some(plan) => drop(Exporter::new(plan, live.clone())),
                None => drop(Exporter::whole_run(live.clone())),
            }
            self.live = Some(live.clone());
        }
        let mut said = Vec::new();
        for output in &mut self.list {
            said.extend(output.start(&live)?);
        }
        Ok(said)
    }

    /// The live figures, when an output reads them: for a writer other than
    /// [`observer`](Self::observer)'s (a coordinator's sum of its generators).
    pub fn live(&self) -> Option<Shared> {
        self.live.clone()
    }

    /// The observer that keeps the live figures of one run of `plan` (from zero, under the
    /// run's own `run_id` label: a repeat is a series of its own), when an output reads them.
    pub fn observer(&self, plan: &Plan) -> Option<Exporter> {
        let live = self.live.as_ref()?;
        self.label(live, Some(&plan.tags));
        Some(Exporter::new(plan, live.clone()))
    }

    /// Sets the labels every series of `live` carries: the run's id and `tags`.
    fn label(&self, live: &Shared, tags: Option<&Tags>) {
        let mut labels = vec![("run_id".to_string(), self.run_id.clone())];
        labels.extend(
            tags.into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        labels.sort();
        live.lock().unwrap_or_else(|e| e.into_inner()).labels = labels;
    }

    /// After a run, before its record is built: every output's warnings.
    pub fn run_ended(&mut self) -> Vec<Warning> {
        self.list.iter_mut().flat_map(|o| o.run_ended()).collect()
    }

    /// Gives the complete record to every output; one that fails does not stop the others.
    /// The next run gets a new id.
    pub fn finish(&mut self, record: &RunRecord) -> Written {
        self.run_id = new_run_id();
        let mut written = Written::default();
        for output in &mut self.list {
            match output.finish(record) {
                Ok(kept) => written.kept.extend(kept),
                Err(e) => written.failed.push((output.name(), e)),
            }
        }
        written
    }

    /// After the last run: closes every output (the metrics page lingers, if asked to).
    pub fn close(self) {
        for output in self.list {
            output.close();
        }
    }
}
