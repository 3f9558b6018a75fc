//! `volley compare A B [C …]`: one column per variant, the change against the first, and a
//! verdict per metric on whether it is more than noise.

use std::path::PathBuf;

use volley::analysis::compare::{CompareOptions, compare};
use volley::analysis::variant::read_variants;

use super::command_args::CompareArgs;

/// Compares the runs; returns the exit code.
pub fn run(a: CompareArgs) -> anyhow::Result<u8> {
    let format = a.format;
    let options = CompareOptions::of_command(a.threshold)?;
    let paths: Vec<PathBuf> = a.baseline.iter().chain(&a.runs).cloned().collect();
    let variants = read_variants(&paths, &a.labels)?;
    if variants.len() == 1 && variants[0].runs.len() == 1 {
        return Err(volley::Error::invalid(
            "runs",
            "one run alone has nothing to be compared with; give two runs or more, or a folder \
             of repeats",
        )
        .into());
    }
    if !a.fail_on.is_empty() && variants.len() < 2 {
        let v = &variants[0];
        return Err(volley::Error::invalid(
            "--fail-on",
            format!(
                "nothing to compare: one variant (`{}`, {} runs); the gate judges the variants \
                 after the baseline against it, so give the baseline and at least one more \
                 (`--baseline DIR NEW`)",
                v.label,
                v.runs.len()
            ),
        )
        .into());
    }
    let c = compare(&variants, options);
    let gate = (!a.fail_on.is_empty())
        .then(|| {
            let run = variants[0].parts_run();
            volley::analysis::gate::judge(&c, &a.fail_on, run, a.fail_on_inconclusive)
        })
        .transpose()?;
    let first = gate.as_ref().map(|g| (g.line(false), g.line(true)));
    let first = first.as_ref().map(|(t, m)| (t.as_str(), m.as_str()));
    let text = volley::report::render_comparison(&variants, &c, format, first)?;
    super::emit(&text, a.output.as_deref())?;
    match gate {
        Some(g) if g.fail => {
            if a.output.is_some() || format.is_page() {
                eprintln!("volley: {}", g.line(false));
            }
            Ok(super::EXIT_GATE)
        }
        _ => Ok(super::EXIT_OK),
    }
}
