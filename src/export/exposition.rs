//! The Prometheus text exposition format (0.0.4) of a [`LiveSnapshot`], for `--metrics-listen`.

use std::fmt::Write as _;

use super::{Family, LiveSnapshot, series};

/// The `Content-Type` of the page.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Renders the snapshot as a metrics page: per family a `# HELP` and `# TYPE` line, then its
/// samples (no timestamps: the scraper's time is the sample's).
pub fn render(snapshot: &LiveSnapshot) -> String {
    let all = series(snapshot);
    let mut out = String::with_capacity(all.len() * 80);
    for family in Family::ALL {
        let meta = family.meta();
        let (name, help) = (meta.name, meta.help);
        let kind = match meta.kind {
            super::SeriesType::Counter => "counter",
            super::SeriesType::Gauge => "gauge",
            super::SeriesType::Histogram => "histogram",
        };
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for s in all.iter().filter(|s| s.family == family) {
            out.push_str(&s.name);
            out.push('{');
            for (i, (k, v)) in s.labels.iter().enumerate() {
                let sep = if i == 0 { "" } else { "," };
                let _ = write!(out, "{sep}{k}=\"{}\"", escape(v));
            }
            let _ = writeln!(out, "}} {}", number(s.value));
        }
    }
    out
}

/// A label value escaped: `\` → `\\`, `"` → `\"`, newline → `\n`.
fn escape(v: &str) -> std::borrow::Cow<'_, str> {
    if !v.contains(['\\', '"', '\n']) {
        return v.into();
    }
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
        .into()
}

/// A value as the format writes it (`+Inf`, `NaN`, else Rust's shortest round-trip form).
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{LatencyBuckets, ScopeFigures};
    use crate::watch::prom::{PromWatch, ReadingStat};

    pub(crate) fn snapshot() -> LiveSnapshot {
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for us in [800, 1_500, 1_500, 40_000] {
            h.record(us).unwrap();
        }
        let whole = ScopeFigures {
            requests: 5,
            errors: vec![("timeout", 1), ("status_5xx", 1)],
            statuses: vec![(200, 3), (503, 1)],
            dropped: Some(0),
            in_flight: Some(2),
            active_vus: Some(4),
            asked_per_s: Some(50.0),
            achieved_per_s: Some(49.5),
            generator_cpu: Some(0.25),
            generator_steal: Some(0.012),
            latency: LatencyBuckets::from_hdr_us(&h),
            ..ScopeFigures::default()
        };
        let step = ScopeFigures {
            scenario: "browse \"q\"".into(),
            step: "home".into(),
            requests: 5,
            ..ScopeFigures::default()
        };
        LiveSnapshot {
            unix_ms: 1_700_000_000_000,
            scopes: vec![whole, step],
            labels: Vec::new(),
        }
    }

    #[test]
    fn the_page_holds_every_family_with_bounded_labels() {
        let page = render(&snapshot());
        for line in [
            "# TYPE volley_requests_total counter",
            "volley_requests_total{scenario=\"\",step=\"\"} 5",
            "volley_requests_total{scenario=\"browse \\\"q\\\"\",step=\"home\"} 5",
            "volley_errors_total{kind=\"timeout\",scenario=\"\",step=\"\"} 1",
            "volley_responses_total{scenario=\"\",status=\"503\",step=\"\"} 1",
            "volley_in_flight{scenario=\"\",step=\"\"} 2",
            "volley_rate_asked_per_second{scenario=\"\",step=\"\"} 50",
            "volley_rate_achieved_per_second{scenario=\"\",step=\"\"} 49.5",
            "volley_generator_cpu_ratio{scenario=\"\",step=\"\"} 0.25",
            "# TYPE volley_generator_steal_ratio gauge",
            "volley_generator_steal_ratio{scenario=\"\",step=\"\"} 0.012",
            "# TYPE volley_latency_seconds histogram",
            "volley_latency_seconds_bucket{le=\"0.001\",scenario=\"\",step=\"\"} 1",
            "volley_latency_seconds_bucket{le=\"0.0025\",scenario=\"\",step=\"\"} 3",
            "volley_latency_seconds_bucket{le=\"+Inf\",scenario=\"\",step=\"\"} 4",
            "volley_latency_seconds_count{scenario=\"\",step=\"\"} 4",
        ] {
            assert!(page.lines().any(|l| l == line), "{line}\n{page}");
        }
        // No asked rate for the step (closed model): the series is left out, not zero.
        assert!(!page.contains("volley_rate_asked_per_second{scenario=\"browse"));
    }

    #[test]
    fn every_series_carries_the_runs_id_and_tags_in_label_order() {
        let mut s = snapshot();
        s.labels = vec![
            ("run_id".into(), "ab12".into()),
            ("testid".into(), "pr-1".into()),
        ];
        let page = render(&s);
        let samples: Vec<&str> = page.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(
            samples
                .iter()
                .all(|l| l.contains("run_id=\"ab12\"") && l.contains("testid=\"pr-1\""))
        );
        assert!(page.lines().any(|l| l
            == "volley_errors_total{kind=\"timeout\",run_id=\"ab12\",scenario=\"\",step=\"\",testid=\"pr-1\"} 1"));
    }

    #[test]
    fn the_page_reads_back_through_the_watch_parser() {
        // volley's own parser (src/watch) reads the page: the histogram gives its quantiles.
        let page = render(&snapshot());
        let mut w = PromWatch::new(Vec::new(), 1_000);
        let first = w.ingest(&page, 0.0);
        assert_eq!(first.skipped, 0, "{page}");
        let empty = LiveSnapshot::default();
        assert_eq!(
            render(&empty)
                .lines()
                .filter(|l| !l.starts_with('#'))
                .count(),
            0
        );
        let mut later = snapshot();
        later.scopes[0].latency.le.iter_mut().for_each(|n| *n *= 2);
        later.scopes[0].latency.count *= 2;
        later.scopes[0].requests = 15;
        let second = w.ingest(&render(&later), 1.0);
        let rate = |name: &str| {
            let i = w
                .series()
                .iter()
                .position(|s| s.name == name && s.labels == "{scenario=\"\",step=\"\"}")
                .unwrap();
            second
                .readings
                .iter()
                .find(|r| r.series == i && r.stat == ReadingStat::Rate)
                .unwrap()
                .value
        };
        assert_eq!(rate("volley_requests_total"), 10.0);
        assert_eq!(rate("volley_latency_seconds"), 4.0);
    }
}
