//! Reading a plan file: parse, validate, compile templates, read data files — every error with
//! file:line:col and a hint, before any load is sent. ("Load" is what the plan sends.)

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toml::Spanned;

mod draft;
pub(crate) mod hints;
mod options;
mod profile;
mod report;
mod secrets;
mod session;
mod sets;
mod step;
mod stream;
mod target;
mod thresholds;
mod values;
mod watch;

pub use target::{BaseUrlError, resolve_host, resolve_target, resolve_target_with, step_capture};
pub use values::{
    DurationError, MAX_DURATION, Resolve, ResolveError, parse_duration, scale_duration,
    system_resolve,
};

pub use draft::Draft;
pub(crate) use draft::Finish;
use draft::{DraftKind, Pending};
pub use options::ReadOptions;
pub(crate) use report::once_each;
use step::StepEnv;
pub use watch::{ErrorAt, watch_spec};

use super::data::{DataSource, RowMode};
use super::file::{PlanFile, ScenarioFile};
use super::set_key::SetKey;
use super::template::{Templates, Text};
use super::{Flow, GroupDef, Plan, Scenario, Target};
use crate::error::Error;
use crate::proto::grpc::GrpcSchema;
use crate::record::model::GroupKind;

/// Reads, validates and compiles the plan at `path`.
pub fn read_file(path: &Path, options: &ReadOptions) -> Result<Draft, Error> {
    let bytes = std::fs::read(path).map_err(|cause| Error::File {
        action: crate::error::FileAction::ReadPlan,
        path: path.to_path_buf(),
        cause,
    })?;
    read_bytes(&bytes, path, options)
}

/// Validates and compiles plan `bytes` (read from `path`): text that is not UTF-8 is refused at
/// the line and column of its first invalid byte.
pub fn read_bytes(bytes: &[u8], path: &Path, options: &ReadOptions) -> Result<Draft, Error> {
    match std::str::from_utf8(bytes) {
        Ok(text) => read_str(text, path, options),
        Err(e) => {
            // The valid prefix locates the bad byte in lines and characters.
            let valid = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default();
            Err(Error::Plan {
                at: crate::location::at(path, valid, Some(valid.len()..valid.len())),
                why: format!(
                    "the file is not UTF-8 text (byte 0x{:02x})",
                    bytes[e.valid_up_to()]
                ),
                hint: Some("save the plan as UTF-8".into()),
            })
        }
    }
}

/// Plan `text` (read from `path`) as written, before it is checked: TOML's errors with their
/// file:line:col, worded for a person.
pub fn parse(text: &str, path: &Path) -> Result<PlanFile, Error> {
    toml::from_str(text).map_err(|e| {
        let format = "`volley check` lists the plan format in schema/plan.schema.json";
        let (why, hint) = hints::toml_error(&e, text, format);
        Error::Plan {
            at: crate::location::at(path, text, e.span()),
            why,
            hint,
        }
    })
}

/// Validates and compiles plan `text` (read from `path`, which anchors relative files).
pub fn read_str(text: &str, path: &Path, options: &ReadOptions) -> Result<Draft, Error> {
    let ctx = Ctx {
        text,
        path,
        flags: None,
        options,
    };
    let file = parse(text, path)?;
    let share = match options.segment {
        Some(s) => Some((
            s,
            crate::plan::segment::file_hash(text, path, &file, options)?,
        )),
        None => None,
    };
    ctx.compile(file, Finish { share, quick: None })
}

/// Validates and compiles a plan desugared from quick mode's flags: the same reader as a plan
/// file's. A span's start indexes `flags`, the name of the flag that gave the value (errors say
/// `invalid FLAG: …`); values are literal, never templates; paths are relative to the working
/// directory.
pub(crate) fn read_flags(
    file: PlanFile,
    flags: &'static [&'static str],
    options: &ReadOptions,
    finish: Finish,
) -> Result<Draft, Error> {
    Ctx {
        text: "",
        path: Path::new(""),
        flags: Some(flags),
        options,
    }
    .compile(file, finish)
}

/// Gives the Poisson arrivals of every scenario the run's seed: `seed`, or one drawn now (and
/// recorded, so that the run can be made again).
fn seed_arrivals(scenarios: &mut [Scenario], seed: Option<u64>) {
    let seed = seed.unwrap_or_else(|| fastrand::u64(..));
    for sc in scenarios {
        if let Some(crate::schedule::ArrivalProcess::Poisson { .. }) = sc.profile.arrival_process()
        {
            sc.profile
                .set_arrival_process(crate::schedule::ArrivalProcess::Poisson { seed });
        }
    }
}

