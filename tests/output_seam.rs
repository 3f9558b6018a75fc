//! The output seam (`run::Output`): an output added here, in this one file, is started before
//! the run, reads the live figures while it goes, is asked for the record's warnings after it,
//! is given the complete record, and is closed — beside the results folder, through the same
//! façade every command uses.

mod common;

use std::sync::{Arc, Mutex};

use volley::error::Error;
use volley::export::live::Shared;
use volley::plan::RunInput;
use volley::record::RunRecord;
use volley::record::model::{Warning, WarningCode};
use volley::run::output::{Kept, OutputError, ResultsFolder};
use volley::run::{Options, Output, Outputs};

/// What the test output saw, in order.
#[derive(Debug, Default)]
struct Seen {
    calls: Vec<&'static str>,
    /// Requests in the live figures when the run ended (read before its record was built).
    live_requests: Option<u64>,
    /// Requests in the record it was given.
    recorded_requests: Option<u64>,
}

/// An output that keeps nothing, and says what it was given.
struct Noop {
    seen: Arc<Mutex<Seen>>,
    live: Option<Shared>,
}

impl Output for Noop {
    fn name(&self) -> &'static str {
        "noop"
    }

    fn reads_live_figures(&self) -> bool {
        true
    }

    fn start(&mut self, live: &Shared) -> Result<Option<String>, OutputError> {
        self.live = Some(live.clone());
        self.seen.lock().unwrap().calls.push("start");
        Ok(Some("noop started".into()))
    }

    fn run_ended(&mut self) -> Vec<Warning> {
        let live = self.live.as_ref().expect("started");
        let requests = live
            .lock()
            .unwrap()
            .scopes
            .first()
            .map_or(0, |s| s.requests);
        let mut seen = self.seen.lock().unwrap();
        seen.calls.push("run_ended");
        seen.live_requests = Some(requests);
        vec![Warning {
            code: WarningCode::RemoteWriteFailed,
            message: "noop: a warning of the output's own".into(),
        }]
    }

    fn finish(&mut self, record: &RunRecord) -> Result<Option<Kept>, Error> {
        let mut seen = self.seen.lock().unwrap();
        seen.calls.push("finish");
        seen.recorded_requests = Some(record.summary.requests);
        Ok(None)
    }

    fn close(self: Box<Self>) {
        self.seen.lock().unwrap().calls.push("close");
    }
}

#[test]
fn an_output_of_one_file_gets_the_run_through_the_facade() {
    let target = common::target();
    let dir = common::temp_dir("output-seam");
    let mut input = RunInput::new(format!("{}/", target.base_url()));
    input.concurrency = Some(2);
    input.requests = Some(300);
    input.threads = Some(1);
    let plan = input.validate().unwrap().prepare().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let noop = Noop {
        seen: seen.clone(),
        live: None,
    };
    let mut outputs = Outputs::none().with(ResultsFolder::new(&dir)).with(noop);
    let said = outputs.start(Some(&plan)).unwrap();
    assert_eq!(said, ["noop started"]);
    let record = volley::run::execute(&plan, &Options::default(), &mut outputs).unwrap();
    // Decided before the record was built: the output's warning is in it, and its verdict.
    assert!(
        record
            .warnings
            .iter()
            .any(|w| w.message == "noop: a warning of the output's own"),
        "{:?}",
        record.warnings
    );
    let written = outputs.finish(&record);
    outputs.close();
    assert!(written.complete(), "{:?}", written.failed);
    let [Kept::Folder(folder)] = written.kept.as_slice() else {
        panic!("one results folder: {:?}", written.kept)
    };
    common::assert_complete_results(folder);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.calls, ["start", "run_ended", "finish", "close"]);
    assert_eq!(seen.recorded_requests, Some(300));
    // The live figures were the run's, up to its last request, before the record existed.
    assert_eq!(seen.live_requests, Some(300));
}

#[test]
fn an_output_that_cannot_start_stops_the_command_before_the_run() {
    let dir = common::temp_dir("output-seam-file");
    let file = dir.join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let mut outputs = Outputs::none().with(ResultsFolder::new(&file));
    let e = outputs.start(None).unwrap_err();
    assert!(e.is_input(), "{e}");
    assert!(e.to_string().contains("is a file, not a folder"), "{e}");
}
