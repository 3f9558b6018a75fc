//! Prometheus remote write 1.0 (`--prometheus-rw URL`): a snapshot's [`series`] as a protobuf
//! `prometheus.WriteRequest`, snappy-compressed (block format), POSTed over HTTP/1.1 ([`super::http_post`]).
//!
//! The messages are declared here with `prost`'s derive (the three messages remote write needs,
//! field numbers from Prometheus's `prompb/remote.proto` and `types.proto`), which avoids a build
//! step for one small schema. Compression is the `snap` crate's raw (block) encoder, as the
//! protocol requires (not the framed format). A down endpoint or a 4xx/5xx answer is a
//! [`PushError`], counted by the caller, never fatal to the run.

use std::time::Duration;

use super::{LiveSnapshot, series};

/// `prometheus.WriteRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteRequest {
    /// The series.
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

/// `prometheus.TimeSeries`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TimeSeries {
    /// Labels, `__name__` included, sorted by name.
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    /// Samples, oldest first.
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
}

/// `prometheus.Label`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    /// Label name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Label value.
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `prometheus.Sample`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    /// The value.
    #[prost(double, tag = "1")]
    pub value: f64,
    /// Milliseconds since the Unix epoch.
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// The write request of one snapshot: one sample per series at `snapshot.unix_ms`.
pub fn write_request(snapshot: &LiveSnapshot) -> WriteRequest {
    let timeseries = series(snapshot)
        .into_iter()
        .map(|s| {
            let mut labels: Vec<Label> = s
                .labels
                .into_iter()
                .map(|(name, value)| Label { name, value })
                .collect();
            labels.push(Label {
                name: "__name__".into(),
                value: s.name,
            });
            labels.sort_by(|a, b| a.name.cmp(&b.name));
            TimeSeries {
                labels,
                samples: vec![Sample {
                    value: s.value,
                    timestamp: snapshot.unix_ms,
                }],
            }
        })
        .collect();
    WriteRequest { timeseries }
}

/// The HTTP body of a push: the request, protobuf-encoded, then snappy-compressed.
pub fn encode(request: &WriteRequest) -> Vec<u8> {
    let raw = prost::Message::encode_to_vec(request);
    snap::raw::Encoder::new()
        .compress_vec(&raw)
        .expect("snappy compresses any input under 4 GiB")
}

pub use super::http_post::PushError;
use super::http_post::{Endpoint, first_line};

/// A remote-write endpoint.
#[derive(Debug, Clone)]
pub struct RemoteWrite {
    endpoint: Endpoint,
}

impl RemoteWrite {
    /// The endpoint at `url` (`http://host:port/api/v1/write`), resolved now.
    pub fn new(url: &str) -> Result<Self, PushError> {
        Ok(Self {
            endpoint: Endpoint::new(url)?,
        })
    }

    /// Pushes one snapshot (blocking, at most the endpoint's timeout, 2 s).
    pub fn push(&self, snapshot: &LiveSnapshot) -> Result<(), PushError> {
        let head = "Content-Type: application/x-protobuf\r\nContent-Encoding: snappy\r\nX-Prometheus-Remote-Write-Version: 0.1.0\r\n";
        let answer = self
            .endpoint
            .post(head, &encode(&write_request(snapshot)))?;
        match answer.status {
            200..300 => Ok(()),
            code => Err(PushError::Status(code, first_line(&answer.body))),
        }
    }
}

impl super::push::Sink for RemoteWrite {
    fn push(&mut self, snapshot: &LiveSnapshot) -> Result<(), PushError> {
        RemoteWrite::push(self, snapshot)
    }

    fn timeout(&self) -> Duration {
        self.endpoint.timeout
    }
}

#[cfg(test)]
#[path = "remote_write_tests.rs"]
mod tests;
