//! What the server publishes is what it enforces (v1beta1): every `x-kubernetes-validations`
//! rule in `/openapi/v3/apis/wardle.example.com/v1beta1` has an object below that breaks that
//! rule and no other, and the server's 422 for it has exactly one cause, at the rule's
//! `fieldPath`, with its `reason` and `message`. A rule published without an entry here fails
//! the test, so the table must follow the schema.
//!
//! v1alpha1 is not held to this yet: its rules are checked after conversion to the internal
//! version, as upstream's sample-apiserver does, so an unknown `referenceType` is dropped by
//! conversion instead of refused, and a type without a reference is reported at the internal
//! path (`spec.flunderReference`), not the published `.reference` (issue 15 moves validation
//! onto the versioned types).

mod common;

use common::{Server, flunders, tempdir};
use serde_json::{Value, json};

/// The v1beta1 spec that breaks exactly the rule `rule`.
fn breaking(rule: &str) -> Value {
    match rule {
        "!(has(self.flunderReference) && has(self.fischerReference))" => {
            json!({"flunderReference": "a", "fischerReference": "b", "referenceType": "Flunder"})
        }
        "!has(self.flunderReference) || (has(self.referenceType) && self.referenceType == 'Flunder')" =>
        {
            json!({"flunderReference": "a"})
        }
        "!has(self.fischerReference) || (has(self.referenceType) && self.referenceType == 'Fischer')" =>
        {
            json!({"fischerReference": "b"})
        }
        "!has(self.referenceType) || self.referenceType != 'Fischer' || has(self.fischerReference)" =>
        {
            json!({"referenceType": "Fischer"})
        }
        "!has(self.referenceType) || self.referenceType != 'Flunder' || has(self.flunderReference)" =>
        {
            json!({"referenceType": "Flunder"})
        }
        "!has(self.referenceType) || self.referenceType in ['Flunder', 'Fischer']" => {
            json!({"referenceType": "Bogus"})
        }
        other => panic!("a published rule with no breaking object in this test: {other}"),
    }
}

#[test]
fn every_published_v1beta1_rule_is_enforced_with_its_cause() {
    let dir = tempdir();
    let server = Server::start(dir.path(), &["--storage", "memory"]);
    let doc = server
        .get(
            "/openapi/v3/apis/wardle.example.com/v1beta1",
            "application/json",
        )
        .json();
    let spec = &doc["components"]["schemas"]["io.k8s.sample-apiserver.pkg.apis.wardle.v1beta1.FlunderSpec"];
    let rules = spec["x-kubernetes-validations"]
        .as_array()
        .expect("published rules");
    assert_eq!(rules.len(), 6, "{rules:?}");
    for (i, rule) in rules.iter().enumerate() {
        let text = rule["rule"].as_str().unwrap();
        let body = json!({
            "apiVersion": "wardle.example.com/v1beta1",
            "kind": "Flunder",
            "metadata": {"name": format!("breaks-{i}")},
            "spec": breaking(text),
        });
        let resp = server.post_json(&flunders("v1beta1", "default"), &body.to_string());
        assert_eq!(resp.code, 422, "{text}: {}", resp.text());
        let causes = resp.json()["details"]["causes"].clone();
        let causes = causes.as_array().unwrap();
        assert_eq!(causes.len(), 1, "{text}: {causes:?}");
        let field = format!("spec{}", rule["fieldPath"].as_str().unwrap());
        assert_eq!(causes[0]["field"], field.as_str(), "{text}");
        assert_eq!(causes[0]["reason"], rule["reason"], "{text}");
        let message = causes[0]["message"].as_str().unwrap();
        let want = rule["message"].as_str().unwrap();
        assert!(message.ends_with(want), "{text}: {message:?} vs {want:?}");
    }
}
