//! The load profiles of a scenario: `[scenario.load]` → [`Profile`] (and ladder phases), with
//! the keys each profile takes checked and every error located.

use std::time::Duration;

use toml::Spanned;

use super::Ctx;
use crate::error::Error;
use crate::plan::file::{self, LoadFile};
use crate::plan::{Iterations, MAX_RATE_PER_SEC, MAX_VUS, Phase, PhaseOrigin, Profile};
use crate::record::model::ProfileKind;
use crate::schedule::{ArrivalProcess, Ramp, Stage};

/// A ladder phase as given: (vus, rate, duration, name).
type PhaseSpec = (Option<u32>, Option<f64>, Duration, Option<String>);

/// The kind named `name` in a plan file (`profile = "…"`).
fn parse_kind(name: &str) -> Option<ProfileKind> {
    ProfileKind::ALL.into_iter().find(|k| k.name() == name)
}

/// The keys of `[scenario.load]` a profile takes (besides `profile`).
fn keys(kind: ProfileKind) -> &'static [&'static str] {
    match kind {
        ProfileKind::ConstantVus => &["vus", "duration"],
        ProfileKind::RampingVus => &["start_vus", "stages"],
        ProfileKind::ConstantArrivalRate => &[
            "rate",
            "time_unit",
            "duration",
            "max_vus",
            "iterations",
            "arrivals",
        ],
        ProfileKind::RampingArrivalRate => {
            &["start_rate", "time_unit", "stages", "max_vus", "arrivals"]
        }
        ProfileKind::Iterations | ProfileKind::PerVuIterations => {
            &["vus", "iterations", "max_duration"]
        }
        ProfileKind::Ladder => &["preset", "phases", "max_vus", "arrivals"],
    }
}

/// A ramping profile's stages as phases, each with results of its own: those of the
/// iterations that start in it (a jump, a stage of no length, has none).
fn stage_phases(profile: &Profile) -> Vec<Phase> {
    let ramp = profile.ramp();
    let vus = !profile.is_open();
    let word = |v: f64| match vus {
        true => format!("{} VUs", v.round()),
        false => format!("{} req/s", crate::units::rate(v)),
    };
    let (mut t, mut level) = (Duration::ZERO, ramp.level_at(Duration::ZERO));
    let mut out = Vec::new();
    for (i, s) in ramp.stages().iter().enumerate() {
        let ramps = (s.target - level).abs() > 1e-9;
        if !s.duration.is_zero() {
            let from = match (ramps, vus) {
                (false, _) => String::new(),
                (true, true) => format!("{}→", level.round()),
                (true, false) => format!("{}→", crate::units::rate(level)),
            };
            out.push(Phase {
                name: format!("stage {}: {from}{}", i + 1, word(s.target)),
                start: t,
                end: t + s.duration,
                vus: vus.then_some(s.target.round() as u32),
                rate: (!vus).then_some(s.target),
                group: 0,
                origin: PhaseOrigin::Stage {
                    ramp_from: ramps.then_some(level),
                },
            });
        }
        t += s.duration;
        level = s.target;
    }
    out
}

