//! Data files: rows of a CSV file fed to templates as `data.NAME.COLUMN`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use minijinja::Value;

/// How a data file's rows are handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowMode {
    /// Row after row, run-wide, wrapping at the end.
    Sequential,
    /// A random row per iteration.
    Random,
    /// One fixed row per VU (VU n gets row n); needs at least as many rows as VUs.
    UniquePerVu,
}

/// Why a CSV file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The file cannot be opened.
    #[error("cannot read CSV file {}: {cause}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: csv::Error,
    },
    /// Its first line (the column names) cannot be read.
    #[error("{}: {cause}", path.display())]
    Header {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: csv::Error,
    },
    /// A row cannot be read.
    #[error("{} row {row}: {cause}", path.display())]
    Row {
        /// The file.
        path: PathBuf,
        /// Its line number (1-based, the column names are line 1).
        row: usize,
        /// Why.
        cause: csv::Error,
    },
    /// No row under the column names.
    #[error("CSV file {} has no data rows", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// A CSV file, read.
#[derive(Debug, Clone)]
pub struct DataSource {
    rows: Arc<[Value]>,
    mode: RowMode,
    next: Arc<AtomicU64>,
}

impl DataSource {
    /// Reads `path`; the first line names the columns.
    pub fn read(path: &Path, mode: RowMode) -> Result<Self, DataError> {
        let file = || path.to_path_buf();
        let mut reader = csv::Reader::from_path(path).map_err(|e| DataError::Read {
            path: file(),
            cause: e,
        })?;
        let headers = reader
            .headers()
            .map_err(|e| DataError::Header {
                path: file(),
                cause: e,
            })?
            .clone();
        let mut rows = Vec::new();
        for (i, record) in reader.records().enumerate() {
            let record = record.map_err(|e| DataError::Row {
                path: file(),
                row: i + 2,
                cause: e,
            })?;
            let row: std::collections::BTreeMap<&str, &str> =
                headers.iter().zip(record.iter()).collect();
            rows.push(Value::from(minijinja::value::Serde(&row)));
        }
        if rows.is_empty() {
            return Err(DataError::Empty { path: file() });
        }
        Ok(Self {
            rows: rows.into(),
            mode,
            next: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no rows (never, once read).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// How rows are handed out.
    pub fn mode(&self) -> RowMode {
        self.mode
    }

    /// This share's rows (`--segment`): rows `i`, `i + N`, … of sequential and unique files,
    /// so no two shares use one row; every row of a random one. `None` when it gets none.
    pub fn share(&self, segment: crate::schedule::Segment) -> Option<Self> {
        let rows: Vec<Value> = match self.mode {
            RowMode::Random => self.rows.to_vec(),
            RowMode::Sequential | RowMode::UniquePerVu => segment
                .rows(self.rows.len())
                .map(|i| self.rows[i].clone())
                .collect(),
        };
        (!rows.is_empty()).then(|| Self {
            rows: rows.into(),
            mode: self.mode,
            next: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The row for VU `vu` (0-based) in its iteration `iteration`.
    pub fn row(&self, vu: u32, _iteration: u64) -> Value {
        let n = self.rows.len();
        let i = match self.mode {
            RowMode::Sequential => (self.next.fetch_add(1, Ordering::Relaxed) % n as u64) as usize,
            RowMode::Random => fastrand::usize(..n),
            RowMode::UniquePerVu => vu as usize % n,
        };
        self.rows[i].clone()
    }
}
