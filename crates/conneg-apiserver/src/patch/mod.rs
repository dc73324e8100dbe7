//! PATCH documents: JSON merge patch (RFC 7396), JSON patch (RFC 6902), and strategic merge
//! patch (merge patch plus the `$patch: replace|delete` directives; lists are atomic in these
//! types, so they are replaced). Server-side apply documents are parsed here and applied with
//! field ownership by the [`apply`](crate::apply) module.
//!
//! Merge patch and JSON patch are conneg's ([`conneg::patch`]). Everything works on
//! `serde_json::Value`: the current object is serialized in the URL's version, patched, and
//! decoded back under the request's `fieldValidation`.

mod error;
mod yaml_depth;

use conneg::PatchType;
use conneg::patch::{apply_json_patch, apply_merge_patch, check_patched_size};
use serde_json::{Map, Value};

pub use error::PatchError;

/// Nesting allowed in a patch document. The wardle types are a few levels deep; patching,
/// serializing and decoding walk documents recursively, so a deeper patch is refused up front
/// (400) rather than risk a task's stack. YAML is checked before it is parsed
/// ([`yaml_depth`]), as its parser slows down with the depth.
const MAX_DEPTH: usize = 100;

/// UTF-8's byte-order mark, which a YAML document may start with.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Parses a PATCH body of type `kind` into a JSON value (400 when it does not parse).
pub fn parse(kind: PatchType, body: &[u8]) -> Result<Value, PatchError> {
    let doc = match kind {
        PatchType::ApplyYaml => parse_yaml(body)?,
        _ => conneg::Patch {
            kind,
            body: bytes::Bytes::copy_from_slice(body),
        }
        .to_json_value()
        // conneg answers 400 for every body that does not parse: its message is the reason.
        .map_err(|status| PatchError::Malformed(status.message))?,
    };
    if depth(&doc) > MAX_DEPTH {
        // CBOR decodes up to 10000 levels (on a grown stack); dropping such a value recurses
        // as deep, so drop it on a stack of its own too.
        stacker::grow(64 << 20, move || drop(doc));
        return Err(PatchError::TooDeep);
    }
    match (kind, &doc) {
        (PatchType::JsonPatch, Value::Array(_)) => Ok(doc),
        (PatchType::JsonPatch, _) => Err(PatchError::NotAList),
        (_, Value::Object(_)) => Ok(doc),
        _ => Err(PatchError::NotAnObject),
    }
}

/// The nesting depth of a JSON value, without recursion.
fn depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            Value::Object(m) => stack.extend(m.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    max
}

/// `application/apply-patch+yaml`: YAML (JSON is a subset) into JSON values. Non-string keys
/// and non-finite numbers are refused, and so is YAML that is not UTF-8 (the depth scan reads
/// UTF-8 only) or whose flow collections nest deeper than [`MAX_DEPTH`] (before parsing).
fn parse_yaml(body: &[u8]) -> Result<Value, PatchError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(PatchError::Yaml("empty document".into()));
    }
    let text = body.strip_prefix(BOM).unwrap_or(body);
    if std::str::from_utf8(text).is_err() {
        return Err(PatchError::Yaml("the document is not UTF-8".into()));
    }
    if yaml_depth::flow_depth_exceeds(text, MAX_DEPTH) {
        return Err(PatchError::TooDeep);
    }
    let v: serde_norway::Value =
        serde_norway::from_slice(body).map_err(|e| PatchError::Yaml(e.to_string()))?;
    yaml_to_json(v, 0).map_err(PatchError::Yaml)
}

