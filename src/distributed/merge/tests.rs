//! Merging synthetic shares: exact sums, histograms added bucket by bucket, the wall-clock
//! window, thresholds judged on the whole, and every refusal.

use super::*;
use crate::record::fixture;
use crate::record::model::{ThresholdResult, WarningCode};
use crate::record::shares::Share;
use crate::record::{decode_histogram, encode_histogram};

const HASH: &str = "sha256:abc";

/// Share `index` of `count`: `seconds` s of `per_second` requests at about `latency_us`, that
/// began measuring `offset_ms` after 12:00:00.
fn share(index: u32, count: u32, offset_ms: u64, per_second: u64, latency_us: u64) -> Input {
    let mut r = fixture::record("test", 10, per_second, latency_us, 1, 0.0);
    r.share = Some(Share {
        index,
        count,
        plan_hash: HASH.into(),
        measure_started_at: format!(
            "2026-01-02T12:00:{:02}.{:03}000Z",
            offset_ms / 1000,
            offset_ms % 1000
        ),
    });
    r.thresholds = vec![ThresholdResult {
        unit: None,
        metric: "requests".into(),
        condition: "count >= 2500".into(),
        observed: Some(r.summary.requests as f64),
        passed: false,
        aborted: false,
        aborted_at_s: None,
        observed_at_abort: None,
    }];
    Input {
        source: format!("share{index}/run.json"),
        record: r,
    }
}

fn three() -> Vec<Input> {
    vec![
        share(0, 3, 0, 100, 1_000),
        share(1, 3, 0, 100, 2_000),
        share(2, 3, 0, 100, 3_000),
    ]
}

#[test]
fn counts_add_up_and_histograms_merge_exactly() {
    let inputs = three();
    let m = merge(&inputs, false).unwrap();
    assert_eq!(m.summary.requests, 3000);
    assert_eq!(m.summary.errors, 30);
    assert_eq!(m.summary.status["200"], 2970);
    assert_eq!(m.summary.bytes_sent, 3000 * 40);
    assert_eq!(m.summary.duration_s, 10.0);
    assert!((m.summary.rps - 300.0).abs() < 1e-9);
    assert!((m.summary.sent_bytes_per_sec - 300.0 * 40.0).abs() < 1e-6);
    let mut expected = decode_histogram(&inputs[0].record.histograms.latency_us).unwrap();
    for i in &inputs[1..] {
        expected
            .add(decode_histogram(&i.record.histograms.latency_us).unwrap())
            .unwrap();
    }
    assert_eq!(m.histograms.latency_us, encode_histogram(&expected));
    assert_eq!(
        m.summary.latency_ms,
        crate::analysis::percentiles(&expected)
    );
    // The 1 ms share's p50 and the 3 ms share's: the merged median lies between.
    let p50 = m.summary.latency_ms.p50.unwrap();
    assert!((1.5..2.5).contains(&p50), "{p50}");
    assert_eq!(m.series.len(), 10);
    assert_eq!(m.series[3].requests, 300);
    assert_eq!(
        m.series[3].p50_ms, None,
        "no per-second histograms to merge"
    );
    let merged = m.merged.as_ref().unwrap();
    assert_eq!(merged.count, 3);
    assert_eq!(merged.shares.len(), 3);
    assert_eq!(merged.shares[1].source.as_deref(), Some("share1/run.json"));
    assert_eq!(m.config.connections, Some(24), "8 VUs a share");
    assert!(m.share.is_none());
    for c in &m.self_checks {
        assert_ne!(
            c.outcome,
            crate::record::selfcheck::SelfCheckOutcome::Failed,
            "{c:?}"
        );
    }
}

#[test]
fn thresholds_are_judged_on_the_whole() {
    // Each share made 1,000 requests (fails `count >= 2500`); the test made 3,000.
    let m = merge(&three(), false).unwrap();
    let t = &m.thresholds[0];
    assert_eq!(t.observed, Some(3000.0));
    assert!(t.passed && !t.aborted);
    let mut inputs = three();
    let th = &mut inputs[2].record.thresholds[0];
    (th.aborted, th.aborted_at_s, th.observed_at_abort) = (true, Some(4.0), Some(400.0));
    let m = merge(&inputs, false).unwrap();
    let t = &m.thresholds[0];
    assert!(
        !t.passed && t.aborted,
        "an abort in one share fails the test"
    );
    assert_eq!(t.aborted_at_s, Some(4.0));
}

