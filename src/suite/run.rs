//! Running a suite: the targets one after the other (never two at once), each through start →
//! health check → (reset →) smoke → (reset →) measured runs → stop, then the report. With
//! repeats the targets take turns, one run each per round ([`super::order`]): each turn is
//! start → health check → (smoke, the first time) → reset → run → stop.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::decide::Rounds;
use super::health::HealthFailure;
use super::process::{Registry, Started, run_to_end};
use super::signals::Interrupts;
use super::{Suite, SuiteTarget, watched};
use crate::error::Error;
use crate::findmax::{self, run::Settings};
use crate::plan::Plan;
use crate::record::set::RECORD_FILE;
use crate::record::suite::{Status, SuiteOutcome, SuiteStep, TargetOutcome};
use crate::record::{RunRecord, write_record};
use crate::report::new_folder;
use crate::report::repeats::{repeat_dir, run_line, write_spread};
use crate::run::{self, output::ResultsFolder};
use crate::units::thousands;

use super::halt::{Halt, halt_after};
use super::stamp::{folder_name, rfc3339};
use super::words::{found_line, last_output, relative, smoke_cause, smoke_outcome};

/// How to run a suite.
#[derive(Debug, Clone)]
pub struct SuiteRunOptions {
    /// Parent of the suite's results folder (`<out>/<suite>-<UTC time>/`).
    pub out: PathBuf,
    /// Draw each run's progress line (when stderr is a terminal).
    pub progress: bool,
    /// The command line, for the records.
    pub command: crate::redact::Argv,
    /// Handle SIGINT/SIGTERM for the suite's length (see [`super::signals`]); off, only the
    /// interrupts given to [`run_with`] stop it.
    pub watch_signals: bool,
}

/// Lines of news as the suite goes ("[1/3] eight: healthy after 0.2 s").
pub type Progress<'a> = &'a mut dyn FnMut(&str);

/// Runs `suite`: every target in turn, then `suite.json` and the report in the results folder.
/// Target failures are part of the outcome, not errors; an error means the suite itself could not
/// go on (its folder could not be written, signals could not be handled).
pub fn run(
    suite: &Suite,
    options: &SuiteRunOptions,
    say: Progress<'_>,
) -> Result<SuiteOutcome, Error> {
    let registry = Registry::default();
    let interrupts = if options.watch_signals {
        Interrupts::watch(registry.clone())?
    } else {
        Interrupts::manual(registry.clone())
    };
    run_with(suite, options, &interrupts, &registry, say)
}

/// `run` with the caller's interrupts and process registry.
pub fn run_with(
    suite: &Suite,
    options: &SuiteRunOptions,
    interrupts: &Interrupts,
    registry: &Registry,
    say: Progress<'_>,
) -> Result<SuiteOutcome, Error> {
    let started = SystemTime::now();
    let folder = new_folder(&options.out, &folder_name(&suite.name, started))?;
    let mut targets: Vec<TargetOutcome> = suite
        .targets
        .iter()
        .map(|t| TargetOutcome {
            plan: Some(t.plan_path.clone()),
            ..TargetOutcome::new(&t.name, &t.base_url, Path::new(&t.name))
        })
        .collect();
    let n = suite.targets.len();
    let mut rounds = suite.until_decided.as_ref().map(|d| Rounds::new(d, n));
    for runs in super::order::turns(suite.order, suite.repeats) {
        let round = *runs.end();
        for (i, t) in suite.targets.iter().enumerate() {
            // A target that failed, was interrupted or aborted takes no more turns, nor one
            // whose comparison has stopped.
            let decided = rounds.as_ref().is_some_and(|r| !r.takes_turn(i));
            if decided || !matches!(targets[i].status, Status::Ran | Status::ThresholdsFailed) {
                continue;
            }
            let mut runner = TargetRun {
                suite,
                target: t,
                options,
                interrupts,
                registry,
                folder: &folder,
                prefix: format!("[{}/{n}] {}", i + 1, t.name),
                runs: runs.clone(),
                say: &mut *say,
            };
            runner.run(&mut targets[i])?;
        }
        let stopped = rounds.as_mut().map(|r| r.after_round(round, &targets));
        if stopped == Some(true) {
            break;
        }
    }
    let interrupted = interrupts.signal().is_some();
    let (decided, decisions) = rounds.map_or_else(Default::default, |r| {
        r.finish(interrupted, &targets, (&folder, &mut *say))
    });
    let mut outcome = SuiteOutcome {
        schema_version: crate::record::suite::SUITE_SCHEMA_VERSION,
        name: suite.name.clone(),
        source: suite.source.clone(),
        plan: suite.plan_path.clone(),
        repeats: suite.repeats,
        find_max: suite
            .find_max
            .as_ref()
            .map(|f| format!("{} model, SLO {}", f.model, f.slo_text)),
        folder: folder.clone(),
        started_at: rfc3339(started),
        ended_at: rfc3339(SystemTime::now()),
        interrupted: interrupts.signal().map(str::to_string),
        notes: suite.notes.clone(),
        decided,
        decisions,
        threshold_pct: suite.until_decided.as_ref().map(|d| d.threshold_pct),
        targets,
        exit_code: None,
    };
    outcome.exit_code = Some(outcome.exit_code());
    // The record of the suite first, then the reports made from it and the runs.
    outcome.write()?;
    crate::report::suite::write(&outcome)?;
    Ok(outcome)
}

