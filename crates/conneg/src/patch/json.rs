//! RFC 6902 JSON patch on a `serde_json::Value`.

use std::fmt;

use http::StatusCode;
use serde_json::Value;

use crate::status::{Status, StatusReason};

/// Kubernetes' bound on the operations in one JSON patch (`maxJSONPatchOperations`).
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// Kubernetes' bound on how much `copy` operations may add to a document, in bytes of JSON
/// (`JSONPatchMaxCopyBytes`, the same 3 MiB as the request body limit).
pub const MAX_JSON_PATCH_COPY_BYTES: usize = 3 * 1024 * 1024;

/// Why a JSON patch did not apply: too many operations (413, as Kubernetes), or a malformed
/// operation, a path that does not exist, a failed `test`, copies past their bound (422
/// `Invalid`, as Kubernetes). `Status::from` gives that answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonPatchError {
    message: String,
    too_large: bool,
}

impl JsonPatchError {
    fn new(message: impl Into<String>) -> Self {
        JsonPatchError {
            message: message.into(),
            too_large: false,
        }
    }

    /// The explanation, in Kubernetes' words.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for JsonPatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for JsonPatchError {}

impl From<JsonPatchError> for Status {
    fn from(err: JsonPatchError) -> Status {
        let (code, reason) = if err.too_large {
            (
                StatusCode::PAYLOAD_TOO_LARGE,
                StatusReason::RequestEntityTooLarge,
            )
        } else {
            (StatusCode::UNPROCESSABLE_ENTITY, StatusReason::Invalid)
        };
        Status::failure(code, reason, err.message)
    }
}

/// Applies a JSON patch (`ops` is the array of operations) as Kubernetes does: RFC 6902's
/// `add`, `remove`, `replace`, `move`, `copy` and `test` with RFC 6901 pointers (`~1` is `/`,
/// `~0` is `~`, `-` appends), with the differences of the library Kubernetes uses
/// (evanphx/json-patch v4), which clients rely on:
///
/// * `test` of a path that does not exist passes when the expected value is `null` (or
///   absent): kube-rs' finalizer helper and client-go patches start with
///   `{"op":"test","path":"/metadata/finalizers","value":null}`;
/// * numbers in `test` compare as written (`1` is not `1.0`);
/// * negative array indexes count from the end (`-1` is the last item; `add` at `-1` appends);
///   indexes may have leading zeros (`01`);
/// * `replace` of a missing object member adds it; `copy` from a missing object member copies
///   `null`;
/// * the whole document (`""`) cannot be the target of `add` or `remove`, nor the source of
///   `copy` or `move` (`replace` and `test` of `""` work);
/// * at most [`MAX_JSON_PATCH_OPERATIONS`] operations (more: 413), and `copy` operations
///   together add at most [`MAX_JSON_PATCH_COPY_BYTES`] of JSON (more: 422), so a short patch
///   cannot double a document again and again.
///
/// Operations apply in order and the first failure aborts the whole patch.
///
/// ```
/// use serde_json::json;
///
/// let doc = json!({"metadata": {"labels": {"a/b": "1"}}});
/// let ops = json!([
///     {"op": "test", "path": "/metadata/finalizers", "value": null},
///     {"op": "add", "path": "/metadata/finalizers", "value": ["cleanup"]},
///     {"op": "replace", "path": "/metadata/labels/a~1b", "value": "2"},
/// ]);
/// let patched = conneg::patch::apply_json_patch(doc, &ops).unwrap();
/// assert_eq!(patched, json!({"metadata": {"labels": {"a/b": "2"}, "finalizers": ["cleanup"]}}));
///
/// let failed = conneg::patch::apply_json_patch(patched, &json!([{"op": "test", "path": "/x", "value": 1}]));
/// assert_eq!(conneg::Status::from(failed.unwrap_err()).code(), 422);
/// ```
pub fn apply_json_patch(mut doc: Value, ops: &Value) -> Result<Value, JsonPatchError> {
    let Value::Array(ops) = ops else {
        return Err(JsonPatchError::new(
            "a JSON patch must be an array of operations",
        ));
    };
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(JsonPatchError {
            message: format!(
                "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                ops.len()
            ),
            too_large: true,
        });
    }
    let mut copied = 0usize;
    for op in ops {
        apply_op(&mut doc, op, &mut copied)?;
    }
    Ok(doc)
}

