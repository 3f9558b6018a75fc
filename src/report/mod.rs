//! Reports: everything people read, rendered from a [`RunRecord`] alone so
//! any report can be regenerated from `run.json`.
//!
//! - [`text`]: the terminal summary (`summary.txt`);
//! - [`markdown`]: `report.md`, for pull requests and wikis;
//! - [`html`]: `report.html`, one self-contained page with [`charts`] drawn in Rust as inline SVG;
//! - [`comparison`]: `volley compare` as text, Markdown or HTML; [`suite`]: `volley suite`'s
//!   report (its targets, then their comparison);
//! - [`view`] and [`table`]: the content shared by every format; `verdict`: a run's first
//!   line, from the one status the exit code reads too; [`figures`]: shares and values in words;
//!   [`load`]: the load a run asked for, in words; [`protocol`]: how it spoke to the target;
//!   [`find_max`]: a search's result and steps;
//! - [`write_results`]: the results folder every run leaves behind; [`repeats`]: the top of a
//!   folder of repeated runs.

pub mod accounting;
pub mod charts;
pub mod comparison;
pub mod figures;
pub mod find_max;
pub mod grouped;
pub mod html;
pub mod load;
pub mod markdown;
pub mod progress;
pub mod protocol;
pub mod repeats;
pub mod selfcheck;
pub mod sequential;
pub mod shares;
pub mod streams;
pub mod suite;
pub mod suite_tables;
pub mod table;
pub mod text;
pub mod uncertainty;
pub mod view;
pub mod watch;

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::record::{RunRecord, write_atomically, write_record};

/// A report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Markdown (`report.md`).
    Markdown,
    /// Self-contained HTML with charts (`report.html`).
    Html,
    /// The terminal summary (`summary.txt`).
    Text,
}

impl Format {
    /// Every format, in the order a results folder is written: each is one file of every
    /// results folder (a run's, a folder of repeats', a suite's). A new format is a variant
    /// here, its file name and its renderers.
    pub const ALL: [Format; 3] = [Format::Text, Format::Markdown, Format::Html];

    /// Its file in a results folder.
    pub fn file_name(self) -> &'static str {
        match self {
            Self::Text => "summary.txt",
            Self::Markdown => "report.md",
            Self::Html => "report.html",
        }
    }

    /// Whether the command line names its file after a run (the reports to open; the summary
    /// was just printed).
    pub fn named_after_a_run(self) -> bool {
        self != Self::Text
    }

    /// Its name in `--format`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Text => "txt",
            Self::Markdown => "md",
            Self::Html => "html",
        }
    }

    /// `--format` of `report` and `compare`: a format by its [`name`](Self::name).
    pub fn parser() -> impl clap::builder::TypedValueParser<Value = Format> {
        use clap::builder::{PossibleValuesParser, TypedValueParser};
        PossibleValuesParser::new(Self::ALL.map(Self::name))
            .map(|name| name.parse().expect("a listed name"))
    }

    /// Whether it is a page for a browser, not text a terminal shows (a CI gate's verdict is
    /// then also said on stderr).
    pub fn is_page(self) -> bool {
        self == Self::Html
    }
}

impl std::str::FromStr for Format {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "md" | "markdown" => Ok(Self::Markdown),
            "html" => Ok(Self::Html),
            "txt" | "text" => Ok(Self::Text),
            other => Err(Error::Invalid {
                what: "format".into(),
                why: format!("`{other}`: expected md, html or txt"),
            }),
        }
    }
}

/// Renders a run's report in `format`.
pub fn render(r: &RunRecord, format: Format) -> Result<String, Error> {
    match format {
        Format::Markdown => Ok(markdown::render(r)),
        Format::Html => html::render_run(r),
        Format::Text => Ok(text::render(r)),
    }
}

/// Renders a comparison of `variants` (`volley compare`, a series of repeats' spread) in
/// `format`, after `first` (a CI gate's or an A/B sequence's verdict: `.0` in text and as the
/// HTML page's lead, `.1` in Markdown).
pub fn render_comparison(
    variants: &[crate::analysis::compare::Variant],
    c: &crate::analysis::compare::Comparison,
    format: Format,
    first: Option<(&str, &str)>,
) -> Result<String, Error> {
    let lead = |line: Option<&str>| line.map(|l| format!("{l}\n\n")).unwrap_or_default();
    Ok(match format {
        Format::Markdown => lead(first.map(|f| f.1)) + &comparison::markdown(variants, c),
        Format::Html => html::render_compare(variants, c, first.map(|f| f.0))?,
        Format::Text => lead(first.map(|f| f.0)) + &comparison::text(variants, c),
    })
}

