//! gRPC server reflection: a service's schema fetched from the server itself, so that a call needs
//! no `.proto` file (as with grpcurl and ghz).
//!
//! The protocol (`grpc.reflection.v1.ServerReflection/ServerReflectionInfo`, and the older but
//! wire-identical `v1alpha`, tried when a server does not know `v1`) is a bidirectional stream of
//! requests and responses. volley needs one answer per question, so each question is one call, on
//! one connection of the run's own client — one request message, the end of the stream, one response message —
//! which every server answers the same way as a longer conversation. The questions:
//!
//! 1. the file that declares the service (`file_containing_symbol`); servers send its
//!    dependencies along, usually;
//! 2. any dependency still missing, by file name (`file_by_filename`), until none is.
//!
//! The files are then ordered dependencies first and built into a [`GrpcSchema`].
//!
//! The messages are written here with `prost` derives (as the built-in target's are): 8 small
//! messages do not justify generated code or a dependency on a gRPC framework. The built-in target
//! serves the same protocol with them (`target::grpc::reflection`).

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use prost::Message;
use prost_types::FileDescriptorProto;

use super::client::{Client, Connection};
use super::grpc::{GrpcCode, GrpcSchema};
use super::message::{Capture, Request, RequestKind};

/// The reflection method's path, in the current version.
pub const V1_PATH: &str = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
/// The reflection method's path, in the older version (same messages).
pub const V1ALPHA_PATH: &str = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";
/// Most files one schema may take (a bound on the questions asked).
const MAX_FILES: usize = 1000;
/// Largest reflection response accepted, bytes.
const MAX_RESPONSE_BYTES: usize = 16 << 20;

/// Why a schema could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum ReflectionError {
    /// The call itself failed (connection, timeout, protocol).
    #[error("the reflection call failed: {0}")]
    Call(String),
    /// The server answered neither version of the reflection service.
    #[error(
        "the server does not offer gRPC server reflection (grpc-status {0}); give the service's \
         .proto file with --proto"
    )]
    Unsupported(&'static str),
    /// The server answered with an error status or an error response.
    #[error("the server's reflection service answered {0}")]
    Refused(String),
    /// An answer did not decode, or the files do not make a schema.
    #[error("the server's reflection answer is unusable: {0}")]
    Invalid(String),
}

/// Fetches the schema that declares `services` (each `package.Service`) from the server `client`
/// talks to, `authority` being its `host:port`. Must run inside a tokio runtime.
pub async fn fetch(
    client: &Client,
    authority: &str,
    services: &[&str],
) -> Result<GrpcSchema, ReflectionError> {
    let mut asker = Asker {
        client,
        conn: client.connection(),
        authority,
        path: V1_PATH,
    };
    let mut files: BTreeMap<String, FileDescriptorProto> = BTreeMap::new();
    for (i, service) in services.iter().enumerate() {
        let question = MessageRequest::FileContainingSymbol((*service).to_owned());
        let answer = match asker.ask(question.clone()).await {
            Err(ReflectionError::Unsupported(_)) if i == 0 => {
                asker.path = V1ALPHA_PATH;
                asker.ask(question).await
            }
            other => other,
        }
        .map_err(|e| match e {
            ReflectionError::Refused(why) if !why.contains(service) => {
                ReflectionError::Refused(format!("{why} (asked for {service})"))
            }
            e => e,
        })?;
        add_files(&mut files, answer)?;
    }
    loop {
        let missing: BTreeSet<String> = files
            .values()
            .flat_map(|f| f.dependency.iter())
            .filter(|d| !files.contains_key(*d))
            .cloned()
            .collect();
        let Some(name) = missing.into_iter().next() else {
            break;
        };
        if files.len() >= MAX_FILES {
            return Err(ReflectionError::Invalid(format!(
                "more than {MAX_FILES} files"
            )));
        }
        let answer = asker
            .ask(MessageRequest::FileByFilename(name.clone()))
            .await?;
        let before = files.len();
        add_files(&mut files, answer)?;
        if !files.contains_key(&name) || files.len() == before {
            return Err(ReflectionError::Invalid(format!(
                "asked for {name}, got other files"
            )));
        }
    }
    let set = prost_types::FileDescriptorSet {
        file: dependencies_first(files)?,
    };
    GrpcSchema::from_descriptor_set(&set.encode_to_vec())
        .map_err(|e| ReflectionError::Invalid(e.to_string()))
}

/// [`fetch`] on a runtime of its own, bounded by `timeout` for the whole conversation; for
/// callers outside a runtime (plan validation). A `--call` without `--proto` comes here.
pub fn fetch_blocking(
    client: &Client,
    authority: &str,
    services: &[&str],
    timeout: std::time::Duration,
) -> Result<GrpcSchema, ReflectionError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ReflectionError::Call(e.to_string()))?;
    runtime.block_on(async {
        tokio::time::timeout(timeout, fetch(client, authority, services))
            .await
            .unwrap_or_else(|_| {
                Err(ReflectionError::Call(format!(
                    "no answer within {}",
                    humantime::format_duration(timeout)
                )))
            })
    })
}

