//! gRPC server reflection for the target's services (`grpc.reflection.v1` and `v1alpha`), so
//! that volley, grpcurl or ghz can call it without the `.proto` file.
//!
//! The schema is `proto/volley_target.proto`, embedded in the binary and compiled once, on the
//! first reflection call. The method is a bidirectional stream: each request message is answered
//! as soon as it has arrived ([`Conversation`] reads the request body and writes the response body
//! as one), so clients that wait for an answer before asking the next question (grpcurl) work
//! as well as those that close their side first (volley).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};

use crate::server::incoming::ReqBody;
use bytes::{Buf, Bytes, BytesMut};
use hyper::HeaderMap;
use hyper::body::{Body, Frame};
use hyper::header::HeaderValue;
use prost::Message;
use prost_reflect::DescriptorPool;

use crate::proto::grpc::{GrpcCode, frame};
use crate::proto::reflection::{
    ErrorResponse, FileDescriptorResponse, ListServiceResponse, MessageRequest, MessageResponse,
    ServerReflectionRequest, ServerReflectionResponse, ServiceResponse, V1_PATH, V1ALPHA_PATH,
};

/// The target's schema, as `protoc` would name it.
const FILE_NAME: &str = "volley_target.proto";
const SOURCE: &str = include_str!("../../../proto/volley_target.proto");
/// Largest request message accepted, bytes (questions are names: this is generous).
const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// Whether `path` is the reflection method (either version).
pub(super) fn is_reflection(path: &str) -> bool {
    path == V1_PATH || path == V1ALPHA_PATH
}

/// The compiled schema, and its file encoded as a `FileDescriptorProto`.
struct Schema {
    pool: DescriptorPool,
    encoded: Vec<u8>,
}

fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut compiler = protox::Compiler::with_file_resolver(Embedded);
        compiler
            .open_file(FILE_NAME)
            .expect("the embedded proto/volley_target.proto compiles (tested)");
        let pool = compiler.descriptor_pool();
        let encoded = pool
            .get_file_by_name(FILE_NAME)
            .expect("the file just compiled")
            .file_descriptor_proto()
            .encode_to_vec();
        Schema { pool, encoded }
    })
}

/// Resolves the one embedded file.
struct Embedded;

impl protox::file::FileResolver for Embedded {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        if name == FILE_NAME {
            protox::file::File::from_source(name, SOURCE)
        } else {
            Err(protox::Error::file_not_found(name))
        }
    }
}

/// The full names of the target's own services (`volley.target.v1.Echo`, …), as reflection
/// lists them (without the reflection services themselves).
pub(crate) fn service_names() -> Vec<String> {
    schema()
        .pool
        .services()
        .map(|v| v.full_name().into())
        .collect()
}

/// The answer to one question.
fn answer(question: ServerReflectionRequest) -> ServerReflectionResponse {
    let s = schema();
    let files = || {
        MessageResponse::FileDescriptorResponse(FileDescriptorResponse {
            file_descriptor_proto: vec![s.encoded.clone()],
        })
    };
    let not_found = |what: &str| {
        MessageResponse::ErrorResponse(ErrorResponse {
            error_code: GrpcCode::NotFound.as_u32() as i32,
            error_message: format!("{what} not found"),
        })
    };
    let response = match &question.message_request {
        Some(MessageRequest::FileByFilename(name)) if name == FILE_NAME => files(),
        Some(MessageRequest::FileByFilename(name)) => not_found(name),
        Some(MessageRequest::FileContainingSymbol(symbol)) if declares(&s.pool, symbol) => files(),
        Some(MessageRequest::FileContainingSymbol(symbol)) => not_found(symbol),
        Some(MessageRequest::ListServices(_)) => {
            let mut names = service_names();
            names.push("grpc.reflection.v1.ServerReflection".into());
            names.push("grpc.reflection.v1alpha.ServerReflection".into());
            MessageResponse::ListServicesResponse(ListServiceResponse {
                service: names
                    .into_iter()
                    .map(|name| ServiceResponse { name })
                    .collect(),
            })
        }
        // No extensions are declared.
        Some(MessageRequest::FileContainingExtension(_))
        | Some(MessageRequest::AllExtensionNumbersOfType(_)) => not_found("extension"),
        None => MessageResponse::ErrorResponse(ErrorResponse {
            error_code: GrpcCode::InvalidArgument.as_u32() as i32,
            error_message: "an empty question".into(),
        }),
    };
    ServerReflectionResponse {
        valid_host: question.host.clone(),
        original_request: Some(question),
        message_response: Some(response),
    }
}

