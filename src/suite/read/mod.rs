//! Reading a suite file: parse, validate, and read every target's plan — every error with
//! file:line:col and a hint, before any process is started.

use std::collections::BTreeSet;
use std::fmt::Display;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;

use super::file::{FindMaxFile, SmokeFile, SuiteFile, SuiteTargetFile, WatchFile};
use super::health::HealthCheck;
use super::order::Order;
use super::{CommandLine, Smoke, Suite, SuiteTarget};

mod repeats;
mod targets;
use crate::error::Error;
use crate::findmax::run::{RESOLUTION, Settings, Unsearchable, VALIDATION_STEPS, unsearchable};
use crate::plan::Plan;
use crate::plan::flags::percentage;
use crate::plan::read::{self as plan_read, parse_duration, resolve_target, scale_duration};
use crate::record::model::LoadModel;
use crate::watch::spec::Spec;

/// Default time limit of a health check.
pub const HEALTH_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time limit of a `reset` command.
pub const RESET_TIMEOUT: Duration = Duration::from_secs(60);
/// Default SIGTERM → SIGKILL grace period.
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// Default smoke error-rate limit (1 %).
pub const SMOKE_MAX_ERROR_RATE: f64 = 0.01;
/// Default smoke time scale when the smoke run uses the suite's own plan.
pub const SMOKE_TIME_SCALE: f64 = 0.1;
/// `[find_max]` defaults, as `volley find-max`'s.
const FIND_MAX_BUDGET: Duration = Duration::from_secs(180);
const FIND_MAX_STEP: Duration = Duration::from_secs(5);
const FIND_MAX_WARMUP: Duration = Duration::from_secs(1);
const FIND_MAX_IN_FLIGHT: u32 = 1000;

/// Choices from the command line that change a suite.
#[derive(Debug, Clone)]
pub struct SuiteReadOptions {
    /// `--time-scale`: multiplies every duration of the plans' load profiles, the smoke runs'
    /// included (health-check, reset and stop time limits are not scaled).
    pub time_scale: f64,
    /// `--set KEY=VALUE`, applied to every target's plan (and smoke plan) after the target's
    /// own `vars`: `vars.NAME` (or `NAME`) and `target.timeout`; not `target.base_url`, which is
    /// each target's own.
    pub sets: Vec<(crate::plan::set_key::SetKey, String)>,
    /// `--only NAME`: run only these targets (every name must be a target of the suite); empty:
    /// all of them.
    pub only: Vec<String>,
    /// `--tag KEY=VALUE`: added to every run's tags after the suite's `[tags]` (replacing either's
    /// of the same key).
    pub tags: Vec<(String, String)>,
}

impl Default for SuiteReadOptions {
    fn default() -> Self {
        Self {
            time_scale: 1.0,
            sets: Vec::new(),
            only: Vec::new(),
            tags: Vec::new(),
        }
    }
}

/// Reads and validates the suite at `path`, reading each target's plan.
pub fn read(path: &Path, options: &SuiteReadOptions) -> Result<Suite, Error> {
    let text = std::fs::read_to_string(path).map_err(|cause| Error::File {
        action: crate::error::FileAction::Read,
        path: path.to_path_buf(),
        cause,
    })?;
    read_str(&text, path, options)
}

/// Validates suite `text` (read from `path`, which anchors relative paths).
pub fn read_str(text: &str, path: &Path, options: &SuiteReadOptions) -> Result<Suite, Error> {
    // "suite.toml" has the parent "": the current directory.
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let ctx = Ctx {
        text,
        path,
        dir,
        options,
        searched: false,
    };
    let file: SuiteFile = toml::from_str(text).map_err(|e| {
        let (why, hint) =
            crate::plan::read::hints::toml_error(&e, text, "docs/suites.md lists every key");
        ctx.err(e.span(), why, hint.as_deref())
    })?;
    ctx.suite(file)
}

