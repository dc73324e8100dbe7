//! Black-box HTTP tests of the two runnable examples, `examples/axum-items` and
//! `examples/hyper-items`, over real sockets.
//!
//! Both binaries are built (each in its own `cargo build`, so hyper-items stays free of axum)
//! and started on an ephemeral port. Every request goes to both servers, which must answer
//! identically: same status, same headers (but `date`), same body bytes. Each test then checks
//! what that answer must be.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use std::time::Duration;

use conneg_cbor::{EncodeOptions, StringEncoding};
use conneg_tests::{Example, item_example_binaries};
use serde_json::{Value, json};

const LIMIT: usize = 3 * 1024 * 1024;

/// One HTTP/1.1 response.
#[derive(Debug, PartialEq)]
struct Reply {
    status: u16,
    /// Lower-cased names, sorted, without `date`.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        let mut found = self.headers.iter().filter(|(n, _)| n == name);
        let value = found.next().map(|(_, v)| v.as_str());
        assert!(found.next().is_none(), "{name} appears twice");
        value
    }

    fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or("")
    }

    /// The body as JSON, from JSON or from CBOR (which must carry the self-described tag).
    fn value(&self) -> Value {
        match self.content_type() {
            "application/json" => serde_json::from_slice(&self.body).unwrap(),
            "application/cbor" => {
                assert!(
                    self.body.starts_with(&[0xd9, 0xd9, 0xf7]),
                    "{:02x?}",
                    self.body
                );
                conneg_cbor::from_slice(&self.body).unwrap()
            }
            other => panic!("content type {other:?}"),
        }
    }

    /// Checks a Kubernetes `Status`: code, reason, and the code in the body.
    fn assert_status(&self, code: u16, reason: &str) -> Value {
        assert_eq!(self.status, code, "{self:?}");
        let status = self.value();
        assert_eq!(status["kind"], "Status", "{status}");
        assert_eq!(status["apiVersion"], "v1");
        assert_eq!(status["status"], "Failure");
        assert_eq!(status["reason"], reason, "{status}");
        assert_eq!(status["code"], code);
        status
    }
}

/// Sends a raw request (`Connection: close`) and reads the whole response. The body is
/// written from another thread: a server may answer (413) without reading all of it.
fn send(addr: SocketAddr, head: &str, body: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut request = format!("{head}Host: test\r\nConnection: close\r\n\r\n").into_bytes();
    request.extend_from_slice(body);
    let mut writer = stream.try_clone().unwrap();
    let written = std::thread::spawn(move || {
        // Errors are fine here: the server may close once it has answered.
        let _ = writer.write_all(&request);
    });
    let mut raw = Vec::new();
    let read = stream.read_to_end(&mut raw);
    written.join().unwrap();
    // A reset after a complete answer (unread request bytes) is not a failure.
    if let Err(err) = read {
        assert!(raw.windows(4).any(|w| w == b"\r\n\r\n"), "{err}");
    }
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let is_head = head.starts_with("HEAD ");
    let head = std::str::from_utf8(&raw[..split]).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let mut headers: Vec<(String, String)> = lines
        .map(|l| l.split_once(':').unwrap())
        .map(|(n, v)| (n.to_ascii_lowercase(), v.trim().to_owned()))
        .filter(|(n, _)| n != "date")
        .collect();
    headers.sort();
    let body = raw[split + 4..].to_vec();
    if let Some((_, len)) = headers
        .iter()
        .find(|(n, _)| n == "content-length" && !is_head)
    {
        assert_eq!(len.parse::<usize>().unwrap(), body.len());
    }
    Reply {
        status,
        headers,
        body,
    }
}

/// Both examples, side by side.
struct Both([Example; 2]);

impl Both {
    fn start() -> Both {
        let bins = item_example_binaries();
        Both([Example::start(&bins[0]), Example::start(&bins[1])])
    }