/// One target's turn: its runs `runs` (all of them, or one per round when interleaved).
struct TargetRun<'a, 's> {
    suite: &'a Suite,
    target: &'a SuiteTarget,
    options: &'a SuiteRunOptions,
    interrupts: &'a Interrupts,
    registry: &'a Registry,
    folder: &'a Path,
    prefix: String,
    /// The measured runs of this turn, numbered from 1.
    runs: RangeInclusive<u32>,
    say: &'a mut (dyn FnMut(&str) + 's),
}

impl TargetRun<'_, '_> {
    fn say(&mut self, what: &str) {
        let line = format!("{}: {what}", self.prefix);
        (self.say)(&line);
    }

    fn run(&mut self, out: &mut TargetOutcome) -> Result<(), Error> {
        let t = self.target;
        let dir = self.folder.join(&t.name);
        if let Some(signal) = self.interrupts.signal() {
            if self.first_turn() {
                out.status = Status::NotRun;
                out.cause = Some(format!(
                    "the suite was interrupted ({signal}) before its turn"
                ));
                self.say("not run (interrupted)");
            } else {
                let cause = format!(
                    "interrupted by {signal} before run {} of {}",
                    self.runs.start(),
                    self.suite.repeats
                );
                self.say(&cause);
                self.spread(&dir, out);
                out.status = Status::Interrupted;
                out.cause = Some(cause);
            }
            return Ok(());
        }
        std::fs::create_dir_all(&dir).map_err(|cause| Error::File {
            action: crate::error::FileAction::Create,
            path: dir.clone(),
            cause,
        })?;
        let mut server = None;
        let halted = self.steps(&dir, &mut server, out);
        // Whatever happened, the process goes.
        if let Some(p) = server.take() {
            let stopped = Started::stop(p, t.stop_grace);
            self.say(&format!("{} (pid {})", stopped.how, stopped.pid));
            out.stopped = Some(stopped.how);
        }
        match halted {
            Ok(()) => {}
            Err(Halt::Failed(step, cause)) => {
                self.say(&format!("FAILED: {}: {cause}", step.failed_words()));
                out.status = Status::Failed;
                out.failed_step = Some(step);
                out.cause = Some(cause);
            }
            Err(Halt::Aborted(cause)) => {
                self.say(&format!("ABORTED: {cause}"));
                out.status = Status::Aborted;
                out.cause = Some(cause);
            }
            Err(Halt::Interrupted(when)) => {
                let signal = self.interrupts.signal().unwrap_or("a stop request");
                let cause = format!("interrupted by {signal} {when}");
                self.say(&cause);
                out.status = Status::Interrupted;
                out.cause = Some(cause);
            }
        }
        Ok(())
    }

