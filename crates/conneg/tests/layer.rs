//! The Tower layer on a tiny service, through `tower::ServiceExt::oneshot`.

use std::convert::Infallible;

use bytes::Bytes;
use conneg::{Codec, Conversion, NegotiateLayer, Negotiated, PatchType, Status};
use http::header::{ACCEPT, CONTENT_TYPE, VARY, WARNING};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde::{Deserialize, Serialize};
use tower::{ServiceBuilder, ServiceExt, service_fn};

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Item {
    name: String,
}

/// Echoes the decoded body, or returns `{"name":"get"}` for a request without one.
async fn handler(req: Request<Full<Bytes>>) -> Result<Response<Full<Bytes>>, Infallible> {
    let negotiated = req
        .extensions()
        .get::<Negotiated>()
        .expect("layer ran")
        .clone();
    if negotiated.request_format().is_none() {
        return Ok(negotiated.response(StatusCode::OK, &Item { name: "get".into() }));
    }
    match negotiated.decode_body::<Item, _>(req.into_body()).await {
        Ok(item) => Ok(negotiated.response(StatusCode::CREATED, &item.value)),
        Err(status) => Ok(negotiated.error_response(&status)),
    }
}

async fn call(layer: NegotiateLayer, req: Request<Full<Bytes>>) -> (http::response::Parts, Bytes) {
    let svc = ServiceBuilder::new()
        .layer(layer)
        .service(service_fn(handler));
    let response = svc.oneshot(req).await.unwrap();
    let (parts, body) = response.into_parts();
    (parts, body.collect().await.unwrap().to_bytes())
}

fn request(method: &str, headers: &[(&str, &str)], body: &'static [u8]) -> Request<Full<Bytes>> {
    let mut b = Request::builder().method(method).uri("/items");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Full::new(Bytes::from_static(body))).unwrap()
}

fn json_status(body: &[u8]) -> Status {
    serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(body)))
}

fn cbor_status(body: &[u8]) -> serde_json::Value {
    assert_eq!(&body[..3], &[0xd9, 0xd9, 0xf7], "self-described CBOR");
    conneg_cbor::from_slice(body).unwrap()
}

