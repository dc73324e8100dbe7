//! Declarative validation, rule kind by rule kind: a type declares its rules with schemars'
//! attributes, the published schema carries them, and the validator compiled from that schema
//! answers as kube-apiserver answers for a custom resource with the same schema.

use std::collections::BTreeMap;

use conneg_apiserver::declarative::{JsonSchema, ListType, Validator, published};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// An item of a map list.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Port {
    name: String,
    #[schemars(range(min = 1, max = 65535))]
    port: i64,
}

/// Every rule kind once.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",
     "messageExpression": "'minReplicas (' + string(self.minReplicas) + ') may not exceed maxReplicas'",
     "fieldPath": ".minReplicas"},
    {"rule": "!has(self.mode) || self.mode != 'Locked' || !has(self.tags)",
     "message": "a locked widget has no tags", "reason": "FieldValueForbidden", "fieldPath": ".tags"},
]))]
struct Spec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 2, max = 8))]
    title: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(extend("format" = "dns1123label"))]
    host: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(regex(pattern = r"^v[0-9]+$"))]
    version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    min_replicas: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 10))]
    max_replicas: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["Open", "Locked"]))]
    mode: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 3), extend("x-kubernetes-list-type" = "set"))]
    tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    #[schemars(length(max = 4))]
    ports: Vec<Port>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 2))]
    labels: BTreeMap<String, String>,
    /// Immutable once set.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 64), extend("x-kubernetes-validations" = [
        {"rule": "self == oldSelf", "message": "is immutable"}]))]
    class: String,
    required_name: String,
}

fn validator() -> Validator {
    let schemas = published::<Spec>(|n| format!("t.{n}"));
    Validator::compile(&schemas, "t.Spec").unwrap()
}

fn errors(v: &Validator, obj: Value, old: Option<Value>) -> Vec<String> {
    v.validate(&obj, old.as_ref())
        .iter()
        .map(|e| format!("{} [{}]", e, e.error_type.as_reason()))
        .collect()
}

fn ok() -> Value {
    json!({"requiredName": "x"})
}

fn with(extra: Value) -> Value {
    let mut o = ok();
    o.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    o
}

const NOT_CHECKED: &str = "<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation [FieldValueInvalid]";

#[test]
fn the_published_schema_carries_the_declaration() {
    let schemas = published::<Spec>(|n| format!("t.{n}"));
    let s = &schemas["t.Spec"];
    assert_eq!(s["properties"]["title"]["maxLength"], 8);
    assert_eq!(s["properties"]["host"]["format"], "dns1123label");
    assert_eq!(
        s["properties"]["ports"]["x-kubernetes-list-map-keys"],
        json!(["name"])
    );
    assert_eq!(
        s["properties"]["ports"]["items"]["$ref"],
        "#/components/schemas/t.Port"
    );
    assert_eq!(s["required"], json!(["requiredName"]));
    assert_eq!(s["x-kubernetes-validations"].as_array().unwrap().len(), 2);
    assert!(
        s["properties"]["mode"]["description"]
            .as_str()
            .unwrap()
            .contains("Possible enum values")
    );
    assert!(s["properties"]["minReplicas"].get("nullable").is_none());
    assert_eq!(schemas["t.Port"]["properties"]["port"]["maximum"], 65535);
}

