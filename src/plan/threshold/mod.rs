//! Thresholds: pass/fail conditions over a run's results, like k6's.
//!
//! A threshold is a metric, an optional filter, and a condition:
//! `"latency{step=get_task}" = ["p95 < 5ms", "max < 50ms"]`, `errors = ["rate < 1%"]`,
//! `checks = ["rate > 99%"]`, `rps = ["> 100"]`, `requests = ["count >= 1000"]`. Filters:
//! `scenario=NAME`, `step=NAME`, `phase=NAME` (or the phase's 1-based number).

use std::time::Duration;

use hdrhistogram::Histogram;

use crate::record::model::ThresholdUnit;

/// What a threshold measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThresholdMetric {
    /// Request latency (ms).
    Latency,
    /// Failed share of requests (0–1).
    ErrorRate,
    /// Passed share of checks (0–1).
    CheckRate,
    /// Requests per second.
    Throughput,
    /// Number of requests.
    Requests,
    /// Streams: time to the first message (ms).
    Ttft,
    /// Streams: each gap between consecutive messages (ms).
    MessageGap,
    /// LLM streams: time per output token (ms).
    Tpot,
    /// Bidirectional streams: each message's round trip to its reply (ms).
    RoundTrip,
    /// Streams that met their objectives, per second.
    Goodput,
}

impl ThresholdMetric {
    /// Whether its conditions are on a distribution of times (`p95 < 5ms`, `avg`, `max`).
    pub fn is_distribution(self) -> bool {
        matches!(
            self,
            Self::Latency | Self::Ttft | Self::MessageGap | Self::Tpot | Self::RoundTrip
        )
    }

    /// Whether it is a figure of streams (judged on the finished record only).
    pub fn of_streams(self) -> bool {
        matches!(
            self,
            Self::Ttft | Self::MessageGap | Self::Tpot | Self::RoundTrip | Self::Goodput
        )
    }

    /// The unit of the metric's bounds and observed values.
    pub fn unit(self) -> ThresholdUnit {
        match self {
            Self::Latency | Self::Ttft | Self::MessageGap | Self::Tpot | Self::RoundTrip => {
                ThresholdUnit::Ms
            }
            Self::ErrorRate | Self::CheckRate => ThresholdUnit::Ratio,
            Self::Throughput | Self::Goodput => ThresholdUnit::PerSecond,
            Self::Requests => ThresholdUnit::Count,
        }
    }
}

/// Which part of the results a threshold looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// One scenario.
    Scenario(String),
    /// Steps of this name.
    Step(String),
    /// One ladder phase (by name or 1-based number).
    Phase(String),
}

/// The statistic compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stat {
    /// A percentile, 0–100.
    Percentile(f64),
    /// The mean.
    Mean,
    /// The minimum.
    Min,
    /// The maximum.
    Max,
    /// The metric's own value (a rate, a throughput, a count).
    Value,
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
}

/// One parsed threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// The metric key as written, e.g. `latency{step=get_task}`.
    pub metric_text: String,
    /// The condition as written, e.g. `p95 < 5ms`.
    pub condition_text: String,
    /// What is measured.
    pub metric: ThresholdMetric,
    /// Which part of the results.
    pub filter: Option<Filter>,
    /// The statistic.
    pub stat: Stat,
    /// The comparison.
    pub op: Op,
    /// The bound, in the metric's unit (ms, ratio 0–1, req/s, count).
    pub bound: f64,
    /// Stop the run as soon as this fails (after the grace period).
    pub abort_on_fail: bool,
    /// With `abort_on_fail`: no evaluation before this much of the run has passed.
    pub grace: Duration,
}

impl Op {
    /// Whether `observed op bound` holds.
    pub fn holds(self, observed: f64, bound: f64) -> bool {
        match self {
            Op::Lt => observed < bound,
            Op::Le => observed <= bound,
            Op::Gt => observed > bound,
            Op::Ge => observed >= bound,
            Op::Eq => (observed - bound).abs() < 1e-9,
        }
    }
}

