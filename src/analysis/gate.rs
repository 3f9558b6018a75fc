//! `volley compare --fail-on RULE`: the comparison as a CI gate. A rule such as `p99 > +5%`
//! is met only when the comparison's own statistics call the change significant in that
//! direction (verdict worse/better, after Holm's correction) **and** its point estimate passes
//! the amount; an inconclusive metric a rule names fails only with `--fail-on-inconclusive`.
//! A rule may judge one scenario, step or phase of plan runs instead of the run
//! (`p99{step=pay} > +5%`, [`Part`]).

use std::fmt;
use std::str::FromStr;

use crate::analysis::compare::{ChangeVerdict, Comparison, Metric, MetricRow};
use crate::record::model::RunRecord;

mod part;

pub use part::Part;

/// Which way a rule looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The metric rose by more than the amount.
    Above,
    /// The metric fell by more than the amount.
    Below,
}

/// The unit of a rule's amount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// % of the baseline (relative metrics).
    Percent,
    /// Percentage points (the error rate).
    Points,
    /// Milliseconds, the difference of the figures (latency metrics).
    Millis,
}

/// One `--fail-on` rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The rule as given (trimmed), for messages.
    pub text: String,
    /// The metric it names.
    pub metric: Metric,
    /// The scenario, step or phase it judges (`p99{step=pay}`); `None`: the run.
    pub part: Option<Part>,
    /// `>` or `<`.
    pub op: Direction,
    /// Signed amount, in `unit`.
    pub amount: f64,
    /// Unit of the amount.
    pub unit: Unit,
}

/// The metric names rules and `--metric` take.
pub const METRICS: &str = "p50, p90, p95, p99, p99.9, mean, max, throughput, errors, ttft, ttft-p99, gap-p99, tpot, rtt, goodput";

/// The name of metric `m` in [`METRICS`] (`p99`, `throughput`, `errors`, …).
pub fn metric_name(m: Metric) -> &'static str {
    METRICS
        .split(", ")
        .find(|name| metric_named(name) == Some(m))
        .unwrap_or_else(|| m.label())
}

/// The metric a rule or `--metric` names (`p99`, `rps`, `errors`, …).
pub fn metric_named(name: &str) -> Option<Metric> {
    Some(match name {
        "p50" | "median" => Metric::P50,
        "p90" => Metric::P90,
        "p95" => Metric::P95,
        "p99" => Metric::P99,
        "p99.9" | "p999" => Metric::P99_9,
        "mean" => Metric::Mean,
        "max" => Metric::Max,
        "throughput" | "rps" => Metric::Throughput,
        "errors" | "error-rate" | "error_rate" => Metric::ErrorRate,
        "ttft" | "ttft-p50" => Metric::TtftP50,
        "ttft-p99" => Metric::TtftP99,
        "gap-p99" | "itl-p99" => Metric::GapP99,
        "tpot" | "tpot-p50" => Metric::TpotP50,
        "rtt" | "rtt-p50" | "round-trip" => Metric::RttP50,
        "goodput" => Metric::Goodput,
        _ => return None,
    })
}

/// A `--fail-on` rule that cannot be read: the rule as written and why.
#[derive(Debug, thiserror::Error)]
#[error("rule `{rule}`: {why}")]
pub struct RuleError {
    /// The rule as written.
    rule: String,
    /// What is wrong with it.
    why: String,
}

impl FromStr for Rule {
    type Err = RuleError;

