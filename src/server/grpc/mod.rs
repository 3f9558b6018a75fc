//! The target's gRPC services (`proto/volley_target.proto`), served by the same hyper service as
//! REST: a request whose `content-type` starts with `application/grpc` comes here.
//!
//! Hand-written on hyper rather than tonic: the unary methods need only the 5-byte framing, a
//! `grpc-status` trailer and `prost` messages, and this keeps one server, one port and one
//! capacity limiter for REST and gRPC alike. The streaming methods are [`streams`]; server
//! reflection ([`reflection`]) is served too.

mod messages;
pub(crate) mod reflection;
mod streams;

use crate::server::incoming::ReqBody;
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{HeaderMap, Request, Response, StatusCode};
use prost::Message;
use serde_json::{Map, Value};

use self::messages::{
    CreateTaskRequest, EchoReply, EchoRequest, Empty, ListTasksReply, Task, TaskId,
    UpdateTaskRequest,
};
use super::body::TargetBody;
use super::routes::ServerState;
use super::tasks::StoreError;
use crate::proto::grpc::{GrpcCode, frame, unframe};

/// Largest request message accepted, bytes (gRPC's usual default).
const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// Longest echo delay, milliseconds (10 minutes, as REST `/delay`).
const MAX_DELAY_MS: f64 = 600_000.0;

const GRPC: HeaderValue = HeaderValue::from_static("application/grpc");

/// The methods served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Echo,
    CreateTask,
    GetTask,
    ListTasks,
    UpdateTask,
    DeleteTask,
}

impl Method {
    fn parse(path: &str) -> Option<Self> {
        Some(match path {
            "/volley.target.v1.Echo/Echo" => Self::Echo,
            "/volley.target.v1.Tasks/CreateTask" => Self::CreateTask,
            "/volley.target.v1.Tasks/GetTask" => Self::GetTask,
            "/volley.target.v1.Tasks/ListTasks" => Self::ListTasks,
            "/volley.target.v1.Tasks/UpdateTask" => Self::UpdateTask,
            "/volley.target.v1.Tasks/DeleteTask" => Self::DeleteTask,
            _ => return None,
        })
    }
}

/// True for a gRPC request (`content-type: application/grpc[+proto|;…]`).
pub(crate) fn is_grpc<B>(req: &Request<B>) -> bool {
    req.headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"))
}

/// A failed call: its status and message.
struct Status(GrpcCode, &'static str);

/// Serves one gRPC call, which arrived at `started`.
pub(crate) async fn handle(
    state: &ServerState,
    req: Request<ReqBody>,
    started: std::time::Instant,
) -> Response<TargetBody> {
    if reflection::is_reflection(req.uri().path()) {
        let mut response = Response::new(TargetBody::Reflection(Box::new(
            reflection::Conversation::new(req.into_body()),
        )));
        response.headers_mut().insert(CONTENT_TYPE, GRPC);
        return response;
    }
    if let Some(method) = streams::StreamMethod::parse(req.uri().path()) {
        return streams::handle(method, req.into_body(), started);
    }
    match call(state, req).await {
        Ok(message) => reply(message),
        Err(Status(code, message)) => trailers_only(code, message),
    }
}

async fn call(state: &ServerState, req: Request<ReqBody>) -> Result<Bytes, Status> {
    let method =
        Method::parse(req.uri().path()).ok_or(Status(GrpcCode::Unimplemented, "unknown method"))?;
    let body = match Limited::new(req.into_body(), MAX_MESSAGE_BYTES + 5)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return Err(Status(
                GrpcCode::ResourceExhausted,
                "message larger than 4 MiB",
            ));
        }
        Err(_) => return Err(Status(GrpcCode::Cancelled, "request body not received")),
    };
    let message = unframe(&body).map_err(|_| Status(GrpcCode::Internal, "invalid gRPC frame"))?;
    let invalid = |_| Status(GrpcCode::InvalidArgument, "message does not decode");
    let tasks = &state.tasks;
    let encoded = match method {
        Method::Echo => {
            let req = EchoRequest::decode(message).map_err(invalid)?;
            if !(req.delay_ms.is_finite() && (0.0..=MAX_DELAY_MS).contains(&req.delay_ms)) {
                return Err(Status(
                    GrpcCode::InvalidArgument,
                    "delay_ms must be in 0..=600000",
                ));
            }
            if req.delay_ms > 0.0 {
                crate::timer::sleep(std::time::Duration::from_secs_f64(req.delay_ms / 1e3)).await;
            }
            EchoReply {
                message: req.message,
                payload: req.payload,
            }
            .encode_to_vec()
        }
        Method::CreateTask => {
            let req = CreateTaskRequest::decode(message).map_err(invalid)?;
            let (_, task) = tasks
                .insert(object(&req.title, req.done))
                .map_err(store_status)?;
            task_of(&task).encode_to_vec()
        }
        Method::GetTask => {
            let req = TaskId::decode(message).map_err(invalid)?;
            let task = tasks
                .get(req.id)
                .ok_or(store_status(StoreError::NotFound))?;
            task_of(&task).encode_to_vec()
        }
        Method::ListTasks => {
            Empty::decode(message).map_err(invalid)?;
            ListTasksReply {
                tasks: tasks.all().iter().map(|t| task_of(t)).collect(),
            }
            .encode_to_vec()
        }
        Method::UpdateTask => {
            let req = UpdateTaskRequest::decode(message).map_err(invalid)?;
            let task = tasks
                .put(req.id, object(&req.title, req.done))
                .map_err(store_status)?;
            task_of(&task).encode_to_vec()
        }
        Method::DeleteTask => {
            let req = TaskId::decode(message).map_err(invalid)?;
            tasks.remove(req.id).map_err(store_status)?;
            Empty {}.encode_to_vec()
        }
    };
    Ok(frame(&encoded))
}

