//! A group's stream figures as `run.json` writes them ([`figures`]), and back to mergeable
//! histograms and counts ([`stats`]) for the exact merge of shares and the verifier.

use super::figures::percentiles;
use super::model::{
    Goodput, LlmFigures, StreamDrained, StreamEnds, StreamFigures, StreamHistograms, StreamSlo,
    TokensFrom,
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
    let [d_streams, d_messages, d_tokens, d_good] = c.drained;
    let llm = (c.llm_streams > 0).then(|| LlmFigures {
        streams: c.llm_streams,
        tokens: c.tokens,
        tokens_from: match c.usage_counted {
            0 => TokensFrom::Deltas,
            n if n == c.llm_streams => TokensFrom::Usage,
            _ => TokensFrom::Mixed,
        },
        usage_counted: c.usage_counted,
        tokens_per_s: per_sec(c.tokens - d_tokens, window_s),
        tpot_ms: percentiles(&s.per_token),
    });
    StreamFigures {
        streams: c.streams,
        failed: c.failed,
        with_messages: c.with_messages,
        messages: c.messages,
        streams_per_s: per_sec(c.streams - d_streams, window_s),
        messages_per_s: per_sec(c.messages - d_messages, window_s),
        ended: StreamEnds {
            eof: c.ended[0],
            sentinel: c.ended[1],
            limit: c.ended[2],
        },
        drained: StreamDrained {
            streams: d_streams,
            messages: d_messages,
            tokens: d_tokens,
            good: d_good,
        },
        ttft_ms: percentiles(&s.first),
        message_gap_ms: percentiles(&s.gap),
        stream_ms: percentiles(&s.duration),
        llm,
        goodput: (c.judged > 0).then(|| Goodput {
            slo: slo.unwrap_or_default(),
            judged: c.judged,
            good: c.good,
            rps: per_sec(c.good - d_good, window_s),
        }),
        histograms: StreamHistograms {
            ttft_us: encode_histogram(&s.first),
            message_gap_us: encode_histogram(&s.gap),
            stream_us: encode_histogram(&s.duration),
            tpot_us: (c.llm_streams > 0).then(|| encode_histogram(&s.per_token)),
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
    let llm = f.llm.as_ref();
    let goodput = f.goodput.as_ref();
    let d = &f.drained;
    stats.counts = StreamCounts {
        streams: f.streams,
        failed: f.failed,
        with_messages: f.with_messages,
        messages: f.messages,
        ended: [f.ended.eof, f.ended.sentinel, f.ended.limit],
        llm_streams: llm.map_or(0, |l| l.streams),
        usage_counted: llm.map_or(0, |l| l.usage_counted),
        tokens: llm.map_or(0, |l| l.tokens),
        judged: goodput.map_or(0, |g| g.judged),
        good: goodput.map_or(0, |g| g.good),
        drained: [d.streams, d.messages, d.tokens, d.good],
    };
    Ok(stats)
}

/// The exact merge of several shares' stream figures (`field`: where they are, for errors),
/// rates over `window_s`; none when no share has streams.
pub fn merged<'a>(
    parts: impl IntoIterator<Item = &'a StreamFigures>,
    window_s: f64,
    field: &str,
) -> Result<Option<StreamFigures>, BadHistogram> {
    let mut total: Option<StreamStats> = None;
    let mut slo = None;
    for f in parts {
        let s = stats(f, field)?;
        slo = slo.or(f.goodput.as_ref().map(|g| g.slo));
        match &mut total {
            Some(t) => t.merge(&s),
            None => total = Some(s),
        }
    }
    Ok(total.map(|t| figures(&t, window_s, slo)))
}
