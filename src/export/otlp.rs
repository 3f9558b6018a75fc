//! OpenTelemetry metrics over OTLP/HTTP with protobuf (`--otlp [URL]`): each snapshot's
//! [`series`] as an `ExportMetricsServiceRequest` (types from the `opentelemetry-proto` crate),
//! POSTed to the receiver's `/v1/metrics` every second by the pusher.
//!
//! Names follow OpenTelemetry's conventions and map back to the Prometheus page's by the
//! OpenTelemetry ↔ Prometheus compatibility rules ([`Family::meta`]): `volley.requests`, a
//! monotonic cumulative sum with unit `{request}`, is `volley_requests_total`; `volley.latency`,
//! an explicit-bucket histogram in `s` with the page's buckets, is `volley_latency_seconds`.
//! Every data point carries the same attributes as the page's labels (scenario, step, status or
//! kind, `run_id`, the tags). Sums and the histogram are cumulative from the run's start.
//!
//! Settings, as the OpenTelemetry specification names them ([`OtlpSettings::new`]): the
//! endpoint (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` +
//! `/v1/metrics`, else `http://localhost:4318/v1/metrics`), headers
//! (`OTEL_EXPORTER_OTLP_[METRICS_]HEADERS`), the timeout (`OTEL_EXPORTER_OTLP_[METRICS_]TIMEOUT`,
//! ms) and the resource (`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SERVICE_NAME`; `service.name` is
//! `volley` unless given).

use std::time::Duration;

use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{
    AggregationTemporality, Gauge, Histogram, HistogramDataPoint, Metric, NumberDataPoint,
    ResourceMetrics, ScopeMetrics, Sum, metric, number_data_point,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;

use super::http_post::{Endpoint, PushError, first_line};
use super::{Family, LATENCY_BUCKETS_S, LiveSnapshot, SeriesType, series};

/// The receiver's default (OTLP/HTTP's port), when neither `--otlp URL` nor the environment
/// names one.
pub const DEFAULT_ENDPOINT: &str = "http://localhost:4318/v1/metrics";

/// Where and how to push: from `--otlp [URL]` and the `OTEL_*` environment.
#[derive(Debug, Clone, PartialEq)]
pub struct OtlpSettings {
    /// The metrics URL pushed to (user information kept: sent as Basic authentication).
    pub url: String,
    /// Headers sent with every push (`OTEL_EXPORTER_OTLP_HEADERS`); values never shown.
    pub headers: Vec<(String, String)>,
    /// The resource's attributes, `service.name` first.
    pub resource: Vec<(String, String)>,
    /// Deadline of one push.
    pub timeout: Duration,
}

impl OtlpSettings {
    /// From the flag's URL (`None`: `--otlp` without one, or not given) and the environment
    /// (`env` reads a variable). A URL given on the command line is taken as it is when it has
    /// a path, else `/v1/metrics` is added; a metrics-specific variable is taken as it is; the
    /// general one gets `/v1/metrics` appended (as the specification says).
    pub fn new(
        flag: Option<&str>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, PushError> {
        let var = |signal: &str, general: &str| env(signal).or_else(|| env(general));
        for name in [
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ] {
            if let Some(p) = env(name).filter(|p| p.trim() != "http/protobuf") {
                let why = format!("`{p}`: volley sends OTLP as http/protobuf only");
                return Err(PushError::Setting(name.into(), why));
            }
        }
        let url = match (flag, env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")) {
            (Some(url), _) if has_path(url) => url.to_string(),
            (Some(url), _) => format!("{}/v1/metrics", url.trim_end_matches('/')),
            (None, Some(url)) => url,
            (None, None) => match env("OTEL_EXPORTER_OTLP_ENDPOINT") {
                Some(base) => format!("{}/v1/metrics", base.trim_end_matches('/')),
                None => DEFAULT_ENDPOINT.to_string(),
            },
        };
        let headers_var = "OTEL_EXPORTER_OTLP_[METRICS_]HEADERS";
        let headers = match var(
            "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
            "OTEL_EXPORTER_OTLP_HEADERS",
        ) {
            Some(text) => pairs(&text, headers_var, false)?,
            None => Vec::new(),
        };
        let timeout = match var(
            "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
            "OTEL_EXPORTER_OTLP_TIMEOUT",
        ) {
            Some(ms) => Duration::from_millis(ms.trim().parse().map_err(|_| {
                let why = format!("`{ms}` is not a whole number of milliseconds");
                PushError::Setting("OTEL_EXPORTER_OTLP_[METRICS_]TIMEOUT".into(), why)
            })?),
            None => Duration::from_secs(2),
        };
        Ok(Self {
            url,
            headers,
            resource: resource(&env)?,
            timeout,
        })
    }
}

fn has_path(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| !matches!(u.path(), "" | "/"))
}

/// `OTEL_RESOURCE_ATTRIBUTES` with `OTEL_SERVICE_NAME` over its `service.name`, `service.name`
/// first (`volley` when neither names one).
fn resource(env: &impl Fn(&str) -> Option<String>) -> Result<Vec<(String, String)>, PushError> {
    let mut attributes = match env("OTEL_RESOURCE_ATTRIBUTES") {
        Some(text) => pairs(&text, "OTEL_RESOURCE_ATTRIBUTES", true)?,
        None => Vec::new(),
    };
    let named = attributes
        .iter()
        .position(|(k, _)| k == "service.name")
        .map(|i| attributes.remove(i).1);
    let service = env("OTEL_SERVICE_NAME")
        .filter(|s| !s.is_empty())
        .or(named)
        .unwrap_or_else(|| "volley".into());
    attributes.insert(0, ("service.name".into(), service));
    Ok(attributes)
}

/// `key=value,key=value` with percent-encoded values (the W3C Baggage format the specification
/// uses for both variables). Header values are never shown in an error.
fn pairs(text: &str, var: &str, show: bool) -> Result<Vec<(String, String)>, PushError> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let fail = |why: &str| {
            let item = if show { item } else { "a header" };
            PushError::Setting(var.into(), format!("{item}: {why}"))
        };
        let (key, value) = item.split_once('=').ok_or_else(|| fail("not key=value"))?;
        let value = percent_encoding::percent_decode_str(value.trim())
            .decode_utf8()
            .map_err(|_| fail("its value is not UTF-8 once decoded"))?;
        let key = key.trim();
        let bad = |c: char| c.is_control() || (!show && (c.is_whitespace() || c == ':'));
        if key.is_empty() || key.contains(bad) || value.contains(|c: char| c.is_control()) {
            return Err(fail("an empty name, or a control character"));
        }
        out.push((key.to_string(), value.into_owned()));
    }
    Ok(out)
}

