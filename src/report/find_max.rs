//! A `find-max` search in words and tables: its result ("≥ 797.4 req/s (no break found within the
//! budget)" when nothing bounded it from above) and its steps. The terminal summary, the reports,
//! the suite's ranking and `volley find-max` itself all write the maximum through
//! [`max_sustainable`].

use super::table::Table;
use crate::record::find_max::FindMax;
use crate::record::model::LoadModel;
use crate::units::{ms, rate, seconds};

/// The maximum sustainable throughput in words: "790.2 req/s"; "≥ 797.4 req/s (no break found
/// within the budget)" when it is only a lower bound; "none: no step met the SLO".
pub fn max_sustainable(f: &FindMax) -> String {
    match (f.max_sustainable_rps, f.why_lower_bound()) {
        (None, _)
            if f.stopped
                .starts_with(crate::record::find_max::STOPPED_INTERRUPTED) =>
        {
            "none: the search was interrupted before a step held".into()
        }
        (None, _) => "none: no step met the SLO".into(),
        (Some(v), Some(why)) => format!("≥ {} req/s ({why})", rate(v)),
        (Some(v), None) => match f.unvalidated() {
            Some(why) => format!("{} req/s (not validated: {why})", rate(v)),
            None => format!("{} req/s", rate(v)),
        },
    }
}

/// The result on one line, as `-q` prints it: `max sustainable throughput: 790.2 req/s at 800.0
/// req/s`; `None` without a maximum (the exit code and its line on stderr say why).
pub fn result_line(f: &FindMax) -> Option<String> {
    let at = level(f, f.max_sustainable_load?);
    let warning = f.steady_unjudged.as_ref().map(|_| {
        " (WARNING: steps too short to judge a \
        steady state: see the record)"
    });
    Some(format!(
        "max sustainable throughput: {} at {at}{}",
        max_sustainable(f),
        warning.unwrap_or_default()
    ))
}

/// A level of the search in words: `400.0 req/s` (open model) or `32 VUs` (closed).
pub fn level(f: &FindMax, level: f64) -> String {
    if f.model == LoadModel::Open {
        format!("{} req/s", rate(level))
    } else {
        crate::units::vus(level)
    }
}

