//! `[report]` and `[precision]`: the latency buckets a plan asks for (or `--buckets` replaces)
//! and how precise its figures must be before it stops (or `--precision` replaces).

use std::time::Duration;

use super::Ctx;
use crate::error::Error;
use crate::plan::Plan;
use crate::plan::file::PlanFile;
use crate::plan::steady::Unsteady;
use crate::record::model::{Part, PrecisionGoal};

impl Ctx<'_> {
    /// The precision goals: `--precision`, else `[precision]`, else none.
    pub(super) fn precision(&self, f: &PlanFile) -> Result<Vec<PrecisionGoal>, Error> {
        if !self.options.precision.is_empty() {
            once_each(&self.options.precision, "--precision")?;
            return Ok(self.options.precision.clone());
        }
        let Some(table) = &f.precision else {
            return Ok(Vec::new());
        };
        table
            .get_ref()
            .iter()
            .map(|(name, share)| {
                crate::plan::flags::precision_goal(name, share.get_ref())
                    .map_err(|why| self.at_key(share, "precision:", why, Some("e.g. p99 = \"2%\"")))
            })
            .collect::<Result<Vec<_>, _>>()
            .and_then(|goals| once_each(&goals, "[precision]").map(|()| goals))
    }

    /// A plan asked to last until precise must hold one load over a window long enough for an
    /// interval ([`Plan::unsteady`]), and have every part a goal names (`p99{step=pay}`): else
    /// the flag, or `[precision]`, is refused with why.
    pub(super) fn precision_fits(&self, f: &PlanFile, plan: &Plan) -> Result<(), Error> {
        let unsteady = plan.precision.first().and_then(|_| plan.unsteady());
        let unsteady = unsteady
            .filter(|_| !self.options.load_replaced)
            .map(|u| match u {
                // A run of one URL (quick mode's flags) has no scenario of the user's to name.
                Unsteady::Counted { .. } if self.flags.is_some() => {
                    Unsteady::Counted { scenario: None }
                }
                u => u,
            });
        let why = match &unsteady {
            Some(why) => why.to_string(),
            None => match plan
                .precision
                .iter()
                .filter_map(|g| g.part.as_ref())
                .find_map(|p| goal_part_problem(plan, p, self.flags.is_some()))
                .or_else(|| plan.precision.first().and_then(|_| counted_threshold(plan)))
            {
                Some(why) => why,
                None => return Ok(()),
            },
        };
        match &f.precision {
            Some(table) if self.options.precision.is_empty() => {
                // A part the plan lacks is shown at its goal's line; an unsteady load at the table.
                let missing = |name: &String| {
                    let part = Part::split(name).ok().and_then(|(_, part)| part);
                    part.is_some_and(|p| goal_part_problem(plan, &p, false).is_some())
                };
                match table.get_ref().iter().find(|(name, _)| missing(name)) {
                    Some((_, share)) if unsteady.is_none() => {
                        Err(self.at_key(share, "precision:", why, None))
                    }
                    _ => Err(self.at_key(table, "[precision]:", why, None)),
                }
            }
            _ => Err(Error::Invalid {
                what: "--precision".into(),
                why,
            }),
        }
    }

    /// The latency buckets' upper bounds: `--buckets`, else `[report] buckets`, else none (1-2-5).
    pub(super) fn latency_buckets(&self, f: &PlanFile) -> Result<Vec<Duration>, Error> {
        if !self.options.latency_buckets.is_empty() {
            return Ok(self.options.latency_buckets.clone());
        }
        let Some(list) = f.report.as_ref().and_then(|r| r.buckets.as_ref()) else {
            return Ok(Vec::new());
        };
        let bounds = list
            .get_ref()
            .iter()
            .map(|text| self.duration(text, false))
            .collect::<Result<Vec<_>, _>>()?;
        crate::plan::flags::bucket_problem(&bounds).map_or(Ok(bounds), |why| {
            Err(self.at_key(
                list,
                "buckets",
                why,
                Some("e.g. buckets = [\"25ms\", \"50ms\", \"100ms\"]"),
            ))
        })
    }
}

/// The goals given once each (`what`: the flag or table that gives them): a figure of the run, or of one part, asked twice is refused.
pub(crate) fn once_each(goals: &[PrecisionGoal], what: &str) -> Result<(), Error> {
    let twice = goals.iter().enumerate().find_map(|(i, g)| {
        let same = |o: &&PrecisionGoal| o.figure == g.figure && o.part == g.part;
        goals[..i].iter().find(same).map(|first| (first, g))
    });
    let Some((first, again)) = twice else {
        return Ok(());
    };
    Err(Error::Invalid {
        what: what.into(),
        why: format!(
            "{} is asked twice ({} and {}): give each figure once",
            again.label(),
            crate::report::uncertainty::asked(first),
            crate::report::uncertainty::asked(again)
        ),
    })
}

/// What is wrong with a precision goal's part in `plan` (`one_url`: quick mode's, whose
/// groups are its own): any part of a one-URL run, a phase (its load changes, so no run of it
/// can stop early), or what [`Plan::part_problem`] says.
fn goal_part_problem(plan: &Plan, part: &Part, one_url: bool) -> Option<String> {
    match part {
        _ if one_url => Some(crate::plan::one_url_has_no(part)),
        Part::Phase(_) => Some(format!(
            "{part}: a phase cannot be made precise on its own (a ladder changes its load, and \
             such a run cannot stop early); name a scenario or step"
        )),
        _ => plan.part_problem(part),
    }
}

/// A threshold on the count of requests: a run stopped once precise would have fewer, and the
/// threshold would judge the stop, not the target.
fn counted_threshold(plan: &Plan) -> Option<String> {
    use crate::plan::threshold::ThresholdMetric;
    let t = plan
        .thresholds
        .iter()
        .find(|t| t.metric == ThresholdMetric::Requests)?;
    Some(format!(
        "the threshold `{}: {}` judges a count of requests, and a run stopped once precise \
         would have fewer: judge a rate (`rps`) instead",
        t.metric_text, t.condition_text
    ))
}