    /// Sends the same request to both servers, checks that the answers are identical, and
    /// returns the answer. Every answer carries `Vary: Accept`.
    fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        let mut head = format!("{method} {path} HTTP/1.1\r\n");
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        let framed = headers.iter().any(|(n, _)| {
            n.eq_ignore_ascii_case("transfer-encoding") || n.eq_ignore_ascii_case("content-length")
        });
        if !framed && (!body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH")) {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        let [a, b] = &self.0;
        let first = send(a.addr, &head, body);
        let second = send(b.addr, &head, body);
        assert_eq!(
            first, second,
            "{method} {path} {headers:?}: axum-items (left) and hyper-items (right) differ"
        );
        assert_eq!(first.header("vary"), Some("Accept"), "{first:?}");
        first
    }

    fn json(&self, method: &str, path: &str, body: &Value) -> Reply {
        let body = serde_json::to_vec(body).unwrap();
        self.send(method, path, &[("Content-Type", "application/json")], &body)
    }

    fn cbor(&self, method: &str, path: &str, content_type: &str, body: &[u8]) -> Reply {
        let headers = [
            ("Content-Type", content_type),
            ("Accept", "application/cbor"),
        ];
        self.send(method, path, &headers, body)
    }
}

fn item(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Item", "metadata": {"name": name}, "spec": spec})
}

