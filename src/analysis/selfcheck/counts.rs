//! Count checks: requests, responses, errors and the latency histograms agree, for the run and
//! for each of its groups; the per-second series adds up to the run.

use std::collections::BTreeMap;

use super::{failed, passed};
use crate::record::decode_histogram;
use crate::record::error_kind::ErrorKind;
use crate::record::model::{GroupKind, RunRecord};
use crate::record::selfcheck::{SelfCheck, SelfCheckCode};

/// The counts of one place of a record: the run, or one group.
pub(super) struct Counted<'a> {
    /// "the run", "step get_task (scenario shop)".
    pub place: String,
    /// Attempts: requests and attempts that never left the machine.
    pub attempts: u64,
    pub errors: u64,
    pub status: &'a BTreeMap<String, u64>,
    pub errors_by_kind: &'a BTreeMap<ErrorKind, u64>,
    /// The place's latency histogram (HDR V2, base64, µs).
    pub histogram: &'a str,
}

/// The run, then every group, in record order.
pub(super) fn places(r: &RunRecord) -> Vec<Counted<'_>> {
    let s = &r.summary;
    let run = Counted {
        place: "the run".into(),
        attempts: s.requests + s.not_sent,
        errors: s.errors,
        status: &s.status,
        errors_by_kind: &s.errors_by_kind,
        histogram: &r.histograms.latency_us,
    };
    std::iter::once(run)
        .chain(r.groups.iter().map(|g| Counted {
            place: group_place(g.kind, &g.name, g.scenario.as_deref()),
            attempts: g.requests + g.not_sent,
            errors: g.errors,
            status: &g.status,
            errors_by_kind: &g.errors_by_kind,
            histogram: &g.histogram_us,
        }))
        .collect()
}

/// A group named for people: "step get_task (scenario shop)".
pub(super) fn group_place(kind: GroupKind, name: &str, scenario: Option<&str>) -> String {
    let kind = kind.word();
    match scenario {
        Some(sc) => format!("{kind} {name} (scenario {sc})"),
        None => format!("{kind} {name}"),
    }
}

/// Failures without a response in a place's error kinds.
pub(super) fn without_response(errors_by_kind: &BTreeMap<ErrorKind, u64>) -> u64 {
    errors_by_kind
        .iter()
        .filter(|(kind, _)| !kind.has_response())
        .map(|(_, n)| n)
        .sum()
}

/// Responses of a place: the sum of its status counts.
fn responses(status: &BTreeMap<String, u64>) -> u64 {
    status.values().sum()
}

/// Requests = responses (Σ status) + failures without a response.
pub(super) fn requests_add_up(r: &RunRecord) -> SelfCheck {
    let code = SelfCheckCode::RequestsAddUp;
    let places = places(r);
    for p in &places {
        let without = without_response(p.errors_by_kind);
        let responses = responses(p.status);
        if p.attempts != responses + without {
            return failed(
                code,
                &[
                    ("attempts", p.attempts as f64),
                    ("responses", responses as f64),
                    ("failed_without_response", without as f64),
                ],
                format!(
                    "the counts do not add up: {} has {} attempts, but {responses} responses \
                     (its status counts) and {without} failures without a response make {}",
                    p.place,
                    p.attempts,
                    responses + without
                ),
            );
        }
    }
    let s = &r.summary;
    let responses = responses(&s.status);
    passed(
        code,
        &[
            ("attempts", (s.requests + s.not_sent) as f64),
            ("responses", responses as f64),
            (
                "failed_without_response",
                (s.requests + s.not_sent).saturating_sub(responses) as f64,
            ),
        ],
        format!(
            "attempts = responses + failures without a response, for the run{}",
            groups_too(places.len())
        ),
    )
}

fn groups_too(places: usize) -> String {
    match places {
        0 | 1 => String::new(),
        n => format!(" and each of its {} groups", n - 1),
    }
}

/// Requests with a status in `range`, e.g. every 4xx (also for `volley verify`).
pub(crate) fn with_status(
    status: &BTreeMap<String, u64>,
    range: std::ops::RangeInclusive<u16>,
) -> u64 {
    status
        .iter()
        .filter(|(code, _)| code.parse::<u16>().is_ok_and(|c| range.contains(&c)))
        .map(|(_, n)| n)
        .sum()
}

/// Errors = Σ error kinds ≤ requests, and 4xx (5xx) errors ≤ 4xx (5xx) statuses.
pub(super) fn errors_add_up(r: &RunRecord) -> SelfCheck {
    let code = SelfCheckCode::ErrorsAddUp;
    let places = places(r);
    for p in &places {
        let by_kind: u64 = p.errors_by_kind.values().sum();
        let kind = |k: ErrorKind| p.errors_by_kind.get(&k).copied().unwrap_or(0);
        let problem = if p.errors != by_kind {
            Some(format!(
                "{} errors, but its error kinds add up to {by_kind}",
                p.errors
            ))
        } else if p.errors > p.attempts {
            Some(format!("more errors than its {} attempts", p.attempts))
        } else if kind(ErrorKind::Http4xx) > with_status(p.status, 400..=499) {
            Some("more http_4xx errors than 4xx statuses".into())
        } else if kind(ErrorKind::Http5xx) > with_status(p.status, 500..=599) {
            Some("more http_5xx errors than 5xx statuses".into())
        } else {
            None
        };
        if let Some(problem) = problem {
            return failed(
                code,
                &[
                    ("errors", p.errors as f64),
                    ("errors_by_kind", by_kind as f64),
                    ("attempts", p.attempts as f64),
                ],
                format!("the error counts do not add up: {} has {problem}", p.place),
            );
        }
    }
    let s = &r.summary;
    passed(
        code,
        &[
            ("errors", s.errors as f64),
            (
                "errors_by_kind",
                s.errors_by_kind.values().sum::<u64>() as f64,
            ),
            ("attempts", (s.requests + s.not_sent) as f64),
        ],
        format!(
            "errors = the sum of their kinds, within the attempts and the statuses, for the run{}",
            groups_too(places.len())
        ),
    )
}