/// Asks questions of one reflection service version, all on one connection.
struct Asker<'a> {
    client: &'a Client,
    conn: Connection,
    authority: &'a str,
    path: &'static str,
}

impl Asker<'_> {
    /// One question, one answer.
    async fn ask(&mut self, question: MessageRequest) -> Result<MessageResponse, ReflectionError> {
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(question),
        };
        let prepared = self
            .client
            .prepare(&Request {
                method: http::Method::POST,
                authority: self.authority.to_owned(),
                path_and_query: self.path.to_owned(),
                headers: Vec::new(),
                body: Bytes::from(request.encode_to_vec()),
                kind: RequestKind::Grpc,
                capture: Capture {
                    body_limit: MAX_RESPONSE_BYTES,
                    headers: true,
                },
            })
            .map_err(|e| ReflectionError::Call(e.to_string()))?;
        let response = self
            .conn
            .exchange(&prepared)
            .await
            .map_err(|kind| ReflectionError::Call(kind.hint().to_owned()))?;
        match response.grpc_status {
            Some(GrpcCode::Ok) => {}
            Some(GrpcCode::Unimplemented) => {
                return Err(ReflectionError::Unsupported(GrpcCode::Unimplemented.name()));
            }
            Some(code) => {
                let message = response
                    .captured
                    .as_ref()
                    .and_then(|c| c.headers.get("grpc-message"))
                    .and_then(|m| m.to_str().ok())
                    .unwrap_or("");
                return Err(ReflectionError::Refused(format!(
                    "grpc-status {}: {message}",
                    code.name()
                )));
            }
            None => return Err(ReflectionError::Invalid("no grpc-status".into())),
        }
        let captured = response
            .captured
            .ok_or_else(|| ReflectionError::Invalid("no response message".into()))?;
        if captured.truncated {
            return Err(ReflectionError::Invalid(format!(
                "an answer over {} MiB",
                MAX_RESPONSE_BYTES >> 20
            )));
        }
        let answer = ServerReflectionResponse::decode(captured.body)
            .map_err(|e| ReflectionError::Invalid(e.to_string()))?;
        match answer.message_response {
            Some(MessageResponse::ErrorResponse(e)) => Err(ReflectionError::Refused(format!(
                "{}: {}",
                GrpcCode::from_u32(e.error_code.max(0) as u32).name(),
                e.error_message
            ))),
            Some(other) => Ok(other),
            None => Err(ReflectionError::Invalid("an empty answer".into())),
        }
    }
}

/// Adds the files of a `FileDescriptorResponse` answer.
fn add_files(
    files: &mut BTreeMap<String, FileDescriptorProto>,
    answer: MessageResponse,
) -> Result<(), ReflectionError> {
    let MessageResponse::FileDescriptorResponse(r) = answer else {
        return Err(ReflectionError::Invalid(
            "the answer holds no file descriptors".into(),
        ));
    };
    for bytes in r.file_descriptor_proto {
        let file = FileDescriptorProto::decode(bytes.as_slice())
            .map_err(|e| ReflectionError::Invalid(e.to_string()))?;
        files.entry(file.name().to_owned()).or_insert(file);
    }
    Ok(())
}

/// The files in an order where each comes after its dependencies.
fn dependencies_first(
    mut files: BTreeMap<String, FileDescriptorProto>,
) -> Result<Vec<FileDescriptorProto>, ReflectionError> {
    let mut ordered = Vec::with_capacity(files.len());
    let mut placed: BTreeSet<String> = BTreeSet::new();
    while !files.is_empty() {
        let ready: Vec<String> = files
            .iter()
            .filter(|(_, f)| f.dependency.iter().all(|d| placed.contains(d)))
            .map(|(name, _)| name.clone())
            .collect();
        if ready.is_empty() {
            return Err(ReflectionError::Invalid(
                "the files import each other in a cycle".into(),
            ));
        }
        for name in ready {
            if let Some(file) = files.remove(&name) {
                ordered.push(file);
                placed.insert(name);
            }
        }
    }
    Ok(ordered)
}

/// The client's message (`grpc.reflection.v1.ServerReflectionRequest`).
#[derive(Clone, PartialEq, Message)]
pub struct ServerReflectionRequest {
    /// The host the question is about (unused by most servers).
    #[prost(string, tag = "1")]
    pub host: String,
    /// The question.
    #[prost(oneof = "MessageRequest", tags = "3, 4, 5, 6, 7")]
    pub message_request: Option<MessageRequest>,
}

