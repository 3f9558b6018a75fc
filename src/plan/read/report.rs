//! `[report]` and `[precision]`: the latency buckets a plan asks for (or `--buckets` replaces)
//! and how precise its figures must be before it stops (or `--precision` replaces).

use std::time::Duration;

use super::Ctx;
use crate::error::Error;
use crate::plan::Plan;
use crate::plan::file::PlanFile;
use crate::record::model::PrecisionGoal;

impl Ctx<'_> {
    /// The precision goals: `--precision`, else `[precision]`, else none.
    pub(super) fn precision(&self, f: &PlanFile) -> Result<Vec<PrecisionGoal>, Error> {
        if !self.options.precision.is_empty() {
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
            .collect()
    }

    /// A plan asked to last until precise must hold one load over a window long enough for an
    /// interval ([`Plan::unsteady`]): else the flag, or `[precision]`, is refused with why.
    pub(super) fn steady_if_precise(&self, f: &PlanFile, plan: &Plan) -> Result<(), Error> {
        let Some(why) = plan.precision.first().and_then(|_| plan.unsteady()) else {
            return Ok(());
        };
        if self.options.load_replaced {
            return Ok(());
        }
        match &f.precision {
            Some(table) if self.options.precision.is_empty() => {
                Err(self.at_key(table, "[precision]:", why, None))
            }
            _ => Err(Error::Invalid {
                what: "--precision".into(),
                why: why.to_string(),
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
