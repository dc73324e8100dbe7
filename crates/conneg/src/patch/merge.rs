//! RFC 7396 JSON merge patch.

use serde_json::{Map, Value};

/// Applies an RFC 7396 JSON merge patch: objects merge key by key, `null` deletes a key, and
/// anything that is not an object replaces the target. Kubernetes applies
/// `application/merge-patch+json` this way, and server-side apply (`apply-patch+yaml`,
/// `apply-patch+cbor`) the same way for types without merge-keyed lists.
///
/// ```
/// use serde_json::json;
///
/// let target = json!({"a": "b", "c": {"d": "e", "f": "g"}});
/// let patch = json!({"a": "z", "c": {"f": null}});
/// assert_eq!(conneg::patch::apply_merge_patch(target, &patch), json!({"a": "z", "c": {"d": "e"}}));
/// ```
pub fn apply_merge_patch(target: Value, patch: &Value) -> Value {
    let Value::Object(p) = patch else {
        return patch.clone();
    };
    let mut t = match target {
        Value::Object(t) => t,
        _ => Map::new(),
    };
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            let cur = t.remove(k).unwrap_or(Value::Null);
            t.insert(k.clone(), apply_merge_patch(cur, v));
        }
    }
    Value::Object(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_rfc7396_appendix_a() {
        let cases = [
            (json!({"a":"b"}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"b"}), json!({"b":"c"}), json!({"a":"b","b":"c"})),
            (json!({"a":"b"}), json!({"a":null}), json!({})),
            (
                json!({"a":"b","b":"c"}),
                json!({"a":null}),
                json!({"b":"c"}),
            ),
            (json!({"a":["b"]}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"c"}), json!({"a":["b"]}), json!({"a":["b"]})),
            (
                json!({"a":{"b":"c"}}),
                json!({"a":{"b":"d","c":null}}),
                json!({"a":{"b":"d"}}),
            ),
            (json!({"a":[{"b":"c"}]}), json!({"a":[1]}), json!({"a":[1]})),
            (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
            (json!({"a":"b"}), json!(["c"]), json!(["c"])),
            (json!({"a":"foo"}), json!(null), json!(null)),
            (json!({"a":"foo"}), json!("bar"), json!("bar")),
            (json!({"e":null}), json!({"a":1}), json!({"e":null,"a":1})),
            (json!([1, 2]), json!({"a":"b","c":null}), json!({"a":"b"})),
            (
                json!({}),
                json!({"a":{"bb":{"ccc":null}}}),
                json!({"a":{"bb":{}}}),
            ),
        ];
        for (target, patch, want) in cases {
            assert_eq!(
                apply_merge_patch(target.clone(), &patch),
                want,
                "{target} + {patch}"
            );
        }
    }
}