/// The pusher's OTLP sink: the endpoint, the resource, and the start of the run pushed now.
pub struct Otlp {
    endpoint: Endpoint,
    resource: Vec<(String, String)>,
    /// The run (its `run_id`) and when its first push was, ns since the Unix epoch: the start of
    /// its cumulative series.
    run: Option<(String, u64)>,
}

impl Otlp {
    /// The sink for `settings`, its endpoint resolved now.
    pub fn new(settings: &OtlpSettings) -> Result<Self, PushError> {
        let mut endpoint = Endpoint::new(&settings.url)?;
        endpoint.timeout = settings.timeout;
        for (name, value) in &settings.headers {
            endpoint = endpoint.header(name, value);
        }
        Ok(Self {
            endpoint,
            resource: settings.resource.clone(),
            run: None,
        })
    }
}

impl super::push::Sink for Otlp {
    fn push(&mut self, snapshot: &LiveSnapshot) -> Result<(), PushError> {
        let now_ns = snapshot.unix_ms.max(0) as u64 * 1_000_000;
        let run_id = label(snapshot, "run_id");
        let start_ns = match &self.run {
            Some((id, start)) if *id == run_id => *start,
            _ => self.run.insert((run_id, now_ns)).1,
        };
        let body = request(snapshot, &self.resource, start_ns).encode_to_vec();
        let answer = self
            .endpoint
            .post("Content-Type: application/x-protobuf\r\n", &body)?;
        let protobuf = answer.content_type.starts_with("application/x-protobuf");
        if !(200..300).contains(&answer.status) {
            let why = match protobuf {
                true => Status::decode(answer.body.as_slice()).map_or_else(
                    |_| format!("{} bytes of protobuf", answer.body.len()),
                    |s| s.message,
                ),
                false => first_line(&answer.body),
            };
            return Err(PushError::Status(answer.status, why));
        }
        let response = ExportMetricsServiceResponse::decode(answer.body.as_slice());
        match response.ok().and_then(|r| r.partial_success) {
            Some(p) if protobuf && p.rejected_data_points > 0 => {
                Err(PushError::Rejected(p.rejected_data_points, p.error_message))
            }
            _ => Ok(()),
        }
    }

    fn timeout(&self) -> Duration {
        self.endpoint.timeout
    }
}