/// Why a threshold's metric key or condition does not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ThresholdError {
    /// `name{…` without the closing brace.
    #[error("`{0}`: the filter must end with `}}`")]
    UnclosedFilter(String),
    /// A metric volley does not know.
    #[error("unknown metric `{0}`; use latency, errors, checks, rps or requests")]
    UnknownMetric(String),
    /// A filter that is not `key=value`.
    #[error("`{0}`: a filter is `key=value`")]
    FilterNotKeyValue(String),
    /// A filter key volley does not know.
    #[error("unknown filter `{0}`; use scenario=, step= or phase=")]
    UnknownFilter(String),
    /// No `<`, `>` or `=` in the condition.
    #[error("`{0}`: expected a comparison like `p95 < 5ms`")]
    NoComparison(String),
    /// A comparison that is none of `<`, `<=`, `>`, `>=`, `==`.
    #[error("`{0}`: unknown comparison")]
    UnknownComparison(String),
    /// `pX` where X is not a number.
    #[error("`{text}`: `{stat}` is not a percentile like p95 or p(99.9)")]
    NotPercentile {
        /// The condition.
        text: String,
        /// The statistic as written.
        stat: String,
    },
    /// A percentile outside 0–100.
    #[error("`{text}`: percentile {percentile} is not within 0–100")]
    PercentileRange {
        /// The condition.
        text: String,
        /// The percentile.
        percentile: f64,
    },
    /// A latency condition on something that is not a latency statistic.
    #[error(
        "`{text}`: `{stat}` is not a latency statistic; use p95, p(99.9), avg, min, max or med"
    )]
    NotLatencyStatistic {
        /// The condition.
        text: String,
        /// The statistic as written.
        stat: String,
    },
    /// A statistic the metric does not have.
    #[error("`{text}`: `{stat}` does not apply to this metric")]
    StatisticNotApplicable {
        /// The condition.
        text: String,
        /// The statistic as written.
        stat: String,
    },
    /// The bound does not parse.
    #[error("`{text}`: {why}")]
    Bound {
        /// The condition.
        text: String,
        /// Why.
        why: BoundError,
    },
}

/// Why a threshold's bound does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoundError {
    /// A latency bound that is not a duration.
    #[error("`{0}` is not a duration like 5ms or 1.5s")]
    NotDuration(String),
    /// A rate bound that is not a rate.
    #[error("`{0}` is not a rate like 1% or 0.01")]
    NotRate(String),
    /// A rate above 100 % or below 0.
    #[error("`{0}` is not a rate between 0% and 100%")]
    RateRange(String),
    /// A bare number as a rate where a percentage was surely meant: above 1 (100 %), or an
    /// error rate below 1, which never fails.
    #[error(
        "`{0}` reads as a fraction, where 1 is 100 %: write `{0}%` for per cent, or a fraction \
         like 0.01"
    )]
    WholeRate(String),
    /// A count or throughput bound that is not a number.
    #[error("`{0}` is not a number")]
    NotNumber(String),
    /// A bound below zero: no latency, rate or count is, so the threshold could never (or
    /// always) hold.
    #[error("`{0}` is below zero, where no figure is")]
    Negative(String),
}

/// Parses a metric key: `name` or `name{key=value}`.
pub fn parse_metric(text: &str) -> Result<(ThresholdMetric, Option<Filter>), ThresholdError> {
    let text = text.trim();
    let (name, filter) = match text.find('{') {
        Some(i) => {
            let inner = text[i + 1..]
                .strip_suffix('}')
                .ok_or_else(|| ThresholdError::UnclosedFilter(text.into()))?;
            (&text[..i], Some(inner))
        }
        None => (text, None),
    };
    let metric = match name.trim() {
        "latency" | "http_req_duration" => ThresholdMetric::Latency,
        "errors" | "error_rate" | "http_req_failed" => ThresholdMetric::ErrorRate,
        "checks" => ThresholdMetric::CheckRate,
        "rps" | "throughput" => ThresholdMetric::Throughput,
        "requests" => ThresholdMetric::Requests,
        "ttft" | "ttft_ms" | "time_to_first_token" => ThresholdMetric::Ttft,
        "message_gap" | "message_gap_ms" | "itl" | "inter_token_latency" => {
            ThresholdMetric::MessageGap
        }
        "tpot" | "tpot_ms" | "time_per_output_token" => ThresholdMetric::Tpot,
        "round_trip" | "round_trip_ms" | "rtt" => ThresholdMetric::RoundTrip,
        "goodput" | "goodput_rps" => ThresholdMetric::Goodput,
        other => {
            return Err(ThresholdError::UnknownMetric(other.into()));
        }
    };
    let filter = match filter {
        None => None,
        Some(inner) => {
            let (key, value) = inner
                .split_once('=')
                .ok_or_else(|| ThresholdError::FilterNotKeyValue(text.into()))?;
            let value = value.trim().trim_matches('"').to_string();
            Some(match key.trim() {
                "scenario" => Filter::Scenario(value),
                "step" => Filter::Step(value),
                "phase" => Filter::Phase(value),
                other => {
                    return Err(ThresholdError::UnknownFilter(other.into()));
                }
            })
        }
    };
    Ok((metric, filter))
}