/// Whether the schema declares `symbol`: a service, a method (`pkg.Service.Method`), a message
/// or an enum.
fn declares(pool: &DescriptorPool, symbol: &str) -> bool {
    let symbol = symbol.trim_start_matches('.');
    pool.get_service_by_name(symbol).is_some()
        || pool.get_message_by_name(symbol).is_some()
        || pool.get_enum_by_name(symbol).is_some()
        || symbol.rsplit_once('.').is_some_and(|(service, method)| {
            pool.get_service_by_name(service)
                .is_some_and(|s| s.methods().any(|m| m.name() == method))
        })
}

/// One reflection call: the request body read and the response body written as one stream,
/// each complete request message answered at once; `grpc-status` in the trailers at the end.
#[derive(Debug)]
pub(crate) struct Conversation {
    incoming: ReqBody,
    /// Request bytes not yet making a whole message.
    pending: BytesMut,
    /// Framed answers not yet sent.
    answers: VecDeque<Bytes>,
    /// Set once the request side has ended (or failed): then the answers left, then these.
    trailers: Option<HeaderMap>,
    done: bool,
}

impl Conversation {
    /// A conversation over a request body.
    pub(super) fn new(incoming: ReqBody) -> Self {
        Self {
            incoming,
            pending: BytesMut::new(),
            answers: VecDeque::new(),
            trailers: None,
            done: false,
        }
    }

    /// Ends the request side with `code`.
    fn end(&mut self, code: GrpcCode, message: &'static str) {
        let mut trailers = HeaderMap::new();
        trailers.insert("grpc-status", HeaderValue::from(code.as_u32()));
        if !message.is_empty() {
            trailers.insert("grpc-message", HeaderValue::from_static(message));
        }
        self.trailers = Some(trailers);
        self.done = true;
    }

    /// Answers every whole message in `pending`; an invalid one ends the call.
    fn answer_pending(&mut self) {
        while self.pending.len() >= 5 {
            let len = u32::from_be_bytes([
                self.pending[1],
                self.pending[2],
                self.pending[3],
                self.pending[4],
            ]) as usize;
            if self.pending[0] != 0 {
                return self.end(
                    GrpcCode::Unimplemented,
                    "compressed messages are not supported",
                );
            }
            if len > MAX_MESSAGE_BYTES {
                return self.end(GrpcCode::ResourceExhausted, "message larger than 64 KiB");
            }
            if self.pending.len() < 5 + len {
                return;
            }
            self.pending.advance(5);
            let message = self.pending.split_to(len);
            match ServerReflectionRequest::decode(message.freeze()) {
                Ok(question) => self
                    .answers
                    .push_back(frame(&answer(question).encode_to_vec())),
                Err(_) => return self.end(GrpcCode::InvalidArgument, "message does not decode"),
            }
        }
    }

    /// The next frame of the response body.
    pub(crate) fn poll_frame(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        loop {
            if let Some(answer) = self.answers.pop_front() {
                return Poll::Ready(Some(Ok(Frame::data(answer))));
            }
            if self.done {
                return Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))));
            }
            match Pin::new(&mut self.incoming).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    if self.pending.is_empty() {
                        self.end(GrpcCode::Ok, "");
                    } else {
                        self.end(GrpcCode::Internal, "the request ended inside a message");
                    }
                }
                Poll::Ready(Some(Err(_))) => self.end(GrpcCode::Cancelled, ""),
                Poll::Ready(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        self.pending.extend_from_slice(&data);
                        self.answer_pending();
                    }
                }
            }
        }
    }

    /// Whether the response body has ended.
    pub(crate) fn is_end_stream(&self) -> bool {
        self.done && self.answers.is_empty() && self.trailers.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_schema_compiles_and_answers() {
        let q = |r| ServerReflectionRequest {
            host: String::new(),
            message_request: Some(r),
        };
        for symbol in [
            "volley.target.v1.Echo",
            "volley.target.v1.Tasks.CreateTask",
            "volley.target.v1.EchoRequest",
        ] {
            let a = answer(q(MessageRequest::FileContainingSymbol(symbol.into())));
            let Some(MessageResponse::FileDescriptorResponse(f)) = a.message_response else {
                panic!("{symbol}: {a:?}");
            };
            let file =
                prost_types::FileDescriptorProto::decode(f.file_descriptor_proto[0].as_slice())
                    .unwrap();
            assert_eq!(file.name(), FILE_NAME);
        }
        let a = answer(q(MessageRequest::FileContainingSymbol("nope.Svc".into())));
        assert!(matches!(
            a.message_response,
            Some(MessageResponse::ErrorResponse(ErrorResponse {
                error_code: 5,
                ..
            }))
        ));
        let a = answer(q(MessageRequest::ListServices(String::new())));
        let Some(MessageResponse::ListServicesResponse(l)) = a.message_response else {
            panic!("{a:?}");
        };
        let names: Vec<&str> = l.service.iter().map(|s| s.name.as_str()).collect();
        assert!(
            names.contains(&"volley.target.v1.Echo") && names.contains(&"volley.target.v1.Tasks")
        );
    }
}
