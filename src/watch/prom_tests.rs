use super::*;
use crate::watch::text::parse_value;

fn watch(selectors: &[&str]) -> PromWatch {
    let selectors = selectors
        .iter()
        .map(|s| Selector::parse(s).unwrap())
        .collect();
    PromWatch::new(selectors, DEFAULT_MAX_SERIES)
}

fn find<'a>(
    w: &PromWatch,
    got: &'a Ingested,
    name: &str,
    labels: &str,
    stat: ReadingStat,
) -> Option<&'a Reading> {
    let i = w
        .series()
        .iter()
        .position(|s| s.name == name && s.labels == labels)?;
    got.readings
        .iter()
        .find(|r| r.series == i && r.stat == stat)
}

const PAGE_1: &str = "\
# HELP http_requests_total Requests.
# TYPE http_requests_total counter
http_requests_total{code=\"200\",path=\"/\"} 100 1700000000000
http_requests_total{path=\"/\",code=\"500\"} 10
# TYPE in_flight gauge
in_flight 3
# TYPE rpc_seconds histogram
rpc_seconds_bucket{le=\"0.1\"} 10
rpc_seconds_bucket{le=\"0.2\"} 20
rpc_seconds_bucket{le=\"+Inf\"} 20
rpc_seconds_sum 2.5
rpc_seconds_count 20
";

const PAGE_2: &str = "\
# TYPE http_requests_total counter
http_requests_total{code=\"200\",path=\"/\"} 300
http_requests_total{path=\"/\",code=\"500\"} 4
# TYPE in_flight gauge
in_flight 7.5
# TYPE rpc_seconds histogram
rpc_seconds_bucket{le=\"0.1\"} 10
rpc_seconds_bucket{le=\"+Inf\"} 120
rpc_seconds_bucket{le=\"0.2\"} 120
rpc_seconds_sum 20
rpc_seconds_count 120
";

#[test]
fn counters_become_rates_with_resets_gauges_stay_values() {
    let mut w = watch(&[]);
    let first = w.ingest(PAGE_1, 10.0);
    assert!(
        find(
            &w,
            &first,
            "http_requests_total",
            "{code=\"200\",path=\"/\"}",
            ReadingStat::Rate
        )
        .is_none(),
        "baseline only"
    );
    assert_eq!(
        find(&w, &first, "in_flight", "", ReadingStat::Value)
            .unwrap()
            .value,
        3.0
    );
    let second = w.ingest(PAGE_2, 12.0);
    let ok = find(
        &w,
        &second,
        "http_requests_total",
        "{code=\"200\",path=\"/\"}",
        ReadingStat::Rate,
    );
    assert_eq!(ok.unwrap().value, 100.0, "(300 - 100) / 2 s");
    // 10 → 4: a reset; the 4 counted since it are the increase.
    let reset = find(
        &w,
        &second,
        "http_requests_total",
        "{code=\"500\",path=\"/\"}",
        ReadingStat::Rate,
    );
    assert_eq!(reset.unwrap().value, 2.0);
    assert_eq!(
        find(&w, &second, "in_flight", "", ReadingStat::Value)
            .unwrap()
            .value,
        7.5
    );
    assert_eq!(second.skipped, 0);
    assert_eq!(
        w.series().len(),
        4,
        "two counters, a gauge, a histogram (not its _sum/_count)"
    );
}

#[test]
fn histograms_give_quantiles_of_the_interval_only() {
    let mut w = watch(&["rpc_seconds"]);
    w.ingest(PAGE_1, 0.0);
    let got = w.ingest(PAGE_2, 1.0);
    // The interval saw 100 observations, all in (0.1, 0.2]: the 10 fast ones of before are gone.
    assert_eq!(
        find(&w, &got, "rpc_seconds", "", ReadingStat::Rate)
            .unwrap()
            .value,
        100.0
    );
    let p50 = find(&w, &got, "rpc_seconds", "", ReadingStat::Quantile(0.5))
        .unwrap()
        .value;
    assert!((p50 - 0.15).abs() < 1e-9, "{p50}");
    let p99 = find(&w, &got, "rpc_seconds", "", ReadingStat::Quantile(0.99))
        .unwrap()
        .value;
    assert!((p99 - 0.199).abs() < 1e-9, "{p99}");
    assert_eq!(got.matched, 3, "the three buckets");
    // Nothing new: a rate of 0 and no quantile.
    let idle = w.ingest(PAGE_2, 2.0);
    assert_eq!(
        find(&w, &idle, "rpc_seconds", "", ReadingStat::Rate)
            .unwrap()
            .value,
        0.0
    );
    assert!(find(&w, &idle, "rpc_seconds", "", ReadingStat::Quantile(0.5)).is_none());
}

#[test]
fn quantile_interpolates_and_stops_at_the_last_finite_bound() {
    let b = [(1.0, 50.0), (2.0, 100.0), (f64::INFINITY, 100.0)];
    assert_eq!(quantile(0.5, &b), 1.0);
    assert_eq!(quantile(0.25, &b), 0.5);
    assert_eq!(quantile(0.75, &b), 1.5);
    let tail = [(1.0, 50.0), (f64::INFINITY, 100.0)];
    assert_eq!(quantile(0.9, &tail), 1.0);
}

#[test]
fn selectors_pick_by_name_regex_and_labels() {
    let mut w = watch(&[
        "http_requests_total{code=~\"5..\"}",
        "{__name__=~\"in_.*\"}",
    ]);
    let got = w.ingest(PAGE_1, 0.0);
    assert_eq!(got.matched, 2);
    let names: Vec<_> = w
        .series()
        .iter()
        .map(|s| format!("{}{}", s.name, s.labels))
        .collect();
    assert_eq!(
        names,
        ["http_requests_total{code=\"500\",path=\"/\"}", "in_flight"]
    );
    let mut none = watch(&["no_such_metric"]);
    assert_eq!(none.ingest(PAGE_1, 0.0).matched, 0);
    for bad in [
        "",
        "{}",
        "x{a=\"1\"",
        "x{a~\"1\"}",
        "x{a=1}",
        "x{a=~\"(\"}",
        "bad-name",
    ] {
        assert!(Selector::parse(bad).is_err(), "{bad:?}");
    }
    assert!(Selector::parse("x{a!=\"1\", b!~\"2|3\"}").is_ok());
}

#[test]
fn the_series_cap_bounds_memory_and_counts_the_rest() {
    let mut page = String::from("# TYPE c counter\n");
    for i in 0..1_000 {
        page.push_str(&format!("c{{id=\"{i}\"}} {i}\n"));
    }
    let mut w = PromWatch::new(Vec::new(), 10);
    let got = w.ingest(&page, 0.0);
    assert_eq!(
        (w.series().len(), got.matched, got.over_cap),
        (10, 1_000, 990)
    );
    let got = w.ingest(&page, 1.0);
    assert_eq!(got.readings.len(), 10);
    assert_eq!(w.series().len(), 10);
}

#[test]
fn text_format_details_escapes_special_values_openmetrics() {
    let page = "\
# TYPE esc gauge
esc{path=\"a\\\"b\\\\c\\nd\",x=\"1,2\"} +Inf
esc{path=\"z\"} NaN
# TYPE om_requests counter
om_requests_total{a=\"1\"} 5 # {trace_id=\"x\"} 1.0
om_requests_created{a=\"1\"} 1700000000
this is not a sample
{orphan=\"1\"} 2
# EOF
";
    let mut w = watch(&[]);
    let got = w.ingest(page, 0.0);
    assert_eq!(got.skipped, 2);
    let esc = &w.series()[0];
    assert_eq!(esc.labels, "{path=\"a\\\"b\\\\c\\nd\",x=\"1,2\"}");
    assert_eq!(got.readings[0].value, f64::INFINITY);
    assert!(got.readings[1].value.is_nan());
    let om = &w.series()[2];
    assert_eq!(
        (om.name.as_str(), om.kind),
        ("om_requests_total", Kind::Counter)
    );
    assert_eq!(w.series().len(), 3, "_created is not a series");
    let got = w.ingest(&page.replace("} 5 #", "} 9 #"), 2.0);
    assert_eq!(
        got.readings.iter().find(|r| r.series == 2).unwrap().value,
        2.0
    );
    assert_eq!(parse_value("-Inf"), Some(f64::NEG_INFINITY));
    assert_eq!(parse_value("1e3"), Some(1000.0));
}

#[test]
fn a_gauge_named_like_a_suffix_keeps_its_name() {
    let page = "# TYPE queue_count gauge\nqueue_count 4\n# TYPE s summary\ns{quantile=\"0.5\"} 0.2\ns_sum 10\ns_count 5\n";
    let mut w = watch(&[]);
    w.ingest(page, 0.0);
    let got = w.ingest(&page.replace("s_count 5", "s_count 15"), 1.0);
    assert_eq!(
        find(&w, &got, "queue_count", "", ReadingStat::Value)
            .unwrap()
            .value,
        4.0
    );
    assert_eq!(
        find(&w, &got, "s", "{quantile=\"0.5\"}", ReadingStat::Value)
            .unwrap()
            .value,
        0.2
    );
    assert_eq!(
        find(&w, &got, "s_count", "", ReadingStat::Rate)
            .unwrap()
            .value,
        10.0
    );
    assert_eq!(
        find(&w, &got, "s_sum", "", ReadingStat::Rate)
            .unwrap()
            .value,
        0.0
    );
}

#[test]
fn a_series_that_appears_later_counts_from_zero() {
    let mut w = watch(&["http_requests_total", "rpc_seconds"]);
    w.ingest("# TYPE http_requests_total counter\n", 0.0);
    let page = "\
# TYPE http_requests_total counter
http_requests_total{path=\"/\"} 50
# TYPE rpc_seconds histogram
rpc_seconds_bucket{le=\"0.1\"} 4
rpc_seconds_bucket{le=\"+Inf\"} 4
";
    let got = w.ingest(page, 1.0);
    let rate = find(
        &w,
        &got,
        "http_requests_total",
        "{path=\"/\"}",
        ReadingStat::Rate,
    );
    assert_eq!(
        rate.unwrap().value,
        50.0,
        "created in the interval: 50 / 1 s"
    );
    let hist = find(&w, &got, "rpc_seconds", "", ReadingStat::Rate);
    assert_eq!(hist.unwrap().value, 4.0);
}
