//! `[report]`: the latency buckets a plan asks for (or `--buckets` replaces).

use std::time::Duration;

use super::Ctx;
use crate::error::Error;
use crate::plan::file::PlanFile;

impl Ctx<'_> {
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
