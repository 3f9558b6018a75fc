//! Recording: per-worker recorders, the per-second series, and the `run.json` record.

pub mod batches;
pub mod env;
pub mod error_kind;
pub mod figures;
pub mod find_max;
/// A new run id: 128 random bits as 32 hex digits ([`RunRecord::run_id`]).
pub fn new_run_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

#[cfg(test)]
pub(crate) mod fixture;
pub mod group;
pub mod group_series;
pub mod grpc_code;
pub mod model;
pub mod recorder;
pub mod selfcheck;
pub mod series;
pub mod set;
pub mod shares;
pub mod streams;
pub mod suite;
pub mod suite_decision;
pub mod timing;
pub mod watch;

use std::io::Write;
use std::path::Path;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};

use crate::error::Error;
pub use model::{RunRecord, SCHEMA_VERSION};

/// Serialises a histogram as HDR V2, base64 (standard alphabet).
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    // Writing to a Vec cannot fail for a histogram of ours.
    let _ = V2Serializer::new().serialize(h, &mut bytes);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The cookie of an uncompressed HDR V2 histogram (what [`encode_histogram`] writes).
const V2_COOKIE: u32 = 0x1c84_9313;

/// Bytes of a V2 histogram before its counts: cookie, payload length, normalizing offset,
/// significant digits, lowest and highest trackable values, integer-to-double ratio.
const V2_HEADER_LEN: usize = 40;

/// Why an encoded histogram could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    /// Not base64 text.
    #[error("histogram is not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    /// Not an uncompressed HDR V2 histogram.
    #[error("histogram is not HDR V2 (uncompressed): wrong cookie")]
    Cookie,
    /// The header announces more counts than follow.
    #[error(
        "histogram is truncated: its header announces {announced} bytes of counts, {present} \
         follow"
    )]
    Truncated {
        /// Bytes of counts the header announces.
        announced: usize,
        /// Bytes that follow the header.
        present: usize,
    },
    /// The decoder refused it.
    #[error("histogram is not HDR V2: {0:?}")]
    Decode(hdrhistogram::serialization::DeserializeError),
}

/// A histogram of a record that does not decode, by its field.
#[derive(Debug, thiserror::Error)]
#[error("{field}: {why}")]
pub struct BadHistogram {
    /// The field, e.g. `groups[2].histogram_us`.
    pub field: String,
    /// Why.
    pub why: HistogramError,
}

/// The responses an encoded latency histogram holds (its count); `None` when it cannot be
/// decoded.
pub fn responses_in(text: &str) -> Option<u64> {
    decode_histogram(text).ok().map(|h| h.len())
}

/// Parses a histogram written by [`encode_histogram`] (HDR V2, uncompressed).
///
/// The header is checked before the decoder sees it: the decoder allocates as many bytes as
/// the header announces, so a damaged or hostile length (up to 4 GiB) would exhaust the memory.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, HistogramError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text)?;
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    if word(0) != Some(V2_COOKIE) {
        return Err(HistogramError::Cookie);
    }
    let announced = word(4).map_or(0, |n| n as usize);
    let present = bytes.len().saturating_sub(V2_HEADER_LEN);
    if bytes.len() < V2_HEADER_LEN || announced > present {
        return Err(HistogramError::Truncated { announced, present });
    }
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(HistogramError::Decode)
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, flushed to disk, then
/// renamed over the target. A reader sees the old file or the new one, never half of one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let fail = |cause| Error::File {
        action: crate::error::FileAction::Write,
        path: path.to_path_buf(),
        cause,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(fail)?;
    let file_name = path
        .file_name()
        .map_or_else(|| "record".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{file_name}.tmp-{}", std::process::id()));
    let _pending = Pending::new(&tmp);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        pause_for_tests();
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(fail)
}

/// The temporary files of the atomic writes under way, so that a process told to exit at once
/// (a second Ctrl-C) can remove them first ([`abandon_writes`]).
static PENDING: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// One write's temporary file in [`PENDING`] while it lasts.
struct Pending(std::path::PathBuf);

