//! The client layer against a tiny hyper server that answers like Kubernetes does today: a 415
//! for CBOR bodies with **no** `Accept` header, JSON responses whatever the client accepts.
//! Other routes answer 415 *with* `Accept`/`Accept-Patch`, to show the client reads them.
#![cfg(feature = "client")]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use conneg::client::{Client, ContentNegotiationLayer, Error, FallbackMemory, Gates};
use conneg::watch::WatchEvent;
use conneg::{Codec, PatchType, Status};
use futures_util::StreamExt;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// One request as the server saw it.
#[derive(Clone, Debug, PartialEq)]
struct Seen {
    method: String,
    path: String,
    content_type: String,
    accept: String,
    code: u16,
}

type Log = Arc<Mutex<Vec<Seen>>>;

fn status_json(status: &Status) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status.code())
        .header("content-type", "application/json")
        .body(Full::new(status.encode(&Codec::Json, false)))
        .unwrap()
}

fn json_response(code: StatusCode, v: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(serde_json::to_vec(v).unwrap())))
        .unwrap()
}

fn header(req: &Request<Incoming>, name: &str) -> String {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

async fn handle(req: Request<Incoming>) -> Response<Full<Bytes>> {
    let ct = header(&req, "content-type");
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or("").to_owned();
    let body = req.into_body().collect().await.unwrap().to_bytes();
    let cbor = ct.contains("cbor");
    let unsupported = Status::unsupported_media_type("application/json");

    // /k8s/...: Kubernetes today — no Accept on the 415, JSON only.
    if path.starts_with("/apis/k8s/") {
        if method == Method::GET && query.contains("watch=true") {
            let mut out = Vec::new();
            WatchEvent::Added(json!({"metadata": {"name": "w"}}))
                .encode(&Codec::Json, &mut out)
                .unwrap();
            out.push(b'\n');
            return Response::builder()
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(out)))
                .unwrap();
        }
        if method == Method::GET && path.ends_with("/missing") {
            return status_json(&Status::not_found("k8s", "things", "missing"));
        }
        if method == Method::GET {
            return json_response(StatusCode::OK, &json!({"metadata": {"name": "got"}}));
        }
        if cbor {
            return status_json(&unsupported);
        }
        let v: Value = serde_json::from_slice(&body).unwrap();
        let code = if method == Method::POST {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        return json_response(code, &v);
    }

    // /cbor-only/...: takes CBOR only and says so; answers in CBOR.
    if path.starts_with("/apis/cbor-only/") {
        if !cbor {
            let mut r = status_json(&Status::unsupported_media_type("application/cbor"));
            r.headers_mut()
                .insert("accept", "application/cbor".parse().unwrap());
            return r;
        }
        let v: Value = conneg_cbor::from_slice(&body).unwrap();
        return Response::builder()
            .status(StatusCode::CREATED)
            .header("content-type", "application/cbor")
            .body(Full::new(Codec::Cbor.to_bytes(&v).unwrap()))
            .unwrap();
    }

    // /protobuf-only/...: offers a type the client cannot produce.
    let mut r = status_json(&unsupported);
    r.headers_mut().insert(
        "accept",
        "application/vnd.kubernetes.protobuf".parse().unwrap(),
    );
    r
}

