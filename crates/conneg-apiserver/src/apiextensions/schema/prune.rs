//! Pruning: a custom resource keeps only the fields its structural schema specifies
//! (apiextensions-apiserver's `pruning.PruneWithOptions`, then
//! `defaulting.PruneNonNullableNullsWithoutDefaults`), as the schema-coercing decoder does on
//! every write and every read (reference §3.2 step 4, §3.5).

use serde_json::Value;

use super::{Structural, is_meta_field};

/// Drops the fields of `obj` that `s` does not specify and returns their paths, sorted, in
/// the form `fieldValidation` reports them (`spec.foo`, `spec.items[0].bar`). Then drops the
/// `null` values of fields whose schema is neither nullable nor defaulted (not reported).
///
/// * `x-kubernetes-preserve-unknown-fields: true` keeps unknown fields of that object (its
///   specified fields are still pruned by their own schemas);
/// * `additionalProperties` keeps every key, pruning the values by its schema (with
///   `additionalProperties: true`/`false`, nested objects in the values lose all their fields,
///   as in Kubernetes);
/// * an `x-kubernetes-embedded-resource` object keeps `apiVersion`, `kind` and `metadata`
///   untouched, and so does the root when `is_root` (a custom resource itself): metadata is
///   coerced elsewhere.
pub(crate) fn prune(obj: &mut Value, s: &Structural, is_root: bool) -> Vec<String> {
    let mut paths = Vec::new();
    prune_unknown(obj, s, is_root, &mut paths);
    drop_nulls(obj, s);
    paths.sort();
    paths
}

/// Kubernetes' `pruning.Prune`: only the unknown fields, no nulls. Pushes the dropped paths
/// (unsorted) to `paths`.
fn prune_unknown(obj: &mut Value, s: &Structural, is_root: bool, paths: &mut Vec<String>) {
    // At a resource root the schema is read as if it had x-kubernetes-embedded-resource.
    walk(obj, Some(s), is_root || s.embedded_resource, "", paths);
}

/// Whether [`prune_unknown`] would drop anything from `obj`, without copying it: the check
/// that a schema's `default` is already pruned. Recurses only along the schema.
pub(super) fn has_unknown_fields(obj: &Value, s: &Structural, is_root: bool) -> bool {
    unknown(obj, Some(s), is_root || s.embedded_resource, false)
}

/// `walk` (`skip` false) or `skip_prune` (`skip` true), reading only.
fn unknown(x: &Value, s: Option<&Structural>, embedded: bool, skip: bool) -> bool {
    let Some(s) = s else {
        if skip {
            return false;
        }
        // Like prune_everything: any object reachable through arrays loses its fields.
        let mut stack = vec![x];
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(m) if !m.is_empty() => return true,
                Value::Array(a) => stack.extend(a),
                _ => {}
            }
        }
        return false;
    };
    let skip = skip || s.preserve_unknown_fields;
    match x {
        Value::Object(m) => m.iter().any(|(k, v)| {
            if embedded && is_meta_field(k) {
                false
            } else if let Some((child, emb)) = field_schema(s, k) {
                unknown(v, child, emb, false)
            } else {
                !skip
            }
        }),
        Value::Array(a) => {
            let (items, emb) = items_schema(s);
            match (skip, items) {
                (true, None) => false,
                _ => a.iter().any(|v| unknown(v, items, emb, skip)),
            }
        }
        _ => false,
    }
}

/// The schema of the field `k` of an object of `s`, with whether it is an embedded
/// resource: a property's, else `additionalProperties`' (no schema when that is a boolean);
/// `None` for a field `s` does not specify.
fn field_schema<'s>(s: &'s Structural, k: &str) -> Option<(Option<&'s Structural>, bool)> {
    if let Some(p) = s.properties.get(k) {
        return Some((Some(p), p.embedded_resource));
    }
    let values = s.additional_properties.as_ref()?.schema();
    Some((values, values.is_some_and(|v| v.embedded_resource)))
}

/// The schema of the items of an array of `s`, with whether they are embedded resources.
fn items_schema(s: &Structural) -> (Option<&Structural>, bool) {
    let items = s.items.as_deref();
    (items, items.is_some_and(|i| i.embedded_resource))
}

fn key_path(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_owned()
    } else {
        format!("{path}.{k}")
    }
}