impl Pending {
    fn new(tmp: &Path) -> Self {
        PENDING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(tmp.to_path_buf());
        Self(tmp.to_path_buf())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = pending.iter().position(|p| *p == self.0) {
            pending.swap_remove(i);
        }
    }
}

/// Removes the temporary files of the atomic writes under way, for a process about to exit
/// without finishing them: each target file keeps what it had (whole, or absent), and no
/// `.NAME.tmp-PID` is left behind. The lock is held to the exit, so no write renames after.
pub fn abandon_writes() {
    let pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    for tmp in pending.iter() {
        let _ = std::fs::remove_file(tmp);
    }
    // Held until the process exits: a writer about to rename waits on it in `Pending::drop`
    // only after its rename, so a rename may still complete; its file is whole then.
    std::mem::forget(pending);
}

/// Names a file that makes the first [`write_atomically`] of the process pause, for tests.
pub const PAUSE_ENV: &str = "VOLLEY_TEST_PAUSE_BEFORE_RENAME";

/// A test seam: with `VOLLEY_TEST_PAUSE_BEFORE_RENAME=PATH` in the environment, the first atomic
/// write of the process, its temporary file written, creates PATH and waits until PATH is
/// removed (60 s at most) before renaming. The signal tests use it to send a signal while the
/// record is being written — a window of a few milliseconds otherwise. Costs one environment
/// look-up per file written; never on the hot path.
fn pause_for_tests() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static PAUSED: AtomicBool = AtomicBool::new(false);
    let Some(marker) = std::env::var_os(PAUSE_ENV) else {
        return;
    };
    if PAUSED.swap(true, Ordering::Relaxed) || std::fs::write(&marker, b"paused\n").is_err() {
        return;
    }
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while Path::new(&marker).exists() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Writes a record as pretty JSON, atomically.
pub fn write_record(path: &Path, record: &RunRecord) -> Result<(), Error> {
    let mut json = serde_json::to_vec_pretty(record).map_err(|e| Error::Record {
        path: path.to_path_buf(),
        why: format!("cannot serialise: {e}"),
    })?;
    json.push(b'\n');
    write_atomically(path, &json)
}

/// Reads a record, checking its format version.
pub fn read_record(path: &Path) -> Result<RunRecord, Error> {
    let bytes = std::fs::read(path).map_err(|cause| Error::File {
        action: crate::error::FileAction::Read,
        path: path.to_path_buf(),
        cause,
    })?;
    parse_record(&bytes, path)
}

/// Parses a record from `bytes` (read from `path`, which only names it in errors), checking its
/// format version. Any input gives a record or an [`Error::Record`] saying why not; never a panic.
pub fn parse_record(bytes: &[u8], path: &Path) -> Result<RunRecord, Error> {
    let fail = |why: String| Error::Record {
        path: path.to_path_buf(),
        why,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        fail(format!(
            "not UTF-8 text (invalid byte at offset {}): not a volley run record",
            e.valid_up_to()
        ))
    })?;
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| fail(format!("not valid JSON: {e}")))?;
    if value.get("targets").is_some_and(|t| t.is_array()) && value.get("repeats").is_some() {
        return Err(fail(
            "a suite's record (suite.json), not a run's: `volley report` renders the suite's \
             report from it, and `volley compare` takes its targets' folders"
                .into(),
        ));
    }
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        Some(v) => {
            let writer = value
                .pointer("/tool/version")
                .and_then(|v| v.as_str())
                .map_or_else(String::new, |w| format!(" (written by volley {w})"));
            let advice = if v > u64::from(SCHEMA_VERSION) {
                "upgrade volley to read it"
            } else {
                "render it with the volley version that wrote it, or run the test again"
            };
            return Err(fail(format!(
                "record format version {v}{writer}; this volley ({}) reads version \
                 {SCHEMA_VERSION}: {advice}",
                env!("CARGO_PKG_VERSION")
            )));
        }
        None => {
            return Err(fail("no `schema_version`: not a volley run record".into()));
        }
    }
    let record: RunRecord = serde_path_to_error::deserialize(value).map_err(|e| {
        let at = match e.path().to_string() {
            p if p == "." => String::new(),
            p => format!(" at `{p}`"),
        };
        fail(format!(
            "does not match the record format{at}: {}",
            e.inner()
        ))
    })?;
    check_histograms(&record).map_err(|e| fail(e.to_string()))?;
    Ok(record)
}

