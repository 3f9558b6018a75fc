//! Uncertainty: a record's 95 % intervals are what its latency batches and series give, and its
//! batches hold every response.

use super::{Findings, Rule};
use crate::analysis::interval::{Input, ci95_by};
use crate::record::batches::Batches;
use crate::record::decode_histogram;
use crate::record::model::{BoundFigure, RunRecord};

/// `summary.ci95` recomputed from `histograms.batches_us` and `series`; the batches' responses
/// add up to the latency histogram's.
pub(super) fn check(r: &RunRecord, f: &mut Findings) {
    let Some(recorded) = &r.summary.ci95 else {
        return;
    };
    let h = &r.histograms;
    let (Ok(batches), Ok(latency)) = (
        Batches::decode(h.batch_s, &h.batches_us),
        decode_histogram(&h.latency_us),
    ) else {
        // An undecodable histogram is `histogram_count`'s finding.
        return;
    };
    if !batches.is_empty() {
        f.equal(
            Rule::IntervalsAgree,
            "histograms.batches_us",
            batches.len(),
            latency.len(),
            || "the responses in histograms.latency_us".into(),
        );
    }
    let hs = batches.histograms();
    let again = ci95_by(
        &Input {
            window_s: r.summary.duration_s,
            series: &r.series,
            batch_s: batches.batch_s(),
            batches: &hs,
            rps: r.summary.rps,
            latency: &latency,
        },
        recorded.autocorrelation,
    );
    for figure in BoundFigure::ALL {
        let path = format!("summary.ci95.{}", figure.field());
        let (found, expected) = (recorded.get(figure), again.get(figure));
        let agree = match (found, expected) {
            (Some(a), Some(b)) => {
                super::near(a.value, b.value)
                    && super::near(a.half_width, b.half_width)
                    && (a.batches, a.batch_s) == (b.batches, b.batch_s)
            }
            (None, None) => true,
            _ => false,
        };
        f.check(agree, Rule::IntervalsAgree, path, show(found), || {
            format!("{} from the batches and the series", show(expected))
        });
    }
}

/// The figure's field in `summary.ci95`.
fn show(b: Option<&crate::record::model::Bound>) -> String {
    b.map_or_else(
        || "none".into(),
        |b| {
            format!(
                "{} ± {} ({} batches of {} s)",
                b.value, b.half_width, b.batches, b.batch_s
            )
        },
    )
}
