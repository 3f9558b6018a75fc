//! A warning about the run itself, and its code: a type, so that what is matched on is a
//! variant, not a string literal; serialised by its stable name, so the JSON is a string as it
//! always was.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::record::selfcheck::SelfCheckCode;

/// A warning about the run itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Warning {
    /// Stable identifier (e.g. "generator_saturated").
    #[schemars(with = "String")]
    pub code: WarningCode,
    /// What happened and what it means for the figures.
    pub message: String,
}

impl Warning {
    /// A warning of `code` saying `message`.
    pub fn new(code: WarningCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// What a warning is about (`docs/measurement.md`, "Warnings"). Serialised as its name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WarningCode {
    /// A signal or a stop request ended the run.
    Interrupted,
    /// No request was sent.
    NoRequests,
    /// Every request failed.
    AllFailed,
    /// A load-generator thread was busy enough to be the bottleneck.
    GeneratorSaturated,
    /// Open model: requests went out late.
    SchedulingLag,
    /// The hypervisor took a share of the machine's CPU time (CPU steal).
    CpuSteal,
    /// Open model: iterations dropped at the in-flight cap.
    DroppedRequests,
    /// Open model: the achieved rate fell short of the one asked for.
    RateNotAchieved,
    /// One error kind is most of the errors.
    DominantError,
    /// The client ran out of local ports (or addresses).
    PortExhaustion,
    /// A watched process exited during the run.
    WatchPidExited,
    /// A watched process's figures could not be read.
    WatchProcessUnreadable,
    /// Scrapes of a watched metrics page failed.
    WatchScrapeFailed,
    /// A watched metric matched no series.
    WatchNothingMatched,
    /// A watched metric matched more series than are kept.
    WatchSeriesCapped,
    /// Pushes to the remote-write endpoint failed.
    RemoteWriteFailed,
    /// Pushes to the OTLP receiver failed.
    OtlpFailed,
    /// Merged shares did not run together.
    SharesNotTogether,
    /// Shares of the test are missing from a merge.
    SharesMissing,
    /// A self-check that failed, or explains a misleading figure (its name is the check's).
    SelfCheck(SelfCheckCode),
    /// A code this version does not know (a record of a later version), kept as written.
    Other(String),
}

/// The named codes with their names (the self-checks' come from [`SelfCheckCode::name`]).
const NAMES: [(WarningCode, &str); 19] = [
    (WarningCode::Interrupted, "interrupted"),
    (WarningCode::NoRequests, "no_requests"),
    (WarningCode::AllFailed, "all_failed"),
    (WarningCode::GeneratorSaturated, "generator_saturated"),
    (WarningCode::SchedulingLag, "scheduling_lag"),
    (WarningCode::CpuSteal, "cpu_steal"),
    (WarningCode::DroppedRequests, "dropped_requests"),
    (WarningCode::RateNotAchieved, "rate_not_achieved"),
    (WarningCode::DominantError, "dominant_error"),
    (WarningCode::PortExhaustion, "port_exhaustion"),
    (WarningCode::WatchPidExited, "watch_pid_exited"),
    (
        WarningCode::WatchProcessUnreadable,
        "watch_process_unreadable",
    ),
    (WarningCode::WatchScrapeFailed, "watch_scrape_failed"),
    (WarningCode::WatchNothingMatched, "watch_nothing_matched"),
    (WarningCode::WatchSeriesCapped, "watch_series_capped"),
    (WarningCode::RemoteWriteFailed, "remote_write_failed"),
    (WarningCode::OtlpFailed, "otlp_failed"),
    (WarningCode::SharesNotTogether, "shares_not_together"),
    (WarningCode::SharesMissing, "shares_missing"),
];

impl WarningCode {
    /// The stable name, as serialised: `generator_saturated`, `littles_law`, …
    pub fn name(&self) -> &str {
        match self {
            Self::SelfCheck(check) => check.name(),
            Self::Other(name) => name,
            named => {
                NAMES
                    .iter()
                    .find(|(code, _)| code == named)
                    .expect("every named code is in NAMES")
                    .1
            }
        }
    }

    /// The code of `name` (an unknown name: [`WarningCode::Other`]).
    pub fn parse(name: &str) -> Self {
        if let Some((code, _)) = NAMES.iter().find(|(_, n)| *n == name) {
            return code.clone();
        }
        match SelfCheckCode::parse(name) {
            Some(check) => Self::SelfCheck(check),
            None => Self::Other(name.to_string()),
        }
    }
}

impl std::fmt::Display for WarningCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for WarningCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for WarningCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Ok(Self::parse(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_by_its_name() {
        for (code, name) in NAMES {
            assert_eq!(code.name(), name);
            assert_eq!(WarningCode::parse(name), code);
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<WarningCode>(&json).unwrap(), code);
        }
        let check = WarningCode::SelfCheck(SelfCheckCode::LittlesLaw);
        assert_eq!(check.name(), "littles_law");
        assert_eq!(WarningCode::parse("littles_law"), check);
        assert_eq!(
            WarningCode::parse("from_the_future"),
            WarningCode::Other("from_the_future".into())
        );
    }
}
