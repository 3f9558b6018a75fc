//! Little's law in the closed model: the requests in flight on average, throughput × mean
//! latency, must match the VUs the profile kept busy. Each closed-model VU always has one
//! request in flight, except while it thinks (a step's think time) and while the generator works
//! between a response and its next request (checks, extraction, templates, waiting for a CPU).
//! Think time is known from the plan; what is left of the gap is the generator's.
//!
//! Over the measured window of `T` seconds (`summary.duration_s`):
//!
//! - busy VU-seconds = Σ latency of the responses = responses × mean latency;
//! - active VU-seconds = ∫ over the window of the VUs the profile keeps active (the rule of
//!   `engine::gate::ClosedGate`: VU `i` runs while the ramp's level is at least `i + 1`, until the
//!   ramp's end or the scenario's end);
//! - think VU-seconds = Σ over steps of its think time × its measured requests (a request whose
//!   template failed never thinks);
//! - in flight = busy / T; expected = (active − think) / T; VUs = active / T;
//! - gap = (expected − in flight) / VUs, the share of the VUs' time spent neither in a request
//!   nor thinking; the check passes while |gap| ≤ [`LITTLES_LAW_TOLERANCE`]. Without think time
//!   this is throughput × mean latency against the VUs, within 10 %.
//!
//! Each VU's first and last request straddle the window's edges, so the relation holds to about
//! one request per VU: the check needs [`MIN_REQUESTS_PER_VU`] of them, and the requests in
//! flight at the end (they count whole, after the end too) must be short against the window
//! ([`MAX_EDGE_SHARE`]).

use hdrhistogram::Histogram;

use super::counts::without_response;
use super::{failed, not_applicable, passed};
use crate::record::decode_histogram;
use crate::record::model::RunRecord;
use crate::record::selfcheck::{SelfCheck, SelfCheckCode};

/// Largest share of the VUs' time that may be unaccounted for (neither in a request nor
/// thinking), either way, 0–1.
pub const LITTLES_LAW_TOLERANCE: f64 = 0.10;
/// Fewest measured requests per VU for the window's edges to weigh little enough.
const MIN_REQUESTS_PER_VU: f64 = 20.0;
/// Longest mean remaining time of the request a VU has in flight at the window's end (the
/// length-biased half mean, E[L²] / 2E[L]), as a share of the window: a heavy tail makes the
/// requests straddling the end long, and their time after it counts.
const MAX_EDGE_SHARE: f64 = 0.05;
/// Largest share of the active VU-seconds that failures without a response may hide (their time
/// in flight is not recorded; each is bounded by the request timeout).
const UNRECORDED_SHARE: f64 = 0.01;
/// What the profile made the VUs do during the measured window (from the plan).
#[derive(Debug, Clone, PartialEq)]
pub enum ExpectedLoad {
    /// A closed-model run whose VU time can be accounted for.
    Closed {
        /// VU-seconds the profile kept active over the measured window.
        active_vu_s: f64,
        /// VU-seconds the measured requests spent in think time.
        think_vu_s: f64,
    },
    /// Little's law cannot be checked honestly on this run: why.
    NotApplicable(String),
}

/// The mean remaining latency of the request in flight at a random instant, E[L²] / 2E[L],
/// seconds (bins at their middle value, as the histogram's mean).
fn mean_residual_s(h: &Histogram<u64>) -> f64 {
    let (mut sum, mut squares) = (0.0, 0.0);
    for v in h.iter_recorded() {
        let value = h.median_equivalent(v.value_iterated_to()) as f64 / 1e6;
        let n = v.count_since_last_iteration() as f64;
        sum += value * n;
        squares += value * value * n;
    }
    if sum > 0.0 {
        squares / (2.0 * sum)
    } else {
        0.0
    }
}

