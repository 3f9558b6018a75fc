//! Streams: each group's (and the run's) stream counts, histograms and rates agree with one
//! another, and a scenario's streams are its steps' (docs/measurement.md, "Streams").

use super::{Findings, Rule};
use crate::record::model::{GroupKind, RunRecord, StreamFigures};
use crate::record::recorder::StreamStats;

/// Every stream figure of `r`.
pub(super) fn check(r: &RunRecord, f: &mut Findings) {
    if let Some(s) = &r.summary.streams {
        one(s, "summary.streams", r.summary.duration_s, f);
    }
    for (i, g) in r.groups.iter().enumerate() {
        if let Some(s) = &g.streams {
            one(s, &format!("groups[{i}].streams"), g.window_s, f);
        }
    }
    scenarios_are_their_steps(r, f);
}

/// One group's figures over its window of `window_s` seconds.
fn one(s: &StreamFigures, path: &str, window_s: f64, f: &mut Findings) {
    let rule = Rule::StreamsAddUp;
    let at = |field: &str| format!("{path}.{field}");
    f.check(s.failed <= s.streams, rule, at("failed"), s.failed, || {
        format!("at most streams = {}", s.streams)
    });
    f.check(
        s.with_messages <= s.streams,
        rule,
        at("with_messages"),
        s.with_messages,
        || format!("at most streams = {}", s.streams),
    );
    let ended = s.ended.eof + s.ended.sentinel + s.ended.limit;
    let finished = s.streams.saturating_sub(s.failed);
    f.equal(rule, at("ended"), ended, finished, || {
        "streams − failed".into()
    });
    // The histograms decoded when the record was read; a bad one is reported there.
    if let Ok(stats) = crate::record::streams::stats(s, path) {
        histograms(&stats, s, path, f);
    }
    let d = &s.drained;
    let per_sec = |n: u64, drained: u64| in_window(n, drained, window_s);
    let how = |what: &'static str| move || format!("({what} − drained) / window {window_s} s");
    f.close(
        rule,
        at("streams_per_s"),
        s.streams_per_s,
        per_sec(s.streams, d.streams),
        how("streams"),
    );
    f.close(
        rule,
        at("messages_per_s"),
        s.messages_per_s,
        per_sec(s.messages, d.messages),
        how("messages"),
    );
    if let Some(l) = &s.llm {
        f.close(
            rule,
            at("llm.tokens_per_s"),
            l.tokens_per_s,
            per_sec(l.tokens, d.tokens),
            how("tokens"),
        );
        f.check(
            l.streams <= s.streams,
            rule,
            at("llm.streams"),
            l.streams,
            || format!("at most streams = {}", s.streams),
        );
    }
    sends_and_goodput(s, path, window_s, f);
    let sent = s.sent.as_ref().map_or(0, |x| x.messages);
    for (name, drained, total) in [
        ("streams", d.streams, s.streams),
        ("messages", d.messages, s.messages),
        ("sent", d.sent, sent),
    ] {
        f.check(
            drained <= total,
            rule,
            at(&format!("drained.{name}")),
            drained,
            || format!("at most {name} = {total}"),
        );
    }
}

/// What streams sent, and their goodput, over the window of `window_s` seconds.
fn sends_and_goodput(s: &StreamFigures, path: &str, window_s: f64, f: &mut Findings) {
    let rule = Rule::StreamsAddUp;
    let at = |field: &str| format!("{path}.{field}");
    let d = &s.drained;
    let per_sec = |n: u64, drained: u64| in_window(n, drained, window_s);
    let how = |what: &'static str| move || format!("({what} − drained) / window {window_s} s");
    if let Some(sent) = &s.sent {
        f.close(
            rule,
            at("sent.messages_per_s"),
            sent.messages_per_s,
            per_sec(sent.messages, d.sent),
            how("sent messages"),
        );
        let most = sent.messages.min(s.messages);
        f.check(
            sent.round_trips <= most,
            rule,
            at("sent.round_trips"),
            sent.round_trips,
            || format!("at most min(sent, received) = {most}"),
        );
    }
    if let Some(g) = &s.goodput {
        f.close(
            rule,
            at("goodput.rps"),
            g.rps,
            per_sec(g.good, d.good),
            how("good"),
        );
        f.check(
            g.good <= g.judged && g.judged <= s.streams,
            rule,
            at("goodput.good"),
            g.good,
            || format!("at most judged = {} ≤ streams = {}", g.judged, s.streams),
        );
    }
}

/// What ended inside a window of `window_s` seconds (`n` less its `drained`), per second.
fn in_window(n: u64, drained: u64, window_s: f64) -> f64 {
    if window_s > 0.0 {
        n.saturating_sub(drained) as f64 / window_s
    } else {
        0.0
    }
}

/// The histograms hold one value per stream, message gap and finished stream.
fn histograms(h: &StreamStats, s: &StreamFigures, path: &str, f: &mut Findings) {
    let rule = Rule::StreamsAddUp;
    let at = |field: &str| format!("{path}.histograms.{field}");
    f.equal(rule, at("ttft_us"), h.first.len(), s.with_messages, || {
        "with_messages".into()
    });
    let gaps = s.messages.saturating_sub(s.with_messages);
    f.equal(rule, at("message_gap_us"), h.gap.len(), gaps, || {
        "messages − with_messages".into()
    });
    let finished = s.streams.saturating_sub(s.failed);
    f.equal(rule, at("stream_us"), h.duration.len(), finished, || {
        "streams − failed".into()
    });
    let round_trips = s.sent.as_ref().map_or(0, |x| x.round_trips);
    f.equal(
        rule,
        at("round_trip_us"),
        h.round_trip.len(),
        round_trips,
        || "sent.round_trips".into(),
    );
}

/// A scenario's streams are the sum of its steps'.
fn scenarios_are_their_steps(r: &RunRecord, f: &mut Findings) {
    for (i, sc) in r.groups.iter().enumerate() {
        if sc.kind != GroupKind::Scenario {
            continue;
        }
        let steps = r
            .groups
            .iter()
            .filter(|g| g.kind == GroupKind::Step && g.scenario.as_deref() == Some(&sc.name));
        let (streams, messages) = steps
            .filter_map(|g| g.streams.as_ref())
            .fold((0, 0), |(s, m), g| (s + g.streams, m + g.messages));
        let own = sc
            .streams
            .as_ref()
            .map_or((0, 0), |s| (s.streams, s.messages));
        f.equal(
            Rule::StreamsAddUp,
            format!("groups[{i}].streams.streams"),
            own.0,
            streams,
            || "Σ its steps' streams".into(),
        );
        f.check(
            own.1 == messages,
            Rule::StreamsAddUp,
            format!("groups[{i}].streams.messages"),
            own.1,
            || format!("Σ its steps' messages = {messages}"),
        );
    }
}
