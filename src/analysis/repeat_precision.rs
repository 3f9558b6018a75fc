//! Repeats until precise (`--repeat N --repeat-until FIGURE=SHARE`): the same test run again
//! until the spread *between* its runs has measured each named figure within its share, or N
//! runs are done (docs/measurement.md, "Repeats until precise"). A single run's interval sees only
//! the noise inside it; where each run has a level of its own (a near-constant latency on a
//! shared machine), only the spread between runs says what a rerun would give.

use crate::analysis::compare::{CompareOptions, MIN_REPEATS, MetricRow, Variant, compare};
use crate::analysis::sequential::Figure;
use crate::error::Error;
use crate::record::RunRecord;
use crate::record::model::{BoundFigure, PrecisionGoal};

/// One goal, and how precisely the runs so far measured its figure.
#[derive(Debug, Clone, PartialEq)]
pub struct SpreadPrecision {
    /// The goal asked.
    pub goal: PrecisionGoal,
    /// The half-width of the figure's 95 % interval over the runs (volley compare's: a t
    /// interval of the mean of the runs' logarithms, exponentiated), half its upper bound minus
    /// its lower, as a share of the figure (the geometric mean); `None` before
    /// [`MIN_REPEATS`] runs, where the runs lack the figure, or where a run has fewer than
    /// [`crate::analysis::interval::MIN_ABOVE`] responses above the percentile.
    pub share: Option<f64>,
}

impl SpreadPrecision {
    /// The figure is measured within the share asked.
    pub fn met(&self) -> bool {
        self.share.is_some_and(|s| s <= self.goal.share)
    }
}

/// How precisely `runs` (one test, repeated) measured each goal's figure: the run's, or the
/// named part's (its row among the comparison's scenarios, steps and phases).
pub fn spread_precision(runs: &[RunRecord], goals: &[PrecisionGoal]) -> Vec<SpreadPrecision> {
    let variant = [Variant {
        label: String::new(),
        source: Default::default(),
        runs: runs.to_vec(),
    }];
    let enough = !goals.is_empty() && runs.len() >= MIN_REPEATS;
    let options = CompareOptions {
        groups: goals.iter().any(|g| g.part.is_some()),
        ..CompareOptions::default()
    };
    let c = enough.then(|| compare(&variant, options));
    goals
        .iter()
        .map(|goal| {
            let of_goal = |r: &&MetricRow| r.metric.bound_figure() == Some(goal.figure);
            let row = c.as_ref().and_then(|c| match &goal.part {
                None => c.rows.iter().find(of_goal),
                Some(part) => part.rows_in(c, &runs[0])?.iter().find(of_goal),
            });
            // A percentile with too few responses above it in some run is that run's slowest
            // few: no more measured over runs than the max (as `volley compare` judges it).
            let judged = |row: &&MetricRow| {
                let figure = Figure {
                    metric: row.metric,
                    part: goal.part.clone(),
                };
                runs.iter().all(|r| figure.enough_responses(r))
            };
            let share = row.filter(judged).and_then(|row| {
                match (row.estimates[0].value, row.estimates[0].ci) {
                    (Some(v), Some((lo, hi))) if v > 0.0 => Some((hi - lo) / 2.0 / v),
                    _ => None,
                }
            });
            SpreadPrecision {
                goal: goal.clone(),
                share,
            }
        })
        .collect()
}

/// Every goal is met (and there is at least one).
pub fn all_met(states: &[SpreadPrecision]) -> bool {
    !states.is_empty() && states.iter().all(SpreadPrecision::met)
}

