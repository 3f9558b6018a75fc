//! Uncertainty: a record's 95 % intervals — the run's and each group's — are what their latency
//! batches and seconds give, and the batches hold every response.

use super::{Findings, Rule};
use crate::analysis::interval::{Input, MIN_BATCHES, ci95_by, of_group};
use crate::record::batches::Batches;
use crate::record::decode_histogram;
use crate::record::group_series::GroupSeries;
use crate::record::model::{
    Autocorrelation, BoundFigure, Ci95, Group, GroupKind, PrecisionOutcome, ProfileKind, RunRecord,
    ScenarioConfig,
};

/// `summary.ci95` recomputed from `histograms.batches_us` and `series`; the batches' responses
/// add up to the latency histogram's.
pub(super) fn check(r: &RunRecord, f: &mut Findings) {
    let Some(recorded) = &r.summary.ci95 else {
        return;
    };
    if let Some(p) = &recorded.precision {
        // Both are refused before a run: a load that changes, and shares merged afterwards.
        f.check(
            recorded.unsteady.is_none() && r.merged.is_none(),
            Rule::IntervalsAgree,
            "summary.ci95.precision",
            "present",
            || {
                "none: a run whose load changed, or a merged record, is never run until precise"
                    .into()
            },
        );
        precision(p, r, f);
    }
    if let Some(why) = changing_phases(r).or_else(|| scenarios_apart(r)) {
        // Phases that ramp or hold different levels, scenarios apart: a load that changed.
        f.check(
            recorded.unsteady.is_some(),
            Rule::IntervalsAgree,
            "summary.ci95.unsteady",
            "absent",
            || format!("a cause: {why}"),
        );
    }
    if let Some(apart) = r.merged.as_ref().and_then(|m| m.apart()) {
        // Shares that measured apart are a load that changed, whatever the record claims.
        f.check(
            recorded.unsteady.is_some(),
            Rule::IntervalsAgree,
            "summary.ci95.unsteady",
            "absent",
            || format!("a cause: {apart}"),
        );
    }
    if let Some(why) = &recorded.unsteady {
        // A load that changed has no intervals, whatever its batches would give; nor have
        // its groups.
        for (i, g) in r.groups.iter().enumerate() {
            f.check(
                g.ci95.is_none(),
                Rule::IntervalsAgree,
                format!("groups[{i}].ci95"),
                "present",
                || format!("none: summary.ci95.unsteady says {why}"),
            );
        }
        for figure in BoundFigure::ALL {
            let found = recorded.get(figure);
            f.check(
                found.is_none(),
                Rule::IntervalsAgree,
                format!("summary.ci95.{}", figure.field()),
                show(found),
                || format!("none: summary.ci95.unsteady says {why}"),
            );
        }
        return;
    }
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
    let mut again = ci95_by(
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
    let rates_apart = r.merged.as_ref().is_some_and(|m| m.rates_apart());
    if rates_apart {
        again.rps = None;
    }
    agree(recorded, &again, "summary.ci95", f);
    for (i, g) in r.groups.iter().enumerate() {
        group(r, i, g, (recorded.autocorrelation, rates_apart), f);
    }
}

/// Where the record's phases show a load that changed: a stage that ramps (`ramp_from`), or
/// two phases of one scenario that hold different levels (a ladder). Stages that all hold one
/// level are a steady load, with intervals.
fn changing_phases(r: &RunRecord) -> Option<String> {
    let phases: Vec<(usize, &Group)> = r
        .groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.kind == GroupKind::Phase)
        .collect();
    if let Some((i, _)) = phases.iter().find(|(_, g)| g.ramp_from.is_some()) {
        return Some(format!("groups[{i}] is a stage that ramps"));
    }
    let level = |g: &Group| (g.target_vus, g.target_rps.map(f64::to_bits));
    phases.iter().enumerate().find_map(|(k, (j, g))| {
        let (i, _) = phases[..k]
            .iter()
            .find(|(_, o)| o.scenario == g.scenario && level(o) != level(g))?;
        Some(format!(
            "groups[{i}] and groups[{j}] are phases of one scenario at different levels"
        ))
    })
}

