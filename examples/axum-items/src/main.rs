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
//! ```

// `Status` (a Kubernetes object of ~300 bytes) is the error of error paths only.
#![allow(clippy::result_large_err)]

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use conneg::axum::Conneg;
use conneg::{NegotiateLayer, Patch, PatchType, Status, StatusReason};
use serde_json::{Value, json};

/// The store: items by `metadata.name`, so lists come out in name order.
type Items = Arc<Mutex<BTreeMap<String, Value>>>;
type Reply = Result<(StatusCode, Conneg<Value>), Status>;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    // One layer for every route: JSON (first: the answer to a request without `Accept`) and
    // CBOR; PATCH takes these three patch types (anything else: 415 with `Accept-Patch`).
    let negotiate = NegotiateLayer::new().patch_types([
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
        .fallback(|| async {
            Status::failure(
                StatusCode::NOT_FOUND,
                StatusReason::NotFound,
                "the server could not find the requested resource",
            )
        })
        .method_not_allowed_fallback(|| async {
            Status::failure(
                StatusCode::METHOD_NOT_ALLOWED,
                StatusReason::MethodNotAllowed,
                "the server does not allow this method on the requested resource",
            )
        })
        .layer(negotiate)
        .with_state(Items::default());
    let listen = std::env::args().skip_while(|a| a != "--listen").nth(1);
    let listen = listen.as_deref().unwrap_or("127.0.0.1:3000");
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await
}

fn not_found(name: &str) -> Status {
    Status::not_found("", "items", name)
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

async fn list(State(items): State<Items>) -> Conneg<Value> {
    let items = items.lock().unwrap();
    let items: Vec<&Value> = items.values().collect();
    Conneg(json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}))
}

async fn create(State(items): State<Items>, Conneg(item): Conneg<Value>) -> Reply {
    match items.lock().unwrap().entry(name_of(&item)?) {
        Entry::Occupied(e) => Err(Status::already_exists("", "items", e.key())),
        Entry::Vacant(e) => Ok((StatusCode::CREATED, Conneg(e.insert(item).clone()))),
    }
}

async fn read(State(items): State<Items>, Path(name): Path<String>) -> Reply {
    let item = items.lock().unwrap().get(&name).cloned();
    Ok((
        StatusCode::OK,
        Conneg(item.ok_or_else(|| not_found(&name))?),
    ))
}

async fn replace(
    State(items): State<Items>,
    Path(name): Path<String>,
    Conneg(item): Conneg<Value>,
) -> Reply {
    store(&items, &name, |_| Ok(item))
}

async fn patch(State(items): State<Items>, Path(name): Path<String>, patch: Patch) -> Reply {
    store(&items, &name, |current| patch.apply_to(current))
}

async fn remove(State(items): State<Items>, Path(name): Path<String>) -> Reply {
    let item = items.lock().unwrap().remove(&name);
    Ok((
        StatusCode::OK,
        Conneg(item.ok_or_else(|| not_found(&name))?),
    ))
}

/// Replaces item `name` (404 if absent) with `update(current)`, which must keep the name.
fn store(items: &Items, name: &str, update: impl FnOnce(Value) -> Result<Value, Status>) -> Reply {
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
    Ok((StatusCode::OK, Conneg(current.clone())))
}