/// Renders a suite's report in `format`.
pub fn render_suite(
    o: &crate::record::suite::SuiteOutcome,
    format: Format,
) -> Result<String, Error> {
    Ok(match format {
        Format::Text => suite::text(o),
        Format::Markdown => suite::markdown(o),
        Format::Html => suite::html(o)?,
    })
}

/// The files of a results folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultFiles {
    /// The folder.
    pub dir: PathBuf,
    /// `run.json`: the record.
    pub record: PathBuf,
    /// `summary.txt`: the terminal summary.
    pub summary: PathBuf,
    /// `report.md`.
    pub markdown: PathBuf,
    /// `report.html`.
    pub html: PathBuf,
}

/// `<name>-<UTC start time>`, e.g. `quick-20260102T030405Z`, from the record alone.
pub fn folder_name(r: &RunRecord) -> String {
    stamped_name(&r.name, &r.started_at)
}

/// `<name>-<UTC time>` from a name and an RFC 3339 UTC time, with every character of the name
/// that is not a letter, digit, `-` or `_` replaced by `_`.
pub fn stamped_name(name: &str, rfc3339: &str) -> String {
    let stamp: String = rfc3339
        .split(['.', 'Z'])
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{name}-{stamp}Z")
}

/// Creates a new folder `<parent>/<name>-<UTC start time>/` (with `-2`, `-3` … appended when
/// one of that name exists) and writes the run's files into it. Returns the paths written.
pub fn write_results(parent: &Path, r: &RunRecord) -> Result<ResultFiles, Error> {
    let dir = new_folder(parent, &folder_name(r))?;
    write_results_into(&dir, r)
}

/// Creates `<parent>/<base>` or, when it exists, `<parent>/<base>-2`, `-3`, …
pub fn new_folder(parent: &Path, base: &str) -> Result<PathBuf, Error> {
    let fail = |path: &Path, cause| Error::File {
        action: crate::error::FileAction::Create,
        path: path.to_path_buf(),
        cause,
    };
    std::fs::create_dir_all(parent).map_err(|e| fail(parent, e))?;
    for i in 1.. {
        let dir = if i == 1 {
            parent.join(base)
        } else {
            parent.join(format!("{base}-{i}"))
        };
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(fail(&dir, e)),
        }
    }
    unreachable!("an unbounded range always yields a free name")
}

/// Writes `run.json`, `summary.txt`, `report.md` and `report.html` into `dir` (created if
/// needed). The record is written first, so a failure in a report never loses the measurement.
pub fn write_results_into(dir: &Path, r: &RunRecord) -> Result<ResultFiles, Error> {
    let files = ResultFiles {
        dir: dir.to_path_buf(),
        record: dir.join("run.json"),
        summary: dir.join(Format::Text.file_name()),
        markdown: dir.join(Format::Markdown.file_name()),
        html: dir.join(Format::Html.file_name()),
    };
    write_record(&files.record, r)?;
    for format in Format::ALL {
        write_atomically(&dir.join(format.file_name()), render(r, format)?.as_bytes())?;
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;

    #[test]
    fn results_folder_holds_every_file_and_never_overwrites() {
        let parent =
            std::env::temp_dir().join(format!("volley-results-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        let mut r = record("my run/1", 3, 100, 2000, 0, 0.0);
        r.started_at = "2026-01-02T03:04:05.678Z".into();
        assert_eq!(folder_name(&r), "my_run_1-20260102T030405Z");
        let first = write_results(&parent, &r).unwrap();
        let second = write_results(&parent, &r).unwrap();
        assert_eq!(first.dir, parent.join("my_run_1-20260102T030405Z"));
        assert_eq!(second.dir, parent.join("my_run_1-20260102T030405Z-2"));
        for f in [&first.record, &first.summary, &first.markdown, &first.html] {
            assert!(std::fs::metadata(f).unwrap().len() > 100, "{}", f.display());
        }
        let back = crate::record::read_record(&first.record).unwrap();
        assert_eq!(markdown::render(&back), markdown::render(&r));
        std::fs::remove_dir_all(parent).unwrap();
    }

    #[test]
    fn formats_parse() {
        assert_eq!("md".parse::<Format>().unwrap(), Format::Markdown);
        assert_eq!("html".parse::<Format>().unwrap(), Format::Html);
        assert_eq!("txt".parse::<Format>().unwrap(), Format::Text);
        assert!(
            "pdf"
                .parse::<Format>()
                .unwrap_err()
                .to_string()
                .contains("md, html or txt")
        );
    }
}