/// A question.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum MessageRequest {
    /// The file of this name (e.g. `google/protobuf/empty.proto`).
    #[prost(string, tag = "3")]
    FileByFilename(String),
    /// The file declaring this symbol (e.g. `package.Service`).
    #[prost(string, tag = "4")]
    FileContainingSymbol(String),
    /// The file declaring an extension.
    #[prost(message, tag = "5")]
    FileContainingExtension(ExtensionRequest),
    /// The extension numbers of a message type.
    #[prost(string, tag = "6")]
    AllExtensionNumbersOfType(String),
    /// The services offered (the value is ignored).
    #[prost(string, tag = "7")]
    ListServices(String),
}

/// An extension of a message type.
#[derive(Clone, PartialEq, Message)]
pub struct ExtensionRequest {
    /// The extended message type.
    #[prost(string, tag = "1")]
    pub containing_type: String,
    /// The extension's field number.
    #[prost(int32, tag = "2")]
    pub extension_number: i32,
}

/// The server's message (`grpc.reflection.v1.ServerReflectionResponse`).
#[derive(Clone, PartialEq, Message)]
pub struct ServerReflectionResponse {
    /// The host answered for.
    #[prost(string, tag = "1")]
    pub valid_host: String,
    /// The question answered.
    #[prost(message, optional, tag = "2")]
    pub original_request: Option<ServerReflectionRequest>,
    /// The answer.
    #[prost(oneof = "MessageResponse", tags = "4, 5, 6, 7")]
    pub message_response: Option<MessageResponse>,
}

/// An answer.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum MessageResponse {
    /// Encoded `FileDescriptorProto`s.
    #[prost(message, tag = "4")]
    FileDescriptorResponse(FileDescriptorResponse),
    /// Extension numbers of a type.
    #[prost(message, tag = "5")]
    AllExtensionNumbersResponse(ExtensionNumberResponse),
    /// The services offered.
    #[prost(message, tag = "6")]
    ListServicesResponse(ListServiceResponse),
    /// The question could not be answered.
    #[prost(message, tag = "7")]
    ErrorResponse(ErrorResponse),
}

/// Files, each an encoded `google.protobuf.FileDescriptorProto`.
#[derive(Clone, PartialEq, Message)]
pub struct FileDescriptorResponse {
    /// The encoded files.
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub file_descriptor_proto: Vec<Vec<u8>>,
}

/// The extension numbers of a type.
#[derive(Clone, PartialEq, Message)]
pub struct ExtensionNumberResponse {
    /// The type's full name.
    #[prost(string, tag = "1")]
    pub base_type_name: String,
    /// Its extension numbers.
    #[prost(int32, repeated, tag = "2")]
    pub extension_number: Vec<i32>,
}

/// The services a server offers.
#[derive(Clone, PartialEq, Message)]
pub struct ListServiceResponse {
    /// One per service.
    #[prost(message, repeated, tag = "1")]
    pub service: Vec<ServiceResponse>,
}

/// One service.
#[derive(Clone, PartialEq, Message)]
pub struct ServiceResponse {
    /// Its full name (`package.Service`).
    #[prost(string, tag = "1")]
    pub name: String,
}

/// Why a question was not answered.
#[derive(Clone, PartialEq, Message)]
pub struct ErrorResponse {
    /// A gRPC status code.
    #[prost(int32, tag = "1")]
    pub error_code: i32,
    /// What went wrong.
    #[prost(string, tag = "2")]
    pub error_message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, deps: &[&str]) -> FileDescriptorProto {
        FileDescriptorProto {
            name: Some(name.into()),
            dependency: deps.iter().map(|d| (*d).to_owned()).collect(),
            ..FileDescriptorProto::default()
        }
    }

    #[test]
    fn files_are_ordered_dependencies_first() {
        let mut files = BTreeMap::new();
        for f in [
            file("a.proto", &["b.proto", "c.proto"]),
            file("b.proto", &["c.proto"]),
            file("c.proto", &[]),
        ] {
            files.insert(f.name().to_owned(), f);
        }
        let names: Vec<String> = dependencies_first(files)
            .unwrap()
            .iter()
            .map(|f| f.name().to_owned())
            .collect();
        assert_eq!(names, ["c.proto", "b.proto", "a.proto"]);
        let mut cycle = BTreeMap::new();
        cycle.insert("x".into(), file("x", &["y"]));
        cycle.insert("y".into(), file("y", &["x"]));
        assert!(dependencies_first(cycle).is_err());
    }

    #[test]
    fn messages_round_trip() {
        let q = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::FileContainingSymbol("p.S".into())),
        };
        let bytes = q.encode_to_vec();
        // Field 4, length-delimited, "p.S".
        assert_eq!(bytes, [0x22, 3, b'p', b'.', b'S']);
        assert_eq!(
            ServerReflectionRequest::decode(bytes.as_slice()).unwrap(),
            q
        );
    }
}
