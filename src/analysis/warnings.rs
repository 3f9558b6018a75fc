//! Warnings about the run itself: when the figures say more about the load generator, the client
//! machine or the run's shape than about the target.

use crate::record::error_kind::ErrorKind;
use crate::record::model::{RunRecord, Warning, WarningCode};

/// A worker thread this busy (CPU over wall time) was likely the bottleneck.
pub const SATURATED_UTILIZATION: f64 = 0.90;
/// A worker thread's utilization is judged once it ran this long, s.
pub const SATURATED_MIN_WALL_S: f64 = 0.5;
/// Open model: send lag p99 above this means requests went out late, ms.
pub const LAG_P99_LIMIT_MS: f64 = 1.0;
/// A run whose machine lost this share of its CPU time to the hypervisor (CPU steal) is warned
/// about, 0–1 (docs/measurement.md, "The generator's own figures").
pub const STEAL_SHARE_LIMIT: f64 = 0.005;
/// The steal share when it reaches [`STEAL_SHARE_LIMIT`] (the `cpu_steal` warning's rule), else
/// `None`.
pub fn stolen(steal_share: Option<f64>) -> Option<f64> {
    steal_share.filter(|&s| s >= STEAL_SHARE_LIMIT)
}

/// Open model: achieved rate below this share of the requested one is flagged.
pub const RATE_SHORTFALL: f64 = 0.99;
/// One error kind this large a share of all errors is called out.
pub const DOMINANT_ERROR_SHARE: f64 = 0.5;

fn warn(code: WarningCode, message: String) -> Warning {
    Warning::new(code, message)
}

/// What the open model counts: requests when each iteration is one, else iterations.
fn unit(requests_per_iteration: Option<u32>) -> &'static str {
    if requests_per_iteration == Some(1) {
        "requests"
    } else {
        "iterations"
    }
}

/// Looks at a finished record and says what is wrong with the run, most important first.
pub fn diagnose(r: &RunRecord) -> Vec<Warning> {
    let mut out = Vec::new();
    how_it_ended(r, &mut out);
    generator(r, &mut out);
    arrival(r, &mut out);
    errors(r, &mut out);
    super::watch::warnings(r, &mut out);
    // Self-checks that failed, or that explain a misleading figure, after the run's own warnings.
    out.extend(
        r.self_checks
            .iter()
            .filter(|c| c.outcome.warns())
            .map(|c| warn(WarningCode::SelfCheck(c.code), c.message.clone())),
    );
    out
}

/// An interruption; no request, or every request failed.
fn how_it_ended(r: &RunRecord, out: &mut Vec<Warning>) {
    let s = &r.summary;
    if let Some(signal) = &r.interrupted {
        out.push(warn(
            WarningCode::Interrupted,
            format!(
                "the run was interrupted ({signal}) after {:.1} s; the figures cover only that part",
                s.duration_s
            ),
        ));
    }
    if s.requests + s.not_sent == 0 {
        out.push(warn(
            WarningCode::NoRequests,
            "no request completed in the measured part of the run".into(),
        ));
    } else if s.errors == s.requests + s.not_sent {
        out.push(warn(
            WarningCode::AllFailed,
            "every request failed; the figures describe failures, not the service".into(),
        ));
    }
}

/// The generator was the bottleneck: a saturated thread, or requests sent late; or the machine
/// lost CPU time to its hypervisor. A thread's utilization counts once it ran
/// [`SATURATED_MIN_WALL_S`]: over a shorter time, start-up alone can fill it.
fn generator(r: &RunRecord, out: &mut Vec<Warning>) {
    let busiest = r
        .generator
        .threads
        .iter()
        .filter(|t| t.wall_s >= SATURATED_MIN_WALL_S)
        .map(|t| t.utilization)
        .fold(0.0, f64::max);
    if busiest >= SATURATED_UTILIZATION {
        out.push(warn(
            WarningCode::GeneratorSaturated,
            format!(
                "a load-generator thread was {:.0}% busy: the generator, not the target, may have \
                 been the bottleneck; use more --threads, fewer connections, or another machine",
                busiest * 100.0
            ),
        ));
    }
    if let Some(lag_p99) = r.generator.lag_ms.and_then(|l| l.p99)
        && lag_p99 > LAG_P99_LIMIT_MS
    {
        out.push(warn(
            WarningCode::SchedulingLag,
            format!(
                "requests went out late against their schedule (lag p99 {lag_p99:.2} ms > \
                 {LAG_P99_LIMIT_MS} ms): latencies include that lag, as they count from when \
                 each request was due (the schedule_kept check fails past {} ms)",
                crate::analysis::selfcheck::LAG_LIMIT_MS
            ),
        ));
    }
    if let Some(share) = stolen(r.generator.steal_share) {
        out.push(warn(WarningCode::CpuSteal, steal_message(share)));
    }
}