async fn server() -> (SocketAddr, Log) {
    let log: Log = Arc::default();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let l = log.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let log = l.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req: Request<Incoming>| {
                    let log = log.clone();
                    async move {
                        let (method, path) =
                            (req.method().to_string(), req.uri().path().to_owned());
                        let (content_type, accept) =
                            (header(&req, "content-type"), header(&req, "accept"));
                        let res = handle(req).await;
                        log.lock().unwrap().push(Seen {
                            method,
                            path,
                            content_type,
                            accept,
                            code: res.status().as_u16(),
                        });
                        Ok::<_, Infallible>(res)
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    (addr, log)
}

fn take(log: &Log) -> Vec<(String, String, u16)> {
    log.lock()
        .unwrap()
        .drain(..)
        .map(|s| (s.method, s.content_type, s.code))
        .collect()
}

fn row(m: &str, ct: &str, code: u16) -> (String, String, u16) {
    (m.to_owned(), ct.to_owned(), code)
}

const THINGS: &str = "/apis/k8s/v1/namespaces/ns/things";

#[tokio::test]
async fn kubernetes_415_without_accept_falls_back_to_json_per_resource() {
    let (addr, log) = server().await;
    let client = Client::new(&format!("http://{addr}")).unwrap();

    // First create: CBOR, 415 (no Accept), retried once in JSON, transparently.
    let reply = client
        .request::<Value>(
            Method::POST,
            THINGS,
            conneg::client::ClientBody::object(&json!({"metadata": {"name": "a"}})).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(reply.value["metadata"]["name"], "a");
    let fb = reply.exchange.fallback.clone().expect("a fallback");
    assert_eq!(
        (fb.from.as_str(), fb.to.as_str()),
        ("application/cbor", "application/json")
    );
    assert_eq!(fb.offered, None);
    assert_eq!(reply.exchange.content_type, Some("application/json"));
    assert!(!reply.exchange.remembered);
    let seen = log.lock().unwrap().clone();
    assert_eq!(
        seen[0].accept,
        "application/cbor;q=1, application/json;q=0.9"
    );
    assert_eq!(
        take(&log),
        [
            row("POST", "application/cbor", 415),
            row("POST", "application/json", 201)
        ]
    );

    // Later creates of other objects go straight to JSON.
    for name in ["b", "c", "d"] {
        let v: Value = client
            .create(THINGS, &json!({"metadata": {"name": name}}))
            .await
            .unwrap();
        assert_eq!(v["metadata"]["name"], name);
    }
    assert_eq!(take(&log), vec![row("POST", "application/json", 201); 3]);

    // Another verb on the same resource, and the same verb on another resource: CBOR first.
    let v: Value = client
        .update(&format!("{THINGS}/a"), &json!({"metadata": {"name": "a"}}))
        .await
        .unwrap();
    assert_eq!(v["metadata"]["name"], "a");
    let _: Value = client
        .create("/apis/k8s/v1/namespaces/ns/others", &json!({}))
        .await
        .unwrap();
    assert_eq!(
        take(&log),
        [
            row("PUT", "application/cbor", 415),
            row("PUT", "application/json", 200),
            row("POST", "application/cbor", 415),
            row("POST", "application/json", 201),
        ]
    );

    // Apply: apply-patch+cbor, then apply-patch+yaml (with JSON in it), remembered too.
    for _ in 0..2 {
        let v: Value = client
            .apply(
                &format!("{THINGS}/a"),
                &json!({"metadata": {"name": "a"}}),
                "test",
                true,
            )
            .await
            .unwrap();
        assert_eq!(v["metadata"]["name"], "a");
    }
    assert_eq!(
        take(&log),
        [
            row("PATCH", "application/apply-patch+cbor", 415),
            row("PATCH", "application/apply-patch+yaml", 200),
            row("PATCH", "application/apply-patch+yaml", 200),
        ]
    );

    // Responses are decoded whatever the server chose (JSON here); errors carry the Status.
    let v: Value = client.get(&format!("{THINGS}/x")).await.unwrap();
    assert_eq!(v["metadata"]["name"], "got");
    let err = client
        .get::<Value>(&format!("{THINGS}/missing"))
        .await
        .unwrap_err();
    let status = err.status().expect("a Status");
    assert_eq!(status.code, 404);
    assert_eq!(err.to_string(), r#"things.k8s "missing" not found"#);

    // Watch: JSON lines decoded into typed events.
    let mut events = client.watch::<Value>(THINGS).await.unwrap();
    let first = events.next().await.unwrap().unwrap();
    assert_eq!(first, WatchEvent::Added(json!({"metadata": {"name": "w"}})));
    assert!(events.next().await.is_none());
}

#[tokio::test]
async fn the_415_accept_header_is_followed_and_gates_are_honoured() {
    let (addr, log) = server().await;
    let url = format!("http://{addr}");

    // Allow on, prefer off: JSON first, but the 415 offers only CBOR, which is allowed.
    let client = Client::builder(&url)
        .unwrap()
        .layer(ContentNegotiationLayer::new().gates(Gates::new().prefer_cbor(false)))
        .build();
    let v: Value = client
        .create("/apis/cbor-only/v1/things", &json!({"n": 1}))
        .await
        .unwrap();
    assert_eq!(v["n"], 1);
    assert_eq!(
        take(&log),
        [
            row("POST", "application/json", 415),
            row("POST", "application/cbor", 201)
        ]
    );

    // Allow off: nothing CBOR is ever sent or accepted, so the 415 stands.
    let client = Client::builder(&url)
        .unwrap()
        .layer(ContentNegotiationLayer::new().gates(Gates::json_only()))
        .build();
    let err = client
        .create("/apis/cbor-only/v1/things", &json!({"n": 1}))
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.code), Some(415));
    let _: Value = client.create(THINGS, &json!({"n": 2})).await.unwrap();
    let seen: Vec<Seen> = log.lock().unwrap().drain(..).collect();
    assert_eq!(seen.len(), 2);
    assert!(
        seen.iter().all(|s| s.content_type == "application/json"),
        "{seen:?}"
    );
    assert!(
        seen.iter().all(|s| s.accept == "application/json"),
        "{seen:?}"
    );

    // The 415 offers something we cannot produce: no retry, the 415 is the answer.
    let client = Client::new(&url).unwrap();
    let err = client
        .create("/apis/protobuf-only/v1/things", &json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.code), Some(415));
    assert_eq!(take(&log), [row("POST", "application/cbor", 415)]);

    // Merge patches are JSON only and never retried.
    let _: Value = client
        .patch(
            &format!("{THINGS}/a"),
            PatchType::MergePatch,
            json!({"a": 1}),
        )
        .await
        .unwrap();
    assert_eq!(
        take(&log),
        [row("PATCH", "application/merge-patch+json", 200)]
    );
}

#[tokio::test]
async fn memory_is_shared_and_expires() {
    let (addr, log) = server().await;
    let url = format!("http://{addr}");

    // Two clients sharing one memory: the second one never sees the 415.
    let memory = FallbackMemory::new();
    let layer = ContentNegotiationLayer::new().memory(memory.clone());
    let a = Client::builder(&url).unwrap().layer(layer.clone()).build();
    let b = Client::builder(&url).unwrap().layer(layer).build();
    let _: Value = a.create(THINGS, &json!({})).await.unwrap();
    let _: Value = b.create(THINGS, &json!({})).await.unwrap();
    assert_eq!(
        take(&log),
        [
            row("POST", "application/cbor", 415),
            row("POST", "application/json", 201),
            row("POST", "application/json", 201),
        ]
    );
    assert_eq!(memory.entries().len(), 1);
    assert_eq!(
        memory.entries()[0].0.resource,
        "/apis/k8s/v1/namespaces/ns/things"
    );

    // A memory whose entries expire at once: every request tries CBOR again.
    let c = Client::builder(&url)
        .unwrap()
        .layer(ContentNegotiationLayer::new().memory(FallbackMemory::with_ttl(Duration::ZERO)))
        .build();
    for _ in 0..2 {
        let _: Value = c.create(THINGS, &json!({})).await.unwrap();
    }
    assert_eq!(
        take(&log),
        [
            row("POST", "application/cbor", 415),
            row("POST", "application/json", 201),
            row("POST", "application/cbor", 415),
            row("POST", "application/json", 201),
        ]
    );
}

#[tokio::test]
async fn transport_errors_are_not_statuses() {
    // Nothing listens on a port we just freed.
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let client = Client::new(&format!("http://{addr}")).unwrap();
    let err = client.get::<Value>("/x").await.unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    assert!(err.status().is_none());
}