/// Parses a condition for `metric`: `p95 < 5ms`, `p(99.9) <= 1s`, `avg < 3ms`, `rate < 1%`,
/// `> 100`, `count >= 1000`.
pub fn parse_condition(
    metric: ThresholdMetric,
    text: &str,
) -> Result<(Stat, Op, f64), ThresholdError> {
    let (stat, op, bound) = parse_recorded_condition(metric, text)?;
    // `errors < 1` read as a fraction never fails: a percentage was meant (`errors == 1`, every
    // request failing, is a fraction as written).
    let value_text = text.trim().trim_start_matches(|c| !"<>=".contains(c));
    let value_text = value_text.trim_start_matches(['<', '>', '=']).trim();
    let never_fails = matches!(op, Op::Lt | Op::Le) && !value_text.ends_with('%');
    let why = match bound {
        b if b < 0.0 => Some(BoundError::Negative(value_text.into())),
        1.0 if metric == ThresholdMetric::ErrorRate && never_fails => {
            Some(BoundError::WholeRate(value_text.into()))
        }
        _ => None,
    };
    match why {
        Some(why) => Err(ThresholdError::Bound {
            text: text.into(),
            why,
        }),
        None => Ok((stat, op, bound)),
    }
}

/// [`parse_condition`] for a condition a record holds, judged again (a merge of shares): what
/// the run was given is taken as written, even a bound this build refuses in a plan as a
/// likely slip (`errors < 1`, a fraction of 1 that never fails, accepted by older builds).
pub fn parse_recorded_condition(
    metric: ThresholdMetric,
    text: &str,
) -> Result<(Stat, Op, f64), ThresholdError> {
    let t = text.trim();
    let op_at = t
        .find(['<', '>', '='])
        .ok_or_else(|| ThresholdError::NoComparison(text.into()))?;
    let (stat_text, rest) = t.split_at(op_at);
    let (op, value_text) = [
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("==", Op::Eq),
        ("<", Op::Lt),
        (">", Op::Gt),
    ]
    .into_iter()
    .find_map(|(sym, op)| rest.strip_prefix(sym).map(|v| (op, v)))
    .ok_or_else(|| ThresholdError::UnknownComparison(text.into()))?;
    let stat_text = stat_text.trim();
    let distribution = metric.is_distribution();
    let stat = match (metric, stat_text) {
        (_, "avg" | "mean") if distribution => Stat::Mean,
        (_, "min") if distribution => Stat::Min,
        (_, "max") if distribution => Stat::Max,
        (_, "med" | "median") if distribution => Stat::Percentile(50.0),
        (_, s) if distribution && s.starts_with('p') => {
            let p = s[1..].trim().trim_start_matches('(').trim_end_matches(')');
            let p: f64 = p.parse().map_err(|_| ThresholdError::NotPercentile {
                text: text.into(),
                stat: s.into(),
            })?;
            if !(0.0..=100.0).contains(&p) {
                return Err(ThresholdError::PercentileRange {
                    text: text.into(),
                    percentile: p,
                });
            }
            Stat::Percentile(p)
        }
        (_, s) if distribution => {
            return Err(ThresholdError::NotLatencyStatistic {
                text: text.into(),
                stat: s.into(),
            });
        }
        (ThresholdMetric::ErrorRate | ThresholdMetric::CheckRate, "" | "rate") => Stat::Value,
        (ThresholdMetric::Throughput | ThresholdMetric::Goodput, "" | "rate" | "rps") => {
            Stat::Value
        }
        (ThresholdMetric::Requests, "" | "count") => Stat::Value,
        (_, s) => {
            return Err(ThresholdError::StatisticNotApplicable {
                text: text.into(),
                stat: s.into(),
            });
        }
    };
    let value_text = value_text.trim();
    let refused = |why| ThresholdError::Bound {
        text: text.into(),
        why,
    };
    let bound = parse_value(metric, value_text).map_err(refused)?;
    Ok((stat, op, bound))
}

fn parse_value(metric: ThresholdMetric, v: &str) -> Result<f64, BoundError> {
    match metric {
        ThresholdMetric::Latency
        | ThresholdMetric::Ttft
        | ThresholdMetric::MessageGap
        | ThresholdMetric::Tpot
        | ThresholdMetric::RoundTrip => {
            let (number, scale) = if let Some(n) = v.strip_suffix("ms") {
                (n, 1.0)
            } else if let Some(n) = v.strip_suffix("us").or_else(|| v.strip_suffix("µs")) {
                (n, 0.001)
            } else if let Some(n) = v.strip_suffix('s') {
                (n, 1000.0)
            } else {
                (v, 1.0)
            };
            let n: f64 = number
                .trim()
                .parse()
                .map_err(|_| BoundError::NotDuration(v.into()))?;
            Ok(n * scale)
        }
        ThresholdMetric::ErrorRate | ThresholdMetric::CheckRate => {
            let (number, scale) = match v.strip_suffix('%') {
                Some(n) => (n, 0.01),
                None => (v, 1.0),
            };
            let n: f64 = number
                .trim()
                .parse()
                .map_err(|_| BoundError::NotRate(v.into()))?;
            let rate = n * scale;
            // A bare 5 is 5 %, surely (`errors<1` is judged with its operator, in
            // `parse_condition`).
            if scale == 1.0 && n > 1.0 && n <= 100.0 {
                return Err(BoundError::WholeRate(v.into()));
            }
            if !(0.0..=1.0).contains(&rate) {
                return Err(BoundError::RateRange(v.into()));
            }
            Ok(rate)
        }
        ThresholdMetric::Throughput | ThresholdMetric::Requests | ThresholdMetric::Goodput => {
            v.parse().map_err(|_| BoundError::NotNumber(v.into()))
        }
    }
}

