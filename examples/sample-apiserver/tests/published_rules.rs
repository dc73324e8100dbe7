//! What the server publishes is what it enforces, in every version: each
//! `x-kubernetes-validations` rule and each value validation (`enum`, lengths, patterns...)
//! of `FlunderSpec` in `/openapi/v3/apis/wardle.example.com/<version>` has an object below
//! that breaks it and nothing else, and the server's 422 for that object carries exactly that
//! rule's cause: its `fieldPath`, its `reason`, its `message`. A published rule or keyword
//! without an entry here fails the test, so the table must follow the declaration.

mod common;

use common::{Server, flunders, tempdir};
use serde_json::{Value, json};

/// The spec of `version` that breaks exactly the rule `rule`.
fn breaking(version: &str, rule: &str) -> Value {
    match (version, rule) {
        ("v1beta1", "!(has(self.flunderReference) && has(self.fischerReference))") => {
            json!({"flunderReference": "a", "fischerReference": "b", "referenceType": "Flunder"})
        }
        (
            "v1beta1",
            "!has(self.flunderReference) || has(self.fischerReference) || (has(self.referenceType) && self.referenceType == 'Flunder')",
        ) => json!({"flunderReference": "a"}),
        (
            "v1beta1",
            "!has(self.fischerReference) || has(self.flunderReference) || (has(self.referenceType) && self.referenceType == 'Fischer')",
        ) => json!({"fischerReference": "b"}),
        (
            "v1beta1",
            "!has(self.referenceType) || self.referenceType != 'Fischer' || has(self.fischerReference) || has(self.flunderReference)",
        )
        | (
            "v1alpha1",
            "!has(self.referenceType) || self.referenceType != 'Fischer' || has(self.reference)",
        ) => json!({"referenceType": "Fischer"}),
        (
            "v1beta1",
            "!has(self.referenceType) || self.referenceType != 'Flunder' || has(self.flunderReference) || has(self.fischerReference)",
        )
        | (
            "v1alpha1",
            "!has(self.referenceType) || self.referenceType != 'Flunder' || has(self.reference)",
        ) => json!({"referenceType": "Flunder"}),
        other => panic!("a published rule with no breaking object in this test: {other:?}"),
    }
}

/// A value of a property with `schema` that breaks its value validation `keyword`, and the
/// cause message the server must answer with.
fn breaking_value(keyword: &str, schema: &Value) -> (Value, String) {
    match keyword {
        "enum" => {
            let supported: Vec<String> = schema["enum"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| format!("{v}"))
                .collect();
            (
                json!("NotInTheEnum"),
                format!(
                    r#"Unsupported value: "NotInTheEnum": supported values: {}"#,
                    supported.join(", ")
                ),
            )
        }
        "maxLength" => {
            let max = schema["maxLength"].as_u64().unwrap();
            (
                json!("a".repeat(max as usize + 1)),
                format!("Too long: may not be more than {max} bytes"),
            )
        }
        other => {
            panic!("a published value validation with no breaking value in this test: {other}")
        }
    }
}

const VALUE_KEYWORDS: &[&str] = &[
    "enum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
];

fn create(server: &Server, version: &str, i: usize, spec: Value) -> Vec<Value> {
    let body = json!({
        "apiVersion": format!("wardle.example.com/{version}"),
        "kind": "Flunder",
        "metadata": {"name": format!("breaks-{version}-{i}")},
        "spec": spec,
    });
    let resp = server.post_json(&flunders(version, "default"), &body.to_string());
    assert_eq!(resp.code, 422, "{body}: {}", resp.text());
    resp.json()["details"]["causes"].as_array().unwrap().clone()
}

#[test]
fn every_published_rule_is_enforced_with_its_cause() {
    let dir = tempdir();
    let server = Server::start(dir.path(), &["--storage", "memory"]);
    for version in ["v1alpha1", "v1beta1"] {
        let doc = server
            .get(
                &format!("/openapi/v3/apis/wardle.example.com/{version}"),
                "application/json",
            )
            .json();
        let spec = &doc["components"]["schemas"]
            [&format!("io.k8s.sample-apiserver.pkg.apis.wardle.{version}.FlunderSpec")];
        let rules = spec["x-kubernetes-validations"]
            .as_array()
            .expect("published rules");
        assert!(rules.len() >= 2, "{rules:?}");
        for (i, rule) in rules.iter().enumerate() {
            let text = rule["rule"].as_str().unwrap();
            let causes = create(&server, version, i, breaking(version, text));
            assert_eq!(causes.len(), 1, "{text}: {causes:?}");
            let field = format!("spec{}", rule["fieldPath"].as_str().unwrap());
            assert_eq!(causes[0]["field"], field.as_str(), "{text}");
            assert_eq!(causes[0]["reason"], rule["reason"], "{text}");
            let want = format!(
                r#"Invalid value: "object": {}"#,
                rule["message"].as_str().unwrap()
            );
            assert_eq!(causes[0]["message"], want.as_str(), "{text}");
        }
        let mut checked = 0;
        for (name, prop) in spec["properties"].as_object().unwrap() {
            for keyword in VALUE_KEYWORDS.iter().filter(|k| prop.get(**k).is_some()) {
                let (value, message) = breaking_value(keyword, prop);
                let causes = create(&server, version, 100 + checked, json!({ name: value }));
                let field = format!("spec.{name}");
                let cause = causes
                    .iter()
                    .find(|c| c["field"] == field.as_str())
                    .unwrap_or_else(|| panic!("{field} {keyword}: {causes:?}"));
                assert_eq!(cause["message"], message.as_str(), "{field} {keyword}");
                // Anything else is kube-apiserver's note that CEL did not run on a wrong shape.
                for other in causes.iter().filter(|c| c["field"] != field.as_str()) {
                    assert_eq!(other["field"], "<nil>", "{field} {keyword}: {causes:?}");
                }
                checked += 1;
            }
        }
        assert!(checked >= 1, "{version}: the enum is published");
    }
}
