//! Reports: everything people read, rendered from a [`RunRecord`](crate::record::RunRecord) alone so
//! any report can be regenerated from `run.json`.

pub mod format;
pub mod progress;
pub mod text;
