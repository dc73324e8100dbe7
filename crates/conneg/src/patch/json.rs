//! RFC 6902 JSON patch on a `serde_json::Value`.

use std::fmt;

use http::StatusCode;
use serde_json::Value;

use crate::status::{Status, StatusReason};

/// Why a JSON patch (RFC 6902) did not apply: a malformed operation, a path that does not
/// exist, or a failed `test`. Kubernetes answers these with 422 `Invalid`, which is what
/// `Status::from` gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonPatchError(String);

impl JsonPatchError {
    /// The explanation.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for JsonPatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JsonPatchError {}

impl From<JsonPatchError> for Status {
    fn from(err: JsonPatchError) -> Status {
        Status::failure(
            StatusCode::UNPROCESSABLE_ENTITY,
            StatusReason::Invalid,
            err.0,
        )
    }
}

/// Applies an RFC 6902 JSON patch (`ops` is the array of operations): `add`, `remove`,
/// `replace`, `move`, `copy` and `test`, with RFC 6901 JSON Pointers (`~1` is `/`, `~0` is `~`,
/// `-` appends to an array, array indexes without leading zeros). Operations apply in order
/// and the first failure aborts the whole patch. `test` compares numbers by value (`1` equals
/// `1.0`).
///
/// ```
/// use serde_json::json;
///
/// let doc = json!({"metadata": {"labels": {"a/b": "1"}}});
/// let ops = json!([
///     {"op": "test", "path": "/metadata/labels/a~1b", "value": "1"},
///     {"op": "replace", "path": "/metadata/labels/a~1b", "value": "2"},
/// ]);
/// let patched = conneg::patch::apply_json_patch(doc, &ops).unwrap();
/// assert_eq!(patched, json!({"metadata": {"labels": {"a/b": "2"}}}));
///
/// let failed = conneg::patch::apply_json_patch(patched, &json!([{"op": "test", "path": "/x", "value": 1}]));
/// assert_eq!(conneg::Status::from(failed.unwrap_err()).code(), 422);
/// ```
pub fn apply_json_patch(mut doc: Value, ops: &Value) -> Result<Value, JsonPatchError> {
    let err = |m: String| JsonPatchError(m);
    let Value::Array(ops) = ops else {
        return Err(err("a JSON patch must be an array of operations".into()));
    };
    for op in ops {
        let name = op
            .get("op")
            .and_then(Value::as_str)
            .ok_or_else(|| err("missing op in operation".into()))?;
        let path = op
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| err(format!("missing path in {name} operation")))?;
        check_pointer(path)?;
        let value = || {
            op.get("value")
                .cloned()
                .ok_or_else(|| err(format!("missing value in {name} operation")))
        };
        let from = || -> Result<&str, JsonPatchError> {
            let from = op
                .get("from")
                .and_then(Value::as_str)
                .ok_or_else(|| err(format!("missing from in {name} operation")))?;
            check_pointer(from)?;
            Ok(from)
        };
        match name {
            "add" => add(&mut doc, path, value()?)?,
            "remove" => {
                remove(&mut doc, path)?;
            }
            "replace" => {
                let value = value()?;
                match doc.pointer_mut(path) {
                    Some(slot) => *slot = value,
                    None => {
                        return Err(err(format!(
                            "replace operation does not apply: doc is missing path: {path:?}"
                        )));
                    }
                }
            }
            "move" => {
                let from = from()?;
                if from == path {
                    continue;
                }
                if path.starts_with(from) && path.as_bytes().get(from.len()) == Some(&b'/') {
                    return Err(err(format!(
                        "cannot move {from:?} into its own child {path:?}"
                    )));
                }
                let v = remove(&mut doc, from)?;
                add(&mut doc, path, v)?;
            }
            "copy" => {
                let from = from()?;
                let v = doc.pointer(from).cloned().ok_or_else(|| {
                    err(format!(
                        "copy operation does not apply: doc is missing from path: {from:?}"
                    ))
                })?;
                add(&mut doc, path, v)?;
            }
            "test" => {
                let want = value()?;
                if !doc.pointer(path).is_some_and(|have| json_eq(have, &want)) {
                    return Err(err(format!("testing value {path:?} failed")));
                }
            }
            other => return Err(err(format!("Unexpected kind: {other:?}"))),
        }
    }
    Ok(doc)
}

/// RFC 6901 syntax: empty, or `/`-separated tokens in which `~` is followed by `0` or `1`.
fn check_pointer(path: &str) -> Result<(), JsonPatchError> {
    let bad_escape = path
        .match_indices('~')
        .any(|(i, _)| !matches!(path.as_bytes().get(i + 1), Some(b'0' | b'1')));
    if (!path.is_empty() && !path.starts_with('/')) || bad_escape {
        return Err(JsonPatchError(format!("invalid JSON pointer {path:?}")));
    }
    Ok(())
}

