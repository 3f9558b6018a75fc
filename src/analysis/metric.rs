//! The figures a comparison looks at, what unit each has, and which way is better.

use crate::record::model::{Bound, BoundFigure, Group, Percentiles, RunRecord};
use crate::record::series::SecondStats;

/// A figure compared across variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Achieved requests per second.
    Throughput,
    /// Mean latency.
    Mean,
    /// Median latency.
    P50,
    /// 90th percentile latency.
    P90,
    /// 95th percentile latency.
    P95,
    /// 99th percentile latency.
    P99,
    /// 99.9th percentile latency.
    P99_9,
    /// Slowest response.
    Max,
    /// Failed share of requests.
    ErrorRate,
    /// Streams: median time to first message.
    TtftP50,
    /// Streams: 99th percentile time to first message.
    TtftP99,
    /// Streams: 99th percentile gap between messages.
    GapP99,
    /// LLM streams: median time per output token.
    TpotP50,
    /// Bidirectional streams: median round trip of a message to its reply.
    RttP50,
    /// Streams that met their objectives, per second.
    Goodput,
}

impl Metric {
    /// Every metric, in table order.
    pub const ALL: [Metric; 15] = [
        Self::Throughput,
        Self::Mean,
        Self::P50,
        Self::P90,
        Self::P95,
        Self::P99,
        Self::P99_9,
        Self::Max,
        Self::ErrorRate,
        Self::TtftP50,
        Self::TtftP99,
        Self::GapP99,
        Self::TpotP50,
        Self::RttP50,
        Self::Goodput,
    ];

    /// The metrics a comparison judges for each scenario, step and phase (`volley compare`):
    /// the run's less p99.9 and the max, which a group's share of the requests makes rarer
    /// still, and the stream figures, which groups do not have.
    pub const OF_GROUPS: [Metric; 7] = [
        Self::Throughput,
        Self::Mean,
        Self::P50,
        Self::P90,
        Self::P95,
        Self::P99,
        Self::ErrorRate,
    ];

    /// Whether it is a figure of streams: compared only where the runs have streams.
    pub fn of_streams(self) -> bool {
        matches!(
            self,
            Self::TtftP50
                | Self::TtftP99
                | Self::GapP99
                | Self::TpotP50
                | Self::RttP50
                | Self::Goodput
        )
    }

