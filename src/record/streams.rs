//! A group's stream figures as `run.json` writes them ([`figures`]), and back to mergeable
//! histograms and counts ([`stats`]) for the exact merge of shares and the verifier.

use super::figures::percentiles;
use super::model::{
    Goodput, LlmFigures, SentFigures, StreamFigures, StreamHistograms, StreamSlo, TokensFrom,
};
use super::recorder::{StreamCounts, StreamStats};
use super::{BadHistogram, decode_histogram, encode_histogram};

/// `count` over `window_s` seconds, per second (0 for an empty window).
fn per_sec(count: u64, window_s: f64) -> f64 {
    if window_s > 0.0 {
        count as f64 / window_s
    } else {
        0.0
    }
}

/// The figures of `s`, its rates over `window_s` seconds; `slo` is the objectives the streams
/// were judged against (none: several steps' different ones).
pub fn figures(s: &StreamStats, window_s: f64, slo: Option<StreamSlo>) -> StreamFigures {
    let c = &s.counts;
    let d = c.drained;
    let llm = (c.llm_streams > 0).then(|| LlmFigures {
        streams: c.llm_streams,
        tokens: c.tokens,
        tokens_from: match c.usage_counted {
            0 => TokensFrom::Deltas,
            n if n == c.llm_streams => TokensFrom::Usage,
            _ => TokensFrom::Mixed,
        },
        usage_counted: c.usage_counted,
        tokens_per_s: per_sec(c.tokens - d.tokens, window_s),
        tpot_ms: percentiles(&s.per_token),
    });
    StreamFigures {
        streams: c.streams,
        failed: c.failed,
        with_messages: c.with_messages,
        messages: c.messages,
        streams_per_s: per_sec(c.streams - d.streams, window_s),
        messages_per_s: per_sec(c.messages - d.messages, window_s),
        ended: c.ended,
        drained: d,
        ttft_ms: percentiles(&s.first),
        message_gap_ms: percentiles(&s.gap),
        stream_ms: percentiles(&s.duration),
        sent: (c.sent > 0).then(|| SentFigures {
            messages: c.sent,
            messages_per_s: per_sec(c.sent - d.sent, window_s),
            round_trips: s.round_trip.len(),
            round_trip_ms: percentiles(&s.round_trip),
        }),
        llm,
        goodput: (c.judged > 0).then(|| Goodput {
            slo: slo.unwrap_or_default(),
            judged: c.judged,
            good: c.good,
            rps: per_sec(c.good - d.good, window_s),
        }),
        histograms: StreamHistograms {
            ttft_us: encode_histogram(&s.first),
            message_gap_us: encode_histogram(&s.gap),
            stream_us: encode_histogram(&s.duration),
            tpot_us: (c.llm_streams > 0).then(|| encode_histogram(&s.per_token)),
            round_trip_us: (c.sent > 0).then(|| encode_histogram(&s.round_trip)),
        },
    }
}

/// The histograms and counts `f` was written from (`field`: where it is, for errors).
pub fn stats(f: &StreamFigures, field: &str) -> Result<StreamStats, BadHistogram> {
    let decode = |name: &str, text: &str| {
        decode_histogram(text).map_err(|why| BadHistogram {
            field: format!("{field}.histograms.{name}"),
            why,
        })
    };
    let h = &f.histograms;
    let mut stats = StreamStats {
        first: decode("ttft_us", &h.ttft_us)?,
        gap: decode("message_gap_us", &h.message_gap_us)?,
        duration: decode("stream_us", &h.stream_us)?,
        ..StreamStats::default()
    };
    if let Some(t) = &h.tpot_us {
        stats.per_token = decode("tpot_us", t)?;
    }
    if let Some(t) = &h.round_trip_us {
        stats.round_trip = decode("round_trip_us", t)?;
    }
    let llm = f.llm.as_ref();
    let goodput = f.goodput.as_ref();
    stats.counts = StreamCounts {
        streams: f.streams,
        failed: f.failed,
        with_messages: f.with_messages,
        messages: f.messages,
        sent: f.sent.as_ref().map_or(0, |s| s.messages),
        ended: f.ended,
        llm_streams: llm.map_or(0, |l| l.streams),
        usage_counted: llm.map_or(0, |l| l.usage_counted),
        tokens: llm.map_or(0, |l| l.tokens),
        judged: goodput.map_or(0, |g| g.judged),
        good: goodput.map_or(0, |g| g.good),
        drained: f.drained,
    };
    Ok(stats)
}

/// The histograms and counts of several groups' (or shares') stream figures added exactly
/// (`field`: where they are, for errors); none when there are none.
pub fn merged_stats<'a>(
    parts: impl IntoIterator<Item = &'a StreamFigures>,
    field: &str,
) -> Result<Option<StreamStats>, BadHistogram> {
    let mut total: Option<StreamStats> = None;
    for f in parts {
        let s = stats(f, field)?;
        match &mut total {
            Some(t) => t.merge(&s),
            None => total = Some(s),
        }
    }
    Ok(total)
}

/// The exact merge of several shares' stream figures (`field`: where they are, for errors),
/// rates over `window_s`; none when no share has streams.
pub fn merged<'a>(
    parts: impl IntoIterator<Item = &'a StreamFigures> + Clone,
    window_s: f64,
    field: &str,
) -> Result<Option<StreamFigures>, BadHistogram> {
    let slo = parts
        .clone()
        .into_iter()
        .find_map(|f| f.goodput.as_ref().map(|g| g.slo));
    Ok(merged_stats(parts, field)?.map(|t| figures(&t, window_s, slo)))
}
