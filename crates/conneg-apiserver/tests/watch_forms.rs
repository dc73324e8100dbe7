//! Watchers of one resource share each changed object's encoded form (`endpoints/encoded.rs`):
//! a change sent to five watchers from a resourceVersion is decoded from storage and encoded
//! once, not once per watcher; and each watcher still receives the change, in its own format.

mod support;
use support::{call, memory_storage};

use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use conneg_apiserver::declarative::JsonSchema;
use conneg_apiserver::registry::Strategy;
use conneg_apiserver::server::openapi::OpenApiInfo;
use conneg_apiserver::server::{ServerBuilder, ServerOptions, router};
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};
use tower::ServiceExt;

/// Every decode of a [`Counted`] (request bodies and stored objects alike).
static DECODES: AtomicUsize = AtomicUsize::new(0);

#[conneg_apiserver::kind(
    group = "things.example.com",
    version = "v1",
    kind = "Thing",
    namespaced
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Thing {
    #[serde(default)]
    spec: Counted,
}

/// A spec that counts its decodes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
struct Counted {
    #[serde(default)]
    note: String,
}

impl<'de> Deserialize<'de> for Counted {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Plain {
            #[serde(default)]
            note: String,
        }
        DECODES.fetch_add(1, Ordering::SeqCst);
        Plain::deserialize(d).map(|p| Counted { note: p.note })
    }
}

impl Strategy for Thing {
    type Stored = Thing;
}

const NS: &str = "/apis/things.example.com/v1/namespaces/default/things";

/// A watch of the collection from `rv`, its response body, in `accept`.
async fn watch(app: &axum::Router, rv: &str, accept: &str) -> Body {
    let req = http::Request::get(format!("{NS}?watch=true&resourceVersion={rv}"))
        .header("accept", accept)
        .body(Body::empty())
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    resp.into_body()
}

/// The next event of a watch body, decoded.
async fn next_event(body: &mut Body, cbor: bool) -> Value {
    let frame = body.frame().await.expect("an event").unwrap();
    let bytes = frame.into_data().unwrap();
    if cbor {
        conneg_cbor::value_from_slice(&bytes).unwrap()
    } else {
        serde_json::from_slice(&bytes).unwrap()
    }
}

/// Changes the thing's note and reads the event from every watch: the decodes it took.
async fn change(app: &axum::Router, note: &str, watches: &mut [(Body, bool)]) -> usize {
    let before = DECODES.load(Ordering::SeqCst);
    let (code, _) = call(
        app,
        Method::PATCH,
        &format!("{NS}/t"),
        "application/merge-patch+json",
        json!({"spec": {"note": note}}),
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    for (body, cbor) in watches.iter_mut() {
        let event = next_event(body, *cbor).await;
        assert_eq!(event["type"], "MODIFIED", "{event}");
        assert_eq!(event["object"]["spec"]["note"], note, "{event}");
    }
    DECODES.load(Ordering::SeqCst) - before
}

#[tokio::test]
async fn watchers_of_a_change_share_its_decode_and_encoding() {
    let info = OpenApiInfo {
        title: "Things",
        package: "com.example.things",
    };
    let options = ServerOptions {
        standalone: false,
        ..Default::default()
    };
    let app = router(
        ServerBuilder::new(info)
            .serve::<Thing>()
            .build(memory_storage("things.example.com"), options),
    );
    let (code, created) = call(
        &app,
        Method::POST,
        NS,
        "application/json",
        json!({"metadata": {"name": "t"}, "spec": {"note": "0"}}),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    let rv = created["metadata"]["resourceVersion"].as_str().unwrap();

    // One JSON watcher: what a change costs in decodes with one.
    let mut watches = vec![(watch(&app, rv, "application/json").await, false)];
    let one = change(&app, "1", &mut watches).await;
    // Four more, JSON and CBOR: the JSON ones take the form the first made; CBOR makes its
    // own once.
    for accept in ["application/json", "application/json", "application/cbor"] {
        watches.push((watch(&app, rv, accept).await, accept.ends_with("cbor")));
    }
    // They start from `rv`: the first change reaches them too.
    for (body, cbor) in &mut watches[1..] {
        let event = next_event(body, *cbor).await;
        assert_eq!(event["object"]["spec"]["note"], "1", "{event}");
    }
    watches.push((watch(&app, rv, "application/cbor").await, true));
    let last = watches.len() - 1;
    let event = next_event(&mut watches[last].0, true).await;
    assert_eq!(event["object"]["spec"]["note"], "1", "{event}");
    let five = change(&app, "2", &mut watches).await;
    // One more decode for the CBOR form, none per watcher.
    assert_eq!(
        five,
        one + 1,
        "decodes with 1 watcher: {one}, with 5 (2 formats): {five}"
    );
}
