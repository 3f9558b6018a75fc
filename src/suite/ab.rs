//! `volley ab`: two plans (A, the baseline, and B) run by turns until the comparison is decided
//! ([`super::until_decided`]), each side's runs a folder of repeats, then the comparison of the
//! two folders as `volley compare` makes it, with what the sequence decided.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::until_decided::{Side, until_decided};
use crate::analysis::compare::{CompareOptions, compare};
use crate::analysis::gate::{METRICS, Part, metric_named};
use crate::analysis::metric::Metric;
use crate::analysis::sequential::{Design, Figure, Sequence, Stopped};
use crate::analysis::variant::read_variants;
use crate::error::Error;
use crate::plan::Plan;
use crate::plan::flags::GivenFlag;
use crate::record::model::RunRecord;
use crate::report::sequential::{self, TABLE_NOTE};
use crate::report::{Format, new_folder, render_comparison};
use crate::run::Outputs;
use crate::run::output::{Kept, ResultsFolder};

/// What a sequence of A/B runs did: the sequence, each side's folder of runs, and the folder
/// its outputs go to.
#[derive(Debug)]
pub struct AbOutcome {
    /// What was decided, after how many pairs, and why it stopped.
    pub sequence: Sequence,
    /// A's folder of runs, then B's; `None` for a side with no finished run (its first was
    /// interrupted: there is then no comparison, only what the sequence did).
    pub folders: [Option<PathBuf>; 2],
    /// `<out>/ab-<UTC time>/`, holding `sequence.txt`, `comparison.md` and `comparison.html`,
    /// and the runs (`a/`, `b/`) unless they were replayed from folders already made.
    pub top: Option<PathBuf>,
    /// Whether the runs were replayed from folders already made (none was run here).
    pub replayed: bool,
}

impl AbOutcome {
    /// Where its outputs were written, in words for the terminal.
    pub fn written(&self) -> Option<String> {
        let top = self.top.as_ref()?;
        let shown = top.display();
        let files = match self.compared() {
            true => "sequence.txt, comparison.md and comparison.html",
            false => "sequence.txt",
        };
        // Runs made here (not replayed) are kept beside them, finished or not.
        let runs = ["a", "b"].iter().any(|side| top.join(side).is_dir());
        Some(format!(
            "{}{files}: {shown}",
            if runs { "runs, " } else { "" }
        ))
    }

    /// Whether both sides have a finished run, and so a comparison.
    pub fn compared(&self) -> bool {
        self.folders.iter().all(Option::is_some)
    }

    /// Whether a run was interrupted here (the exit code is then 130); a replayed run that
    /// was interrupted when it was made stops a replay too, but no signal came now.
    pub fn interrupted(&self) -> bool {
        self.sequence.stopped == Some(Stopped::Interrupted) && !self.replayed
    }
}

/// Whether `threshold_pct` can be a practical threshold: a finite percentage above 0.
pub fn threshold_ok(threshold_pct: f64) -> bool {
    threshold_pct.is_finite() && threshold_pct > 0.0
}

/// The design of `--metric` names (default: throughput in the closed model, p50 in the
/// open), `threshold_pct` and `max_runs` per side.
pub fn design(
    names: &[String],
    threshold_pct: f64,
    max_runs: u32,
    open: bool,
) -> Result<Design, Error> {
    let invalid = |why: String| Error::Invalid {
        what: "--metric".into(),
        why,
    };
    let mut metrics = Vec::new();
    for n in names {
        let (name, part) = Part::split(n.trim()).map_err(|why| invalid(format!("`{n}`: {why}")))?;
        let Some(metric) = metric_named(&name.to_ascii_lowercase()).filter(|m| m.judged()) else {
            let one_of = METRICS.replace(", max", "");
            return Err(invalid(format!("`{n}` is not one of {one_of}")));
        };
        if part.is_some() && !Metric::OF_GROUPS.contains(&metric) {
            return Err(invalid(format!(
                "`{n}`: {name} is not measured per scenario, step or phase; one of p50, p90, \
                 p95, p99, mean, throughput, errors"
            )));
        }
        let figure = Figure { metric, part };
        if !metrics.contains(&figure) {
            metrics.push(figure);
        }
    }
    if metrics.is_empty() {
        metrics.push(Figure::of_runs(if open {
            Metric::P50
        } else {
            Metric::Throughput
        }));
    }
    if !threshold_ok(threshold_pct) {
        return Err(Error::Invalid {
            what: "--threshold".into(),
            why: "must be a percentage > 0, e.g. 2".into(),
        });
    }
    Ok(Design {
        metrics,
        max_pairs: max_runs,
        threshold_pct,
        comparisons: 1,
    })
}

