//! [`check`]: each rule's exact error, as Kubernetes prints it (`<field>: <body>`).

use serde_json::{Value, json};

use super::{MAX_DEPTH, Structural, apply_defaults, check, prune};

const P: &str = "spec.validation.openAPIV3Schema";

fn errs(schema: Value) -> Vec<String> {
    check(&schema, P, false)
        .iter()
        .map(|e| e.to_string())
        .collect()
}

fn status_errs(schema: Value) -> Vec<String> {
    check(&schema, P, true)
        .iter()
        .map(|e| e.to_string())
        .collect()
}

/// The schema `{"type": "object", "properties": {"a": a}}`.
fn prop(a: Value) -> Value {
    json!({"type": "object", "properties": {"a": a}})
}

fn p(rest: &str) -> String {
    format!("{P}{rest}")
}

#[test]
fn a_realistic_schema_passes() {
    let schema = json!({
        "type": "object",
        "description": "A widget.",
        "required": ["spec"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}},
            "spec": {"type": "object", "default": {}, "properties": {
                "replicas": {"type": "integer", "minimum": 0, "default": 1},
                "port": {"x-kubernetes-int-or-string": true,
                    "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "quantity": {"x-kubernetes-int-or-string": true,
                    "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"pattern": "^[0-9]+m?$"}]},
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name", "protocol"],
                    "items": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"},
                        "protocol": {"type": "string", "default": "TCP"}}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"},
                    "x-kubernetes-map-type": "granular"},
                "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                    "x-kubernetes-preserve-unknown-fields": true},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "mode": {"type": "string", "enum": ["A", "B"], "oneOf": [{"pattern": "^A"}, {"pattern": "^B"}]}
            }},
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
        }
    });
    assert_eq!(errs(schema.clone()), Vec::<String>::new());
    assert_eq!(status_errs(schema), Vec::<String>::new());
}

#[test]
fn root_type() {
    assert_eq!(
        errs(json!({})),
        [p(".type: Required value: must not be empty at the root")]
    );
    assert_eq!(
        errs(json!({"type": "string"})),
        [p(
            r#".type: Invalid value: "string": must be object at the root"#
        )]
    );
}

#[test]
fn every_node_is_typed() {
    let schema = prop(json!({"type": "object", "properties": {
        "f": {},
        "l": {"type": "array", "items": {}},
        "m": {"type": "object", "additionalProperties": {}},
        "ios": {"x-kubernetes-int-or-string": true},
        "any": {"x-kubernetes-preserve-unknown-fields": true}
    }}));
    assert_eq!(
        errs(schema),
        [
            p(
                ".properties[a].properties[f].type: Required value: must not be empty for specified object fields"
            ),
            p(
                ".properties[a].properties[l].items.type: Required value: must not be empty for specified array items"
            ),
            p(
                ".properties[a].properties[m].additionalProperties.type: Required value: must not be empty for specified object fields"
            ),
        ]
    );
}

#[test]
fn arrays_need_items() {
    assert_eq!(
        errs(prop(json!({"type": "array"}))),
        [p(".properties[a].items: Required value: must be specified")]
    );
}

#[test]
fn unsupported_and_null_types() {
    assert_eq!(
        errs(prop(json!({"type": "foo"}))),
        [p(
            r#".properties[a].type: Unsupported value: "foo": supported values: "array", "boolean", "integer", "number", "object", "string""#
        )]
    );
    assert_eq!(
        errs(prop(json!({"type": "null"}))),
        [
            p(
                r#".properties[a].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string""#
            ),
            p(
                ".properties[a].type: Forbidden: type cannot be set to null, use nullable as an alternative"
            ),
        ]
    );
}

#[test]
fn nullable_at_the_root() {
    assert_eq!(
        errs(json!({"type": "object", "nullable": true})),
        [p(
            ".nullable: Forbidden: nullable cannot be true at the root"
        )]
    );
    assert_eq!(
        errs(prop(json!({"type": "string", "nullable": true}))),
        Vec::<String>::new()
    );
}