#[derive(Clone, Copy)]
struct Ctx<'a> {
    text: &'a str,
    path: &'a Path,
    dir: &'a Path,
    options: &'a SuiteReadOptions,
    /// The suite searches (`[find_max]`): the targets' plans' own load is a placeholder the
    /// search replaces, so whether it suits `[precision]` is the search's to check.
    searched: bool,
}

impl Ctx<'_> {
    fn err(&self, span: Option<Range<usize>>, why: impl Display, hint: Option<&str>) -> Error {
        Error::Suite {
            at: crate::location::at(self.path, self.text, span),
            why: why.to_string(),
            hint: hint.map(str::to_string),
        }
    }

    fn at<T>(&self, s: &Spanned<T>, why: impl Display, hint: Option<&str>) -> Error {
        self.err(Some(s.span()), why, hint)
    }

    fn duration(&self, s: Option<&Spanned<String>>, default: Duration) -> Result<Duration, Error> {
        match s {
            None => Ok(default),
            Some(s) => parse_duration(s.get_ref())
                .map_err(|why| self.at(s, why, Some("write durations like 30s, 1m30s or 500ms"))),
        }
    }

    /// A file named in the suite, relative to the suite file; it must exist.
    fn existing_file(&self, s: &Spanned<String>, what: &str) -> Result<PathBuf, Error> {
        let p = self.dir.join(s.get_ref());
        if p.is_file() {
            Ok(p)
        } else {
            Err(self.at(
                s,
                format!("{what} {} not found", p.display()),
                Some("paths are relative to the suite file"),
            ))
        }
    }

    fn suite(&self, f: SuiteFile) -> Result<Suite, Error> {
        let find_max = f.find_max.as_ref().map(|s| self.find_max(s)).transpose()?;
        if f.targets.is_empty() {
            return Err(self.err(
                None,
                "the suite has no [[target]]",
                Some("add a [[target]] with a name and a base_url for each implementation"),
            ));
        }
        let plan_path = f
            .plan
            .as_ref()
            .map(|p| self.existing_file(p, "plan"))
            .transpose()?;
        if plan_path.is_none() {
            if let Some(t) = f.targets.iter().find(|t| t.get_ref().plan.is_none()) {
                return Err(self.at(
                    t,
                    format!(
                        "the suite has no test for target `{}`",
                        t.get_ref().name.get_ref()
                    ),
                    Some(
                        "give the plan every target runs (plan = \"plan.toml\" at the top), or \
                         one per target; with [find_max], the plan is the request shape of the \
                         search",
                    ),
                ));
            }
        }
        let repeats = self.repeats(&f, find_max.is_some())?;
        let order = match &f.order {
            None => Order::default(),
            Some(o) => Order::parse(o.get_ref()).ok_or_else(|| {
                self.at(
                    o,
                    format!("order = \"{}\" is not an order", o.get_ref()),
                    Some("\"interleaved\" (the default: A B A B …) or \"sequential\" (A A B B …)"),
                )
            })?,
        };
        let smoke = f.smoke.as_ref().map(|s| self.smoke(s)).transpose()?;
        self.check_sets()?;
        let selected = self.selected(&f)?;
        let watch = self.watches(&f.watch)?;
        let mut names = BTreeSet::new();
        let mut targets = Vec::new();
        for t in &f.targets {
            if !names.insert(t.get_ref().name.get_ref().clone()) {
                return Err(self.at(
                    &t.get_ref().name,
                    format!("target `{}` is defined twice", t.get_ref().name.get_ref()),
                    Some("target names must be unique"),
                ));
            }
            if selected.contains(t.get_ref().name.get_ref()) {
                let reader = Ctx {
                    searched: find_max.is_some(),
                    ..*self
                };
                let mut target = reader.target(t, plan_path.as_deref(), smoke.as_ref())?;
                target.plan.watch.extend(watch.iter().cloned());
                target.plan.watch.extend(self.watches(&t.get_ref().watch)?);
                self.tag(&mut target, &f.tags)?;
                targets.push((t, target));
            }
        }
        if let Some(search) = &find_max {
            self.searchable(&f, &targets, search)?;
        }
        let notes = self.like_for_like(&f, &targets)?;
        let targets: Vec<SuiteTarget> = targets.into_iter().map(|(_, t)| t).collect();
        let name = match &f.name {
            Some(n) if n.get_ref().trim().is_empty() => {
                return Err(self.at(n, "the name is empty", None));
            }
            Some(n) => n.get_ref().clone(),
            None => self
                .path
                .file_stem()
                .map_or_else(|| "suite".into(), |s| s.to_string_lossy().into_owned()),
        };
        Ok(Suite {
            name,
            source: self.path.to_path_buf(),
            plan_path,
            repeats,
            until_decided: self.until_decided(&f, &targets, &order)?,
            order,
            find_max,
            smoke,
            targets,
            notes,
        })
    }

    /// `[find_max]`: the settings of `volley find-max`, with its defaults; `--time-scale`
    /// shortens the budget, the steps and their warm-up alike.
    fn find_max(&self, spanned: &Spanned<FindMaxFile>) -> Result<Settings, Error> {
        let f = spanned.get_ref();
        let slo = crate::findmax::slo::parse(f.slo.get_ref()).map_err(|why| {
            self.at(
                &f.slo,
                why.to_string().replace("--slo ", ""),
                Some("e.g. slo = \"p99<50ms,errors<1%\""),
            )
        })?;
        let model = match f.model.as_ref().map(|m| m.get_ref().as_str()) {
            None | Some("open") => LoadModel::Open,
            Some("closed") => LoadModel::Closed,
            Some(other) => {
                return Err(self.at(
                    f.model.as_ref().expect("matched Some"),
                    format!("unknown model `{other}`"),
                    Some("open (vary the arrival rate) or closed (vary the VUs)"),
                ));
            }
        };
        let scale = self.options.time_scale;
        let budget = scale_duration(self.duration(f.budget.as_ref(), FIND_MAX_BUDGET)?, scale)
            .map_err(|why| self.err(f.budget.as_ref().map(|s| s.span()), why, None))?;
        let step = scale_duration(self.duration(f.step.as_ref(), FIND_MAX_STEP)?, scale)
            .map_err(|why| self.err(f.step.as_ref().map(|s| s.span()), why, None))?;
        let warmup = scale_duration(self.duration(f.warmup.as_ref(), FIND_MAX_WARMUP)?, scale)
            .map_err(|why| self.err(f.warmup.as_ref().map(|s| s.span()), why, None))?;
        if step.is_zero() {
            return Err(self.at(
                f.step.as_ref().unwrap_or(&f.slo),
                "a step must last longer than 0",
                None,
            ));
        }
        let positive = |v: &Option<Spanned<f64>>, key: &str| -> Result<Option<f64>, Error> {
            match v {
                Some(x) if !(x.get_ref().is_finite() && *x.get_ref() > 0.0) => {
                    Err(self.at(x, format!("{key} must be a positive number"), None))
                }
                other => Ok(other.as_ref().map(|x| *x.get_ref())),
            }
        };
        let max_in_flight = match &f.max_in_flight {
            Some(m) if *m.get_ref() == 0 => {
                return Err(self.at(m, "max_in_flight must be at least 1", None));
            }
            Some(m) => *m.get_ref(),
            None => FIND_MAX_IN_FLIGHT,
        };
        // Each checked at its own key (`Settings::check` would name the table).
        let resolution = match &f.resolution {
            Some(r) => percentage(r.get_ref())
                .and_then(|v| Settings::resolution(v).map_err(|e| e.to_string()))
                .map_err(|why| self.at(r, why, None))?,
            None => RESOLUTION,
        };
        let validation_steps = match &f.validation_steps {
            Some(v) => Settings::validation_steps(*v.get_ref())
                .map_err(|why| self.at(v, why.to_string(), None))?,
            None => VALIDATION_STEPS,
        };
        let settings = Settings {
            resolution,
            validation_steps,
            slo_text: f.slo.get_ref().clone(),
            slo,
            model,
            budget,
            step,
            warmup,
            start: positive(&f.start, "start")?,
            max: positive(&f.max, "max")?,
            max_in_flight,
            threads: None,
        };
        settings
            .check()
            .map_err(|why| self.at(spanned, why, None))?;
        Ok(settings)
    }

    fn smoke(&self, s: &SmokeFile) -> Result<Smoke, Error> {
        let plan_path = s
            .plan
            .as_ref()
            .map(|p| self.existing_file(p, "smoke plan"))
            .transpose()?;
        let time_scale = match &s.time_scale {
            None => None,
            Some(t) if t.get_ref().is_finite() && *t.get_ref() > 0.0 => Some(*t.get_ref()),
            Some(t) => {
                return Err(self.at(
                    t,
                    "time_scale must be a positive factor",
                    Some("e.g. 0.05 for a run 20 times shorter than the plan"),
                ));
            }
        };
        let max_error_rate = match &s.max_error_rate {
            None => SMOKE_MAX_ERROR_RATE,
            Some(v) => error_rate(v.get_ref()).ok_or_else(|| {
                self.at(
                    v,
                    "max_error_rate must be a percentage from 0% to 100%, or a fraction from 0 to 1",
                    Some("e.g. max_error_rate = \"1%\""),
                )
            })?,
        };
        Ok(Smoke {
            plan_path,
            time_scale,
            max_error_rate,
        })
    }

    fn target(
        &self,
        spanned: &Spanned<SuiteTargetFile>,
        suite_plan: Option<&Path>,
        smoke: Option<&Smoke>,
    ) -> Result<SuiteTarget, Error> {
        let t = spanned.get_ref();
        let name = t.name.get_ref().clone();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(self.at(
                &t.name,
                format!("`{name}` cannot name a target"),
                Some("use letters, digits, `-` and `_`: the name is also its results folder's"),
            ));
        }
        let base_url = t.base_url.get_ref().clone();
        resolve_target(
            &base_url,
            Vec::new(),
            Duration::from_secs(1),
            &crate::plan::ConnectOptions::default(),
            false,
        )
        .map_err(|why| self.at(&t.base_url, why, None))?;
        let cwd = match &t.cwd {
            None => self.dir.to_path_buf(),
            Some(c) => self.dir.join(c.get_ref()),
        };
        if !cwd.is_dir() {
            let span = t.cwd.as_ref().map_or_else(|| spanned.span(), Spanned::span);
            return Err(self.err(
                Some(span),
                format!("working directory {} does not exist", cwd.display()),
                Some("cwd is relative to the suite file"),
            ));
        }
        // Absolute, so that server.log and messages say where commands ran.
        let cwd = std::path::absolute(&cwd).unwrap_or(cwd);
        let command = |argv: &Spanned<Vec<String>>, key: &str| -> Result<CommandLine, Error> {
            if argv.get_ref().first().is_none_or(|a| a.is_empty()) {
                return Err(self.at(
                    argv,
                    format!("{key} is empty"),
                    Some("write the program and its arguments, e.g. [\"volley\", \"serve\"]"),
                ));
            }
            Ok(CommandLine {
                argv: argv.get_ref().clone(),
                cwd: cwd.clone(),
                env: t.env.clone(),
            })
        };
        let start = t
            .command
            .as_ref()
            .map(|c| command(c, "command"))
            .transpose()?;
        let reset = t.reset.as_ref().map(|c| command(c, "reset")).transpose()?;
        if start.is_none() && reset.is_none() && (t.cwd.is_some() || !t.env.is_empty()) {
            return Err(self.at(
                spanned,
                format!("target `{name}` has cwd or env but no command or reset to use them"),
                None,
            ));
        }
        let health_timeout = self.duration(t.health_timeout.as_ref(), HEALTH_TIMEOUT)?;
        let health = match &t.health_url {
            Some(u) => HealthCheck::new(u.get_ref(), health_timeout)
                .map_err(|why| self.at(u, why, None))?,
            None => HealthCheck::new(&base_url, health_timeout)
                .map_err(|why| self.at(&t.base_url, why, None))?,
        };
        let (plan_path, plan, smoke_plan) = self.target_plans(t, suite_plan, smoke, &base_url)?;
        Ok(SuiteTarget {
            name,
            base_url,
            command: start,
            health,
            reset,
            reset_timeout: self.duration(t.reset_timeout.as_ref(), RESET_TIMEOUT)?,
            stop_grace: self.duration(t.stop_grace.as_ref(), STOP_GRACE)?,
            plan_path,
            plan,
            smoke_plan,
        })
    }

    /// `[[watch]]` tables (the suite's, or a target's `[[target.watch]]`).
    fn watches(&self, tables: &[Spanned<WatchFile>]) -> Result<Vec<Spec>, Error> {
        let at =
            |span: Range<usize>, why: String, hint: Option<&str>| self.err(Some(span), why, hint);
        tables
            .iter()
            .map(|w| plan_read::watch_spec(w, &at))
            .collect()
    }

    /// The suite's `[tags]`, then `--tag`, added to a target's plans (replacing their own of the
    /// same key).
    fn tag(&self, target: &mut SuiteTarget, tags: &crate::plan::tags::Tags) -> Result<(), Error> {
        let mut more: Vec<(String, String)> = tags.clone().into_iter().collect();
        more.extend(self.options.tags.iter().cloned());
        for plan in std::iter::once(&mut target.plan).chain(target.smoke_plan.as_mut()) {
            plan.tags = crate::plan::tags::merged(&plan.tags, &more)
                .map_err(|why| self.err(None, format!("tags: {why}"), None))?;
        }
        Ok(())
    }

    /// Every target's plan can be searched with `search`'s steps, else the error at the plan.
    fn searchable(
        &self,
        f: &SuiteFile,
        targets: &[(&Spanned<SuiteTargetFile>, SuiteTarget)],
        search: &Settings,
    ) -> Result<(), Error> {
        for (t, target) in targets {
            if let Some(why) = unsearchable(&target.plan, search.step) {
                let at = t.get_ref().plan.as_ref().or(f.plan.as_ref());
                let hint = matches!(why, Unsearchable::Scenarios(_))
                    .then_some("the search varies one scenario's load");
                return Err(self.err(at.map(Spanned::span), why, hint));
            }
        }
        Ok(())
    }

    /// A plan read with `sets` (the target's `vars`, the suite's `--set`, its `base_url`), named
    /// after the target (so its records and folders say which target they measured).
    fn plan(
        &self,
        path: &Path,
        sets: &[(crate::plan::set_key::SetKey, String)],
        time_scale: f64,
        name: &str,
        load_replaced: bool,
    ) -> Result<Plan, Error> {
        let mut plan = plan_read::read_file(
            path,
            &plan_read::ReadOptions {
                sets: sets.to_vec(),
                time_scale,
                threads: None,
                load_replaced,
                // The targets are not running yet: no schema can be fetched from them.
                reflection: false,
                ..Default::default()
            },
        )?
        // Without reflection, preparing contacts nothing.
        .prepare()?;
        plan.name = name.to_string();
        Ok(plan)
    }
}

/// `"2%"`, `"0.5 %"` → the percentage (a string without its `%` is none).
fn percent_of(s: &str) -> Option<f64> {
    s.trim().strip_suffix('%')?.trim().parse().ok()
}

/// `"1%"`, `"0.5 %"`, or a fraction `0.01` → a fraction 0–1.
fn error_rate(v: &toml::Value) -> Option<f64> {
    let rate = match v {
        toml::Value::String(s) => percent_of(s)? / 100.0,
        toml::Value::Float(f) => *f,
        toml::Value::Integer(i) => *i as f64,
        _ => return None,
    };
    (rate.is_finite() && (0.0..=1.0).contains(&rate)).then_some(rate)
}

#[cfg(test)]
mod tests;
