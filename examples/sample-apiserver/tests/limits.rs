//! Requests that must not grow the server or its answers: names beyond Kubernetes' rules are
//! refused before storage, and errors quote long input only in part.

mod common;

use common::{Server, flunders, tempdir};
use serde_json::json;

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

fn flunder(meta: serde_json::Value) -> String {
    json!({
        "apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder", "metadata": meta,
    })
    .to_string()
}

#[test]
fn names_follow_the_dns_subdomain_rule() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    let url = flunders("v1beta1", "default");

    let longest = "a".repeat(253);
    let r = s.post_json(&url, &flunder(json!({"name": longest})));
    assert_eq!(r.code, 201, "{}", r.text());

    let too_long = "a".repeat(254);
    let r = s.post_json(&url, &flunder(json!({"name": too_long})));
    assert_eq!(r.code, 422, "{}", r.text());
    let body = r.json();
    assert_eq!(
        body["message"],
        format!(
            "Flunder.wardle.example.com \"{too_long}\" is invalid: metadata.name: Invalid value: \"{too_long}\": must be no more than 253 characters"
        )
    );
    assert_eq!(body["details"]["causes"][0]["reason"], "FieldValueInvalid");
    assert_eq!(body["details"]["causes"][0]["field"], "metadata.name");

    let r = s.post_json(&url, &flunder(json!({"name": "Not_A_Name"})));
    assert_eq!(r.code, 422, "{}", r.text());
    assert_eq!(
        r.json()["details"]["causes"][0]["message"],
        format!("Invalid value: \"Not_A_Name\": {SUBDOMAIN_MSG}")
    );

    // generateName: the prefix is checked (a trailing '-' is fine), the generated name is
    // cut to 63 characters.
    let r = s.post_json(
        &url,
        &flunder(json!({"generateName": format!("{}-", "g".repeat(100))})),
    );
    assert_eq!(r.code, 201, "{}", r.text());
    assert_eq!(r.json()["metadata"]["name"].as_str().unwrap().len(), 63);
    let prefix = "g".repeat(300);
    let r = s.post_json(&url, &flunder(json!({"generateName": prefix})));
    assert_eq!(r.code, 422, "{}", r.text());
    assert_eq!(
        r.json()["details"]["causes"][0],
        json!({
            "reason": "FieldValueInvalid",
            "message": format!("Invalid value: \"{prefix}\": must be no more than 253 characters"),
            "field": "metadata.generateName",
        })
    );

    // A name or namespace no object can have is not found, without a storage lookup; the
    // answer quotes it only in part.
    let huge = "n".repeat(60_000);
    let r = s.get(&format!("{url}/{huge}"), "application/json");
    assert_eq!(r.code, 404, "{}", r.text());
    assert!(r.body.len() < 4096, "{} bytes", r.body.len());
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains(" bytes omitted)...")
    );
    let r = s.get(
        &format!("{}/x", flunders("v1beta1", &"n".repeat(64))),
        "application/json",
    );
    assert_eq!(r.code, 404, "{}", r.text());
    let r = s.req("DELETE", &format!("{url}/{}", "a".repeat(254)), &[], b"");
    assert_eq!(r.code, 404, "{}", r.text());

    // Nothing but the one valid object was stored.
    let list = s.get(&url, "application/json").json();
    assert_eq!(list["items"].as_array().unwrap().len(), 2, "{list}");
}

#[test]
fn errors_quote_long_input_in_part() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    let url = flunders("v1beta1", "default");

    // A 3 MB string (under the 3 MiB body limit) where an object is expected: CBOR and JSON
    // decoders quote it.
    let huge = "s".repeat(3_000_000);
    let cbor = conneg_cbor::to_vec(&json!({
        "apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
        "metadata": {"name": "a"}, "spec": huge,
    }))
    .unwrap();
    let r = s.req(
        "POST",
        &url,
        &[
            ("Content-Type", "application/cbor"),
            ("Accept", "application/json"),
        ],
        &cbor,
    );
    assert_eq!(
        r.code,
        400,
        "{}",
        String::from_utf8_lossy(&r.body[..r.body.len().min(300)])
    );
    assert!(r.body.len() < 8192, "{} bytes", r.body.len());
    let r = s.post_json(&url, &flunder(json!({"name": "a", "labels": huge})));
    assert_eq!(r.code, 400);
    assert!(r.body.len() < 8192, "{} bytes", r.body.len());

    // A 2 MiB name in a body: 422, small.
    let r = s.post_json(&url, &flunder(json!({"name": "a".repeat(2 << 20)})));
    assert_eq!(r.code, 422);
    assert!(r.body.len() < 8192, "{} bytes", r.body.len());
}

/// The 751-byte JSON patch of issue 12: twenty copies of the whole document into itself. It
/// took 589 MB at 18 operations and aborted the process at 20; now it is refused (Kubernetes
/// refuses `from: ""`) and so is the same bomb through a member, which is bounded by the bytes
/// copied. The server answers others afterwards.
#[test]
fn the_json_patch_copy_bomb_is_refused() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    let coll = flunders("v1beta1", "default");
    let created = s.post_json(&coll, &flunder(json!({"name": "bomb"})));
    assert_eq!(created.code, 201, "{}", created.text());
    let from_root: Vec<_> = (0..20)
        .map(|i| json!({"op": "copy", "from": "", "path": format!("/a{i}")}))
        .collect();
    let through_member: Vec<_> = (0..20)
        .map(|i| json!({"op": "copy", "from": "/metadata", "path": format!("/metadata/x{i}")}))
        .collect();
    for ops in [from_root, through_member] {
        let body = serde_json::to_vec(&ops).unwrap();
        assert!(body.len() < 2048);
        let r = s.req(
            "PATCH",
            &format!("{coll}/bomb"),
            &[("Content-Type", "application/json-patch+json")],
            &body,
        );
        assert_eq!(r.code, 422, "{}", r.text());
        assert_eq!(r.json()["reason"], "Invalid");
    }
    assert_eq!(s.get(&format!("{coll}/bomb"), "application/json").code, 200);
    assert_eq!(s.get("/readyz", "*/*").code, 200);
}
