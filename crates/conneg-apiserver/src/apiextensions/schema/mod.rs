//! Structural schemas: the subset of OpenAPI v3 a CRD version's `openAPIV3Schema` must keep to
//! (every field typed outside of `allOf`/`anyOf`/`oneOf`/`not`, no `$ref`, …), and the three
//! things Kubernetes does with one:
//!
//! * [`check`]: the rules a CRD write must pass (structurality, list and map types, pruned
//!   defaults), with Kubernetes' error texts and field paths;
//! * [`prune`]: drop the fields of a custom resource that the schema does not specify, and the
//!   `null`s it does not allow, returning the dropped paths (`spec.foo`) for `fieldValidation`;
//! * [`apply_defaults`]: fill missing fields from `default`.
//!
//! Value validation (`minimum`, `pattern`, `enum`, CEL, …) is not here: the
//! [`declarative`](crate::declarative) validator compiles the same schema and checks values.
//!
//! **Depth bound.** Schemas and objects can nest arbitrarily, and these functions recurse.
//! [`check`] refuses a schema nested deeper than [`MAX_DEPTH`] schema levels (counting every
//! `properties[x]`, `items`, `additionalProperties`, `allOf[i]`, `not`, … step) with a field
//! error instead of walking it; [`Structural::from_json`] stops reading at that depth, so
//! [`prune`] and [`apply_defaults`], which recurse only along the schema, are bounded by it too.
//! The one exception is copying a `default` value (`Clone`), which recurses as deep as the
//! value itself: that depth is the request decoder's to bound.

mod default;
mod prune;
mod structural;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde_json::Value;

pub(crate) use default::apply_defaults;
pub(crate) use prune::prune;
pub(crate) use structural::check;

/// The deepest schema [`check`] accepts, in schema levels (the root is level 1, and each
/// `properties[x]`, `items`, `additionalProperties`, `allOf[i]`, `anyOf[i]`, `oneOf[i]`, `not`
/// adds one). Kubernetes has no such limit; real CRDs stay far below it.
pub(crate) const MAX_DEPTH: usize = 64;

