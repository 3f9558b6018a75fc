//! Building a request's HTTP/2 (and HTTP/3) form once, from the protocol-neutral request.

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HOST, TE, USER_AGENT};
use http::{HeaderMap, HeaderValue, Uri};

use super::Http2Request;
use crate::proto::client::ClientError;
use crate::proto::client::check_header;
use crate::proto::grpc;
use crate::proto::message::{Request, RequestKind};

impl Http2Request {
    /// `req` in the HTTP/2 (and HTTP/3) form, for a connection of `scheme` (`http`, `https`):
    /// the host as `:authority`, connection-specific headers left out, a gRPC message framed.
    pub(in crate::proto) fn build(req: &Request, scheme: &str) -> Result<Self, ClientError> {
        let grpc = req.kind == RequestKind::Grpc;
        let mut authority = req.authority.clone();
        let mut headers = HeaderMap::with_capacity(req.headers.len() + 3);
        for (name, value) in &req.headers {
            let (name, value) = check_header(name, value)?;
            if name == HOST {
                // HTTP/2 carries the host as :authority.
                if let Ok(host) = value.to_str() {
                    authority = host.to_owned();
                }
                continue;
            }
            // Connection-specific headers are forbidden in HTTP/2 (RFC 9113 §8.2.2).
            if matches!(
                name.as_str(),
                "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding" | "upgrade"
            ) || (name == TE && value != "trailers")
            {
                continue;
            }
            headers.append(name, value);
        }
        if !headers.contains_key(USER_AGENT) {
            headers.insert(
                USER_AGENT,
                HeaderValue::from_static(concat!("volley/", env!("CARGO_PKG_VERSION"))),
            );
        }
        let body = if grpc {
            if !headers.contains_key(CONTENT_TYPE) {
                headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
            }
            headers.insert(TE, HeaderValue::from_static("trailers"));
            grpc::frame(&req.body)
        } else {
            req.body.clone()
        };
        let text = format!("{scheme}://{authority}{}", req.path_and_query);
        let uri: Uri = text.parse().map_err(|_| ClientError::Uri(text.clone()))?;
        Ok(Self::new(
            req.method.clone(),
            uri,
            headers,
            Bytes::clone(&body),
            grpc,
        ))
    }
}
