//! The schedule kept (open model): did the generator send when its schedule said?
//!
//! Two figures answer it (`docs/measurement.md`, "The schedule kept"): the distribution of
//! (send − due), the send lag the record already carries, and a two-sample
//! Kolmogorov–Smirnov test of the gaps between consecutive sends against the gaps between
//! consecutive due times of the same iterations (a sample of blocks of consecutive iterations,
//! [`crate::record::recorder::SendSample`]), at a tolerance of half the send grid's tick. The
//! due times are the plan: a uniform grid, or exponential gaps for Poisson arrivals, quantised
//! to the grid, ramps included. An iteration dropped at the in-flight cap is in the plan and not
//! in what was sent, so drops show as longer gaps.
//!
//! The check fails when the distance D exceeds the test's critical value at α = 0.001, when the
//! send lag's p99 exceeds [`LAG_LIMIT_MS`], or when iterations due were dropped at the in-flight
//! cap or never sent (within a tick's burst a drop barely changes the gaps; a run stopped early
//! leaves the last moment's unsent, [`caught_by_the_stop`]); it then names the
//! cause the record shows: worker threads out of CPU, the in-flight cap, CPU steal, or none.

use super::{failed, not_applicable, passed};
use crate::record::model::RunRecord;
use crate::record::recorder::SendGaps;
use crate::record::selfcheck::{SelfCheck, SelfCheckCode};

/// The test's level: the chance that a generator which kept its schedule fails the check.
pub const ALPHA: f64 = 0.001;
/// Fewest gaps, planned and achieved, for the test to say anything.
const MIN_GAPS: usize = 50;
/// Tolerance when the run has no send grid (every arrival at its own instant), µs.
const EXACT_TOLERANCE_US: u64 = 500;
/// Sends later than this at the p99 did not keep the schedule, ms (five ticks of the default
/// send grid).
pub const LAG_LIMIT_MS: f64 = 5.0;
/// A worker thread busy this share of its wall time is out of CPU.
const BUSY_WORKER: f64 = 0.9;

/// What the check is given: the sample's gaps, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum Sends<'a> {
    /// The gaps of the run's sample of sends.
    Sample(&'a SendGaps),
    /// The check does not apply: why.
    NotApplicable(String),
}

/// The largest distance between the two gaps' distributions once each achieved gap may be off
/// by `tolerance` either way: max over x of F_achieved(x − tol) − F_planned(x) (sends bunched
/// closer than planned) and F_planned(x) − F_achieved(x + tol) (sends spread further apart), 0–1.
/// Both slices sorted.
pub fn distance(planned: &[u64], achieved: &[u64], tolerance: u64) -> f64 {
    if planned.is_empty() || achieved.is_empty() {
        return 0.0;
    }
    let (n, m) = (planned.len() as f64, achieved.len() as f64);
    let at_most = |v: &[u64], x: u64| v.partition_point(|&g| g <= x) as f64;
    let closer = achieved
        .iter()
        .map(|&a| at_most(achieved, a) / m - at_most(planned, a.saturating_add(tolerance)) / n);
    let apart = planned
        .iter()
        .map(|&p| at_most(planned, p) / n - at_most(achieved, p.saturating_add(tolerance)) / m);
    closer.chain(apart).fold(0.0, f64::max)
}

/// The two-sample test's critical distance for `n` and `m` gaps at level [`ALPHA`]:
/// c(α)·√((n + m)/(n·m)), c(α) = √(−ln(α/2)/2).
pub fn critical(n: usize, m: usize) -> f64 {
    let c = (-(ALPHA / 2.0).ln() / 2.0).sqrt();
    let (n, m) = (n as f64, m as f64);
    c * ((n + m) / (n * m)).sqrt()
}

