//! One generator of a distributed test (`volley run PLAN --join URL`): registers with the
//! coordinator for a share, waits for the common start, runs its share while streaming one
//! snapshot per second (`stream`), and sends its record at the end (after the caller has
//! written its own results folder: a dead coordinator loses nothing).
//!
//! Every wait is bounded: reaching the coordinator and its start barrier by
//! [`JoinOptions::wait`], each request by [`client`]'s timeouts; once running, the run ends by
//! its own deadline whatever the coordinator does.

pub mod client;
mod stream;

use std::io::Write as _;
use std::time::{Duration, Instant, SystemTime};

use crate::error::Error;
use crate::plan::Plan;
use crate::record::RunRecord;
use crate::run::{Options, stop_handle};
use crate::schedule::Segment;

use super::wire::{Poll, Register, Registered, Reply, StartReply, path};
use client::{CoordinatorClient, CoordinatorError};
pub use stream::HEARTBEAT;

/// How often a generator asks whether the test may start.
const START_POLL: Duration = Duration::from_millis(200);
/// How often a generator retries a coordinator it cannot reach.
const RETRY: Duration = Duration::from_millis(500);
/// How long a generator tries to deliver its record.
const RECORD_TRIES: Duration = Duration::from_secs(10);

/// How to join a coordinator.
#[derive(Debug, Clone)]
pub struct JoinOptions {
    /// The coordinator, `http://HOST:PORT`.
    pub url: String,
    /// The shared token.
    pub token: String,
    /// The share to run (`--segment i/N`, `JOB_COMPLETION_INDEX`); `None`: the coordinator's
    /// choice.
    pub index: Option<u32>,
    /// The share count given with `--segment`.
    pub count: Option<u32>,
    /// How long to wait for the coordinator to answer and for the test to start.
    pub wait: Duration,
}

/// Why a generator could not take part.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// A request failed or was refused.
    #[error(transparent)]
    Client(#[from] CoordinatorError),
    /// The coordinator says the test will not start.
    #[error("the test will not start: {0}")]
    NotStarting(String),
    /// The coordinator did not answer, or the test did not start, in time.
    #[error("gave up after {0:?}: {1}")]
    Timeout(Duration, String),
    /// The run itself failed.
    #[error(transparent)]
    Run(#[from] crate::Error),
    /// A thread could not be started.
    #[error("cannot start the sender thread: {0}")]
    Thread(std::io::Error),
    /// A signal came while the generator waited to join or to start: nothing was run.
    #[error("{0} while waiting for the coordinator: nothing was run")]
    Interrupted(&'static str),
}

/// Waits `d`, in slices short enough to leave at once when a signal comes (Ctrl-C while a
/// generator waits must not wait on: it once took 13 s more, or 5 minutes).
fn pause(d: Duration) -> Result<(), JoinError> {
    const SLICE: Duration = Duration::from_millis(20);
    let until = Instant::now() + d;
    loop {
        if let Some(signal) = crate::run::signal_received() {
            return Err(JoinError::Interrupted(signal));
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(SLICE));
    }
}

/// A registered generator.
pub struct Worker {
    client: CoordinatorClient,
    registered: Registered,
    sender: stream::Sender,
    wait: Duration,
}

/// This machine's name, for the coordinator's messages.
fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| format!("pid {}", std::process::id()))
}

fn warn(line: &str) {
    let _ = writeln!(std::io::stderr(), "volley: {line}");
}

/// Retries `f` while the coordinator cannot be reached, until `deadline`; a signal ends the
/// wait at once.
fn retrying<T>(
    deadline: Instant,
    wait: Duration,
    mut f: impl FnMut() -> Result<T, CoordinatorError>,
) -> Result<T, JoinError> {
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if e.is_refusal() => return Err(e.into()),
            Err(e) if Instant::now() >= deadline => {
                return Err(JoinError::Timeout(wait, e.to_string()));
            }
            Err(_) => pause(RETRY)?,
        }
    }
}