#[tokio::test]
async fn negotiated_get_is_cbor_for_kubectl_and_has_vary() {
    let (parts, body) = call(
        NegotiateLayer::new().profile(conneg::Profile::Kubernetes),
        request("GET", &[("accept", "application/cbor, */*")], b""),
    )
    .await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(parts.headers[CONTENT_TYPE], "application/cbor");
    assert_eq!(
        parts.headers.get_all(VARY).iter().collect::<Vec<_>>(),
        ["Accept"]
    );
    let item: Item = conneg_cbor::from_slice(&body).unwrap();
    assert_eq!(item.name, "get");

    let (parts, body) = call(
        NegotiateLayer::new().profile(conneg::Profile::Kubernetes),
        request("GET", &[], b""),
    )
    .await;
    assert_eq!(parts.headers[CONTENT_TYPE], "application/json");
    assert_eq!(body, r#"{"name":"get"}"#);
}

/// Layers outside read what was negotiated from the response (metrics count media types).
#[tokio::test]
async fn the_response_carries_the_negotiated_decision() {
    let (parts, _) = call(
        NegotiateLayer::new().profile(conneg::Profile::Kubernetes),
        request(
            "POST",
            &[
                ("accept", "application/cbor"),
                ("content-type", "application/json"),
            ],
            br#"{"name":"a"}"#,
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::CREATED);
    let negotiated = parts.extensions.get::<Negotiated>().expect("carried");
    assert_eq!(negotiated.response_codec(), &Codec::Cbor);
    assert_eq!(
        negotiated.request_format(),
        Some(&conneg::RequestFormat::Codec(Codec::Json))
    );
}

#[tokio::test]
async fn not_acceptable_is_indented_json_listing_types() {
    let (parts, body) = call(
        NegotiateLayer::new().profile(conneg::Profile::Kubernetes),
        request("GET", &[("accept", "text/html, application/cbor;q=0")], b""),
    )
    .await;
    assert_eq!(parts.status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(parts.headers[CONTENT_TYPE], "application/json");
    assert_eq!(parts.headers[VARY], "Accept");
    assert!(body.starts_with(b"{\n  \"kind\": \"Status\""), "{body:?}");
    let status = json_status(&body);
    assert_eq!(status.code, 406);
    assert_eq!(status.reason.unwrap().as_str(), "NotAcceptable");
    assert_eq!(
        status.message,
        "only the following media types are accepted: application/json, application/cbor"
    );
}

#[tokio::test]
async fn unsupported_media_type_json_and_cbor_with_accept_header() {
    let layer = NegotiateLayer::new()
        .profile(conneg::Profile::Kubernetes)
        .accept_request_types([Codec::Json, Codec::Cbor]);
    let (parts, body) = call(
        layer.clone(),
        request("POST", &[("content-type", "application/yaml")], b"name: a"),
    )
    .await;
    assert_eq!(parts.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(parts.headers[ACCEPT], "application/json, application/cbor");
    assert!(parts.headers.get("accept-patch").is_none());
    assert_eq!(parts.headers[CONTENT_TYPE], "application/json");
    let status = json_status(&body);
    assert_eq!(
        status.message,
        "the body of the request was in an unknown format - accepted media types include: application/json, application/cbor"
    );
    assert_eq!(status.reason.unwrap().as_str(), "UnsupportedMediaType");

    // The same error for a client that accepts CBOR is CBOR.
    let (parts, body) = call(
        layer,
        request(
            "POST",
            &[
                ("content-type", "application/yaml"),
                ("accept", "application/cbor"),
            ],
            b"name: a",
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(parts.headers[CONTENT_TYPE], "application/cbor");
    let status = cbor_status(&body);
    assert_eq!(status["code"], 415);
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "UnsupportedMediaType");
}

#[tokio::test]
async fn patch_415_lists_patch_types_in_accept_patch() {
    let layer = NegotiateLayer::new()
        .profile(conneg::Profile::Kubernetes)
        .patch_types([PatchType::MergePatch, PatchType::ApplyCbor]);
    let (parts, _) = call(
        layer.clone(),
        request("PATCH", &[("content-type", "application/json")], b"{}"),
    )
    .await;
    assert_eq!(parts.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(
        parts.headers["accept-patch"],
        "application/merge-patch+json, application/apply-patch+cbor"
    );
    assert_eq!(
        parts.headers[ACCEPT],
        "application/merge-patch+json, application/apply-patch+cbor"
    );
    // Content-Type is checked before Accept on PATCH.
    let (parts, _) = call(
        layer,
        request(
            "PATCH",
            &[("content-type", "text/plain"), ("accept", "text/html")],
            b"{}",
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn too_large_is_413_declared_or_streamed() {
    let layer = NegotiateLayer::new()
        .profile(conneg::Profile::Kubernetes)
        .body_limit(8);
    // Declared by Content-Length: rejected before the handler runs.
    let (parts, body) = call(
        layer.clone(),
        request(
            "POST",
            &[("content-length", "20")],
            b"{\"name\":\"0123456789\"}",
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        json_status(&body).reason.unwrap().as_str(),
        "RequestEntityTooLarge"
    );
    // Not declared: the decode helper stops reading at the limit.
    let (parts, body) = call(
        layer,
        request(
            "POST",
            &[("accept", "application/cbor")],
            b"{\"name\":\"0123456789\"}",
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(cbor_status(&body)["code"], 413);
}

#[tokio::test]
async fn undecodable_bodies_are_400_never_500() {
    for (content_type, body) in [
        ("application/json", &b"{\"name\":"[..]),
        ("application/json", b"{\"name\":\"\xff\"}"),
        ("application/cbor", b"\xa1\x64name\xf9\x7e\x00"),
        ("application/cbor", b"\xa2\x64name\x61a\x64name\x61b"),
        ("application/cbor", b"\xff"),
    ] {
        let (parts, resp) = call(
            NegotiateLayer::new().profile(conneg::Profile::Kubernetes),
            request("POST", &[("content-type", content_type)], body),
        )
        .await;
        assert_eq!(
            parts.status,
            StatusCode::BAD_REQUEST,
            "{content_type} {body:?}"
        );
        assert_eq!(json_status(&resp).reason.unwrap().as_str(), "BadRequest");
    }
    // A JSON field given twice is a 400 only when the client asks for strict decoding;
    // otherwise Kubernetes keeps the last value and warns.
    let twice = b"{\"name\":\"a\",\"name\":\"b\"}";
    let mut strict = request("POST", &[("content-type", "application/json")], twice);
    *strict.uri_mut() = "/items?fieldValidation=Strict".parse().unwrap();
    let (parts, _) = call(
        NegotiateLayer::new().profile(conneg::Profile::Kubernetes),
        strict,
    )
    .await;
    assert_eq!(parts.status, StatusCode::BAD_REQUEST);
    let (parts, _) = call(
        NegotiateLayer::new().profile(conneg::Profile::Kubernetes),
        request("POST", &[("content-type", "application/json")], twice),
    )
    .await;
    assert_eq!(parts.status, StatusCode::CREATED);
    assert_eq!(
        parts.headers["warning"],
        r#"299 - "duplicate field \"name\"""#
    );
}

#[tokio::test]
async fn decode_and_answer_in_different_formats() {
    let body = conneg_cbor::to_vec(&Item { name: "c".into() }).unwrap();
    let body: &'static [u8] = Box::leak(body.into_boxed_slice());
    let (parts, resp) = call(
        NegotiateLayer::new().profile(conneg::Profile::Kubernetes),
        request(
            "POST",
            &[("content-type", "Application/CBOR; charset=x")],
            body,
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::CREATED);
    assert_eq!(parts.headers[CONTENT_TYPE], "application/json");
    assert_eq!(resp, r#"{"name":"c"}"#);
}

#[tokio::test]
async fn field_validation_warn_adds_warning_headers_strict_fails() {
    let body = br#"{"name":"a","colour":"red"}"#;
    let (parts, _) = call(
        NegotiateLayer::new().profile(conneg::Profile::Kubernetes),
        request("POST", &[], body),
    )
    .await;
    assert_eq!(parts.status, StatusCode::CREATED);
    assert_eq!(
        parts.headers[WARNING],
        r#"299 - "unknown field \"colour\"""#
    );

    let mut req = request("POST", &[], body);
    *req.uri_mut() = "/items?fieldValidation=Strict".parse().unwrap();
    let (parts, resp) = call(
        NegotiateLayer::new().profile(conneg::Profile::Kubernetes),
        req,
    )
    .await;
    assert_eq!(parts.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        json_status(&resp).message,
        r#"strict decoding error: unknown field "colour""#
    );

    let layer = NegotiateLayer::new()
        .profile(conneg::Profile::Kubernetes)
        .field_validation(conneg::FieldValidation::Ignore);
    let (parts, _) = call(layer, request("POST", &[], body)).await;
    assert!(parts.headers.get(WARNING).is_none());
}

#[tokio::test]
async fn table_conversion_reaches_the_handler() {
    let svc = ServiceBuilder::new()
        .layer(
            NegotiateLayer::new()
                .profile(conneg::Profile::Kubernetes)
                .conversion(Conversion::table(), [Codec::Json]),
        )
        .service(service_fn(|req: Request<Full<Bytes>>| async move {
            let n = req.extensions().get::<Negotiated>().unwrap();
            let kind = if n.conversion().is_some() {
                "Table"
            } else {
                "Item"
            };
            Ok::<_, Infallible>(n.response(StatusCode::OK, &serde_json::json!({ "kind": kind })))
        }));
    let req = request(
        "GET",
        &[(
            "accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        )],
        b"",
    );
    let resp = svc.clone().oneshot(req).await.unwrap();
    assert_eq!(
        resp.into_body().collect().await.unwrap().to_bytes(),
        r#"{"kind":"Table"}"#
    );
    let req = request(
        "GET",
        &[("accept", "application/cbor;as=Table;v=v1;g=meta.k8s.io")],
        b"",
    );
    assert_eq!(
        svc.oneshot(req).await.unwrap().status(),
        StatusCode::NOT_ACCEPTABLE
    );
}

/// A user codec: JSON behind a `TEST:` prefix.
struct Prefixed;

impl conneg::CustomCodec for Prefixed {
    fn media_type(&self) -> &str {
        "application/x-prefixed"
    }
    fn encode(&self, value: &serde_json::Value, out: &mut Vec<u8>) -> Result<(), conneg::BoxError> {
        out.extend_from_slice(b"TEST:");
        serde_json::to_writer(out, value)?;
        Ok(())
    }
    fn decode(&self, body: &[u8]) -> Result<serde_json::Value, conneg::BoxError> {
        let rest = body.strip_prefix(b"TEST:").ok_or("missing prefix")?;
        Ok(serde_json::from_slice(rest)?)
    }
}

#[tokio::test]
async fn custom_codecs_plug_in_both_ways() {
    let layer = NegotiateLayer::new()
        .profile(conneg::Profile::Kubernetes)
        .codec(Codec::custom(Prefixed));
    let (parts, body) = call(
        layer.clone(),
        request("GET", &[("accept", "application/x-prefixed")], b""),
    )
    .await;
    assert_eq!(parts.headers[CONTENT_TYPE], "application/x-prefixed");
    assert_eq!(body, r#"TEST:{"name":"get"}"#);

    let (parts, body) = call(
        layer.clone(),
        request(
            "POST",
            &[("content-type", "application/x-prefixed")],
            b"TEST:{\"name\":\"p\"}",
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::CREATED);
    assert_eq!(body, r#"{"name":"p"}"#);

    // Errors are encoded with it too, and it is listed as accepted.
    let (parts, body) = call(
        layer,
        request(
            "POST",
            &[
                ("content-type", "text/plain"),
                ("accept", "application/x-prefixed"),
            ],
            b"x",
        ),
    )
    .await;
    assert_eq!(parts.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(
        parts.headers[ACCEPT],
        "application/json, application/cbor, application/x-prefixed"
    );
    let status: Status = serde_json::from_slice(body.strip_prefix(b"TEST:").unwrap()).unwrap();
    assert_eq!(status.code, 415);
}
