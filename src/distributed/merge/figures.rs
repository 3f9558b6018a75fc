//! The merged record's whole-run figures: configuration, machine, summary, generator,
//! histograms.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::{MergeError, PlacedShare};
use crate::analysis::{latency_buckets, percentiles};
use crate::record::model::{
    Arrival, Drain, Environment, Generator, Histograms, Percentiles, ProfileKind, QuicFigures,
    RunConfig, RunRecord, Summary, TimingSplit, TlsNegotiated, error_rate,
};
use crate::record::{decode_histogram, encode_histogram};
use crate::run::windows::per_sec;

/// The record of the merged figures (series, groups, checks, thresholds, warnings and
/// self-checks are filled in after).
pub(super) fn record(parts: &[PlacedShare], window: f64) -> Result<RunRecord, MergeError> {
    let first = parts[0].record;
    let latency = merged_histogram(parts, |r| Some(&r.histograms.latency_us), "latency_us")?
        .expect("every record has one");
    let service = merged_histogram(
        parts,
        |r| r.histograms.service_latency_us.as_ref(),
        "service_latency_us",
    )?;
    let lag = merged_histogram(parts, |r| r.histograms.lag_us.as_ref(), "lag_us")?;
    let split = timing(parts)?;
    let mut summary = summary(parts, window, &latency, service.as_ref());
    summary.timing = split.figures;
    let mut command = vec!["volley".to_string(), "merge".to_string()];
    command.extend(parts.iter().map(|p| p.source.to_string()));
    Ok(RunRecord {
        schema_version: first.schema_version,
        tool: first.tool.clone(),
        name: first.name.clone(),
        run_id: crate::record::new_run_id(),
        tags: first.tags.clone(),
        command,
        config: config(parts),
        started_at: earliest(parts.iter().map(|p| p.record.started_at.as_str())),
        ended_at: latest(parts.iter().map(|p| p.record.ended_at.as_str())),
        environment: environment(parts),
        interrupted: parts.iter().find_map(|p| {
            let n = p.record.share.as_ref().map_or(0, |s| s.count);
            p.record
                .interrupted
                .as_ref()
                .map(|why| format!("{why} (share {}/{n})", p.index))
        }),
        summary,
        generator: generator(parts, lag.as_ref()),
        series: Vec::new(),
        histograms: Histograms {
            latency_us: encode_histogram(&latency),
            service_latency_us: service.as_ref().map(encode_histogram),
            lag_us: lag.as_ref().map(encode_histogram),
            connect_us: split.connect.as_ref().map(encode_histogram),
            tls_handshake_us: split.tls.as_ref().map(encode_histogram),
            waiting_us: split.waiting.as_ref().map(encode_histogram),
            batches_us: Vec::new(),
            batch_s: 0,
        },
        warnings: Vec::new(),
        groups: Vec::new(),
        checks: Vec::new(),
        thresholds: Vec::new(),
        find_max: None,
        self_checks: Vec::new(),
        share: None,
        merged: None,
        grouped: super::grouped::merged(parts)?,
        watch: None,
        outcome: None,
    })
}

/// The sum of the histograms `field` picks (`None` when no record has one).
pub(super) fn merged_histogram<'a>(
    parts: &[PlacedShare<'a>],
    field: impl Fn(&'a RunRecord) -> Option<&'a String>,
    name: &str,
) -> Result<Option<Histogram<u64>>, MergeError> {
    let mut total: Option<Histogram<u64>> = None;
    for p in parts {
        let Some(text) = field(p.record) else {
            continue;
        };
        let fail = |why: String| MergeError::Field {
            record: p.source.to_string(),
            why: format!("{name}: {why}"),
        };
        let h = decode_histogram(text).map_err(|e| fail(e.to_string()))?;
        match &mut total {
            Some(t) => t
                .add(&h)
                .map_err(|e| fail(format!("cannot be added: {e:?}")))?,
            None => total = Some(h),
        }
    }
    Ok(total)
}

/// The earliest of RFC 3339 UTC times (they sort as text when written alike).
fn earliest<'a>(times: impl Iterator<Item = &'a str>) -> String {
    times.min().unwrap_or_default().to_string()
}

fn latest<'a>(times: impl Iterator<Item = &'a str>) -> String {
    times.max().unwrap_or_default().to_string()
}

/// Sums `f` over the parts.
fn sum(parts: &[PlacedShare], f: impl Fn(&RunRecord) -> u64) -> u64 {
    parts.iter().map(|p| f(p.record)).sum()
}

