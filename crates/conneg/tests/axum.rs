//! axum integration: extractors and responses through a real `Router`.
#![cfg(feature = "axum")]

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post};
use bytes::Bytes;
use conneg::axum::Conneg;
use conneg::{NegotiateLayer, Negotiated, Patch, PatchType, Status};
use http::header::{ACCEPT, CONTENT_TYPE, VARY, WARNING};
use http_body_util::BodyExt;
use serde::{Deserialize, Serialize};
use tower::ServiceExt;

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Item {
    name: String,
}

async fn create(Conneg(item): Conneg<Item>) -> Result<(StatusCode, Conneg<Item>), Status> {
    if item.name == "taken" {
        return Err(Status::already_exists("example.com", "items", &item.name));
    }
    Ok((StatusCode::CREATED, Conneg(item)))
}

async fn read(negotiated: Negotiated) -> Response {
    negotiated
        .response(StatusCode::OK, &Item { name: "a".into() })
        .into_response()
}

async fn plain() -> Conneg<Item> {
    Conneg(Item {
        name: "plain".into(),
    })
}

async fn apply(patch: Patch) -> Result<Conneg<serde_json::Value>, Status> {
    let value = patch.to_json_value()?;
    Ok(Conneg(
        serde_json::json!({ "kind": patch.kind.media_type(), "patch": value }),
    ))
}

fn app() -> Router {
    Router::new()
        .route("/items", post(create).get(plain))
        .route("/items/a", get(read))
        .route(
            "/items/p",
            patch(apply).layer(
                NegotiateLayer::new()
                    .profile(conneg::Profile::Kubernetes)
                    .patch_types([PatchType::MergePatch, PatchType::ApplyCbor]),
            ),
        )
        .layer(NegotiateLayer::new().profile(conneg::Profile::Kubernetes))
}

async fn send(router: Router, req: Request<Body>) -> (http::response::Parts, Bytes) {
    let response = router.oneshot(req).await.unwrap();
    let (parts, body) = response.into_parts();
    (parts, body.collect().await.unwrap().to_bytes())
}

fn req(method: &str, uri: &str, headers: &[(&str, &str)], body: impl Into<Body>) -> Request<Body> {
    let mut b = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(body.into()).unwrap()
}

