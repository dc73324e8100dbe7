//! PATCH documents: JSON merge patch (RFC 7396), JSON patch (RFC 6902), server-side apply
//! (treated as a merge of the applied configuration: these types have no lists with merge
//! keys), and strategic merge patch (merge patch plus the `$patch: replace|delete`
//! directives; lists are atomic in these types, so they are replaced).
//!
//! Everything works on `serde_json::Value`: the current object is serialized in the URL's
//! version, patched, and decoded back under the request's `fieldValidation`.

use conneg::{PatchType, Status, StatusReason};
use http::StatusCode;
use serde_json::{Map, Value};

/// Nesting allowed in a patch document (Kubernetes limits decoding depth too).
const MAX_DEPTH: usize = 10_000;

/// Parses a PATCH body of type `kind` into a JSON value (400 when it does not parse).
pub fn parse(kind: PatchType, body: &[u8]) -> Result<Value, Status> {
    let doc = match kind {
        PatchType::ApplyYaml => parse_yaml(body)?,
        _ => conneg::Patch {
            kind,
            body: bytes::Bytes::copy_from_slice(body),
        }
        .to_json_value()?,
    };
    match (kind, &doc) {
        (PatchType::JsonPatch, Value::Array(_)) => Ok(doc),
        (PatchType::JsonPatch, _) => Err(Status::bad_request(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
        )),
        (_, Value::Object(_)) => Ok(doc),
        _ => Err(Status::bad_request(
            "the body of the patch must be a JSON or CBOR object",
        )),
    }
}

/// `application/apply-patch+yaml`: YAML (JSON is a subset) into JSON values. Non-string keys
/// and non-finite numbers are refused.
fn parse_yaml(body: &[u8]) -> Result<Value, Status> {
    let bad = |e: String| Status::bad_request(format!("error decoding YAML: {e}"));
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(bad("empty document".into()));
    }
    let v: serde_norway::Value = serde_norway::from_slice(body).map_err(|e| bad(e.to_string()))?;
    yaml_to_json(v, 0).map_err(bad)
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

/// Applies `patch` (already parsed) of type `kind` to `target`.
pub fn apply(kind: PatchType, target: Value, patch: &Value) -> Result<Value, Status> {
    match kind {
        PatchType::MergePatch | PatchType::ApplyYaml | PatchType::ApplyCbor => {
            Ok(merge(target, patch))
        }
        PatchType::StrategicMergePatch | PatchType::StrategicMergePatchCbor => {
            strategic(Some(target), patch)
                .map(|v| v.unwrap_or_else(|| Value::Object(Map::new())))
                .map_err(|e| invalid_patch(&e))
        }
        PatchType::JsonPatch => json_patch(target, patch).map_err(|e| invalid_patch(&e)),
    }
}

fn invalid_patch(msg: &str) -> Status {
    Status::failure(StatusCode::UNPROCESSABLE_ENTITY, StatusReason::Invalid, msg)
}

/// RFC 7396 JSON merge patch.
pub fn merge(target: Value, patch: &Value) -> Value {
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
            t.insert(k.clone(), merge(cur, v));
        }
    }
    Value::Object(t)
}

