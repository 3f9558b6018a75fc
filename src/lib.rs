//! volley: load testing and benchmarking for HTTP services, with honest numbers.
//!
//! # Layout
//!
//! One module per pipeline stage. The binary (`src/main.rs`, `src/cli/`) only parses arguments,
//! calls into these and prints.
//!
//! Layers, top to bottom; a module imports only modules of lower layers (`tests/architecture.rs`
//! checks every `crate::` path, so the modules form no cycle):
//!
//! | layer | modules | what they are |
//! |---|---|---|
//! | 1 | [`suite`] | one test against several targets, one after the other, and their comparison |
//! | 2 | [`findmax`], [`distributed`] | the search for the maximum sustainable throughput; runs beyond one machine (merge, coordinator, generators, manifests) |
//! | 3 | [`run`] | the façade: `run::execute(plan, options, outputs)` → the record; the output seam ([`run::output`]: results folder, `--json`, metrics page, remote write) |
//! | 3.5 | [`export`] | volley's live figures (an observer filling one snapshot) and the Prometheus page and remote-write pushes made from them |
//! | 4 | [`engine`] | worker threads, the VU loop, the pacer, gates, the control loop, [`engine::Observer`] |
//! | 5 | [`plan`] | user input (files, flags) → a validated [`plan::Plan`]; every user error is found here |
//! | 6 | [`proto`], [`schedule`] | HTTP/1.1 · HTTP/2 · gRPC · TLS clients, streams (SSE, gRPC streams, WebSocket); pure functions of time |
//! | 7 | [`report`] | the terminal summary, progress line, Markdown, HTML, comparisons, results folders |
//! | 8 | [`analysis`] | figures read from records: verdicts, warnings, self-checks, comparisons |
//! | 9 | [`record`] | the stable contract: `run.json`, recorders, error kinds, find-max and suite outcomes |
//! | 9.5 | [`watch`] | watching the target: Prometheus scrapes and `/proc` samples (its URLs' user information redacted for display) |
//! | 10 | [`units`], [`redact`], [`location`], [`timer`], [`error`], [`color`] | leaves |
//!
//! [`server`] (the built-in target, `volley serve`) is a program of its own beside the pipeline:
//! it uses [`proto`], [`record`] and [`timer`] below it, and no module of the pipeline imports it;
//! the binary (`volley serve`, the demo), tests and benches start it.
//!
//! Where things go (the files each touches, outside its own new module):
//! - a new **executor** (load shape): a [`plan::Profile`] variant in `plan/profile.rs`, which
//!   answers for it everything the rest asks (its model, ramp, VU and in-flight caps, iteration
//!   limits, duration, record kind, segment share); its reading in `plan/read/profile.rs`; its
//!   name in `record::model::ProfileKind` (`record/model/config.rs`). Three files of code, plus
//!   its line in the `profile` key's doc (`plan/file.rs`) and the schemas `UPDATE_SCHEMA=1`
//!   regenerates; reports word it by its model unless `report/load.rs` gets words of its own.
//!   The engine runs it by its model — the VU loop (closed) or the pacer (open) — unchanged
//!   while its schedule is a `schedule::Ramp` with the limits `Profile` answers; a schedule no
//!   ramp can say is a module in `schedule/` and the gate (`engine/gate.rs`) or pacer
//!   (`engine/pacer.rs`) that follows it. `tests/architecture.rs` keeps the variants in those
//!   two `profile.rs` files;
//! - a new **protocol**: its module under `proto/`; its `pub mod` in `proto/mod.rs`; its
//!   [`proto::client::Protocol`] variant and the arms beside it in `proto/client.rs` (its name
//!   in plans and flags, ALPN, whether it multiplexes or carries gRPC, its `Wire` request form,
//!   its `Connection`: connect, prepare, send); its `run.json` name in
//!   `record::model::WireProtocol` (`record/model/config.rs`). Three files: plans
//!   (`[target] protocol`) and quick mode (`--protocol`) read it by name, the plan's connection,
//!   the engine and `volley check` ask it through its methods, and `tests/architecture.rs`
//!   keeps its variants in `proto/client.rs`; the plan schema `UPDATE_SCHEMA=1` regenerates;
//! - a new **streaming protocol** (a response read as messages as they arrive): its module
//!   under `proto/stream/`; in `proto/stream/mod.rs` its `pub mod`, its [`proto::stream::Spec`]
//!   variant and its arms of [`proto::stream::State`] and [`proto::stream::Tap`] (the per-VU
//!   parser whose tap fills the protocol-neutral [`proto::stream::Trace`], and says when a
//!   streaming request side sends, through `BodyTap`'s duplex methods; a protocol that takes
//!   over its HTTP/1.1 connection after a `101`, as WebSocket does, answers `BodyTap::upgrade`
//!   with the session it runs); its key on a step in `plan/file.rs` and its
//!   reading into a `Spec` in `plan/read/stream.rs`. Three files: the engine records every
//!   trace alike, and `run.json`, the reports, `compare` and the thresholds read the stream
//!   figures whatever the protocol; `tests/seams.rs` keeps the variants in those two files;
//! - a new **report format**: a module under `report/` rendering from the record; in
//!   `report/mod.rs` its `pub mod`, its [`report::Format`] variant in `Format::ALL`, its name
//!   (`--format` reads formats by it), file name, and its arms in `render`,
//!   `render_comparison` and `render_suite`. Two files: every results folder (a run's, a series
//!   of repeats', a suite's) then holds it, and `volley report`/`compare` offer it;
//! - a new **output** (what a run leaves behind): one file under `run/output/` implementing
//!   [`run::Output`] (started before the first request, reading the live figures each second
//!   if it wants them, asked for its warnings after each run, given the complete record,
//!   closed), its `mod` line in `run/output/mod.rs`, and its flag in `cli/export.rs`, which adds
//!   it to the command's [`run::Outputs`]. Every command (runs, repeats, find-max, the
//!   coordinator, its generators, merge, the demo, a suite's runs) ends in that façade;
//!   `tests/architecture.rs` keeps every implementation under `run/output/`. Another observer
//!   (a view, a watcher) is a type implementing
//!   [`engine::Observer`] in its own module under `run/`, made and handed to the engine in
//!   `run/mod.rs` (`execute_with`, from a `run::Options` field), that field set in `cli/runs.rs`
//!   from a flag of the args every run command flattens and hands it (`cli/tuning.rs`).
//!
//! Modules:
//! - [`plan`]: user input → a validated [`plan::read::Draft`] → prepared, a [`plan::Plan`]; quick
//!   mode's flags desugar into the plan file's model and go through the same reader;
//!   [`plan::import`] turns what users already have (a curl command line, a HAR recording, an
//!   OpenAPI document) into plans.
//! - [`schedule`]: pure functions of time: which VU count or arrival rate is due at t.
//! - [`engine`]: worker threads, each a current-thread runtime owning its connections; one request
//!   loop for every load model; the control thread (series, observers, signals, deadline).
//! - [`proto`]: the protocol-neutral client seam ([`proto::client`]): HTTP/1.1, HTTP/2 (h2c and
//!   ALPN), unary gRPC from `.proto` files, TLS (rustls), source-address spreading.
//! - [`run`]: runs a plan with observers and builds its record once (windows, arrival figures,
//!   thresholds, self-checks, warnings); the output seam ([`run::output`]) every command hands
//!   a finished run to; says what it is about to run ([`run::show`]: the banner, `volley
//!   check`'s listing).
//! - [`record`]: per-worker HDR recorders, the per-second series, the [`record::error_kind::ErrorKind`]
//!   enum of failures, and `run.json` (reading it back, alone or as a folder of repeats).
//! - [`findmax`]: the search for the maximum sustainable throughput (`volley find-max`).
//! - [`analysis`]: the verdict of a run, warnings about the run itself, self-checks; comparisons
//!   of runs with a noise-aware verdict ([`analysis::compare`], [`analysis::stats`]) and the
//!   `--fail-on` rules that gate on them ([`analysis::gate`]).
//! - [`report`]: the terminal summary and progress line, `report.md`, the self-contained
//!   `report.html` with SVG charts, comparisons, and the results folder every run writes.
//! - [`distributed`]: beyond one machine: the exact merge of the records of a test's shares
//!   (`--segment i/N`) and the Kubernetes manifests that run them.
//! - [`suite`]: one test against several targets (start, health check, reset, smoke gate, runs,
//!   stop), one after the other, and their comparison.
//! - [`server`]: the built-in target server (`volley serve`): REST and gRPC on one port, plain or
//!   TLS; used by the demo, tests and benches.
//! - [`export`]: volley's own live metrics as a Prometheus page and as remote-write pushes, from
//!   a snapshot the run's exporter observer fills (started and ended by [`run::output`]).
//! - [`timer`]: sub-millisecond sleeps (timerfd), shared by the open-model pacer and the target.
//! - [`watch`]: watching the target during a run: its Prometheus metrics (scraped on a thread of
//!   their own) and its process tree (`/proc`). Just above the leaves: [`plan`] validates
//!   `[[watch]]` and `--watch` with it, and the run's watcher observer (`run::watching`) drives
//!   it.
//! - [`redact`]: which header values are secret, and their redaction wherever volley writes
//!   headers or its command line.
//! - [`units`]: formatting of counts, rates, sizes and durations.
//! - [`color`]: the one colour policy (`--color`, `NO_COLOR`) for everything written to a terminal.

pub mod analysis;
pub mod color;
pub mod distributed;
pub mod engine;
pub mod error;
pub mod export;
pub mod findmax;
pub mod location;
pub mod plan;
pub mod proto;
pub mod record;
pub mod redact;
pub mod report;
pub mod run;
pub mod schedule;
pub mod server;
pub mod suite;
pub mod timer;
pub mod units;
pub mod watch;

pub use error::Error;