impl Worker {
    /// Registers for a share of the test whose hash is `plan_hash`.
    pub fn register(
        options: &JoinOptions,
        plan_hash: &str,
        whole: Option<crate::record::model::RunConfig>,
    ) -> Result<Self, JoinError> {
        let client = CoordinatorClient::new(&options.url, &options.token)?;
        let request = Register {
            plan_hash: plan_hash.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            index: options.index,
            count: options.count,
            host: host_name(),
            whole: whole.map(Box::new),
        };
        let deadline = Instant::now() + options.wait;
        let registered: Registered = retrying(deadline, options.wait, || {
            client.post(path::REGISTER, &request)
        })?;
        let sender = stream::Sender::start(client.clone(), registered.index, warn)
            .map_err(JoinError::Thread)?;
        Ok(Self {
            client,
            registered,
            sender,
            wait: options.wait,
        })
    }

    /// The share this generator runs.
    pub fn segment(&self) -> Segment {
        Segment::new(self.registered.index, self.registered.count)
            .expect("the coordinator gives a valid share")
    }

    /// Waits for the common start, then runs `plan` (this share) with the coordinator
    /// watching; returns the share's record.
    pub fn run(&mut self, plan: &Plan, options: &Options) -> Result<RunRecord, JoinError> {
        let start_at = self.wait_for_start()?;
        if let Ok(ahead) = start_at.duration_since(SystemTime::now()) {
            pause(ahead)?;
        }
        let stop = stop_handle();
        let mut streamer =
            self.sender
                .observer(self.registered.index, self.registered.groups, stop.clone());
        let options = Options {
            remote_judge: true,
            ..options.clone()
        };
        let record = crate::run::execute_with(
            plan,
            &options,
            stop,
            &mut [&mut streamer],
            &mut crate::run::Outputs::none(),
        )?;
        Ok(record)
    }

    /// Asks until the coordinator gives the start (or says it will not come).
    fn wait_for_start(&self) -> Result<SystemTime, JoinError> {
        let deadline = Instant::now() + self.wait;
        let poll = Poll {
            share: self.registered.index,
        };
        loop {
            let reply: StartReply =
                retrying(deadline, self.wait, || self.client.post(path::START, &poll))?;
            match reply {
                StartReply::Start { start_at_unix_ms } => {
                    return Ok(SystemTime::UNIX_EPOCH + Duration::from_millis(start_at_unix_ms));
                }
                StartReply::Failed { error } => return Err(JoinError::NotStarting(error)),
                StartReply::Waiting { registered, count } if Instant::now() >= deadline => {
                    return Err(JoinError::Timeout(
                        self.wait,
                        format!("{registered} of {count} generators registered"),
                    ));
                }
                StartReply::Waiting { .. } => pause(START_POLL)?,
            }
        }
    }

    /// Sends the share's record to the coordinator (after the last snapshots), retrying a
    /// coordinator that does not answer for a few seconds.
    pub fn send_record(mut self, record: &RunRecord) -> Result<(), JoinError> {
        self.sender.finish();
        let body = serde_json::to_vec(record).expect("records serialise");
        // Not cut short by a signal: the record of a run a signal stopped must still go.
        let deadline = Instant::now() + RECORD_TRIES;
        loop {
            match self.client.post_bytes::<Reply>(path::RECORD, &body) {
                Ok(_) => return Ok(()),
                Err(e) if e.is_refusal() => return Err(e.into()),
                Err(e) if Instant::now() >= deadline => {
                    return Err(JoinError::Timeout(RECORD_TRIES, e.to_string()));
                }
                Err(_) => std::thread::sleep(RETRY),
            }
        }
    }
}

/// The environment variable an Indexed Job's pod learns its index from.
pub const JOB_INDEX_ENV: &str = "JOB_COMPLETION_INDEX";

/// The share a generator asks for: `--segment`, else `$JOB_COMPLETION_INDEX` (the count from
/// the coordinator), else none.
pub fn asked_share(segment: Option<Segment>) -> Result<(Option<u32>, Option<u32>), Error> {
    if let Some(s) = segment {
        return Ok((Some(s.index()), Some(s.count())));
    }
    match std::env::var(JOB_INDEX_ENV) {
        Ok(text) => {
            let index = text.trim().parse::<u32>().map_err(|_| Error::Invalid {
                what: JOB_INDEX_ENV.into(),
                why: format!("`{text}` is not a share number (0, 1, 2, …)"),
            })?;
            Ok((Some(index), None))
        }
        Err(_) => Ok((None, None)),
    }
}
