//! What a request asks, read as Kubernetes reads it and answered as HTTP requires: a method a
//! resource does not serve is a 405 with `Allow` (RFC 9110 §15.5.6), and the boolean options
//! of the query are converted as apimachinery converts them (`?watch=null` watches).

mod support;
use support::{call, memory_storage};

use axum::body::Body;
use conneg_apiserver::declarative::JsonSchema;
use conneg_apiserver::registry::Strategy;
use conneg_apiserver::server::openapi::OpenApiInfo;
use conneg_apiserver::server::{ServerBuilder, ServerOptions, router};
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use serde::{Deserialize, Serialize};
use tower::ServiceExt;

#[conneg_apiserver::kind(
    group = "tools.example.com",
    version = "v1",
    kind = "Tool",
    namespaced,
    status
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Tool {}

impl Strategy for Tool {
    type Stored = Tool;
}

fn app() -> axum::Router {
    let info = OpenApiInfo {
        title: "Tools",
        package: "com.example.tools",
    };
    let options = ServerOptions {
        standalone: false,
        ..Default::default()
    };
    router(
        ServerBuilder::new(info)
            .serve::<Tool>()
            .build(memory_storage("tools.example.com"), options),
    )
}

const NS: &str = "/apis/tools.example.com/v1/namespaces/default/tools";

/// The answer's status and headers (the body is not read: a watch does not end).
async fn head(app: &axum::Router, method: Method, uri: &str) -> (StatusCode, http::HeaderMap) {
    let req = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("accept", "application/json")
        .body(Body::empty())
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    (resp.status(), resp.headers().clone())
}

#[tokio::test]
async fn a_method_not_served_is_a_405_that_lists_what_is() {
    let app = app();
    let all = "/apis/tools.example.com/v1/tools";
    for (method, uri, allow) in [
        (Method::TRACE, NS.to_owned(), "GET, POST, DELETE"),
        (Method::PUT, NS.to_owned(), "GET, POST, DELETE"),
        (Method::POST, all.to_owned(), "GET"),
        (Method::POST, format!("{NS}/t"), "GET, PUT, PATCH, DELETE"),
        (Method::DELETE, format!("{NS}/t/status"), "GET, PUT, PATCH"),
        (Method::OPTIONS, format!("{NS}/t/status"), "GET, PUT, PATCH"),
    ] {
        let (code, headers) = head(&app, method.clone(), &uri).await;
        assert_eq!(code, StatusCode::METHOD_NOT_ALLOWED, "{method} {uri}");
        assert_eq!(headers["allow"], allow, "{method} {uri}");
    }
    // What is listed is served: a GET of the collection is a list.
    assert_eq!(head(&app, Method::GET, NS).await.0, StatusCode::OK);
}

/// The first JSON value a GET of `uri` answers with (a watch's first event, or a list).
async fn first_value(app: &axum::Router, uri: &str) -> serde_json::Value {
    let req = http::Request::get(uri)
        .header("accept", "application/json")
        .body(Body::empty())
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "{uri}");
    let mut body = resp.into_body();
    let frame = tokio::time::timeout(std::time::Duration::from_secs(10), body.frame())
        .await
        .expect("a first frame")
        .expect("a frame")
        .unwrap();
    let bytes = frame.into_data().unwrap();
    let line = bytes.split(|b| *b == b'\n').next().unwrap();
    serde_json::from_slice(line).unwrap()
}

#[tokio::test]
async fn boolean_options_are_read_as_apimachinery_reads_them() {
    let app = app();
    let (code, _) = call(
        &app,
        Method::POST,
        NS,
        "application/json",
        serde_json::json!({"metadata": {"name": "t"}}),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    // Anything but `0` and `false` (any case) is true: `null`, empty, a bare name; the
    // first value counts.
    for q in [
        "watch=null",
        "watch=",
        "watch",
        "watch=yes&watch=false",
        "watch=%74",
    ] {
        let first = first_value(&app, &format!("{NS}?{q}")).await;
        assert_eq!(first["type"], "ADDED", "{q}: {first}");
    }
    for q in [
        "watch=0",
        "watch=FALSE",
        "watch=false&watch=true",
        "watch=%30",
    ] {
        let first = first_value(&app, &format!("{NS}?{q}")).await;
        assert_eq!(first["kind"], "ToolList", "{q}: {first}");
    }
}
