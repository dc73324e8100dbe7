//! The standard profile through a real axum `Router`, beside the same router in the Kubernetes
//! profile: the error bodies, CBOR strings (single objects, streamed lists, watch events),
//! query parameters and patch types differ; a service's own error mapping replaces either.
#![cfg(feature = "axum")]

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::routing::{get, post};
use conneg::axum::{Conneg, Path, Query, method_not_allowed, not_found};
use conneg::watch::{WatchBody, WatchEvent, WatchResponse};
use conneg::{
    ListBody, NegotiateLayer, Negotiated, Patch, Problem, Profile, Status, StreamingList,
};
use http::header::{ACCEPT, ALLOW, CONTENT_TYPE, WARNING};
use http_body_util::BodyExt;
use serde::{Deserialize, Serialize};
use tower::ServiceExt;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Note {
    title: String,
}

#[derive(Deserialize)]
struct Page {
    #[allow(dead_code)]
    limit: u32,
}

async fn create(Conneg(note): Conneg<Note>) -> Result<Conneg<Note>, Status> {
    if note.title == "taken" {
        return Err(Status::bad_request("the title is taken"));
    }
    Ok(Conneg(note))
}

async fn read(Path(id): Path<u32>, Query(_): Query<Page>) -> Result<Conneg<Note>, Problem> {
    Err(Problem::new(StatusCode::NOT_FOUND, format!("no note {id}")))
}

async fn patch(patch: Patch) -> Result<Conneg<serde_json::Value>, Status> {
    Ok(Conneg(patch.to_json_value()?))
}

fn app(layer: NegotiateLayer) -> Router {
    Router::new()
        .route("/notes", post(create))
        .route("/notes/{id}", get(read).patch(patch))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(layer)
}

struct Reply {
    status: StatusCode,
    headers: http::HeaderMap,
    body: Vec<u8>,
}

async fn send(app: &Router, req: Request<Body>) -> Reply {
    let res = app.clone().oneshot(req).await.unwrap();
    let (parts, body) = res.into_parts();
    Reply {
        status: parts.status,
        headers: parts.headers,
        body: body.collect().await.unwrap().to_bytes().to_vec(),
    }
}

fn request(method: &str, uri: &str, headers: &[(&str, &str)], body: &[u8]) -> Request<Body> {
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.body(Body::from(body.to_vec())).unwrap()
}

fn problem(reply: &Reply) -> Problem {
    match reply.headers[CONTENT_TYPE].to_str().unwrap() {
        "application/problem+json" => serde_json::from_slice(&reply.body).unwrap(),
        "application/cbor" => conneg_cbor::from_slice(&reply.body).unwrap(),
        other => panic!("{other}: {:?}", String::from_utf8_lossy(&reply.body)),
    }
}

const CBOR: &str = "application/cbor";

/// Method, URI, headers, body, expected status.
type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [u8],
    u16,
);

