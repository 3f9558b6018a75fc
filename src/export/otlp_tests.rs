use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsPartialSuccess;

use super::*;
use crate::export::push::Sink;
use crate::export::{LatencyBuckets, ScopeFigures};

fn snapshot() -> LiveSnapshot {
    let mut le = [0; LATENCY_BUCKETS_S.len()];
    le[6..].fill(4); // four responses at or under 10 ms
    le[8..].fill(6); // two more at or under 50 ms
    LiveSnapshot {
        unix_ms: 1_700_000_000_123,
        scopes: vec![ScopeFigures {
            requests: 7,
            statuses: vec![(200, 6), (500, 1)],
            errors: vec![("status_5xx", 1)],
            in_flight: Some(3),
            latency: LatencyBuckets {
                le,
                count: 7,
                sum_s: 0.2,
            },
            ..ScopeFigures::default()
        }],
        labels: vec![
            ("env".into(), "ci".into()),
            ("run_id".into(), "ab12".into()),
        ],
    }
}

fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

#[test]
fn the_endpoint_follows_the_flag_then_the_specifications_variables() {
    let url = |flag, vars: &[(&str, &str)]| OtlpSettings::new(flag, env(vars)).unwrap().url;
    assert_eq!(url(None, &[]), DEFAULT_ENDPOINT);
    let base = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/otlp/")];
    assert_eq!(url(None, &base), "http://collector:4318/otlp/v1/metrics");
    let both = [
        base[0],
        ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:1/custom"),
    ];
    assert_eq!(url(None, &both), "http://m:1/custom");
    assert_eq!(
        url(Some("http://h:4318"), &both),
        "http://h:4318/v1/metrics"
    );
    assert_eq!(url(Some("http://h:1/x/y"), &both), "http://h:1/x/y");
    let grpc = env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]);
    let err = OtlpSettings::new(None, grpc).unwrap_err().to_string();
    assert!(err.contains("http/protobuf only"), "{err}");
}

#[test]
fn headers_resource_and_timeout_come_from_the_environment() {
    let s = OtlpSettings::new(
        None,
        env(&[
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=s3cret%3D, x-org=a"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=ci,service.name=x",
            ),
            ("OTEL_SERVICE_NAME", "loadgen"),
            ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "500"),
        ]),
    )
    .unwrap();
    assert_eq!(s.headers[0], ("api-key".into(), "s3cret=".into()));
    assert_eq!(s.resource[0], ("service.name".into(), "loadgen".into()));
    assert_eq!(s.resource[1].0, "deployment.environment");
    assert_eq!(s.timeout, Duration::from_millis(500));
    let bad = env(&[("OTEL_EXPORTER_OTLP_HEADERS", "api-key s3cret")]);
    let err = OtlpSettings::new(None, bad).unwrap_err().to_string();
    assert!(
        err.contains("not key=value") && !err.contains("s3cret"),
        "{err}"
    );
    let plain = OtlpSettings::new(None, env(&[])).unwrap();
    assert_eq!(
        plain.resource,
        vec![("service.name".into(), "volley".into())]
    );
}

#[test]
fn the_request_names_families_as_opentelemetry_does_with_every_label() {
    let r = request(&snapshot(), &[("service.name".into(), "volley".into())], 5);
    let metrics = &r.resource_metrics[0].scope_metrics[0].metrics;
    let names: Vec<&str> = metrics.iter().map(|m| m.name.as_str()).collect();
    let want = [
        "volley.requests",
        "volley.errors",
        "volley.responses",
        "volley.in_flight",
        "volley.latency",
    ];
    assert_eq!(names, want);
    let Some(metric::Data::Sum(requests)) = &metrics[0].data else {
        panic!("volley.requests is not a sum");
    };
    assert!(requests.is_monotonic);
    assert_eq!(requests.aggregation_temporality, 2, "cumulative");
    let point = &requests.data_points[0];
    assert_eq!(point.value, Some(number_data_point::Value::AsDouble(7.0)));
    assert_eq!(
        (point.start_time_unix_nano, point.time_unix_nano),
        (5, 1_700_000_000_123_000_000)
    );
    let keys: Vec<&str> = point.attributes.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(keys, ["env", "run_id", "scenario", "step"]);
    assert!(matches!(metrics[3].data, Some(metric::Data::Gauge(_))));
    let Some(metric::Data::Histogram(h)) = &metrics[4].data else {
        panic!("volley.latency is not a histogram");
    };
    let p = &h.data_points[0];
    assert_eq!(metrics[4].unit, "s");
    assert_eq!(p.bucket_counts.len(), LATENCY_BUCKETS_S.len() + 1);
    assert_eq!((p.bucket_counts[6], p.bucket_counts[8]), (4, 2));
    assert_eq!(*p.bucket_counts.last().unwrap(), 1, "one above 60 s");
    assert_eq!(p.bucket_counts.iter().sum::<u64>(), p.count);
}

/// A one-request HTTP server answering `head` then `body`; sends back the request's head.
fn receiver(head: &'static str, body: Vec<u8>) -> (String, std::sync::mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/metrics", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 65536];
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = c.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        let _ = tx.send(String::from_utf8_lossy(&got).to_string());
        let answer = format!("{head}Content-Length: {}\r\n\r\n", body.len());
        c.write_all(answer.as_bytes()).unwrap();
        c.write_all(&body).unwrap();
    });
    (url, rx)
}

fn push_to(url: String, headers: Vec<(String, String)>) -> Result<(), PushError> {
    let settings = OtlpSettings {
        url,
        headers,
        resource: vec![],
        timeout: Duration::from_secs(2),
    };
    Otlp::new(&settings).unwrap().push(&snapshot())
}

#[test]
fn a_push_sends_protobuf_with_headers_and_reads_the_receivers_answer() {
    let ok = ExportMetricsServiceResponse::default().encode_to_vec();
    let (url, got) = receiver(
        "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n",
        ok,
    );
    push_to(url, vec![("api-key".into(), "k1".into())]).unwrap();
    let head = got.recv().unwrap().to_ascii_lowercase();
    assert!(head.starts_with("post /v1/metrics http/1.1"), "{head}");
    assert!(
        head.contains("content-type: application/x-protobuf"),
        "{head}"
    );
    assert!(head.contains("api-key: k1"), "{head}");

    let partial = ExportMetricsServiceResponse {
        partial_success: Some(ExportMetricsPartialSuccess {
            rejected_data_points: 3,
            error_message: "too old".into(),
        }),
    };
    let head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n";
    let (url, _) = receiver(head, partial.encode_to_vec());
    let err = push_to(url, vec![]).unwrap_err();
    assert_eq!(err.to_string(), "3 data points rejected: too old");

    let status = Status {
        code: 3,
        message: "bad metric".into(),
    };
    let head = "HTTP/1.1 400 Bad Request\r\nContent-Type: application/x-protobuf\r\n";
    let (url, _) = receiver(head, status.encode_to_vec());
    assert_eq!(
        push_to(url, vec![]).unwrap_err().to_string(),
        "HTTP 400: bad metric"
    );
}