/// `google.rpc.Status`, the body of an OTLP/HTTP error answer.
#[derive(Clone, PartialEq, prost::Message)]
struct Status {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

fn label(snapshot: &LiveSnapshot, name: &str) -> String {
    let found = snapshot.labels.iter().find(|(k, _)| k == name);
    found.map(|(_, v)| v.clone()).unwrap_or_default()
}

/// The request of one snapshot: the families of [`Family::ALL`] in order, by their OTLP names,
/// each data point at `snapshot.unix_ms`, sums and histograms from `start_ns`.
pub fn request(
    snapshot: &LiveSnapshot,
    resource: &[(String, String)],
    start_ns: u64,
) -> ExportMetricsServiceRequest {
    let time_ns = snapshot.unix_ms.max(0) as u64 * 1_000_000;
    let all = series(snapshot);
    let metrics = Family::ALL
        .into_iter()
        .filter_map(|family| {
            let meta = family.meta();
            let data = match meta.kind {
                SeriesType::Histogram => histogram(snapshot, start_ns, time_ns),
                _ => {
                    let points: Vec<NumberDataPoint> = all
                        .iter()
                        .filter(|s| s.family == family)
                        .map(|s| number(&s.labels, s.value, start_ns, time_ns))
                        .collect();
                    number_metric(meta.kind, points)?
                }
            };
            Some(Metric {
                name: meta.otlp_name.into(),
                description: meta.help.into(),
                unit: meta.otlp_unit.into(),
                data: Some(data),
                ..Metric::default()
            })
        })
        .collect();
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(Resource {
                attributes: attributes(resource),
                ..Resource::default()
            }),
            scope_metrics: vec![ScopeMetrics {
                scope: Some(InstrumentationScope {
                    name: "volley".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..InstrumentationScope::default()
                }),
                metrics,
                ..ScopeMetrics::default()
            }],
            ..ResourceMetrics::default()
        }],
    }
}

fn number_metric(kind: SeriesType, data_points: Vec<NumberDataPoint>) -> Option<metric::Data> {
    if data_points.is_empty() {
        return None;
    }
    Some(match kind {
        SeriesType::Counter => metric::Data::Sum(Sum {
            data_points,
            aggregation_temporality: AggregationTemporality::Cumulative as i32,
            is_monotonic: true,
        }),
        _ => metric::Data::Gauge(Gauge { data_points }),
    })
}

fn number(labels: &[(String, String)], value: f64, start_ns: u64, time_ns: u64) -> NumberDataPoint {
    NumberDataPoint {
        attributes: attributes(labels),
        start_time_unix_nano: start_ns,
        time_unix_nano: time_ns,
        value: Some(number_data_point::Value::AsDouble(value)),
        ..NumberDataPoint::default()
    }
}

/// One data point per scope: the page's buckets, as counts per bucket (OTLP's are not
/// cumulative), the last one above 60 s.
fn histogram(snapshot: &LiveSnapshot, start_ns: u64, time_ns: u64) -> metric::Data {
    let data_points = snapshot
        .scopes
        .iter()
        .map(|scope| {
            let mut labels = vec![
                ("scenario".to_string(), scope.scenario.clone()),
                ("step".to_string(), scope.step.clone()),
            ];
            labels.extend_from_slice(&snapshot.labels);
            labels.sort();
            let cumulative = scope.latency.le.iter().chain([&scope.latency.count]);
            let mut below = 0;
            let bucket_counts = cumulative
                .map(|&n| {
                    let own = n.saturating_sub(below);
                    below = n;
                    own
                })
                .collect();
            HistogramDataPoint {
                attributes: attributes(&labels),
                start_time_unix_nano: start_ns,
                time_unix_nano: time_ns,
                count: scope.latency.count,
                sum: Some(scope.latency.sum_s),
                bucket_counts,
                explicit_bounds: LATENCY_BUCKETS_S.to_vec(),
                ..HistogramDataPoint::default()
            }
        })
        .collect();
    metric::Data::Histogram(Histogram {
        data_points,
        aggregation_temporality: AggregationTemporality::Cumulative as i32,
    })
}

fn attributes(pairs: &[(String, String)]) -> Vec<KeyValue> {
    pairs
        .iter()
        .map(|(k, v)| KeyValue {
            key: k.clone(),
            value: Some(AnyValue {
                value: Some(any_value::Value::StringValue(v.clone())),
            }),
            ..KeyValue::default()
        })
        .collect()
}

#[cfg(test)]
#[path = "otlp_tests.rs"]
mod tests;