    /// Whether this is the target's first turn (the one with the smoke run).
    fn first_turn(&self) -> bool {
        *self.runs.start() == 1
    }

    fn steps(
        &mut self,
        dir: &Path,
        server: &mut Option<Started>,
        out: &mut TargetOutcome,
    ) -> Result<(), Halt> {
        let t = self.target;
        let log = dir.join("server.log");
        self.start(server, out, &log)?;
        self.wait_healthy(server, out, &log)?;
        if let (Some(plan), true) = (&t.smoke_plan, self.first_turn()) {
            self.smoke(plan, dir, server, out, &log)?;
        }
        if let Some(settings) = &self.suite.find_max {
            return self.search(settings, dir, server, out, &log);
        }
        self.repeats(dir, server, out, &log)
    }

    /// Starts the target's command, if it has one.
    fn start(
        &mut self,
        server: &mut Option<Started>,
        out: &mut TargetOutcome,
        log: &Path,
    ) -> Result<(), Halt> {
        let t = self.target;
        if let Some(cmd) = &t.command {
            // A server already answering would be measured in place of the one started here.
            if t.health.answers() {
                return Err(Halt::Failed(
                    SuiteStep::Start,
                    format!(
                        "something already answers at {} before `{}` was started: is its port \
                         taken by another process?",
                        t.health.url,
                        cmd.display()
                    ),
                ));
            }
            let p = Started::spawn(cmd, log, self.registry)
                .map_err(|e| Halt::Failed(SuiteStep::Start, e.to_string()))?;
            out.pid = Some(p.pid());
            self.say(&format!(
                "started `{}` (pid {}), output in {}",
                cmd.display(),
                p.pid(),
                log.display()
            ));
            *server = Some(p);
        }
        Ok(())
    }

    /// Waits for the target's health check to answer.
    fn wait_healthy(
        &mut self,
        server: &Option<Started>,
        out: &mut TargetOutcome,
        log: &Path,
    ) -> Result<(), Halt> {
        let t = self.target;
        let interrupts = self.interrupts;
        let waited = t.health.wait(
            || server.as_ref().and_then(Started::exited),
            || interrupts.signal().is_some(),
        );
        match waited {
            Ok(after) => {
                out.ready_after_s = Some(after.as_secs_f64());
                self.say(&format!(
                    "healthy after {:.2} s ({})",
                    after.as_secs_f64(),
                    t.health.url
                ));
            }
            Err(HealthFailure::Exited(status)) => {
                let command = server.as_ref().map_or("", Started::command);
                return Err(Halt::Failed(
                    SuiteStep::Start,
                    format!(
                        "`{command}` exited ({status}) before answering its health check{}",
                        last_output(log)
                    ),
                ));
            }
            Err(HealthFailure::TimedOut(why)) => return Err(Halt::Failed(SuiteStep::Health, why)),
            Err(HealthFailure::Stopped) => {
                return Err(Halt::Interrupted("during the health check".into()));
            }
        }
        Ok(())
    }

