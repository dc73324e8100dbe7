//! A list's response streamed item by item (`endpoints/list_body.rs`) is the list as a whole
//! encodes, whatever the page: `limit` and `continue`, selectors, empty lists, JSON and CBOR;
//! a list larger than one frame is sent chunked; a stored object that cannot be read is a 500
//! when it is in the first frame and a truncated body after it.

mod support;
use support::{call, memory_storage};

use axum::body::Body;
use conneg::Codec;
use conneg_apiserver::declarative::JsonSchema;
use conneg_apiserver::registry::Strategy;
use conneg_apiserver::resource::List;
use conneg_apiserver::server::openapi::OpenApiInfo;
use conneg_apiserver::server::{ServerBuilder, ServerOptions, router};
use conneg_apiserver::storage::{Storage, Store};
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tower::ServiceExt;

#[conneg_apiserver::kind(
    group = "things.example.com",
    version = "v1",
    kind = "Thing",
    namespaced
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Thing {
    #[serde(default)]
    spec: ThingSpec,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
struct ThingSpec {
    #[serde(default)]
    note: String,
}

impl Strategy for Thing {
    type Stored = Thing;
}

const NS: &str = "/apis/things.example.com/v1/namespaces/default/things";
/// Enough ~1 KB objects for several 64 KiB frames.
const COUNT: usize = 150;

/// A server with `COUNT` things in `default` (every third labelled `third=yes`), and its store.
async fn app() -> (axum::Router, Store) {
    let info = OpenApiInfo {
        title: "Things",
        package: "com.example.things",
    };
    let options = ServerOptions {
        standalone: false,
        ..Default::default()
    };
    let storage = memory_storage("things.example.com");
    let store = storage.store.clone();
    let app = router(
        ServerBuilder::new(info)
            .serve::<Thing>()
            .build(storage, options),
    );
    for i in 0..COUNT {
        let labels = if i % 3 == 0 {
            json!({"third": "yes"})
        } else {
            json!({})
        };
        let thing = json!({
            "metadata": {"name": format!("thing-{i:03}"), "labels": labels},
            "spec": {"note": "n".repeat(1000)},
        });
        let (code, _) = call(&app, Method::POST, NS, "application/json", thing).await;
        assert_eq!(code, StatusCode::CREATED);
    }
    (app, store)
}

/// GET `uri` in `accept`, answered 200: whether the body had an exact length, and the body
/// (or the error that ended it).
async fn get(app: &axum::Router, uri: &str, accept: &str) -> (bool, Result<bytes::Bytes, String>) {
    let req = http::Request::get(uri)
        .header("accept", accept)
        .body(Body::empty())
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "{uri}");
    let exact = http_body::Body::size_hint(resp.body()).exact().is_some();
    let body = resp.into_body().collect().await;
    (exact, body.map(|c| c.to_bytes()).map_err(|e| e.to_string()))
}

/// The list `bytes` decode to, encoded whole again by `codec` (what the endpoint sent before
/// lists were streamed).
fn whole(codec: &Codec, bytes: &[u8]) -> (Vec<u8>, List<Thing>) {
    let list: List<Thing> = codec
        .decode(bytes, conneg::FieldValidation::Strict)
        .unwrap()
        .value;
    let mut out = Vec::new();
    codec.encode(&list, &mut out).unwrap();
    (out, list)
}

#[tokio::test]
async fn a_streamed_list_is_the_whole_lists_bytes() {
    let (app, _) = app().await;
    for (accept, codec) in [
        ("application/json", Codec::Json),
        ("application/cbor", Codec::Cbor),
    ] {
        // Everything, in several frames, sent chunked.
        let (exact, body) = get(&app, NS, accept).await;
        let body = body.unwrap();
        assert!(
            !exact && body.len() > 2 * 64 * 1024,
            "{accept}: {}",
            body.len()
        );
        let (again, list) = whole(&codec, &body);
        assert_eq!(body, again, "{accept}");
        assert_eq!(list.items.len(), COUNT);
        assert_eq!(list.items[1].spec.note.len(), 1000);

        // Pages, to the end.
        let mut uri = format!("{NS}?limit=40");
        let mut seen = 0;
        loop {
            let body = get(&app, &uri, accept).await.1.unwrap();
            let (again, page) = whole(&codec, &body);
            assert_eq!(body, again, "{accept} {uri}");
            seen += page.items.len();
            if page.metadata.continue_.is_empty() {
                break;
            }
            uri = format!("{NS}?limit=40&continue={}", page.metadata.continue_);
        }
        assert_eq!(seen, COUNT);

        // A selector, a selector matching nothing, an empty namespace.
        for (uri, expect) in [
            (format!("{NS}?labelSelector=third%3Dyes"), COUNT / 3),
            (format!("{NS}?labelSelector=third%3Dno"), 0),
            (
                "/apis/things.example.com/v1/namespaces/empty/things".to_owned(),
                0,
            ),
        ] {
            let body = get(&app, &uri, accept).await.1.unwrap();
            let (again, list) = whole(&codec, &body);
            assert_eq!(body, again, "{accept} {uri}");
            assert_eq!(list.items.len(), expect, "{accept} {uri}");
        }
    }
    // A Table is not a list of the kind: answered whole, as before.
    let table = get(&app, NS, "application/json;as=Table;v=v1;g=meta.k8s.io").await;
    let table: serde_json::Value = serde_json::from_slice(&table.1.unwrap()).unwrap();
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["rows"].as_array().unwrap().len(), COUNT);
}

#[tokio::test]
async fn a_stored_object_that_cannot_be_read_fails_the_list_as_far_as_it_got() {
    let (app, store) = app().await;
    let key = |i: usize| format!("/registry/things.example.com/things/default/thing-{i:03}");
    let Some(kv) = store.get(&key(140)).await.unwrap() else {
        panic!("no {}", key(140));
    };
    store
        .update(&key(140), "not an object".into(), kv.mod_revision)
        .await
        .unwrap();
    // Past the first frame: the 200 is sent, the body ends early with an error.
    let (exact, body) = get(&app, NS, "application/json").await;
    assert!(!exact);
    assert!(body.is_err(), "a truncated body, never a complete list");
    // In the first frame: a 500 with its Status.
    let kv = store.get(&key(2)).await.unwrap().unwrap();
    store
        .update(&key(2), "not an object".into(), kv.mod_revision)
        .await
        .unwrap();
    let req = http::Request::get(NS)
        .header("accept", "application/json")
        .body(Body::empty())
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
}