/// Why the run's own figures rule the check out, if they do.
fn ruled_out(r: &RunRecord, active_vu_s: f64, h: &Histogram<u64>) -> Option<String> {
    let responses = h.len();
    if let Some(signal) = &r.interrupted {
        return Some(format!(
            "the run was interrupted ({signal}): requests in flight then were abandoned unrecorded"
        ));
    }
    if r.thresholds.iter().any(|t| t.aborted) {
        return Some(
            "a threshold stopped the run early: requests in flight then were abandoned \
             unrecorded"
                .into(),
        );
    }
    if responses == 0 || active_vu_s <= 0.0 || r.summary.duration_s <= 0.0 {
        return Some("no response was measured".into());
    }
    let without = without_response(&r.summary.errors_by_kind);
    if without as f64 * r.config.timeout_s > UNRECORDED_SHARE * active_vu_s {
        return Some(format!(
            "{without} requests failed without a response: their time in flight (up to the \
             {} s timeout each) is not recorded",
            r.config.timeout_s
        ));
    }
    let per_vu = r.summary.requests as f64 / (active_vu_s / r.summary.duration_s);
    if per_vu < MIN_REQUESTS_PER_VU {
        return Some(format!(
            "only {per_vu:.1} requests per VU: the first and last request of each VU, which \
             straddle the window's edges, weigh too much"
        ));
    }
    let residual = mean_residual_s(h);
    if residual > MAX_EDGE_SHARE * r.summary.duration_s {
        return Some(format!(
            "the requests are long against the {:.1} s window (a request in flight has {:.0} ms \
             left on average, a heavy tail): those straddling its end weigh too much",
            r.summary.duration_s,
            residual * 1e3
        ));
    }
    None
}

