//! gRPC without generated code: unary calls, and the methods of streaming ones
//! ([`crate::proto::stream::grpc`] measures those).
//!
//! `.proto` files are compiled in process ([`protox`]) into a descriptor pool; a method is looked
//! up by `package.Service/Method`; the request is given as JSON (proto3 JSON mapping) and turned
//! into protobuf bytes through a [`prost_reflect::DynamicMessage`] once per distinct payload
//! ([`PayloadCache`]). On the wire a call is an HTTP/2 `POST /package.Service/Method` with
//! `content-type: application/grpc`, the message behind a 5-byte frame header ([`frame`]), and the
//! outcome in the `grpc-status` trailer ([`GrpcCode`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::{BufMut, Bytes, BytesMut};
use http::HeaderMap;
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, MethodDescriptor, SerializeOptions};

pub use crate::record::grpc_code::GrpcCode;

/// The `grpc-status` among `headers` (trailers, or the headers of a trailers-only response).
pub fn status_of(headers: &HeaderMap) -> Option<GrpcCode> {
    let value = headers.get("grpc-status")?.to_str().ok()?;
    Some(GrpcCode::from_u32(value.trim().parse().unwrap_or(2)))
}

/// `message` behind the 5-byte gRPC frame header (not compressed, big-endian length).
pub fn frame(message: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(5 + message.len());
    out.put_u8(0);
    out.put_u32(message.len() as u32);
    out.put_slice(message);
    out.freeze()
}

/// The message of a single-message gRPC body (the frame header checked and removed).
pub fn unframe(body: &[u8]) -> Result<&[u8], GrpcError> {
    if body.len() < 5 {
        return Err(GrpcError::Frame("shorter than the 5-byte frame header"));
    }
    if body[0] != 0 {
        return Err(GrpcError::Frame("compressed messages are not supported"));
    }
    let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
    body.get(5..5 + len)
        .ok_or(GrpcError::Frame("frame length beyond the body"))
}

