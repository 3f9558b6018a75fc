//! The exported metric families: one type for what the page, remote write, OTLP and the
//! dashboard test match on, with each family's Prometheus name, type, HELP text and OTLP name
//! and unit in one place ([`Family::meta`]).

use super::SeriesType;

/// One exported metric family (docs/measurement.md, "Live metrics").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// Measured requests that reached the network, since the start (counter).
    Requests,
    /// Failed attempts by error kind (counter).
    Errors,
    /// Responses by status code (counter).
    Responses,
    /// Open model: iterations not started in time (counter).
    DroppedIterations,
    /// Streams of streaming steps measured, counted at their end (counter).
    Streams,
    /// Messages of the streams measured, received and sent (counter).
    StreamMessages,
    /// Requests sent and not yet answered (gauge).
    InFlight,
    /// Virtual users the closed-model schedule runs now (gauge).
    ActiveVus,
    /// The rate the open-model schedule asks for now, iterations/s (gauge).
    RateAsked,
    /// Iterations completed over the last second, per second (gauge).
    RateAchieved,
    /// volley's process CPU over the last second, per worker thread, 0–1 (gauge).
    GeneratorCpu,
    /// The machine's CPU time its hypervisor took over the last second, 0–1 (gauge).
    GeneratorSteal,
    /// Latency of the responses, seconds (histogram).
    Latency,
}

/// What a family is called and how it is typed, on the page and over OTLP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// The Prometheus family name (`volley_latency_seconds`; its samples add `_bucket`, …).
    pub name: &'static str,
    /// Counter, gauge or histogram.
    pub kind: SeriesType,
    /// The `# HELP` text (also the OTLP description).
    pub help: &'static str,
    /// The OTLP name, by OpenTelemetry's conventions (`volley.latency`).
    pub otlp_name: &'static str,
    /// The OTLP unit (UCUM; `{…}` is an annotation, dropped in Prometheus names, `/s` read as
    /// `_per_second`).
    pub otlp_unit: &'static str,
}

impl Family {
    /// Every family, in the order the page and the pushes write them.
    pub const ALL: [Family; 13] = [
        Family::Requests,
        Family::Errors,
        Family::Responses,
        Family::DroppedIterations,
        Family::Streams,
        Family::StreamMessages,
        Family::InFlight,
        Family::ActiveVus,
        Family::RateAsked,
        Family::RateAchieved,
        Family::GeneratorCpu,
        Family::GeneratorSteal,
        Family::Latency,
    ];

    /// The Prometheus family name.
    pub const fn name(self) -> &'static str {
        self.meta().name
    }

    /// Counter, gauge or histogram.
    pub const fn kind(self) -> SeriesType {
        self.meta().kind
    }

    /// Names, type and HELP text.
    pub const fn meta(self) -> Meta {
        META[self as usize]
    }
}

/// Each family's [`Meta`], in declaration order (the enum's discriminants index it).
const META: [Meta; 13] = [
    // Family::Requests
    Meta {
        name: "volley_requests_total",
        kind: SeriesType::Counter,
        help: "Exchanges completed (a response or a failure).",
        otlp_name: "volley.requests",
        otlp_unit: "{request}",
    },
    // Family::Errors
    Meta {
        name: "volley_errors_total",
        kind: SeriesType::Counter,
        help: "Failed exchanges by error kind.",
        otlp_name: "volley.errors",
        otlp_unit: "{request}",
    },
    // Family::Responses
    Meta {
        name: "volley_responses_total",
        kind: SeriesType::Counter,
        help: "Responses by status code.",
        otlp_name: "volley.responses",
        otlp_unit: "{response}",
    },
    // Family::DroppedIterations
    Meta {
        name: "volley_dropped_iterations_total",
        kind: SeriesType::Counter,
        help: "Open model: iterations not started in time.",
        otlp_name: "volley.dropped_iterations",
        otlp_unit: "{iteration}",
    },
    // Family::Streams
    Meta {
        name: "volley_streams_total",
        kind: SeriesType::Counter,
        help: "Streams of streaming steps measured (counted at their end).",
        otlp_name: "volley.streams",
        otlp_unit: "{stream}",
    },
    // Family::StreamMessages
    Meta {
        name: "volley_stream_messages_total",
        kind: SeriesType::Counter,
        help: "Messages of the streams measured, received and sent.",
        otlp_name: "volley.stream.messages",
        otlp_unit: "{message}",
    },
    // Family::InFlight
    Meta {
        name: "volley_in_flight",
        kind: SeriesType::Gauge,
        help: "Exchanges sent and not yet answered.",
        otlp_name: "volley.in_flight",
        otlp_unit: "{request}",
    },
    // Family::ActiveVus
    Meta {
        name: "volley_active_vus",
        kind: SeriesType::Gauge,
        help: "Virtual users running.",
        otlp_name: "volley.active_vus",
        otlp_unit: "{vu}",
    },
    // Family::RateAsked
    Meta {
        name: "volley_rate_asked_per_second",
        kind: SeriesType::Gauge,
        help: "Rate the schedule asks for, iterations/s.",
        otlp_name: "volley.rate_asked",
        otlp_unit: "{iteration}/s",
    },
    // Family::RateAchieved
    Meta {
        name: "volley_rate_achieved_per_second",
        kind: SeriesType::Gauge,
        help: "Iterations completed over the last second, per second.",
        otlp_name: "volley.rate_achieved",
        otlp_unit: "{iteration}/s",
    },
    // Family::GeneratorCpu
    Meta {
        name: "volley_generator_cpu_ratio",
        kind: SeriesType::Gauge,
        help: "CPU of volley's process over the last second, per worker thread (0-1).",
        otlp_name: "volley.generator.cpu",
        otlp_unit: "1",
    },
    // Family::GeneratorSteal
    Meta {
        name: "volley_generator_steal_ratio",
        kind: SeriesType::Gauge,
        help: "Share of the machine's CPU time its hypervisor took over the last second (0-1).",
        otlp_name: "volley.generator.steal",
        otlp_unit: "1",
    },
    // Family::Latency
    Meta {
        name: "volley_latency_seconds",
        kind: SeriesType::Histogram,
        help: "Latency of the responses, seconds.",
        otlp_name: "volley.latency",
        otlp_unit: "s",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_follow_the_prometheus_rules() {
        let mut seen = std::collections::HashSet::new();
        for f in Family::ALL {
            let m = f.meta();
            assert!(seen.insert(m.name), "{} twice", m.name);
            assert!(m.name.starts_with("volley_") && m.otlp_name.starts_with("volley."));
            // A counter's name ends in _total; a histogram's in its unit.
            match m.kind {
                SeriesType::Counter => assert!(m.name.ends_with("_total"), "{}", m.name),
                SeriesType::Histogram => assert!(m.name.ends_with("_seconds"), "{}", m.name),
                SeriesType::Gauge => assert!(!m.name.ends_with("_total"), "{}", m.name),
            }
        }
        assert_eq!(seen.len(), Family::ALL.len());
    }

    #[test]
    fn all_lists_each_family_once_in_declaration_order() {
        for (i, f) in Family::ALL.into_iter().enumerate() {
            assert_eq!(f as usize, i, "{f:?}");
        }
        assert_eq!(Family::Latency.name(), "volley_latency_seconds");
        assert_eq!(
            Family::GeneratorSteal.meta().otlp_name,
            "volley.generator.steal"
        );
    }
}