/// The check on record `r` with its sample of sends.
pub fn check(r: &RunRecord, sends: &Sends<'_>) -> SelfCheck {
    let code = SelfCheckCode::ScheduleKept;
    let gaps = match sends {
        Sends::NotApplicable(why) => return not_applicable(code, why.clone()),
        Sends::Sample(gaps) => gaps,
    };
    let (n, m) = (gaps.planned_us.len(), gaps.achieved_us.len());
    if n < MIN_GAPS || m < MIN_GAPS {
        return not_applicable(
            code,
            format!("{m} gaps between sends in the sample: fewer than {MIN_GAPS} to test"),
        );
    }
    let grid_ms = r.generator.send_grid_ms.unwrap_or(0.0);
    let tolerance = match grid_ms > 0.0 {
        true => (grid_ms * 500.0).round() as u64,
        false => EXACT_TOLERANCE_US,
    };
    let d = distance(&gaps.planned_us, &gaps.achieved_us, tolerance);
    let crit = critical(n, m);
    let lag = r.generator.lag_ms;
    let dropped = r.summary.arrival.map_or(0, |a| a.dropped);
    let busiest = r
        .generator
        .threads
        .iter()
        .map(|t| t.utilization)
        .fold(0.0, f64::max);
    let figures = [
        ("gaps_planned", n as f64),
        ("gaps_sent", m as f64),
        ("ks_distance", d),
        ("ks_critical", crit),
        ("tolerance_ms", tolerance as f64 / 1_000.0),
        ("lag_p50_ms", lag.and_then(|l| l.p50).unwrap_or(f64::NAN)),
        ("lag_p99_ms", lag.and_then(|l| l.p99).unwrap_or(f64::NAN)),
        ("dropped", dropped as f64),
        ("busiest_worker_cpu_pct", 100.0 * busiest),
        (
            "steal_pct",
            r.generator.steal_share.map_or(f64::NAN, |s| 100.0 * s),
        ),
    ];
    let test = format!(
        "Kolmogorov–Smirnov distance {d:.3} between the {m} gaps between sends and the {n} \
         planned (within ±{:.2} ms), critical {crit:.3} at α = {ALPHA}",
        tolerance as f64 / 1_000.0
    );
    let lag_p99 = lag.and_then(|l| l.p99).unwrap_or(0.0);
    let (unsent, due) = r.summary.arrival.map_or((0, 0), |a| (a.unsent, a.due));
    let mut broken = Vec::new();
    if d > crit {
        broken.push(format!(
            "the gaps between sends differ from the plan ({test})"
        ));
    }
    if lag_p99 > LAG_LIMIT_MS {
        broken.push(format!(
            "sends went out late (lag p99 {lag_p99:.2} ms > {LAG_LIMIT_MS} ms)"
        ));
    }
    if dropped > 0 {
        broken.push(format!(
            "{dropped} of {due} iterations due were dropped at the in-flight cap (every VU busy)"
        ));
    }
    let caught = caught_by_the_stop(r, lag_p99);
    if unsent > caught {
        broken.push(format!(
            "{unsent} iterations due were never sent (the generator fell over 1 s behind, or the \
             run stopped first)"
        ));
    }
    if broken.is_empty() {
        return passed(code, &figures, kept(&test, lag_p99, unsent, caught));
    }
    let cause = cause(busiest, dropped, lag_p99, r.generator.steal_share);
    failed(
        code,
        &figures,
        format!(
            "the generator did not keep its schedule: {}; cause: {cause}; the offered load was \
             not the one asked",
            broken.join("; ")
        ),
    )
}

/// A passed check's message; `unsent` (at most `caught`) were left by a stop.
fn kept(test: &str, lag_p99: f64, unsent: u64, caught: u64) -> String {
    let lag = format!("lag p99 {lag_p99:.2} ms ≤ {LAG_LIMIT_MS} ms");
    let unsent = match unsent {
        0 => String::new(),
        n => format!(
            "; {n} due in the last moment before the run was stopped were not sent (at most \
             {caught}: a grid tick and the send lag's p99 at the rate asked, one more per worker)"
        ),
    };
    format!("the sends followed the schedule: {test}; {lag}; none dropped{unsent}")
}

/// Iterations that a stop before the schedule's end leaves due and unsent without a fault of
/// the generator: a run stopped once precise, by a signal or by a failed threshold ends between
/// a worker's grid points, so the iterations due since its last point (and those its send lag
/// holds) never go. At most those due within a tick plus the send lag's p99 (`lag_p99_ms`) at
/// the rate asked then ([`rate_at_the_stop`]), with three standard deviations of a Poisson
/// count more, one more per worker; 0 for a run that ran its course.
fn caught_by_the_stop(r: &RunRecord, lag_p99_ms: f64) -> u64 {
    let precise = r
        .summary
        .ci95
        .as_ref()
        .and_then(|c| c.precision.as_ref())
        .is_some_and(|p| p.reached);
    let stopped = precise || r.interrupted.is_some() || r.thresholds.iter().any(|t| t.aborted);
    let Some(a) = r.summary.arrival.filter(|_| stopped) else {
        return 0;
    };
    let tick_s = r.generator.send_grid_ms.unwrap_or(0.0) / 1e3;
    let workers = r.generator.threads.len().max(1) as u64;
    let rate = a
        .asked_per_sec
        .max(rate_at_the_stop(r, a.requests_per_iteration));
    // Iterations due in that span: Poisson arrivals vary by √λ around it.
    let due = rate * (tick_s + lag_p99_ms / 1e3);
    (due + 3.0 * due.sqrt()).ceil() as u64 + workers
}