/// CBOR as Kubernetes' Go encoder writes it: every string and key a byte string, with the
/// self-described tag.
fn go_cbor(value: &Value) -> Vec<u8> {
    EncodeOptions::deterministic()
        .string_encoding(StringEncoding::Bytes)
        .to_vec(value)
        .unwrap()
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn crud_in_json() {
    let both = Both::start();
    let a = item("a", json!({"size": 1}));
    let created = both.json("POST", "/items", &a);
    assert_eq!(
        (created.status, created.content_type()),
        (201, "application/json")
    );
    assert_eq!(created.value(), a);

    let conflict = both
        .json("POST", "/items", &a)
        .assert_status(409, "AlreadyExists");
    assert_eq!(conflict["message"], r#"items "a" already exists"#);
    assert_eq!(conflict["details"]["name"], "a");
    both.json("POST", "/items", &json!({"metadata": {}}))
        .assert_status(400, "BadRequest");
    both.json("POST", "/items", &json!([1]))
        .assert_status(400, "BadRequest");
    both.send(
        "POST",
        "/items",
        &[("Content-Type", "application/json")],
        b"{",
    )
    .assert_status(400, "BadRequest");
    // No Content-Type on a body means JSON (Kubernetes' rule).
    let b = item("b", json!(null));
    let body = serde_json::to_vec(&b).unwrap();
    assert_eq!(both.send("POST", "/items", &[], &body).status, 201);

    let got = both.send("GET", "/items/a", &[], b"");
    assert_eq!((got.status, got.value()), (200, a.clone()));
    let missing = both
        .send("GET", "/items/zz", &[], b"")
        .assert_status(404, "NotFound");
    assert_eq!(missing["message"], r#"items "zz" not found"#);

    // Lists come in name order, whatever the creation order.
    both.json("POST", "/items", &item("0", json!({})));
    let list = both.send("GET", "/items", &[], b"");
    assert_eq!(list.status, 200);
    let list = list.value();
    assert_eq!(
        (&list["apiVersion"], &list["kind"]),
        (&json!("v1"), &json!("List"))
    );
    assert_eq!(list["metadata"], json!({}));
    let names: Vec<&Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["metadata"]["name"])
        .collect();
    assert_eq!(names, ["0", "a", "b"]);

    let a2 = item("a", json!({"size": 2}));
    let replaced = both.json("PUT", "/items/a", &a2);
    assert_eq!((replaced.status, replaced.value()), (200, a2.clone()));
    assert_eq!(both.send("GET", "/items/a", &[], b"").value(), a2);
    both.json("PUT", "/items/zz", &item("zz", json!({})))
        .assert_status(404, "NotFound");
    let mismatch = both
        .json("PUT", "/items/a", &item("b", json!({})))
        .assert_status(400, "BadRequest");
    assert!(
        mismatch["message"]
            .as_str()
            .unwrap()
            .contains("does not match"),
        "{mismatch}"
    );
    both.json("PUT", "/items/a", &json!({"spec": {}}))
        .assert_status(400, "BadRequest");

    let deleted = both.send("DELETE", "/items/a", &[], b"");
    assert_eq!((deleted.status, deleted.value()), (200, a2));
    both.send("DELETE", "/items/a", &[], b"")
        .assert_status(404, "NotFound");
    both.send("GET", "/items/a", &[], b"")
        .assert_status(404, "NotFound");
}

#[test]
fn crud_in_cbor() {
    let both = Both::start();
    let a = item(
        "a",
        json!({"size": 1, "ratio": 0.5, "tags": ["x", "y"], "none": null}),
    );

    // Go-style (byte strings everywhere), with the self-described tag.
    let go = go_cbor(&a);
    assert_eq!(go[..4], [0xd9, 0xd9, 0xf7, 0xa4]);
    let created = both.cbor("POST", "/items", "application/cbor", &go);
    assert_eq!(
        (created.status, created.content_type()),
        (201, "application/cbor")
    );
    assert_eq!(created.value(), a);

    // The same without the tag: same item, so 409, as a CBOR Status.
    let conflict = both.cbor("POST", "/items", "application/cbor", &go[3..]);
    assert_eq!(conflict.content_type(), "application/cbor");
    conflict.assert_status(409, "AlreadyExists");

    // Hand-written: {"metadata": {"name": "b"}} with byte-string keys and values, no tag.
    let b = hex("a1 48 6d65746164617461 a1 44 6e616d65 41 62");
    let created = both.cbor("POST", "/items", "application/cbor", &b);
    assert_eq!(
        (created.status, created.value()),
        (201, json!({"metadata": {"name": "b"}}))
    );
    // ... and with text strings and the tag, for "c".
    let c = hex("d9d9f7 a1 68 6d65746164617461 a1 64 6e616d65 61 63");
    assert_eq!(
        both.cbor("POST", "/items", "application/cbor; charset=utf-8", &c)
            .status,
        201
    );

    // Errors are CBOR Statuses for CBOR clients.
    let missing = both.cbor("GET", "/items/zz", "application/cbor", b"");
    assert_eq!(missing.content_type(), "application/cbor");
    missing.assert_status(404, "NotFound");
    both.cbor(
        "POST",
        "/items",
        "application/cbor",
        &go_cbor(&json!({"metadata": {}})),
    )
    .assert_status(400, "BadRequest");

    let got = both.cbor("GET", "/items/a", "application/cbor", b"");
    assert_eq!(
        (got.status, got.content_type(), got.value()),
        (200, "application/cbor", a.clone())
    );
    let list = both.cbor("GET", "/items", "application/cbor", b"").value();
    assert_eq!(list["items"].as_array().unwrap().len(), 3);
    assert_eq!(list["kind"], "List");

    let a2 = item("a", json!({"size": 2}));
    let replaced = both.cbor("PUT", "/items/a", "application/cbor", &go_cbor(&a2));
    assert_eq!((replaced.status, replaced.value()), (200, a2.clone()));
    let deleted = both.cbor("DELETE", "/items/a", "application/cbor", b"");
    assert_eq!((deleted.status, deleted.value()), (200, a2));
    both.cbor("DELETE", "/items/a", "application/cbor", b"")
        .assert_status(404, "NotFound");

    // JSON in, CBOR out, and the other way round.
    let d = item("d", json!({}));
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/cbor"),
    ];
    let created = both.send("POST", "/items", &headers, &serde_json::to_vec(&d).unwrap());
    assert_eq!(
        (created.content_type(), created.value()),
        ("application/cbor", d)
    );
    let e = item("e", json!({}));
    let headers = [
        ("Content-Type", "application/cbor"),
        ("Accept", "application/json"),
    ];
    let created = both.send("POST", "/items", &headers, &go_cbor(&e));
    assert_eq!(
        (created.content_type(), created.value()),
        ("application/json", e)
    );
}

#[test]
fn malformed_cbor_is_400() {
    let both = Both::start();
    let cases = [
        // {"metadata": {"name": "a", "name": "b"}}: a duplicate key.
        (
            "duplicate key",
            hex("a1 48 6d65746164617461 a2 44 6e616d65 41 61 44 6e616d65 41 62"),
        ),
        // The same key once as a byte string and once as a text string is still a duplicate.
        (
            "byte/text duplicate",
            hex("a2 44 6b696e64 41 61 64 6b696e64 61 62"),
        ),
        // A text string that is not UTF-8.
        (
            "bad UTF-8",
            hex("a1 68 6d65746164617461 a1 64 6e616d65 62 c328"),
        ),
        ("trailing bytes", hex("a0 00")),
        ("truncated", hex("a1 48 6d657461")),
        ("empty body", Vec::new()),
    ];
    for (what, body) in cases {
        let reply = both.cbor("POST", "/items", "application/cbor", &body);
        assert_eq!(reply.content_type(), "application/cbor", "{what}");
        reply.assert_status(400, "BadRequest");
    }
    // Nothing was stored.
    let list = both.send("GET", "/items", &[], b"").value();
    assert_eq!(list["items"], json!([]), "{list}");
}

#[test]
fn accept_negotiation() {
    let both = Both::start();
    both.json("POST", "/items", &item("a", json!({})));

    // No Accept, */*, application/*: JSON (the server's first choice).
    for accept in [
        None,
        Some("*/*"),
        Some("application/*"),
        Some("application/json"),
    ] {
        let headers: Vec<_> = accept.map(|a| ("Accept", a)).into_iter().collect();
        let reply = both.send("GET", "/items/a", &headers, b"");
        assert_eq!(
            (reply.status, reply.content_type()),
            (200, "application/json"),
            "{accept:?}"
        );
    }
    // kubectl with CBOR enabled: the type it names beats the wildcard.
    for accept in [
        "application/cbor, */*",
        "application/json;q=0.9,application/cbor;q=1",
        "APPLICATION/CBOR",
        "text/html, application/cbor;q=0.5",
    ] {
        let reply = both.send("GET", "/items/a", &[("Accept", accept)], b"");
        assert_eq!(
            (reply.status, reply.content_type()),
            (200, "application/cbor"),
            "{accept}"
        );
        assert_eq!(reply.value()["metadata"]["name"], "a");
    }

    // Nothing acceptable: 406, an indented JSON Status listing what there is.
    for accept in [
        "text/html",
        "application/cbor;q=0, application/json;q=0",
        "application/yaml",
    ] {
        let reply = both.send("GET", "/items/a", &[("Accept", accept)], b"");
        assert_eq!(reply.content_type(), "application/json");
        assert!(
            reply.body.starts_with(b"{\n  \""),
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        let status = reply.assert_status(406, "NotAcceptable");
        assert!(
            status["message"]
                .as_str()
                .unwrap()
                .ends_with("application/json, application/cbor"),
            "{status}"
        );
    }
    // 406 comes before the route runs: even for a create, nothing is stored.
    let body = serde_json::to_vec(&item("x", json!({}))).unwrap();
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "text/html"),
    ];
    both.send("POST", "/items", &headers, &body)
        .assert_status(406, "NotAcceptable");
    both.send("GET", "/items/x", &[], b"")
        .assert_status(404, "NotFound");
}

