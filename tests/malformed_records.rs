//! No panic is reachable from a record: damaged ones (files in `tests/malformed/records`, and
//! variants of a real record made here) are refused with exit code 2 and the reason; absurd but
//! well-formed ones still render. Every command runs under a deadline.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use common::deadline::{assert_no_panic, assert_refused, run};
use common::*;
use serde_json::Value;

const MALFORMED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/malformed");

/// A real record, made against the built-in target.
fn real_record(dir: &Path) -> (PathBuf, Value) {
    let t = target();
    let (out, record) = run_json(
        dir,
        &[
            &format!("{}/", t.base_url()),
            "-n",
            "50",
            "-c",
            "2",
            "--threads",
            "1",
        ],
    );
    assert!(out.status.success());
    (dir.join("run.json"), record)
}

#[test]
fn damaged_records_are_refused_with_the_reason() {
    let dir = temp_dir("malformed-records");
    let (good_path, good) = real_record(&dir);
    let good_text = std::fs::read_to_string(&good_path).unwrap();

    let mut cases: Vec<(String, Vec<u8>, &str)> = Vec::new();
    for (file, message) in [
        ("empty.json", "not valid JSON: EOF"),
        ("binary.json", "not UTF-8"),
        ("utf16.json", "not UTF-8"),
        ("array.json", "no `schema_version`"),
        ("only-version.json", "missing field `tool`"),
        ("deep.json", "recursion limit exceeded"),
        ("huge-number.json", "number out of range"),
        ("negative-version.json", "no `schema_version`"),
        // Found by the record fuzz target: the decoder allocated the 2.8 GiB announced.
        (
            "fuzz-oom-histogram-length.json",
            "groups[3].histogram_us: histogram is truncated: its header announces 2952790041 bytes",
        ),
    ] {
        let bytes = std::fs::read(Path::new(MALFORMED).join("records").join(file)).unwrap();
        cases.push((file.to_string(), bytes, message));
    }
    for cut in [
        1,
        good_text.len() / 3,
        good_text.len() / 2,
        good_text.len() - 2,
    ] {
        cases.push((
            format!("truncated at {cut}"),
            good_text.as_bytes()[..cut].to_vec(),
            "not valid JSON",
        ));
    }
    let variant = |edit: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        edit(&mut v);
        serde_json::to_vec(&v).unwrap()
    };
    cases.push((
        "a newer version".into(),
        variant(&|v| v["schema_version"] = 999.into()),
        "record format version 999 (written by volley 0.1.0); this volley (0.1.0) reads version 2: upgrade volley to read it",
    ));
    cases.push((
        "an older version".into(),
        variant(&|v| v["schema_version"] = 0.into()),
        "render it with the volley version that wrote it",
    ));
    cases.push((
        "no version".into(),
        variant(&|v| {
            v.as_object_mut().unwrap().remove("schema_version");
        }),
        "no `schema_version`",
    ));
    cases.push((
        "a string for a count".into(),
        variant(&|v| v["summary"]["requests"] = "many".into()),
        "does not match the record format at `summary.requests`: invalid type: string \"many\", expected u64",
    ));
    cases.push((
        "a negative count".into(),
        variant(&|v| v["summary"]["errors"] = (-1).into()),
        "at `summary.errors`: invalid value: integer `-1`, expected u64",
    ));
    cases.push((
        "an object for the series".into(),
        variant(&|v| v["series"] = serde_json::json!({"0": 1})),
        "at `series`: invalid type: map, expected a sequence",
    ));
    cases.push((
        "a histogram that is not base64".into(),
        variant(&|v| v["histograms"]["latency_us"] = "not base64!".into()),
        "histograms.latency_us: histogram is not base64",
    ));
    cases.push((
        "a histogram that is not HDR".into(),
        variant(&|v| v["histograms"]["latency_us"] = "SElTVGZha2VoaXN0b2dyYW0=".into()),
        "histograms.latency_us: histogram is not HDR V2",
    ));
    cases.push((
        "a truncated histogram".into(),
        variant(&|v| {
            let h = v["histograms"]["latency_us"].as_str().unwrap().to_string();
            v["histograms"]["latency_us"] = h[..h.len() / 2].trim_end_matches('=').into();
        }),
        "histograms.latency_us:",
    ));
    for (name, bytes, message) in &cases {
        let path = dir.join("bad.json");
        std::fs::write(&path, bytes).unwrap();
        let at = format!("record {}: ", path.display());
        let o = run(&[OsStr::new("report"), path.as_os_str()]);
        assert_refused(&format!("report ({name})"), &o, &[&at, message]);
        let o = run(&[
            OsStr::new("compare"),
            good_path.as_os_str(),
            path.as_os_str(),
        ]);
        assert_refused(&format!("compare ({name})"), &o, &[&at, message]);
    }
}

#[test]
fn absurd_but_well_formed_records_still_render() {
    let dir = temp_dir("malformed-absurd");
    let (good_path, good) = real_record(&dir);
    let second = good["series"][0].clone();
    let mut huge = good.clone();
    // 100 000 seconds of series, and absurd figures: big, negative, zero.
    huge["series"] = Value::Array(vec![second; 100_000]);
    huge["summary"]["duration_s"] = (-5.0).into();
    huge["summary"]["rps"] = 1e308.into();
    huge["summary"]["latency_ms"]["p99"] = 1e300.into();
    huge["config"]["threads"] = 0.into();
    let path = dir.join("huge.json");
    std::fs::write(&path, serde_json::to_vec(&huge).unwrap()).unwrap();
    for format in ["txt", "md", "html"] {
        let o = run(&[
            OsStr::new("report"),
            path.as_os_str(),
            OsStr::new("-f"),
            OsStr::new(format),
        ]);
        assert_no_panic(&format!("report -f {format}"), &o);
        assert_eq!(o.code, Some(0), "report -f {format}:\n{}", o.stderr);
    }
    let o = run(&[
        OsStr::new("compare"),
        good_path.as_os_str(),
        path.as_os_str(),
        OsStr::new("-f"),
        OsStr::new("html"),
    ]);
    assert_no_panic("compare", &o);
    assert_eq!(o.code, Some(0), "compare:\n{}", o.stderr);
}