fn apply_op(doc: &mut Value, op: &Value, copied: &mut usize) -> Result<(), JsonPatchError> {
    let name = op
        .get("op")
        .and_then(Value::as_str)
        .ok_or_else(|| err("missing op in operation"))?;
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
        "add" => add(doc, path, value()?, "add"),
        "remove" => remove(doc, path, "remove").map(drop),
        "replace" => {
            let value = value()?;
            if path.is_empty() {
                if !value.is_object() && !value.is_array() {
                    return Err(err(
                        "replace operation value must be object or array: missing value",
                    ));
                }
                *doc = value;
                return Ok(());
            }
            let (parent, key) = split_last(path);
            match parent_mut(doc, parent) {
                Some(Value::Object(m)) => {
                    m.insert(key, value);
                    Ok(())
                }
                Some(Value::Array(a)) => {
                    let i = existing_index(a.len(), &key)
                        .map_err(|e| err(format!("error in remove for path: '{path}': {e}")))?;
                    a[i] = value;
                    Ok(())
                }
                _ => Err(err(format!(
                    "replace operation does not apply: doc is missing path: {path}: missing value"
                ))),
            }
        }
        "move" => {
            let from = from()?;
            if from.is_empty() {
                return Err(err(
                    "move operation does not apply: doc is missing from path: : missing value",
                ));
            }
            let v = remove(doc, from, "move")?;
            add(doc, path, v, "move")
        }
        "copy" => {
            let from = from()?;
            let v = if from.is_empty() {
                None
            } else {
                get(doc, from).map(|v| v.cloned().unwrap_or(Value::Null))
            };
            let v = v.ok_or_else(|| {
                err(format!(
                    "copy operation does not apply: doc is missing from path: {from}: missing value"
                ))
            })?;
            *copied = copied.saturating_add(super::json_len(&v));
            if *copied > MAX_JSON_PATCH_COPY_BYTES {
                return Err(err(format!(
                    "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_JSON_PATCH_COPY_BYTES}"
                )));
            }
            add(doc, path, v, "copy")
        }
        "test" => {
            // A missing "value" and `null` mean the same: the path holds null or nothing.
            let want = op.get("value").unwrap_or(&Value::Null);
            let have = if path.is_empty() {
                Some(Some(&*doc))
            } else {
                get(doc, path)
            };
            match have {
                None => Err(err(format!(
                    "test operation does not apply: is missing path: {path}: missing value"
                ))),
                Some(have) if same(have.unwrap_or(&Value::Null), want) => Ok(()),
                Some(_) => Err(err(format!("testing value {path} failed: test failed"))),
            }
        }
        other => Err(err(format!("Unexpected kind: {other}"))),
    }
}

fn err(message: impl Into<String>) -> JsonPatchError {
    JsonPatchError::new(message)
}

/// RFC 6901 syntax: empty, or `/`-separated tokens in which `~` is followed by `0` or `1`.
/// (Kubernetes' library reads a malformed pointer somehow; conneg refuses it.)
fn check_pointer(path: &str) -> Result<(), JsonPatchError> {
    let bad_escape = path
        .match_indices('~')
        .any(|(i, _)| !matches!(path.as_bytes().get(i + 1), Some(b'0' | b'1')));
    if (!path.is_empty() && !path.starts_with('/')) || bad_escape {
        return Err(JsonPatchError::new(format!(
            "invalid JSON pointer {path:?}"
        )));
    }
    Ok(())
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Splits `/a/b/c` into the parent pointer `/a/b` and the unescaped last token `c`.
fn split_last(path: &str) -> (&str, String) {
    match path.rfind('/') {
        Some(i) => (&path[..i], unescape(&path[i + 1..])),
        None => ("", String::new()),
    }
}

/// An array index as Go's `strconv.Atoi` reads it (sign, digits, leading zeros allowed), or
/// why not.
fn parse_index(token: &str) -> Result<i64, String> {
    let digits = token.strip_prefix(['+', '-']).unwrap_or(token);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("value was not a proper array index: '{token}'"));
    }
    token
        .parse()
        .map_err(|_| format!("value was not a proper array index: '{token}'"))
}

fn invalid_index(i: i64) -> String {
    format!("Unable to access invalid index: {i}: invalid index referenced")
}