#[test]
fn unsupported_keywords() {
    let schema = json!({"type": "object", "id": "x", "$ref": "#/a", "additionalItems": false,
        "patternProperties": {"^a": {"type": "string"}}, "definitions": {"d": {"type": "string"}},
        "dependencies": {"a": ["b"]}});
    assert_eq!(
        errs(schema),
        [
            p(".id: Forbidden: id is not supported"),
            p(".additionalItems: Forbidden: additionalItems is not supported"),
            p(".patternProperties: Forbidden: patternProperties is not supported"),
            p(".definitions: Forbidden: definitions is not supported"),
            p(".dependencies: Forbidden: dependencies is not supported"),
            p(".$ref: Forbidden: $ref is not supported"),
        ]
    );
    // `$schema` is caught only where Kubernetes builds the structural schema.
    assert_eq!(
        errs(json!({"type": "object", "$schema": "http://json-schema.org/schema#"})),
        [p(
            r#": Invalid value: "": OpenAPIV3Schema 'schema' is not supported"#
        )]
    );
}

#[test]
fn items_as_an_array() {
    assert_eq!(
        errs(prop(
            json!({"type": "array", "items": [{"type": "string"}]})
        )),
        [p(
            ".properties[a].items: Forbidden: items must be a schema object and not an array"
        )]
    );
}

#[test]
fn unique_items() {
    assert_eq!(
        errs(prop(
            json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true})
        )),
        [p(
            ".properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
        )]
    );
}

#[test]
fn properties_and_additional_properties() {
    let with = |ap: Value| {
        errs(prop(
            json!({"type": "object", "properties": {"x": {"type": "string"}},
            "additionalProperties": ap}),
        ))
    };
    let exclusive = [p(
        ".properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
    )];
    assert_eq!(with(json!({"type": "string"})), exclusive);
    assert_eq!(with(json!(false)), exclusive);
    assert_eq!(with(json!(true)), Vec::<String>::new());
    assert_eq!(
        errs(json!({"type": "object", "additionalProperties": {"type": "string"}})),
        [p(
            ".additionalProperties: Forbidden: must not be used at the root"
        )]
    );
}

#[test]
fn junctors_may_only_validate_values() {
    let schema = prop(json!({"type": "string", "anyOf": [{
        "type": "string", "description": "d", "title": "t", "default": "x", "nullable": true,
        "additionalProperties": true,
        "x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-embedded-resource": true,
        "x-kubernetes-int-or-string": true, "x-kubernetes-validations": [{"rule": "true"}],
        "properties": {"metadata": {}}
    }]}));
    assert_eq!(
        errs(schema),
        [
            p(
                ".properties[a].anyOf[0].additionalProperties: Forbidden: must be undefined to be structural"
            ),
            p(".properties[a].anyOf[0].default: Forbidden: must be undefined to be structural"),
            p(".properties[a].anyOf[0].description: Forbidden: must be empty to be structural"),
            p(".properties[a].anyOf[0].nullable: Forbidden: must be false to be structural"),
            p(
                ".properties[a].anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context"
            ),
            p(".properties[a].anyOf[0].title: Forbidden: must be empty to be structural"),
            p(".properties[a].anyOf[0].type: Forbidden: must be empty to be structural"),
            p(
                ".properties[a].anyOf[0].x-kubernetes-embedded-resource: Forbidden: must be false to be structural"
            ),
            p(
                ".properties[a].anyOf[0].x-kubernetes-int-or-string: Forbidden: must be false to be structural"
            ),
            p(
                ".properties[a].anyOf[0].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural"
            ),
            p(
                ".properties[a].anyOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural"
            ),
        ]
    );
    let lists = prop(
        json!({"type": "array", "items": {"type": "string"}, "not": {
        "items": {"x-kubernetes-list-type": "atomic", "x-kubernetes-list-map-keys": ["k"],
                  "x-kubernetes-map-type": "atomic"}}}),
    );
    let got = errs(lists);
    assert_eq!(
        got[..3],
        [
            p(
                ".properties[a].not.items.x-kubernetes-list-map-keys: Forbidden: must be empty to be structural"
            ),
            p(
                ".properties[a].not.items.x-kubernetes-list-type: Forbidden: must be undefined to be structural"
            ),
            p(
                ".properties[a].not.items.x-kubernetes-map-type: Forbidden: must be undefined to be structural"
            ),
        ]
    );
}

