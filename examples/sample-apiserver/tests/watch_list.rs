//! Watch-list (KEP-3157, `sendInitialEvents=true`) and the validation of list options, over
//! raw HTTP against the real binary.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::{Server, flunders, tempdir};
use conneg::WatchEvent;
use conneg::client::{StreamFormat, WatchDecoder};
use serde_json::{Value, json};

const WATCH_LIST: &str =
    "watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan";

fn memory_server() -> (Server, tempfile::TempDir) {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    (s, dir)
}

/// Creates flunders `a` (label `k=v`), `b` (label `k=w`) and `c` (label `k=v`) in `default`;
/// returns the collection's resourceVersion after them.
fn seed(s: &Server) -> String {
    let coll = flunders("v1beta1", "default");
    for (name, k) in [("a", "v"), ("b", "w"), ("c", "v")] {
        let r = s.post_json(
            &coll,
            &json!({"metadata": {"name": name, "labels": {"k": k}}}).to_string(),
        );
        assert_eq!(r.code, 201, "{}", r.text());
    }
    let list = s.get(&coll, "application/json").json();
    list["metadata"]["resourceVersion"]
        .as_str()
        .expect("list resourceVersion")
        .to_owned()
}

/// The JSON watch events in a finished JSON stream.
fn json_events(r: &common::Resp) -> Vec<Value> {
    assert_eq!(r.code, 200, "{}", r.text());
    r.text()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON event"))
        .collect()
}