/// The position of an existing item: `0..len`, or `-len..0` counted from the end.
fn existing_index(len: usize, token: &str) -> Result<usize, String> {
    let i = parse_index(token)?;
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let at = if i < 0 { i + len_i } else { i };
    if at < 0 || at >= len_i {
        return Err(invalid_index(i));
    }
    Ok(at as usize)
}

/// The container a pointer names, following Kubernetes' reading of each token (negative
/// indexes count from the end).
fn parent_mut<'a>(doc: &'a mut Value, pointer: &str) -> Option<&'a mut Value> {
    let mut cur = doc;
    if pointer.is_empty() {
        return Some(cur);
    }
    for token in pointer[1..].split('/') {
        cur = match cur {
            Value::Object(m) => m.get_mut(&unescape(token))?,
            Value::Array(a) => {
                let i = existing_index(a.len(), token).ok()?;
                &mut a[i]
            }
            _ => return None,
        };
    }
    Some(cur)
}

/// What `path` holds: `None` when its parent is missing, `Some(None)` when the parent is an
/// object without that member (Kubernetes reads that as `null`).
fn get<'a>(doc: &'a mut Value, path: &str) -> Option<Option<&'a Value>> {
    let (parent, key) = split_last(path);
    match parent_mut(doc, parent)? {
        Value::Object(m) => Some(m.get(&key)),
        Value::Array(a) => existing_index(a.len(), &key).ok().map(|i| Some(&a[i])),
        _ => None,
    }
}

fn add(doc: &mut Value, path: &str, value: Value, op: &str) -> Result<(), JsonPatchError> {
    let (parent, key) = split_last(path);
    let container = if path.is_empty() {
        None
    } else {
        parent_mut(doc, parent)
    };
    match container {
        Some(Value::Object(m)) => {
            m.insert(key, value);
            Ok(())
        }
        Some(Value::Array(a)) => {
            let at = if key == "-" {
                Ok(a.len())
            } else {
                parse_index(&key).and_then(|i| {
                    let slots = i64::try_from(a.len() + 1).unwrap_or(i64::MAX);
                    let at = if i < 0 { i + slots } else { i };
                    if at < 0 || at >= slots {
                        Err(invalid_index(i))
                    } else {
                        Ok(at as usize)
                    }
                })
            };
            let at = at.map_err(|e| {
                JsonPatchError::new(format!("error in {op} for path: '{path}': {e}"))
            })?;
            a.insert(at, value);
            Ok(())
        }
        _ => Err(JsonPatchError::new(format!(
            "{op} operation does not apply: doc is missing path: \"{path}\": missing value"
        ))),
    }
}

fn remove(doc: &mut Value, path: &str, op: &str) -> Result<Value, JsonPatchError> {
    let (parent, key) = split_last(path);
    let container = if path.is_empty() {
        None
    } else {
        parent_mut(doc, parent)
    };
    let removed = match container {
        Some(Value::Object(m)) => m
            .remove(&key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}: missing value")),
        Some(Value::Array(a)) => existing_index(a.len(), &key).map(|i| a.remove(i)),
        _ => {
            return Err(JsonPatchError::new(format!(
                "{op} operation does not apply: doc is missing path: \"{path}\": missing value"
            )));
        }
    };
    removed.map_err(|e| JsonPatchError::new(format!("error in {op} for path: '{path}': {e}")))
}

