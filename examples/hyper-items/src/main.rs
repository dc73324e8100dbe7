//! `hyper-items`: the `axum-items` API, header for header, without axum: hyper 1's HTTP/1
//! server, a tower `service_fn` with conneg's `NegotiateLayer` in front (conneg built with
//! `default-features = false`), and a hand-written router.
//!
//! ```sh
//! cargo run -p hyper-items -- --listen 127.0.0.1:3000
//! curl -si localhost:3000/items -H 'content-type: application/json' -d '{"metadata":{"name":"a"}}'
//! curl -sN 'localhost:3000/items?watch=1' -H 'accept: application/cbor' | xxd
//! ```
//!
//! `GET /items?watch=true` (or `watch=1`, optional `timeoutSeconds`) streams every later
//! create, change and delete from a [`WatchHub`] (JSON lines or an `application/cbor-seq` CBOR
//! Sequence); `GET /items` streams the list item by item ([`StreamingList`]). A watch that asks for `application/cbor`
//! (as client-go does) gets `application/cbor-seq`; `application/cbor-seq` itself in `Accept`
//! is a 406 here, as in Kubernetes (`NegotiateLayer::streaming(true)` would accept it, but also
//! lists the stream types in every 406). Responses are
//! therefore a boxed body: a full one, a watch or a list.

// `Status` (a Kubernetes object of ~300 bytes) is the error of error paths only.
#![allow(clippy::result_large_err)]

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use conneg::BoxError;
use conneg::watch::{WatchEvent, WatchHub, WatchResponse};
use conneg::{
    NegotiateLayer, Negotiated, Patch, PatchType, Profile, Status, StatusReason, StreamingList,
    read_body,
};
use http::header::{ALLOW, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tower::{ServiceBuilder, ServiceExt, service_fn};

/// The store: items by `metadata.name`, so lists come out in name order.
type Items = Arc<Mutex<BTreeMap<String, Value>>>;
/// Every create, change and delete, for `GET /items?watch=true`.
type Hub = WatchHub<Value>;
/// A response body: a whole value, a watch stream or a streamed list.
type Body = UnsyncBoxBody<Bytes, BoxError>;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let items = Items::default();
    let hub = Hub::new();
    let service = ServiceBuilder::new()
        .layer(
            NegotiateLayer::new()
                .profile(Profile::Kubernetes)
                .patch_types([
                    PatchType::JsonPatch,
                    PatchType::MergePatch,
                    PatchType::ApplyCbor,
                ]),
        )
        .service(service_fn(move |req| {
            handle(items.clone(), hub.clone(), req)
        }));
    let listen = std::env::args().skip_while(|a| a != "--listen").nth(1);
    let listen = listen.as_deref().unwrap_or("127.0.0.1:3000");
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let service = service.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                // Like axum's router: `Allow` on every answer to a method the path does not
                // take, including the layer's own 415 or 406.
                let allow = route(req.uri().path())
                    .map(|(_, allow)| allow)
                    .filter(|allow| !allow.split(',').any(|m| m == req.method().as_str()));
                let response = service.clone().oneshot(req);
                async move {
                    let mut response = response.await?;
                    if let Some(allow) = allow {
                        response
                            .headers_mut()
                            .insert(ALLOW, HeaderValue::from_static(allow));
                    }
                    Ok::<_, Infallible>(response)
                }
            });
            let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            if let Err(err) = connection.await {
                eprintln!("connection error: {err}");
            }
        });
    }
}

/// The route of a path: the item name (for `/items/{name}`) and the methods it takes.
fn route(path: &str) -> Option<(Option<String>, &'static str)> {
    match path.strip_prefix("/items") {
        Some("") => Some((None, "GET,HEAD,POST")),
        Some(rest) => {
            let name = rest
                .strip_prefix('/')
                .filter(|n| !n.is_empty() && !n.contains('/'))?;
            // Percent-decoded, as axum's `Path` does.
            let name = percent_encoding::percent_decode_str(name)
                .decode_utf8()
                .ok()?;
            Some((Some(name.into_owned()), "GET,HEAD,PUT,DELETE,PATCH"))
        }
        None => None,
    }
}

