//! `/tasks`: an in-memory JSON CRUD collection.
//!
//! Tasks are JSON objects; the server assigns each an integer `"id"`. They are
//! stored already serialized, so reads only copy bytes under a read lock.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

use crate::server::incoming::ReqBody;
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::header::{HeaderValue, LOCATION};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Map, Value};

use super::body::TargetBody;
use super::respond::{empty, json, json_error, method_not_allowed};

/// Largest accepted task body, in bytes.
const MAX_TASK_BYTES: usize = 1024 * 1024;
/// Most bytes all stored tasks may take together (beyond: 507).
const MAX_STORE_BYTES: usize = 256 * 1024 * 1024;

/// The task collection.
#[derive(Debug)]
pub(crate) struct TaskStore {
    next_id: AtomicU64,
    inner: RwLock<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Serialized task objects by id.
    items: BTreeMap<u64, Bytes>,
    /// Sum of the lengths of `items`.
    bytes: usize,
}

impl Default for TaskStore {
    fn default() -> Self {
        TaskStore {
            next_id: AtomicU64::new(1),
            inner: RwLock::default(),
        }
    }
}

impl TaskStore {
    /// `GET /tasks` (list) and `POST /tasks` (create).
    pub(crate) async fn collection(&self, req: Request<ReqBody>) -> Response<TargetBody> {
        match *req.method() {
            Method::GET | Method::HEAD => self.list(),
            Method::POST => match read_object(req).await {
                Ok(object) => self.create(object),
                Err(response) => response,
            },
            _ => method_not_allowed("GET, HEAD, POST"),
        }
    }

    /// `GET`, `PUT` and `DELETE /tasks/{id}`.
    /// `id` is `None` when the path segment is not an integer.
    pub(crate) async fn item(
        &self,
        id: Option<u64>,
        req: Request<ReqBody>,
    ) -> Response<TargetBody> {
        let Some(id) = id else {
            return json_error(StatusCode::NOT_FOUND, "no such task (ids are integers)");
        };
        match *req.method() {
            Method::GET | Method::HEAD => match self.get(id) {
                Some(task) => json(StatusCode::OK, task),
                None => not_found(),
            },
            Method::PUT => match read_object(req).await {
                Ok(object) => self.replace(id, object),
                Err(response) => response,
            },
            Method::DELETE => match self.remove(id) {
                Ok(()) => empty(StatusCode::NO_CONTENT),
                Err(e) => e.response(),
            },
            _ => method_not_allowed("GET, HEAD, PUT, DELETE"),
        }
    }