#[test]
fn a_threshold_an_older_build_accepted_is_judged_as_written() {
    // `errors: rate < 1` is refused in a plan now (a fraction of 1 never fails), but shares
    // written before hold it: the merge judges it as the run did rather than lose the test.
    let mut inputs = three();
    for i in &mut inputs {
        let t = &mut i.record.thresholds[0];
        (t.metric, t.condition, t.passed) = ("errors".into(), "rate < 1".into(), true);
    }
    let m = merge(&inputs, false).unwrap();
    let t = &m.thresholds[0];
    assert_eq!(t.observed, Some(0.01));
    assert!(t.passed);
}

#[test]
fn series_and_window_follow_the_wall_clock() {
    let inputs = vec![share(0, 2, 0, 100, 1_000), share(1, 2, 2_000, 100, 1_000)];
    let m = merge(&inputs, false).unwrap();
    // Share 1 began 2 s later: the window runs from share 0's start to share 1's end.
    assert_eq!(m.summary.duration_s, 12.0);
    assert!((m.summary.rps - 2000.0 / 12.0).abs() < 1e-9);
    assert_eq!(m.series.len(), 12);
    assert_eq!(m.series[0].requests, 100);
    assert_eq!(m.series[2].requests, 200);
    assert_eq!(m.series[11].requests, 100);
    assert_eq!(m.merged.as_ref().unwrap().shares[1].offset_s, 2.0);
    assert!(
        m.warnings
            .iter()
            .any(|w| w.code == WarningCode::SharesNotTogether),
        "{:?}",
        m.warnings
    );
    let total: u64 = m.series.iter().map(|s| s.requests).sum();
    assert_eq!(total, m.summary.requests);
    // Its seconds hold one share's load, then both, then one: no interval stands for them.
    let ci = m.summary.ci95.as_ref().unwrap();
    assert_eq!(
        ci.unsteady.as_deref(),
        Some(
            "the shares began measuring 2.0 s apart and ended 2.0 s apart, so some seconds \
             hold only some shares' load"
        )
    );
    assert!(ci.rps.is_none() && ci.p50_ms.is_none(), "{ci:?}");
    // `volley verify` holds a merged record to it, whatever the record claims.
    let said = |r: &crate::record::model::RunRecord| {
        crate::analysis::verify::record(r)
            .into_iter()
            .filter(|v| v.path == "summary.ci95.unsteady")
            .count()
    };
    assert_eq!(said(&m), 0);
    let mut steady = m.clone();
    steady.summary.ci95.as_mut().unwrap().unsteady = None;
    assert_eq!(said(&steady), 1);
}

#[test]
fn shares_apart_by_more_than_a_hundredth_of_the_window_leave_the_rate_without_an_interval() {
    let verified = |r: &crate::record::model::RunRecord| {
        let found = crate::analysis::verify::record(r);
        found
            .iter()
            .filter(|v| v.path.contains("ci95"))
            .map(|v| v.path.clone())
            .collect::<Vec<_>>()
    };
    // 50 ms apart over 10 s: the seconds stand for the rate.
    let near = merge(
        &[share(0, 2, 0, 100, 1_000), share(1, 2, 50, 100, 1_000)],
        false,
    )
    .unwrap();
    assert!(near.summary.ci95.as_ref().unwrap().rps.is_some());
    assert_eq!(verified(&near), Vec::<String>::new());
    // 420 ms apart: the rate over the widened window is 4 % below every whole second's, so
    // it has no interval (the latencies keep theirs; these fixtures have no latency batches).
    let apart = merge(
        &[share(0, 2, 0, 100, 1_000), share(1, 2, 420, 100, 1_000)],
        false,
    )
    .unwrap();
    let ci = apart.summary.ci95.as_ref().unwrap();
    assert!(ci.rps.is_none() && ci.unsteady.is_none(), "{ci:?}");
    let warned = |r: &crate::record::model::RunRecord| {
        r.warnings
            .iter()
            .any(|w| w.code == WarningCode::SharesNotTogether)
    };
    assert!(warned(&apart) && !warned(&near), "{:?}", apart.warnings);
    // 1.5 s apart over 200 s: under 1 % of the window, but past the second beyond which no
    // interval stands; warned too.
    let long = |index: u32, offset_ms: u64| {
        let mut i = share(index, 2, offset_ms, 10, 1_000);
        let share = i.record.share.take();
        i.record = fixture::record("test", 200, 10, 1_000, 0, 0.0);
        i.record.share = share;
        i
    };
    let late = merge(&[long(0, 0), long(1, 1_500)], false).unwrap();
    assert!(warned(&late), "{:?}", late.warnings);
    assert_eq!(verified(&apart), Vec::<String>::new());
    // `volley verify` holds the record to it.
    let mut claims = apart.clone();
    claims.summary.ci95.as_mut().unwrap().rps = near.summary.ci95.as_ref().unwrap().rps;
    assert_eq!(verified(&claims), ["summary.ci95.rps"]);
}