/// The rate a run was asking for when it stopped, iterations per second, as its whole seconds
/// show it: the busiest, or the last carried on by its rise over the one before (a ramp stopped
/// partway asks more than any whole second before the stop).
fn rate_at_the_stop(r: &RunRecord, requests_per_iteration: Option<u32>) -> f64 {
    let per = f64::from(requests_per_iteration.unwrap_or(1).max(1));
    let whole: Vec<f64> = r
        .series
        .iter()
        .filter(|s| s.span_s >= 1.0)
        .map(|s| (s.requests + s.not_sent) as f64 / s.span_s / per)
        .collect();
    let busiest = whole.iter().copied().fold(0.0, f64::max);
    let carried = match whole.as_slice() {
        [.., before, last] => last + (last - before).max(0.0),
        _ => 0.0,
    };
    busiest.max(carried)
}

/// The cause a failed check names: worker threads out of CPU, the in-flight cap (iterations
/// dropped while the sends kept time: a generator that stood still sends its backlog at once,
/// and drops follow from that, not from the target), the machine's hypervisor (CPU steal at or
/// above the `cpu_steal` warning's limit), or none it can see.
fn cause(busiest: f64, dropped: u64, lag_p99_ms: f64, steal: Option<f64>) -> String {
    if busiest >= BUSY_WORKER {
        format!(
            "CPU: the busiest worker thread ran {:.0} % of the time",
            100.0 * busiest
        )
    } else if dropped > 0 && lag_p99_ms <= LAG_LIMIT_MS {
        "the in-flight cap: the target was slower than the rate needs (raise -c or max_vus)".into()
    } else if let Some(share) = crate::analysis::stolen(steal) {
        format!(
            "CPU steal: the hypervisor took {:.1} % of the machine's CPU time, and the generator \
             stood still while it did",
            100.0 * share
        )
    } else if dropped > 0 {
        format!(
            "the generator stood still (lag p99 {lag_p99_ms:.2} ms) and sent its backlog at once, \
             which found every VU busy: a pause the record does not explain (another process on \
             its CPUs, a stopped process?)"
        )
    } else {
        "none in the record (another process on the generator's CPUs?)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_named_is_the_first_the_record_shows() {
        let cpu = cause(0.95, 3, 1.0, Some(0.1));
        assert!(cpu.starts_with("CPU: the busiest worker thread ran 95 %"));
        assert!(cause(0.5, 3, 1.0, Some(0.1)).starts_with("the in-flight cap"));
        // Drops after the sends fell behind: the backlog's, not the target's.
        let stood = cause(0.5, 3, 96.0, None);
        assert!(stood.starts_with("the generator stood still (lag p99 96.00 ms)"));
        let steal = cause(0.5, 3, 96.0, Some(0.021));
        assert!(steal.starts_with("CPU steal: the hypervisor took 2.1 %"));
        assert!(cause(0.5, 0, 1.0, Some(0.001)).starts_with("none in the record"));
        assert!(cause(0.5, 0, 9.0, None).starts_with("none in the record"));
    }

    fn grid(gap: u64, n: usize) -> Vec<u64> {
        vec![gap; n]
    }

    /// `n` gaps, the `i`th `gap(i)`, sorted.
    fn sorted(n: u64, gap: impl Fn(u64) -> u64) -> Vec<u64> {
        let mut v: Vec<u64> = (0..n).map(gap).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn gaps_within_the_tolerance_are_the_plan() {
        let planned = grid(2_000, 500);
        let achieved = sorted(500, |i| 2_000 + (i % 7) * 60 - 180);
        assert_eq!(distance(&planned, &achieved, 500), 0.0);
        assert!(
            distance(&planned, &achieved, 0) > 0.4,
            "no tolerance: a point mass"
        );
    }

    #[test]
    fn bunched_and_stalled_sends_are_far_from_the_plan() {
        let planned = grid(1_000, 1_000);
        // A generator that stalls: every fifth gap is 5 ms, then four sends go at once.
        let achieved = sorted(1_000, |i| if i % 5 == 0 { 5_000 } else { 0 });
        let d = distance(&planned, &achieved, 500);
        assert!(d > 0.75, "{d}");
        assert!(d > critical(1_000, 1_000));
    }

    #[test]
    fn drops_lengthen_the_gaps_sent() {
        let planned = grid(1_000, 1_000);
        // A tenth of the iterations dropped: a tenth of the gaps sent are doubled.
        let achieved = sorted(900, |i| if i % 9 == 0 { 2_000 } else { 1_000 });
        let d = distance(&planned, &achieved, 500);
        assert!((d - 0.111).abs() < 0.01, "{d}");
        assert!(d > critical(1_000, 900));
    }

    #[test]
    fn exponential_gaps_drawn_twice_pass_and_a_grid_does_not_pass_as_poisson() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut draw = |n: usize| {
            let mut v: Vec<u64> = (0..n)
                .map(|_| (-(1.0 - rng.f64()).ln() * 1_000.0) as u64)
                .collect();
            v.sort_unstable();
            v
        };
        let (a, b) = (draw(2_000), draw(2_000));
        assert!(distance(&a, &b, 0) < critical(2_000, 2_000));
        let uniform = grid(1_000, 2_000);
        assert!(distance(&a, &uniform, 100) > critical(2_000, 2_000));
    }

    #[test]
    fn the_critical_distance_follows_the_formula() {
        // c(0.001) = 1.9495.
        let c = critical(1_000, 1_000);
        assert!((c - 1.9495 * (2.0f64 / 1_000.0).sqrt()).abs() < 1e-3, "{c}");
    }

    use crate::record::fixture::record;
    use crate::record::model::Arrival;
    use crate::record::selfcheck::SelfCheckOutcome;
    use crate::record::series::SecondStats;

    /// An open-model record at 3,000/s on a 1 ms grid, one worker, whose sends kept the
    /// plan, with `unsent` iterations due and never sent.
    fn open(unsent: u64) -> RunRecord {
        let mut r = record("open", 5, 3_000, 2_000, 0, 0.0);
        r.generator.send_grid_ms = Some(1.0);
        r.summary.arrival = Some(Arrival {
            due: 15_000,
            asked_per_sec: 3_000.0,
            started: 15_000 - unsent,
            completed: 15_000 - unsent,
            achieved_per_sec: 3_000.0,
            dropped: 0,
            unsent,
            requests_per_iteration: Some(1),
        });
        r
    }

    fn outcome(r: &RunRecord) -> SelfCheckOutcome {
        let gaps = SendGaps {
            planned_us: vec![333; 500],
            achieved_us: vec![333; 500],
        };
        check(r, &Sends::Sample(&gaps)).outcome
    }

    #[test]
    fn a_stop_between_grid_points_leaves_the_last_tick_unsent_and_fails_nothing() {
        // Ran its course: an iteration due and never sent is a fault.
        assert_eq!(outcome(&open(2)), SelfCheckOutcome::Failed);
        // Stopped by a signal (or once precise, or by a threshold): the last tick's are not.
        let mut r = open(2);
        r.interrupted = Some("SIGINT".into());
        let lag_p99 = r.generator.lag_ms.and_then(|l| l.p99).unwrap_or(0.0);
        let caught = caught_by_the_stop(&r, lag_p99);
        assert!((4..=20).contains(&caught), "{caught}");
        assert_eq!(outcome(&r), SelfCheckOutcome::Passed);
        // More than a tick's worth is still a fault, stopped or not.
        let mut r = open(caught + 1);
        r.interrupted = Some("SIGINT".into());
        assert_eq!(outcome(&r), SelfCheckOutcome::Failed);
        // A ramp stopped near its peak asked more than its mean: its last whole second says so.
        let mut ramp = open(caught + 1);
        ramp.interrupted = Some("SIGINT".into());
        ramp.series = (0..2)
            .map(|t| SecondStats::without_responses(t, 1.0, 0))
            .collect();
        (ramp.series[0].requests, ramp.series[1].requests) = (4_000, 6_000);
        // Stopped partway into its third second: 8,000/s by then.
        assert_eq!(rate_at_the_stop(&ramp, Some(1)), 8_000.0);
        assert!(caught_by_the_stop(&ramp, lag_p99) > caught + 1);
        assert_eq!(outcome(&ramp), SelfCheckOutcome::Passed);
    }
}