/// Routes the request, then encodes the answer with the negotiated codec.
async fn handle(
    items: Items,
    hub: Hub,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let negotiated = Negotiated::from_extensions(req.extensions())
        .expect("NegotiateLayer runs first")
        .clone();
    if matches!(*req.method(), Method::GET | Method::HEAD) && req.uri().path() == "/items" {
        return Ok(list_or_watch(&items, &hub, &negotiated, req.uri().query()));
    }
    let reply = match route(req.uri().path()) {
        Some((name, _)) => serve(&items, &hub, &negotiated, req, name).await,
        None => Err(Status::failure(
            StatusCode::NOT_FOUND,
            StatusReason::NotFound,
            "the server could not find the requested resource",
        )),
    };
    let response = match reply {
        Ok((code, item)) => negotiated.response(code, &item),
        Err(status) => negotiated.error_response(&status),
    };
    Ok(response.map(|full| full.map_err(|never| match never {}).boxed_unsync()))
}

/// `GET /items`: the list, streamed item by item; with `watch=true|1`, a watch instead.
fn list_or_watch(
    items: &Items,
    hub: &Hub,
    negotiated: &Negotiated,
    query: Option<&str>,
) -> Response<Body> {
    let param = |key: &str| {
        query?
            .split('&')
            .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))
    };
    if matches!(param("watch"), Some("true" | "1")) {
        let timeout = param("timeoutSeconds").and_then(|s| s.parse().ok());
        return WatchResponse::new(negotiated)
            .timeout_seconds(timeout)
            .subscribe(hub)
            .map(|body| body.map_err(|never| match never {}).boxed_unsync());
    }
    // A snapshot of the items (not of their encoding): the body is encoded as it is sent.
    let snapshot: Vec<Value> = items.lock().unwrap().values().cloned().collect();
    StreamingList::new("List", "v1", json!({}))
        .response(negotiated, snapshot)
        .map(|body| body.map_err(BoxError::from).boxed_unsync())
}

async fn serve(
    items: &Items,
    hub: &Hub,
    negotiated: &Negotiated,
    req: Request<Incoming>,
    name: Option<String>,
) -> Result<(StatusCode, Value), Status> {
    let (parts, body) = req.into_parts();
    let not_found = |name: &str| Status::not_found("", "items", name);
    match (parts.method, name) {
        (Method::POST, None) => {
            let item: Value = negotiated.decode_body(body).await?.value;
            let name = name_of(&item)?;
            let mut items = items.lock().unwrap();
            if items.contains_key(&name) {
                return Err(Status::already_exists("", "items", &name));
            }
            items.insert(name, item.clone());
            // Published under the store's lock, so watchers see writes in their order.
            hub.publish(WatchEvent::Added(item.clone()));
            Ok((StatusCode::CREATED, item))
        }
        (Method::GET | Method::HEAD, Some(name)) => {
            let item = items.lock().unwrap().get(&name).cloned();
            Ok((StatusCode::OK, item.ok_or_else(|| not_found(&name))?))
        }
        (Method::DELETE, Some(name)) => {
            let mut items = items.lock().unwrap();
            let item = items.remove(&name).ok_or_else(|| not_found(&name))?;
            hub.publish(WatchEvent::Deleted(item.clone()));
            Ok((StatusCode::OK, item))
        }
        (method @ (Method::PUT | Method::PATCH), Some(name)) => {
            // The body first (400, 413), then the item (404), then the update (400, 422).
            let update = if method == Method::PUT {
                Err(negotiated.decode_body::<Value, _>(body).await?.value)
            } else {
                let kind = negotiated
                    .patch_type()
                    .expect("the layer admits only patch types");
                Ok(Patch {
                    kind,
                    body: read_body(body, negotiated.body_limit()).await?,
                })
            };
            let mut items = items.lock().unwrap();
            let current = items.get_mut(&name).ok_or_else(|| not_found(&name))?;
            let updated = match update {
                Err(replacement) => replacement,
                Ok(patch) => patch.apply_to(current.clone())?,
            };
            let updated_name = name_of(&updated)?;
            if updated_name != name {
                return Err(Status::bad_request(format!(
                    "the name of the object ({updated_name}) does not match the name on the URL ({name})"
                )));
            }
            *current = updated;
            hub.publish(WatchEvent::Modified(current.clone()));
            Ok((StatusCode::OK, current.clone()))
        }
        _ => Err(Status::failure(
            StatusCode::METHOD_NOT_ALLOWED,
            StatusReason::MethodNotAllowed,
            "the server does not allow this method on the requested resource",
        )),
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