/// What a threshold can observe; implemented over a finished record and over live run data.
pub trait Observed {
    /// Latency histogram (µs) of the filtered part, if anything was measured.
    fn latency(&self, filter: Option<&Filter>) -> Option<Histogram<u64>>;
    /// Requests, attempts and errors of the filtered part.
    fn counts(&self, filter: Option<&Filter>) -> Counts;
    /// (passed, failed) checks of the filtered part.
    fn checks(&self, filter: Option<&Filter>) -> (u64, u64);
    /// Throughput of the filtered part over its own window, requests per second
    /// (docs/measurement.md, "Rates"); `None` when it has no window yet.
    fn throughput(&self, filter: Option<&Filter>) -> Option<f64>;
    /// The streams of the filtered part, when it has streaming steps. Only a finished record
    /// answers: stream thresholds are judged at the end, never live.
    fn streams(&self, _filter: Option<&Filter>) -> Option<StreamsObserved> {
        None
    }
}

/// What a threshold reads of a part's streams.
#[derive(Debug, Clone)]
pub struct StreamsObserved {
    /// Their histograms and counts.
    pub stats: crate::record::recorder::StreamStats,
    /// Their goodput, streams per second (none without objectives).
    pub goodput_rps: Option<f64>,
}

/// What a threshold counts (docs/measurement.md, "Counts").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests that reached the network.
    pub requests: u64,
    /// Attempts: requests and attempts never sent.
    pub attempts: u64,
    /// Failed attempts.
    pub errors: u64,
    /// Of the failed attempts, those the generator itself could not make: in no error rate.
    pub generator_limited: u64,
}

impl Counts {
    /// The counts a threshold reads from a recorder's counters.
    pub fn of(c: &crate::record::recorder::Counters) -> Self {
        Self {
            requests: c.requests,
            attempts: c.attempts(),
            errors: c.errors,
            generator_limited: c.generator_limited,
        }
    }
}

impl Threshold {
    /// The observed value in the condition's unit; `None` when nothing was measured.
    pub fn observe(&self, o: &dyn Observed) -> Option<f64> {
        let f = self.filter.as_ref();
        let streams = || o.streams(f);
        match self.metric {
            ThresholdMetric::Latency => self.of_distribution(&o.latency(f)?),
            ThresholdMetric::Ttft => self.of_distribution(&streams()?.stats.first),
            ThresholdMetric::MessageGap => self.of_distribution(&streams()?.stats.gap),
            ThresholdMetric::Tpot => self.of_distribution(&streams()?.stats.per_token),
            ThresholdMetric::RoundTrip => self.of_distribution(&streams()?.stats.round_trip),
            ThresholdMetric::Goodput => streams()?.goodput_rps,
            ThresholdMetric::ErrorRate => {
                let c = o.counts(f);
                crate::record::model::error_share(
                    c.attempts - c.generator_limited,
                    c.errors - c.generator_limited,
                )
            }
            ThresholdMetric::CheckRate => {
                let (passed, failed) = o.checks(f);
                (passed + failed > 0).then(|| passed as f64 / (passed + failed) as f64)
            }
            ThresholdMetric::Throughput => o.throughput(f),
            ThresholdMetric::Requests => Some(o.counts(f).requests as f64),
        }
    }

    /// The condition's statistic of `h` (µs), in ms; `None` when it is empty.
    fn of_distribution(&self, h: &Histogram<u64>) -> Option<f64> {
        if h.is_empty() {
            return None;
        }
        let us = match self.stat {
            Stat::Percentile(p) => h.value_at_quantile(p / 100.0) as f64,
            Stat::Mean => h.mean(),
            Stat::Min => h.min() as f64,
            Stat::Max => h.max() as f64,
            Stat::Value => return None,
        };
        Some(us / 1000.0)
    }

    /// Whether the threshold holds; nothing measured counts as failed (a threshold on a step
    /// that never ran must not pass silently).
    pub fn passes(&self, observed: Option<f64>) -> bool {
        observed.is_some_and(|v| self.op.holds(v, self.bound))
    }
}

#[cfg(test)]
mod tests;