#[test]
fn refusals_say_which_records() {
    let err = |inputs: &[Input]| merge(inputs, false).unwrap_err().to_string();
    let mut inputs = three();
    inputs[1].record.share.as_mut().unwrap().plan_hash = "sha256:def".into();
    let e = err(&inputs);
    assert!(
        e.contains("share0/run.json and share1/run.json are shares of different tests"),
        "{e}"
    );
    let mut inputs = three();
    inputs[2] = share(1, 3, 0, 100, 1_000);
    inputs[2].source = "again/run.json".into();
    let e = err(&inputs);
    assert_eq!(
        e,
        "overlapping segments: share1/run.json and again/run.json are both share 1/3"
    );
    let mut inputs = three();
    inputs.remove(1);
    assert_eq!(
        err(&inputs),
        "missing share 1/3: 2 of 3 shares given (0/3, 2/3)"
    );
    let m = merge(&inputs, true).unwrap();
    assert_eq!(m.merged.as_ref().unwrap().missing, vec![1]);
    assert!(
        m.warnings
            .iter()
            .any(|w| w.code == WarningCode::SharesMissing)
    );
    let mut inputs = three();
    inputs[0].record.share = None;
    assert!(err(&inputs).starts_with("share0/run.json: not the record of a share"));
    let mut inputs = three();
    inputs[2].record.share.as_mut().unwrap().count = 4;
    assert!(err(&inputs).contains("is a share of 3, share2/run.json of 4"));
    let mut inputs = three();
    inputs[1].record.tool.version = "0.0.1".into();
    assert!(err(&inputs).contains("by volley 0.0.1"));
    assert_eq!(err(&[]), "no records to merge");
    let merged = merge(&three(), false).unwrap();
    let again = [Input {
        source: "m.json".into(),
        record: merged,
    }];
    assert_eq!(err(&again), "m.json: already a merged record");
}

#[test]
fn grouped_rows_of_the_same_value_add_up_and_their_histograms_merge() {
    use crate::record::group::GroupTable;
    use crate::record::model::GroupedBy;
    let mut inputs = three();
    for (i, input) in inputs.iter_mut().enumerate() {
        let mut t = GroupTable::new();
        for v in ["b1", "b2"].iter().take(i + 1) {
            t.record(Some(v.as_bytes()), 1_000 * (i as u64 + 1), Some(200), None);
        }
        input.record.grouped = vec![GroupedBy::from_table("header:X-Backend".into(), &t)];
    }
    let m = merge(&inputs, false).unwrap();
    let g = &m.grouped[0];
    assert_eq!(g.selector, "header:X-Backend");
    assert_eq!((g.exchanges, g.responses), (5, 5));
    let b1 = g.value("b1").unwrap();
    assert_eq!((b1.exchanges, b1.status["200"]), (3, 3));
    assert!((b1.share_pct - 60.0).abs() < 1e-9);
    let h = decode_histogram(&b1.histogram_us).unwrap();
    assert_eq!(h.len(), 3);
    assert_eq!(g.value("b2").unwrap().exchanges, 2);
    assert_eq!(g.distinct_values, 2);
    assert!(
        g.distinct_saturated,
        "the shares' counts differ: a lower bound"
    );
}