/// `prune`: `embedded` is `s.embedded_resource`, or true at a resource root.
fn walk(x: &mut Value, s: Option<&Structural>, embedded: bool, path: &str, out: &mut Vec<String>) {
    let Some(s) = s else {
        prune_everything(x, path, out);
        return;
    };
    if s.preserve_unknown_fields {
        skip_prune(x, s, embedded, path, out);
        return;
    }
    match x {
        Value::Object(m) => {
            let mut dropped = Vec::new();
            for (k, v) in m.iter_mut() {
                if embedded && is_meta_field(k) {
                    continue;
                }
                if let Some((child, emb)) = field_schema(s, k) {
                    walk(v, child, emb, &key_path(path, k), out);
                } else {
                    if !is_meta_field(k) || !path.is_empty() {
                        out.push(key_path(path, k));
                    }
                    dropped.push(k.clone());
                }
            }
            for k in dropped {
                m.remove(&k);
            }
        }
        Value::Array(a) => {
            let (items, emb) = items_schema(s);
            for (i, v) in a.iter_mut().enumerate() {
                walk(v, items, emb, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// `skipPrune`: under `x-kubernetes-preserve-unknown-fields`, unknown fields stay; known ones
/// are pruned by their schemas.
fn skip_prune(x: &mut Value, s: &Structural, embedded: bool, path: &str, out: &mut Vec<String>) {
    match x {
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                if embedded && is_meta_field(k) {
                    continue;
                }
                if let Some((child, emb)) = field_schema(s, k) {
                    walk(v, child, emb, &key_path(path, k), out);
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.items.as_deref() {
                for (i, v) in a.iter_mut().enumerate() {
                    skip_prune(
                        v,
                        items,
                        items.embedded_resource,
                        &format!("{path}[{i}]"),
                        out,
                    );
                }
            }
        }
        _ => {}
    }
}

/// `prune` with no schema: every object loses all its fields, arrays are walked. Iterative,
/// since with no schema nothing bounds how deep arrays nest.
fn prune_everything(x: &mut Value, path: &str, out: &mut Vec<String>) {
    let mut stack = vec![(x, path.to_owned())];
    while let Some((v, path)) = stack.pop() {
        match v {
            Value::Object(m) => {
                out.extend(m.keys().map(|k| key_path(&path, k)));
                m.clear();
            }
            Value::Array(a) => {
                for (i, e) in a.iter_mut().enumerate() {
                    stack.push((e, format!("{path}[{i}]")));
                }
            }
            _ => {}
        }
    }
}

/// `PruneNonNullableNullsWithoutDefaults`: object fields that are `null` although their schema
/// is neither nullable nor defaulted are removed (defaulted ones are left for defaulting).
fn drop_nulls(x: &mut Value, s: &Structural) {
    match x {
        Value::Object(m) => {
            m.retain(|k, v| {
                let Some(fs) = s.field(k) else {
                    return true;
                };
                if v.is_null() {
                    return fs.nullable || fs.default.is_some();
                }
                drop_nulls(v, fs);
                true
            });
        }
        Value::Array(a) => {
            if let Some(items) = s.items.as_deref() {
                for v in a {
                    drop_nulls(v, items);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn s(v: Value) -> Structural {
        Structural::from_json(&v)
    }

    #[test]
    fn drops_unknown_fields_at_every_level() {
        let s = s(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "items": {"type": "array", "items": {"type": "object",
                    "properties": {"name": {"type": "string"}}}},
                "grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}
            }},
            "status": {"type": "object"}
        }}));
        let mut cr = json!({
            "apiVersion": "g/v1", "kind": "K", "metadata": {"name": "a", "bogus": 1},
            "top": {"deep": 1},
            "spec": {"foo": 1, "items": [{"name": "a", "bar": 2}, {"baz": 3}],
                     "grid": [[1, 2], [3]]},
            "status": {"x": 1}
        });
        let paths = prune(&mut cr, &s, true);
        assert_eq!(
            paths,
            [
                "spec.foo",
                "spec.items[0].bar",
                "spec.items[1].baz",
                "status.x",
                "top"
            ]
        );
        assert_eq!(
            cr,
            json!({
                "apiVersion": "g/v1", "kind": "K", "metadata": {"name": "a", "bogus": 1},
                "spec": {"items": [{"name": "a"}, {}], "grid": [[1, 2], [3]]},
                "status": {}
            })
        );
    }

    #[test]
    fn meta_fields_are_pruned_below_the_root_when_not_embedded() {
        let s = s(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"x": {"type": "string"}}}}}));
        let mut cr = json!({"kind": "K", "spec": {"kind": "y", "metadata": {}, "x": "z"}});
        assert_eq!(prune(&mut cr, &s, true), ["spec.kind", "spec.metadata"]);
        assert_eq!(cr, json!({"kind": "K", "spec": {"x": "z"}}));
        // Not a resource root: top-level metadata fields go, silently (as in Kubernetes).
        let mut obj = json!({"kind": "K", "spec": {}});
        assert_eq!(prune(&mut obj, &s, false), Vec::<String>::new());
        assert_eq!(obj, json!({"spec": {}}));
    }

    #[test]
    fn preserve_unknown_fields_keeps_unknown_but_prunes_known() {
        let s = s(json!({"type": "object", "properties": {
            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
            "list": {"type": "array", "x-kubernetes-preserve-unknown-fields": true,
                "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
            "any": {"x-kubernetes-preserve-unknown-fields": true}
        }}));
        let mut cr = json!({
            "spec": {"other": {"deep": [1, {"x": 2}]}, "known": {"a": "b", "c": "d"}},
            "list": [{"a": "b", "c": "d"}],
            "any": {"kind": "X", "metadata": {"junk": 1}, "n": [{"m": 1}]}
        });
        // Items of a preserving list are themselves preserving (Kubernetes' `skipPrune`).
        assert_eq!(prune(&mut cr, &s, true), ["spec.known.c"]);
        assert_eq!(
            cr,
            json!({
                "spec": {"other": {"deep": [1, {"x": 2}]}, "known": {"a": "b"}},
                "list": [{"a": "b", "c": "d"}],
                "any": {"kind": "X", "metadata": {"junk": 1}, "n": [{"m": 1}]}
            })
        );
    }

    #[test]
    fn preserve_unknown_fields_at_the_root() {
        let s = s(
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}}),
        );
        let mut cr = json!({"kind": "K", "extra": {"x": 1}, "spec": {"a": "b", "z": 1}});
        assert_eq!(prune(&mut cr, &s, true), ["spec.z"]);
        assert_eq!(
            cr,
            json!({"kind": "K", "extra": {"x": 1}, "spec": {"a": "b"}})
        );
    }

    #[test]
    fn embedded_resources_keep_type_and_object_meta() {
        let s = s(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                    "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                "raw": {"type": "object", "x-kubernetes-embedded-resource": true,
                    "x-kubernetes-preserve-unknown-fields": true},
                "pods": {"type": "array", "items": {"type": "object",
                    "x-kubernetes-embedded-resource": true, "properties": {}}}
            }}}}),
        );
        let mut cr = json!({"spec": {
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "odd": 1},
                "spec": {"a": "b", "c": 1}, "status": {}},
            "raw": {"apiVersion": "v1", "kind": "Pod", "spec": {"anything": [1]}},
            "pods": [{"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}}]
        }});
        assert_eq!(
            prune(&mut cr, &s, true),
            [
                "spec.pods[0].spec",
                "spec.template.spec.c",
                "spec.template.status"
            ]
        );
        assert_eq!(
            cr,
            json!({"spec": {
                "template": {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "p", "odd": 1}, "spec": {"a": "b"}},
                "raw": {"apiVersion": "v1", "kind": "Pod", "spec": {"anything": [1]}},
                "pods": [{"apiVersion": "v1", "kind": "Pod", "metadata": {}}]
            }})
        );
    }

    #[test]
    fn int_or_string_values_are_scalars_and_objects_there_are_pruned() {
        let s = s(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"port": {"x-kubernetes-int-or-string": true,
                "anyOf": [{"type": "integer"}, {"type": "string"}]}}}}}),
        );
        let mut cr = json!({"spec": {"port": 80}});
        assert!(prune(&mut cr, &s, true).is_empty());
        assert_eq!(cr, json!({"spec": {"port": 80}}));
        let mut cr = json!({"spec": {"port": "http"}});
        assert!(prune(&mut cr, &s, true).is_empty());
        assert_eq!(cr, json!({"spec": {"port": "http"}}));
        // Not a valid value, but pruning runs before validation: the object loses its fields.
        let mut cr = json!({"spec": {"port": {"x": 1}}});
        assert_eq!(prune(&mut cr, &s, true), ["spec.port.x"]);
        assert_eq!(cr, json!({"spec": {"port": {}}}));
    }

    #[test]
    fn additional_properties() {
        let s = s(json!({"type": "object", "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "object",
                "properties": {"a": {"type": "string"}}}},
            "free": {"type": "object", "additionalProperties": true},
            "closed": {"type": "object", "additionalProperties": false}
        }}));
        let mut cr = json!({
            "labels": {"x": {"a": "1", "b": "2"}, "y": {}},
            "free": {"k": "v", "o": {"n": 1}, "l": [[{"m": 1}]]},
            "closed": {"k": "v"}
        });
        assert_eq!(
            prune(&mut cr, &s, true),
            ["free.l[0][0].m", "free.o.n", "labels.x.b"]
        );
        assert_eq!(
            cr,
            json!({
                "labels": {"x": {"a": "1"}, "y": {}},
                "free": {"k": "v", "o": {}, "l": [[{}]]},
                "closed": {"k": "v"}
            })
        );
    }

    #[test]
    fn nulls_of_non_nullable_fields_without_default_are_dropped() {
        let s = s(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "a": {"type": "string"},
                "b": {"type": "string", "nullable": true},
                "c": {"type": "string", "default": "x"},
                "m": {"type": "object", "additionalProperties": {"type": "string"}},
                "l": {"type": "array", "items": {"type": "object", "properties": {"d": {"type": "integer"}}}}
            }}}}),
        );
        let mut cr = json!({"spec": {"a": null, "b": null, "c": null, "m": {"k": null},
            "l": [null, {"d": null}]}});
        assert!(prune(&mut cr, &s, true).is_empty());
        assert_eq!(
            cr,
            json!({"spec": {"b": null, "c": null, "m": {}, "l": [null, {}]}})
        );
    }

    #[test]
    fn has_unknown_fields_agrees_with_pruning() {
        let s = s(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"a": {"type": "string"},
                "l": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}}}}},
            "keep": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"k": {"type": "object"}}},
            "plist": {"type": "array", "x-kubernetes-preserve-unknown-fields": true,
                "items": {"type": "object"}},
            "free": {"type": "object", "additionalProperties": true},
            "emb": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {}}
        }}));
        let cases = [
            (
                json!({"kind": "K", "metadata": {"x": 1}, "spec": {"a": "b", "l": [{"n": "m"}]}}),
                false,
            ),
            (json!({"spec": {"l": [{"n": "m", "o": 1}]}}), true),
            (json!({"spec": {"z": 1}}), true),
            (json!({"top": 1}), true),
            (json!({"keep": {"any": {"x": 1}}}), false),
            (json!({"keep": {"k": {"x": 1}}}), true),
            (json!({"plist": [{"x": 1}]}), false),
            (json!({"free": {"a": [[1]], "b": "c"}}), false),
            (json!({"free": {"a": [[{"x": 1}]]}}), true),
            (
                json!({"emb": {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}}}),
                false,
            ),
            (json!({"emb": {"spec": {}}}), true),
        ];
        for (obj, want) in cases {
            let mut pruned = obj.clone();
            prune_unknown(&mut pruned, &s, true, &mut Vec::new());
            assert_eq!(pruned != obj, want, "{obj}");
            assert_eq!(has_unknown_fields(&obj, &s, true), want, "{obj}");
        }
        // Not at a resource root, meta fields are unknown like any other.
        assert!(has_unknown_fields(&json!({"kind": "K"}), &s, false));
    }

    #[test]
    fn deep_arrays_without_schema_do_not_overflow() {
        let s = s(
            json!({"type": "object", "properties": {"free": {"type": "object",
            "additionalProperties": true}}}),
        );
        let mut inner = json!({"x": 1});
        for _ in 0..10_000 {
            inner = Value::Array(vec![inner]);
        }
        // Built by hand: `json!` would serialize `inner` recursively.
        let mut free = serde_json::Map::new();
        free.insert("k".to_owned(), inner);
        let mut cr = json!({"free": {}});
        cr["free"] = Value::Object(free);
        let paths = prune(&mut cr, &s, true);
        assert_eq!(paths.len(), 1);
        assert!(paths[0].starts_with("free.k[0][0]") && paths[0].ends_with("[0].x"));
        // Dropping a 10,000-deep Value recurses in serde_json; take it apart by hand.
        let mut v = cr["free"]["k"].take();
        while let Value::Array(mut a) = v {
            v = a.pop().unwrap_or(Value::Null);
        }
        assert_eq!(v, json!({}));
    }
}

/// The examples of this file's documentation, run as tests: the module is private to the
/// crate, so rustdoc does not run them.
#[cfg(test)]
mod examples {
    #[test]
    fn prune() {
        use crate::apiextensions::schema::{Structural, prune};
        use serde_json::json;

        let s = Structural::from_json(&json!({"type": "object", "properties": {"spec": {
            "type": "object", "properties": {"items": {"type": "array", "items": {
                "type": "object", "properties": {"name": {"type": "string"}}}}}}}}));
        let mut cr = json!({"kind": "Widget", "extra": 1,
            "spec": {"items": [{"name": "a", "bar": true}]}});
        assert_eq!(prune(&mut cr, &s, true), ["extra", "spec.items[0].bar"]);
        assert_eq!(
            cr,
            json!({"kind": "Widget", "spec": {"items": [{"name": "a"}]}})
        );
    }
}