#[test]
fn value_validations_answer_in_kubernetes_words() {
    let v = validator();
    assert!(errors(&v, ok(), None).is_empty());
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"title": "a"}),
            vec![
                r#"title: Invalid value: "a": should be at least 2 chars long [FieldValueInvalid]"#,
            ],
        ),
        (
            json!({"title": "abcdefghi"}),
            vec![
                "title: Too long: may not be more than 8 bytes [FieldValueTooLong]",
                NOT_CHECKED,
            ],
        ),
        (
            json!({"host": "Bad_Host"}),
            vec![
                r#"host: Invalid value: "Bad_Host": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?') [FieldValueInvalid]"#,
            ],
        ),
        (
            json!({"version": "1"}),
            vec![r#"version: Invalid value: "1": should match '^v[0-9]+$' [FieldValueInvalid]"#],
        ),
        (
            json!({"minReplicas": -1}),
            vec![
                "minReplicas: Invalid value: -1: should be greater than or equal to 0 [FieldValueInvalid]",
            ],
        ),
        (
            json!({"maxReplicas": 11}),
            vec![
                "maxReplicas: Invalid value: 11: should be less than or equal to 10 [FieldValueInvalid]",
            ],
        ),
        (
            json!({"mode": "Ajar"}),
            vec![
                r#"mode: Unsupported value: "Ajar": supported values: "Locked", "Open" [FieldValueNotSupported]"#,
                NOT_CHECKED,
            ],
        ),
        (
            json!({"tags": ["a", "b", "c", "d"]}),
            vec![
                "tags: Too many: 4: must have at most 3 items [FieldValueTooMany]",
                NOT_CHECKED,
            ],
        ),
        (
            json!({"tags": ["a", "a"]}),
            vec![r#"tags[1]: Duplicate value: "a" [FieldValueDuplicate]"#],
        ),
        (
            json!({"ports": [{"name": "h", "port": 1}, {"name": "h", "port": 2}]}),
            vec![r#"ports[1]: Duplicate value: {"name":"h"} [FieldValueDuplicate]"#],
        ),
        (
            json!({"ports": [{"name": "h", "port": 0}]}),
            vec![
                "ports[0].port: Invalid value: 0: should be greater than or equal to 1 [FieldValueInvalid]",
            ],
        ),
        (
            json!({"labels": {"a": "1", "b": "2", "c": "3"}}),
            vec![
                "labels: Too many: 3: must have at most 2 items [FieldValueTooMany]",
                NOT_CHECKED,
            ],
        ),
        (
            json!({"title": 3}),
            vec![
                r#"title: Invalid value: 3: must be of type string [FieldValueTypeInvalid]"#,
                NOT_CHECKED,
            ],
        ),
    ];
    for (extra, want) in cases {
        assert_eq!(errors(&v, with(extra.clone()), None), want, "{extra}");
    }
    assert_eq!(
        errors(&v, json!({}), None),
        vec![
            "requiredName: Required value [FieldValueRequired]",
            NOT_CHECKED
        ]
    );
}

#[test]
fn cel_rules_report_at_their_field_path_with_their_reason_and_message() {
    let v = validator();
    assert_eq!(
        errors(&v, with(json!({"minReplicas": 5, "maxReplicas": 3})), None),
        vec![
            r#"minReplicas: Invalid value: "object": minReplicas (5) may not exceed maxReplicas [FieldValueInvalid]"#
        ]
    );
    assert_eq!(
        errors(&v, with(json!({"mode": "Locked", "tags": ["a"]})), None),
        vec!["tags: Forbidden: a locked widget has no tags [FieldValueForbidden]"]
    );
}

#[test]
fn transition_rules_run_on_update_only() {
    let v = validator();
    let old = with(json!({"class": "gold"}));
    assert!(errors(&v, with(json!({"class": "silver"})), None).is_empty());
    assert_eq!(
        errors(&v, with(json!({"class": "silver"})), Some(old.clone())),
        vec![r#"class: Invalid value: "string": is immutable [FieldValueInvalid]"#]
    );
    assert!(errors(&v, old.clone(), Some(old)).is_empty());
}

#[test]
fn ratcheting_lets_unchanged_invalid_values_through() {
    let v = validator();
    // Stored under looser rules: a duplicate tag and a bad host.
    let old = with(json!({"tags": ["a", "a"], "host": "Bad_Host", "title": "t1"}));
    // Changing something else is allowed...
    assert!(
        errors(
            &v,
            with(json!({"tags": ["a", "a"], "host": "Bad_Host", "title": "t2"})),
            Some(old.clone())
        )
        .is_empty()
    );
    // ...changing the invalid value to another invalid one is not.
    let errs = errors(
        &v,
        with(json!({"tags": ["a", "a"], "host": "Worse_Host", "title": "t1"})),
        Some(old.clone()),
    );
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].starts_with("host: "), "{errs:?}");
    // Map-list items are matched by key: an unchanged item keeps its old (invalid) port.
    let old = with(json!({"ports": [{"name": "a", "port": 0}, {"name": "b", "port": 1}]}));
    let new = with(json!({"ports": [{"name": "b", "port": 2}, {"name": "a", "port": 0}]}));
    assert!(errors(&v, new, Some(old)).is_empty());
}

#[test]
fn list_types_are_known_for_server_side_apply() {
    let v = validator();
    assert_eq!(v.list_type(&["tags"]), ListType::Set);
    assert_eq!(
        v.list_type(&["ports"]),
        ListType::Map(vec!["name".into()].into())
    );
    assert_eq!(v.list_type(&["labels"]), ListType::Atomic);
}

fn compile(schema: Value) -> Result<Validator, String> {
    let schemas = json!({"T": schema});
    Validator::compile(schemas.as_object().unwrap(), "T").map_err(|e| e.to_string())
}

