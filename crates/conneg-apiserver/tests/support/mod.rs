//! What the in-process HTTP tests share: a storage stack in memory and one request through a
//! router.

use axum::body::Body;
use conneg_apiserver::storage::codec::{StorageCodec, StorageMediaType};
use conneg_apiserver::storage::keys::Keys;
use conneg_apiserver::storage::{MemoryStore, OpenedStorage, Store};
use http::{Method, StatusCode};
use serde_json::Value;
use tower::ServiceExt;

/// An empty in-memory store, CBOR storage codec, keys under `group`.
pub(crate) fn memory_storage(group: &str) -> OpenedStorage {
    OpenedStorage {
        store: Store::Memory(MemoryStore::new()),
        codec: StorageCodec::new(StorageMediaType::Cbor),
        keys: Keys::for_group(group),
    }
}

/// `method uri` with `body` (none when null) as `content_type`, answered in JSON: the status
/// and the decoded body (null when it is not JSON).
pub(crate) async fn call(
    app: &axum::Router,
    method: Method,
    uri: &str,
    content_type: &str,
    body: Value,
) -> (StatusCode, Value) {
    call_accepting(app, method, uri, content_type, "application/json", body).await
}

/// [`call`] answered in `accept`: JSON or CBOR, decoded (null when it is neither).
pub(crate) async fn call_accepting(
    app: &axum::Router,
    method: Method,
    uri: &str,
    content_type: &str,
    accept: &str,
    body: Value,
) -> (StatusCode, Value) {
    let req = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .header("accept", accept)
        .body(if body.is_null() {
            Body::empty()
        } else {
            Body::from(body.to_string())
        })
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let code = resp.status();
    let cbor = resp
        .headers()
        .get("content-type")
        .is_some_and(|t| t.as_bytes().starts_with(b"application/cbor"));
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    let value = match cbor {
        true => conneg_cbor::value_from_slice(&bytes).ok(),
        false => serde_json::from_slice(&bytes).ok(),
    };
    (code, value.unwrap_or(Value::Null))
}