#[test]
fn unsupported_content_type_is_415_with_accept() {
    let both = Both::start();
    let body = serde_json::to_vec(&item("a", json!({}))).unwrap();
    for content_type in [
        "text/plain",
        "application/yaml",
        "application/cbor-seq",
        "application/merge-patch+json",
    ] {
        let reply = both.send("POST", "/items", &[("Content-Type", content_type)], &body);
        let status = reply.assert_status(415, "UnsupportedMediaType");
        assert_eq!(
            reply.header("accept"),
            Some("application/json, application/cbor")
        );
        assert_eq!(reply.header("accept-patch"), None);
        assert!(
            status["message"]
                .as_str()
                .unwrap()
                .contains("application/json, application/cbor")
        );
    }
    // In the negotiated format: CBOR for a CBOR client.
    let headers = [
        ("Content-Type", "text/plain"),
        ("Accept", "application/cbor"),
    ];
    let reply = both.send("PUT", "/items/a", &headers, &body);
    assert_eq!(reply.content_type(), "application/cbor");
    reply.assert_status(415, "UnsupportedMediaType");

    // PATCH takes exactly the three patch types, and says so in Accept-Patch.
    both.json("POST", "/items", &item("a", json!({})));
    let patch_types =
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+cbor";
    for content_type in [
        Some("application/json"),
        Some("application/strategic-merge-patch+json"),
        Some("application/apply-patch+yaml"),
        Some("application/cbor"),
        None,
    ] {
        let headers: Vec<_> = content_type
            .map(|c| ("Content-Type", c))
            .into_iter()
            .collect();
        let reply = both.send("PATCH", "/items/a", &headers, br#"{"spec":1}"#);
        reply.assert_status(415, "UnsupportedMediaType");
        assert_eq!(
            reply.header("accept-patch"),
            Some(patch_types),
            "{content_type:?}"
        );
        assert_eq!(reply.header("accept"), Some(patch_types));
    }
}

#[test]
fn oversized_bodies_are_413() {
    let both = Both::start();
    // Declared: rejected from the headers, before the body is read.
    let headers = [
        ("Content-Type", "application/json"),
        ("Content-Length", "3145729"),
    ];
    let reply = both.send("POST", "/items", &headers, b"");
    let status = reply.assert_status(413, "RequestEntityTooLarge");
    assert!(status["message"].is_string());
    let headers = [
        ("Content-Type", "application/cbor"),
        ("Accept", "application/cbor"),
        ("Content-Length", "9999999"),
    ];
    let reply = both.send("PUT", "/items/a", &headers, b"");
    assert_eq!(reply.content_type(), "application/cbor");
    reply.assert_status(413, "RequestEntityTooLarge");

    // Chunked, without a declared length: limited while it is read.
    let mut body = Vec::new();
    let chunk = vec![b' '; 64 * 1024];
    for _ in 0..=LIMIT / chunk.len() {
        body.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        body.extend_from_slice(&chunk);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"0\r\n\r\n");
    let headers = [
        ("Content-Type", "application/json"),
        ("Transfer-Encoding", "chunked"),
    ];
    both.send("POST", "/items", &headers, &body)
        .assert_status(413, "RequestEntityTooLarge");
    // Just under the limit is read (and is not JSON: 400).
    let under = vec![b' '; LIMIT];
    both.send(
        "POST",
        "/items",
        &[("Content-Type", "application/json")],
        &under,
    )
    .assert_status(400, "BadRequest");
}

#[test]
fn patches() {
    let both = Both::start();
    both.json(
        "POST",
        "/items",
        &item("a", json!({"size": 1, "color": "red"})),
    );
    let merge = [("Content-Type", "application/merge-patch+json")];

    // RFC 7396: null deletes, objects merge.
    let reply = both.send(
        "PATCH",
        "/items/a",
        &merge,
        br#"{"spec":{"color":null,"shape":"round"}}"#,
    );
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.value(),
        item("a", json!({"size": 1, "shape": "round"}))
    );

    // RFC 6902, every operation, with JSON Pointer escaping (~1 is "/", ~0 is "~").
    let ops = json!([
        {"op": "add", "path": "/metadata/labels", "value": {}},
        {"op": "add", "path": "/metadata/labels/example.com~1tier", "value": "web"},
        {"op": "add", "path": "/metadata/labels/a~0b", "value": "tilde"},
        {"op": "test", "path": "/spec/size", "value": 1},
        {"op": "replace", "path": "/spec/size", "value": 2},
        {"op": "copy", "from": "/spec/shape", "path": "/spec/old"},
        {"op": "move", "from": "/spec/old", "path": "/spec/previous"},
        {"op": "remove", "path": "/spec/shape"},
        {"op": "add", "path": "/spec/list", "value": [1, 3]},
        {"op": "add", "path": "/spec/list/1", "value": 2},
        {"op": "add", "path": "/spec/list/-", "value": 4}
    ]);
    let json_patch = [("Content-Type", "application/json-patch+json")];
    let reply = both.send(
        "PATCH",
        "/items/a",
        &json_patch,
        &serde_json::to_vec(&ops).unwrap(),
    );
    let mut want = item(
        "a",
        json!({"size": 2, "previous": "round", "list": [1, 2, 3, 4]}),
    );
    want["metadata"]["labels"] = json!({"example.com/tier": "web", "a~b": "tilde"});
    assert_eq!((reply.status, reply.value()), (200, want.clone()));

    // A failed test is 422 Invalid (as Kubernetes), and nothing of the patch is applied.
    let failing = json!([
        {"op": "replace", "path": "/spec/size", "value": 3},
        {"op": "test", "path": "/spec/size", "value": 1}
    ]);
    both.send(
        "PATCH",
        "/items/a",
        &json_patch,
        &serde_json::to_vec(&failing).unwrap(),
    )
    .assert_status(422, "Invalid");
    let missing_path = json!([{"op": "remove", "path": "/spec/nope"}]);
    both.send(
        "PATCH",
        "/items/a",
        &json_patch,
        &serde_json::to_vec(&missing_path).unwrap(),
    )
    .assert_status(422, "Invalid");
    assert_eq!(both.send("GET", "/items/a", &[], b"").value(), want);
    // A body that is not JSON is 400.
    both.send("PATCH", "/items/a", &json_patch, b"[{")
        .assert_status(400, "BadRequest");

    // Server-side apply in CBOR, Go-style, applied as a merge; the answer is CBOR.
    let apply = go_cbor(&json!({"spec": {"size": 5}, "metadata": {"name": "a"}}));
    let reply = both.cbor("PATCH", "/items/a", "application/apply-patch+cbor", &apply);
    assert_eq!(
        (reply.status, reply.content_type()),
        (200, "application/cbor")
    );
    assert_eq!(reply.value()["spec"]["size"], 5);
    assert_eq!(reply.value()["spec"]["previous"], "round");
    // ... without the tag, and with a duplicate key (400).
    let reply = both.cbor(
        "PATCH",
        "/items/a",
        "application/apply-patch+cbor",
        &apply[3..],
    );
    assert_eq!(reply.status, 200);
    let duplicate = hex("a2 44 73706563 a0 64 73706563 a0");
    both.cbor(
        "PATCH",
        "/items/a",
        "application/apply-patch+cbor",
        &duplicate,
    )
    .assert_status(400, "BadRequest");

    // The name cannot change, and a missing item is 404.
    both.send("PATCH", "/items/a", &merge, br#"{"metadata":{"name":"b"}}"#)
        .assert_status(400, "BadRequest");
    both.send("PATCH", "/items/zz", &merge, br#"{"spec":{}}"#)
        .assert_status(404, "NotFound");
}

#[test]
fn routing_errors_are_statuses() {
    let both = Both::start();
    both.send("GET", "/nothing", &[], b"")
        .assert_status(404, "NotFound");
    both.send("GET", "/items/a/b", &[("Accept", "application/cbor")], b"")
        .assert_status(404, "NotFound");
    let reply = both.send("DELETE", "/items", &[], b"");
    reply.assert_status(405, "MethodNotAllowed");
    assert_eq!(reply.header("allow"), Some("GET,HEAD,POST"));
    let reply = both.send(
        "POST",
        "/items/a",
        &[("Content-Type", "application/json")],
        b"{}",
    );
    reply.assert_status(405, "MethodNotAllowed");
    assert_eq!(reply.header("allow"), Some("GET,HEAD,PUT,DELETE,PATCH"));
    // Names in paths are percent-decoded (axum's `Path` does it; hyper-items does the same),
    // and an escape that is not UTF-8 names nothing: the unknown-path 404, in the Status format.
    for method in ["GET", "DELETE"] {
        let reply = both.send(method, "/items/%ff", &[("Accept", "application/cbor")], b"");
        reply.assert_status(404, "NotFound");
        assert_eq!(reply.content_type(), "application/cbor");
    }
    let spaced = json!({"metadata": {"name": "a b"}});
    assert_eq!(both.json("POST", "/items", &spaced).status, 201);
    let got = both.send("GET", "/items/a%20b", &[], b"");
    assert_eq!((got.status, got.value()), (200, spaced));
    // HEAD: the GET headers, no body.
    both.json("POST", "/items", &item("a", json!({})));
    let head = both.send("HEAD", "/items/a", &[], b"");
    assert_eq!(
        (head.status, head.content_type(), head.body.len()),
        (200, "application/json", 0)
    );
}
