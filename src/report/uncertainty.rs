//! The run's figures with their 95 % intervals (docs/measurement.md, "Uncertainty"), and what a
//! run asked to last until precise got.

use super::table::Table;
use crate::record::model::{
    Bound, BoundFigure, Ci95, Group, PrecisionGoal, PrecisionOutcome, RunRecord,
};
use crate::units::{ms, rate, seconds};

/// `value ± half` in the figure's unit: `29.6 ± 1.9 ms`, `1,234.5 ± 12.3 req/s`.
pub fn with_interval(figure: BoundFigure, b: &Bound) -> String {
    let unit = match figure {
        BoundFigure::Rps => "req/s",
        _ => "ms",
    };
    format!("{} {unit}", bare_interval(figure, b))
}

/// `value ± half` for a column that names the unit: `29.6 ± 1.9`, `1,234.5 ± 12.3`.
pub fn bare_interval(figure: BoundFigure, b: &Bound) -> String {
    match figure {
        BoundFigure::Rps => format!("{} ± {}", rate(b.value), rate_half(b.half_width)),
        _ => format!("{} ± {}", ms(Some(b.value)), ms(Some(b.half_width))),
    }
}

/// A rate's half-width with one decimal, as the rate: `12.3`; one under the last digit shown
/// reads `<0.1`, not a bare `0.0` (which stays for batches that all agree).
pub(crate) fn rate_half(half_width: f64) -> String {
    if half_width > 0.0 && half_width < 0.05 {
        "<0.1".into()
    } else {
        rate(half_width)
    }
}

/// The half-width as a share of the figure: `±1.9 %`.
fn share(b: &Bound) -> String {
    b.relative().map_or_else(|| "-".into(), plus_minus)
}

/// A relative half-width (0.019) as `±1.9 %`.
pub(crate) fn plus_minus(share: f64) -> String {
    format!("±{:.1} %", 100.0 * share)
}

/// One precision goal and what it got (`got`: `±3.4 %`, or why none): `p99 ±3.4 % (asked ±2 %)`,
/// `p99{step=pay} ±3.4 % (asked ±2 %)`.
pub(crate) fn goal_got(goal: &PrecisionGoal, got: &str) -> String {
    format!("{} {got} (asked {})", goal.label(), asked(goal))
}

/// A goal's share as asked: `±2 %`, `±0.5 %` (three decimals at most, no float noise).
pub(crate) fn asked(goal: &PrecisionGoal) -> String {
    format!("±{} %", crate::units::number(goal.share * 100.0))
}