    fn list(&self) -> Response<TargetBody> {
        let inner = self.read();
        let mut out = Vec::with_capacity(inner.bytes + inner.items.len() + 2);
        out.push(b'[');
        for (i, task) in inner.items.values().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(task);
        }
        out.push(b']');
        drop(inner);
        json(StatusCode::OK, out)
    }

    fn create(&self, object: Map<String, Value>) -> Response<TargetBody> {
        match self.insert(object) {
            Ok((id, task)) => {
                let mut response = json(StatusCode::CREATED, task);
                if let Ok(location) = HeaderValue::try_from(format!("/tasks/{id}")) {
                    response.headers_mut().insert(LOCATION, location);
                }
                response
            }
            Err(e) => e.response(),
        }
    }

    fn replace(&self, id: u64, object: Map<String, Value>) -> Response<TargetBody> {
        match self.put(id, object) {
            Ok(task) => json(StatusCode::OK, task),
            Err(e) => e.response(),
        }
    }

    /// Stores a new task (the object with a fresh `"id"`); returns its id and serialized form.
    pub(crate) fn insert(&self, object: Map<String, Value>) -> Result<(u64, Bytes), StoreError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let task = serialize(id, object);
        let mut inner = self.write();
        if inner.bytes + task.len() > MAX_STORE_BYTES {
            return Err(StoreError::Full);
        }
        inner.bytes += task.len();
        inner.items.insert(id, task.clone());
        Ok((id, task))
    }

    /// The serialized task `id`.
    pub(crate) fn get(&self, id: u64) -> Option<Bytes> {
        self.read().items.get(&id).cloned()
    }

    /// Every task, serialized, by id.
    pub(crate) fn all(&self) -> Vec<Bytes> {
        self.read().items.values().cloned().collect()
    }

    /// Replaces task `id` (which must exist); returns its new serialized form.
    pub(crate) fn put(&self, id: u64, object: Map<String, Value>) -> Result<Bytes, StoreError> {
        let task = serialize(id, object);
        let mut inner = self.write();
        let old_len = match inner.items.get(&id) {
            Some(old) => old.len(),
            None => return Err(StoreError::NotFound),
        };
        if inner.bytes - old_len + task.len() > MAX_STORE_BYTES {
            return Err(StoreError::Full);
        }
        inner.bytes = inner.bytes - old_len + task.len();
        inner.items.insert(id, task.clone());
        Ok(task)
    }

    /// Deletes task `id`.
    pub(crate) fn remove(&self, id: u64) -> Result<(), StoreError> {
        let mut inner = self.write();
        let old = inner.items.remove(&id).ok_or(StoreError::NotFound)?;
        inner.bytes -= old.len();
        Ok(())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Why a store operation failed (shared by REST and gRPC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StoreError {
    /// No task with that id.
    NotFound,
    /// The store holds [`MAX_STORE_BYTES`] already.
    Full,
}

impl StoreError {
    fn response(self) -> Response<TargetBody> {
        match self {
            StoreError::NotFound => not_found(),
            StoreError::Full => json_error(StatusCode::INSUFFICIENT_STORAGE, "task store is full"),
        }
    }
}

fn not_found() -> Response<TargetBody> {
    json_error(StatusCode::NOT_FOUND, "no such task")
}

/// The object with its `"id"` set, serialized.
fn serialize(id: u64, mut object: Map<String, Value>) -> Bytes {
    object.insert("id".into(), Value::from(id));
    Bytes::from(Value::Object(object).to_string())
}

/// Reads the request body as a JSON object, or the error response to send.
async fn read_object(req: Request<ReqBody>) -> Result<Map<String, Value>, Response<TargetBody>> {
    let body = match Limited::new(req.into_body(), MAX_TASK_BYTES)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return Err(json_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "task body larger than 1 MiB",
            ));
        }
        Err(e) => {
            return Err(json_error(
                StatusCode::BAD_REQUEST,
                &format!("cannot read request body: {e}"),
            ));
        }
    };
    match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(json_error(
            StatusCode::BAD_REQUEST,
            "a task must be a JSON object",
        )),
        Err(e) => Err(json_error(
            StatusCode::BAD_REQUEST,
            &format!("invalid JSON: {e}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn body_json(response: Response<TargetBody>) -> Value {
        match response.into_body() {
            TargetBody::Full(Some(b)) => serde_json::from_slice(&b).unwrap(),
            other => panic!("unexpected body {other:?}"),
        }
    }

    #[test]
    fn create_replace_list() {
        let store = TaskStore::default();
        let r = store.create(object(serde_json::json!({"title": "a", "id": 99})));
        assert_eq!(r.status(), StatusCode::CREATED);
        assert_eq!(r.headers()[LOCATION], "/tasks/1");
        assert_eq!(body_json(r), serde_json::json!({"title": "a", "id": 1}));
        store.create(object(serde_json::json!({"title": "b"})));
        let r = store.replace(1, object(serde_json::json!({"title": "A"})));
        assert_eq!(body_json(r), serde_json::json!({"title": "A", "id": 1}));
        assert_eq!(store.replace(7, Map::new()).status(), StatusCode::NOT_FOUND);
        assert_eq!(
            body_json(store.list()),
            serde_json::json!([{"title": "A", "id": 1}, {"title": "b", "id": 2}])
        );
        let inner = store.read();
        assert_eq!(
            inner.bytes,
            inner.items.values().map(|b| b.len()).sum::<usize>()
        );
    }
}