    /// The smoke run, on the target's first turn: it must pass before anything is measured.
    fn smoke(
        &mut self,
        plan: &Plan,
        dir: &Path,
        server: &Option<Started>,
        out: &mut TargetOutcome,
        log: &Path,
    ) -> Result<(), Halt> {
        self.go_on("before the smoke run")?;
        self.reset(dir)?;
        let record = self.measure(plan, SuiteStep::Smoke, "the smoke run", server)?;
        let path = dir.join("smoke.json");
        write_record(&path, &record).map_err(|e| Halt::Failed(SuiteStep::Smoke, e.to_string()))?;
        let gate = self
            .suite
            .smoke
            .as_ref()
            .expect("a smoke plan implies [smoke]");
        let smoke = smoke_outcome(gate, &record, relative(&path, self.folder));
        let passed = smoke.passed;
        let verdict = if record.interrupted.is_some() {
            "interrupted"
        } else if passed {
            "passed"
        } else {
            "failed"
        };
        let words = format!(
            "smoke: {} requests, {:.2}% errors (at most {}% allowed) → {verdict}",
            thousands(smoke.requests),
            smoke.error_rate * 100.0,
            smoke.max_error_rate * 100.0,
        );
        out.smoke = Some(smoke);
        self.say(&words);
        if record.interrupted.is_some() {
            return Err(Halt::Interrupted("during the smoke run".into()));
        }
        if !passed {
            return Err(Halt::Failed(SuiteStep::Smoke, smoke_cause(&record, out)));
        }
        self.alive(server, "the smoke run", SuiteStep::Smoke, log)
    }

    /// This turn's runs (all of them without interleaving, else one).
    fn repeats(
        &mut self,
        dir: &Path,
        server: &Option<Started>,
        out: &mut TargetOutcome,
        log: &Path,
    ) -> Result<(), Halt> {
        let t = self.target;
        let n = self.suite.repeats;
        for i in self.runs.clone() {
            let during = if n == 1 {
                "the run".to_string()
            } else {
                format!("run {i} of {n}")
            };
            if let Err(halt) = self.go_on(&format!("before {during}")) {
                self.spread(dir, out);
                return Err(halt);
            }
            self.reset(dir)?;
            let record = self.measure(&t.plan, SuiteStep::Run, &during, server)?;
            let run_dir = if n == 1 {
                dir.to_path_buf()
            } else {
                repeat_dir(dir, i)
            };
            keep(&run_dir, &record)?;
            self.say(&format!("run {i}/{n}: {}", run_line(&record)));
            out.records
                .push(relative(&run_dir.join(RECORD_FILE), self.folder));
            let halt = halt_after(&record, &during, out);
            out.runs.push(record);
            if let Some(halt) = halt {
                if !matches!(halt, Halt::Failed(..)) {
                    self.spread(dir, out);
                }
                return Err(halt);
            }
            self.alive(server, &during, SuiteStep::Run, log)?;
        }
        if *self.runs.end() == n {
            self.spread(dir, out);
        }
        Ok(())
    }

    /// With `[find_max]`: the search for the target's maximum sustainable throughput, after one
    /// reset; its record (the best step, every step under `find_max`) goes in the target's
    /// folder.
    fn search(
        &mut self,
        settings: &Settings,
        dir: &Path,
        server: &Option<Started>,
        out: &mut TargetOutcome,
        log: &Path,
    ) -> Result<(), Halt> {
        self.go_on("before the find-max search")?;
        self.reset(dir)?;
        let interrupts = self.interrupts;
        let progress = self.options.progress;
        let prefix = self.prefix.clone();
        let say = &mut *self.say;
        let options = run::Options {
            progress,
            handle_signals: false,
            command: self.options.command.clone(),
            ..run::Options::default()
        };
        let found = findmax::run::run(
            &self.target.plan,
            settings,
            |plan| {
                let stop = interrupts.begin_run();
                let record = run::execute_with(
                    &watched(plan, server.as_ref().map(Started::pid)),
                    &options,
                    stop,
                    &mut [],
                    &mut run::Outputs::none(),
                );
                interrupts.end_run();
                record
            },
            |step| say(&format!("{prefix}: find-max {}", settings.step_line(step))),
        );
        let found = match found {
            Ok(Some(found)) => found,
            Ok(None) => {
                return Err(Halt::Failed(
                    SuiteStep::Run,
                    format!(
                        "no find-max step fits in the budget of {}",
                        humantime::format_duration(settings.budget)
                    ),
                ));
            }
            Err(e) => {
                let died = server
                    .as_ref()
                    .and_then(Started::exited)
                    .map(|s| format!(" (the process exited: {s})"))
                    .unwrap_or_default();
                return Err(Halt::Failed(
                    SuiteStep::Run,
                    format!("the find-max search could not be carried out: {e}{died}"),
                ));
            }
        };
        keep(dir, &found.record)?;
        out.records
            .push(relative(&dir.join(RECORD_FILE), self.folder));
        self.say(&format!(
            "find-max: {}",
            found_line(&found.summary, settings)
        ));
        out.find_max = Some(found.summary);
        out.runs.push(found.record);
        if found.interrupted {
            return Err(Halt::Interrupted("during the find-max search".into()));
        }
        self.alive(server, "the find-max search", SuiteStep::Run, log)
    }