/// Sums maps of counts.
pub(super) fn sum_maps<'a, K: Ord + Clone + 'a>(
    maps: impl Iterator<Item = &'a BTreeMap<K, u64>>,
) -> BTreeMap<K, u64> {
    let mut out = BTreeMap::new();
    for m in maps {
        for (k, v) in m {
            *out.entry(k.clone()).or_insert(0) += v;
        }
    }
    out
}

/// Sums optional counts: `None` when every part's is.
fn sum_some<T: std::iter::Sum<T>>(values: impl Iterator<Item = Option<T>>) -> Option<T> {
    let present: Vec<T> = values.flatten().collect();
    (!present.is_empty()).then(|| present.into_iter().sum())
}

fn summary(
    parts: &[PlacedShare],
    window: f64,
    latency: &Histogram<u64>,
    service: Option<&Histogram<u64>>,
) -> Summary {
    fn s<'a>(p: &'a PlacedShare<'_>) -> &'a Summary {
        &p.record.summary
    }
    let requests = sum(parts, |r| r.summary.requests);
    let not_sent = sum(parts, |r| r.summary.not_sent);
    let errors = sum(parts, |r| r.summary.errors);
    let drained = sum(parts, |r| r.summary.drain.requests);
    let attempts = requests + not_sent;
    // Bytes of the requests completed inside each share's window: its rate times its window.
    let in_window = |rate: fn(&Summary) -> f64| -> f64 {
        parts
            .iter()
            .map(|p| (rate(s(p)) * s(p).duration_s).round())
            .sum()
    };
    let last_completion = parts
        .iter()
        .map(|p| p.offset_s + s(p).duration_s + s(p).drain.duration_s)
        .fold(window, f64::max);
    let arrival = merged_arrival(parts.iter().map(|p| s(p).arrival), window);
    let errors_by_kind = sum_maps(parts.iter().map(|p| &s(p).errors_by_kind));
    Summary {
        requests,
        errors,
        attempts,
        not_sent,
        success_rate: error_rate(attempts, errors, &errors_by_kind).map_or(0.0, |e| 1.0 - e),
        duration_s: window,
        rps: per_sec(requests - drained, window),
        // Only when every scenario is open: the asked rate is then the whole run's.
        target_rps: arrival
            .filter(|a| {
                a.requests_per_iteration == Some(1)
                    && parts[0].record.config.model == crate::record::model::Model::Open
            })
            .map(|a| a.asked_per_sec),
        drain: Drain {
            duration_s: last_completion - window,
            requests: drained,
        },
        iterations: sum(parts, |r| r.summary.iterations),
        arrival,
        latency_ms: percentiles(latency),
        ci95: None,
        service_latency_ms: service.map(percentiles),
        dropped: sum_some(parts.iter().map(|p| s(p).dropped)),
        status: sum_maps(parts.iter().map(|p| &s(p).status)),
        errors_by_kind,
        bytes_sent: sum(parts, |r| r.summary.bytes_sent),
        bytes_received: sum(parts, |r| r.summary.bytes_received),
        connections_opened: sum(parts, |r| r.summary.connections_opened),
        sent_bytes_per_sec: if window > 0.0 {
            in_window(|s| s.sent_bytes_per_sec) / window
        } else {
            0.0
        },
        received_bytes_per_sec: if window > 0.0 {
            in_window(|s| s.received_bytes_per_sec) / window
        } else {
            0.0
        },
        latency_buckets: latency_buckets(latency, &parts[0].record.config.latency_buckets_ms),
        warmup_requests: sum(parts, |r| r.summary.warmup_requests),
        warmup_connections: sum(parts, |r| r.summary.warmup_connections),
        grpc_status: sum_maps(parts.iter().map(|p| &s(p).grpc_status)),
        timing: TimingSplit::default(),
        tls_negotiated: tls(parts),
        quic: quic(parts),
        // Every share's histograms were decoded when it was read (`check_histograms`).
        streams: crate::record::streams::merged(
            parts.iter().filter_map(|p| s(p).streams.as_ref()),
            window,
            "summary.streams",
        )
        .ok()
        .flatten(),
    }
}