fn yaml_to_json(v: serde_norway::Value, depth: usize) -> Result<Value, String> {
    use serde_norway::Value as Y;
    if depth > MAX_DEPTH {
        return Err("document nested too deeply".into());
    }
    Ok(match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                Value::Number(
                    serde_json::Number::from_f64(f)
                        .ok_or_else(|| format!("number {n} is not representable in JSON"))?,
                )
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(
            items
                .into_iter()
                .map(|i| yaml_to_json(i, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Y::Mapping(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let k = match k {
                    Y::String(s) => s,
                    other => return Err(format!("map key {other:?} is not a string")),
                };
                if out.insert(k.clone(), yaml_to_json(v, depth + 1)?).is_some() {
                    return Err(format!("duplicate key {k:?}"));
                }
            }
            Value::Object(out)
        }
        Y::Tagged(t) => yaml_to_json(t.value, depth + 1)?,
    })
}

/// Applies `patch` (already parsed) of type `kind` to `target`. A result larger than a request
/// body may be is 413, whatever the patch type. Apply patches are not patches of a document
/// but server-side applies ([`crate::apply`]): 500 here.
pub fn apply(kind: PatchType, target: Value, patch: &Value) -> Result<Value, PatchError> {
    let patched = match kind {
        PatchType::MergePatch => apply_merge_patch(target, patch),
        PatchType::ApplyYaml | PatchType::ApplyCbor => {
            return Err(PatchError::NotMergeable);
        }
        PatchType::StrategicMergePatch | PatchType::StrategicMergePatchCbor => {
            strategic(Some(target), patch)
                .map(|v| v.unwrap_or_else(|| Value::Object(Map::new())))
                .map_err(PatchError::Invalid)?
        }
        PatchType::JsonPatch => apply_json_patch(target, patch).map_err(PatchError::JsonPatch)?,
    };
    check_size(&patched)?;
    Ok(patched)
}

/// 413 for a patched object larger than a request body may be.
fn check_size(patched: &Value) -> Result<(), PatchError> {
    let limit = conneg::DEFAULT_BODY_LIMIT;
    check_patched_size(patched, limit).map_err(|_| PatchError::TooLarge(limit))
}

/// [`check_size`] for an object already written out as compact JSON, `len` bytes long.
pub(crate) fn check_len(len: usize) -> Result<(), PatchError> {
    let limit = conneg::DEFAULT_BODY_LIMIT;
    if len > limit {
        return Err(PatchError::TooLarge(limit));
    }
    Ok(())
}

/// Strategic merge patch for types without merge-keyed lists: a merge patch where
/// `$patch: replace` replaces the map, `$patch: delete` deletes it, and the bookkeeping
/// directives (`$setElementOrder/...`, `$retainKeys`, `$deleteFromPrimitiveList/...`) are
/// dropped. `Ok(None)` means "delete this value".
fn strategic(target: Option<Value>, patch: &Value) -> Result<Option<Value>, String> {
    let Value::Object(p) = patch else {
        return Ok(Some(patch.clone()));
    };
    match p.get("$patch") {
        None => {}
        Some(Value::String(d)) if d == "replace" => {
            let mut out = Map::new();
            for (k, v) in p {
                if k == "$patch" || is_directive(k) {
                    continue;
                }
                if let Some(v) = strategic(None, v)? {
                    out.insert(k.clone(), v);
                }
            }
            return Ok(Some(Value::Object(out)));
        }
        Some(Value::String(d)) if d == "delete" => return Ok(None),
        Some(other) => return Err(format!("Unknown patch type: {other}")),
    }
    let mut t = match target {
        Some(Value::Object(t)) => t,
        _ => Map::new(),
    };
    for (k, v) in p {
        if is_directive(k) {
            continue;
        }
        if v.is_null() {
            t.remove(k);
            continue;
        }
        let cur = t.remove(k);
        if let Some(v) = strategic(cur, v)? {
            t.insert(k.clone(), v);
        }
    }
    Ok(Some(Value::Object(t)))
}

fn is_directive(k: &str) -> bool {
    k.starts_with("$setElementOrder/")
        || k.starts_with("$deleteFromPrimitiveList/")
        || k == "$retainKeys"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_directives() {
        let t = json!({"spec":{"a":"1","b":"2"},"metadata":{"labels":{"x":"y"}}});
        let p = json!({"spec":{"$patch":"replace","c":"3"},"metadata":{"labels":{"$patch":"delete"}},
                       "$setElementOrder/list":[]});
        assert_eq!(
            strategic(Some(t), &p).unwrap().unwrap(),
            json!({"spec":{"c":"3"},"metadata":{}})
        );
        assert!(strategic(None, &json!({"$patch":"bogus"})).is_err());
    }

    #[test]
    fn a_result_larger_than_a_body_is_413_whatever_the_patch_type() {
        let big = "x".repeat(2 << 20);
        let target = json!({"metadata": {"name": "a"}, "spec": {"a": big}});
        let merge = json!({"spec": {"b": big}});
        for kind in [PatchType::MergePatch, PatchType::StrategicMergePatch] {
            let err = apply(kind, target.clone(), &merge).unwrap_err();
            assert_eq!(err, PatchError::TooLarge(conneg::DEFAULT_BODY_LIMIT), "{kind:?}");
        }
        let add = json!([{"op": "add", "path": "/spec/b", "value": big}]);
        let err = apply(PatchType::JsonPatch, target.clone(), &add).unwrap_err();
        assert_eq!(conneg::Status::from(err).code(), 413);
        // Under the bound, the same patch applies.
        let small = json!({"spec": {"b": "y"}});
        assert!(apply(PatchType::MergePatch, target, &small).is_ok());
    }

    #[test]
    fn yaml_subset() {
        let v = parse(
            PatchType::ApplyYaml,
            b"apiVersion: wardle.example.com/v1beta1\nkind: Flunder\nmetadata:\n  name: x\n  labels: {a: 'yes'}\nspec: {}\n",
        )
        .unwrap();
        assert_eq!(v["metadata"]["labels"]["a"], "yes");
        assert!(parse(PatchType::ApplyYaml, b"a: [").is_err());
        assert!(parse(PatchType::ApplyYaml, b"{1: 2}").is_err());
        assert!(parse(PatchType::ApplyYaml, b"- a").is_err());
        assert!(parse(PatchType::ApplyYaml, br#"{"a":1}"#).is_ok());
        assert!(parse(PatchType::MergePatch, b"[1]").is_err());
        assert!(parse(PatchType::JsonPatch, b"{}").is_err());
        let deep = format!("{}1{}", "{\"a\":".repeat(150), "}".repeat(150));
        assert!(parse(PatchType::MergePatch, deep.as_bytes()).is_err());
        assert_eq!(depth(&serde_json::json!({"a": [1, {"b": 2}]})), 4);
    }

    #[test]
    fn deep_yaml_is_refused_by_the_scan() {
        // The parser's own refusal says "recursion limit exceeded"; the scan's message shows
        // the body never reached it.
        for body in [
            "[".repeat(100_000).into_bytes(),
            format!("a: {}", "{b: ".repeat(MAX_DEPTH + 1)).into_bytes(),
            [BOM, "[".repeat(MAX_DEPTH + 1).as_bytes()].concat(),
        ] {
            let err = parse(PatchType::ApplyYaml, &body).unwrap_err();
            assert_eq!(err, PatchError::TooDeep);
        }
        let nested = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(!super::yaml_depth::flow_depth_exceeds(
            nested.as_bytes(),
            MAX_DEPTH
        ));
        let utf16 = [0xFE, 0xFF, 0, b'[', 0, b'['];
        assert!(parse(PatchType::ApplyYaml, &utf16).is_err());
    }
}