/// What a run's CPU steal share means for its figures.
fn steal_message(share: f64) -> String {
    format!(
        "the hypervisor took {:.1}% of this machine's CPU time during the run (CPU steal): the \
         generator, and a target on the same machine, stood still while it did, so the figures \
         are slower and noisier than the machine's own and a rerun may differ by more than their \
         95 % intervals; measure on a machine without steal, or compare runs A B A B (`volley \
         ab`) so that both sides share it",
        share * 100.0
    )
}

/// Open model: iterations dropped at the in-flight cap, or the asked rate not achieved.
fn arrival(r: &RunRecord, out: &mut Vec<Warning>) {
    let s = &r.summary;
    if let Some(a) = s.arrival.filter(|a| a.dropped > 0) {
        let what = unit(a.requests_per_iteration);
        out.push(warn(
            WarningCode::DroppedRequests,
            format!(
                "{} {what} ({:.1}% of the {} due) were dropped because every VU was busy (the \
                 in-flight cap): {}",
                a.dropped,
                100.0 * a.dropped as f64 / a.due.max(1) as f64,
                a.due,
                busy_why(s)
            ),
        ));
    }
    if let Some(a) = s.arrival
        && s.duration_s > 0.0
        && r.interrupted.is_none()
        && (a.completed as f64) < a.due as f64 * RATE_SHORTFALL
    {
        let what = unit(a.requests_per_iteration);
        out.push(warn(
            WarningCode::RateNotAchieved,
            format!(
                "achieved {:.1} {what}/s of the {:.1} {what}/s the schedule asked for over the \
                 window ({:.1}%: {} of {} due completed in it; {} started, {} dropped, {} not \
                 started)",
                a.achieved_per_sec,
                a.asked_per_sec,
                100.0 * a.completed as f64 / a.due.max(1) as f64,
                a.completed,
                a.due,
                a.started,
                a.dropped,
                a.unsent
            ),
        ));
    }
}

/// Why every VU was busy: the target kept them, or — where attempts failed to connect or found
/// the generator out of ports — each such failure held its VU back before its next try
/// (docs/measurement.md, "Not sent"), which the target's speed does not explain.
fn busy_why(s: &crate::record::model::Summary) -> String {
    let held: u64 = s
        .errors_by_kind
        .iter()
        .filter(|(k, _)| k.backs_off())
        .map(|(_, n)| n)
        .sum();
    match held {
        0 => "the target did not keep up with the rate (raise -c or max_vus to queue them \
              instead)"
            .into(),
        n => format!(
            "{n} attempts failed to connect (or found the generator out of ports), and each \
             such failure holds its VU back before its next try, so the drops may be that wait \
             rather than the target's speed: see the errors"
        ),
    }
}