/// Each latency histogram holds one value per response.
pub(super) fn histogram_matches_responses(r: &RunRecord) -> SelfCheck {
    let code = SelfCheckCode::HistogramMatchesResponses;
    let places = places(r);
    for p in &places {
        let responses = responses(p.status);
        let values = match decode_histogram(p.histogram) {
            Ok(h) => h.len(),
            Err(why) => {
                return failed(
                    code,
                    &[("responses", responses as f64)],
                    format!("the latency histogram of {} is unreadable: {why}", p.place),
                );
            }
        };
        if values != responses {
            return failed(
                code,
                &[
                    ("responses", responses as f64),
                    ("histogram_values", values as f64),
                ],
                format!(
                    "the latency figures do not match the counts: the histogram of {} holds \
                     {values} latencies for {responses} responses",
                    p.place
                ),
            );
        }
    }
    let responses = responses(&r.summary.status);
    passed(
        code,
        &[
            ("responses", responses as f64),
            ("histogram_values", responses as f64),
        ],
        format!(
            "one latency per response in the histogram of the run{}",
            groups_too(places.len())
        ),
    )
}

/// The per-second series adds up to the run's requests and errors.
pub(super) fn series_adds_up(r: &RunRecord) -> SelfCheck {
    let code = SelfCheckCode::SeriesAddsUp;
    let s = &r.summary;
    let requests: u64 = r.series.iter().map(|x| x.requests).sum();
    let errors: u64 = r.series.iter().map(|x| x.errors).sum();
    let figures = [
        ("requests", s.requests as f64),
        ("series_requests", requests as f64),
        ("errors", s.errors as f64),
        ("series_errors", errors as f64),
    ];
    if requests == s.requests && errors == s.errors {
        passed(
            code,
            &figures,
            format!(
                "the {} seconds of the series add up to the run's requests and errors",
                r.series.len()
            ),
        )
    } else {
        failed(
            code,
            &figures,
            format!(
                "the per-second series does not add up: its seconds hold {requests} requests \
                 and {errors} errors, the run {} and {}",
                s.requests, s.errors
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;
    use crate::record::selfcheck::SelfCheckOutcome::{Failed, Passed};

    /// A record with 7 timeouts (no response) on top of its responses.
    fn with_timeouts() -> RunRecord {
        let mut r = record("t", 3, 100, 2000, 5, 0.0);
        r.summary.requests += 7;
        r.summary.errors += 7;
        r.summary.errors_by_kind.insert(ErrorKind::Timeout, 7);
        r.series[0].requests += 7;
        r.series[0].errors += 7;
        r
    }

    #[test]
    fn requests_add_up_counts_failures_without_a_response() {
        let r = with_timeouts();
        let c = requests_add_up(&r);
        assert_eq!(c.outcome, Passed, "{c:?}");
        assert_eq!(c.figures["failed_without_response"], 7.0);
        assert_eq!(c.figures["responses"], 300.0);
    }

    #[test]
    fn requests_that_do_not_add_up_fail() {
        let mut r = with_timeouts();
        r.summary.requests += 1;
        let c = requests_add_up(&r);
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!(
            c.message.contains("the run has 308 attempts"),
            "{}",
            c.message
        );
        // A group's counts are checked too.
        let mut r = with_timeouts();
        let mut g = super::super::testing::group(GroupKind::Step, "get", Some("shop"), 300);
        g.status.insert("200".into(), 299);
        r.groups.push(g);
        let c = requests_add_up(&r);
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!(c.message.contains("step get"), "{}", c.message);
    }

    #[test]
    fn errors_must_equal_their_kinds_and_fit_the_statuses() {
        let r = with_timeouts();
        assert_eq!(errors_add_up(&r).outcome, Passed);
        let mut bad = r.clone();
        bad.summary.errors -= 1;
        let c = errors_add_up(&bad);
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!(c.message.contains("error kinds add up to"), "{}", c.message);
        let mut bad = r.clone();
        bad.summary.status.remove("500");
        bad.summary.status.insert("200".into(), 300);
        let c = errors_add_up(&bad);
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!(c.message.contains("http_5xx"), "{}", c.message);
    }

    #[test]
    fn the_histogram_must_hold_one_latency_per_response() {
        let r = with_timeouts();
        assert_eq!(histogram_matches_responses(&r).outcome, Passed);
        let mut bad = r.clone();
        *bad.summary.status.get_mut("200").unwrap() += 1;
        let c = histogram_matches_responses(&bad);
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert_eq!(c.figures["histogram_values"], 300.0);
        assert_eq!(c.figures["responses"], 301.0);
        bad.histograms.latency_us = "!!".into();
        assert_eq!(histogram_matches_responses(&bad).outcome, Failed);
    }

    #[test]
    fn the_series_must_add_up_to_the_run() {
        let r = with_timeouts();
        assert_eq!(series_adds_up(&r).outcome, Passed);
        let mut bad = r.clone();
        bad.series.pop();
        let c = series_adds_up(&bad);
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!(c.message.contains("does not add up"), "{}", c.message);
    }
}