/// Little's law: throughput × mean latency against the VUs the profile kept busy.
pub(super) fn check(r: &RunRecord, load: &ExpectedLoad) -> SelfCheck {
    let code = SelfCheckCode::LittlesLaw;
    let (active_vu_s, think_vu_s) = match load {
        ExpectedLoad::Closed {
            active_vu_s,
            think_vu_s,
        } => (*active_vu_s, *think_vu_s),
        ExpectedLoad::NotApplicable(why) => return not_applicable(code, why.clone()),
    };
    let Ok(h) = decode_histogram(&r.histograms.latency_us) else {
        return not_applicable(code, "the latency histogram is unreadable".into());
    };
    if let Some(why) = ruled_out(r, active_vu_s, &h) {
        return not_applicable(code, why);
    }
    let t = r.summary.duration_s;
    // The histogram's mean, as `summary.latency_ms.mean`; its count is the responses'.
    let mean_s = h.mean() / 1e6;
    let throughput = h.len() as f64 / t;
    let in_flight = throughput * mean_s;
    let vus = active_vu_s / t;
    let thinking = think_vu_s / t;
    let expected = vus - thinking;
    if expected <= 0.0 {
        return not_applicable(code, "the VUs spent all their time thinking".into());
    }
    // The share of the VUs' time neither in requests nor thinking: the generator's.
    let gap = (expected - in_flight) / vus;
    let figures = [
        ("window_s", t),
        ("responses_per_sec", throughput),
        ("mean_latency_ms", mean_s * 1e3),
        ("in_flight", in_flight),
        ("vus", vus),
        ("thinking", thinking),
        ("in_flight_expected", expected),
        ("gap_pct", gap * 100.0),
    ];
    let measured = format!(
        "throughput × mean latency = {throughput:.1} responses/s × {:.3} ms = {in_flight:.2} \
         requests in flight on average",
        mean_s * 1e3
    );
    let kept = if thinking > 0.0 {
        format!(
            "{vus:.2} VUs, {thinking:.2} of them thinking on average, should keep {expected:.2}"
        )
    } else {
        format!("the profile's {vus:.2} VUs on average should keep {expected:.2}")
    };
    if gap.abs() <= LITTLES_LAW_TOLERANCE {
        return passed(
            code,
            &figures,
            format!(
                "{measured}; {kept}: the VUs' time unaccounted for is {:.1} % (within ±{:.0} %)",
                gap * 100.0,
                LITTLES_LAW_TOLERANCE * 100.0
            ),
        );
    }
    let message = if gap > 0.0 {
        format!(
            "Little's law: {measured}, but {kept}: {:.0} % of the VUs' time went by inside the \
             generator (between a response and the next request: checks, extraction, templates, \
             waiting for a CPU), not in requests; the target saw less concurrency than \
             configured and the throughput is partly the generator's",
            gap * 100.0
        )
    } else {
        format!(
            "Little's law: {measured}, more than {kept} (by {:.0} % of the VUs' time): the \
             figures are inconsistent (a latency, a count or the window is wrong)",
            -gap * 100.0
        )
    };
    failed(code, &figures, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;
    use crate::record::selfcheck::SelfCheckOutcome::{Failed, NotApplicable, Passed};

    /// 5 s at 1000 responses/s of ~2 ms: 2 requests in flight on average.
    fn two_in_flight() -> RunRecord {
        record("little", 5, 1000, 2000, 0, 0.0)
    }

    fn closed(vus: f64, thinking: f64) -> ExpectedLoad {
        ExpectedLoad::Closed {
            active_vu_s: vus * 5.0,
            think_vu_s: thinking * 5.0,
        }
    }

    #[test]
    fn holds_when_the_vus_match_throughput_times_latency() {
        let c = check(&two_in_flight(), &closed(2.0, 0.0));
        assert_eq!(c.outcome, Passed, "{c:?}");
        assert!((c.figures["in_flight"] - 2.0).abs() < 0.01, "{c:?}");
        assert!((c.figures["responses_per_sec"] - 1000.0).abs() < 1e-9);
    }

    #[test]
    fn a_gap_is_time_inside_the_generator() {
        let c = check(&two_in_flight(), &closed(8.0, 0.0));
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!((c.figures["gap_pct"] - 75.0).abs() < 0.5, "{c:?}");
        assert!(c.message.contains("75 % of the VUs' time"), "{}", c.message);
        assert!(c.message.contains("inside the generator"), "{}", c.message);
    }

    #[test]
    fn think_time_is_accounted_for() {
        let c = check(&two_in_flight(), &closed(8.0, 6.0));
        assert_eq!(c.outcome, Passed, "{c:?}");
        assert!(c.message.contains("6.00 of them thinking"), "{}", c.message);
        // Thinking less than that leaves a gap: the generator's.
        assert_eq!(check(&two_in_flight(), &closed(8.0, 5.0)).outcome, Failed);
    }

    #[test]
    fn more_in_flight_than_vus_is_an_inconsistency() {
        let c = check(&two_in_flight(), &closed(1.5, 0.0));
        assert_eq!(c.outcome, Failed, "{c:?}");
        assert!(c.message.contains("inconsistent"), "{}", c.message);
    }

    #[test]
    fn runs_that_cannot_be_judged_are_not_applicable() {
        let r = two_in_flight();
        let open = ExpectedLoad::NotApplicable("open model".into());
        assert_eq!(check(&r, &open).outcome, NotApplicable);
        let mut cut = r.clone();
        cut.interrupted = Some("SIGINT".into());
        assert_eq!(check(&cut, &closed(2.0, 0.0)).outcome, NotApplicable);
        // 50 timeouts of up to 10 s could hide 500 VU-s, more than 1 % of the 10 VU-s.
        let mut timeouts = r.clone();
        timeouts.summary.requests += 50;
        timeouts.summary.errors += 50;
        timeouts
            .summary
            .errors_by_kind
            .insert(crate::record::error_kind::ErrorKind::Timeout, 50);
        let c = check(&timeouts, &closed(2.0, 0.0));
        assert_eq!(c.outcome, NotApplicable, "{c:?}");
        assert!(c.message.contains("50 requests failed without a response"));
        // 5,000 requests over 500 VUs: 10 each, too few.
        let c = check(&r, &closed(500.0, 0.0));
        assert_eq!(c.outcome, NotApplicable, "{c:?}");
        // A heavy tail: 1 % of 2 s requests, a request in flight has ~0.95 s left on average.
        let mut tail = r.clone();
        let mut h = crate::record::recorder::new_histogram();
        h.record_n(2000, 4950).unwrap();
        h.record_n(2_000_000, 50).unwrap();
        tail.histograms.latency_us = crate::record::encode_histogram(&h);
        let c = check(&tail, &closed(22.0, 0.0));
        assert_eq!(c.outcome, NotApplicable, "{c:?}");
        assert!(c.message.contains("heavy tail"), "{}", c.message);
    }
}