/// One error kind dominates; the client ran out of ephemeral ports.
fn errors(r: &RunRecord, out: &mut Vec<Warning>) {
    let s = &r.summary;
    if let Some((kind, count)) = s.errors_by_kind.iter().max_by_key(|(_, n)| **n)
        && s.errors > 0
        && *count as f64 >= DOMINANT_ERROR_SHARE * s.errors as f64
    {
        let hint = kind.hint();
        out.push(warn(
            WarningCode::DominantError,
            format!(
                "{count} of {} errors ({:.0}%) are {kind}: {hint}",
                s.errors,
                100.0 * *count as f64 / s.errors as f64
            ),
        ));
    }
    if let Some(n) = s
        .errors_by_kind
        .get(&ErrorKind::AddrNotAvailable)
        .filter(|n| **n > 0)
    {
        out.push(warn(
            WarningCode::PortExhaustion,
            format!(
                "{n} attempts failed because the client ran out of ephemeral ports \
                 (EADDRNOTAVAIL): this is a limit of the load-generating machine, not a result \
                 about the target or its protocol; they never left the machine, so they are \
                 errors but not requests (each VU backs off before trying again); use \
                 keep-alive or more source addresses"
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;
    use crate::record::selfcheck::{SelfCheck, SelfCheckCode, SelfCheckOutcome};

    fn self_check(code: SelfCheckCode, outcome: SelfCheckOutcome) -> SelfCheck {
        SelfCheck {
            code,
            outcome,
            figures: Default::default(),
            message: format!("{} is {outcome:?}", code.name()),
        }
    }

    #[test]
    fn failed_and_explained_self_checks_become_warnings_with_their_code() {
        let mut r = record("checked", 3, 100, 2000, 0, 0.0);
        r.self_checks = vec![
            self_check(SelfCheckCode::RequestsAddUp, SelfCheckOutcome::Passed),
            self_check(SelfCheckCode::LittlesLaw, SelfCheckOutcome::Failed),
            self_check(SelfCheckCode::GroupsAddUp, SelfCheckOutcome::NotApplicable),
            self_check(SelfCheckCode::HeavyTail, SelfCheckOutcome::Explained),
        ];
        let warnings = diagnose(&r);
        let codes: Vec<&str> = warnings.iter().map(|w| w.code.name()).collect();
        assert_eq!(codes, vec!["littles_law", "heavy_tail"]);
        assert_eq!(warnings[0].message, "littles_law is Failed");
    }

    fn thread(cpu_s: f64, wall_s: f64) -> crate::record::model::ThreadStats {
        crate::record::model::ThreadStats {
            cpu_s,
            wall_s,
            utilization: cpu_s / wall_s,
        }
    }

    fn saturated(threads: Vec<crate::record::model::ThreadStats>) -> bool {
        let mut r = record("threads", 3, 100, 2000, 0, 0.0);
        r.generator.threads = threads;
        diagnose(&r)
            .iter()
            .any(|w| w.code == WarningCode::GeneratorSaturated)
    }

    #[test]
    fn only_a_thread_busy_over_half_a_second_or_more_is_saturated() {
        assert!(saturated(vec![thread(0.1, 3.0), thread(2.9, 3.0)]));
        assert!(!saturated(vec![thread(0.1, 3.0), thread(1.5, 3.0)]));
        // A thread that was busy for the 30 ms it ran says nothing about the run.
        assert!(!saturated(vec![thread(0.03, 0.03), thread(1.5, 3.0)]));
        assert!(!saturated(vec![thread(0.4, 0.4)]));
    }

    fn steal_warning(share: Option<f64>) -> Option<String> {
        let mut r = record("steal", 3, 100, 2000, 0, 0.0);
        r.generator.steal_share = share;
        diagnose(&r)
            .into_iter()
            .find(|w| w.code == WarningCode::CpuSteal)
            .map(|w| w.message)
    }

    #[test]
    fn drops_behind_failed_connections_are_not_blamed_on_the_targets_speed() {
        let dropped = |refused: u64| {
            let mut r = record("open", 3, 100, 2000, 0, 0.0);
            r.summary.arrival = Some(crate::record::model::Arrival {
                due: 30,
                asked_per_sec: 10.0,
                started: 3,
                completed: 1,
                achieved_per_sec: 0.3,
                dropped: 27,
                unsent: 0,
                requests_per_iteration: None,
            });
            if refused > 0 {
                r.summary
                    .errors_by_kind
                    .insert(ErrorKind::ConnectRefused, refused);
            }
            let w = diagnose(&r)
                .into_iter()
                .find(|w| w.code == WarningCode::DroppedRequests);
            w.expect("dropped").message
        };
        assert!(
            dropped(0).contains("the target did not keep up"),
            "{}",
            dropped(0)
        );
        let message = dropped(2);
        assert!(
            message.contains("2 attempts failed to connect") && !message.contains("keep up"),
            "{message}"
        );
    }

    #[test]
    fn a_run_that_lost_half_a_percent_of_its_cpu_time_to_the_hypervisor_is_warned_about() {
        let message = steal_warning(Some(0.034)).expect("warned at 3.4 %");
        assert!(
            message.starts_with("the hypervisor took 3.4% of"),
            "{message}"
        );
        assert!(steal_warning(Some(STEAL_SHARE_LIMIT)).is_some());
        assert_eq!(steal_warning(Some(0.0049)), None);
        assert_eq!(steal_warning(None), None);
    }
}
