//! Self-checks as the record carries them: relations between a record's own figures that must
//! hold if the figures are consistent (counts add up, percentiles are ordered, Little's law), and
//! explanations of figures that mislead when read alone (a mean above the p95). `analysis`
//! computes them; `docs/measurement.md` ("Self-checks") defines each one.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which relation a [`SelfCheck`] tests. Serialised in snake case; the same name is the code of
/// the warning a failed check becomes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SelfCheckCode {
    /// Requests = responses (the status counts) + failures without a response, for the run and
    /// each group.
    RequestsAddUp,
    /// Errors = the sum of the error kinds, no more errors than requests, and no more 4xx/5xx
    /// errors than 4xx/5xx statuses, for the run and each group.
    ErrorsAddUp,
    /// Each latency histogram (the run's, each group's) holds one value per response.
    HistogramMatchesResponses,
    /// The per-second series adds up to the run's requests and errors.
    SeriesAddsUp,
    /// Scenarios add up to the run, steps to their scenario, phases to their scenario (equal
    /// where the phases cover the scenario, never more).
    GroupsAddUp,
    /// Every latency ladder is ordered: min ≤ p10 ≤ … ≤ p99.99 ≤ max, min ≤ mean ≤ max.
    PercentilesOrdered,
    /// Closed model: throughput × mean latency (requests in flight, by Little's law) matches the
    /// VUs the profile kept busy, within 10 %.
    LittlesLaw,
    /// The mean latency is not above the p95; when it is, the share of requests above the p95
    /// and the share of the total latency they carry explain it.
    HeavyTail,
    /// Open model: the sends followed the schedule: the gaps between them match the planned
    /// gaps (a Kolmogorov–Smirnov test on a sample, within half a tick of the send grid).
    ScheduleKept,
}

impl SelfCheckCode {
    /// The stable name (as serialised): `requests_add_up`, `littles_law`, …
    pub fn name(self) -> &'static str {
        match self {
            Self::RequestsAddUp => "requests_add_up",
            Self::ErrorsAddUp => "errors_add_up",
            Self::HistogramMatchesResponses => "histogram_matches_responses",
            Self::SeriesAddsUp => "series_adds_up",
            Self::GroupsAddUp => "groups_add_up",
            Self::PercentilesOrdered => "percentiles_ordered",
            Self::LittlesLaw => "littles_law",
            Self::HeavyTail => "heavy_tail",
            Self::ScheduleKept => "schedule_kept",
        }
    }

    /// The check of `name` (as serialised), if there is one.
    pub fn parse(name: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
    }
}

/// What a self-check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SelfCheckOutcome {
    /// The relation holds.
    Passed,
    /// The relation does not hold: a figure of the record is wrong, or (Little's law) the
    /// generator, not the target, held requests back. Also a warning.
    Failed,
    /// The figures are consistent, but one of them misleads when read alone (a mean above the
    /// p95); the message says why. Also a warning.
    Explained,
    /// The relation cannot be tested honestly on this record; the message says why.
    NotApplicable,
}

impl SelfCheckOutcome {
    /// Whether the check becomes a warning (failed or explained).
    pub fn warns(self) -> bool {
        matches!(self, Self::Failed | Self::Explained)
    }
}

/// One self-check of a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SelfCheck {
    /// Which relation.
    pub code: SelfCheckCode,
    /// What was found.
    pub outcome: SelfCheckOutcome,
    /// The figures compared, by name; each name carries its unit (`_ms`, `_per_sec`, `_pct`,
    /// `_vu_s` for VU-seconds; counts and in-flight figures have none).
    pub figures: BTreeMap<String, f64>,
    /// The finding in words: what was compared, and what a failure means.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;

    #[test]
    fn records_written_before_self_checks_still_read() {
        let mut value = serde_json::to_value(record("old", 2, 10, 1000, 0, 0.0)).unwrap();
        value.as_object_mut().unwrap().remove("self_checks");
        let bytes = serde_json::to_vec(&value).unwrap();
        let r = crate::record::parse_record(&bytes, std::path::Path::new("old.json")).unwrap();
        assert!(r.self_checks.is_empty());
    }

    #[test]
    fn codes_and_outcomes_serialise_in_snake_case_as_named() {
        for code in [
            SelfCheckCode::RequestsAddUp,
            SelfCheckCode::ErrorsAddUp,
            SelfCheckCode::HistogramMatchesResponses,
            SelfCheckCode::SeriesAddsUp,
            SelfCheckCode::GroupsAddUp,
            SelfCheckCode::PercentilesOrdered,
            SelfCheckCode::LittlesLaw,
            SelfCheckCode::HeavyTail,
            SelfCheckCode::ScheduleKept,
        ] {
            assert_eq!(serde_json::to_value(code).unwrap(), code.name());
        }
        let na = serde_json::to_value(SelfCheckOutcome::NotApplicable).unwrap();
        assert_eq!(na, "not_applicable");
    }
}