#[tokio::test]
async fn conneg_round_trip_json_in_cbor_out_with_status_tuple() {
    let (parts, body) = send(
        app(),
        req(
            "POST",
            "/items",
            &[
                ("content-type", "application/json"),
                ("accept", "application/cbor, */*"),
            ],
            r#"{"name":"x"}"#,
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::CREATED);
    assert_eq!(parts.headers[CONTENT_TYPE], "application/cbor");
    assert_eq!(parts.headers[VARY], "Accept");
    let item: Item = conneg_cbor::from_slice(&body).unwrap();
    assert_eq!(item.name, "x");
}

#[tokio::test]
async fn deferred_response_without_status_is_200() {
    let (parts, body) = send(app(), req("GET", "/items", &[], Body::empty())).await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(parts.headers[CONTENT_TYPE], "application/json");
    assert_eq!(body, r#"{"name":"plain"}"#);
}

#[tokio::test]
async fn status_errors_follow_accept() {
    let body = r#"{"name":"taken"}"#;
    let (parts, json) = send(app(), req("POST", "/items", &[], body)).await;
    assert_eq!(parts.status, StatusCode::CONFLICT);
    assert_eq!(parts.headers[CONTENT_TYPE], "application/json");
    let status: Status = serde_json::from_slice(&json).unwrap();
    assert_eq!(
        status.message,
        r#"items.example.com "taken" already exists"#
    );

    let (parts, cbor) = send(
        app(),
        req("POST", "/items", &[("accept", "application/cbor")], body),
    )
    .await;
    assert_eq!(parts.status, StatusCode::CONFLICT);
    assert_eq!(parts.headers[CONTENT_TYPE], "application/cbor");
    let value: serde_json::Value = conneg_cbor::from_slice(&cbor).unwrap();
    assert_eq!(value["reason"], "AlreadyExists");
    assert_eq!(value["details"]["name"], "taken");
}

#[tokio::test]
async fn extractor_rejections_are_negotiated_statuses() {
    // Malformed CBOR body, client accepts CBOR: 400 as CBOR.
    let (parts, body) = send(
        app(),
        req(
            "POST",
            "/items",
            &[
                ("content-type", "application/cbor"),
                ("accept", "application/cbor"),
            ],
            vec![0xffu8],
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::BAD_REQUEST);
    assert_eq!(parts.headers[CONTENT_TYPE], "application/cbor");
    let value: serde_json::Value = conneg_cbor::from_slice(&body).unwrap();
    assert_eq!(value["reason"], "BadRequest");

    // Unsupported type: the layer answers before the extractor.
    let (parts, _) = send(
        app(),
        req("POST", "/items", &[("content-type", "text/plain")], "x"),
    )
    .await;
    assert_eq!(parts.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(parts.headers[ACCEPT], "application/json, application/cbor");
}

#[tokio::test]
async fn warnings_reach_the_response() {
    let (parts, _) = send(
        app(),
        req("POST", "/items", &[], r#"{"name":"w","extra":1}"#),
    )
    .await;
    assert_eq!(parts.status, StatusCode::CREATED);
    assert_eq!(parts.headers[WARNING], r#"299 - "unknown field \"extra\"""#);
}

#[tokio::test]
async fn patch_extractor_tags_and_decodes() {
    let cbor_apply = vec![0xa1, 0x61, b'a', 0x01]; // {"a": 1}, no prefix, as client-go sends it
    let (parts, body) = send(
        app(),
        req(
            "PATCH",
            "/items/p",
            &[("content-type", "application/apply-patch+cbor")],
            cbor_apply,
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::OK, "{body:?}");
    let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        value,
        serde_json::json!({"kind": "application/apply-patch+cbor", "patch": {"a": 1}})
    );

    let (parts, _) = send(
        app(),
        req(
            "PATCH",
            "/items/p",
            &[("content-type", "application/json-patch+json")],
            "[]",
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(
        parts.headers["accept-patch"],
        "application/merge-patch+json, application/apply-patch+cbor"
    );

    let (parts, _) = send(
        app(),
        req(
            "PATCH",
            "/items/p",
            &[("content-type", "application/apply-patch+cbor")],
            vec![0xff, 0xff],
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn patch_extractor_off_a_patch_route_lists_the_profiles_patch_types() {
    // `Patch` on a POST route: a JSON body is not a patch, so the extractor answers 415
    // itself, offering what the profile's PATCH routes take.
    let all = PatchType::all()
        .iter()
        .map(|p| p.media_type())
        .collect::<Vec<_>>()
        .join(", ");
    for (profile, accept_patch) in [
        (conneg::Profile::Standard, "application/merge-patch+json"),
        (conneg::Profile::Kubernetes, all.as_str()),
    ] {
        let router = Router::new()
            .route("/patches", post(apply))
            .layer(NegotiateLayer::new().profile(profile));
        let (parts, _) = send(
            router,
            req(
                "POST",
                "/patches",
                &[("content-type", "application/json")],
                "{}",
            ),
        )
        .await;
        assert_eq!(
            parts.status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{profile:?}"
        );
        assert_eq!(parts.headers["accept-patch"], accept_patch, "{profile:?}");
    }
}

#[tokio::test]
async fn vary_accept_not_duplicated_by_nested_layers() {
    let (parts, _) = send(
        app(),
        req(
            "PATCH",
            "/items/p",
            &[("content-type", "application/merge-patch+json")],
            "{}",
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(parts.headers.get_all(VARY).iter().count(), 1);
}

#[tokio::test]
async fn deferred_response_keeps_an_explicit_500() {
    async fn failing() -> (StatusCode, Conneg<Item>) {
        let item = Item {
            name: "broken".into(),
        };
        (StatusCode::INTERNAL_SERVER_ERROR, Conneg(item))
    }
    let router = Router::new()
        .route("/fail", get(failing))
        .layer(NegotiateLayer::new().profile(conneg::Profile::Kubernetes));
    let headers = [("accept", "application/cbor")];
    let (parts, body) = send(router, req("GET", "/fail", &headers, Body::empty())).await;
    assert_eq!(parts.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(parts.headers[CONTENT_TYPE], "application/cbor");
    assert_eq!(
        conneg_cbor::from_slice::<Item>(&body).unwrap().name,
        "broken"
    );
}

#[tokio::test]
async fn without_the_layer() {
    // Extractors negotiate on their own; a deferred response explains what is missing.
    let router = Router::new().route("/a", get(read)).route("/b", get(plain));
    let (parts, body) = send(
        router.clone(),
        req(
            "GET",
            "/a",
            &[("accept", "application/cbor")],
            Body::empty(),
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(parts.headers[CONTENT_TYPE], "application/cbor");
    assert_eq!(conneg_cbor::from_slice::<Item>(&body).unwrap().name, "a");
    let (parts, body) = send(router, req("GET", "/b", &[], Body::empty())).await;
    assert!(parts.status.is_server_error(), "{}", parts.status);
    assert!(String::from_utf8_lossy(&body).contains("needs NegotiateLayer"));
}

/// A handler can take the rejection as a value and decide (as with axum's `JsonRejection`).
#[tokio::test]
async fn extractor_rejections_are_typed() {
    use conneg::{Rejection, StatusReason};

    async fn lenient(body: Result<Conneg<Item>, Rejection>) -> Response {
        match body {
            Ok(Conneg(item)) => (StatusCode::CREATED, Conneg(item)).into_response(),
            Err(r) if r.status().reason == Some(StatusReason::BadRequest) => (
                StatusCode::OK,
                format!("ignored: {} {}", r.code(), r.message()),
            )
                .into_response(),
            Err(r) => r.into_response(),
        }
    }
    async fn patched(patch: Result<Patch, Rejection>) -> Response {
        match patch {
            Ok(p) => p.kind.media_type().to_owned().into_response(),
            Err(r) => {
                assert_eq!(r.code(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
                assert!(r.headers().contains_key("accept-patch"));
                r.into_response()
            }
        }
    }
    let app = Router::new()
        .route("/lenient", post(lenient))
        // No patch types on this route: a PATCH body is an ordinary JSON body, not a patch.
        .route(
            "/p",
            patch(patched).layer(
                NegotiateLayer::new()
                    .profile(conneg::Profile::Kubernetes)
                    .patch_types([]),
            ),
        )
        .layer(NegotiateLayer::new().profile(conneg::Profile::Kubernetes));

    let (parts, body) = send(
        app.clone(),
        req(
            "POST",
            "/lenient",
            &[(CONTENT_TYPE.as_str(), "application/json")],
            "{",
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::OK);
    let text = String::from_utf8(body.to_vec()).unwrap();
    assert!(text.starts_with("ignored: 400 Bad Request "), "{text}");

    let (parts, body) = send(
        app.clone(),
        req(
            "POST",
            "/lenient",
            &[(CONTENT_TYPE.as_str(), "application/json")],
            r#"{"name":"x"}"#,
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::CREATED, "{body:?}");

    let (parts, body) = send(
        app,
        req(
            "PATCH",
            "/p",
            &[(CONTENT_TYPE.as_str(), "application/json")],
            "{}",
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(
        parts.headers["accept-patch"]
            .to_str()
            .unwrap()
            .contains("application/merge-patch+json")
    );
    let status: Status = serde_json::from_slice(&body).unwrap();
    assert_eq!(status.reason, Some(StatusReason::UnsupportedMediaType));
}
