//! Tests of threshold parsing and judging.

use super::*;

#[test]
fn metrics_and_filters_parse() {
    assert_eq!(
        parse_metric("latency").unwrap(),
        (ThresholdMetric::Latency, None)
    );
    assert_eq!(
        parse_metric("latency{step=get_task}").unwrap(),
        (
            ThresholdMetric::Latency,
            Some(Filter::Step("get_task".into()))
        )
    );
    assert_eq!(
        parse_metric("errors{phase=3}").unwrap(),
        (ThresholdMetric::ErrorRate, Some(Filter::Phase("3".into())))
    );
    assert!(
        parse_metric("latncy")
            .unwrap_err()
            .to_string()
            .contains("unknown metric")
    );
    assert!(
        parse_metric("latency{stp=x}")
            .unwrap_err()
            .to_string()
            .contains("unknown filter")
    );
    assert!(
        parse_metric("latency{step=x")
            .unwrap_err()
            .to_string()
            .contains("must end")
    );
}

#[test]
fn conditions_parse_with_units() {
    let c = |m, s| parse_condition(m, s).unwrap();
    assert_eq!(
        c(ThresholdMetric::Latency, "p95 < 5ms"),
        (Stat::Percentile(95.0), Op::Lt, 5.0)
    );
    assert_eq!(
        c(ThresholdMetric::Latency, "p(99.9)<=1.5s"),
        (Stat::Percentile(99.9), Op::Le, 1500.0)
    );
    assert_eq!(
        c(ThresholdMetric::Latency, "avg < 250us"),
        (Stat::Mean, Op::Lt, 0.25)
    );
    assert_eq!(
        c(ThresholdMetric::ErrorRate, "rate < 1%"),
        (Stat::Value, Op::Lt, 0.01)
    );
    assert_eq!(
        c(ThresholdMetric::CheckRate, "rate >= 0.99"),
        (Stat::Value, Op::Ge, 0.99)
    );
    assert_eq!(
        c(ThresholdMetric::Throughput, "> 100"),
        (Stat::Value, Op::Gt, 100.0)
    );
    assert_eq!(
        c(ThresholdMetric::Requests, "count >= 10"),
        (Stat::Value, Op::Ge, 10.0)
    );
    for (m, bad) in [
        (ThresholdMetric::Latency, "p95 5ms"),
        (ThresholdMetric::Latency, "p101 < 5ms"),
        (ThresholdMetric::Latency, "p95 < fast"),
        (ThresholdMetric::Latency, "rate < 1%"),
        (ThresholdMetric::ErrorRate, "rate < 150%"),
        (ThresholdMetric::ErrorRate, "p95 < 1%"),
    ] {
        assert!(parse_condition(m, bad).is_err(), "{bad}");
    }
    // A bare whole number as an error rate is a percentage gone wrong: `errors<1` read as
    // 100 % never failed. A check rate of 1 is every check passed.
    for bare in ["rate < 1", "rate<=5", "rate < 1.0"] {
        let why = parse_condition(ThresholdMetric::ErrorRate, bare).unwrap_err();
        assert!(why.to_string().contains("write `"), "{why}");
    }
    // A record written before that refusal holds it, and is judged again as written.
    assert_eq!(
        parse_recorded_condition(ThresholdMetric::ErrorRate, "rate < 1").unwrap(),
        (Stat::Value, Op::Lt, 1.0)
    );
    assert_eq!(
        c(ThresholdMetric::CheckRate, "rate == 1"),
        (Stat::Value, Op::Eq, 1.0)
    );
    // Every request failing, as a negative test asks, is a fraction as written.
    assert_eq!(
        c(ThresholdMetric::ErrorRate, "rate >= 1"),
        (Stat::Value, Op::Ge, 1.0)
    );
    let why = parse_condition(ThresholdMetric::CheckRate, "rate > 99").unwrap_err();
    assert!(why.to_string().contains("`99%`"), "{why}");
    // A bound below zero never (or always) holds: refused when the plan is read, not after the
    // load.
    for (m, bad) in [
        (ThresholdMetric::Latency, "p95 < -5ms"),
        (ThresholdMetric::Throughput, "> -1"),
        (ThresholdMetric::Requests, "count < -10"),
    ] {
        let why = parse_condition(m, bad).unwrap_err().to_string();
        assert!(
            why.contains("is below zero, where no figure is"),
            "{bad}: {why}"
        );
    }
}

struct Fake;
impl Observed for Fake {
    fn latency(&self, _: Option<&Filter>) -> Option<Histogram<u64>> {
        let mut h = crate::record::recorder::new_histogram();
        for v in 1..=100u64 {
            h.record(v * 100).unwrap();
        }
        Some(h)
    }
    fn counts(&self, _: Option<&Filter>) -> Counts {
        Counts {
            requests: 200,
            attempts: 200,
            errors: 3,
            generator_limited: 0,
        }
    }
    fn checks(&self, _: Option<&Filter>) -> (u64, u64) {
        (99, 1)
    }
    fn throughput(&self, _: Option<&Filter>) -> Option<f64> {
        Some(100.0)
    }
}

fn threshold(metric: &str, cond: &str) -> Threshold {
    let (m, filter) = parse_metric(metric).unwrap();
    let (stat, op, bound) = parse_condition(m, cond).unwrap();
    Threshold {
        metric_text: metric.into(),
        condition_text: cond.into(),
        metric: m,
        filter,
        stat,
        op,
        bound,
        abort_on_fail: false,
        grace: Duration::ZERO,
    }
}

#[test]
fn evaluation() {
    let cases = [
        ("latency", "p95 < 10ms", true),
        ("latency", "p95 < 9ms", false),
        ("latency", "max <= 10.1ms", true),
        ("errors", "rate < 1%", false),
        ("errors", "rate < 2%", true),
        ("checks", "rate >= 99%", true),
        ("rps", "> 99", true),
        ("requests", "count >= 201", false),
    ];
    for (m, c, expected) in cases {
        let t = threshold(m, c);
        let observed = t.observe(&Fake);
        assert_eq!(t.passes(observed), expected, "{m} {c}: {observed:?}");
    }
    assert!(!threshold("latency", "p95 < 1s").passes(None));
}