#[test]
fn int_or_string() {
    let ok = [
        json!({"x-kubernetes-int-or-string": true}),
        json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}),
        json!({"x-kubernetes-int-or-string": true, "allOf": [
            {"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"maxLength": 3}]}),
    ];
    for a in ok {
        assert_eq!(errs(prop(a.clone())), Vec::<String>::new(), "{a}");
    }
    assert_eq!(
        errs(prop(json!({"x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "string"}, {"type": "integer"}]}))),
        [
            p(".properties[a].anyOf[0].type: Forbidden: must be empty to be structural"),
            p(".properties[a].anyOf[1].type: Forbidden: must be empty to be structural"),
        ]
    );
    assert_eq!(
        errs(json!({"type": "object", "properties": {
            "a": {"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true},
            "b": {"x-kubernetes-int-or-string": true, "x-kubernetes-embedded-resource": true}
        }})),
        [
            p(
                ".properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"
            ),
            p(
                ".properties[b].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
            ),
            p(
                ".properties[b].type: Required value: must be object if x-kubernetes-embedded-resource is true"
            ),
            p(
                ".properties[b].x-kubernetes-embedded-resource: Invalid value: true: must be false if x-kubernetes-int-or-string is true"
            ),
        ]
    );
}

#[test]
fn completeness_of_the_root_junctors() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}},
        "anyOf": [{"properties": {"b": {}}}, {"properties": {"a": {"minLength": 1}}}],
        "allOf": [{"items": {}}],
        "not": {"properties": {"a": {"properties": {"c": {}}}}}});
    assert_eq!(
        errs(schema),
        [
            p(
                ".items: Required value: because it is defined in spec.validation.openAPIV3Schema.allOf[0].items"
            ),
            p(
                ".properties[a].properties[c]: Required value: because it is defined in spec.validation.openAPIV3Schema.not.properties[a].properties[c]"
            ),
            p(
                ".properties[b]: Required value: because it is defined in spec.validation.openAPIV3Schema.anyOf[0].properties[b]"
            ),
        ]
    );
    // As in Kubernetes, junctors below the root are not checked for completeness.
    assert_eq!(
        errs(prop(
            json!({"type": "object", "anyOf": [{"properties": {"b": {}}}]})
        )),
        Vec::<String>::new()
    );
}

#[test]
fn patterns_must_compile() {
    assert_eq!(
        errs(prop(json!({"type": "string", "pattern": "[a"}))),
        [p(
            r#".properties[a].pattern: Invalid value: "[a": must be a valid regular expression, but isn't: error parsing regexp: unclosed character class: `[a`"#
        )]
    );
    assert_eq!(
        errs(prop(
            json!({"type": "string", "anyOf": [{"pattern": "(x"}]})
        )),
        [p(
            r#".properties[a].anyOf[0].pattern: Invalid value: "(x": must be a valid regular expression, but isn't: error parsing regexp: unclosed group: `(x`"#
        )]
    );
}

#[test]
fn preserve_unknown_fields_false() {
    assert_eq!(
        errs(prop(
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": false})
        )),
        [p(
            ".properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"
        )]
    );
}

#[test]
fn embedded_resources() {
    assert_eq!(
        errs(prop(
            json!({"type": "string", "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true})
        )),
        [p(
            r#".properties[a].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true"#
        )]
    );
    assert_eq!(
        errs(prop(
            json!({"type": "object", "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true, "additionalProperties": {"type": "string"}})
        )),
        [p(
            ".properties[a].additionalProperties: Forbidden: must not be used if x-kubernetes-embedded-resource is set"
        )]
    );
    assert_eq!(
        errs(prop(
            json!({"type": "object", "x-kubernetes-embedded-resource": true})
        )),
        [p(
            ".properties[a].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
        )]
    );
    assert_eq!(
        errs(prop(
            json!({"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
                "kind": {"type": "integer"},
                "metadata": {"type": "object", "properties": {"x": {"type": "object",
                    "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}
            }})
        )),
        [
            p(r#".properties[a].properties[kind].type: Invalid value: "integer": must be string"#),
            p(
                ".properties[a].properties[metadata].properties[x].x-kubernetes-embedded-resource: Forbidden: must not be used inside of resource meta"
            ),
        ]
    );
}

#[test]
fn type_meta_at_the_root() {
    assert_eq!(
        errs(
            json!({"type": "object", "properties": {"kind": {"type": "integer"},
            "apiVersion": {"x-kubernetes-preserve-unknown-fields": true}}})
        ),
        [
            p(r#".properties[apiVersion].type: Invalid value: "": must be string"#),
            p(r#".properties[kind].type: Invalid value: "integer": must be string"#),
        ]
    );
    // Below the root (and outside embedded resources) they are ordinary fields.
    assert_eq!(
        errs(prop(
            json!({"type": "object", "properties": {"kind": {"type": "integer"}}})
        )),
        Vec::<String>::new()
    );
}

#[test]
fn metadata_at_the_root() {
    let meta = |m: Value| errs(json!({"type": "object", "properties": {"metadata": m}}));
    assert_eq!(meta(json!({"type": "object"})), Vec::<String>::new());
    assert_eq!(
        meta(json!({"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 9}, "generateName": {"type": "string"}}})),
        Vec::<String>::new()
    );
    let implicit = p(
        ".properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
    );
    assert_eq!(
        meta(json!({"type": "object", "properties": {"labels": {"type": "object"}}})),
        std::slice::from_ref(&implicit)
    );
    assert_eq!(
        meta(json!({"type": "object", "description": "m"})),
        [implicit]
    );
    assert_eq!(
        meta(json!({"type": "string"})),
        [p(
            r#".properties[metadata].type: Invalid value: "string": must be object"#
        )]
    );
}

#[test]
fn status_subresource_root() {
    assert_eq!(
        status_errs(json!({"type": "object", "minProperties": 1})),
        [p(
            r#": Invalid value: {"minProperties":1,"type":"object"}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled"#
        )]
    );
    assert_eq!(
        status_errs(json!({"type": "string"})),
        [
            p(
                r#".type: Invalid value: "string": only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#
            ),
            p(r#".type: Invalid value: "string": must be object at the root"#),
        ]
    );
    assert_eq!(
        status_errs(
            json!({"type": "object", "nullable": false, "x-kubernetes-embedded-resource": false,
            "x-kubernetes-preserve-unknown-fields": true, "required": ["spec"]})
        ),
        Vec::<String>::new()
    );
}

#[test]
fn list_and_map_types() {
    assert_eq!(
        errs(prop(
            json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"})
        )),
        [p(
            r#".properties[a].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map""#
        )]
    );
    assert_eq!(
        errs(prop(
            json!({"type": "string", "x-kubernetes-list-type": "atomic"})
        )),
        [p(
            r#".properties[a].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified"#
        )]
    );
    assert_eq!(
        errs(prop(
            json!({"type": "string", "x-kubernetes-map-type": "fine"})
        )),
        [
            p(
                r#".properties[a].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified"#
            ),
            p(
                r#".properties[a].x-kubernetes-map-type: Unsupported value: "fine": supported values: "atomic", "granular""#
            ),
        ]
    );
    assert_eq!(
        errs(prop(
            json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-map-keys": ["k"]})
        )),
        [p(
            ".properties[a].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty"
        )]
    );
    assert_eq!(
        errs(prop(json!({"type": "array", "items": {"type": "string"},
            "x-kubernetes-list-type": "set", "x-kubernetes-list-map-keys": ["k"]}))),
        [p(
            r#".properties[a].x-kubernetes-list-type: Invalid value: "set": must be map if x-kubernetes-list-map-keys is non-empty"#
        )]
    );
}

#[test]
fn map_lists() {
    assert_eq!(
        errs(prop(
            json!({"type": "array", "x-kubernetes-list-type": "map"})
        )),
        [
            p(".properties[a].items: Required value: must be specified"),
            p(
                ".properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"
            ),
            p(
                ".properties[a].items: Required value: must have a schema if x-kubernetes-list-type is map"
            ),
        ]
    );
    assert_eq!(
        errs(prop(
            json!({"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["k"], "items": {"type": "string"}})
        )),
        [p(
            r#".properties[a].items.type: Invalid value: "string": must be object if parent array's x-kubernetes-list-type is map"#
        )]
    );
    let schema = prop(json!({"type": "array", "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name", "name", "missing", "sub"],
        "items": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "nullable": true},
            "sub": {"type": "object"}}}}));
    let keys = r#"["name","name","missing","sub"]"#;
    assert_eq!(
        errs(schema),
        [
            p(&format!(
                ".properties[a].x-kubernetes-list-map-keys: Invalid value: {keys}: must not contain duplicate entries"
            )),
            p(&format!(
                ".properties[a].x-kubernetes-list-map-keys: Invalid value: {keys}: entries must all be names of item properties"
            )),
            p(
                r#".properties[a].items.properties[sub].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map"#
            ),
            p(
                ".properties[a].items.properties[name].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
            ),
            p(
                ".properties[a].items.properties[name].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
            ),
            p(
                ".properties[a].items.properties[sub].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
            ),
        ]
    );
}

#[test]
fn set_lists() {
    assert_eq!(
        errs(prop(
            json!({"type": "array", "x-kubernetes-list-type": "set",
            "items": {"type": "object", "nullable": true, "properties": {"x": {"type": "string"}}}})
        )),
        [
            p(
                ".properties[a].items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set"
            ),
            p(
                ".properties[a].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is set"
            ),
        ]
    );
    assert_eq!(
        errs(prop(
            json!({"type": "array", "x-kubernetes-list-type": "set",
            "items": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}})
        )),
        [p(
            r#".properties[a].items.x-kubernetes-list-type: Invalid value: "set": must be atomic as item of a list with x-kubernetes-list-type=set"#
        )]
    );
    assert_eq!(
        errs(prop(
            json!({"type": "array", "x-kubernetes-list-type": "set",
            "items": {"type": "object", "x-kubernetes-map-type": "atomic"}})
        )),
        Vec::<String>::new()
    );
}

#[test]
fn defaults_must_be_pruned() {
    assert_eq!(
        errs(prop(
            json!({"type": "object", "default": {"x": 1, "y": {"z": 2}},
            "properties": {"x": {"type": "integer"}, "y": {"type": "object"}}})
        )),
        [p(
            r#".properties[a].default: Invalid value: {"x":1,"y":{"z":2}}: must not have unknown fields"#
        )]
    );
    // In arrays, and inside an embedded resource (whose type and object meta stay).
    assert_eq!(
        errs(prop(
            json!({"type": "array", "items": {"type": "object", "x-kubernetes-embedded-resource": true,
            "properties": {"spec": {"type": "object"}},
            "default": {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {}}}})
        )),
        Vec::<String>::new()
    );
    assert_eq!(
        errs(
            json!({"type": "object", "default": {"apiVersion": "v1", "spec": {}, "bad": 1},
            "properties": {"spec": {"type": "object"}}})
        ),
        [p(
            r#".default: Invalid value: {"apiVersion":"v1","bad":1,"spec":{}}: must not have unknown fields"#
        )]
    );
    // Not checked while the schema is not structural.
    assert_eq!(
        errs(
            json!({"type": "object", "properties": {"a": {}, "b": {"type": "object", "default": {"x": 1}}}})
        ),
        [p(
            ".properties[a].type: Required value: must not be empty for specified object fields"
        )]
    );
}

#[test]
fn defaults_in_resource_metadata() {
    assert_eq!(
        errs(json!({"type": "object", "properties": {
            "metadata": {"type": "object", "default": {"name": "x"}},
            "kind": {"type": "string", "default": "K"},
            "apiVersion": {"type": "string", "default": "v1"}}})),
        [
            p(
                ".properties[apiVersion].default: Forbidden: must not be set in top-level apiVersion"
            ),
            p(".properties[kind].default: Forbidden: must not be set in top-level kind"),
            p(".properties[metadata].default: Forbidden: must not be set in top-level metadata"),
        ]
    );
    assert_eq!(
        errs(prop(
            json!({"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
            "metadata": {"type": "object", "properties": {"labels": {"type": "object",
                "additionalProperties": {"type": "string", "default": "x"}}}}}})
        )),
        [p(
            ".properties[a].properties[metadata].properties[labels].additionalProperties.default: Forbidden: must not be set inside additionalProperties applying to object metadata"
        )]
    );
}

#[test]
fn nodes_must_be_objects() {
    assert_eq!(
        errs(
            json!({"type": "object", "properties": {"a": 5, "b": {"type": "array", "items": "x"}}})
        ),
        [
            p(".properties[a]: Invalid value: 5: must be a JSON schema object"),
            p(r#".properties[b].items: Invalid value: "x": must be a JSON schema object"#),
        ]
    );
    assert_eq!(
        errs(json!(null)),
        [p(": Invalid value: null: must be a JSON schema object")]
    );
}

/// `depth` levels of `{"type": "object", "properties": {"a": …}}`.
fn nested(depth: usize) -> Value {
    let mut v = json!({"type": "string"});
    for _ in 1..depth {
        // By hand: `json!` would serialize `v` recursively.
        let mut props = serde_json::Map::new();
        props.insert("a".to_owned(), v);
        let mut node = serde_json::Map::new();
        node.insert("type".to_owned(), json!("object"));
        node.insert("properties".to_owned(), Value::Object(props));
        v = Value::Object(node);
    }
    v
}

/// Takes a deeply nested schema apart without recursion (serde_json drops recursively).
fn dismantle(mut v: Value) {
    while let Some(inner) = v
        .get_mut("properties")
        .and_then(|p| p.get_mut("a"))
        .map(Value::take)
    {
        v = inner;
    }
}

#[test]
fn depth_is_bounded() {
    assert_eq!(errs(nested(MAX_DEPTH)), Vec::<String>::new());
    let deep = p(&".properties[a]".repeat(MAX_DEPTH));
    assert_eq!(
        errs(nested(MAX_DEPTH + 1)),
        [format!(
            "{deep}: Forbidden: must not be nested more than 64 levels deep"
        )]
    );
    let huge = nested(20_000);
    assert_eq!(check(&huge, P, false).len(), 1);
    let s = Structural::from_json(&huge);
    let mut obj = json!({"a": {"a": {"x": 1}}});
    assert_eq!(prune(&mut obj, &s, true), ["a.a.x"]);
    apply_defaults(&mut obj, &s);
    dismantle(huge);
}

#[test]
fn odd_input_never_panics() {
    let odd = [
        json!(null),
        json!([]),
        json!("x"),
        json!({"properties": null, "items": null, "additionalProperties": null, "not": null}),
        json!({"type": 5, "properties": {"a": {"type": ["string"]}}}),
        json!({"type": "array", "items": true}),
        json!({"type": "array", "items": []}),
        json!({"type": "object", "additionalProperties": "yes"}),
        json!({"type": "array", "x-kubernetes-list-type": 5, "x-kubernetes-list-map-keys": [1, "a"],
               "items": {"type": "object", "properties": {"a": {"type": "string"}}, "required": "a"}}),
        json!({"type": "object", "x-kubernetes-map-type": null, "anyOf": {"type": "integer"},
               "allOf": [5], "oneOf": [[]], "not": 3, "pattern": 7, "default": {"x": 1}}),
        json!({"type": "object", "dependencies": {"a": ["b"], "c": {"type": "string"}},
               "definitions": 3, "patternProperties": [], "$ref": 1, "id": 2}),
        json!({"type": "object", "properties": {"metadata": {"properties": 5}, "kind": 3}}),
    ];
    for schema in odd {
        let _ = check(&schema, P, true);
        let _ = check(&schema, "", false);
        let s = Structural::from_json(&schema);
        for mut obj in [
            json!(null),
            json!([1, {"a": null}]),
            json!({"a": [null], "x": {"y": 1}}),
        ] {
            prune(&mut obj, &s, true);
            apply_defaults(&mut obj, &s);
        }
    }
}

#[test]
fn an_empty_path_renders_like_a_nil_path() {
    let got: Vec<String> = check(&prop(json!({})), "", false)
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(
        got,
        ["properties[a].type: Required value: must not be empty for specified object fields"]
    );
}
