//! `report.html` and the HTML comparison: one self-contained page each, rendered with minijinja
//! from the templates in `src/report/templates/` (compiled into the binary). Charts are inline
//! SVG drawn by [`charts`](super::charts); the page has no scripts and loads nothing — its
//! Content-Security-Policy forbids it, so an accidental external reference shows up as an error
//! in the browser test rather than as a silent fetch.

use minijinja::value::Serde;
use minijinja::{Environment, context};

use super::charts::compare::compare_charts;
use super::charts::run::run_charts;
use super::comparison::compare_view;
use super::view::run_view;
use crate::analysis::compare::{Comparison, Variant};
use crate::error::Error;
use crate::record::model::RunRecord;

fn environment() -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    for (name, source) in [
        ("base.html", include_str!("templates/base.html")),
        ("macros.html", include_str!("templates/macros.html")),
        ("run.html", include_str!("templates/run.html")),
        (
            "compare_parts.html",
            include_str!("templates/compare_parts.html"),
        ),
        ("compare.html", include_str!("templates/compare.html")),
        ("suite.html", include_str!("templates/suite.html")),
    ] {
        env.add_template(name, source)
            .map_err(|e| render_error(name, &e))?;
    }
    Ok(env)
}

fn render_error(what: &str, e: &minijinja::Error) -> Error {
    // minijinja's Display has the template line; the chain has the cause.
    let mut why = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        why.push_str(&format!(": {s}"));
        source = s.source();
    }
    Error::Render {
        what: what.into(),
        why,
    }
}

/// Renders the HTML report of a run.
pub fn render_run(r: &RunRecord) -> Result<String, Error> {
    let ctx = context! {
        v => Serde(run_view(r)),
        charts => Serde(run_charts(r)?),
        version => r.tool.version.clone(),
    };
    render_page("run.html", "report.html", ctx)
}

/// Renders the HTML comparison of `variants`.
pub fn render_compare(
    variants: &[Variant],
    c: &Comparison,
    lead: Option<&str>,
) -> Result<String, Error> {
    let ctx = context! {
        v => Serde(compare_view(variants, c)),
        lead => lead,
        charts => Serde(compare_charts(variants)?),
        version => env!("CARGO_PKG_VERSION"),
    };
    render_page("compare.html", "comparison", ctx)
}

/// Renders template `name` (one of `src/report/templates/`) with `ctx`; `what` names the page
/// in errors. Every page, the suite report's included, renders through this.
pub(super) fn render_page(name: &str, what: &str, ctx: minijinja::Value) -> Result<String, Error> {
    let env = environment()?;
    let template = env.get_template(name).map_err(|e| render_error(what, &e))?;
    template.render(ctx).map_err(|e| render_error(what, &e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::{CompareOptions, compare};
    use crate::record::fixture::record;

    /// `<figure class="chart" …>` blocks of a page, by id.
    fn figures(html: &str) -> Vec<(String, String)> {
        html.split("<figure class=\"chart\" id=\"chart-")
            .skip(1)
            .map(|rest| {
                let id = rest.split('"').next().unwrap().to_string();
                let body = rest.split("</figure>").next().unwrap().to_string();
                (id, body)
            })
            .collect()
    }

    #[test]
    fn run_page_is_self_contained_with_every_chart() {
        let r = record("demo", 10, 500, 3000, 5, 0.1);
        let html = render_run(&r).unwrap();
        assert!(html.starts_with("<!doctype html>"));
        assert!(html.contains("default-src 'none'"));
        assert!(!html.contains("<script"));
        assert!(!html.contains("src=\""), "nothing is loaded");
        let ids: Vec<String> = figures(&html).into_iter().map(|f| f.0).collect();
        assert_eq!(
            ids,
            [
                "throughput",
                "latency",
                "in-flight",
                "spectrum",
                "histogram"
            ]
        );
        for (id, body) in figures(&html) {
            assert!(body.contains("<svg"), "{id}");
            assert!(
                body.contains("<polyline") || body.contains("<rect"),
                "{id} has no data"
            );
            assert!(body.contains("class=\"legend\""), "{id}");
        }
        assert!(html.contains("<h2>Status codes</h2>"));
        assert!(
            html.contains("<td class=\"num\">5,000</td>"),
            "requests cell"
        );
        assert!(html.contains("Completed with") || html.contains("Completed:"));
        // Text from the record is escaped.
        let mut r = r;
        r.name = "<b>x</b>".into();
        let html = render_run(&r).unwrap();
        assert!(
            html.contains("&lt;b&gt;x&lt;&#x2f;b&gt;") || html.contains("&lt;b&gt;x&lt;/b&gt;")
        );
    }

    #[test]
    fn failed_and_empty_runs_render() {
        let mut r = record("down", 0, 0, 0, 0, 0.0);
        r.summary.requests = 10;
        r.summary.errors = 10;
        r.interrupted = Some("SIGINT".into());
        let html = render_run(&r).unwrap();
        assert!(html.contains("Every request failed"), "{html}");
        assert!(html.contains("No charts"), "{html}");
    }

    #[test]
    fn comparison_page_overlays_variants() {
        let v = |label: &str, latency| crate::analysis::compare::Variant {
            label: label.into(),
            source: label.into(),
            runs: (0..4)
                .map(|i| record(label, 6, 1000 + i * 3, latency + i, 0, 0.05))
                .collect(),
        };
        let variants = [v("before", 5000), v("after", 6000)];
        let c = compare(&variants, CompareOptions::default());
        let html = render_compare(&variants, &c, None).unwrap();
        assert!(!html.contains("gate: PASS"), "{html}");
        let ids: Vec<String> = figures(&html).into_iter().map(|f| f.0).collect();
        assert_eq!(ids, ["compare-spectrum", "compare-throughput"]);
        assert!(html.contains("after vs before: "), "{html}");
        assert!(html.contains("<td class=\"worse\">slower</td>"), "{html}");
        // A line put first (the gate's verdict, what `--repeat-until` got) heads the page.
        let led = render_compare(&variants, &c, Some("gate: PASS <p99>")).unwrap();
        assert!(led.contains("<span>gate: PASS &lt;p99&gt;</span>"), "{led}");
    }
}