/// Strategic merge patch for types without merge-keyed lists: a merge patch where
/// `$patch: replace` replaces the map, `$patch: delete` deletes it, and the bookkeeping
/// directives (`$setElementOrder/...`, `$retainKeys`, `$deleteFromPrimitiveList/...`) are
/// dropped. `Ok(None)` means "delete this value".
pub fn strategic(target: Option<Value>, patch: &Value) -> Result<Option<Value>, String> {
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

/// RFC 6902 JSON patch: add, remove, replace, move, copy, test.
pub fn json_patch(mut doc: Value, ops: &Value) -> Result<Value, String> {
    let Value::Array(ops) = ops else {
        return Err("a JSON patch must be an array of operations".into());
    };
    for op in ops {
        let name = op
            .get("op")
            .and_then(Value::as_str)
            .ok_or("missing op in operation")?;
        let path = op
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("missing path in {name} operation"))?;
        let value = || {
            op.get("value")
                .cloned()
                .ok_or_else(|| format!("missing value in {name} operation"))
        };
        let from = || {
            op.get("from")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("missing from in {name} operation"))
        };
        match name {
            "add" => add(&mut doc, path, value()?)?,
            "remove" => {
                remove(&mut doc, path)?;
            }
            "replace" => {
                remove(&mut doc, path)?;
                add(&mut doc, path, value()?)?;
            }
            "move" => {
                let from = from()?;
                if path.starts_with(&format!("{from}/")) {
                    return Err(format!("cannot move {from} into its own child {path}"));
                }
                let v = remove(&mut doc, from)?;
                add(&mut doc, path, v)?;
            }
            "copy" => {
                let v = doc
                    .pointer(from()?)
                    .cloned()
                    .ok_or_else(|| format!("copy from a missing path {}", from().unwrap_or("")))?;
                add(&mut doc, path, v)?;
            }
            "test" => {
                let want = value()?;
                if doc.pointer(path) != Some(&want) {
                    return Err(format!("testing value {path} failed"));
                }
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(doc)
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Splits `/a/b/c` into the parent pointer `/a/b` and the last token `c`.
fn split(path: &str) -> Result<(&str, String), String> {
    if path.is_empty() {
        return Err("cannot operate on the whole document".into());
    }
    if !path.starts_with('/') {
        return Err(format!("invalid JSON pointer {path:?}"));
    }
    let i = path.rfind('/').unwrap_or(0);
    Ok((&path[..i], unescape(&path[i + 1..])))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let (parent, last) = split(path)?;
    match doc.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.insert(last, value);
            Ok(())
        }
        Some(Value::Array(a)) => {
            let idx = if last == "-" {
                a.len()
            } else {
                last.parse::<usize>()
                    .map_err(|_| format!("invalid array index {last:?}"))?
            };
            if idx > a.len() {
                return Err(format!("add operation index {idx} out of bounds"));
            }
            a.insert(idx, value);
            Ok(())
        }
        _ => Err(format!(
            "add operation does not apply: doc is missing path: {path:?}"
        )),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, last) = split(path)?;
    let missing = || format!("remove operation does not apply: doc is missing path: {path:?}");
    match doc.pointer_mut(parent) {
        Some(Value::Object(m)) => m.remove(&last).ok_or_else(missing),
        Some(Value::Array(a)) => {
            let idx: usize = last.parse().map_err(|_| missing())?;
            if idx < a.len() {
                Ok(a.remove(idx))
            } else {
                Err(missing())
            }
        }
        _ => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_rfc7396_examples() {
        let t = json!({"a":"b","c":{"d":"e","f":"g"}});
        let p = json!({"a":"z","c":{"f":null}});
        assert_eq!(merge(t, &p), json!({"a":"z","c":{"d":"e"}}));
        assert_eq!(
            merge(json!({"a":["b"]}), &json!({"a":"c"})),
            json!({"a":"c"})
        );
        assert_eq!(merge(json!(["a"]), &json!({"a":"b"})), json!({"a":"b"}));
    }

    #[test]
    fn json_patch_ops() {
        let doc = json!({"metadata":{"labels":{"a":"1"}},"list":[1,2]});
        let ops = json!([
            {"op":"add","path":"/metadata/labels/b~1c","value":"2"},
            {"op":"remove","path":"/metadata/labels/a"},
            {"op":"replace","path":"/list/0","value":9},
            {"op":"add","path":"/list/-","value":3},
            {"op":"copy","from":"/list/0","path":"/x"},
            {"op":"move","from":"/x","path":"/y"},
            {"op":"test","path":"/y","value":9}
        ]);
        assert_eq!(
            json_patch(doc, &ops).unwrap(),
            json!({"metadata":{"labels":{"b/c":"2"}},"list":[9,2,3],"y":9})
        );
        assert!(json_patch(json!({}), &json!([{"op":"remove","path":"/nope"}])).is_err());
        assert!(json_patch(json!({}), &json!([{"op":"test","path":"/a","value":1}])).is_err());
        assert!(json_patch(json!({}), &json!([{"op":"bogus","path":"/a"}])).is_err());
        assert!(json_patch(json!({}), &json!([{"op":"add","path":"","value":1}])).is_err());
    }

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
    }
}