/// Refuses a part (`p50{step=pay}`) that `plan` has no group for: its figure would stay
/// undecided to the budget. Names the parts it has.
fn has_parts(plan: &Plan, figures: &[Figure]) -> Result<(), Error> {
    plan.has_parts("--metric", figures.iter().filter_map(|f| f.part.as_ref()))
}

/// Refuses a stream metric that `plan` cannot measure (it would run to `--max-runs` without a
/// value to decide on), and a part it has no group for.
pub fn measures(plan: &Plan, figures: &[Figure]) -> Result<(), Error> {
    has_parts(plan, figures)?;
    let metrics: Vec<Metric> = figures.iter().map(|f| f.metric).collect();
    let streams = || {
        plan.scenarios
            .iter()
            .flat_map(|sc| &sc.steps)
            .filter_map(|s| s.stream.as_ref())
    };
    for &m in metrics.iter().filter(|m| m.of_streams()) {
        let can = match m {
            Metric::TpotP50 => streams().any(|s| s.spec.is_llm()),
            Metric::RttP50 => streams().any(|s| s.spec.round_trips()),
            Metric::Goodput => streams().any(|s| s.objectives().is_some()),
            _ => streams().next().is_some(),
        };
        if !can {
            let needs = match m {
                Metric::TpotP50 => "an LLM streaming step (sse = { llm = \"openai\" })",
                Metric::RttP50 => "a bidirectional stream (a gRPC bidi method)",
                Metric::Goodput => "a streaming step with objectives (slo = { … })",
                _ => "a streaming step (sse = { … } or a streaming gRPC method)",
            };
            return Err(Error::Invalid {
                what: "--metric".into(),
                why: format!("{} needs {needs}, and the test has none", m.label()),
            });
        }
    }
    Ok(())
}

/// Runs `plans` (A, B) by turns under `design`, each run by `execute` into its side's folder
/// of repeats under `<out>/ab-<UTC time>/`; `say` hears a line per run and per pair.
pub fn run<E: From<Error>>(
    plans: &[Plan; 2],
    design: Design,
    (out, max_time): (&Path, Option<Duration>),
    mut execute: impl FnMut(&Plan, &mut Outputs) -> Result<RunRecord, E>,
    say: impl Fn(&str),
) -> Result<AbOutcome, E> {
    for plan in plans {
        measures(plan, &design.metrics)?;
    }
    fits_a_pair(plans, max_time)?;
    let top = new_folder(out, &format!("ab-{}", stamp()))?;
    let mut outputs =
        ["a", "b"].map(|side| Outputs::none().with(ResultsFolder::repeats(&top.join(side), side)));
    let mut folders: [Option<PathBuf>; 2] = [None, None];
    let sequence = until_decided(
        design,
        max_time,
        |side: Side, pair| -> Result<_, E> {
            let i = side as usize;
            let record = execute(&plans[i], &mut outputs[i])?;
            let finished = record.interrupted.is_none();
            for kept in outputs[i].finish(&record).kept {
                if let (Kept::Folder(dir), true) = (kept, finished) {
                    folders[i] = dir.parent().map(Path::to_path_buf);
                }
            }
            let line = crate::report::repeats::run_line(&record);
            say(&format!("{pair} {}: {line}", ["A", "B"][i]));
            Ok(Some(record))
        },
        |seq| say(&sequential::line(seq)),
    )?;
    for o in outputs {
        o.close();
    }
    Ok(AbOutcome {
        sequence,
        folders,
        top: Some(top),
        replayed: false,
    })
}

