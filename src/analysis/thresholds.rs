//! Thresholds judged on a finished record, so `volley report` reaches the same verdicts from
//! `run.json` alone.

use hdrhistogram::Histogram;

use crate::plan::threshold::{Filter, Observed};
use crate::record::decode_histogram;
use crate::record::model::{Group, GroupKind, RunRecord};

/// A record seen through the [`Observed`] interface.
pub struct RecordView<'a> {
    record: &'a RunRecord,
}

impl<'a> RecordView<'a> {
    /// A view of `record`.
    pub fn new(record: &'a RunRecord) -> Self {
        Self { record }
    }

    fn matching(&self, filter: &Filter) -> Vec<&'a Group> {
        let mut phase_number = 0usize;
        let mut last_scenario: Option<&str> = None;
        self.record
            .groups
            .iter()
            .filter(|g| {
                if g.kind == GroupKind::Phase {
                    if last_scenario != g.scenario.as_deref() {
                        phase_number = 0;
                        last_scenario = g.scenario.as_deref();
                    }
                    phase_number += 1;
                }
                match filter {
                    Filter::Scenario(s) => g.kind == GroupKind::Scenario && &g.name == s,
                    Filter::Step(s) => g.kind == GroupKind::Step && &g.name == s,
                    Filter::Phase(p) => {
                        g.kind == GroupKind::Phase
                            && (&g.name == p || phase_number.to_string() == *p)
                    }
                }
            })
            .collect()
    }
}

impl Observed for RecordView<'_> {
    fn latency(&self, filter: Option<&Filter>) -> Option<Histogram<u64>> {
        match filter {
            None => decode_histogram(&self.record.histograms.latency_us).ok(),
            Some(f) => {
                let mut h = crate::record::recorder::new_histogram();
                for g in self.matching(f) {
                    let _ = h.add(decode_histogram(&g.histogram_us).ok()?);
                }
                Some(h)
            }
        }
    }

    fn counts(&self, filter: Option<&Filter>) -> (u64, u64) {
        match filter {
            None => (self.record.summary.requests, self.record.summary.errors),
            Some(f) => self
                .matching(f)
                .iter()
                .fold((0, 0), |(r, e), g| (r + g.requests, e + g.errors)),
        }
    }

    fn checks(&self, filter: Option<&Filter>) -> (u64, u64) {
        self.record
            .checks
            .iter()
            .filter(|c| match filter {
                None | Some(Filter::Phase(_)) => true,
                Some(Filter::Scenario(s)) => &c.scenario == s,
                Some(Filter::Step(s)) => &c.step == s,
            })
            .fold((0, 0), |(p, f), c| (p + c.passed, f + c.failed))
    }

    fn duration_s(&self, filter: Option<&Filter>) -> f64 {
        match filter {
            Some(Filter::Phase(_)) => self
                .matching(filter.expect("matched Some"))
                .iter()
                .map(|g| g.end_s.unwrap_or(0.0) - g.start_s.unwrap_or(0.0))
                .sum::<f64>()
                .min(self.record.summary.duration_s),
            _ => self.record.summary.duration_s,
        }
    }
}
