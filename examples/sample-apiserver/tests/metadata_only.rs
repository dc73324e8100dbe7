//! Metadata-only responses (`as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1|v1beta1`) on
//! get, list and watch, in JSON and CBOR, over raw HTTP against the real binary.

mod common;

use common::{Server, flunders, tempdir};
use conneg::WatchEvent;
use conneg::client::{StreamFormat, WatchDecoder};
use serde_json::{Value, json};

const OBJECT: &str = "as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const LIST: &str = "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

fn server_with_two_flunders() -> (Server, tempfile::TempDir) {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    let coll = flunders("v1beta1", "default");
    for name in ["a", "b"] {
        let r = s.post_json(
            &coll,
            &json!({
                "metadata": {"name": name, "labels": {"l": name}},
                "spec": {"flunderReference": "x", "referenceType": "Flunder"},
            })
            .to_string(),
        );
        assert_eq!(r.code, 201, "{}", r.text());
    }
    (s, dir)
}

/// The body of a response, decoded from JSON or CBOR per its Content-Type.
fn body(r: &common::Resp) -> Value {
    match r.header("content-type") {
        Some("application/cbor") => conneg_cbor::from_slice(&r.body).expect("a CBOR body"),
        _ => r.json(),
    }
}

#[test]
fn get_answers_partial_object_metadata() {
    let (s, _d) = server_with_two_flunders();
    let path = format!("{}/a", flunders("v1beta1", "default"));
    let full = s.get(&path, "application/json").json();
    for (accept, api_version) in [
        (format!("application/json;{OBJECT}"), "meta.k8s.io/v1"),
        (
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1".to_owned(),
            "meta.k8s.io/v1beta1",
        ),
        (format!("application/cbor;{OBJECT}"), "meta.k8s.io/v1"),
    ] {
        let r = s.get(&path, &accept);
        assert_eq!(r.code, 200, "{accept}: {}", r.text());
        let want_type = accept.split(';').next().unwrap_or_default();
        assert_eq!(r.header("content-type"), Some(want_type), "{accept}");
        assert_eq!(
            body(&r),
            json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": api_version,
                "metadata": full["metadata"],
            }),
            "{accept}"
        );
    }
}

#[test]
fn list_answers_partial_object_metadata_list() {
    let (s, _d) = server_with_two_flunders();
    let coll = flunders("v1beta1", "default");
    let full = s.get(&format!("{coll}?limit=1"), "application/json").json();
    for accept in [
        format!("application/json;{LIST}"),
        format!("application/cbor;{LIST}"),
    ] {
        let r = s.get(&format!("{coll}?limit=1"), &accept);
        assert_eq!(r.code, 200, "{accept}: {}", r.text());
        let list = body(&r);
        assert_eq!(list["kind"], "PartialObjectMetadataList", "{accept}");
        assert_eq!(list["apiVersion"], "meta.k8s.io/v1", "{accept}");
        assert_eq!(
            list["metadata"]["resourceVersion"],
            full["metadata"]["resourceVersion"]
        );
        assert!(list["metadata"]["continue"].is_string(), "{list}");
        assert_eq!(
            list["items"],
            json!([{
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": full["items"][0]["metadata"],
            }]),
            "{accept}"
        );
    }
}

#[test]
fn watch_events_carry_partial_object_metadata() {
    let (s, _d) = server_with_two_flunders();
    let coll = flunders("v1beta1", "default");
    let query = "?watch=1&labelSelector=l%3Da&timeoutSeconds=1";
    let r = s.get(
        &format!("{coll}{query}"),
        &format!("application/json;{OBJECT}"),
    );
    assert_eq!(r.code, 200, "{}", r.text());
    let events: Vec<Value> = r
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON event"))
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(events[0]["object"]["metadata"]["name"], "a");
    assert!(events[0]["object"].get("spec").is_none());

    // CBOR, as a watch-list: the bookmark is metadata only too.
    let r = s.get(
        &format!(
            "{coll}{query}&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
        ),
        &format!("application/cbor;{OBJECT}"),
    );
    assert_eq!(r.code, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/cbor-seq"));
    let mut decoder = WatchDecoder::<Value>::new(StreamFormat::CborSeq);
    decoder.push(&r.body);
    match decoder.next_event().expect("a valid event") {
        Some(WatchEvent::Added(o)) => {
            assert_eq!(o["kind"], "PartialObjectMetadata");
            assert_eq!(o["metadata"]["name"], "a");
            assert!(o.get("spec").is_none());
        }
        other => panic!("unexpected {other:?}"),
    }
    match decoder.next_event().expect("a valid event") {
        Some(WatchEvent::Bookmark(o)) => {
            assert_eq!(o["kind"], "PartialObjectMetadata");
            assert_eq!(o["apiVersion"], "meta.k8s.io/v1");
            assert_eq!(
                o["metadata"]["annotations"]["k8s.io/initial-events-end"],
                "true"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// The wrong cardinality is 406 with Kubernetes' message; a missing object is still 404.
#[test]
fn wrong_cardinality_is_406() {
    let (s, _d) = server_with_two_flunders();
    let coll = flunders("v1beta1", "default");
    let cases = [
        (
            coll.clone(),
            format!("application/json;{OBJECT}"),
            "you requested PartialObjectMetadata, but the requested object is a list (*wardle.FlunderList)",
        ),
        (
            format!("{coll}/a"),
            format!("application/cbor;{LIST}"),
            "you requested PartialObjectMetadataList, but the requested object is not a list (*wardle.Flunder)",
        ),
        (
            format!("{coll}?watch=1&timeoutSeconds=1"),
            format!("application/json;{LIST}"),
            "you requested PartialObjectMetadataList, but the requested object is not a list (*wardle.Flunder)",
        ),
    ];
    for (path, accept, message) in cases {
        let r = s.get(&path, &accept);
        assert_eq!(r.code, 406, "{path} {accept}: {}", r.text());
        let status = body(&r);
        assert_eq!(status["reason"], "NotAcceptable", "{path} {accept}");
        assert_eq!(status["message"], message, "{path} {accept}");
    }
    let r = s.get(
        &format!("{coll}/missing"),
        &format!("application/json;{LIST}"),
    );
    assert_eq!(r.code, 404, "{}", r.text());
}

/// Only meta.k8s.io v1 and v1beta1 exist: any other version does not match, so negotiation
/// falls through to the next clause, or 406 when there is none.
#[test]
fn other_versions_are_not_offered() {
    let (s, _d) = server_with_two_flunders();
    let path = format!("{}/a", flunders("v1beta1", "default"));
    let v1alpha1 = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1alpha1";
    assert_eq!(s.get(&path, v1alpha1).code, 406);
    let r = s.get(&path, &format!("{v1alpha1}, application/json"));
    assert_eq!(r.code, 200);
    assert_eq!(r.json()["kind"], "Flunder");
}