    /// Name in tables.
    pub fn label(self) -> &'static str {
        match self {
            Self::Throughput => "throughput",
            Self::Mean => "latency mean",
            Self::P50 => "latency p50",
            Self::P90 => "latency p90",
            Self::P95 => "latency p95",
            Self::P99 => "latency p99",
            Self::P99_9 => "latency p99.9",
            Self::Max => "latency max",
            Self::ErrorRate => "error rate",
            Self::TtftP50 => "TTFT p50",
            Self::TtftP99 => "TTFT p99",
            Self::GapP99 => "message gap p99",
            Self::TpotP50 => "TPOT p50",
            Self::RttP50 => "round trip p50",
            Self::Goodput => "goodput",
        }
    }

    /// Unit of the metric's values: "req/s", "ms" or "%".
    pub fn unit(self) -> &'static str {
        match self {
            Self::Throughput | Self::Goodput => "req/s",
            Self::ErrorRate => "%",
            _ => "ms",
        }
    }

    /// Whether `volley compare` calls a change of it at all: not the max, which is one
    /// request per run (a figure that one slow request sets is shown, never judged).
    pub fn judged(self) -> bool {
        self != Self::Max
    }

    /// Whether it is a tail figure (p99, p99.9 and the streams' p99s), which one run whose tail
    /// jumped can move far more than the others: a call on it must survive leaving out any one
    /// run (`volley compare`) or pair (`volley ab`).
    pub fn is_tail(self) -> bool {
        matches!(self, Self::P99 | Self::P99_9 | Self::TtftP99 | Self::GapP99)
    }

    /// The run latency quantile it is (0.5 for p50 … 0.999 for p99.9); `None` for the mean,
    /// the max, throughput, the error rate and the stream figures.
    pub fn quantile(self) -> Option<f64> {
        Some(match self {
            Self::P50 => 0.5,
            Self::P90 => 0.9,
            Self::P95 => 0.95,
            Self::P99 => 0.99,
            Self::P99_9 => 0.999,
            _ => return None,
        })
    }

    /// Whether `responses` hold enough above its quantile to judge it in a run: at least
    /// [`crate::analysis::interval::MIN_ABOVE`], what a run's own intervals ask of a batch (a
    /// p99.9 of 770 responses is the run's slowest, which is never judged); always for figures
    /// that are not latency quantiles.
    pub fn enough_responses(self, responses: u64) -> bool {
        use crate::analysis::interval::{MIN_ABOVE, enough_above};
        self.quantile()
            .is_none_or(|q| enough_above(responses as f64, q, MIN_ABOVE))
    }

    /// Whether a larger value is an improvement.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Self::Throughput | Self::Goodput)
    }

    /// Whether changes are relative (%), or absolute percentage points (the error rate, whose
    /// baseline is often 0).
    pub fn relative(self) -> bool {
        self != Self::ErrorRate
    }

    /// The word for an improvement and for a regression.
    pub fn words(self) -> (&'static str, &'static str) {
        match self {
            Self::ErrorRate => ("fewer errors", "more errors"),
            _ => ("faster", "slower"),
        }
    }

    /// The whole-run value of a record (error rate in %); `None` when not measured (latency of a
    /// run where every request failed).
    pub fn of_run(self, r: &RunRecord) -> Option<f64> {
        match self {
            Self::Throughput => Some(r.summary.rps),
            Self::ErrorRate => r.summary.error_rate().map(|e| 100.0 * e),
            Self::TtftP50 => r.summary.streams.as_ref()?.ttft_ms.p50,
            Self::TtftP99 => r.summary.streams.as_ref()?.ttft_ms.p99,
            Self::GapP99 => r.summary.streams.as_ref()?.message_gap_ms.p99,
            Self::TpotP50 => r.summary.streams.as_ref()?.llm.as_ref()?.tpot_ms.p50,
            Self::RttP50 => r.summary.streams.as_ref()?.sent.as_ref()?.round_trip_ms.p50,
            Self::Goodput => Some(r.summary.streams.as_ref()?.goodput.as_ref()?.rps),
            _ => self.of_latency(&r.summary.latency_ms),
        }
    }

    /// The latency figure of `l` this metric is (mean, a percentile, the max); `None` for the
    /// others.
    fn of_latency(self, l: &Percentiles) -> Option<f64> {
        match self {
            Self::Mean => l.mean,
            Self::P50 => l.p50,
            Self::P90 => l.p90,
            Self::P95 => l.p95,
            Self::P99 => l.p99,
            Self::P99_9 => l.p99_9,
            Self::Max => l.max,
            _ => None,
        }
    }

    /// A group's value (error rate in %), as [`Metric::of_run`] for the run; `None` for the
    /// stream figures and figures the group did not measure.
    pub fn of_group(self, g: &Group) -> Option<f64> {
        match self {
            Self::Throughput => Some(g.rps),
            Self::ErrorRate => g.error_rate().map(|e| 100.0 * e),
            _ => self.of_latency(&g.latency_ms),
        }
    }

    /// A group's own batch-means interval of the figure (`groups[].ci95`), as
    /// [`Metric::bound_of_run`] for the run.
    pub fn bound_of_group(self, g: &Group) -> Option<&Bound> {
        g.ci95.as_ref()?.get(self.bound_figure()?)
    }

    /// The run figure with a batch-means interval (`summary.ci95`) this metric is; `None` for
    /// max, the error rate and the stream figures.
    pub fn bound_figure(self) -> Option<BoundFigure> {
        Some(match self {
            Self::Throughput => BoundFigure::Rps,
            Self::Mean => BoundFigure::Mean,
            Self::P50 => BoundFigure::P50,
            Self::P90 => BoundFigure::P90,
            Self::P95 => BoundFigure::P95,
            Self::P99 => BoundFigure::P99,
            Self::P99_9 => BoundFigure::P99_9,
            // The stream figures have no batch-means interval of their own.
            _ => return None,
        })
    }

    /// A run's own 95 % interval of the figure (batch means, `summary.ci95`); `None` for max,
    /// the error rate and the stream figures, and for runs without one.
    pub fn bound_of_run(self, r: &RunRecord) -> Option<&Bound> {
        r.summary.ci95.as_ref()?.get(self.bound_figure()?)
    }

    /// The value of one full second of the series; `None` for metrics the series does not hold,
    /// partial seconds, seconds without the figure, and a percentile's seconds with fewer than
    /// [`crate::analysis::interval::MIN_ABOVE`] responses above it — the least a run's own
    /// intervals ask of a batch (a p99 of 30 responses is their slowest, not a p99).
    pub fn of_second(self, s: &SecondStats) -> Option<f64> {
        if s.span_s < 0.999 {
            return None;
        }
        use crate::analysis::interval::{MIN_ABOVE, enough_above};
        let enough = |q: f64| enough_above(s.requests as f64, q, MIN_ABOVE);
        match self {
            Self::Throughput => Some(s.requests as f64 / s.span_s),
            Self::P50 => s.p50_ms.filter(|_| enough(0.50)),
            Self::P90 => s.p90_ms.filter(|_| enough(0.90)),
            Self::P99 => s.p99_ms.filter(|_| enough(0.99)),
            Self::ErrorRate => (s.requests + s.not_sent > 0)
                .then(|| 100.0 * s.errors as f64 / (s.requests + s.not_sent) as f64),
            Self::Mean | Self::P95 | Self::P99_9 | Self::Max => None,
            // The series holds no stream figures: streams are judged over repeats only.
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seconds_percentile_needs_ten_responses_above_it() {
        let second = |requests| SecondStats {
            requests,
            p50_ms: Some(1.0),
            p90_ms: Some(2.0),
            p99_ms: Some(3.0),
            ..SecondStats::without_responses(0, 1.0, 0)
        };
        // 30 responses: a median, but their p90 and p99 are their slowest few.
        let few = second(30);
        assert_eq!(Metric::P50.of_second(&few), Some(1.0));
        assert_eq!(Metric::P90.of_second(&few), None);
        assert_eq!(Metric::P99.of_second(&few), None);
        assert_eq!(Metric::Throughput.of_second(&few), Some(30.0));
        assert_eq!(Metric::P99.of_second(&second(1000)), Some(3.0));
        // 100 responses hold 10 above their p90 (100 × (1 − 0.9) is 9.999… in floats); 99 do not.
        assert_eq!(Metric::P90.of_second(&second(100)), Some(2.0));
        assert_eq!(Metric::P90.of_second(&second(99)), None);
    }
}