/// The gRPC schema the steps are compiled against.
pub(super) enum Schemas {
    /// No step is a gRPC call.
    Absent,
    /// From `[target] proto`, or fetched.
    Known(GrpcSchema),
    /// To be fetched from the target by reflection when the plan is prepared: these services.
    Later(Vec<String>),
}

struct Ctx<'a> {
    text: &'a str,
    path: &'a Path,
    /// Quick mode: the flag named by each span's start.
    flags: Option<&'static [&'static str]>,
    options: &'a ReadOptions,
}

impl Ctx<'_> {
    /// An error at a byte span of the file (quick mode: about the flag the span names).
    fn err(&self, span: Option<Range<usize>>, why: impl Into<String>, hint: Option<&str>) -> Error {
        if let Some(flags) = self.flags {
            let flag = span.and_then(|s| flags.get(s.start)).unwrap_or(&"flags");
            return Error::Invalid {
                what: (*flag).to_string(),
                why: why.into(),
            };
        }
        Error::Plan {
            at: crate::location::at(self.path, self.text, span),
            why: why.into(),
            hint: hint.map(str::to_string),
        }
    }

    fn at<T>(&self, s: &Spanned<T>, why: impl Into<String>, hint: Option<&str>) -> Error {
        self.err(Some(s.span()), why, hint)
    }

    /// An error about a key's value: a file's message names the key, a flag's does not (the
    /// flag already says which).
    fn at_key<T>(
        &self,
        s: &Spanned<T>,
        key: &str,
        why: impl std::fmt::Display,
        hint: Option<&str>,
    ) -> Error {
        if self.flags.is_some() {
            self.at(s, why.to_string(), hint)
        } else {
            self.at(s, format!("{key} {why}"), hint)
        }
    }

    /// A value's text as a template; quick mode's values are literal.
    fn text(
        &self,
        templates: &mut Templates,
        text: &str,
        known: &BTreeSet<String>,
    ) -> Result<Text, crate::plan::template::TemplateError> {
        if self.flags.is_some() {
            Ok(Text::Static(text.to_owned()))
        } else {
            templates.text(text, known)
        }
    }

    /// Validates and compiles `file`: ready, or waiting for schemas from the target.
    fn compile(&self, file: PlanFile, finish: Finish) -> Result<Draft, Error> {
        let target = self.target(&file)?;
        let schemas = self.grpc_schema(&file)?;
        // With schemas to fetch, everything but the messages' types is checked now, without
        // the network, and the compiled plan is dropped.
        let plan = self.plan(&file, target.clone(), &schemas)?;
        let Schemas::Later(services) = schemas else {
            return Ok(Draft(DraftKind::Ready(Box::new(finish.apply(plan)?))));
        };
        Ok(Draft(DraftKind::Reflect(Box::new(Pending {
            file,
            text: self.text.to_owned(),
            path: self.path.to_path_buf(),
            flags: self.flags,
            options: self.options.clone(),
            finish,
            target,
            services,
        }))))
    }

    fn duration(&self, s: &Spanned<String>, scaled: bool) -> Result<Duration, Error> {
        let d = parse_duration(s.get_ref())
            .map_err(|why| self.at(s, why, Some("write durations like 30s, 1m30s or 500ms")))?;
        if scaled {
            scale_duration(d, self.options.time_scale).map_err(|why| self.at(s, why, None))
        } else {
            Ok(d)
        }
    }

    fn relative(&self, file: &str) -> PathBuf {
        let p = Path::new(file);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.path.parent().unwrap_or(Path::new(".")).join(p)
        }
    }

    /// Compiles `f` against `schemas`. With [`Schemas::Later`] the plan only validates: its
    /// gRPC steps are not compiled into requests.
    fn plan(&self, f: &PlanFile, target: Target, schemas: &Schemas) -> Result<Plan, Error> {
        let vars = self.vars(f)?;
        let secrets = self.secrets(f, &vars)?;
        let mut templates = Templates::new(vars, self.data_sources(f)?);
        let mut groups = Vec::new();
        let mut scenarios = self.scenarios(f, &target, schemas, &mut templates, &mut groups)?;
        self.sets_read(f, &templates)?;
        seed_arrivals(&mut scenarios, self.options.seed.or(f.seed));
        self.unique_rows(f, &templates, &scenarios)?;
        let later = matches!(schemas, Schemas::Later(_));
        let thresholds = self.thresholds(f, &scenarios, later)?;
        let watch = self.watches(f)?;
        let threads = match self.options.threads.or(f.threads) {
            Some(0) => {
                return Err(Error::Invalid {
                    what: "threads".into(),
                    why: "must be at least 1".into(),
                });
            }
            Some(t) => t,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let name = f.name.clone().unwrap_or_else(|| {
            self.path
                .file_stem()
                .map_or_else(|| "plan".into(), |s| s.to_string_lossy().into_owned())
        });
        let mut plan = Plan {
            name,
            source: Some(self.path.to_path_buf()),
            target,
            scenarios,
            thresholds,
            warmup: f.warmup,
            threads,
            templates: Arc::new(templates),
            groups,
            quick: None,
            secrets,
            share: None,
            watch,
            distributed: self.distributed(f)?,
            tags: crate::plan::tags::merged(&f.tags, &self.options.tags)
                .map_err(|why| self.err(None, format!("tags: {why}"), None))?,
            latency_buckets: self.latency_buckets(f)?,
            precision: self.precision(f)?,
        };
        self.precision_fits(f, &plan)?;
        plan.fit_threads(threads);
        Ok(plan)
    }

    /// `[distributed]`, validated.
    fn distributed(&self, f: &PlanFile) -> Result<crate::plan::segment::Distributed, Error> {
        let mut d = crate::plan::segment::Distributed::default();
        let Some(file) = &f.distributed else {
            return Ok(d);
        };
        if let Some(text) = &file.lost_after {
            d.lost_after = self.duration(text, false)?;
            if d.lost_after < crate::plan::segment::MIN_LOST_AFTER {
                return Err(self.at(
                    text,
                    "distributed.lost_after must be at least 2s (generators send a heartbeat \
                     every second)",
                    None,
                ));
            }
        }
        d.on_lost = file.on_lost.unwrap_or_default();
        Ok(d)
    }

    /// The variables: the plan's `vars`, then `--set` (`vars.NAME=…` or `NAME=…`).
    fn vars(&self, f: &PlanFile) -> Result<BTreeMap<String, String>, Error> {
        let mut vars: BTreeMap<String, String> = f
            .vars
            .iter()
            .map(|(k, v)| {
                let s = match v {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), s)
            })
            .collect();
        for (key, value) in &self.options.sets {
            if let SetKey::Var(name) = key {
                vars.insert(name.clone(), value.clone());
            }
        }
        Ok(vars)
    }

    /// The last `--set` of one of the target's keys (`target.base_url`, `target.tls.sni`, …).
    fn set_target(&self, key: SetKey) -> Option<&str> {
        self.options
            .sets
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The `[data.NAME]` files, read.
    fn data_sources(&self, f: &PlanFile) -> Result<BTreeMap<String, DataSource>, Error> {
        let mut data = BTreeMap::new();
        for (name, d) in &f.data {
            let mode = match d.mode.as_ref().map(|m| m.get_ref().as_str()) {
                None | Some("sequential") => RowMode::Sequential,
                Some("random") => RowMode::Random,
                Some("unique") => RowMode::UniquePerVu,
                Some(other) => {
                    return Err(self.at(
                        d.mode.as_ref().expect("matched Some"),
                        format!("unknown data mode `{other}`"),
                        Some("use sequential, random or unique"),
                    ));
                }
            };
            let path = self.relative(d.file.get_ref());
            let source =
                DataSource::read(&path, mode, self.options.max_data_bytes).map_err(|why| {
                    self.at(&d.file, why, Some("the path is relative to the plan file"))
                })?;
            data.insert(name.clone(), source);
        }
        Ok(data)
    }

    /// `mode = "unique"` gives each VU a row of its own: a file with fewer rows than a
    /// scenario's VUs would share rows among VUs without a word, so it is refused.
    fn unique_rows(
        &self,
        f: &PlanFile,
        templates: &Templates,
        scenarios: &[Scenario],
    ) -> Result<(), Error> {
        let Some(busiest) = scenarios.iter().max_by_key(|s| s.max_vus()) else {
            return Ok(());
        };
        for (name, d) in &f.data {
            let Some(source) = templates.data.get(name) else {
                continue;
            };
            if source.mode() == RowMode::UniquePerVu && source.len() < busiest.max_vus() as usize {
                let at = d.mode.as_ref().map_or(&d.file, |m| m);
                return Err(self.at(
                    at,
                    format!(
                        "mode = \"unique\" gives each VU a row of its own, but `{name}` has {} \
                         rows for the {} VUs of scenario `{}`",
                        source.len(),
                        busiest.max_vus(),
                        busiest.name
                    ),
                    Some("add rows, lower the VUs, or use mode = \"sequential\""),
                ));
            }
        }
        Ok(())
    }

    /// Every scenario, names unique, with the run-wide numbering of checks.
    fn scenarios(
        &self,
        f: &PlanFile,
        target: &Target,
        schemas: &Schemas,
        templates: &mut Templates,
        groups: &mut Vec<GroupDef>,
    ) -> Result<Vec<Scenario>, Error> {
        if f.scenarios.is_empty() {
            return Err(self.err(
                None,
                "the plan has no [[scenario]]",
                Some("add at least one scenario with a load profile and steps"),
            ));
        }
        let mut scenarios = Vec::new();
        let mut names = BTreeSet::new();
        let mut first_check = 0;
        for sf in &f.scenarios {
            if !names.insert(sf.name.get_ref().clone()) {
                return Err(self.at(
                    &sf.name,
                    format!("scenario `{}` is defined twice", sf.name.get_ref()),
                    Some("scenario names must be unique"),
                ));
            }
            let scenario =
                self.scenario(sf, target, schemas, templates, groups, &mut first_check)?;
            scenarios.push(scenario);
        }
        Ok(scenarios)
    }

    /// Whether the scenario's flow is weighted (one step per iteration) or sequential.
    fn flow_weighted(&self, sf: &ScenarioFile) -> Result<bool, Error> {
        match sf.flow.as_ref().map(|f| f.get_ref().as_str()) {
            None | Some("sequential") => Ok(false),
            Some("weighted") => Ok(true),
            Some(other) => Err(self.at(
                sf.flow.as_ref().expect("matched Some"),
                format!("unknown flow `{other}`"),
                Some("use sequential or weighted"),
            )),
        }
    }

    fn scenario(
        &self,
        sf: &ScenarioFile,
        target: &Target,
        schemas: &Schemas,
        templates: &mut Templates,
        groups: &mut Vec<GroupDef>,
        first_check: &mut usize,
    ) -> Result<Scenario, Error> {
        let name = sf.name.get_ref().clone();
        let group = push_group(groups, GroupKind::Scenario, &name, None);
        let (profile, phase_specs) = self.profile(&sf.load)?;
        let flow_weighted = self.flow_weighted(sf)?;
        let cookies = self.cookies(sf)?;
        if sf.steps.is_empty() {
            return Err(self.at(
                &sf.name,
                format!("scenario `{name}` has no steps"),
                Some("add [[scenario.step]] tables"),
            ));
        }
        // A sequential flow's step may use what the steps before it extracted (in the first
        // iteration nothing else is there: a later step's variable failed every first attempt,
        // unsent, in a tight loop); a weighted flow's, what any step extracts.
        let all_extracted: BTreeSet<String> = sf
            .steps
            .iter()
            .flat_map(|s| s.extract.keys().cloned())
            .collect();
        let mut earlier: BTreeSet<String> = BTreeSet::new();
        let mut steps = Vec::new();
        let mut step_names = BTreeSet::new();
        let mut cumulative = Vec::new();
        let mut total_weight = 0u64;
        for st in &sf.steps {
            if !step_names.insert(st.name.get_ref().clone()) {
                return Err(self.at(
                    &st.name,
                    format!(
                        "step `{}` is defined twice in scenario `{name}`",
                        st.name.get_ref()
                    ),
                    None,
                ));
            }
            let weight = st.weight.unwrap_or(1);
            if flow_weighted && weight == 0 {
                return Err(self.at(
                    &st.name,
                    "a weight of 0 means the step never runs",
                    Some("remove the step or give it a weight ≥ 1"),
                ));
            }
            total_weight += u64::from(weight);
            cumulative.push(total_weight);
            let step_group = push_group(groups, GroupKind::Step, st.name.get_ref(), Some(&name));
            groups[step_group].operation = self.operation(st)?;
            let env = StepEnv {
                target,
                schemas,
                known: if flow_weighted {
                    &all_extracted
                } else {
                    &earlier
                },
                jar: cookies,
            };
            let step = self.step(st, &env, templates, step_group, *first_check)?;
            earlier.extend(st.extract.keys().cloned());
            *first_check += step.checks.len();
            steps.push(step);
        }
        let phases = phase_specs
            .into_iter()
            .map(|mut p| {
                p.group = push_group(groups, GroupKind::Phase, &p.name, Some(&name));
                p
            })
            .collect();
        let start_after = match &sf.start_after {
            Some(d) => self.duration(d, true)?,
            None => Duration::ZERO,
        };
        let pace = self.pace(sf, &profile)?;
        Ok(Scenario {
            pace,
            cookies,
            name,
            start_after,
            profile,
            flow: if flow_weighted {
                Flow::Weighted(cumulative)
            } else {
                Flow::Sequential
            },
            steps,
            phases,
            group: Some(group),
        })
    }
}

fn push_group(
    groups: &mut Vec<GroupDef>,
    kind: GroupKind,
    name: &str,
    scenario: Option<&str>,
) -> usize {
    groups.push(GroupDef {
        kind,
        name: name.to_string(),
        scenario: scenario.map(str::to_string),
        operation: None,
    });
    groups.len() - 1
}
