//! volley: load testing and benchmarking for HTTP services, with honest numbers.
//!
//! # Layout
//!
//! One module per pipeline stage; the binary (`src/main.rs`, `src/cli/`) only parses arguments and
//! calls into these.
//!
//! ```text
//! cli ──► plan ──► schedule ──► engine ──► record ──► analysis ──► report
//!                                 │
//!                               proto (HTTP/1.1 · HTTP/2 · gRPC · TLS)    target (built-in server)
//!                                                                         suite (many runs)
//! ```
//!
//! - [`plan`]: user input → validated [`plan::RunSpec`]; every user error is found here.
//! - [`schedule`]: pure functions of time: when request n of the open model is due.
//! - [`engine`]: worker threads, each a current-thread runtime owning its connections; one request
//!   loop for every load model; the control thread (series, progress, signals, deadline).
//! - [`proto`]: the protocol-neutral client seam ([`proto::client`]): HTTP/1.1, HTTP/2 (h2c and
//!   ALPN), unary gRPC from `.proto` files, TLS (rustls), source-address spreading; and the
//!   [`proto::ErrorKind`] enum of failures.
//! - [`record`]: per-worker HDR recorders, the per-second series, and `run.json` (reading it back,
//!   alone or as a folder of repeats).
//! - [`findmax`]: the search for the maximum sustainable throughput (`volley find-max`).
//! - [`analysis`]: percentiles, buckets, the summary, warnings about the run itself; comparisons
//!   of runs with a noise-aware verdict ([`analysis::compare`], [`analysis::stats`]).
//! - [`report`]: the terminal summary and progress line, `report.md`, the self-contained
//!   `report.html` with SVG charts, comparisons, and the results folder every run writes.
//! - [`distributed`]: beyond one machine: the exact merge of the records of a test's shares
//!   (`--segment i/N`) and the Kubernetes manifests that run them.
//! - [`suite`]: one test against several targets (start, health check, reset, smoke gate, runs,
//!   stop), one after the other, and their comparison.
//! - [`target`]: the built-in target server (`volley serve`): REST and gRPC on one port, plain or
//!   TLS; used by the demo, tests and benches.
//! - [`timer`]: sub-millisecond sleeps (timerfd), shared by the open-model pacer and the target.
//! - [`redact`]: which header values are secret, and their redaction wherever volley writes
//!   headers or its command line.

pub mod analysis;
pub mod distributed;
pub mod engine;
pub mod error;
pub mod findmax;
pub mod location;
pub mod plan;
pub mod proto;
pub mod record;
pub mod redact;
pub mod report;
pub mod schedule;
pub mod suite;
pub mod target;
pub mod timer;

pub use error::Error;