#[test]
fn declarations_that_could_exceed_the_cost_limits_are_refused() {
    // Unbounded list, nested comprehension: refused before the server serves anything.
    let err = compile(json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}}},
        "x-kubernetes-validations": [{"rule": "self.l.all(x, self.l.all(y, x == y))"}]})).unwrap_err();
    assert!(
        err.contains("estimated rule cost exceeds budget by factor of"),
        "{err}"
    );
    // Bounded, it is accepted.
    compile(json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}}},
        "x-kubernetes-validations": [{"rule": "self.l.all(x, self.l.all(y, x == y))"}]})).unwrap();
    // A rule on every item of an unbounded list multiplies by the list's worst-case length.
    let err = compile(json!({"type": "array", "items": {"type": "string",
        "x-kubernetes-validations": [{"rule": "self.matches('^a+$')"}]}}))
    .unwrap_err();
    assert!(err.contains("estimated rule cost"), "{err}");
    // Bad declarations are reported, not ignored.
    assert!(
        compile(json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.x >"}]}))
            .is_err()
    );
    assert!(compile(json!({"type": "string", "pattern": "("})).is_err());
    assert!(compile(json!({"$ref": "#/components/schemas/Missing"})).is_err());
    assert!(
        compile(
            json!({"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}})
        )
        .is_err()
    );
    // A $ref cycle stops at the depth limit instead of recursing forever.
    let schemas =
        json!({"A": {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/A"}}}});
    assert!(Validator::compile(schemas.as_object().unwrap(), "A").is_err());
}

/// A map of `n` strings of `len` bytes with `rules` copies of `rule` at its root.
fn map_schema(max: u64, rule: &str, rules: usize) -> Validator {
    let rules: Vec<Value> = (0..rules).map(|_| json!({"rule": rule})).collect();
    compile(json!({"type": "object", "maxProperties": max,
        "additionalProperties": {"type": "string", "maxLength": 200},
        "x-kubernetes-validations": rules}))
    .unwrap()
}

fn map_of(n: usize) -> Value {
    Value::Object(
        (0..n)
            .map(|i| (format!("key{i:05}"), json!("v".repeat(200))))
            .collect(),
    )
}

#[test]
fn hostile_objects_hit_the_runtime_limits_instead_of_stalling() {
    let pairs = "self.all(k, self.all(j, k == j || self[k] != self[j]))";
    // Within the static limit for 200 entries, but one evaluation on 200 long entries would
    // cost more than Kubernetes' per-call limit: refused without running.
    let v = map_schema(200, pairs, 1);
    let errs: Vec<String> = v
        .validate(&map_of(200), None)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("call cost exceeds limit for rule"),
        "{errs:?}"
    );
    // The same rule on a small object runs (and finds the duplicate values).
    let errs = v.validate(&json!({"a": "x", "b": "x"}), None);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].detail.starts_with("failed rule"), "{errs:?}");
    // Fourteen rules each under the per-call limit, together over the object's budget: the
    // walk stops with kube-apiserver's budget error.
    let v = map_schema(70, pairs, 14);
    let errs: Vec<String> = v
        .validate(&map_of(70), None)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs.last().map(String::as_str),
        Some(
            r#": Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run"#
        ),
        "{errs:?}"
    );
    assert!(!errs.iter().any(|e| e.contains("call cost")), "{errs:?}");
}

#[test]
fn server_side_apply_merges_lists_as_declared() {
    use conneg_apiserver::apply::schema::Schema;
    use conneg_apiserver::apply::typed::to_field_set;
    use std::sync::Arc;

    let declared = Schema::OBJECT.declared_by(Some(Arc::new(validator())));
    let obj = with(json!({"tags": ["a", "b"], "ports": [{"name": "h", "port": 1}]}));
    let keys = |schema: &Schema| -> Vec<String> {
        to_field_set(schema, &obj)
            .paths()
            .iter()
            .map(|p| {
                p.iter()
                    .map(|e| e.to_fields_v1_key())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .collect()
    };
    let owned = keys(&declared);
    assert!(owned.contains(&r#"f:tags/v:"a""#.to_owned()), "{owned:?}");
    assert!(
        owned.contains(&r#"f:ports/k:{"name":"h"}/f:port"#.to_owned()),
        "{owned:?}"
    );
    // Without the declaration both lists are atomic: owned as one value each.
    let atomic = keys(&Schema::OBJECT);
    assert!(atomic.contains(&"f:tags".to_owned()), "{atomic:?}");
    assert!(
        !atomic.iter().any(|k| k.starts_with("f:tags/")),
        "{atomic:?}"
    );
}

#[test]
fn the_name_format_is_a_rule_on_metadata_name() {
    // CRD-style: a root rule may read metadata.name (and generateName), with Kubernetes'
    // named formats (`format.dns1123Label()`), reported at metadata.name.
    let v = compile(json!({"type": "object", "properties": {"metadata": {"type": "object"}},
        "x-kubernetes-validations": [{
            "rule": "!format.dns1123Label().validate(self.metadata.name).hasValue()",
            "messageExpression": "format.dns1123Label().validate(self.metadata.name).value().join(', ')",
            "fieldPath": ".metadata.name"}]}))
    .unwrap();
    assert!(
        v.validate(&json!({"metadata": {"name": "web-1"}}), None)
            .is_empty()
    );
    let errs: Vec<String> = v
        .validate(&json!({"metadata": {"name": "Web_1"}}), None)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with(r#"metadata.name: Invalid value: "object": "#)
            && errs[0].contains("lower case alphanumeric"),
        "{errs:?}"
    );
}
