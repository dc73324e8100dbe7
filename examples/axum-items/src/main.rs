//! `axum-items`: the smallest useful axum app on conneg. An in-memory `items` API that speaks
//! JSON and CBOR (Kubernetes' KEP-4222 profile) in both directions, answers 406, 415 and 413
//! from the layer, and reports every error as a Kubernetes `Status` in the client's format.
//! `examples/hyper-items` is the same API, header for header, without axum.
//!
//! ```sh
//! cargo run -p axum-items -- --listen 127.0.0.1:3000
//! curl -si localhost:3000/items -H 'content-type: application/json' -d '{"metadata":{"name":"a"}}'
//! curl -s localhost:3000/items/a -H 'accept: application/cbor' | xxd
//! curl -si -X PATCH localhost:3000/items/a -H 'content-type: application/merge-patch+json' -d '{"spec":1}'
//! curl -sN 'localhost:3000/items?watch=true'            # JSON lines: ADDED / MODIFIED / DELETED
//! curl -sN 'localhost:3000/items?watch=1' -H 'accept: application/cbor' | xxd   # CBOR Sequence
//! ```
//!
//! `GET /items?watch=true` (or `watch=1`, optional `timeoutSeconds`) streams every later
//! create, change and delete through a [`WatchHub`]: each event is encoded once per codec and
//! flushed at once, as JSON lines or an `application/cbor-seq` CBOR Sequence. `GET /items`
//! streams the list item by item ([`StreamingList`]). A watch that asks for `application/cbor`
//! (as client-go does) gets `application/cbor-seq`; `application/cbor-seq` itself in `Accept`
//! is a 406 here, as in Kubernetes (`NegotiateLayer::streaming(true)` would accept it, but also
//! lists the stream types in every 406).