/// Arrivals summed; the rates over `window`.
pub(super) fn merged_arrival(
    arrivals: impl Iterator<Item = Option<Arrival>>,
    window: f64,
) -> Option<Arrival> {
    let all: Vec<Arrival> = arrivals.flatten().collect();
    let first = all.first()?;
    let total = |f: fn(&Arrival) -> u64| all.iter().map(f).sum::<u64>();
    let (due, completed) = (total(|a| a.due), total(|a| a.completed));
    Some(Arrival {
        due,
        asked_per_sec: per_sec(due, window),
        started: total(|a| a.started),
        completed,
        achieved_per_sec: per_sec(completed, window),
        dropped: total(|a| a.dropped),
        unsent: total(|a| a.unsent),
        requests_per_iteration: first.requests_per_iteration,
    })
}

/// The merged time split, with the histograms it was merged from.
struct Split {
    figures: TimingSplit,
    connect: Option<Histogram<u64>>,
    tls: Option<Histogram<u64>>,
    waiting: Option<Histogram<u64>>,
}

type Pick = for<'r> fn(&'r RunRecord) -> Option<&'r String>;

/// One time of the split: merged exactly from the shares' histograms when every share that
/// measured it kept one; else (records of older versions kept none) min, max, mean and
/// standard deviation combined from each share's figures, weighted by its count, and no
/// percentile (null).
fn split_time(
    parts: &[PlacedShare],
    pick: Pick,
    figures: fn(&Summary) -> (Option<Percentiles>, u64),
    name: &str,
) -> Result<(Option<Percentiles>, Option<Histogram<u64>>), MergeError> {
    let measured = |p: &&PlacedShare| figures(&p.record.summary).1 > 0;
    if parts
        .iter()
        .filter(measured)
        .all(|p| pick(p.record).is_some())
    {
        let h = merged_histogram(parts, pick, name)?.filter(|h| !h.is_empty());
        return Ok((h.as_ref().map(percentiles), h));
    }
    let combined = combine(parts.iter().map(|p| figures(&p.record.summary)));
    Ok((combined, None))
}

/// The time split of the shares: counts summed, each time merged by [`split_time`].
fn timing(parts: &[PlacedShare]) -> Result<Split, MergeError> {
    let (connect_ms, connect) = split_time(
        parts,
        |r| r.histograms.connect_us.as_ref(),
        |s| (s.timing.connect_ms, s.timing.connects),
        "connect_us",
    )?;
    let (tls_handshake_ms, tls) = split_time(
        parts,
        |r| r.histograms.tls_handshake_us.as_ref(),
        |s| (s.timing.tls_handshake_ms, s.timing.tls_handshakes),
        "tls_handshake_us",
    )?;
    let (waiting_ms, waiting) = split_time(
        parts,
        |r| r.histograms.waiting_us.as_ref(),
        |s| (s.timing.waiting_ms, s.status.values().sum()),
        "waiting_us",
    )?;
    let t = |p: &PlacedShare| p.record.summary.timing.clone();
    Ok(Split {
        figures: TimingSplit {
            connect_ms,
            tls_handshake_ms,
            waiting_ms,
            connects: parts.iter().map(|p| t(p).connects).sum(),
            tls_handshakes: parts.iter().map(|p| t(p).tls_handshakes).sum(),
        },
        connect,
        tls,
        waiting,
    })
}

/// Min, max, mean and (population) standard deviation of the union of weighted parts.
fn combine(parts: impl Iterator<Item = (Option<Percentiles>, u64)>) -> Option<Percentiles> {
    let parts: Vec<(Percentiles, f64)> = parts
        .filter_map(|(p, n)| p.filter(|_| n > 0).map(|p| (p, n as f64)))
        .collect();
    if parts.is_empty() {
        return None;
    }
    let n: f64 = parts.iter().map(|(_, n)| n).sum();
    let mean = parts
        .iter()
        .map(|(p, w)| p.mean.unwrap_or(0.0) * w)
        .sum::<f64>()
        / n;
    let var = parts
        .iter()
        .map(|(p, w)| {
            let (m, s) = (p.mean.unwrap_or(0.0), p.stdev.unwrap_or(0.0));
            w * (s * s + (m - mean) * (m - mean))
        })
        .sum::<f64>()
        / n;
    let fold = |f: fn(&Percentiles) -> Option<f64>, pick: fn(f64, f64) -> f64| {
        parts.iter().filter_map(|(p, _)| f(p)).reduce(pick)
    };
    Some(Percentiles {
        min: fold(|p| p.min, f64::min),
        max: fold(|p| p.max, f64::max),
        mean: Some(mean),
        stdev: Some(var.sqrt()),
        ..Percentiles::default()
    })
}