/// An array index token: `0` or digits without a leading zero.
fn array_index(token: &str) -> Option<usize> {
    let digits = token.bytes().all(|b| b.is_ascii_digit());
    if token.is_empty() || !digits || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse().ok()
}

/// Splits `/a/b/c` into the parent pointer `/a/b` and the unescaped last token `c`.
fn split_last(path: &str) -> (&str, String) {
    let i = path.rfind('/').unwrap_or(0);
    let last = path[i + 1..].replace("~1", "/").replace("~0", "~");
    (&path[..i], last)
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), JsonPatchError> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = split_last(path);
    match doc.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.insert(last, value);
            Ok(())
        }
        Some(Value::Array(a)) => {
            let idx = if last == "-" {
                a.len()
            } else {
                array_index(&last)
                    .ok_or_else(|| JsonPatchError(format!("invalid array index {last:?}")))?
            };
            if idx > a.len() {
                return Err(JsonPatchError(format!(
                    "add operation does not apply: index {idx} is out of bounds"
                )));
            }
            a.insert(idx, value);
            Ok(())
        }
        _ => Err(JsonPatchError(format!(
            "add operation does not apply: doc is missing path: {path:?}"
        ))),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, JsonPatchError> {
    let missing = || {
        JsonPatchError(format!(
            "remove operation does not apply: doc is missing path: {path:?}"
        ))
    };
    if path.is_empty() {
        return Err(JsonPatchError("cannot remove the whole document".into()));
    }
    let (parent, last) = split_last(path);
    match doc.pointer_mut(parent) {
        Some(Value::Object(m)) => m.remove(&last).ok_or_else(missing),
        Some(Value::Array(a)) => match array_index(&last) {
            Some(idx) if idx < a.len() => Ok(a.remove(idx)),
            _ => Err(missing()),
        },
        _ => Err(missing()),
    }
}

/// JSON equality with numbers compared by value (RFC 6902 §4.6).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || (x.is_f64() || y.is_f64()) && x.as_f64() == y.as_f64()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_patch_every_op() {
        let doc = json!({"metadata":{"labels":{"a":"1","t~x":"3"}},"list":[1,2]});
        let ops = json!([
            {"op":"add","path":"/metadata/labels/b~1c","value":"2"},
            {"op":"remove","path":"/metadata/labels/a"},
            {"op":"test","path":"/metadata/labels/t~0x","value":"3"},
            {"op":"replace","path":"/list/0","value":9},
            {"op":"add","path":"/list/-","value":3},
            {"op":"add","path":"/list/1","value":7},
            {"op":"copy","from":"/list/0","path":"/x"},
            {"op":"move","from":"/x","path":"/y"},
            {"op":"move","from":"/y","path":"/y"},
            {"op":"test","path":"/y","value":9.0}
        ]);
        assert_eq!(
            apply_json_patch(doc, &ops).unwrap(),
            json!({"metadata":{"labels":{"b/c":"2","t~x":"3"}},"list":[9,7,2,3],"y":9})
        );
        assert_eq!(
            apply_json_patch(json!({"a":1}), &json!([{"op":"add","path":"","value":[1]}])).unwrap(),
            json!([1])
        );
    }

    #[test]
    fn json_patch_failures_are_422() {
        let failing = [
            json!({"op":"remove","path":"/nope"}),
            json!({"op":"replace","path":"/nope","value":1}),
            json!({"op":"test","path":"/a","value":2}),
            json!({"op":"test","path":"/nope","value":null}),
            json!({"op":"bogus","path":"/a"}),
            json!({"op":"add","path":"/l/01","value":1}),
            json!({"op":"add","path":"/l/3","value":1}),
            json!({"op":"add","path":"/l/+1","value":1}),
            json!({"op":"remove","path":"/l/-"}),
            json!({"op":"add","path":"/x/y","value":1}),
            json!({"op":"add","path":"a","value":1}),
            json!({"op":"add","path":"/a~2","value":1}),
            json!({"op":"add","path":"/a"}),
            json!({"op":"move","from":"/l","path":"/l/0"}),
            json!({"op":"copy","from":"/nope","path":"/b"}),
            json!({"op":"remove","path":""}),
            json!({"path":"/a"}),
        ];
        for op in failing {
            let doc = json!({"a":1,"l":[1,2]});
            let err = apply_json_patch(doc, &json!([op])).unwrap_err();
            assert_eq!(
                Status::from(err).code(),
                StatusCode::UNPROCESSABLE_ENTITY,
                "{op}"
            );
        }
        assert!(apply_json_patch(json!({}), &json!({"op":"add"})).is_err());
        // All or nothing: the first failure aborts (the caller keeps its own copy).
        let ops = json!([{"op":"add","path":"/b","value":1},{"op":"test","path":"/a","value":0}]);
        assert!(apply_json_patch(json!({"a":1}), &ops).is_err());
    }
}
