//! Recording: per-worker recorders, the per-second series, and the `run.json` record.

pub mod env;
#[cfg(test)]
pub(crate) mod fixture;
pub mod model;
pub mod recorder;
pub mod series;
pub mod set;

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

/// Parses a histogram written by [`encode_histogram`].
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram is not HDR V2: {e:?}"))
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, flushed to disk, then
/// renamed over the target. A reader sees the old file or the new one, never half of one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let fail = |cause| Error::File {
        action: "cannot write",
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
    let text = std::fs::read_to_string(path).map_err(|cause| Error::File {
        action: crate::error::CANNOT_READ,
        path: path.to_path_buf(),
        cause,
    })?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| Error::Record {
        path: path.to_path_buf(),
        why: format!("not valid JSON: {e}"),
    })?;
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
            return Err(Error::Record {
                path: path.to_path_buf(),
                why: format!(
                    "record format version {v}{writer}; this volley ({}) reads version \
                     {SCHEMA_VERSION}: {advice}",
                    env!("CARGO_PKG_VERSION")
                ),
            });
        }
        None => {
            return Err(Error::Record {
                path: path.to_path_buf(),
                why: "no `schema_version`: not a volley run record".into(),
            });
        }
    }
    serde_json::from_value(value).map_err(|e| Error::Record {
        path: path.to_path_buf(),
        why: format!("does not match the record format: {e}"),
    })
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
}
