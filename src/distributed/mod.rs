//! Beyond one machine: N generators run the same test as shares (`--segment i/N`), and their
//! records become one.
//!
//! - [`merge`]: the exact merge of the shares' records into the record one generator would
//!   have written (`volley merge`; the coordinator's collector);
//! - [`coordinate`]: the coordinator (`volley coordinate`): start barrier, live aggregation and
//!   global thresholds, lost generators, the merged record;
//! - [`join`]: one generator of a coordinated test (`volley run … --join URL`);
//! - [`wire`]: what the two say to each other (JSON over HTTP, with a shared token);
//! - [`k8s`]: the Kubernetes manifests that run a test as an Indexed Job (`volley k8s`), and the
//!   command lines of the coordinator and its workers they start;
//! - [`yaml`]: the small YAML writer those manifests are printed with.
//!
//! The segment arithmetic itself is [`crate::schedule::segment`] (pure) and
//! [`crate::plan::segment`] (a plan made into one share).

pub mod coordinate;
pub mod join;
pub mod k8s;
pub mod merge;
pub mod wire;
pub mod yaml;
