//! The stream tables of a run report (docs/measurement.md, "Streams"): per streaming step, its
//! streams and messages; what streams sent and their round trips; in LLM mode, its tokens, time
//! per output token and goodput.

use super::figures::number;
use super::table::Table;
use crate::record::model::{GroupKind, RunRecord, StreamFigures, StreamSlo, TokensFrom};
use crate::units::{ms, rate, thousands};

/// The streaming steps of `r` with their figures, and the whole run's when there are several.
fn rows(r: &RunRecord) -> Vec<(String, &StreamFigures)> {
    let mut rows: Vec<(String, &StreamFigures)> = r
        .groups
        .iter()
        .filter(|g| g.kind == GroupKind::Step)
        .filter_map(|g| {
            let name = match &g.scenario {
                Some(sc) if r.config.scenarios.len() > 1 => format!("{sc} / {}", g.name),
                _ => g.name.clone(),
            };
            Some((name, g.streams.as_ref()?))
        })
        .collect();
    match (&r.summary.streams, rows.len()) {
        (Some(all), 0) => rows.push(("all".into(), all)),
        (Some(all), n) if n > 1 => rows.push(("all streams".into(), all)),
        _ => {}
    }
    rows
}

/// The stream tables: "Streams", and "LLM streams" when some step reads an LLM API.
pub fn tables(r: &RunRecord) -> Vec<Table> {
    let rows = rows(r);
    if rows.is_empty() {
        return Vec::new();
    }
    let mut streams = Table::new(
        "Streams",
        &[
            "<Step",
            "Streams",
            "Failed",
            "streams/s",
            "msgs/s",
            "TTFT p50 ms",
            "TTFT p99 ms",
            "gap p50 ms",
            "gap p99 ms",
            "stream p50 ms",
            "<Ended",
        ],
    )
    .with_note(
        "TTFT: time to the first message, from when the stream was due (open model) or sent; \
         gap: between consecutive messages of a stream; rates count streams that ended inside \
         the window.",
    );
    for (name, f) in &rows {
        streams.push([
            name.clone(),
            thousands(f.streams),
            thousands(f.failed),
            rate(f.streams_per_s),
            rate(f.messages_per_s),
            ms(f.ttft_ms.p50),
            ms(f.ttft_ms.p99),
            ms(f.message_gap_ms.p50),
            ms(f.message_gap_ms.p99),
            ms(f.stream_ms.p50),
            ended(f),
        ]);
    }
    let mut out = vec![streams];
    out.extend(sends(&rows));
    out.extend(llm(&rows));
    out
}

/// The table of what streams sent (round trips of bidirectional ones) and, outside LLM mode,
/// their goodput; when some row has either.
fn sends(rows: &[(String, &StreamFigures)]) -> Option<Table> {
    let picked: Vec<_> = rows
        .iter()
        .filter(|(_, f)| f.sent.is_some() || (f.goodput.is_some() && f.llm.is_none()))
        .collect();
    if picked.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Stream sends and goodput",
        &[
            "<Step",
            "Sent",
            "sent msgs/s",
            "Round trips",
            "RTT p50 ms",
            "RTT p99 ms",
            "RTT max ms",
            "Good",
            "goodput/s",
            "<Objectives",
        ],
    )
    .with_note(
        "Sent: messages of streaming request sides (gRPC client and bidirectional streams, \
         WebSocket); RTT: from a message's send to the reply matched to it in order \
         (bidirectional gRPC streams, WebSocket); goodput: streams that met every objective, \
         per second.",
    );
    for (name, f) in picked {
        let sent = f.sent.as_ref();
        let rtt = sent.filter(|s| s.round_trips > 0).map(|s| &s.round_trip_ms);
        let good = f.goodput.as_ref().filter(|_| f.llm.is_none());
        t.push([
            name.clone(),
            sent.map_or("-".into(), |s| thousands(s.messages)),
            sent.map_or("-".into(), |s| rate(s.messages_per_s)),
            sent.map_or("-".into(), |s| thousands(s.round_trips)),
            rtt.map_or("-".into(), |p| ms(p.p50)),
            rtt.map_or("-".into(), |p| ms(p.p99)),
            rtt.map_or("-".into(), |p| ms(p.max)),
            good.map_or("-".into(), |g| {
                format!("{} of {}", thousands(g.good), thousands(g.judged))
            }),
            good.map_or("-".into(), |g| rate(g.rps)),
            good.map_or("-".into(), |g| objectives(&g.slo)),
        ]);
    }
    Some(t)
}

/// How the streams ended, the commonest first.
fn ended(f: &StreamFigures) -> String {
    let mut ends = [
        (f.ended.sentinel, "sentinel"),
        (f.ended.eof, "end of stream"),
        (f.ended.limit, "limit"),
    ];
    ends.sort_by_key(|e| std::cmp::Reverse(e.0));
    let parts: Vec<String> = ends
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{} {what}", thousands(*n)))
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

/// The LLM table, when some row read an LLM API.
fn llm(rows: &[(String, &StreamFigures)]) -> Option<Table> {
    let llm_rows: Vec<_> = rows
        .iter()
        .filter_map(|(name, f)| Some((name, f, f.llm.as_ref()?)))
        .collect();
    if llm_rows.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "LLM streams",
        &[
            "<Step",
            "Tokens",
            "<Counted from",
            "tokens/s",
            "TPOT p50 ms",
            "TPOT p99 ms",
            "ITL p99 ms",
            "Good",
            "goodput req/s",
            "<Objectives",
        ],
    )
    .with_note(
        "TPOT: time per output token, (end − first token) / (tokens − 1); ITL: the gap between \
         tokens; goodput: streams that met every objective, per second (vLLM's definition).",
    );
    for (name, f, l) in llm_rows {
        let good = f.goodput.as_ref();
        t.push([
            (*name).clone(),
            thousands(l.tokens),
            match l.tokens_from {
                TokensFrom::Usage => "usage".into(),
                TokensFrom::Deltas => "deltas".into(),
                TokensFrom::Mixed => format!("usage ({} streams), else deltas", l.usage_counted),
            },
            rate(l.tokens_per_s),
            ms(l.tpot_ms.p50),
            ms(l.tpot_ms.p99),
            ms(f.message_gap_ms.p99),
            good.map_or("-".into(), |g| {
                format!("{} of {}", thousands(g.good), thousands(g.judged))
            }),
            good.map_or("-".into(), |g| rate(g.rps)),
            good.map_or("-".into(), |g| objectives(&g.slo)),
        ]);
    }
    Some(t)
}

/// Objectives in words: `TTFT ≤ 200 ms, TPOT ≤ 25 ms`.
fn objectives(slo: &StreamSlo) -> String {
    let parts: Vec<String> = [
        ("TTFT", slo.ttft_ms),
        ("TPOT", slo.tpot_ms),
        ("stream", slo.e2e_ms),
    ]
    .iter()
    .filter_map(|(name, v)| Some(format!("{name} ≤ {} ms", number((*v)?))))
    .collect();
    if parts.is_empty() {
        "(several)".into()
    } else {
        parts.join(", ")
    }
}
