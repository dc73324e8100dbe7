//! The client layer over a plain `tower::service_fn` (no network): it is generic over the
//! service, re-encodes the value for the retry, and leaves a caller's `Accept` alone.
#![cfg(feature = "client")]

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use conneg::client::{ClientBody, ContentNegotiationLayer, Exchange, read_response};
use conneg::{Codec, Status};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use tower::{ServiceBuilder, ServiceExt, service_fn};

type Log = Arc<Mutex<Vec<(String, String, Bytes)>>>;

/// JSON only, and a 415 without `Accept` for anything else (Kubernetes' behaviour).
fn json_only(
    log: Log,
) -> impl tower::Service<
    Request<Full<Bytes>>,
    Response = Response<Full<Bytes>>,
    Error = Infallible,
    Future = impl Send,
> + Clone
+ Send
+ 'static {
    service_fn(move |req: Request<Full<Bytes>>| {
        let log = log.clone();
        async move {
            let h = |n: &str| {
                req.headers()
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned()
            };
            let (ct, accept) = (h("content-type"), h("accept"));
            let body = req.into_body().collect().await.unwrap().to_bytes();
            log.lock().unwrap().push((ct.clone(), accept, body.clone()));
            let res = if ct == "application/json" || body.is_empty() {
                Response::builder()
                    .status(StatusCode::CREATED)
                    .header("content-type", "application/json")
                    .body(Full::new(if body.is_empty() {
                        Bytes::from_static(b"{}")
                    } else {
                        body
                    }))
                    .unwrap()
            } else {
                Status::unsupported_media_type("application/json").to_response(&Codec::Json, false)
            };
            Ok::<_, Infallible>(res)
        }
    })
}

#[tokio::test]
async fn retry_reencodes_the_value_over_any_service() {
    let log: Log = Arc::default();
    let svc = ServiceBuilder::new()
        .layer(ContentNegotiationLayer::new())
        .service(json_only(log.clone()));
    let value = json!({"metadata": {"name": "a", "labels": {"k": "v"}}, "n": 1.5});

    let req = Request::post("/apis/g/v1/namespaces/ns/things")
        .body(ClientBody::object(&value).unwrap())
        .unwrap();
    let res = svc.clone().oneshot(req).await.unwrap();
    let x = Exchange::of(&res).unwrap().clone();
    assert_eq!(x.key.server, "");
    assert_eq!(x.key.resource, "/apis/g/v1/namespaces/ns/things");
    assert_eq!(x.fallback.as_ref().unwrap().to, "application/json");
    let echoed: Value = read_response(res).await.unwrap();
    assert_eq!(echoed, value);

    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    // First: self-described CBOR of the value. Then: JSON of the same value, not the CBOR bytes.
    assert_eq!(seen[0].0, "application/cbor");
    assert!(conneg_cbor::recognizes(&seen[0].2));
    let from_cbor: Value = conneg_cbor::from_slice(&seen[0].2).unwrap();
    assert_eq!(from_cbor, value);
    assert_eq!(seen[1].0, "application/json");
    assert_eq!(serde_json::from_slice::<Value>(&seen[1].2).unwrap(), value);

    // The same collection, another object: straight to JSON, and a caller's Accept is kept.
    let req = Request::post("/apis/g/v1/namespaces/ns/things")
        .header("accept", "application/json")
        .body(ClientBody::object(&json!({"metadata": {"name": "b"}})).unwrap())
        .unwrap();
    let res = svc.clone().oneshot(req).await.unwrap();
    assert!(Exchange::of(&res).unwrap().remembered);
    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    assert_eq!(
        (seen[2].0.as_str(), seen[2].1.as_str()),
        ("application/json", "application/json")
    );

    // No body: no Content-Type, no retry, the layer's Accept.
    let req = Request::get("/apis/g/v1/namespaces/ns/things/a")
        .body(ClientBody::Empty)
        .unwrap();
    let res = svc.oneshot(req).await.unwrap();
    assert_eq!(Exchange::of(&res).unwrap().content_type, None);
    let seen = log.lock().unwrap().clone();
    assert_eq!(
        (seen[3].0.as_str(), seen[3].1.as_str()),
        ("", "application/cbor;q=1, application/json;q=0.9")
    );
}
