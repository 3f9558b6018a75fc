//! `volley report RUN.json --format md|html|txt [-o PATH]`: any report, from the record alone
//! (a suite's, from its `suite.json` and its targets' records).

use volley::record::set::read_runs;
use volley::report;

use super::command_args::ReportArgs;

/// Renders the report; returns the exit code.
pub fn run(a: ReportArgs) -> anyhow::Result<u8> {
    let format = a.format;
    if let Some(file) = volley::record::suite::suite_file(&a.record) {
        let suite = volley::record::suite::SuiteOutcome::read(&file)?;
        super::emit(&report::render_suite(&suite, format)?, a.output.as_deref())?;
        return Ok(super::EXIT_OK);
    }
    let mut runs = read_runs(&a.record)?;
    if runs.len() != 1 {
        return Err(volley::Error::Invalid {
            what: "record".into(),
            why: format!(
                "{} holds {} runs; give one run.json, or use `volley compare {}` for repeats",
                a.record.display(),
                runs.len(),
                a.record.display()
            ),
        }
        .into());
    }
    let (_, mut record) = runs.remove(0);
    if let Some(b) = a.buckets {
        let ms: Vec<f64> = b.0.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
        volley::record::figures::rebucket(&mut record, &ms)?;
    }
    super::emit(&report::render(&record, format)?, a.output.as_deref())?;
    Ok(super::EXIT_OK)
}