/// The intervals in one line for the terminal: `p50 1.20 ± 0.01 ms · p99 29.6 ± 1.9 ms · …`.
pub fn text_line(ci: &Ci95) -> Option<String> {
    let parts: Vec<String> = BoundFigure::ALL
        .into_iter()
        .filter_map(|f| Some(format!("{} {}", f.name(), with_interval(f, ci.get(f)?))))
        .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// Why a steady run has no interval when it is too short: "the run held 2 one-second batches,
/// and an interval needs 5 (a run of 5 s or longer; …)"; `None` when it held enough.
pub fn too_few(r: &RunRecord) -> Option<String> {
    use crate::analysis::interval::{MIN_BATCHES, whole_batches};
    // Whole seconds of the window, as the interval counts them.
    let (need, held) = (MIN_BATCHES, whole_batches(r.summary.duration_s, 1));
    (held < need).then(|| {
        format!(
            "the run held {held} one-second batches, and an interval needs {need} (a run of \
             {need} s or longer; docs/measurement.md, \"Uncertainty\")"
        )
    })
}

/// What the precision asked got: `precise at 6.0 s: p99 ±1.9 % (asked ±2 %)` or `stopped at the
/// maximum length: p99 ±3.4 % (asked ±2 %)` (or `interrupted (SIGINT): …`, `stopped by a failed
/// threshold: …`); a goal on a part of the plan reads that part's interval
/// (`groups[].ci95`).
pub fn precision_line(r: &RunRecord, p: &PrecisionOutcome) -> String {
    let asked: Vec<String> = p
        .goals
        .iter()
        .map(|g| {
            let ci = match &g.part {
                Some(part) => part.group_in(r).and_then(|g| g.ci95.as_ref()),
                None => r.summary.ci95.as_ref(),
            };
            let bound = ci.and_then(|ci| ci.get(g.figure));
            goal_got(g, &bound.map_or_else(|| "no interval".into(), share))
        })
        .collect();
    let asked = asked.join(", ");
    match p.at_s {
        Some(at) if p.reached => format!("precise at {}: {asked}", seconds(at)),
        _ => format!("{}: {asked}", why_stopped(r)),
    }
}

/// Why a run asked to last until precise ended before it was: `interrupted (SIGINT)`,
/// `stopped by a failed threshold`, or `stopped at the maximum length`.
fn why_stopped(r: &RunRecord) -> String {
    use crate::analysis::verdict::{RunStatus, status};
    match status(r) {
        RunStatus::Interrupted(signal) => format!("interrupted ({signal})"),
        RunStatus::Aborted(_) => "stopped by a failed threshold".into(),
        // Every other run went on to its end.
        _ => "stopped at the maximum length".into(),
    }
}

/// The table of the run's intervals, for the reports; none without any.
pub fn table(r: &RunRecord) -> Option<Table> {
    let ci = r.summary.ci95.as_ref()?;
    let mut t = Table::new(
        "Uncertainty (95 % intervals)",
        &["<Figure", "Value ± half-width", "Relative", "Batches"],
    )
    .with_note(
        "How precisely this run measured each figure: batch means over its seconds, their \
         autocorrelation taken out (docs/measurement.md, \"Uncertainty\"). A machine whose \
         speed differs from run to run (CPU steal, or a slower CPU that no counter shows) \
         moves a rerun further than this, most of all for a near-constant latency; --repeat 3 \
         measures that (its interval is made from the spread between the runs). A figure \
         without enough batches has none.",
    );
    for f in BoundFigure::ALL {
        if let Some(b) = ci.get(f) {
            t.push([
                f.name().to_string(),
                with_interval(f, b),
                share(b),
                format!(
                    "{} × {} s (effective {:.1})",
                    b.batches, b.batch_s, b.effective
                ),
            ]);
        }
    }
    let why = match (&ci.unsteady, too_few(r)) {
        (Some(why), _) => Some(format!("the load was not steady: {why}")),
        (None, Some(why)) if t.rows.is_empty() => Some(why),
        _ => None,
    };
    if let Some(why) = why {
        t.push(["none".to_string(), why, String::new(), String::new()]);
    }
    if let Some(p) = &ci.precision {
        t.push([
            "precision".to_string(),
            precision_line(r, p),
            String::new(),
            String::new(),
        ]);
    }
    (!t.rows.is_empty()).then_some(t)
}

/// The title of [`group_table`].
pub const GROUP_TABLE: &str = "Intervals by scenario and step (95 %)";

/// The intervals of each result group's figures (the figures some group has one for), for the
/// reports and the summary; none when no group has any.
pub fn group_table(r: &RunRecord) -> Option<Table> {
    let groups: Vec<(&Group, &Ci95)> = r
        .groups
        .iter()
        .filter_map(|g| Some((g, g.ci95.as_ref()?)))
        .collect();
    let figures: Vec<BoundFigure> = BoundFigure::ALL
        .into_iter()
        .filter(|f| groups.iter().any(|(_, ci)| ci.get(*f).is_some()))
        .collect();
    if figures.is_empty() {
        return None;
    }
    let heads: Vec<String> = std::iter::once("<Group".to_string())
        .chain(figures.iter().map(|f| match f {
            BoundFigure::Rps => "req/s".to_string(),
            _ => format!("{} ms", f.name()),
        }))
        .collect();
    let heads: Vec<&str> = heads.iter().map(String::as_str).collect();
    let mut t = Table::new(GROUP_TABLE, &heads).with_note(
        "Each scenario's and step's figures with their 95 % intervals: the run's batch means \
         over the group's own responses and requests per second (docs/measurement.md, \
         \"Uncertainty\"). A figure without enough batches has none (-).",
    );
    for (g, ci) in groups {
        let name = g.path();
        let cells = figures.iter().map(|f| {
            ci.get(*f)
                .map_or_else(|| "-".to_string(), |b| bare_interval(*f, b))
        });
        t.push(std::iter::once(name).chain(cells));
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture::record;
    use crate::record::model::{PrecisionGoal, ThresholdResult};

    #[test]
    fn the_precision_line_says_why_a_run_stopped_before_it_was_precise() {
        let mut r = record("short", 3, 100, 2000, 0, 0.0);
        let p = PrecisionOutcome {
            goals: vec![PrecisionGoal {
                figure: BoundFigure::P99,
                share: 0.02,
                part: None,
            }],
            reached: false,
            at_s: None,
        };
        let line = |r: &RunRecord| precision_line(r, &p);
        assert!(
            line(&r).starts_with("stopped at the maximum length: p99 "),
            "{}",
            line(&r)
        );
        r.thresholds.push(ThresholdResult {
            metric: "errors".into(),
            condition: "rate<0.01".into(),
            observed: Some(0.5),
            unit: None,
            passed: false,
            aborted: true,
            aborted_at_s: Some(2.0),
            observed_at_abort: Some(0.5),
        });
        assert!(
            line(&r).starts_with("stopped by a failed threshold: p99 "),
            "{}",
            line(&r)
        );
        r.interrupted = Some("SIGINT".into());
        assert!(
            line(&r).starts_with("interrupted (SIGINT): p99 "),
            "{}",
            line(&r)
        );
        let seven = PrecisionGoal {
            share: 0.07,
            ..p.goals[0].clone()
        };
        assert_eq!(asked(&seven), "±7 %", "0.07 × 100 is 7.000000000000001");
    }

    #[test]
    fn a_run_too_short_for_an_interval_says_so() {
        // Two seconds: the table and the summary said nothing (it was left out).
        let mut r = record("short", 2, 100, 2000, 0, 0.0);
        r.summary.ci95 = Some(Ci95::default());
        (r.summary.duration_s, r.histograms.batches_us) = (4.5, vec![String::new(); 5]);
        let t = table(&r).expect("a row saying why");
        // A partial last second is no batch of its own.
        let why = "the run held 4 one-second batches, and an interval needs 5";
        assert!(t.rows[0][1].starts_with(why), "{:?}", t.rows);
        let text = crate::report::text::render(&r);
        assert!(
            text.contains(&format!("95 % intervals: none, {why}")),
            "{text}"
        );
        // Five whole batches with no figure (e.g. too few responses) do not say it.
        r.summary.duration_s = 5.0;
        assert!(table(&r).is_none());
    }

    #[test]
    fn a_rate_held_tighter_than_its_last_digit_says_so() {
        let b = |half_width| Bound {
            value: 1500.0,
            half_width,
            batches: 10,
            batch_s: 1,
            effective: 10.0,
        };
        let rps = |h| with_interval(BoundFigure::Rps, &b(h));
        assert_eq!(rps(0.02), "1,500.0 ± <0.1 req/s");
        assert_eq!(rps(0.0), "1,500.0 ± 0.0 req/s", "batches that all agree");
        assert_eq!(rps(12.34), "1,500.0 ± 12.3 req/s");
    }
}
