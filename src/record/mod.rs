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
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(fail)
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
        action: crate::error::CANNOT_READ,
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
    let record: RunRecord = serde_json::from_value(value)
        .map_err(|e| fail(format!("does not match the record format: {e}")))?;
    check_histograms(&record).map_err(fail)?;
    Ok(record)
}

/// Every histogram of a record decodes: reports and comparisons merge them, so a damaged one is
/// refused here, by its field, rather than silently left out of a chart.
fn check_histograms(r: &RunRecord) -> Result<(), String> {
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
    );
    for (field, text) in fields {
        if let Some(text) = text {
            decode_histogram(text).map_err(|why| format!("{field}: {why}"))?;
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