#[tokio::test]
async fn every_error_is_a_problem_in_the_negotiated_format() {
    let app = app(NegotiateLayer::new());
    let cases: &[Case] = &[
        ("GET", "/notes/1", &[("accept", "text/html")], b"", 406),
        (
            "POST",
            "/notes",
            &[("content-type", "text/plain")],
            b"x",
            415,
        ),
        ("POST", "/notes", &[("content-length", "4000000")], b"", 413),
        ("POST", "/notes", &[], br#"{"title":1}"#, 400),
        ("POST", "/notes", &[], br#"{"title":"taken"}"#, 400),
        ("GET", "/notes/x?limit=1", &[], b"", 400),
        ("GET", "/notes/1?limit=many", &[], b"", 400),
        ("GET", "/notes/1?limit=1", &[], b"", 404),
        ("GET", "/elsewhere", &[], b"", 404),
        ("DELETE", "/notes/1", &[], b"", 405),
        (
            "PATCH",
            "/notes/1",
            &[("content-type", "application/json")],
            b"{}",
            415,
        ),
        (
            "PATCH",
            "/notes/1",
            &[("content-type", "application/merge-patch+json")],
            b"{",
            400,
        ),
    ];
    for (method, uri, headers, body, code) in cases {
        for accept in ["application/json", CBOR] {
            let mut all = headers.to_vec();
            if !headers.iter().any(|(k, _)| *k == "accept") {
                all.push(("accept", accept));
            }
            let reply = send(&app, request(method, uri, &all, body)).await;
            let what = format!("{method} {uri} ({accept})");
            assert_eq!(reply.status.as_u16(), *code, "{what}");
            let p = problem(&reply);
            assert_eq!(p.status, *code, "{what}");
            assert_eq!(p.type_, "about:blank");
            assert_eq!(Some(p.title.as_str()), reply.status.canonical_reason());
            if reply.headers[CONTENT_TYPE] == CBOR {
                assert_ne!(
                    &reply.body[..2],
                    b"\xd9\xd9",
                    "{what}: no self-described tag"
                );
            }
        }
    }
    let reply = send(&app, request("DELETE", "/notes/1", &[], b"")).await;
    assert_eq!(reply.headers[ALLOW], "GET,HEAD,PATCH");
    let reply = send(&app, request("PATCH", "/notes/1", &[], b"{}")).await;
    assert_eq!(
        reply.headers["accept-patch"],
        "application/merge-patch+json"
    );
    let reply = send(&app, request("POST", "/notes", &[], br#"{"title":1}"#)).await;
    assert!(
        problem(&reply).detail.contains("at .title"),
        "{:?}",
        problem(&reply)
    );
}

#[tokio::test]
async fn cbor_strings_are_text_in_standard_and_bytes_in_kubernetes() {
    let body = br#"{"title":"a"}"#;
    let headers = [("accept", CBOR)];
    let standard = send(
        &app(NegotiateLayer::new()),
        request("POST", "/notes", &headers, body),
    )
    .await;
    // {"title": "a"}: a map of one text key and one text value, no tag.
    assert_eq!(standard.body, b"\xa1\x65title\x61a");
    let kubernetes = send(
        &app(NegotiateLayer::new().profile(Profile::Kubernetes)),
        request("POST", "/notes", &headers, body),
    )
    .await;
    assert_eq!(kubernetes.body, b"\xd9\xd9\xf7\xa1\x45title\x41a");
}

#[tokio::test]
async fn kubernetes_query_parameters_only_in_the_kubernetes_profile() {
    let body = br#"{"title":"a","x":1}"#;
    let uri = "/notes?fieldValidation=Strict";
    let standard = send(&app(NegotiateLayer::new()), request("POST", uri, &[], body)).await;
    assert_eq!(standard.status, StatusCode::OK);
    assert!(standard.headers.get(WARNING).is_none());
    let kubernetes = app(NegotiateLayer::new().profile(Profile::Kubernetes));
    let strict = send(&kubernetes, request("POST", uri, &[], body)).await;
    assert_eq!(strict.status, StatusCode::BAD_REQUEST);
    let status: Status = serde_json::from_slice(&strict.body).unwrap();
    assert_eq!(status.kind, "Status");
    let warned = send(&kubernetes, request("POST", "/notes", &[], body)).await;
    assert_eq!(warned.headers[WARNING], r#"299 - "unknown field \"x\"""#);
}

#[tokio::test]
async fn a_service_maps_conneg_errors_to_its_own_body() {
    #[derive(Serialize)]
    struct MyError<'a> {
        error: &'a str,
        code: u16,
    }
    let layer = NegotiateLayer::new().map_errors(|rejection| {
        rejection.respond(&MyError {
            error: rejection.message(),
            code: rejection.code().as_u16(),
        })
    });
    let app = app(layer);
    // The layer's 415, an extractor's 400, a handler's Status, the 405 fallback.
    for (method, uri, ctype, code) in [
        ("POST", "/notes", "text/plain", 415),
        ("POST", "/notes", "application/json", 400),
        ("DELETE", "/notes/1", "application/json", 405),
    ] {
        for accept in ["application/json", CBOR] {
            let reply = send(
                &app,
                request(
                    method,
                    uri,
                    &[("content-type", ctype), (ACCEPT.as_str(), accept)],
                    b"{",
                ),
            )
            .await;
            assert_eq!(reply.status.as_u16(), code);
            assert_eq!(reply.headers[CONTENT_TYPE], accept);
            let value: serde_json::Value = if accept == CBOR {
                conneg_cbor::from_slice(&reply.body).unwrap()
            } else {
                serde_json::from_slice(&reply.body).unwrap()
            };
            assert_eq!(value["code"], code, "{value}");
            assert!(value["error"].is_string(), "{value}");
        }
    }
    let taken = send(
        &app,
        request("POST", "/notes", &[], br#"{"title":"taken"}"#),
    )
    .await;
    assert_eq!(
        String::from_utf8(taken.body).unwrap(),
        r#"{"error":"the title is taken","code":400}"#
    );
    let reply = send(
        &app,
        request("POST", "/notes", &[("content-type", "text/plain")], b"x"),
    )
    .await;
    assert_eq!(reply.headers[ACCEPT], "application/json, application/cbor");
}

/// A streamed list and a watch stream, each written in the request's profile.
fn streams(layer: NegotiateLayer) -> Router {
    async fn list(negotiated: Negotiated) -> http::Response<ListBody> {
        let notes = ["a", "b"].map(|t| Note { title: t.into() });
        StreamingList::new("", "", serde_json::json!({"count": 2})).response(&negotiated, notes)
    }
    async fn watch(negotiated: Negotiated) -> http::Response<WatchBody> {
        let events = [
            WatchEvent::Added(Note { title: "a".into() }),
            WatchEvent::Deleted(Note { title: "b".into() }),
        ];
        WatchResponse::new(&negotiated).events(futures_util::stream::iter(events))
    }
    Router::new()
        .route("/list", get(list))
        .route("/watch", get(watch))
        .layer(layer)
}

#[tokio::test]
async fn streamed_lists_and_watches_follow_the_profile() {
    let headers = [("accept", CBOR)];
    let standard = streams(NegotiateLayer::new());
    let kubernetes = streams(NegotiateLayer::new().profile(Profile::Kubernetes));

    // {"items": [{"title": "a"}, {"title": "b"}], "metadata": {"count": 2}}: text strings, no
    // tag, which a generic decoder reads as the JSON list.
    let list = send(&standard, request("GET", "/list", &headers, b"")).await;
    assert_eq!(list.headers[CONTENT_TYPE], CBOR);
    assert_eq!(
        list.body,
        b"\xa2\x65items\x82\xa1\x65title\x61a\xa1\x65title\x61b\x68metadata\xa1\x65count\x02"
    );
    assert_eq!(
        conneg_cbor::value_from_slice(&list.body).unwrap(),
        serde_json::json!({"items": [{"title": "a"}, {"title": "b"}], "metadata": {"count": 2}})
    );
    // The Kubernetes profile's bytes as before: the tag, then byte strings.
    let list = send(&kubernetes, request("GET", "/list", &headers, b"")).await;
    assert_eq!(
        list.body,
        b"\xd9\xd9\xf7\xa2\x45items\x82\xa1\x45title\x41a\xa1\x45title\x41b\x48metadata\xa1\x45count\x02"
    );

    // A CBOR Sequence of {"type", "object"} maps, text strings and no tags.
    let watch = send(&standard, request("GET", "/watch", &headers, b"")).await;
    assert_eq!(watch.headers[CONTENT_TYPE], "application/cbor-seq");
    assert_eq!(
        watch.body,
        [
            &b"\xa2\x64type\x65ADDED\x66object\xa1\x65title\x61a"[..],
            b"\xa2\x64type\x67DELETED\x66object\xa1\x65title\x61b",
        ]
        .concat()
    );
    let watch = send(&kubernetes, request("GET", "/watch", &headers, b"")).await;
    assert_eq!(
        watch.body,
        [
            &b"\xd9\xd9\xf7\xa2\x44type\x45ADDED\x46object\xd9\xd9\xf7\xa1\x45title\x41a"[..],
            b"\xd9\xd9\xf7\xa2\x44type\x47DELETED\x46object\xd9\xd9\xf7\xa1\x45title\x41b",
        ]
        .concat()
    );

    // JSON is the same in both profiles.
    for app in [&standard, &kubernetes] {
        let list = send(app, request("GET", "/list", &[], b"")).await;
        assert_eq!(
            list.body,
            br#"{"metadata":{"count":2},"items":[{"title":"a"},{"title":"b"}]}"#
        );
        let watch = send(app, request("GET", "/watch", &[], b"")).await;
        assert_eq!(
            watch.body,
            b"{\"type\":\"ADDED\",\"object\":{\"title\":\"a\"}}\n{\"type\":\"DELETED\",\"object\":{\"title\":\"b\"}}\n"
        );
    }
}