/// `(type, name)` of each event, the name empty for bookmarks.
fn summary(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_owned(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

fn s(a: &str, b: &str) -> (String, String) {
    (a.to_owned(), b.to_owned())
}

#[test]
fn initial_events_then_annotated_bookmark_in_json() {
    let (srv, _d) = memory_server();
    let rv = seed(&srv);
    let coll = flunders("v1beta1", "default");
    for start in ["", "&resourceVersion=0", &format!("&resourceVersion={rv}")] {
        let r = srv.get(
            &format!("{coll}?{WATCH_LIST}{start}&labelSelector=k%3Dv&timeoutSeconds=1"),
            "application/json",
        );
        let events = json_events(&r);
        // The selector applies to the initial events too: b is not sent.
        assert_eq!(
            summary(&events),
            [s("ADDED", "a"), s("ADDED", "c"), s("BOOKMARK", "")],
            "{start}"
        );
        assert_eq!(
            events[2]["object"],
            json!({
                "kind": "Flunder",
                "apiVersion": "wardle.example.com/v1beta1",
                "metadata": {
                    "resourceVersion": rv,
                    "annotations": {"k8s.io/initial-events-end": "true"},
                },
            }),
            "{start}"
        );
    }
}

#[test]
fn initial_events_then_annotated_bookmark_in_cbor() {
    let (srv, _d) = memory_server();
    let rv = seed(&srv);
    let coll = flunders("v1beta1", "default");
    let r = srv.get(
        &format!("{coll}?{WATCH_LIST}&timeoutSeconds=1"),
        "application/cbor",
    );
    assert_eq!(r.code, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/cbor-seq"));
    let mut decoder = WatchDecoder::<Value>::new(StreamFormat::CborSeq);
    decoder.push(&r.body);
    let mut names = Vec::new();
    let bookmark = loop {
        match decoder.next_event().expect("a valid event") {
            Some(WatchEvent::Added(o)) => names.push(o["metadata"]["name"].clone()),
            Some(WatchEvent::Bookmark(o)) => break o,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(names, [json!("a"), json!("b"), json!("c")]);
    assert_eq!(bookmark["metadata"]["resourceVersion"], json!(rv));
    assert_eq!(
        bookmark["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
}

/// A watch without resourceVersion, bookmarks or selectors (served from the shared hub) starts
/// with every object of the state as ADDED, in key order, each encoded as it goes out, in both
/// codecs; an object name narrows it to that object.
#[test]
fn plain_watch_starts_with_every_object_of_the_state() {
    let (srv, _d) = memory_server();
    seed(&srv);
    let coll = flunders("v1beta1", "default");
    let r = srv.get(
        &format!("{coll}?watch=1&timeoutSeconds=1"),
        "application/json",
    );
    assert_eq!(
        summary(&json_events(&r)),
        [s("ADDED", "a"), s("ADDED", "b"), s("ADDED", "c")]
    );
    let r = srv.get(
        &format!("{coll}?watch=1&timeoutSeconds=1"),
        "application/cbor",
    );
    assert_eq!(r.code, 200, "{}", r.text());
    let mut decoder = WatchDecoder::<Value>::new(StreamFormat::CborSeq);
    decoder.push(&r.body);
    let mut names = Vec::new();
    while let Some(event) = decoder.next_event().expect("a valid event") {
        match event {
            WatchEvent::Added(o) => names.push(o["metadata"]["name"].clone()),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(names, [json!("a"), json!("b"), json!("c")]);
    let r = srv.get(
        &format!("{coll}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Db"),
        "application/json",
    );
    assert_eq!(summary(&json_events(&r)), [s("ADDED", "b")]);
}

/// An initial state of several storage pages (the server reads it a page of 500 at a time as
/// the stream goes) comes out whole and in order, through the watch-list path with a selector
/// and through the shared path.
#[test]
fn an_initial_state_of_many_pages_is_sent_whole() {
    let (srv, _d) = memory_server();
    let coll = flunders("v1beta1", "default");
    let n = 1201;
    for i in 0..n {
        let k = if i % 2 == 0 { "even" } else { "odd" };
        let body = json!({"metadata": {"name": format!("f{i:04}"), "labels": {"k": k}}});
        let r = srv.post_json(&coll, &body.to_string());
        assert_eq!(r.code, 201, "{}", r.text());
    }
    let names = |events: &[Value]| -> Vec<String> {
        summary(events)
            .into_iter()
            .filter(|(t, _)| t == "ADDED")
            .map(|(_, name)| name)
            .collect()
    };
    let all: Vec<String> = (0..n).map(|i| format!("f{i:04}")).collect();
    let r = srv.get(
        &format!("{coll}?watch=1&timeoutSeconds=1"),
        "application/json",
    );
    assert_eq!(names(&json_events(&r)), all);
    let r = srv.get(
        &format!("{coll}?{WATCH_LIST}&labelSelector=k%3Deven&timeoutSeconds=1"),
        "application/json",
    );
    let events = json_events(&r);
    let even: Vec<String> = all.iter().step_by(2).cloned().collect();
    assert_eq!(names(&events), even);
    assert_eq!(
        events.len(),
        even.len() + 1,
        "the initial-events-end bookmark last"
    );
    assert_eq!(events[even.len()]["type"], "BOOKMARK");
}

/// Reads from `stream` until the bytes read so far contain `needle`; returns them.
fn read_until(stream: &mut TcpStream, seen: &mut Vec<u8>, needle: &str) {
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(seen).contains(needle) {
        let n = stream.read(&mut buf).expect("read the watch");
        assert!(
            n > 0,
            "stream ended before {needle:?}: {}",
            String::from_utf8_lossy(seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
}

#[test]
fn live_events_follow_the_bookmark() {
    let (srv, _d) = memory_server();
    seed(&srv);
    let coll = flunders("v1beta1", "default");
    let mut stream = TcpStream::connect(&srv.addr).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("read timeout");
    write!(
        stream,
        "GET {coll}?{WATCH_LIST}&timeoutSeconds=30 HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    )
    .expect("send the watch");
    let mut seen = Vec::new();
    read_until(&mut stream, &mut seen, "k8s.io/initial-events-end");
    let before = seen.len();
    let r = srv.post_json(&coll, &json!({"metadata": {"name": "late"}}).to_string());
    assert_eq!(r.code, 201);
    read_until(&mut stream, &mut seen, "\"late\"");
    let after = String::from_utf8_lossy(&seen[before..]).into_owned();
    assert!(after.contains(r#"{"type":"ADDED","object":{"#), "{after}");
    assert!(
        !String::from_utf8_lossy(&seen[..before]).contains("\"late\""),
        "the new object came after the initial events"
    );
}

#[test]
fn send_initial_events_false_sends_changes_only() {
    let (srv, _d) = memory_server();
    seed(&srv);
    let coll = flunders("v1beta1", "default");
    let r = srv.get(
        &format!(
            "{coll}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&timeoutSeconds=1"
        ),
        "application/json",
    );
    assert_eq!(json_events(&r), Vec::<Value>::new());
}

/// One expected Status cause: field, reason, message.
type Cause = (&'static str, &'static str, &'static str);

/// Each combination apimachinery's `ValidateListOptions` refuses, with its message and cause.
#[test]
fn invalid_combinations_are_422_with_apimachinery_wording() {
    let (srv, _d) = memory_server();
    let coll = flunders("v1beta1", "default");
    let cases: &[(&str, &[Cause])] = &[
        (
            "sendInitialEvents=true",
            &[(
                "sendInitialEvents",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents is forbidden for list",
            )],
        ),
        (
            "watch=1&sendInitialEvents=true",
            &[(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )],
        ),
        (
            "watch=1&sendInitialEvents=false",
            &[(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )],
        ),
        (
            "watch=1&resourceVersionMatch=NotOlderThan",
            &[(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            )],
        ),
        (
            "watch=1&sendInitialEvents=true&resourceVersionMatch=Exact&allowWatchBookmarks=true",
            &[
                (
                    "resourceVersionMatch",
                    "FieldValueForbidden",
                    "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ),
                (
                    "resourceVersionMatch",
                    "FieldValueNotSupported",
                    "Unsupported value: \"Exact\": supported values: \"NotOlderThan\"",
                ),
            ],
        ),
        (
            "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&continue=x",
            &[(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden when continue is provided",
            )],
        ),
        (
            "resourceVersionMatch=NotOlderThan",
            &[(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            )],
        ),
        (
            "resourceVersion=0&resourceVersionMatch=Exact",
            &[(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            )],
        ),
        (
            "resourceVersion=1&resourceVersionMatch=Newest",
            &[(
                "resourceVersionMatch",
                "FieldValueNotSupported",
                "Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
            )],
        ),
    ];
    for (query, causes) in cases {
        let r = srv.get(&format!("{coll}?{query}"), "application/json");
        assert_eq!(r.code, 422, "{query}: {}", r.text());
        let body = r.json();
        let errors: Vec<String> = causes
            .iter()
            .map(|(field, _, msg)| format!("{field}: {msg}"))
            .collect();
        let joined = if errors.len() == 1 {
            errors[0].clone()
        } else {
            format!("[{}]", errors.join(", "))
        };
        assert_eq!(
            body["message"],
            format!("ListOptions.meta.k8s.io \"\" is invalid: {joined}"),
            "{query}"
        );
        assert_eq!(body["reason"], "Invalid", "{query}");
        assert_eq!(body["details"]["kind"], "ListOptions", "{query}");
        assert_eq!(body["details"]["group"], "meta.k8s.io", "{query}");
        let want: Vec<Value> = causes
            .iter()
            .map(|(field, reason, msg)| json!({"reason": reason, "message": msg, "field": field}))
            .collect();
        assert_eq!(body["details"]["causes"], json!(want), "{query}");
    }
}
