//! Thresholds judged on a finished record, so `volley report` reaches the same verdicts from
//! `run.json` alone.

use hdrhistogram::Histogram;

use crate::plan::threshold::{Counts, Filter, Observed, StreamsObserved};
use crate::record::decode_histogram;
use crate::record::model::{Group, GroupKind, RunRecord, generator_limited};

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

    fn counts(&self, filter: Option<&Filter>) -> Counts {
        let s = &self.record.summary;
        match filter {
            None => Counts {
                requests: s.requests,
                attempts: s.requests + s.not_sent,
                errors: s.errors,
                generator_limited: generator_limited(&s.errors_by_kind),
            },
            Some(f) => self
                .matching(f)
                .iter()
                .fold(Counts::default(), |c, g| Counts {
                    requests: c.requests + g.requests,
                    attempts: c.attempts + g.requests + g.not_sent,
                    errors: c.errors + g.errors,
                    generator_limited: c.generator_limited + generator_limited(&g.errors_by_kind),
                }),
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

    fn throughput(&self, filter: Option<&Filter>) -> Option<f64> {
        let s = &self.record.summary;
        match filter {
            None => (s.duration_s > 0.0).then_some(s.rps),
            // Groups of one name (steps of several scenarios, phases by number) run side by
            // side: their rates add up.
            Some(f) => {
                let groups = self.matching(f);
                (!groups.is_empty()).then(|| groups.iter().map(|g| g.rps).sum())
            }
        }
    }

    fn streams(&self, filter: Option<&Filter>) -> Option<StreamsObserved> {
        let figures: Vec<&crate::record::model::StreamFigures> = match filter {
            None => self.record.summary.streams.iter().collect(),
            Some(f) => self
                .matching(f)
                .into_iter()
                .filter_map(|g| g.streams.as_ref())
                .collect(),
        };
        // Every histogram decoded when the record was read or built.
        let stats =
            crate::record::streams::merged_stats(figures.iter().copied(), "streams").ok()?;
        // Groups of one name run side by side: their goodputs add up.
        let rates: Vec<f64> = figures
            .iter()
            .filter_map(|f| f.goodput.as_ref().map(|g| g.rps))
            .collect();
        Some(StreamsObserved {
            stats: stats?,
            goodput_rps: (!rates.is_empty()).then(|| rates.iter().sum()),
        })
    }
}
