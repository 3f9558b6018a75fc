//! Data files: rows of a CSV file fed to templates as `data.NAME.COLUMN`.
//!
//! A file is read once, bounded: only a regular file (not a device, a FIFO or a folder), at
//! most [`DEFAULT_MAX_DATA_BYTES`] unless `--max-data-size` allows more. Its rows are kept
//! compactly — every cell's text in one buffer and where each cell ends — so a file costs
//! about its own size in memory plus four bytes a cell, not a map per row (a 162 MB CSV once
//! took 1.84 GB). A row is handed to templates as a view of its cells.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use minijinja::Value;
use minijinja::value::{Enumerator, Object, ObjectRepr};

/// The largest data file read unless `--max-data-size` says otherwise, bytes (1 GiB).
pub const DEFAULT_MAX_DATA_BYTES: u64 = 1 << 30;
/// The most `--max-data-size` may allow, bytes (4 GiB − 1: cells are found by 32-bit offsets).
pub const MAX_DATA_BYTES: u64 = u32::MAX as u64;

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
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// Not a regular file: a device (`/dev/zero` never ends), a FIFO or a folder.
    #[error("{} is not a regular file (a device, a FIFO or a folder): a data file must be a file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// Over the size limit.
    #[error(
        "{} is {size} bytes, over the limit of {limit} bytes for a data file; raise it with \
         --max-data-size (at most 4 GiB)",
        path.display()
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size, bytes (at least, for a file that grew while read).
        size: u64,
        /// The limit, bytes.
        limit: u64,
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

/// The cells of a file's rows: every cell's text in one buffer, row after row.
#[derive(Debug)]
struct Table {
    columns: Box<[Box<str>]>,
    text: String,
    /// Where each cell ends in `text`, row-major: row `r`'s cells are `ends[r * width ..]`.
    ends: Vec<u32>,
}

impl Table {
    fn width(&self) -> usize {
        self.columns.len()
    }

    fn rows(&self) -> usize {
        self.ends.len() / self.width().max(1)
    }

    /// Cell `column` of row `row`.
    fn cell(&self, row: usize, column: usize) -> &str {
        let i = row * self.width() + column;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    /// A table of the rows `rows` picks.
    fn select(&self, rows: impl Iterator<Item = usize>) -> Self {
        let mut out = Self {
            columns: self.columns.clone(),
            text: String::new(),
            ends: Vec::new(),
        };
        for r in rows {
            for c in 0..self.width() {
                out.text.push_str(self.cell(r, c));
                out.ends.push(out.text.len() as u32);
            }
        }
        out
    }
}

/// One row, as templates see it: a map of column to cell.
#[derive(Debug)]
struct RowView {
    table: Arc<Table>,
    row: usize,
}

impl Object for RowView {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let name = key.as_str()?;
        let column = self.table.columns.iter().position(|c| &**c == name)?;
        Some(Value::from(self.table.cell(self.row, column)))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(
            self.table
                .columns
                .iter()
                .map(|c| Value::from(&**c))
                .collect(),
        )
    }
}

/// A CSV file, read.
#[derive(Debug, Clone)]
pub struct DataSource {
    table: Arc<Table>,
    mode: RowMode,
    next: Arc<AtomicU64>,
}

