//! Server-side apply over HTTP: ownership recorded in `managedFields`, conflicts between
//! managers (409 with Kubernetes' message and causes), `force`, removal of fields a manager
//! stops applying, and the `Update` entries of other writes.

mod common;

use common::{Resp, Server, flunders, tempdir};
use serde_json::{Value, json};

fn server() -> (Server, tempfile::TempDir) {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    (s, dir)
}

fn path(name: &str) -> String {
    format!("{}/{name}", flunders("v1beta1", "default"))
}

fn apply(s: &Server, query: &str, config: &Value) -> Resp {
    s.req(
        "PATCH",
        &format!(
            "{}?{query}",
            path(config["metadata"]["name"].as_str().unwrap())
        ),
        &[("Content-Type", "application/apply-patch+yaml")],
        config.to_string().as_bytes(),
    )
}

/// A configuration of Flunder `f`; a `null` spec is left out (an empty one would be
/// applied, and owned, as `f:spec`).
fn config(labels: Value, spec: Value) -> Value {
    let mut c = json!({
        "apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
        "metadata": {"name": "f", "labels": labels}
    });
    if !spec.is_null() {
        c["spec"] = spec;
    }
    c
}

/// `manager -> fieldsV1` of an object.
fn owners(obj: &Value) -> Vec<(String, String, Value)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap().to_owned(),
                e["operation"].as_str().unwrap().to_owned(),
                e["fieldsV1"].clone(),
            )
        })
        .collect()
}

#[test]
fn apply_records_ownership_and_conflicts_between_managers() {
    let (s, _d) = server();
    let spec = json!({"flunderReference": "x", "referenceType": "Flunder"});
    let r = apply(
        &s,
        "fieldManager=alice",
        &config(json!({"a": "1"}), spec.clone()),
    );
    assert_eq!(r.code, 201, "{}", r.text());
    assert_eq!(
        owners(&r.json()),
        [(
            "alice".to_owned(),
            "Apply".to_owned(),
            json!({"f:metadata": {"f:labels": {"f:a": {}}},
                   "f:spec": {"f:flunderReference": {}, "f:referenceType": {}}})
        )]
    );

    // Bob applies another value for alice's label: a conflict, nothing changes.
    let r = apply(
        &s,
        "fieldManager=bob",
        &config(json!({"a": "2"}), Value::Null),
    );
    assert_eq!(r.code, 409, "{}", r.text());
    let st = r.json();
    assert_eq!(st["reason"], "Conflict");
    assert_eq!(
        st["message"],
        "Apply failed with 1 conflict: conflict with \"alice\": .metadata.labels.a"
    );
    assert_eq!(
        st["details"]["causes"],
        json!([{"reason": "FieldManagerConflict",
                "message": "conflict with \"alice\"",
                "field": ".metadata.labels.a"}])
    );
    let got = s.get(&path("f"), "application/json").json();
    assert_eq!(got["metadata"]["labels"]["a"], "1");

    // The same value is shared ownership, not a conflict.
    let r = apply(
        &s,
        "fieldManager=carol",
        &config(json!({"a": "1"}), Value::Null),
    );
    assert_eq!(r.code, 200, "{}", r.text());

    // With force, bob takes the label from both.
    let r = apply(
        &s,
        "fieldManager=bob&force=true",
        &config(json!({"a": "2"}), Value::Null),
    );
    assert_eq!(r.code, 200, "{}", r.text());
    let obj = r.json();
    assert_eq!(obj["metadata"]["labels"]["a"], "2");
    let mut managers: Vec<_> = owners(&obj).into_iter().map(|(m, _, f)| (m, f)).collect();
    managers.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        managers,
        [
            (
                "alice".to_owned(),
                json!({"f:spec": {"f:flunderReference": {}, "f:referenceType": {}}})
            ),
            (
                "bob".to_owned(),
                json!({"f:metadata": {"f:labels": {"f:a": {}}}})
            ),
        ],
        "carol owned nothing more and is gone"
    );
}

#[test]
fn a_field_no_longer_applied_is_removed_unless_someone_else_owns_it() {
    let (s, _d) = server();
    let full = json!({"flunderReference": "x", "referenceType": "Flunder"});
    assert_eq!(
        apply(
            &s,
            "fieldManager=alice",
            &config(json!({"a": "1", "b": "1"}), full)
        )
        .code,
        201
    );
    // Bob co-owns label b.
    assert_eq!(
        apply(
            &s,
            "fieldManager=bob",
            &config(json!({"b": "1"}), Value::Null)
        )
        .code,
        200
    );
    // Alice stops applying the whole spec and both labels (a spec with a type and no
    // reference would be invalid: updates are validated too).
    let r = apply(&s, "fieldManager=alice", &config(json!({}), json!({})));
    assert_eq!(r.code, 200, "{}", r.text());
    let obj = r.json();
    assert_eq!(obj["spec"], json!({}));
    assert_eq!(obj["metadata"]["labels"], json!({"b": "1"}));
}

#[test]
fn other_writes_record_update_entries() {
    let (s, _d) = server();
    let spec = json!({"flunderReference": "x", "referenceType": "Flunder"});
    assert_eq!(
        apply(&s, "fieldManager=alice", &config(json!({"a": "1"}), spec)).code,
        201
    );
    // A merge patch without fieldManager is owned by the User-Agent's product.
    let r = s.req(
        "PATCH",
        &path("f"),
        &[
            ("Content-Type", "application/merge-patch+json"),
            ("User-Agent", "my-controller/1.2 (linux)"),
        ],
        br#"{"metadata":{"labels":{"b":"2"}}}"#,
    );
    assert_eq!(r.code, 200, "{}", r.text());
    let last = owners(&r.json()).pop().unwrap();
    assert_eq!(
        last,
        (
            "my-controller".to_owned(),
            "Update".to_owned(),
            json!({"f:metadata": {"f:labels": {"f:b": {}}}})
        )
    );
    // Changing alice's label by an update takes it from her, without a conflict.
    let r = s.req(
        "PATCH",
        &format!("{}?fieldManager=editor", path("f")),
        &[("Content-Type", "application/merge-patch+json")],
        br#"{"metadata":{"labels":{"a":"9"}}}"#,
    );
    assert_eq!(r.code, 200, "{}", r.text());
    let alice = owners(&r.json())
        .into_iter()
        .find(|(m, _, _)| m == "alice")
        .unwrap();
    assert_eq!(
        alice.2,
        json!({"f:spec": {"f:flunderReference": {}, "f:referenceType": {}}})
    );
}

#[test]
fn apply_refuses_what_kubernetes_refuses() {
    let (s, _d) = server();
    let spec = json!({"referenceType": "Flunder"});
    // No fieldManager.
    let r = apply(&s, "", &config(json!({}), spec.clone()));
    assert_eq!(r.code, 422, "{}", r.text());
    assert_eq!(
        r.json()["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    // managedFields in the configuration.
    let mut c = config(json!({}), spec);
    c["metadata"]["managedFields"] = json!([{"manager": "x"}]);
    let r = apply(&s, "fieldManager=alice", &c);
    assert_eq!(r.code, 400, "{}", r.text());
    assert_eq!(r.json()["message"], "metadata.managedFields must be nil");
}