/// Every histogram of a record decodes: reports and comparisons merge them, so a damaged one is
/// refused here, by its field, rather than silently left out of a chart.
fn check_histograms(r: &RunRecord) -> Result<(), BadHistogram> {
    let h = &r.histograms;
    let fields = [
        ("histograms.latency_us".to_string(), Some(&h.latency_us)),
        (
            "histograms.service_latency_us".to_string(),
            h.service_latency_us.as_ref(),
        ),
        ("histograms.lag_us".to_string(), h.lag_us.as_ref()),
    ]
    .into_iter()
    .chain(
        r.groups
            .iter()
            .enumerate()
            .map(|(i, g)| (format!("groups[{i}].histogram_us"), Some(&g.histogram_us))),
    )
    .chain(r.grouped.iter().enumerate().flat_map(|(i, g)| {
        g.values.iter().enumerate().map(move |(j, v)| {
            (
                format!("grouped[{i}].values[{j}].histogram_us"),
                Some(&v.histogram_us),
            )
        })
    }));
    for (field, text) in fields {
        if let Some(text) = text {
            decode_histogram(text).map_err(|why| BadHistogram { field, why })?;
        }
    }
    if let Some(f) = &r.summary.streams {
        streams::stats(f, "summary.streams")?;
    }
    for (i, g) in r.groups.iter().enumerate() {
        if let Some(f) = &g.streams {
            streams::stats(f, &format!("groups[{i}].streams"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_round_trip() {
        let mut h = recorder::new_histogram();
        for v in [1, 10, 100, 1000, 123_456] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(back.max(), h.max());
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
        assert!(decode_histogram("!!!").is_err());
    }

    #[test]
    fn a_histogram_announcing_more_counts_than_it_holds_is_refused_before_allocating() {
        let mut bytes = base64::engine::general_purpose::STANDARD
            .decode(encode_histogram(&recorder::new_histogram()))
            .unwrap();
        // Found by the record fuzz target: a histogram announcing 0xb0000019 bytes (2.8 GiB)
        // of counts made the decoder allocate them.
        bytes[4..8].copy_from_slice(&0xb000_0019_u32.to_be_bytes());
        let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let err = decode_histogram(&text).unwrap_err().to_string();
        assert!(
            err.starts_with("histogram is truncated: its header announces 2952790041 bytes"),
            "{err}"
        );
        bytes[0] ^= 1;
        let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
        assert!(
            decode_histogram(&text)
                .unwrap_err()
                .to_string()
                .contains("wrong cookie")
        );
    }

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = std::env::temp_dir().join(format!("volley-atomic-{}", std::process::id()));
        let path = dir.join("run.json");
        write_atomically(&path, b"first").unwrap();
        write_atomically(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(leftovers.is_empty());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn error_kinds_are_keys_by_name_and_an_unknown_one_is_refused_by_name() {
        let mut r = fixture::record("k", 3, 100, 2000, 5, 0.0);
        r.summary
            .errors_by_kind
            .insert(error_kind::ErrorKind::Timeout, 2);
        let mut value = serde_json::to_value(&r).unwrap();
        let kinds = &value["summary"]["errors_by_kind"];
        assert_eq!(kinds["http_5xx"], 15, "{kinds}");
        assert_eq!(kinds["timeout"], 2, "{kinds}");
        let back = parse_record(value.to_string().as_bytes(), Path::new("k.json")).unwrap();
        assert_eq!(back.summary.errors_by_kind, r.summary.errors_by_kind);
        value["summary"]["errors_by_kind"]["from_the_future"] = 1.into();
        let err = parse_record(value.to_string().as_bytes(), Path::new("k.json"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown variant `from_the_future`") && err.contains("timeout"),
            "{err}"
        );
    }
}