/// Refuses a `max_time` shorter than one pair of runs (A's length and B's, from their
/// scenarios' ends): the first pair would overrun it, and one pair decides nothing.
fn fits_a_pair(plans: &[Plan; 2], max_time: Option<Duration>) -> Result<(), Error> {
    let length = |p: &Plan| {
        let ends: Option<Vec<Duration>> = p
            .scenarios
            .iter()
            // A scenario that ends by a count has only a cap (`max_duration`): no length.
            .map(|s| (!s.profile.ends_by_count()).then_some(s.start_after + s.duration()?))
            .collect();
        ends?.into_iter().max()
    };
    let (Some(max), Some(a), Some(b)) = (max_time, length(&plans[0]), length(&plans[1])) else {
        return Ok(());
    };
    if a + b <= max {
        return Ok(());
    }
    let s = |d: Duration| crate::units::seconds(d.as_secs_f64());
    Err(Error::Invalid {
        what: "--max-time".into(),
        why: format!(
            "{} is shorter than one pair of runs (A {} + B {}): give at least {}, or shorter runs",
            s(max),
            s(a),
            s(b),
            s(a + b)
        ),
    })
}

/// What `volley ab`'s two sides are: two folders of runs to replay, or two tests to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sides {
    /// Both are folders of runs: the sequence replays them ([`replay`]).
    Folders,
    /// Both are tests against URLs, quick mode's flags shaping them.
    Tests,
    /// Both are the `--plan` file with overrides (`KEY=VALUE[,KEY=VALUE]`): the plan is the
    /// test, and of quick mode's flags only [`PLAN_FLAGS`] act on it.
    Plan,
}

impl Sides {
    /// Whether the sequence replays folders of runs rather than running tests.
    pub fn replays(self) -> bool {
        self == Self::Folders
    }
}

/// Which kind `sides` are, or why they cannot be read as either: one a folder and one not; a
/// URL where `plan` (the `--plan` file, when given) wants overrides; an override without a
/// plan; a plan that cannot be read — each said before anything runs.
pub fn sides(sides: &[String; 2], plan: Option<&Path>) -> Result<Sides, Error> {
    let invalid = |why: String| Error::Invalid {
        what: "volley ab".into(),
        why,
    };
    match sides.each_ref().map(|s| Path::new(s).is_dir()) {
        [true, true] => return Ok(Sides::Folders),
        [true, false] | [false, true] => {
            return Err(invalid(format!(
                "`{}` and `{}`: give two folders of runs (to replay them) or two tests, not one \
                 of each",
                sides[0], sides[1]
            )));
        }
        [false, false] => {}
    }
    let url = sides.iter().find(|s| !is_override(s) && s.contains("://"));
    let set = sides.iter().find(|s| is_override(s));
    match (plan, url, set) {
        (Some(plan), _, _) if !plan.is_file() => Err(Error::File {
            action: crate::error::FileAction::ReadPlan,
            path: plan.to_path_buf(),
            cause: std::io::Error::new(std::io::ErrorKind::NotFound, "no such plan file"),
        }),
        (Some(_), Some(url), _) => Err(invalid(format!(
            "`{url}`: with --plan, A and B are the plan's overrides (KEY=VALUE[,KEY=VALUE], e.g. \
             vars.ms=3), not URLs"
        ))),
        (None, _, Some(set)) => Err(invalid(format!(
            "`{set}` is an override (KEY=VALUE): give the plan it overrides with --plan FILE"
        ))),
        (Some(_), None, _) => Ok(Sides::Plan),
        (None, _, None) => Ok(Sides::Tests),
    }
}