impl DataSource {
    /// Reads `path`, at most `max_bytes` long; the first line names the columns.
    pub fn read(path: &Path, mode: RowMode, max_bytes: u64) -> Result<Self, DataError> {
        let file = || path.to_path_buf();
        let limit = max_bytes.min(MAX_DATA_BYTES);
        let open = |cause| DataError::Open {
            path: file(),
            cause,
        };
        let meta = std::fs::metadata(path).map_err(open)?;
        if !meta.is_file() {
            return Err(DataError::NotAFile { path: file() });
        }
        if meta.len() > limit {
            return Err(DataError::TooLarge {
                path: file(),
                size: meta.len(),
                limit,
            });
        }
        // Bounded even if the file grows while it is read.
        let reader = std::fs::File::open(path).map_err(open)?.take(limit + 1);
        let mut reader = csv::Reader::from_reader(reader);
        let columns: Box<[Box<str>]> = reader
            .headers()
            .map_err(|e| DataError::Header {
                path: file(),
                cause: e,
            })?
            .iter()
            .map(Box::from)
            .collect();
        let mut table = Table {
            columns,
            text: String::with_capacity(meta.len() as usize),
            ends: Vec::new(),
        };
        let mut record = csv::StringRecord::new();
        let mut row = 2;
        while reader
            .read_record(&mut record)
            .map_err(|e| DataError::Row {
                path: file(),
                row,
                cause: e,
            })?
        {
            for cell in record.iter() {
                table.text.push_str(cell);
                table.ends.push(table.text.len() as u32);
            }
            row += 1;
        }
        if reader.position().byte() > limit {
            return Err(DataError::TooLarge {
                path: file(),
                size: reader.position().byte(),
                limit,
            });
        }
        if table.ends.is_empty() {
            return Err(DataError::Empty { path: file() });
        }
        table.text.shrink_to_fit();
        table.ends.shrink_to_fit();
        Ok(Self {
            table: Arc::new(table),
            mode,
            next: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.table.rows()
    }

    /// Whether there are no rows (never, once read).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How rows are handed out.
    pub fn mode(&self) -> RowMode {
        self.mode
    }

    /// The column names, in the file's order.
    pub fn columns(&self) -> impl Iterator<Item = &str> {
        self.table.columns.iter().map(|c| &**c)
    }

    /// This share's rows (`--segment`): rows `i`, `i + N`, … of sequential and unique files,
    /// so no two shares use one row; every row of a random one. `None` when it gets none.
    pub fn share(&self, segment: crate::schedule::Segment) -> Option<Self> {
        let table = match self.mode {
            RowMode::Random => Arc::clone(&self.table),
            RowMode::Sequential | RowMode::UniquePerVu => {
                Arc::new(self.table.select(segment.rows(self.len())))
            }
        };
        (table.rows() > 0).then(|| Self {
            table,
            mode: self.mode,
            next: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The row for VU `vu` (0-based) in its iteration `iteration`.
    pub fn row(&self, vu: u32, _iteration: u64) -> Value {
        let n = self.len();
        let row = match self.mode {
            RowMode::Sequential => (self.next.fetch_add(1, Ordering::Relaxed) % n as u64) as usize,
            RowMode::Random => fastrand::usize(..n),
            RowMode::UniquePerVu => vu as usize % n,
        };
        Value::from_object(RowView {
            table: Arc::clone(&self.table),
            row,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("volley-data-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn rows_are_views_of_their_cells() {
        let path = csv("a.csv", "id,name\n1,ada\n22,\n333,grace\n");
        let d = DataSource::read(&path, RowMode::Sequential, DEFAULT_MAX_DATA_BYTES).unwrap();
        assert_eq!(d.len(), 3);
        assert_eq!(d.columns().collect::<Vec<_>>(), ["id", "name"]);
        let env = minijinja::Environment::new();
        let render = |row: Value| {
            env.render_str(
                "{{ r.id }}/{{ r.name }}/{% if r.nope is defined %}nope{% else %}none{% endif %}",
                minijinja::context! { r => row },
            )
            .unwrap()
        };
        assert_eq!(render(d.row(0, 0)), "1/ada/none");
        assert_eq!(render(d.row(0, 1)), "22//none");
        assert_eq!(render(d.row(0, 2)), "333/grace/none");
        assert_eq!(render(d.row(0, 3)), "1/ada/none", "wraps");
        let half = d
            .share(crate::schedule::Segment::new(1, 2).unwrap())
            .unwrap();
        assert_eq!(half.len(), 1);
        assert_eq!(render(half.row(0, 0)), "22//none");
    }

    #[test]
    fn what_is_not_a_bounded_regular_file_is_refused() {
        let err =
            DataSource::read(Path::new("/dev/zero"), RowMode::Sequential, 1 << 20).unwrap_err();
        assert!(matches!(err, DataError::NotAFile { .. }), "{err}");
        let path = csv("big.csv", "id\n1\n2\n3\n");
        let err = DataSource::read(&path, RowMode::Sequential, 4).unwrap_err();
        assert!(err.to_string().contains("--max-data-size"), "{err}");
        let path = csv("empty.csv", "id\n");
        let err = DataSource::read(&path, RowMode::Sequential, 1 << 20).unwrap_err();
        assert!(matches!(err, DataError::Empty { .. }), "{err}");
    }
}