    /// Whether to go on to the next step: not once the suite has been interrupted.
    fn go_on(&self, when: &str) -> Result<(), Halt> {
        match self.interrupts.signal() {
            Some(_) => Err(Halt::Interrupted(when.to_string())),
            None => Ok(()),
        }
    }

    /// With repeats, the spread of the runs at the top of the target's folder.
    fn spread(&mut self, dir: &Path, out: &TargetOutcome) {
        if self.suite.repeats > 1 && !out.runs.is_empty() {
            if let Err(e) = write_spread(dir, &out.name, &out.runs, None) {
                self.say(&format!("cannot write the spread of the repeats: {e}"));
            }
        }
    }

    /// The target's `reset` command, if it has one.
    fn reset(&mut self, dir: &Path) -> Result<(), Halt> {
        let Some(cmd) = &self.target.reset else {
            return Ok(());
        };
        let interrupts = self.interrupts;
        run_to_end(
            cmd,
            &dir.join("reset.log"),
            self.target.reset_timeout,
            self.registry,
            || interrupts.signal().is_some(),
        )
        .map_err(|e| {
            if self.interrupts.signal().is_some() {
                Halt::Interrupted("during the reset command".into())
            } else {
                Halt::Failed(SuiteStep::Reset, e.to_string())
            }
        })?;
        self.say(&format!("reset: `{}` done", cmd.display()));
        Ok(())
    }

    /// One run of `plan`, stoppable by the suite's signals; `step` fails if it cannot be done.
    fn measure(
        &mut self,
        plan: &Plan,
        step: SuiteStep,
        during: &str,
        server: &Option<Started>,
    ) -> Result<RunRecord, Halt> {
        let options = run::Options {
            progress: self.options.progress,
            handle_signals: false,
            command: self.options.command.clone(),
            ..run::Options::default()
        };
        let stop = self.interrupts.begin_run();
        let record = run::execute_with(
            &watched(plan, server.as_ref().map(Started::pid)),
            &options,
            stop,
            &mut [],
            &mut run::Outputs::none(),
        );
        self.interrupts.end_run();
        record.map_err(|e| {
            let died = server
                .as_ref()
                .and_then(Started::exited)
                .map(|s| format!(" (the process exited: {s})"))
                .unwrap_or_default();
            Halt::Failed(
                step,
                format!("{during} could not be carried out: {e}{died}"),
            )
        })
    }

    /// Fails the target if its process exited during `during`.
    fn alive(
        &self,
        server: &Option<Started>,
        during: &str,
        step: SuiteStep,
        log: &Path,
    ) -> Result<(), Halt> {
        match server.as_ref().and_then(Started::exited) {
            None => Ok(()),
            Some(status) => Err(Halt::Failed(
                step,
                format!(
                    "the process exited during {during} ({status}){}",
                    last_output(log)
                ),
            )),
        }
    }
}

/// Writes a run's results folder into `dir`, through the output seam.
fn keep(dir: &Path, record: &RunRecord) -> Result<(), Halt> {
    let fail = |why: String| Halt::Failed(SuiteStep::Run, why);
    let mut outputs = run::Outputs::none().with(ResultsFolder::exact(dir));
    outputs.start(None).map_err(|e| fail(e.to_string()))?;
    match outputs.finish(record).failed.into_iter().next() {
        Some((_, e)) => Err(fail(e.to_string())),
        None => Ok(()),
    }
}