/// Quick-mode flags `volley ab` refuses, hidden from its help: the sequence decides its runs
/// (`--max-runs` bounds them) and keeps every run's record itself.
pub const REFUSED_FLAGS: [&str; 15] = [
    "--repeat",
    "--repeat-until",
    "--segment",
    "--join",
    "--join-wait",
    "--token",
    "--json",
    "--metrics-listen",
    "--metrics-linger",
    "--prometheus-rw",
    "--otlp",
    "--watch",
    "--watch-metric",
    "--watch-interval",
    "--watch-max-series",
];

/// A flag of `volley ab`: hidden from its help (and flags.md) when ab refuses it; A named.
pub fn ab_arg(arg: clap::Arg) -> clap::Arg {
    let long = arg.get_long().map(|l| format!("--{l}"));
    if arg.get_id() == "url" {
        return arg.value_name("A").help(
            "A: a URL (B the same test against another), or with --plan the plan's overrides, \
             KEY=VALUE[,KEY=VALUE…]; two folders of runs already made are replayed in order",
        );
    }
    let refused = long.is_some_and(|l| REFUSED_FLAGS.contains(&l.as_str()));
    if refused { arg.hide(true) } else { arg }
}

/// The flags a replay of two folders of runs reads; every other flag is the test's, which a
/// replay does not run.
const REPLAY_FLAGS: [&str; 6] = [
    "--metric",
    "--threshold",
    "--max-runs",
    "--out",
    "--quiet",
    "--color",
];

/// The flags besides [`REPLAY_FLAGS`] that act on a test of the `--plan` file: the plan sets
/// the load, the target and the requests, so quick mode's flags for those have nothing to act
/// on (they were silently ignored).
const PLAN_FLAGS: [&str; 9] = [
    "--plan",
    "--max-time",
    "--threads",
    "--expect-status",
    "--group-by",
    "--buckets",
    "--precision",
    "--send-grid",
    "--no-tui",
];

/// Refuses the first of `given` (the flags on the command line, named in both forms where there
/// are two: `-c/--connections`) that `volley ab` takes no part in: one of [`REFUSED_FLAGS`];
/// when `sides` replay folders of runs, a flag of the test (its runs are already made) or
/// `--max-time` (a replay takes no time); when they are the `--plan` file's overrides, a flag
/// not in [`PLAN_FLAGS`] (the plan is the test).
pub fn refuse_flags(given: &[GivenFlag], sides: Sides) -> Result<(), Error> {
    let invalid = |flag: &GivenFlag, why: &str| {
        Err(Error::Invalid {
            what: flag.to_string(),
            why: why.into(),
        })
    };
    if let Some(flag) = given
        .iter()
        .find(|f| REFUSED_FLAGS.contains(&f.long.as_str()))
    {
        return invalid(
            flag,
            "not with `volley ab`: the sequence decides its runs (--max-runs bounds them), and \
             keeps every run's record under --out (ab-<time>/a, b)",
        );
    }
    let (also, why): (&[&str], &str) = match sides {
        Sides::Tests => return Ok(()),
        Sides::Folders => (
            &[],
            "A and B are folders of runs already made, replayed as they are: a flag of the \
             test (or --plan, --max-time) has nothing to act on; give two URLs to run the test",
        ),
        Sides::Plan => (
            &PLAN_FLAGS,
            "with --plan, the plan is the test (its load, target and requests): this flag has \
             nothing to act on; change the plan, or put the change in A's and B's overrides \
             (KEY=VALUE)",
        ),
    };
    let read = |f: &&GivenFlag| {
        let long = f.long.as_str();
        REPLAY_FLAGS.contains(&long) || also.contains(&long)
    };
    match given.iter().find(|f| !read(f)) {
        Some(flag) => invalid(flag, why),
        None => Ok(()),
    }
}

/// Whether side `s` is an override (`KEY=VALUE[,…]`): an `=` before any `://`, so that
/// `target.base_url=http://new:8080` is one and `http://host/?a=1` is a URL.
fn is_override(s: &str) -> bool {
    s.find('=')
        .is_some_and(|eq| s.find("://").is_none_or(|url| eq < url))
}

