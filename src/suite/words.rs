//! What a suite says about a target's steps: the find-max line, why a smoke run or a run failed,
//! where a server's last output is.

use std::path::{Path, PathBuf};

use super::process::tail;
use crate::findmax::FindMax;
use crate::findmax::run::Settings;
use crate::record::RunRecord;
use crate::record::suite::{SmokeOutcome, TargetOutcome};
use crate::units::{rate, thousands};

/// What a search found, in one line.
pub(super) fn found_line(f: &FindMax, s: &Settings) -> String {
    let max = match f.max_sustainable_load {
        Some(load) => format!(
            "max sustainable {} at {}",
            crate::report::find_max::max_sustainable(f),
            s.level_text(load)
        ),
        None => "no level met the SLO".into(),
    };
    let breaking = f
        .breaking_load
        .map(|l| format!(", breaking at {}", s.level_text(l)))
        .unwrap_or_default();
    format!(
        "{max}; peak {} req/s at {}{breaking}; {} steps in {:.1} s ({})",
        rate(f.peak_rps),
        s.level_text(f.peak_load),
        f.steps.len(),
        f.elapsed_s,
        f.stopped
    )
}

pub(super) fn smoke_cause(r: &RunRecord, out: &TargetOutcome) -> String {
    let smoke = out.smoke.as_ref().expect("judged");
    if smoke.requests == 0 {
        return format!(
            "no request completed in the smoke run{}",
            main_errors(r)
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        );
    }
    format!(
        "{} of {} requests failed ({:.2}%, more than the {}% allowed){}",
        thousands(smoke.errors),
        thousands(smoke.requests),
        smoke.error_rate * 100.0,
        smoke.max_error_rate * 100.0,
        main_errors(r).map(|e| format!(": {e}")).unwrap_or_default()
    )
}

pub(super) fn every_request_failed(r: &RunRecord) -> String {
    let what = if r.summary.requests == 0 {
        "no request completed".to_string()
    } else {
        format!("every request failed ({})", thousands(r.summary.requests))
    };
    match main_errors(r) {
        Some(e) => format!("{what}: {e}"),
        None => what,
    }
}

/// The commonest failures, e.g. "http_5xx 1,234, connection_reset 2".
pub(super) fn main_errors(r: &RunRecord) -> Option<String> {
    let mut kinds: Vec<(&'static str, &u64)> = r
        .summary
        .errors_by_kind
        .iter()
        .map(|(k, n)| (k.name(), n))
        .collect();
    kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut parts: Vec<String> = kinds
        .iter()
        .take(3)
        .map(|(k, n)| format!("{k} {}", thousands(**n)))
        .collect();
    let statuses: Vec<String> = r
        .summary
        .status
        .iter()
        .filter(|(code, _)| code.starts_with('4') || code.starts_with('5'))
        .map(|(code, n)| format!("HTTP {code} × {}", thousands(*n)))
        .collect();
    parts.extend(statuses);
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// "; last output: …" from a log, or nothing.
pub(super) fn last_output(log: &Path) -> String {
    let t = tail(log, 3);
    if t.is_empty() {
        String::new()
    } else {
        format!("; last output: {t}")
    }
}

pub(super) fn relative(path: &Path, base: &Path) -> PathBuf {
    path.strip_prefix(base).unwrap_or(path).to_path_buf()
}

/// How a smoke run `r` (its record at `record`, relative to the suite folder) fared against
/// the gate `smoke`: it passes with requests and an error rate below the limit.
pub(super) fn smoke_outcome(smoke: &super::Smoke, r: &RunRecord, record: PathBuf) -> SmokeOutcome {
    let s = &r.summary;
    let error_rate = s.error_rate().unwrap_or(0.0);
    SmokeOutcome {
        requests: s.requests,
        errors: s.errors,
        error_rate,
        max_error_rate: smoke.max_error_rate,
        passed: s.requests > 0 && error_rate <= smoke.max_error_rate,
        record,
    }
}
