//! Defaulting: missing fields of a custom resource take their schema's `default`
//! (apiextensions-apiserver's `structuraldefaulting.Default`), on every write after pruning and
//! on every read from storage (reference §3.2 step 5, §3.5).

use serde_json::Value;

use super::Structural;

/// Fills the fields of `obj` that `s` gives a `default` and that are missing, or `null`
/// although not `nullable`, with a copy of that default, through `properties`, `items` and
/// `additionalProperties`. A default put in place is walked like any other value, so defaults
/// nested inside it apply too. Run [`prune`](super::prune) first: `null`s without a default
/// are its to drop.
pub(crate) fn apply_defaults(obj: &mut Value, s: &Structural) {
    match obj {
        Value::Object(m) => {
            for (k, p) in &s.properties {
                let Some(d) = &p.default else { continue };
                match m.get_mut(k) {
                    None => {
                        m.insert(k.clone(), d.clone());
                    }
                    Some(v) if v.is_null() && !p.nullable => *v = d.clone(),
                    Some(_) => {}
                }
            }
            for (k, v) in m.iter_mut() {
                if let Some(p) = s.properties.get(k) {
                    apply_defaults(v, p);
                } else if let Some(aps) = s.additional_properties.as_ref().and_then(|a| a.schema())
                {
                    fill_null(v, aps);
                    apply_defaults(v, aps);
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.items.as_deref() {
                for v in a {
                    fill_null(v, items);
                    apply_defaults(v, items);
                }
            }
        }
        _ => {}
    }
}

/// A `null` where `s` is not nullable and has a default becomes the default.
fn fill_null(v: &mut Value, s: &Structural) {
    if v.is_null()
        && !s.nullable
        && let Some(d) = &s.default
    {
        *v = d.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn defaulted(schema: Value, mut obj: Value) -> Value {
        apply_defaults(&mut obj, &Structural::from_json(&schema));
        obj
    }

    #[test]
    fn missing_and_null_fields() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "a": {"type": "string", "default": "A"},
            "b": {"type": "string", "default": "B", "nullable": true},
            "c": {"type": "string", "default": "C"},
            "d": {"type": "string", "default": "D"},
            "e": {"type": "string"}
        }}}});
        assert_eq!(
            defaulted(
                schema,
                json!({"spec": {"b": null, "c": null, "d": "set", "e": null}})
            ),
            json!({"spec": {"a": "A", "b": null, "c": "C", "d": "set", "e": null}})
        );
    }

    #[test]
    fn defaults_inside_a_default_apply() {
        let schema = json!({"type": "object", "properties": {"spec": {
        "type": "object", "default": {"size": 2},
        "properties": {
            "size": {"type": "integer"},
            "policy": {"type": "object", "default": {},
                "properties": {"mode": {"type": "string", "default": "Always"}}}
        }}}});
        assert_eq!(
            defaulted(schema.clone(), json!({})),
            json!({"spec": {"size": 2, "policy": {"mode": "Always"}}})
        );
        // The schema's default is copied, never shared or changed.
        let s = Structural::from_json(&schema);
        let mut a = json!({});
        apply_defaults(&mut a, &s);
        a["spec"]["size"] = json!(9);
        let mut b = json!({});
        apply_defaults(&mut b, &s);
        assert_eq!(b["spec"]["size"], json!(2));
        assert_eq!(s.properties["spec"].default, Some(json!({"size": 2})));
    }

    #[test]
    fn arrays_and_maps() {
        let schema = json!({"type": "object", "properties": {
            "ports": {"type": "array", "items": {"type": "object", "default": {"name": "p"},
                "properties": {"protocol": {"type": "string", "default": "TCP"},
                               "name": {"type": "string"}}}},
            "limits": {"type": "object", "additionalProperties": {"type": "object",
                "default": {"max": 1},
                "properties": {"min": {"type": "integer", "default": 0},
                               "max": {"type": "integer"}}}},
            "names": {"type": "array", "items": {"type": "string", "nullable": true, "default": "x"}}
        }});
        assert_eq!(
            defaulted(
                schema,
                json!({
                    "ports": [{"name": "http"}, null, {"protocol": "UDP"}],
                    "limits": {"cpu": {"max": 4}, "mem": null},
                    "names": [null, "y"]
                })
            ),
            json!({
                "ports": [{"name": "http", "protocol": "TCP"}, {"name": "p", "protocol": "TCP"},
                          {"protocol": "UDP"}],
                "limits": {"cpu": {"max": 4, "min": 0}, "mem": {"max": 1, "min": 0}},
                "names": [null, "y"]
            })
        );
    }

    #[test]
    fn values_of_the_wrong_type_are_left_alone() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"a": {"type": "string", "default": "A"}}}}});
        assert_eq!(
            defaulted(schema.clone(), json!({"spec": [1, 2]})),
            json!({"spec": [1, 2]})
        );
        assert_eq!(defaulted(schema, json!("x")), json!("x"));
    }
}

/// The examples of this file's documentation, run as tests: the module is private to the
/// crate, so rustdoc does not run them.
#[cfg(test)]
mod examples {
    #[test]
    fn apply_defaults() {
        use crate::apiextensions::schema::{Structural, apply_defaults};
        use serde_json::json;

        let s = Structural::from_json(&json!({"type": "object", "properties": {"spec": {
            "type": "object", "default": {},
            "properties": {"replicas": {"type": "integer", "default": 1}}}}}));
        let mut cr = json!({"kind": "Widget"});
        apply_defaults(&mut cr, &s);
        assert_eq!(cr, json!({"kind": "Widget", "spec": {"replicas": 1}}));
    }
}