/// Replays two folders of runs already made (`dirs`: A's, B's), pair by pair in their order,
/// under the design `design_of` gives for their model (open or not); its outputs go to
/// `<out>/ab-<UTC time>/`.
pub fn replay(
    dirs: &[PathBuf; 2],
    design_of: impl FnOnce(bool) -> Result<Design, Error>,
    out: &Path,
) -> Result<AbOutcome, Error> {
    let same = |d: &PathBuf| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone());
    if same(&dirs[0]) == same(&dirs[1]) {
        return Err(Error::Invalid {
            what: "volley ab".into(),
            why: format!(
                "A and B are the same folder ({}): a folder against itself decides nothing",
                dirs[0].display()
            ),
        });
    }
    let variants = read_variants(dirs, &[])?;
    let open = variants[0].runs.iter().any(|r| r.config.model.has_open());
    let mut runs: Vec<_> = variants.iter().map(|v| v.runs.iter()).collect();
    let next = |side: Side, _| -> Result<_, Error> { Ok(runs[side as usize].next().cloned()) };
    let sequence = until_decided(design_of(open)?, None, next, |_| {})?;
    Ok(AbOutcome {
        sequence,
        folders: dirs.clone().map(Some),
        top: Some(new_folder(out, &format!("ab-{}", stamp()))?),
        replayed: true,
    })
}

/// What the sequence decided, then the comparison of its runs (text); both are also written
/// to the outcome's folder (`sequence.txt`, `comparison.md`, `comparison.html`). Without a
/// finished run of each side (interrupted at once), what the sequence did, and that there is
/// no comparison.
pub fn comparison(o: &AbOutcome, threshold_pct: f64) -> Result<String, Error> {
    let words = sequential::text(&o.sequence);
    let [Some(a), Some(b)] = &o.folders else {
        // Interrupted before a run of each side finished.
        if let Some(top) = &o.top {
            write(&top.join("sequence.txt"), &words)?;
        }
        return Ok(format!(
            "{words}No comparison: no run of both A and B finished."
        ));
    };
    let labels = ["A".to_string(), "B".to_string()];
    let mut variants = read_variants(&[a.clone(), b.clone()], &labels)?;
    // The runs the sequence decided on, no more: a replayed folder may hold later runs, and a
    // side may have one run past the last pair.
    for v in &mut variants {
        v.runs.truncate((o.sequence.pairs as usize).max(1));
    }
    // As `volley compare` makes it: the plans' scenarios, steps and phases judged too.
    let mut c = compare(&variants, CompareOptions::of_command(threshold_pct)?);
    // A and B differ on purpose, most often in the target's URL: that is no like-for-like
    // problem here (a suite's comparison leaves it out too); every other difference is.
    c.mismatches = crate::analysis::like_for_like::mismatches_except(
        &variants,
        &[crate::analysis::like_for_like::TARGET_URL],
    );
    let table = render_comparison(&variants, &c, Format::Text, None)?;
    if let Some(top) = &o.top {
        let md = render_comparison(&variants, &c, Format::Markdown, None)?;
        write(
            &top.join("comparison.md"),
            &format!("{words}{TABLE_NOTE}\n\n{md}"),
        )?;
        // The page's lead is one line: what was decided, each line of the words in turn.
        let lead = words.lines().map(str::trim).filter(|l| !l.is_empty());
        let lead = format!("{} {TABLE_NOTE}", lead.collect::<Vec<_>>().join(" · "));
        let html = render_comparison(&variants, &c, Format::Html, Some((&lead, "")))?;
        write(&top.join("comparison.html"), &html)?;
        write(&top.join("sequence.txt"), &words)?;
    }
    Ok(format!("{words}{TABLE_NOTE}\n\n{table}"))
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|cause| Error::File {
        action: crate::error::FileAction::Write,
        path: path.to_path_buf(),
        cause,
    })
}

/// The UTC time now, `20260102T030405Z`.
fn stamp() -> String {
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    now.chars().filter(char::is_ascii_alphanumeric).collect()
}
