//! `volley compare A B [C …]`: one column per variant, the change against the first, and a
//! verdict per metric on whether it is more than noise.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use volley::analysis::compare::{CompareOptions, Variant, compare};
use volley::record::set::read_runs;
use volley::report::{Format, comparison, html};

use super::command_args::CompareArgs;

/// Compares the runs; returns the exit code.
pub fn run(a: CompareArgs) -> anyhow::Result<u8> {
    let format = Format::from(a.format);
    if !(a.threshold.is_finite() && a.threshold >= 0.0) {
        return Err(invalid("--threshold", "must be a percentage ≥ 0, e.g. 2").into());
    }
    let paths: Vec<PathBuf> = a.baseline.iter().chain(&a.runs).cloned().collect();
    let variants = read_variants(&paths, &a.labels)?;
    if variants.len() == 1 && variants[0].runs.len() == 1 {
        return Err(invalid(
            "runs",
            "one run alone has nothing to be compared with; give two runs or more, or a folder \
             of repeats",
        )
        .into());
    }
    if !a.fail_on.is_empty() && variants.len() < 2 {
        let v = &variants[0];
        return Err(invalid(
            "--fail-on",
            &format!(
                "nothing to compare: one variant (`{}`, {} runs); the gate judges the variants \
                 after the baseline against it, so give the baseline and at least one more \
                 (`--baseline DIR NEW`)",
                v.label,
                v.runs.len()
            ),
        )
        .into());
    }
    let c = compare(
        &variants,
        CompareOptions {
            threshold_pct: a.threshold,
        },
    );
    let gate = (!a.fail_on.is_empty())
        .then(|| volley::analysis::gate::judge(&c, &a.fail_on, a.fail_on_inconclusive));
    let first = |markdown: bool| {
        gate.as_ref()
            .map(|g| format!("{}\n\n", g.line(markdown)))
            .unwrap_or_default()
    };
    let text = match format {
        Format::Markdown => first(true) + &comparison::markdown(&variants, &c),
        Format::Html => html::render_compare(&variants, &c)?,
        Format::Text => first(false) + &comparison::text(&variants, &c),
    };
    super::emit(&text, a.output.as_deref())?;
    match gate {
        Some(g) if g.fail => {
            if a.output.is_some() || format == Format::Html {
                eprintln!("volley: {}", g.line(false));
            }
            Ok(super::EXIT_GATE)
        }
        _ => Ok(super::EXIT_OK),
    }
}

fn invalid(what: &str, why: &str) -> volley::Error {
    volley::Error::Invalid {
        what: what.into(),
        why: why.into(),
    }
}

/// Reads each path as one variant and names them.
fn read_variants(paths: &[PathBuf], labels: &[String]) -> anyhow::Result<Vec<Variant>> {
    if !labels.is_empty() && labels.len() != paths.len() {
        return Err(invalid(
            "--labels",
            &format!(
                "{} labels for {} runs; give one per run, in order",
                labels.len(),
                paths.len()
            ),
        )
        .into());
    }
    let mut variants = Vec::new();
    for path in paths {
        let runs = read_runs(path)?.into_iter().map(|(_, r)| r).collect();
        variants.push(Variant {
            label: String::new(),
            source: path.clone(),
            runs,
        });
    }
    let names = if labels.is_empty() {
        default_labels(&variants)
    } else {
        labels.to_vec()
    };
    for (v, name) in variants.iter_mut().zip(names) {
        v.label = name;
    }
    Ok(variants)
}

/// The run names when they tell the variants apart, else the folder names, else A, B, C….
fn default_labels(variants: &[Variant]) -> Vec<String> {
    let distinct = |names: &[String]| {
        names.iter().all(|n| !n.is_empty())
            && names.iter().collect::<HashSet<_>>().len() == names.len()
    };
    let by_name: Vec<String> = variants
        .iter()
        .map(|v| v.runs.first().map(|r| r.name.clone()).unwrap_or_default())
        .collect();
    if distinct(&by_name) {
        return by_name;
    }
    let by_folder: Vec<String> = variants.iter().map(|v| folder_name(&v.source)).collect();
    if distinct(&by_folder) {
        return by_folder;
    }
    (0..variants.len())
        .map(|i| {
            let letter = (b'A' + (i % 26) as u8) as char;
            if i < 26 {
                letter.to_string()
            } else {
                format!("{letter}{}", i / 26)
            }
        })
        .collect()
}

/// The results folder a path names: the folder itself, or the folder of a `run.json`.
fn folder_name(p: &Path) -> String {
    let folder = if p.is_dir() { Some(p) } else { p.parent() };
    folder
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