/// Why a schema, a method or a payload could not be used (found before the run).
#[derive(Debug, thiserror::Error)]
pub enum GrpcError {
    /// The `.proto` files did not compile.
    #[error("cannot compile the .proto files: {0}")]
    Compile(String),
    /// A descriptor set did not decode.
    #[error("invalid descriptor set: {0}")]
    Descriptor(#[from] prost_reflect::DescriptorError),
    /// `--call` is not `package.Service/Method`.
    #[error("{0:?} is not package.Service/Method")]
    CallSyntax(String),
    /// The service is not in the schema.
    #[error("no service {service:?} in the schema (services: {known})")]
    NoService {
        /// The name asked for.
        service: String,
        /// The services that exist.
        known: String,
    },
    /// The method is not in the service.
    #[error("service {service} has no method {method:?} (methods: {known})")]
    NoMethod {
        /// The service.
        service: String,
        /// The name asked for.
        method: String,
        /// The methods that exist.
        known: String,
    },
    /// The JSON payload does not fit the request message.
    #[error("the data does not fit {message}: {source}")]
    Payload {
        /// The request message type.
        message: String,
        /// What serde said.
        source: serde_json::Error,
    },
    /// A response message did not decode.
    #[error("cannot decode {message}: {source}")]
    Decode {
        /// The response message type.
        message: String,
        /// What prost said.
        source: prost::DecodeError,
    },
    /// A body was not a valid gRPC frame.
    #[error("invalid gRPC frame: {0}")]
    Frame(&'static str),
}

/// `package.Service/Method` (or `package.Service.Method`, or with a leading `/`) split into the
/// service's full name and the method's name.
pub fn split_call(call: &str) -> Result<(&str, &str), GrpcError> {
    let call = call.trim().trim_start_matches('/');
    call.rsplit_once('/')
        .or_else(|| call.rsplit_once('.'))
        .filter(|(s, m)| !s.is_empty() && !m.is_empty())
        .ok_or_else(|| GrpcError::CallSyntax(call.into()))
}

/// The message types and services of some `.proto` files.
#[derive(Debug, Clone)]
pub struct GrpcSchema {
    pool: DescriptorPool,
}

impl GrpcSchema {
    /// Compiles `files` (paths as given on the command line), resolving imports in
    /// `import_paths`; each file's own folder is searched too (after `import_paths`), so
    /// `--proto dir/x.proto` works without `--import-path dir`.
    pub fn compile(files: &[PathBuf], import_paths: &[PathBuf]) -> Result<Self, GrpcError> {
        let mut includes: Vec<PathBuf> = import_paths.to_vec();
        for file in files {
            let dir = file.parent().filter(|d| !d.as_os_str().is_empty());
            let dir = dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            if !includes.contains(&dir) {
                includes.push(dir);
            }
        }
        let mut compiler =
            protox::Compiler::new(&includes).map_err(|e| GrpcError::Compile(e.to_string()))?;
        compiler.include_imports(true);
        compiler
            .open_files(files)
            .map_err(|e| GrpcError::Compile(format!("{e:?}")))?;
        Ok(Self {
            pool: compiler.descriptor_pool(),
        })
    }

    /// A schema from an encoded `FileDescriptorSet` (as `protoc -o` or server reflection give).
    pub fn from_descriptor_set(bytes: &[u8]) -> Result<Self, GrpcError> {
        Ok(Self {
            pool: DescriptorPool::decode(bytes)?,
        })
    }

    /// The unary method `package.Service/Method` (a `.` instead of the `/` and a leading `/`
    /// are accepted too).
    pub fn method(&self, call: &str) -> Result<GrpcMethod, GrpcError> {
        let (service, method) = split_call(call)?;
        let Some(svc) = self.pool.get_service_by_name(service) else {
            let known: Vec<_> = self
                .pool
                .services()
                .map(|s| s.full_name().to_owned())
                .collect();
            return Err(GrpcError::NoService {
                service: service.into(),
                known: known.join(", "),
            });
        };
        let Some(desc) = svc.methods().find(|m| m.name() == method) else {
            let known: Vec<_> = svc.methods().map(|m| m.name().to_owned()).collect();
            return Err(GrpcError::NoMethod {
                service: service.into(),
                method: method.into(),
                known: known.join(", "),
            });
        };
        Ok(GrpcMethod {
            path: format!("/{}/{}", svc.full_name(), desc.name()),
            desc,
        })
    }
}

/// One method (unary or streaming): its path and message types.
#[derive(Debug, Clone)]
pub struct GrpcMethod {
    desc: MethodDescriptor,
    path: String,
}

impl GrpcMethod {
    /// The HTTP/2 path, `/package.Service/Method`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Whether the client sends a stream of messages (client and bidirectional streaming).
    pub fn client_streaming(&self) -> bool {
        self.desc.is_client_streaming()
    }

    /// Whether the server answers with a stream of messages (server and bidirectional
    /// streaming).
    pub fn server_streaming(&self) -> bool {
        self.desc.is_server_streaming()
    }

    /// Whether the call streams either way.
    pub fn is_streaming(&self) -> bool {
        self.client_streaming() || self.server_streaming()
    }

    /// The method's full name, `package.Service.Method`.
    pub fn full_name(&self) -> &str {
        self.desc.full_name()
    }

    /// The request message type's full name.
    pub fn input_name(&self) -> String {
        self.desc.input().full_name().to_owned()
    }

    /// Encodes a JSON request (proto3 JSON mapping; unknown fields are an error) to protobuf bytes,
    /// not framed.
    pub fn encode_json(&self, json: &str) -> Result<Bytes, GrpcError> {
        let message = self.desc.input();
        let payload_error = |source| GrpcError::Payload {
            message: message.full_name().into(),
            source,
        };
        let mut de = serde_json::Deserializer::from_str(json);
        let dynamic =
            DynamicMessage::deserialize(message.clone(), &mut de).map_err(payload_error)?;
        de.end().map_err(payload_error)?;
        Ok(dynamic.encode_to_vec().into())
    }

    /// Encodes a step's JSON body as [`encode_json`](Self::encode_json) does; an empty body (a
    /// step without `json`) is the message with every field at its default, `{}`.
    pub fn encode_body(&self, json: &str) -> Result<Bytes, GrpcError> {
        self.encode_json(if json.is_empty() { "{}" } else { json })
    }

    /// Decodes a response message (unframed protobuf) to JSON, for checks and extraction
    /// (proto3's JSON mapping: lowerCamelCase names, 64-bit integers as strings).
    pub fn decode_json(&self, message: &[u8]) -> Result<serde_json::Value, GrpcError> {
        decode_as(self.desc.output(), message, &SerializeOptions::new())
    }

    /// Decodes a request message (unframed protobuf) to JSON as a plan writes it, for `volley
    /// check`: the .proto's field names, 64-bit integers as numbers.
    pub fn decode_request_json(&self, message: &[u8]) -> Result<serde_json::Value, GrpcError> {
        let as_written = SerializeOptions::new()
            .use_proto_field_name(true)
            .stringify_64_bit_integers(false);
        decode_as(self.desc.input(), message, &as_written)
    }
}

/// `message` (unframed protobuf) decoded as a `kind` and written as JSON with `options`.
fn decode_as(
    kind: prost_reflect::MessageDescriptor,
    message: &[u8],
    options: &SerializeOptions,
) -> Result<serde_json::Value, GrpcError> {
    let dynamic =
        DynamicMessage::decode(kind.clone(), message).map_err(|source| GrpcError::Decode {
            message: kind.full_name().into(),
            source,
        })?;
    dynamic
        .serialize_with_options(serde_json::value::Serializer, options)
        .map_err(|source| GrpcError::Payload {
            message: kind.full_name().into(),
            source,
        })
}

/// Encodes each distinct JSON payload once: a templated plan that renders the same data again
/// gets the bytes of the first encoding.
#[derive(Debug)]
pub struct PayloadCache {
    method: GrpcMethod,
    encoded: HashMap<String, Bytes>,
    /// Most payloads kept; beyond, new payloads are encoded every time.
    capacity: usize,
}

impl PayloadCache {
    /// A cache of at most `capacity` payloads for `method`.
    pub fn new(method: GrpcMethod, capacity: usize) -> Self {
        Self {
            method,
            encoded: HashMap::new(),
            capacity,
        }
    }

    /// The protobuf bytes of `json`.
    pub fn encode(&mut self, json: &str) -> Result<Bytes, GrpcError> {
        if let Some(bytes) = self.encoded.get(json) {
            return Ok(bytes.clone());
        }
        let bytes = self.method.encode_json(json)?;
        if self.encoded.len() < self.capacity {
            self.encoded.insert(json.to_owned(), bytes.clone());
        }
        Ok(bytes)
    }

    /// Distinct payloads encoded and kept.
    pub fn len(&self) -> usize {
        self.encoded.len()
    }

    /// True when nothing is kept yet.
    pub fn is_empty(&self) -> bool {
        self.encoded.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::ErrorKind;

    #[test]
    fn codes_round_trip_and_classify() {
        for (i, code) in GrpcCode::ALL.into_iter().enumerate() {
            assert_eq!(code.as_u32() as usize, i);
            assert_eq!(GrpcCode::from_u32(i as u32), code);
        }
        assert_eq!(GrpcCode::from_u32(99), GrpcCode::Unknown);
        assert_eq!(GrpcCode::Ok.error_kind(), None);
        assert_eq!(
            GrpcCode::NotFound.error_kind(),
            Some(ErrorKind::GrpcClientError)
        );
        assert_eq!(
            GrpcCode::Unavailable.error_kind(),
            Some(ErrorKind::GrpcServerError)
        );
        assert_eq!(GrpcCode::from_http_status(503), GrpcCode::Unavailable);
        let mut h = HeaderMap::new();
        assert_eq!(status_of(&h), None);
        h.insert("grpc-status", "5".parse().unwrap());
        assert_eq!(status_of(&h), Some(GrpcCode::NotFound));
    }

    #[test]
    fn frames_round_trip() {
        let f = frame(b"abc");
        assert_eq!(&f[..], b"\0\0\0\0\x03abc");
        assert_eq!(unframe(&f).unwrap(), b"abc");
        assert!(unframe(b"\0\0\0\0\x09abc").is_err());
        assert!(unframe(b"\x01\0\0\0\0").is_err());
    }
}