/// Kubernetes' `test` equality: structural, with numbers compared as written (`1` is not
/// `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn apply(doc: Value, ops: Value) -> Result<Value, String> {
        apply_json_patch(doc, &ops).map_err(|e| e.message)
    }

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
            {"op":"test","path":"/y","value":9}
        ]);
        assert_eq!(
            apply(doc, ops).unwrap(),
            json!({"metadata":{"labels":{"b/c":"2","t~x":"3"}},"list":[9,7,2,3],"y":9})
        );
        assert_eq!(
            apply(
                json!({"a":1}),
                json!([{"op":"replace","path":"","value":[1]}])
            )
            .unwrap(),
            json!([1])
        );
        assert_eq!(
            apply(
                json!({"a":1}),
                json!([{"op":"test","path":"","value":{"a":1}}])
            )
            .unwrap(),
            json!({"a":1})
        );
    }

    #[test]
    fn json_patch_failures_are_422() {
        let failing = [
            json!({"op":"remove","path":"/nope"}),
            json!({"op":"test","path":"/a","value":2}),
            json!({"op":"test","path":"/a","value":null}),
            json!({"op":"test","path":"/nope/deeper","value":null}),
            json!({"op":"bogus","path":"/a"}),
            json!({"op":"add","path":"/l/3","value":1}),
            json!({"op":"add","path":"/l/-4","value":1}),
            json!({"op":"add","path":"/l/x","value":1}),
            json!({"op":"remove","path":"/l/-"}),
            json!({"op":"remove","path":"/l/2"}),
            json!({"op":"replace","path":"/l/-3","value":1}),
            json!({"op":"add","path":"/x/y","value":1}),
            json!({"op":"add","path":"a","value":1}),
            json!({"op":"add","path":"/a~2","value":1}),
            json!({"op":"add","path":"/a"}),
            json!({"op":"move","from":"/l","path":"/l/0"}),
            json!({"op":"move","from":"/nope","path":"/b"}),
            json!({"op":"copy","from":"/nope/deeper","path":"/b"}),
            json!({"op":"remove","path":""}),
            json!({"op":"replace","path":"","value":1}),
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
        assert!(apply(json!({}), json!({"op":"add"})).is_err());
        // All or nothing: the first failure aborts (the caller keeps its own copy).
        let ops = json!([{"op":"add","path":"/b","value":1},{"op":"test","path":"/a","value":0}]);
        assert!(apply(json!({"a":1}), ops).is_err());
    }

    // Each difference from RFC 6902 that Kubernetes' library has, one test each.

    #[test]
    fn test_of_a_missing_member_against_null_passes() {
        // kube-rs' finalizer helper: the first finalizer of an object.
        let ops = json!([
            {"op":"test","path":"/metadata/finalizers","value":null},
            {"op":"add","path":"/metadata/finalizers","value":["x"]}
        ]);
        let doc = json!({"metadata":{"name":"a"}});
        assert_eq!(
            apply(doc.clone(), ops.clone()).unwrap(),
            json!({"metadata":{"name":"a","finalizers":["x"]}})
        );
        // No "value" at all reads as null too; a member that is null passes as well.
        assert!(apply(doc.clone(), json!([{"op":"test","path":"/metadata/x"}])).is_ok());
        assert!(
            apply(
                json!({"a":null}),
                json!([{"op":"test","path":"/a","value":null}])
            )
            .is_ok()
        );
        // But a member that exists is not null, and once added the helper's test fails.
        let twice = apply(apply(doc, ops.clone()).unwrap(), ops).unwrap_err();
        assert_eq!(
            twice,
            "testing value /metadata/finalizers failed: test failed"
        );
        // A missing parent is still an error, not null.
        assert_eq!(
            apply(
                json!({}),
                json!([{"op":"test","path":"/metadata/finalizers","value":null}])
            )
            .unwrap_err(),
            "test operation does not apply: is missing path: /metadata/finalizers: missing value"
        );
    }

    #[test]
    fn test_compares_numbers_as_written() {
        assert!(apply(json!({"n":1}), json!([{"op":"test","path":"/n","value":1}])).is_ok());
        assert!(
            apply(
                json!({"n":1}),
                json!([{"op":"test","path":"/n","value":1.0}])
            )
            .is_err()
        );
        assert!(
            apply(
                json!({"n":1.5}),
                json!([{"op":"test","path":"/n","value":1.5}])
            )
            .is_ok()
        );
    }

    #[test]
    fn negative_indexes_count_from_the_end_and_leading_zeros_are_read() {
        let doc = json!({"l":[1,2,3]});
        let ops = |op: Value| apply(doc.clone(), json!([op])).unwrap();
        assert_eq!(
            ops(json!({"op":"remove","path":"/l/-1"})),
            json!({"l":[1,2]})
        );
        assert_eq!(
            ops(json!({"op":"replace","path":"/l/-3","value":0})),
            json!({"l":[0,2,3]})
        );
        assert_eq!(
            ops(json!({"op":"add","path":"/l/-1","value":4})),
            json!({"l":[1,2,3,4]})
        );
        assert_eq!(
            ops(json!({"op":"add","path":"/l/-4","value":0})),
            json!({"l":[0,1,2,3]})
        );
        assert_eq!(
            ops(json!({"op":"add","path":"/l/01","value":9})),
            json!({"l":[1,9,2,3]})
        );
        assert_eq!(ops(json!({"op":"test","path":"/l/-2","value":2})), doc);
        assert_eq!(
            ops(json!({"op":"copy","from":"/l/-1","path":"/l/0"})),
            json!({"l":[3,1,2,3]})
        );
        assert_eq!(
            apply(doc.clone(), json!([{"op":"add","path":"/l/5","value":1}])).unwrap_err(),
            "error in add for path: '/l/5': Unable to access invalid index: 5: invalid index referenced"
        );
    }

    #[test]
    fn replace_of_a_missing_member_adds_it_and_copy_of_one_copies_null() {
        assert_eq!(
            apply(json!({}), json!([{"op":"replace","path":"/a","value":1}])).unwrap(),
            json!({"a":1})
        );
        assert_eq!(
            apply(json!({}), json!([{"op":"copy","from":"/a","path":"/b"}])).unwrap(),
            json!({"b":null})
        );
    }

    #[test]
    fn add_to_a_missing_parent_fails() {
        assert_eq!(
            apply(
                json!({}),
                json!([{"op":"add","path":"/metadata/labels","value":{}}])
            )
            .unwrap_err(),
            "add operation does not apply: doc is missing path: \"/metadata/labels\": missing value"
        );
    }

    #[test]
    fn the_whole_document_is_no_source_or_target_of_add_remove_copy_move() {
        for op in [
            json!({"op":"add","path":"","value":{}}),
            json!({"op":"remove","path":""}),
            json!({"op":"copy","from":"","path":"/a"}),
            json!({"op":"move","from":"","path":"/a"}),
        ] {
            let err = apply(json!({"x":1}), json!([op])).unwrap_err();
            assert!(err.contains("does not apply"), "{op}: {err}");
        }
    }

    #[test]
    fn operations_are_bounded_413() {
        let ops = vec![json!({"op":"test","path":"/a","value":1}); MAX_JSON_PATCH_OPERATIONS];
        assert!(apply_json_patch(json!({"a":1}), &Value::Array(ops.clone())).is_ok());
        let mut more = ops;
        more.push(json!({"op":"test","path":"/a","value":1}));
        let status =
            Status::from(apply_json_patch(json!({"a":1}), &Value::Array(more)).unwrap_err());
        assert_eq!(status.code(), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(status.reason, Some(StatusReason::RequestEntityTooLarge));
        assert_eq!(
            status.message,
            "The allowed maximum operations in a JSON patch is 10000, got 10001"
        );
    }

    /// The 751-byte patch that took a server down doubled the document with every copy. The
    /// bound is on bytes copied, so the work is at most that many bytes, whatever the patch.
    #[test]
    fn copies_are_bounded_by_bytes_copied() {
        // Each op copies /d into itself: 1 KiB, 2 KiB, 4 KiB, ... 1 GiB after 20.
        let doubling: Vec<Value> = (0..20)
            .map(|i| json!({"op":"copy","from":"/d","path":format!("/d/x{i}")}))
            .collect();
        let doc = json!({"d": {"s": "x".repeat(1024)}});
        let status =
            Status::from(apply_json_patch(doc.clone(), &Value::Array(doubling)).unwrap_err());
        assert_eq!(status.code(), StatusCode::UNPROCESSABLE_ENTITY);
        let prefix = "Unable to complete the copy, the accumulated size increase of copy is ";
        let copied: usize = status.message[prefix.len()..]
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            status.message.ends_with(", exceeding the limit 3145728"),
            "{}",
            status.message
        );
        // It stopped at the first copy past the bound: less than twice the bound was copied.
        assert!(copied > MAX_JSON_PATCH_COPY_BYTES && copied < 2 * MAX_JSON_PATCH_COPY_BYTES);
        // Just under the bound: fine, and the result is what it should be.
        let kib = "y".repeat(1022); // 1024 bytes as a JSON string
        let fits: Vec<Value> = (0..3000)
            .map(|i| json!({"op":"copy","from":"/a0","path":format!("/c{i}")}))
            .collect();
        let out = apply(json!({"a0": kib}), Value::Array(fits)).unwrap();
        assert_eq!(out.as_object().unwrap().len(), 3001);
    }
}