/// Where the record's scenarios show a load that changed in its window (as the plan's own
/// `unsteady` check finds before a run): one of several VUs running its own
/// iteration count (each stops when it is done), one that ends by a count beside others,
/// scenarios that start or stop apart, or a window that begins before any scenario does.
/// Records without their scenarios' loads (older versions) say nothing here.
fn scenarios_apart(r: &RunRecord) -> Option<String> {
    let scenarios = &r.config.scenarios;
    let first = scenarios.first()?;
    let span = |s: &ScenarioConfig| s.load.as_ref().map(|l| (s.start_after_s, l.duration_s));
    for (i, s) in scenarios.iter().enumerate() {
        let load = s.load.as_ref()?;
        let at = format!("config.scenarios[{i}]");
        // A merged record's VUs are its shares' together: a share of one VU each ends all at
        // once (shares that end apart are `merged`'s own check).
        let vus = load.peak_vus.unwrap_or(1);
        if load.profile == ProfileKind::PerVuIterations && vus > 1 && r.merged.is_none() {
            return Some(format!(
                "{at} runs an iteration count per VU on several VUs"
            ));
        }
        if load.iterations.is_some() && scenarios.len() > 1 {
            return Some(format!(
                "{at} ends by an iteration count beside other scenarios"
            ));
        }
        if span(s) != span(first) {
            return Some(format!(
                "{at} starts or stops apart from config.scenarios[0]"
            ));
        }
    }
    let earliest = scenarios
        .iter()
        .map(|s| s.start_after_s)
        .fold(f64::INFINITY, f64::min);
    (earliest > r.config.warmup_s)
        .then(|| "every scenario starts after the measured window begins".to_string())
}

/// A group's intervals are what its own batches give over the run's seconds, its batches hold
/// its every response, it has both or neither, and only when its window starts with the run's.
/// `how`: the record's autocorrelation method, and whether merged shares measured too far
/// apart for a rate's interval ([`crate::record::shares::rates_apart`]).
fn group(r: &RunRecord, i: usize, g: &Group, how: (Autocorrelation, bool), f: &mut Findings) {
    let (method, rates_apart) = how;
    let path = format!("groups[{i}]");
    f.check(
        g.ci95.is_some() == g.batches.is_some(),
        Rule::IntervalsAgree,
        format!("{path}.ci95"),
        if g.ci95.is_some() {
            "present"
        } else {
            "absent"
        },
        || "present exactly when groups[].batches is".into(),
    );
    let (Some(recorded), Some(b)) = (&g.ci95, &g.batches) else {
        return;
    };
    // Its seconds are counted from the run's second 0, so its window must start there too.
    let start = g.start_s.unwrap_or(0.0);
    f.check(
        start.abs() <= 1e-3,
        Rule::IntervalsAgree,
        format!("{path}.start_s"),
        start,
        || "0: a group whose window starts after the measured window's has no intervals".into(),
    );
    let (Ok(seconds), Ok(latency)) = (
        GroupSeries::from_record(b),
        decode_histogram(&g.histogram_us),
    ) else {
        f.check(
            false,
            Rule::IntervalsAgree,
            format!("{path}.batches"),
            "undecodable",
            || "HDR histograms".into(),
        );
        return;
    };
    f.equal(
        Rule::IntervalsAgree,
        format!("{path}.batches.requests"),
        seconds.requests().iter().sum(),
        g.requests,
        || format!("{path}.requests"),
    );
    f.equal(
        Rule::IntervalsAgree,
        format!("{path}.batches.latency_us"),
        seconds.batches().len(),
        latency.len(),
        || format!("the responses in {path}.histogram_us"),
    );
    let mut again = of_group(&r.series, &seconds, g.window_s, g.rps, &latency, method);
    if rates_apart {
        again.rps = None;
    }
    agree(recorded, &again, &format!("{path}.ci95"), f);
}

/// Each figure of `recorded` (at `path`) as `again` computed it.
fn agree(recorded: &Ci95, again: &Ci95, path: &str, f: &mut Findings) {
    for figure in BoundFigure::ALL {
        let path = format!("{path}.{}", figure.field());
        let (found, expected) = (recorded.get(figure), again.get(figure));
        let agree = match (found, expected) {
            (Some(a), Some(b)) => {
                super::near(a.value, b.value)
                    && super::near(a.half_width, b.half_width)
                    && super::near(a.effective, b.effective)
                    && (a.batches, a.batch_s) == (b.batches, b.batch_s)
            }
            (None, None) => true,
            // Records written before p95 had an interval lack it; a missing figure claims
            // nothing.
            (None, Some(_)) => figure == BoundFigure::P95,
            _ => false,
        };
        f.check(agree, Rule::IntervalsAgree, path, show(found), || {
            format!("{} from the batches and the series", show(expected))
        });
    }
}