impl Ctx<'_> {
    pub(super) fn ramp_stages(&self, stages: &[file::StageFile]) -> Result<Vec<Stage>, Error> {
        stages
            .iter()
            .map(|s| {
                if !s.target.is_finite() || s.target < 0.0 {
                    return Err(self.at(
                        &s.duration,
                        format!("stage target {} must be ≥ 0", s.target),
                        None,
                    ));
                }
                Ok(Stage {
                    duration: self.duration(&s.duration, true)?,
                    target: s.target,
                })
            })
            .collect()
    }

    /// A VU count (`vus`, `max_vus`): at least 1, at most [`MAX_VUS`].
    fn vu_count(&self, load: &Spanned<LoadFile>, v: u32, what: &str) -> Result<u32, Error> {
        if v == 0 {
            Err(self.at(load, format!("`{what}` must be at least 1"), None))
        } else if v > MAX_VUS {
            Err(self.at(
                load,
                format!("`{what}` = {v} is more than volley allows ({MAX_VUS})"),
                None,
            ))
        } else {
            Ok(v)
        }
    }

    /// The highest level of a ramp (VUs, or a rate per second) within volley's limits.
    fn level_within(&self, load: &Spanned<LoadFile>, peak: f64, rate: bool) -> Result<(), Error> {
        let (max, what) = if rate {
            (MAX_RATE_PER_SEC, "iterations per second")
        } else {
            (f64::from(MAX_VUS), "VUs")
        };
        if peak.is_finite() && peak <= max {
            Ok(())
        } else {
            Err(self.at(
                load,
                format!(
                    "a load of {} {what} is more than volley allows ({max})",
                    if peak.abs() < 1e9 {
                        peak.to_string()
                    } else {
                        format!("{peak:.3e}")
                    }
                ),
                Some("check the rate, its time_unit and the stage targets"),
            ))
        }
    }

    pub(super) fn profile(&self, load: &Spanned<LoadFile>) -> Result<(Profile, Vec<Phase>), Error> {
        let l = load.get_ref();
        let Some(kind) = parse_kind(l.profile.get_ref()) else {
            let names: Vec<&str> = ProfileKind::ALL.iter().map(|k| k.name()).collect();
            return Err(self.at(
                &l.profile,
                format!("unknown profile `{}`", l.profile.get_ref()),
                Some(&format!("profiles: {}", names.join(", "))),
            ));
        };
        self.only_keys_of(l, kind)?;
        let profile = match kind {
            ProfileKind::ConstantVus => self.constant_vus(load, kind)?,
            ProfileKind::RampingVus => self.ramping_vus(load, kind)?,
            ProfileKind::ConstantArrivalRate => self.constant_arrival_rate(load, kind)?,
            ProfileKind::RampingArrivalRate => self.ramping_arrival_rate(load, kind)?,
            ProfileKind::Iterations | ProfileKind::PerVuIterations => {
                self.iterations(load, kind)?
            }
            ProfileKind::Ladder => {
                let (mut profile, phases) =
                    self.ladder(load, l.preset.as_deref(), l.phases.as_deref(), l.max_vus)?;
                self.arrivals(l, &mut profile)?;
                return Ok((profile, phases));
            }
        };
        let mut profile = profile;
        self.arrivals(l, &mut profile)?;
        let stages = match kind {
            ProfileKind::RampingVus | ProfileKind::RampingArrivalRate => stage_phases(&profile),
            _ => Vec::new(),
        };
        Ok((profile, stages))
    }

    /// `arrivals = "uniform" | "poisson"` of an open profile (a Poisson process's seed is the
    /// plan's, set once the plan is read).
    fn arrivals(&self, l: &LoadFile, profile: &mut Profile) -> Result<(), Error> {
        let Some(text) = &l.arrivals else {
            return Ok(());
        };
        let process = match text.get_ref().as_str() {
            "uniform" => ArrivalProcess::Uniform,
            "poisson" => ArrivalProcess::Poisson { seed: 0 },
            other => {
                return Err(self.at(
                    text,
                    format!("unknown arrivals `{other}`"),
                    Some("arrivals = \"uniform\" (evenly spaced, the default) or \"poisson\""),
                ));
            }
        };
        if !profile.is_open() {
            return Err(self.at(
                text,
                "`arrivals` spaces an open-model profile's arrivals; this profile runs VUs",
                Some("use constant-arrival-rate, ramping-arrival-rate or a rate ladder"),
            ));
        }
        profile.set_arrival_process(process);
        Ok(())
    }

    /// Refuses a key the profile does not take.
    fn only_keys_of(&self, l: &LoadFile, kind: ProfileKind) -> Result<(), Error> {
        let allowed = keys(kind);
        let present = [
            ("vus", l.vus.is_some()),
            ("duration", l.duration.is_some()),
            ("start_vus", l.start_vus.is_some()),
            ("stages", l.stages.is_some()),
            ("rate", l.rate.is_some()),
            ("start_rate", l.start_rate.is_some()),
            ("time_unit", l.time_unit.is_some()),
            ("arrivals", l.arrivals.is_some()),
            ("max_vus", l.max_vus.is_some()),
            ("iterations", l.iterations.is_some()),
            ("max_duration", l.max_duration.is_some()),
            ("preset", l.preset.is_some()),
            ("phases", l.phases.is_some()),
        ];
        match present.iter().find(|(k, p)| *p && !allowed.contains(k)) {
            Some((key, _)) => Err(self.at(
                &l.profile,
                format!("`{key}` does not apply to profile {}", kind.name()),
                Some(&format!("{} takes: {}", kind.name(), allowed.join(", "))),
            )),
            None => Ok(()),
        }
    }

    /// The error for a key the profile needs and the scenario lacks.
    fn need(&self, load: &Spanned<LoadFile>, kind: ProfileKind, key: &str) -> Error {
        self.at(
            &load.get_ref().profile,
            format!("profile {} needs `{key}`", kind.name()),
            Some(&format!("{} takes: {}", kind.name(), keys(kind).join(", "))),
        )
    }

    /// The error for a profile that would send nothing.
    fn never(&self, load: &Spanned<LoadFile>, what: &str) -> Error {
        self.at(
            load,
            format!("{what}: the scenario would never send anything"),
            Some("give it a duration longer than 0"),
        )
    }

    /// `time_unit` of an arrival-rate profile, seconds (default 1).
    fn time_unit(&self, load: &Spanned<LoadFile>) -> Result<f64, Error> {
        let unit = match &load.get_ref().time_unit {
            Some(u) => self.duration(u, false)?,
            None => Duration::from_secs(1),
        };
        if unit.is_zero() {
            return Err(self.at(load, "`time_unit` must be longer than 0", None));
        }
        Ok(unit.as_secs_f64())
    }

    /// `duration` of a constant profile, scaled; never 0.
    fn run_length(&self, load: &Spanned<LoadFile>, kind: ProfileKind) -> Result<Duration, Error> {
        let l = load.get_ref();
        let d = self.duration(
            l.duration
                .as_ref()
                .ok_or_else(|| self.need(load, kind, "duration"))?,
            true,
        )?;
        if d.is_zero() {
            return Err(self.never(load, "duration 0"));
        }
        Ok(d)
    }

    /// `vus` of a VU profile.
    fn vus(&self, load: &Spanned<LoadFile>, kind: ProfileKind) -> Result<f64, Error> {
        let v = load
            .get_ref()
            .vus
            .ok_or_else(|| self.need(load, kind, "vus"))?;
        Ok(f64::from(self.vu_count(load, v, "vus")?))
    }

    /// `max_vus` of an arrival-rate profile.
    fn max_vus(&self, load: &Spanned<LoadFile>, kind: ProfileKind) -> Result<u32, Error> {
        let v = load
            .get_ref()
            .max_vus
            .ok_or_else(|| self.need(load, kind, "max_vus"))?;
        self.vu_count(load, v, "max_vus")
    }

    fn constant_vus(&self, load: &Spanned<LoadFile>, kind: ProfileKind) -> Result<Profile, Error> {
        let d = self.run_length(load, kind)?;
        Ok(Profile::Vus {
            ramp: Ramp::constant(self.vus(load, kind)?, d),
            iterations: Iterations::Unlimited,
            max_duration: None,
        })
    }

    fn ramping_vus(&self, load: &Spanned<LoadFile>, kind: ProfileKind) -> Result<Profile, Error> {
        let l = load.get_ref();
        let stages = l
            .stages
            .as_ref()
            .ok_or_else(|| self.need(load, kind, "stages"))?;
        if stages.is_empty() {
            return Err(self.at(
                load,
                "ramping-vus needs at least one stage",
                Some("stages = [{ duration = \"1m\", target = 100 }]"),
            ));
        }
        let ramp = Ramp::new(
            f64::from(l.start_vus.unwrap_or(0)),
            self.ramp_stages(stages)?,
        );
        if ramp.total().is_zero() {
            return Err(self.never(load, "the stages add up to 0 s"));
        }
        if ramp.peak() < 1.0 {
            return Err(self.at(load, "no stage has a target of at least 1 VU", None));
        }
        self.level_within(load, ramp.peak(), false)?;
        Ok(Profile::Vus {
            ramp,
            iterations: Iterations::Unlimited,
            max_duration: None,
        })
    }

    fn constant_arrival_rate(
        &self,
        load: &Spanned<LoadFile>,
        kind: ProfileKind,
    ) -> Result<Profile, Error> {
        // With `iterations` and no `duration`, the run lasts until they have fallen due.
        let limit = match load.get_ref().iterations {
            Some(0) => return Err(self.at(load, "`iterations` must be at least 1", None)),
            limit => limit,
        };
        let d = match (limit, &load.get_ref().duration) {
            (Some(_), None) => Duration::from_secs(u32::MAX.into()),
            _ => self.run_length(load, kind)?,
        };
        let r = load
            .get_ref()
            .rate
            .ok_or_else(|| self.need(load, kind, "rate"))?;
        if !r.is_finite() || r <= 0.0 {
            return Err(self.at(
                load,
                format!("rate {r} must be greater than 0"),
                Some("an arrival rate of 0 sends nothing"),
            ));
        }
        let per_sec = r / self.time_unit(load)?;
        self.level_within(load, per_sec, true)?;
        Ok(Profile::Arrival {
            ramp: Ramp::constant(per_sec, d),
            max_vus: self.max_vus(load, kind)?,
            limit,
            process: ArrivalProcess::Uniform,
        })
    }

    fn ramping_arrival_rate(
        &self,
        load: &Spanned<LoadFile>,
        kind: ProfileKind,
    ) -> Result<Profile, Error> {
        let l = load.get_ref();
        let stages = l
            .stages
            .as_ref()
            .ok_or_else(|| self.need(load, kind, "stages"))?;
        if stages.is_empty() {
            return Err(self.at(load, "ramping-arrival-rate needs at least one stage", None));
        }
        let unit = self.time_unit(load)?;
        let mut stages = self.ramp_stages(stages)?;
        for s in &mut stages {
            s.target /= unit;
        }
        let start = l.start_rate.unwrap_or(0.0);
        if !start.is_finite() || start < 0.0 {
            return Err(self.at(load, format!("start_rate {start} must be ≥ 0"), None));
        }
        let ramp = Ramp::new(start / unit, stages);
        self.level_within(load, ramp.peak(), true)?;
        if ramp.total().is_zero() || ramp.due(0).is_none() {
            return Err(self.never(load, "the stages add up to no arrivals"));
        }
        Ok(Profile::Arrival {
            ramp,
            max_vus: self.max_vus(load, kind)?,
            limit: None,
            process: ArrivalProcess::Uniform,
        })
    }

    fn iterations(&self, load: &Spanned<LoadFile>, kind: ProfileKind) -> Result<Profile, Error> {
        let l = load.get_ref();
        let iterations = l
            .iterations
            .ok_or_else(|| self.need(load, kind, "iterations"))?;
        if iterations == 0 {
            return Err(self.at(load, "`iterations` must be at least 1", None));
        }
        let max = match &l.max_duration {
            Some(d) => Some(self.duration(d, true)?),
            None => None,
        };
        Ok(Profile::Vus {
            ramp: Ramp::constant(self.vus(load, kind)?, Duration::from_secs(u32::MAX.into())),
            iterations: if kind == ProfileKind::Iterations {
                Iterations::Shared(iterations)
            } else {
                Iterations::PerVu(iterations)
            },
            max_duration: max,
        })
    }

    pub(super) fn ladder(
        &self,
        load: &Spanned<LoadFile>,
        preset: Option<&str>,
        phases: Option<&[file::PhaseFile]>,
        max_vus: Option<u32>,
    ) -> Result<(Profile, Vec<Phase>), Error> {
        let specs = self.ladder_specs(load, preset, phases)?;
        if specs.is_empty() {
            return Err(self.at(load, "a ladder needs at least one phase", None));
        }
        let by_rate = specs[0].1.is_some();
        if specs.iter().any(|s| s.1.is_some() != by_rate) {
            return Err(self.at(load, "a ladder's phases are all `vus` or all `rate`", None));
        }
        let mut stages = Vec::new();
        let mut phases_out = Vec::new();
        let mut t = Duration::ZERO;
        for (i, (vus, rate, d, name)) in specs.into_iter().enumerate() {
            let level = vus.map_or_else(|| rate.unwrap_or(0.0), f64::from);
            stages.push(Stage {
                duration: Duration::ZERO,
                target: level,
            });
            stages.push(Stage {
                duration: d,
                target: level,
            });
            let label = match (vus, rate) {
                (Some(v), _) => format!("{v} VUs"),
                (_, Some(r)) => format!("{r} req/s"),
                _ => String::new(),
            };
            phases_out.push(Phase {
                name: name.unwrap_or_else(|| format!("phase {}: {label}", i + 1)),
                start: t,
                end: t + d,
                vus,
                rate,
                group: 0,
                origin: PhaseOrigin::Ladder,
            });
            t += d;
        }
        let ramp = Ramp::new(0.0, stages);
        self.level_within(load, ramp.peak(), by_rate)?;
        let profile = if by_rate {
            let max_vus =
                max_vus.ok_or_else(|| self.at(load, "a rate ladder needs `max_vus`", None))?;
            Profile::Arrival {
                max_vus: self.vu_count(load, max_vus, "max_vus")?,
                ramp,
                limit: None,
                process: ArrivalProcess::Uniform,
            }
        } else {
            Profile::Vus {
                ramp,
                iterations: Iterations::Unlimited,
                max_duration: None,
            }
        };
        Ok((profile, phases_out))
    }

    /// A ladder's phases as given, from its preset or its `phases`.
    fn ladder_specs(
        &self,
        load: &Spanned<LoadFile>,
        preset: Option<&str>,
        phases: Option<&[file::PhaseFile]>,
    ) -> Result<Vec<PhaseSpec>, Error> {
        let specs: Vec<PhaseSpec> = match (preset, phases) {
            (Some(_), Some(_)) => {
                return Err(self.at(load, "give either `preset` or `phases`, not both", None));
            }
            (Some(name), None) => crate::plan::presets::preset(name)
                .ok_or_else(|| {
                    self.at(
                        load,
                        format!("unknown ladder preset `{name}`"),
                        Some("presets: smoke, full, saturation"),
                    )
                })?
                .iter()
                .map(|p| {
                    let d = super::scale_duration(p.duration, self.options.time_scale)
                        .map_err(|why| self.at(load, why, None))?;
                    Ok((Some(p.vus), None, d, None))
                })
                .collect::<Result<_, Error>>()?,
            (None, Some(phases)) => phases
                .iter()
                .map(|p| {
                    let d = self.duration(&p.duration, true)?;
                    match (p.vus, p.rate) {
                        (Some(0), _) => {
                            Err(self.at(&p.duration, "a phase needs at least 1 VU", None))
                        }
                        (_, Some(r)) if !r.is_finite() || r <= 0.0 => Err(self.at(
                            &p.duration,
                            format!("phase rate {r} must be greater than 0"),
                            None,
                        )),
                        (Some(_), Some(_)) | (None, None) => {
                            Err(self.at(&p.duration, "a phase holds either `vus` or `rate`", None))
                        }
                        _ if d.is_zero() => {
                            Err(self.at(&p.duration, "a phase must last longer than 0", None))
                        }
                        (vus, rate) => Ok((vus, rate, d, p.name.clone())),
                    }
                })
                .collect::<Result<_, _>>()?,
            (None, None) => {
                return Err(self.at(
                    load,
                    "a ladder needs `preset` or `phases`",
                    Some("preset = \"saturation\", or phases = [{ vus = 10, duration = \"2m\" }]"),
                ));
            }
        };
        Ok(specs)
    }
}
