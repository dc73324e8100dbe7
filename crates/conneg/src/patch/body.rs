//! A PATCH body tagged with its type.

use bytes::Bytes;

use super::PatchType;
use crate::cbor;
use crate::status::Status;

/// A PATCH body tagged with its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    /// The patch type from `Content-Type`.
    pub kind: PatchType,
    /// The body as received.
    pub body: Bytes,
}

impl Patch {
    /// The patch as a JSON value: CBOR patches are decoded (strictly: duplicate keys, bad UTF-8
    /// and NaN are errors), JSON patches are parsed. `application/apply-patch+yaml` is accepted
    /// when it is JSON (the YAML that client-go sends); other YAML needs a YAML decoder and
    /// gets 400. Failures are 400 `BadRequest`, as in Kubernetes.
    pub fn to_json_value(&self) -> Result<serde_json::Value, Status> {
        if self.kind.is_cbor() {
            return cbor::to_json_value(&self.body)
                .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")));
        }
        serde_json::from_slice(&self.body).map_err(|e| match self.kind {
            PatchType::ApplyYaml => Status::bad_request(format!(
                "error decoding YAML patch (only its JSON subset is supported): {e}"
            )),
            PatchType::MergePatch => Status::bad_request(format!("invalid merge patch: {e}")),
            _ => Status::bad_request(format!("invalid JSON patch: {e}")),
        })
    }

    /// Applies this patch to `target` (the current object as JSON): a JSON patch (RFC 6902,
    /// [`apply_json_patch`](crate::patch::apply_json_patch)) for `application/json-patch+json`,
    /// and a merge patch (RFC 7396, [`apply_merge_patch`](crate::patch::apply_merge_patch)) for
    /// `application/merge-patch+json` and the server-side apply types, which is what applying
    /// a configuration means for objects without merge-keyed lists. A strategic merge patch
    /// needs the type's schema: 415, so offer those types only with your own implementation.
    ///
    /// Errors: 400 when the body does not parse ([`to_json_value`](Self::to_json_value)), 422
    /// `Invalid` when a JSON patch does not apply (a failed `test`, a missing path), as
    /// Kubernetes answers; 413 when the result is larger than the default body limit
    /// ([`check_patched_size`](super::check_patched_size)).
    pub fn apply_to(&self, target: serde_json::Value) -> Result<serde_json::Value, Status> {
        let patch = self.to_json_value()?;
        let patched = match self.kind {
            PatchType::JsonPatch => crate::patch::apply_json_patch(target, &patch)?,
            PatchType::MergePatch | PatchType::ApplyYaml | PatchType::ApplyCbor => {
                crate::patch::apply_merge_patch(target, &patch)
            }
            PatchType::StrategicMergePatch | PatchType::StrategicMergePatchCbor => Err(
                Status::unsupported_media_type(&crate::registry::join_media_types(
                    [
                        PatchType::JsonPatch,
                        PatchType::MergePatch,
                        PatchType::ApplyYaml,
                        PatchType::ApplyCbor,
                    ]
                    .iter()
                    .map(|p| p.media_type()),
                )),
            )?,
        };
        super::check_patched_size(&patched, crate::DEFAULT_BODY_LIMIT)?;
        Ok(patched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    #[test]
    fn patches_to_json() {
        let cbor = Patch {
            kind: PatchType::ApplyCbor,
            body: Bytes::from_static(&[0xa1, 0x61, b'a', 0x01]),
        };
        assert_eq!(cbor.to_json_value().unwrap(), serde_json::json!({"a": 1}));
        let bad = Patch {
            kind: PatchType::ApplyCbor,
            body: Bytes::from_static(&[0xff, 0xff]),
        };
        assert_eq!(
            bad.to_json_value().unwrap_err().code(),
            StatusCode::BAD_REQUEST
        );
        let merge = Patch {
            kind: PatchType::MergePatch,
            body: Bytes::from_static(b"{\"a\":null}"),
        };
        assert_eq!(
            merge.to_json_value().unwrap(),
            serde_json::json!({"a": null})
        );
        let bad = Patch {
            kind: PatchType::JsonPatch,
            body: Bytes::from_static(b"["),
        };
        assert!(
            bad.to_json_value()
                .unwrap_err()
                .message
                .starts_with("invalid JSON patch")
        );
        // A merge patch is not a JSON patch, and its error says so.
        let bad = Patch {
            kind: PatchType::MergePatch,
            body: Bytes::from_static(b"{"),
        };
        assert!(
            bad.to_json_value()
                .unwrap_err()
                .message
                .starts_with("invalid merge patch: EOF")
        );
    }

    #[test]
    fn patches_apply_by_kind() {
        use serde_json::json;
        let patch = |kind, body: &'static [u8]| Patch {
            kind,
            body: Bytes::from_static(body),
        };
        let target = json!({"metadata": {"name": "a", "labels": {"x": "1"}}});
        let merged = patch(
            PatchType::MergePatch,
            br#"{"metadata":{"labels":{"x":null,"y":"2"}}}"#,
        )
        .apply_to(target.clone())
        .unwrap();
        assert_eq!(
            merged,
            json!({"metadata": {"name": "a", "labels": {"y": "2"}}})
        );
        // apply-patch+cbor: {"spec": "s"} with byte-string keys and values, as Go writes them.
        let applied = patch(PatchType::ApplyCbor, b"\xa1\x44spec\x41s")
            .apply_to(target.clone())
            .unwrap();
        assert_eq!(applied["spec"], "s");
        assert_eq!(applied["metadata"]["name"], "a");
        let json_patch = patch(
            PatchType::JsonPatch,
            br#"[{"op":"replace","path":"/metadata/labels/x","value":"3"}]"#,
        );
        assert_eq!(
            json_patch.apply_to(target.clone()).unwrap()["metadata"]["labels"]["x"],
            "3"
        );
        let failed = patch(
            PatchType::JsonPatch,
            br#"[{"op":"test","path":"/a","value":1}]"#,
        );
        assert_eq!(failed.apply_to(target.clone()).unwrap_err().code(), 422);
        let unparsable = patch(PatchType::JsonPatch, b"[");
        assert_eq!(unparsable.apply_to(target.clone()).unwrap_err().code(), 400);
        let strategic = patch(PatchType::StrategicMergePatch, b"{}");
        assert_eq!(strategic.apply_to(target).unwrap_err().code(), 415);
    }
}