/// A run asked to last until precise: it asked something, of the run or of a part it has a
/// group for, and it stopped when it says it reached its goals — at their moment, no sooner
/// than an interval can exist ([`MIN_BATCHES`] whole seconds), and at most a second before the
/// window's end (the stop is asked at the end of the second whose interval met them).
fn precision(p: &PrecisionOutcome, r: &RunRecord, f: &mut Findings) {
    let path = "summary.ci95.precision";
    let duration_s = r.summary.duration_s;
    for (i, goal) in p.goals.iter().enumerate() {
        if let Some(part) = &goal.part {
            // A run without responses keeps no groups, whatever it asked.
            f.check(
                part.group_in(r).is_some() || r.summary.requests == 0,
                Rule::IntervalsAgree,
                format!("{path}.goals[{i}].part"),
                part,
                || "a part the run has a group for (groups[])".into(),
            );
        }
    }
    f.check(
        !p.goals.is_empty() && p.goals.iter().all(|g| g.share > 0.0 && g.share < 1.0),
        Rule::IntervalsAgree,
        format!("{path}.goals"),
        format!("{} goal(s)", p.goals.len()),
        || "at least one goal, each a share between 0 and 1".into(),
    );
    f.check(
        p.reached == p.at_s.is_some(),
        Rule::IntervalsAgree,
        format!("{path}.reached"),
        p.reached,
        || format!("{} (at_s is {:?})", p.at_s.is_some(), p.at_s),
    );
    kept(p, r, f);
    if let Some(at) = p.at_s {
        let earliest = MIN_BATCHES as f64 - 1e-3;
        f.check(
            at >= earliest && at <= duration_s + 1e-3 && duration_s - at <= 1.0,
            Rule::IntervalsAgree,
            format!("{path}.at_s"),
            at,
            || {
                format!(
                    "at least {MIN_BATCHES} s, and within the last second of the window \
                     (summary.duration_s {duration_s})"
                )
            },
        );
    }
}

/// How far a goal's final interval may be above the share asked, as a share of it, where the
/// run says it reached it: the goal is judged on the seconds done when it was met; the record's
/// interval is centred on the whole histogram, so the two differ a little.
const PRECISION_SLACK: f64 = 0.05;

/// What a run asked to last until precise says it got agrees with the rest of the record: it
/// reached its goals only with final intervals within them, and one that did not reach them
/// ran its whole length unless a signal or a threshold stopped it; a run of a count of
/// requests (`-n`) has no goals.
fn kept(p: &PrecisionOutcome, r: &RunRecord, f: &mut Findings) {
    let path = "summary.ci95.precision";
    f.check(
        r.config.requests.is_none(),
        Rule::IntervalsAgree,
        "config.requests",
        format!("{:?}", r.config.requests),
        || format!("none: a run of a count of requests is never run until precise ({path})"),
    );
    if p.reached {
        for (i, goal) in p.goals.iter().enumerate() {
            let got = crate::analysis::interval::goal_got(r, goal);
            f.check(
                got.is_some_and(|x| x <= goal.share * (1.0 + PRECISION_SLACK)),
                Rule::IntervalsAgree,
                format!("{path}.goals[{i}]"),
                got.map_or_else(|| "no interval".into(), |x| format!("±{x:.4}")),
                || {
                    format!(
                        "an interval within ±{} of the figure, as `reached` says",
                        goal.share
                    )
                },
            );
        }
        return;
    }
    let stopped = r.interrupted.is_some() || r.thresholds.iter().any(|t| t.aborted);
    if let Some(asked) = r.config.duration_s.filter(|_| !stopped) {
        f.check(
            r.summary.duration_s >= asked - 1.0,
            Rule::IntervalsAgree,
            "summary.duration_s",
            r.summary.duration_s,
            || {
                format!(
                    "the length asked, {asked} s (config.duration_s): a run not precise, not \
                     interrupted and not stopped by a threshold runs its course"
                )
            },
        );
    }
}

/// The figure's field in `summary.ci95`.
fn show(b: Option<&crate::record::model::Bound>) -> String {
    b.map_or_else(
        || "none".into(),
        |b| {
            format!(
                "{} ± {} ({} batches of {} s, {} effective)",
                b.value, b.half_width, b.batches, b.batch_s, b.effective
            )
        },
    )
}