/// A structural schema: the parts of an `openAPIV3Schema` that give a custom resource its
/// shape, read by [`Structural::from_json`]. Value validations and the logical junctors
/// (`allOf`, `anyOf`, `oneOf`, `not`) are left out: they never change the shape.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Structural {
    /// `type`: `object`, `array`, `string`, `integer`, `number`, `boolean`, or empty.
    pub(crate) type_: String,
    /// `properties`, by name.
    pub(crate) properties: BTreeMap<String, Structural>,
    /// `items` (a single schema).
    pub(crate) items: Option<Box<Structural>>,
    /// `additionalProperties`, when present.
    pub(crate) additional_properties: Option<AdditionalProperties>,
    /// `nullable`.
    pub(crate) nullable: bool,
    /// `default` (a JSON `null` default counts as none, as in Kubernetes).
    pub(crate) default: Option<Value>,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub(crate) preserve_unknown_fields: bool,
    /// `x-kubernetes-int-or-string: true`.
    pub(crate) int_or_string: bool,
    /// `x-kubernetes-embedded-resource: true`: the value is an object with its own
    /// `apiVersion`, `kind` and `metadata`.
    pub(crate) embedded_resource: bool,
    /// `x-kubernetes-list-type`: `atomic`, `set` or `map`.
    pub(crate) list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub(crate) list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`: `atomic` or `granular`.
    pub(crate) map_type: Option<String>,
}

/// `additionalProperties`: a boolean or a schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AdditionalProperties {
    /// `additionalProperties: true` or `false`. Either way the keys are kept by pruning (and
    /// anything nested in their values is pruned, as Kubernetes does).
    Bool(bool),
    /// `additionalProperties: {…}`: the schema of every value.
    Schema(Box<Structural>),
}

impl AdditionalProperties {
    /// The schema of the values, if one is given.
    pub(crate) fn schema(&self) -> Option<&Structural> {
        match self {
            AdditionalProperties::Bool(_) => None,
            AdditionalProperties::Schema(s) => Some(s),
        }
    }
}

impl Structural {
    /// Reads the structural part of a JSON schema. Tolerant: it is meant for schemas that
    /// passed [`check`], so a malformed keyword is read as absent, and nodes deeper than
    /// [`MAX_DEPTH`] are read as `x-kubernetes-preserve-unknown-fields: true` (their data is
    /// kept, not pruned).
    pub(crate) fn from_json(schema: &Value) -> Structural {
        read(schema, 1)
    }

    /// The schema of the value under `key` of an object: its property, or else the
    /// `additionalProperties` schema.
    pub(crate) fn field(&self, key: &str) -> Option<&Structural> {
        self.properties
            .get(key)
            .or_else(|| self.additional_properties.as_ref()?.schema())
    }
}

fn read(v: &Value, depth: usize) -> Structural {
    if depth > MAX_DEPTH {
        return Structural {
            preserve_unknown_fields: true,
            ..Structural::default()
        };
    }
    let Some(m) = v.as_object() else {
        return Structural::default();
    };
    let flag = |k: &str| m.get(k) == Some(&Value::Bool(true));
    let string = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_owned);
    Structural {
        type_: string("type").unwrap_or_default(),
        properties: m
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .map(|(k, v)| (k.clone(), read(v, depth + 1)))
                    .collect()
            })
            .unwrap_or_default(),
        items: m
            .get("items")
            .filter(|i| i.is_object())
            .map(|i| Box::new(read(i, depth + 1))),
        additional_properties: match m.get("additionalProperties") {
            Some(Value::Bool(b)) => Some(AdditionalProperties::Bool(*b)),
            Some(s @ Value::Object(_)) => {
                Some(AdditionalProperties::Schema(Box::new(read(s, depth + 1))))
            }
            _ => None,
        },
        nullable: flag("nullable"),
        default: m.get("default").filter(|d| !d.is_null()).cloned(),
        preserve_unknown_fields: flag("x-kubernetes-preserve-unknown-fields"),
        int_or_string: flag("x-kubernetes-int-or-string"),
        embedded_resource: flag("x-kubernetes-embedded-resource"),
        list_type: string("x-kubernetes-list-type"),
        list_map_keys: m
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        map_type: string("x-kubernetes-map-type"),
    }
}

/// The fields of an object Kubernetes treats as type and object metadata.
const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

fn is_meta_field(k: &str) -> bool {
    META_FIELDS.contains(&k)
}

/// `path.name` (`field.Path.Child`); a bare `name` at an empty path.
fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// `path[key]` (`field.Path.Key`, unquoted).
fn key(path: &str, k: &str) -> String {
    format!("{path}[{k}]")
}

/// `path[i]` (`field.Path.Index`).
fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

#[cfg(test)]
mod read_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_keyword() {
        let s = Structural::from_json(&json!({
            "type": "object",
            "nullable": true,
            "default": {"a": 1},
            "x-kubernetes-preserve-unknown-fields": true,
            "x-kubernetes-embedded-resource": true,
            "x-kubernetes-map-type": "atomic",
            "properties": {
                "l": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object"}},
                "i": {"x-kubernetes-int-or-string": true},
                "m": {"type": "object", "additionalProperties": {"type": "string"}},
                "b": {"type": "object", "additionalProperties": false},
                "n": {"type": "string", "default": null}
            }
        }));
        assert_eq!(s.type_, "object");
        assert!(s.nullable && s.preserve_unknown_fields && s.embedded_resource);
        assert_eq!(s.default, Some(json!({"a": 1})));
        assert_eq!(s.map_type.as_deref(), Some("atomic"));
        let l = &s.properties["l"];
        assert_eq!(l.list_type.as_deref(), Some("map"));
        assert_eq!(l.list_map_keys, ["name"]);
        assert_eq!(l.items.as_ref().unwrap().type_, "object");
        assert!(s.properties["i"].int_or_string);
        assert_eq!(
            s.properties["m"].field("x").map(|s| s.type_.as_str()),
            Some("string")
        );
        assert_eq!(
            s.properties["b"].additional_properties,
            Some(AdditionalProperties::Bool(false))
        );
        assert_eq!(s.properties["n"].default, None);
        assert_eq!(
            s.properties.keys().collect::<Vec<_>>(),
            ["b", "i", "l", "m", "n"]
        );
    }

    #[test]
    fn malformed_input_is_read_as_absent() {
        let s = Structural::from_json(&json!({"type": 5, "properties": [1], "items": [{}],
            "additionalProperties": "x", "nullable": "yes"}));
        assert_eq!(s, Structural::default());
        assert_eq!(Structural::from_json(&json!("x")), Structural::default());
    }

    #[test]
    fn reading_stops_at_the_depth_bound() {
        let mut v = json!({"type": "string"});
        for _ in 0..200 {
            v = json!({"type": "array", "items": v});
        }
        let s = Structural::from_json(&v);
        let mut depth = 1;
        let mut n = &s;
        while let Some(i) = &n.items {
            n = i;
            depth += 1;
        }
        assert_eq!(depth, MAX_DEPTH + 1);
        assert!(n.preserve_unknown_fields && n.type_.is_empty());
    }
}

/// The examples of this file's documentation, run as tests: the module is private to the
/// crate, so rustdoc does not run them.
#[cfg(test)]
mod examples {
    #[test]
    fn schema_module() {
        use crate::apiextensions::schema::{Structural, apply_defaults, check, prune};
        use serde_json::json;

        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "replicas": {"type": "integer", "default": 1}}}}});
        assert!(check(&schema, "spec.validation.openAPIV3Schema", false).is_empty());

        let s = Structural::from_json(&schema);
        let mut cr = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"size": 3}});
        assert_eq!(prune(&mut cr, &s, true), ["spec.size"]);
        apply_defaults(&mut cr, &s);
        assert_eq!(cr["spec"], json!({"replicas": 1}));
    }

    #[test]
    fn structural_from_json() {
        use crate::apiextensions::schema::Structural;
        use serde_json::json;

        let s = Structural::from_json(&json!({"type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}));
        assert_eq!(s.properties["tags"].items.as_ref().unwrap().type_, "string");
    }
}