/// The result of a search and its steps.
pub fn tables(f: &FindMax) -> Vec<Table> {
    let load = |l: f64| level(f, l);
    let mut t = Table::new("Maximum sustainable throughput", &["<Figure", "<Value"]);
    t.push(["max sustainable throughput".to_string(), max_sustainable(f)]);
    t.push([
        "at load".to_string(),
        f.max_sustainable_load.map_or_else(|| "-".into(), load),
    ]);
    t.push([
        "peak throughput".to_string(),
        format!("{} req/s at {}", rate(f.peak_rps), load(f.peak_load)),
    ]);
    t.push([
        "breaking point".to_string(),
        match (&f.breaking_load, &f.breaking_reason) {
            (Some(l), Some(why)) => format!("{} ({why})", load(*l)),
            _ => "not reached".into(),
        },
    ]);
    t.push(["SLO".to_string(), f.slo.clone()]);
    t.push([
        "search".to_string(),
        format!(
            "{} steps in {}, {}",
            f.steps.len(),
            seconds(f.elapsed_s),
            f.stopped
        ),
    ]);
    if let Some(why) = &f.steady_unjudged {
        t.push(["WARNING".to_string(), why.clone()]);
    }
    if f.generator_limited {
        t.push([
            "WARNING".to_string(),
            "the load generator saturated before the target: the maximum is only a lower bound"
                .to_string(),
        ]);
    }
    let mut steps = Table::new(
        "Search steps",
        &[
            "Load",
            "Achieved req/s",
            "p50 ms",
            "p99 ms",
            "Errors",
            "Measured",
            "<Met SLO",
            "<Why not",
        ],
    )
    .with_note(
        "In the order run. A level marked \"again\" was run a second time to confirm a break \
         that may have been a one-off pause of the machine; one marked \"validation\" was run \
         for several steps at the level found, and when it held its figures are the maximum. \
         Measured: the step's measured window, \"precise\" when --precision ended it early.",
    );
    for s in &f.steps {
        let mut level = load(s.level);
        if s.rerun {
            level.push_str(" (again)");
        }
        if s.validation {
            level.push_str(" (validation)");
        }
        steps.push([
            level,
            rate(s.rps),
            ms(s.p50_ms),
            ms(s.p99_ms),
            format!("{:.2}%", s.error_rate * 100.0),
            match (s.measured_s, s.precise) {
                (Some(m), true) => format!("{} (precise)", seconds(m)),
                (Some(m), false) => seconds(m),
                (None, _) => "-".into(),
            },
            match (s.interrupted, s.held) {
                (true, _) => "interrupted",
                (_, true) => "yes",
                _ => "no",
            }
            .to_string(),
            s.reason.clone(),
        ]);
    }
    vec![t, steps]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::find_max::{FindMaxStep as Step, SearchOutcome};
    use std::time::Duration;

    fn step(level: f64, held: bool) -> Step {
        Step {
            reason: String::new(),
            ..Step::test(level, level * 0.99, held)
        }
    }

    #[test]
    fn a_maximum_without_a_break_is_a_lower_bound() {
        let outcome = SearchOutcome {
            steps: vec![step(400.0, true), step(805.5, true)],
            stopped: "the time budget was spent".into(),
        };
        let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &outcome, Duration::ZERO);
        assert_eq!(
            f.lower_bound.as_deref(),
            Some("no break found within the budget")
        );
        assert_eq!(
            max_sustainable(&f),
            "≥ 797.4 req/s (no break found within the budget)"
        );
        // A record written before `lower_bound` existed reads the same.
        let mut old = f.clone();
        old.lower_bound = None;
        assert_eq!(max_sustainable(&old), max_sustainable(&f));
        // A break above bounds it: a plain figure.
        let mut broke = outcome.clone();
        broke.steps.push(step(1600.0, false));
        broke.stopped = "the bisection converged".into();
        let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &broke, Duration::ZERO);
        assert_eq!(f.lower_bound, None);
        assert_eq!(max_sustainable(&f), "797.4 req/s");
        // A maximum no validation run confirmed says so (it was printed bare).
        broke.stopped = "the bisection converged; no time was left to validate 797.4".into();
        let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &broke, Duration::ZERO);
        let said = max_sustainable(&f);
        assert_eq!(said, "797.4 req/s (not validated: no time was left)");
        // Nor one a budget cut short with the bracket open (it was printed bare too).
        broke.stopped = "the time budget was spent before the bisection converged: the maximum \
            lies between 800 and 1600, not validated"
            .into();
        let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &broke, Duration::ZERO);
        let why = "not validated: the budget ended the bisection before it converged";
        assert_eq!(max_sustainable(&f), format!("≥ 797.4 req/s ({why})"));
        // run.json says so as well, as a lower bound.
        assert_eq!(f.lower_bound.as_deref(), Some(why));
        // A converged search whose validation failed, with no time to step down (it was
        // printed bare): the maximum is the highest step below it, unvalidated.
        let mut validation = step(805.5, false);
        validation.validation = true;
        broke.steps.push(validation);
        broke.stopped = "the bisection converged; the validation at 805.5 failed; no time was \
            left to validate 797.4"
            .into();
        let f = FindMax::from_outcome(LoadModel::Open, "p99<50ms", &broke, Duration::ZERO);
        assert_eq!(
            max_sustainable(&f),
            "396.0 req/s (not validated: the validation failed)"
        );
    }

    #[test]
    fn a_level_run_again_says_so() {
        let mut again = step(6.0, false);
        again.rerun = true;
        let outcome = SearchOutcome {
            steps: vec![step(3.0, true), step(6.0, false), again],
            stopped: "the bisection converged".into(),
        };
        let f = FindMax::from_outcome(LoadModel::Closed, "p99<50ms", &outcome, Duration::ZERO);
        let steps = &tables(&f)[1];
        let levels: Vec<&str> = steps.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(levels, ["3 VUs", "6 VUs", "6 VUs (again)"]);
    }

    #[test]
    fn the_validation_row_says_so() {
        let mut validation = step(4.0, true);
        validation.validation = true;
        let outcome = SearchOutcome {
            steps: vec![step(4.0, true), step(5.0, false), validation],
            stopped: "the bisection converged".into(),
        };
        let f = FindMax::from_outcome(LoadModel::Closed, "p99<50ms", &outcome, Duration::ZERO);
        let steps = &tables(&f)[1];
        let levels: Vec<&str> = steps.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(levels, ["4 VUs", "5 VUs", "4 VUs (validation)"]);
    }
}