/// Refuses goals no series of `repeat` runs can meet: an interval over runs needs
/// [`MIN_REPEATS`] of them, and a part's spread is compared for the figures of
/// [`crate::analysis::metric::Metric::OF_GROUPS`] only (not p99.9).
pub fn check(repeat: u32, goals: &[PrecisionGoal]) -> Result<(), Error> {
    let invalid = |why: String| {
        Err(Error::Invalid {
            what: "--repeat-until".into(),
            why,
        })
    };
    if let Some(g) = goals
        .iter()
        .find(|g| g.part.is_some() && g.figure == BoundFigure::P99_9)
    {
        return invalid(format!(
            "`{}`: p99.9 is not compared per scenario, step or phase; one of rps, mean, p50, \
             p90, p95, p99",
            g.label()
        ));
    }
    if goals.is_empty() || repeat as usize >= MIN_REPEATS {
        return Ok(());
    }
    invalid(format!(
        "an interval over runs needs {MIN_REPEATS} of them: give --repeat N with N at least \
         {MIN_REPEATS}, the most runs it may take (got --repeat {repeat})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixture;
    use crate::record::model::Part;

    fn goal(figure: BoundFigure, share: f64) -> PrecisionGoal {
        PrecisionGoal {
            figure,
            share,
            part: None,
        }
    }

    fn runs(rps: &[f64]) -> Vec<RunRecord> {
        rps.iter()
            .map(|&r| {
                let mut run = fixture::record("r", 5, 1000, 2000, 0, 0.0);
                run.summary.rps = r;
                run
            })
            .collect()
    }

    #[test]
    fn the_spread_of_three_runs_or_more_is_its_t_interval_as_a_share() {
        let goals = [goal(BoundFigure::Rps, 0.02)];
        // Two runs: no interval over runs yet.
        let two = spread_precision(&runs(&[1000.0, 1010.0]), &goals);
        assert_eq!(two[0].share, None);
        assert!(!all_met(&two));
        // 1000, 1010, 990: logs' sd ≈ 0.01, t(2) = 4.303, so ±≈2.5 %: not within 2 %.
        let three = spread_precision(&runs(&[1000.0, 1010.0, 990.0]), &goals);
        let share = three[0].share.unwrap();
        assert!((share - 0.0248).abs() < 0.001, "{share}");
        assert!(!all_met(&three));
        // Two more close runs narrow it below 2 %.
        let five = spread_precision(&runs(&[1000.0, 1010.0, 990.0, 1000.0, 1001.0]), &goals);
        assert!(all_met(&five), "{five:?}");
    }

    #[test]
    fn a_percentile_with_too_few_responses_above_it_has_no_spread() {
        // 2,000 responses a run: 20 above p99, 2 above p99.9 (the slowest two, as the max is).
        let goals = [goal(BoundFigure::P99, 0.5), goal(BoundFigure::P99_9, 0.5)];
        let states = spread_precision(&runs(&[1000.0, 1010.0, 990.0]), &goals);
        assert!(states[0].met(), "{states:?}");
        assert_eq!(states[1].share, None, "{states:?}");
        assert!(!all_met(&states));
    }

    /// Runs of a plan with scenarios `mix` (steps `fast` and `slow`) and `solo` (one step
    /// `only`), the slow step's p50 `slow[i]` ms in run i, the rest steady.
    fn plan_runs(slow: &[f64]) -> Vec<RunRecord> {
        use crate::analysis::selfcheck::testing::group;
        use crate::record::model::GroupKind::{Scenario, Step};
        slow.iter()
            .map(|&ms| {
                let mut run = fixture::record("r", 5, 1000, 2000, 0, 0.0);
                let at = |kind, name: &str, scenario: Option<&str>, p50: f64| {
                    let mut g = group(kind, name, scenario, 1000);
                    g.latency_ms.p50 = Some(p50);
                    g.rps = 100.0;
                    g
                };
                run.groups = vec![
                    at(Scenario, "mix", None, 1.5),
                    at(Step, "fast", Some("mix"), 1.0),
                    at(Step, "slow", Some("mix"), ms),
                    at(Scenario, "solo", None, 3.0),
                    at(Step, "only", Some("solo"), 3.0),
                ];
                run
            })
            .collect()
    }

    #[test]
    fn a_goal_of_a_part_reads_the_spread_of_that_part() {
        let part = |figure, share, p: Part| PrecisionGoal {
            figure,
            share,
            part: Some(p),
        };
        let goals = [
            part(BoundFigure::P50, 0.02, Part::Step("slow".into())),
            part(BoundFigure::P50, 0.02, Part::Step("fast".into())),
            // A scenario's only step is judged as its scenario: the same figures.
            part(BoundFigure::P50, 0.02, Part::Step("only".into())),
            part(BoundFigure::P50, 0.02, Part::Scenario("gone".into())),
        ];
        let states = spread_precision(&plan_runs(&[5.0, 6.0, 7.0]), &goals);
        // The slow step spread 5–7 ms: far from 2 %; the steady parts are exact.
        assert!(states[0].share.unwrap() > 0.2, "{states:?}");
        assert_eq!(states[1].share, Some(0.0));
        assert_eq!(states[2].share, Some(0.0));
        assert_eq!(
            states[3].share, None,
            "a part the runs lack has no interval"
        );
        assert!(!all_met(&states));
        assert!(all_met(&states[1..3]));
        // p99.9 is not compared per part: refused before any run.
        let why = check(3, &[part(BoundFigure::P99_9, 0.1, Part::Step("a".into()))])
            .unwrap_err()
            .to_string();
        assert!(why.contains("p99.9{step=a}"), "{why}");
    }

    #[test]
    fn every_goal_must_be_met_and_too_few_runs_are_refused() {
        let goals = [goal(BoundFigure::Rps, 0.5), goal(BoundFigure::Rps, 0.0001)];
        let states = spread_precision(&runs(&[1000.0, 1010.0, 990.0]), &goals);
        assert!(states[0].met() && !states[1].met());
        assert!(!all_met(&states));
        assert!(!all_met(&[]));
        assert!(check(3, &goals).is_ok() && check(1, &[]).is_ok());
        let why = check(2, &goals).unwrap_err().to_string();
        assert!(
            why.contains("--repeat-until") && why.contains("--repeat 2"),
            "{why}"
        );
    }
}