/// The shares' QUIC figures summed; absent when no share has any.
fn quic(parts: &[PlacedShare]) -> Option<QuicFigures> {
    parts
        .iter()
        .filter_map(|p| p.record.summary.quic.as_ref())
        .fold(None, |sum: Option<QuicFigures>, q| {
            let mut sum = sum.unwrap_or_default();
            sum.add(q);
            Some(sum)
        })
}

fn tls(parts: &[PlacedShare]) -> Vec<TlsNegotiated> {
    let mut by: BTreeMap<(String, Option<String>), u64> = BTreeMap::new();
    for p in parts {
        for t in &p.record.summary.tls_negotiated {
            *by.entry((t.version.clone(), t.alpn.clone())).or_insert(0) += t.connections;
        }
    }
    by.into_iter()
        .map(|((version, alpn), connections)| TlsNegotiated {
            version,
            alpn,
            connections,
        })
        .collect()
}

fn generator(parts: &[PlacedShare], lag: Option<&Histogram<u64>>) -> Generator {
    let threads: Vec<_> = parts
        .iter()
        .flat_map(|p| p.record.generator.threads.iter().copied())
        .collect();
    let worker_cpu_s: f64 = threads.iter().map(|t| t.cpu_s).sum();
    let finished = sum(parts, |r| r.summary.requests + r.summary.warmup_requests);
    Generator {
        threads,
        cpu_s: parts.iter().map(|p| p.record.generator.cpu_s).sum(),
        cpu_us_per_request: (finished > 0).then(|| worker_cpu_s * 1e6 / finished as f64),
        peak_rss_bytes: parts
            .iter()
            .map(|p| p.record.generator.peak_rss_bytes)
            .max()
            .unwrap_or(0),
        lag_ms: lag.map(percentiles),
        send_grid_ms: parts[0].record.generator.send_grid_ms,
        steal_share: parts
            .iter()
            .filter_map(|p| p.record.generator.steal_share)
            .reduce(f64::max),
    }
}

/// The whole test's configuration: the first share's, with every divided figure summed.
fn config(parts: &[PlacedShare]) -> RunConfig {
    let mut c = parts[0].record.config.clone();
    let configs: Vec<&RunConfig> = parts.iter().map(|p| &p.record.config).collect();
    c.connections = sum_some(configs.iter().map(|c| c.connections));
    c.rate_per_sec = sum_some(configs.iter().map(|c| c.rate_per_sec));
    c.max_in_flight = sum_some(configs.iter().map(|c| c.max_in_flight));
    c.requests = sum_some(configs.iter().map(|c| c.requests));
    c.threads = configs.iter().map(|c| c.threads).sum();
    for (i, sc) in c.scenarios.iter_mut().enumerate() {
        let loads: Vec<_> = configs
            .iter()
            .filter_map(|c| c.scenarios.get(i).and_then(|s| s.load.clone()))
            .collect();
        let Some(load) = &mut sc.load else { continue };
        load.peak_vus = sum_some(loads.iter().map(|l| l.peak_vus));
        load.peak_rate_per_sec = sum_some(loads.iter().map(|l| l.peak_rate_per_sec));
        load.max_vus = sum_some(loads.iter().map(|l| l.max_vus));
        load.connections = sum_some(loads.iter().map(|l| l.connections));
        if load.profile != ProfileKind::PerVuIterations {
            load.iterations = sum_some(loads.iter().map(|l| l.iterations));
        }
        sc.profile = crate::report::load::describe_load(load);
    }
    c
}

/// The generators' machines as one: the first's, with cores and memory summed and every
/// field that differs listed.
fn environment(parts: &[PlacedShare]) -> Environment {
    let envs: Vec<&Environment> = parts.iter().map(|p| &p.record.environment).collect();
    let join = |f: fn(&Environment) -> &String| {
        let mut seen: Vec<&str> = Vec::new();
        for e in &envs {
            if !seen.contains(&f(e).as_str()) {
                seen.push(f(e));
            }
        }
        seen.join(", ")
    };
    Environment {
        hostname: join(|e| &e.hostname),
        cpu_model: join(|e| &e.cpu_model),
        cores: envs.iter().map(|e| e.cores).sum(),
        memory_bytes: envs.iter().map(|e| e.memory_bytes).sum(),
        os: join(|e| &e.os),
        kernel: join(|e| &e.kernel),
        arch: join(|e| &e.arch),
    }
}
