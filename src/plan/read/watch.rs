//! `[[watch]]` tables (in plans and in suites): each a typed [`Spec`], every error at the line and
//! column of the value at fault.

use std::ops::Range;

use toml::Spanned;

use super::Ctx;
use super::values::parse_duration;
use crate::error::Error;
use crate::plan::file::{PlanFile, WatchFile};
use crate::watch::select::Selector;
use crate::watch::spec::{Spec, SpecError, WatchOptions, WatchTarget};

/// How a reader turns a span and a message into its own error (`file:line:col: why`).
pub type ErrorAt<'a> = &'a dyn Fn(Range<usize>, String, Option<&str>) -> Error;

const HINT: &str = "a [[watch]] has prom = \"http://HOST:PORT/metrics\" or pid = N, and optionally \
                    metrics = [\"name{label=\\\"v\\\"}\"], max_series, interval, timeout";

/// One `[[watch]]` table, validated (the URL is not resolved, the process not looked up: both
/// happen when the run starts).
pub fn watch_spec(w: &Spanned<WatchFile>, at: ErrorAt<'_>) -> Result<Spec, Error> {
    let f = w.get_ref();
    let target = match (&f.prom, &f.pid) {
        (Some(url), None) => WatchTarget::Prom(url.get_ref().clone()),
        (None, Some(pid)) if *pid.get_ref() > 0 => WatchTarget::Pid(*pid.get_ref()),
        (None, Some(pid)) => {
            return Err(at(pid.span(), "pid must be a positive number".into(), None));
        }
        (Some(_), Some(pid)) => {
            return Err(at(
                pid.span(),
                "a [[watch]] watches one thing: prom or pid, not both".into(),
                Some("write one [[watch]] table per thing to watch"),
            ));
        }
        (None, None) => {
            return Err(at(
                w.span(),
                "this [[watch]] has neither prom nor pid".into(),
                Some(HINT),
            ));
        }
    };
    for m in &f.metrics {
        Selector::parse(m.get_ref()).map_err(|e| at(m.span(), e.to_string(), None))?;
    }
    let duration = |d: &Option<Spanned<String>>| -> Result<_, Error> {
        d.as_ref()
            .map(|d| {
                parse_duration(d.get_ref()).map_err(|e| {
                    at(
                        d.span(),
                        e.to_string(),
                        Some("write durations like 1s or 500ms"),
                    )
                })
            })
            .transpose()
    };
    let options = WatchOptions {
        metrics: f.metrics.iter().map(|m| m.get_ref().clone()).collect(),
        max_series: f.max_series.as_ref().map(|m| *m.get_ref()),
        interval: duration(&f.interval)?,
        timeout: duration(&f.timeout)?,
    };
    Spec::new(target, &options).map_err(|e| {
        let span = match &e {
            SpecError::Url(_) => f.prom.as_ref().map(Spanned::span),
            SpecError::Interval(_) => f.interval.as_ref().map(Spanned::span),
            SpecError::Timeout { .. } => f.timeout.as_ref().map(Spanned::span),
            SpecError::MaxSeries(_) => f.max_series.as_ref().map(Spanned::span),
            _ => None,
        };
        at(span.unwrap_or_else(|| w.span()), e.to_string(), None)
    })
}

impl Ctx<'_> {
    /// The plan's `[[watch]]` tables.
    pub(super) fn watches(&self, f: &PlanFile) -> Result<Vec<Spec>, Error> {
        let at =
            |span: Range<usize>, why: String, hint: Option<&str>| self.err(Some(span), why, hint);
        f.watch.iter().map(|w| watch_spec(w, &at)).collect()
    }
}