    fn from_str(s: &str) -> Result<Self, RuleError> {
        let text = s.trim().to_string();
        let fail = |why: String| {
            Err(RuleError {
                rule: text.clone(),
                why,
            })
        };
        let Some(at) = text.find(['>', '<']) else {
            return fail(
                "no operator; write METRIC > +AMOUNT or METRIC < -AMOUNT, e.g. `p99 > +5%`".into(),
            );
        };
        let op = if text[at..].starts_with('>') {
            Direction::Above
        } else {
            Direction::Below
        };
        let (head, part) = match Part::split(text[..at].trim()) {
            Ok(split) => split,
            Err(why) => return fail(why),
        };
        let name = head.trim().to_ascii_lowercase();
        let Some(metric) = metric_named(&name) else {
            return fail(format!("unknown metric `{name}`; one of {METRICS}"));
        };
        if part.is_some() && !Metric::OF_GROUPS.contains(&metric) {
            return fail(format!(
                "`{name}` is not judged per scenario, step or phase; one of p50, p90, p95, \
                 p99, mean, throughput, errors"
            ));
        }
        let rest = text[at + 1..].trim();
        let (num, unit) = if let Some(n) = rest.strip_suffix("pp") {
            (n, Unit::Points)
        } else if let Some(n) = rest.strip_suffix('%') {
            (n, Unit::Percent)
        } else if let Some(n) = rest.strip_suffix("ms") {
            (n, Unit::Millis)
        } else {
            return fail(format!(
                "amount `{rest}` has no unit; write % of the baseline (e.g. +5%), pp for the \
                 error rate (e.g. +0.1pp) or ms for latency"
            ));
        };
        let num = num.trim().replace('−', "-");
        let signed = num.starts_with(['+', '-']);
        let amount: f64 = match num.parse() {
            Ok(v) if f64::is_finite(v) => v,
            _ => return fail(format!("`{num}` is not a number")),
        };
        match (metric, unit) {
            (Metric::ErrorRate, Unit::Points) => {}
            (Metric::ErrorRate, _) => {
                return fail(
                    "the error rate changes in percentage points: write e.g. +0.1pp".into(),
                );
            }
            (_, Unit::Points) => {
                return fail("pp is for the error rate only; write % (e.g. +5%)".into());
            }
            (Metric::Throughput, Unit::Millis) => {
                return fail("throughput is not in ms; write % (e.g. -3%)".into());
            }
            _ => {}
        }
        match op {
            Direction::Above if amount < 0.0 => {
                return fail("`>` takes a rise: a positive amount, e.g. +5%".into());
            }
            Direction::Below if amount > 0.0 || !signed => {
                return fail("`<` takes a fall: a negative amount, e.g. -3%".into());
            }
            _ => {}
        }
        Ok(Rule {
            text,
            metric,
            part,
            op,
            amount,
            unit,
        })
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// What the rules say about a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct GateOutcome {
    /// Rules met, each as "p99 +12.3 % (rule p99 > +5%)".
    pub met: Vec<String>,
    /// Rules whose metric was inconclusive (or had too little data), same form.
    pub inconclusive: Vec<String>,
    /// Whether the gate fails.
    pub fail: bool,
    /// How many rules there were.
    pub rules: usize,
}

impl GateOutcome {
    /// The one-line verdict, Markdown (`**FAIL**: …`) or plain (`FAIL: …`).
    pub fn line(&self, markdown: bool) -> String {
        let b = |w: &str| {
            if markdown {
                format!("**{w}**")
            } else {
                w.into()
            }
        };
        let n = self.rules;
        let rules = if n == 1 { "rule" } else { "rules" };
        if !self.fail {
            let mut line = format!("{}: no --fail-on rule met ({n} {rules})", b("PASS"));
            if !self.inconclusive.is_empty() {
                line.push_str(&format!("; inconclusive: {}", self.inconclusive.join("; ")));
            }
            return line;
        }
        let mut parts = self.met.clone();
        if parts.is_empty() {
            parts = self
                .inconclusive
                .iter()
                .map(|s| format!("inconclusive {s}"))
                .collect();
        }
        format!("{}: {}", b("FAIL"), parts.join("; "))
    }
}

/// Applies `rules` to every variant against the baseline. A rule's part the comparison judged
/// as what it stands for in runs like `run` (a scenario's only step as its scenario, a plan's
/// only scenario as the run: [`Part::judged_in`]) is judged by those rows; a part the runs do
/// not have is an input error that lists the parts they have.
pub fn judge(
    c: &Comparison,
    rules: &[Rule],
    run: Option<&RunRecord>,
    fail_on_inconclusive: bool,
) -> Result<GateOutcome, crate::Error> {
    let mut said = Said::default();
    for rule in rules {
        let Some(part) = &rule.part else {
            said.apply(c, rule, &c.rows, "");
            continue;
        };
        let judged = part.judged_in(c, run);
        if judged.is_empty() {
            return Err(crate::Error::Invalid {
                what: format!("--fail-on `{}`", rule.text),
                why: part.missing(c, run),
            });
        }
        for (path, rows) in &judged {
            let path = format!("{path}: ");
            said.apply(c, rule, rows, if judged.len() > 1 { &path } else { "" });
        }
    }
    let fail = !said.met.is_empty() || fail_on_inconclusive && !said.inconclusive.is_empty();
    Ok(GateOutcome {
        met: said.met,
        inconclusive: said.inconclusive,
        fail,
        rules: rules.len(),
    })
}

/// The rules met and the rules inconclusive so far.
#[derive(Default)]
struct Said {
    met: Vec<String>,
    inconclusive: Vec<String>,
}

impl Said {
    /// Applies `rule` to its metric's row in `rows` for every variant, each named `prefix`
    /// first (the part, when a rule names several).
    fn apply(&mut self, c: &Comparison, rule: &Rule, rows: &[MetricRow], prefix: &str) {
        let Some(row) = rows.iter().find(|r| r.metric == rule.metric) else {
            return;
        };
        for (i, change) in row.changes.iter().enumerate() {
            let Some(change) = change else { continue };
            let who = if c.labels.len() > 2 {
                format!("{}: {prefix}", c.labels[i])
            } else {
                prefix.to_string()
            };
            // The change in the rule's unit.
            let value = match rule.unit {
                Unit::Percent | Unit::Points => change.change,
                Unit::Millis => row.estimates[0]
                    .value
                    .zip(row.estimates[i].value)
                    .map(|(a, b)| b - a),
            };
            let unit = match rule.unit {
                Unit::Percent => "%",
                Unit::Points => "pp",
                Unit::Millis => "ms",
            };
            let name = rule.text[..rule.text.find(['>', '<']).unwrap_or(0)].trim();
            let shown = match value {
                Some(v) => format!("{who}{name} {v:+.1} {unit} (rule {rule})"),
                None => format!("{who}{name} (rule {rule})"),
            };
            let rose = match change.verdict {
                ChangeVerdict::Better => rule.metric.higher_is_better(),
                ChangeVerdict::Worse => !rule.metric.higher_is_better(),
                ChangeVerdict::Inconclusive { .. }
                | ChangeVerdict::NotEnoughData
                | ChangeVerdict::NotJudged => {
                    self.inconclusive.push(shown);
                    continue;
                }
                ChangeVerdict::Equivalent => continue,
            };
            let passes = value.is_some_and(|v| match rule.op {
                Direction::Above => rose && v > rule.amount,
                Direction::Below => !rose && v < rule.amount,
            });
            if passes {
                self.met.push(shown);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(s: &str) -> Rule {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> String {
        s.parse::<Rule>().unwrap_err().to_string()
    }

    #[test]
    fn rules_parse() {
        let r = rule("p99 > +5%");
        assert_eq!(
            (r.metric, r.op, r.amount, r.unit),
            (Metric::P99, Direction::Above, 5.0, Unit::Percent)
        );
        let r = rule("  throughput<-3 %");
        assert_eq!(
            (r.metric, r.op, r.amount, r.unit),
            (Metric::Throughput, Direction::Below, -3.0, Unit::Percent)
        );
        assert_eq!(r.text, "throughput<-3 %");
        let r = rule("errors > +0.1pp");
        assert_eq!(
            (r.metric, r.amount, r.unit),
            (Metric::ErrorRate, 0.1, Unit::Points)
        );
        let r = rule("P50 > 2ms");
        assert_eq!(
            (r.metric, r.amount, r.unit),
            (Metric::P50, 2.0, Unit::Millis)
        );
        assert_eq!(rule("p99.9 > +10%").metric, Metric::P99_9);
        assert_eq!(rule("mean < −5%").amount, -5.0);
        assert_eq!(rule("p90 > 0%").amount, 0.0);
        assert_eq!(rule("p95 > +1%").metric, Metric::P95);
    }

    #[test]
    fn bad_rules_say_why_and_name_the_rule() {
        for (bad, why) in [
            ("p99 +5%", "no operator"),
            ("p98 > +5%", "unknown metric `p98`"),
            ("p99 > +5", "has no unit"),
            ("p99 > abc%", "is not a number"),
            ("p99 > inf%", "is not a number"),
            ("errors > +5%", "percentage points"),
            ("p99 > +1pp", "pp is for the error rate"),
            ("throughput < -3ms", "not in ms"),
            ("p99 > -5%", "positive amount"),
            ("throughput < 3%", "negative amount"),
            ("throughput < +3%", "negative amount"),
        ] {
            let e = err(bad);
            assert!(e.contains(why), "{bad}: {e}");
            assert!(e.starts_with(&format!("rule `{bad}`")), "{bad}: {e}");
        }
    }

    /// A comparison of two variants with one row per `(metric, base, new, change, verdict)`.
    fn comparison(rows: &[(Metric, f64, f64, f64, ChangeVerdict)]) -> Comparison {
        use crate::analysis::compare::{Change, Estimate, MetricRow};
        let estimate = |v: f64| Estimate {
            value: Some(v),
            ci: None,
            values: vec![],
        };
        Comparison {
            labels: vec!["A".into(), "B".into()],
            runs: vec![3, 3],
            rows: rows
                .iter()
                .map(|&(metric, a, b, change, verdict)| MetricRow {
                    metric,
                    estimates: vec![estimate(a), estimate(b)],
                    changes: vec![
                        None,
                        Some(Change {
                            change: Some(change),
                            ci: None,
                            p_value: None,
                            p_adjusted: None,
                            method: None,
                            verdict,
                            confounded: false,
                        }),
                    ],
                })
                .collect(),
            groups: vec![],
            mismatches: vec![],
            warnings: vec![],
            notes: vec![],
            threshold_pct: 2.0,
            tests: rows.len(),
        }
    }

    #[test]
    fn a_rule_is_met_only_when_significant_in_its_direction_and_past_its_amount() {
        let unsure = ChangeVerdict::Inconclusive {
            runs_needed: None,
            tail_guard: None,
        };
        let c = comparison(&[
            (Metric::P99, 10.0, 12.0, 20.0, ChangeVerdict::Worse),
            (Metric::P50, 2.0, 2.4, 20.0, unsure),
            (Metric::Throughput, 100.0, 90.0, -10.0, ChangeVerdict::Worse),
            (Metric::Mean, 3.0, 2.0, -33.3, ChangeVerdict::Better),
            (Metric::ErrorRate, 0.0, 0.5, 0.5, ChangeVerdict::Worse),
            (Metric::P90, 3.0, 3.01, 0.3, ChangeVerdict::Equivalent),
        ]);
        let met = |rules: &[&str], strict: bool| {
            let rules: Vec<Rule> = rules.iter().map(|r| rule(r)).collect();
            judge(&c, &rules, None, strict).unwrap()
        };
        // Called slower and past the amount: met; a larger amount: not.
        assert!(met(&["p99 > +5%"], false).fail);
        assert_eq!(
            met(&["p99 > +5%"], false).met,
            ["p99 +20.0 % (rule p99 > +5%)"]
        );
        assert!(!met(&["p99 > +25%"], false).fail);
        // In ms: 12 − 10 = +2 ms.
        assert!(met(&["p99 > +1.5ms"], false).fail);
        assert!(!met(&["p99 > +2.5ms"], false).fail);
        // A large estimate that the statistics do not call: not met, unless strict.
        let o = met(&["p50 > +5%"], false);
        assert!(!o.fail && o.met.is_empty(), "{o:?}");
        assert_eq!(o.inconclusive, ["p50 +20.0 % (rule p50 > +5%)"]);
        assert!(met(&["p50 > +5%"], true).fail);
        // Throughput fell (worse): a `<` rule; a `>` rule looks the other way.
        assert!(met(&["throughput < -3%"], false).fail);
        assert!(!met(&["throughput < -15%"], false).fail);
        assert!(!met(&["throughput > +3%"], false).fail);
        // Mean latency fell (better): a `<` rule is met, a `>` rule not.
        assert!(met(&["mean < -10%"], false).fail);
        assert!(!met(&["mean > +0%"], false).fail);
        assert!(met(&["errors > +0.1pp"], false).fail);
        assert!(!met(&["errors > +1pp"], false).fail);
        // Equivalent is never met nor inconclusive, even strictly.
        let o = met(&["p90 > +0%"], true);
        assert!(!o.fail && o.inconclusive.is_empty(), "{o:?}");
        assert_eq!(
            met(&["p90 > +0%", "p99 > +50%", "errors > +1pp"], true).line(true),
            "**PASS**: no --fail-on rule met (3 rules)"
        );
    }

    #[test]
    fn a_rule_may_judge_one_part() {
        let r = rule("p99{step=Pay} > +5%");
        assert_eq!(
            r.part,
            Some(Part::Step("Pay".into())),
            "names keep their case"
        );
        assert_eq!(
            rule("P50{ phase = 2 } > +1ms").part,
            Some(Part::Phase("2".into()))
        );
        for (bad, why) in [
            ("p99{step=pay > +5%", "without its `}`"),
            ("p99{pay} > +5%", "is not a filter"),
            ("p99{region=eu} > +5%", "unknown filter `region`"),
            ("p99{step=} > +5%", "names nothing"),
            (
                "p99.9{step=pay} > +5%",
                "not judged per scenario, step or phase",
            ),
        ] {
            assert!(err(bad).contains(why), "{bad}: {}", err(bad));
        }
        use crate::analysis::compare::GroupRows;
        use crate::analysis::compare::groups::GroupKey;
        use crate::record::model::GroupKind;
        let mut c = comparison(&[(Metric::P99, 10.0, 10.0, 0.0, ChangeVerdict::Equivalent)]);
        let part = |kind, scenario: &str, name: &str, path: &str, p99: f64| GroupRows {
            key: GroupKey {
                kind,
                scenario: Some(scenario.into()),
                name: name.into(),
                path: path.into(),
            },
            rows: comparison(&[(
                Metric::P99,
                10.0,
                10.0 + p99,
                p99 * 10.0,
                ChangeVerdict::Worse,
            )])
            .rows,
        };
        c.groups = vec![
            part(GroupKind::Step, "mix", "pay", "mix / pay", 2.0),
            part(GroupKind::Step, "mix", "browse", "mix / browse", 0.5),
            part(
                GroupKind::Phase,
                "mix",
                "phase 1: 8 VUs",
                "phase 1: 8 VUs",
                3.0,
            ),
        ];
        let met = |r: &str| judge(&c, &[rule(r)], None, false).unwrap();
        // The run's p99 did not move; the step's rose 20 %.
        assert!(!met("p99 > +5%").fail);
        assert_eq!(
            met("p99{step=pay} > +5%").met,
            ["p99{step=pay} +20.0 % (rule p99{step=pay} > +5%)"]
        );
        assert!(met("p99{step=mix / pay} > +5%").fail, "by its path too");
        assert!(!met("p99{step=browse} > +5%").fail);
        assert!(met("p99{phase=1} > +25%").fail, "a phase by its number");
        assert!(met("p99{phase=phase 1: 8 VUs} > +25%").fail);
        let e = judge(&c, &[rule("p99{step=checkout} > +5%")], None, false).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("--fail-on `p99{step=checkout} > +5%`"), "{e}");
        assert!(
            e.contains("the runs have no step `checkout`; they have mix / pay, mix / browse"),
            "{e}"
        );
        assert!(
            judge(&c, &[rule("p99{step=checkout} > +5%")], None, false)
                .unwrap_err()
                .is_input()
        );
    }

    #[test]
    fn the_verdict_line() {
        let pass = GateOutcome {
            met: vec![],
            inconclusive: vec![],
            fail: false,
            rules: 3,
        };
        assert_eq!(pass.line(true), "**PASS**: no --fail-on rule met (3 rules)");
        assert_eq!(pass.line(false), "PASS: no --fail-on rule met (3 rules)");
        let fail = GateOutcome {
            met: vec!["p99 +12.3 % (rule p99 > +5%)".into()],
            inconclusive: vec![],
            fail: true,
            rules: 1,
        };
        assert_eq!(fail.line(true), "**FAIL**: p99 +12.3 % (rule p99 > +5%)");
        let unsure = GateOutcome {
            met: vec![],
            inconclusive: vec!["p50 +1.0 % (rule p50 > +10%)".into()],
            fail: true,
            rules: 1,
        };
        assert_eq!(
            unsure.line(true),
            "**FAIL**: inconclusive p50 +1.0 % (rule p50 > +10%)"
        );
    }
}