/// The REST form of a task's fields (the store keeps JSON objects).
fn object(title: &str, done: bool) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert("title".into(), Value::from(title));
    object.insert("done".into(), Value::from(done));
    object
}

/// A stored (JSON) task as a message; fields REST clients stored beyond these are not shown.
fn task_of(stored: &[u8]) -> Task {
    let value: Value = serde_json::from_slice(stored).unwrap_or_default();
    Task {
        id: value["id"].as_u64().unwrap_or_default(),
        title: value["title"].as_str().unwrap_or_default().to_owned(),
        done: value["done"].as_bool().unwrap_or_default(),
    }
}

fn store_status(e: StoreError) -> Status {
    match e {
        StoreError::NotFound => Status(GrpcCode::NotFound, "no such task"),
        StoreError::Full => Status(GrpcCode::ResourceExhausted, "task store is full"),
    }
}

/// A successful reply: headers, one framed message, `grpc-status: 0` trailers.
fn reply(framed: Bytes) -> Response<TargetBody> {
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    let mut response = Response::new(TargetBody::Grpc {
        message: Some(framed),
        trailers: Some(trailers),
    });
    response.headers_mut().insert(CONTENT_TYPE, GRPC);
    response
}

/// A failed call as a trailers-only response: the status in the headers, no body.
fn trailers_only(code: GrpcCode, message: &'static str) -> Response<TargetBody> {
    let mut response = Response::new(TargetBody::empty());
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, GRPC);
    headers.insert("grpc-status", HeaderValue::from(code.as_u32()));
    headers.insert("grpc-message", HeaderValue::from_static(message));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::grpc::GrpcSchema;

    fn schema() -> GrpcSchema {
        let proto = concat!(env!("CARGO_MANIFEST_DIR"), "/proto/volley_target.proto");
        GrpcSchema::compile(&[proto.into()], &[]).expect("the shipped .proto compiles")
    }

    #[test]
    fn hand_written_messages_match_the_proto_file() {
        let schema = schema();
        let echo = schema.method("volley.target.v1.Echo/Echo").unwrap();
        let bytes = echo
            .encode_json(r#"{"message": "hi", "payload": "AAE=", "delayMs": 1.5}"#)
            .unwrap();
        let req = EchoRequest::decode(bytes).unwrap();
        assert_eq!(
            (req.message.as_str(), &req.payload[..], req.delay_ms),
            ("hi", &[0u8, 1][..], 1.5)
        );
        let reply = EchoReply {
            message: "m".into(),
            payload: Bytes::from_static(b"p"),
        };
        let json = echo.decode_json(&reply.encode_to_vec()).unwrap();
        assert_eq!(json, serde_json::json!({"message": "m", "payload": "cA=="}));

        let update = schema.method("volley.target.v1.Tasks/UpdateTask").unwrap();
        let bytes = update
            .encode_json(r#"{"id": "7", "title": "t", "done": true}"#)
            .unwrap();
        assert_eq!(
            UpdateTaskRequest::decode(bytes).unwrap(),
            Task {
                id: 7,
                title: "t".into(),
                done: true
            }
        );
        let list = schema.method("volley.target.v1.Tasks/ListTasks").unwrap();
        let reply = ListTasksReply {
            tasks: vec![Task {
                id: 1,
                title: "a".into(),
                done: false,
            }],
        };
        assert_eq!(
            list.decode_json(&reply.encode_to_vec()).unwrap(),
            serde_json::json!({"tasks": [{"id": "1", "title": "a"}]})
        );
        for path in [
            "volley.target.v1.Tasks/CreateTask",
            "volley.target.v1.Tasks/GetTask",
            "volley.target.v1.Tasks/DeleteTask",
        ] {
            let m = schema.method(path).unwrap();
            assert!(Method::parse(m.path()).is_some(), "{path} is served");
        }
    }

    #[test]
    fn tasks_read_back_from_rest_json() {
        let t = task_of(br#"{"id": 3, "title": "x", "done": true, "extra": 1}"#);
        assert_eq!(
            t,
            Task {
                id: 3,
                title: "x".into(),
                done: true
            }
        );
        assert_eq!(task_of(br#"{"id": 4}"#).title, "");
    }
}