// `Status` (a Kubernetes object of ~300 bytes) is the error of error paths only.
#![allow(clippy::result_large_err)]

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{FromRef, FromRequestParts, Path, Query, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use conneg::axum::Conneg;
use conneg::watch::{WatchEvent, WatchHub, WatchResponse};
use conneg::{
    NegotiateLayer, Negotiated, Patch, PatchType, Profile, Status, StatusReason, StreamingList,
};
use serde_json::{Value, json};

/// The store: items by `metadata.name`, so lists come out in name order.
type Items = Arc<Mutex<BTreeMap<String, Value>>>;
type Reply = Result<(StatusCode, Conneg<Value>), Status>;
/// Every create, change and delete, for `GET /items?watch=true`.
type Hub = WatchHub<Value>;

/// The store and its watch hub; handlers take either with `State<Items>` / `State<Hub>`.
#[derive(Clone, Default)]
struct AppState {
    items: Items,
    hub: Hub,
}

impl FromRef<AppState> for Items {
    fn from_ref(state: &AppState) -> Items {
        state.items.clone()
    }
}

impl FromRef<AppState> for Hub {
    fn from_ref(state: &AppState) -> Hub {
        state.hub.clone()
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    // One layer for every route: JSON (first: the answer to a request without `Accept`) and
    // CBOR; PATCH takes these three patch types (anything else: 415 with `Accept-Patch`).
    let negotiate = NegotiateLayer::new()
        .profile(Profile::Kubernetes)
        .patch_types([
            PatchType::JsonPatch,
            PatchType::MergePatch,
            PatchType::ApplyCbor,
        ]);
    let app = Router::new()
        .route("/items", get(list).post(create))
        .route(
            "/items/{name}",
            get(read).put(replace).delete(remove).patch(patch),
        )
        .fallback(|| async { unknown_path() })
        .method_not_allowed_fallback(|| async {
            Status::failure(
                StatusCode::METHOD_NOT_ALLOWED,
                StatusReason::MethodNotAllowed,
                "the server does not allow this method on the requested resource",
            )
        })
        .layer(negotiate)
        .with_state(AppState::default());
    let listen = std::env::args().skip_while(|a| a != "--listen").nth(1);
    let listen = listen.as_deref().unwrap_or("127.0.0.1:3000");
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await
}

fn not_found(name: &str) -> Status {
    Status::not_found("", "items", name)
}

/// The 404 for a path that names nothing.
fn unknown_path() -> Status {
    Status::failure(
        StatusCode::NOT_FOUND,
        StatusReason::NotFound,
        "the server could not find the requested resource",
    )
}

/// The `{name}` of `/items/{name}`, percent-decoded as axum's `Path` does. An escape that is not
/// UTF-8 (`/items/%ff`) names no item: a 404 `Status` like any unknown path, where `Path` alone
/// would answer axum's plain-text 400.
struct ItemName(String);

impl<S: Send + Sync> FromRequestParts<S> for ItemName {
    type Rejection = Status;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Status> {
        match Path::<String>::from_request_parts(parts, state).await {
            Ok(Path(name)) => Ok(ItemName(name)),
            Err(_) => Err(unknown_path()),
        }
    }
}

/// The body's `metadata.name` (400 without one).
fn name_of(item: &Value) -> Result<String, Status> {
    match item.pointer("/metadata/name").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => Ok(name.to_owned()),
        _ => Err(Status::bad_request(
            "metadata.name: Required value: name is required",
        )),
    }
}

/// `GET /items`: the list, streamed item by item; with `watch=true|1`, a watch instead.
async fn list(
    State(items): State<Items>,
    State(hub): State<Hub>,
    negotiated: Negotiated,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if matches!(query.get("watch").map(String::as_str), Some("true" | "1")) {
        let timeout = query.get("timeoutSeconds").and_then(|s| s.parse().ok());
        return WatchResponse::new(&negotiated)
            .timeout_seconds(timeout)
            .subscribe(&hub)
            .into_response();
    }
    // A snapshot of the items (not of their encoding): the body is encoded as it is sent.
    let snapshot: Vec<Value> = items.lock().unwrap().values().cloned().collect();
    StreamingList::new("List", "v1", json!({}))
        .response(&negotiated, snapshot)
        .into_response()
}

async fn create(
    State(items): State<Items>,
    State(hub): State<Hub>,
    Conneg(item): Conneg<Value>,
) -> Reply {
    match items.lock().unwrap().entry(name_of(&item)?) {
        Entry::Occupied(e) => Err(Status::already_exists("", "items", e.key())),
        Entry::Vacant(e) => {
            let item = e.insert(item).clone();
            // Published under the store's lock, so watchers see writes in their order.
            hub.publish(WatchEvent::Added(item.clone()));
            Ok((StatusCode::CREATED, Conneg(item)))
        }
    }
}

async fn read(State(items): State<Items>, ItemName(name): ItemName) -> Reply {
    let item = items.lock().unwrap().get(&name).cloned();
    Ok((
        StatusCode::OK,
        Conneg(item.ok_or_else(|| not_found(&name))?),
    ))
}

async fn replace(
    State(items): State<Items>,
    State(hub): State<Hub>,
    ItemName(name): ItemName,
    Conneg(item): Conneg<Value>,
) -> Reply {
    store(&items, &hub, &name, |_| Ok(item))
}

async fn patch(
    State(items): State<Items>,
    State(hub): State<Hub>,
    ItemName(name): ItemName,
    patch: Patch,
) -> Reply {
    store(&items, &hub, &name, |current| patch.apply_to(current))
}

async fn remove(
    State(items): State<Items>,
    State(hub): State<Hub>,
    ItemName(name): ItemName,
) -> Reply {
    let mut items = items.lock().unwrap();
    let item = items.remove(&name).ok_or_else(|| not_found(&name))?;
    hub.publish(WatchEvent::Deleted(item.clone()));
    Ok((StatusCode::OK, Conneg(item)))
}

/// Replaces item `name` (404 if absent) with `update(current)`, which must keep the name.
fn store(
    items: &Items,
    hub: &Hub,
    name: &str,
    update: impl FnOnce(Value) -> Result<Value, Status>,
) -> Reply {
    let mut items = items.lock().unwrap();
    let current = items.get_mut(name).ok_or_else(|| not_found(name))?;
    let updated = update(current.clone())?;
    if name_of(&updated)? != name {
        return Err(Status::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({name})",
            name_of(&updated)?
        )));
    }
    *current = updated;
    hub.publish(WatchEvent::Modified(current.clone()));
    Ok((StatusCode::OK, Conneg(current.clone())))
}
