//! Why a patch document did not parse or apply, with no HTTP in it; `From<PatchError> for
//! Status` is the answer Kubernetes gives for each, at the HTTP edge.

use std::fmt;

use conneg::patch::JsonPatchError;
use conneg::{Status, StatusReason};
use http::StatusCode;

use super::MAX_DEPTH;

/// A patch or apply body that does not parse, or a patch that does not apply.
///
/// ```
/// use conneg_apiserver::{PatchError, parse_patch};
/// let err = parse_patch(conneg::PatchType::MergePatch, b"[1]").unwrap_err();
/// assert_eq!(err, PatchError::NotAnObject);
/// assert_eq!(conneg::Status::from(err).code(), 400);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatchError {
    /// The body does not parse as its type says (400): the decoder's message, whole.
    Malformed(String),
    /// An apply configuration that is not YAML this server reads (400): why.
    Yaml(String),
    /// A document nested deeper than the server allows (400).
    TooDeep,
    /// A JSON patch that is not a list of operations (400).
    NotAList,
    /// A merge, strategic merge or apply body that is not an object (400).
    NotAnObject,
    /// A JSON patch whose operations do not apply (422, or 413 for too many).
    JsonPatch(JsonPatchError),
    /// A strategic merge patch directive that is not known (422): why.
    Invalid(String),
    /// A patched object larger than a request body may be (413): the limit in bytes.
    TooLarge(usize),
    /// An apply configuration given to be merged: it is applied with field ownership (500).
    NotMergeable,
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatchError::Malformed(why) | PatchError::Invalid(why) => f.write_str(why),
            PatchError::Yaml(why) => write!(f, "error decoding YAML: {why}"),
            PatchError::TooDeep => write!(
                f,
                "the patch is nested more than {MAX_DEPTH} levels deep"
            ),
            PatchError::NotAList => {
                f.write_str("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
            }
            PatchError::NotAnObject => {
                f.write_str("the body of the patch must be a JSON or CBOR object")
            }
            PatchError::JsonPatch(e) => fmt::Display::fmt(e, f),
            PatchError::TooLarge(limit) => {
                f.write_str(&Status::request_entity_too_large(*limit).message)
            }
            PatchError::NotMergeable => {
                f.write_str("an apply patch is applied with field ownership, not merged")
            }
        }
    }
}

impl std::error::Error for PatchError {}

impl From<PatchError> for Status {
    fn from(e: PatchError) -> Status {
        match e {
            PatchError::JsonPatch(e) => e.into(),
            PatchError::TooLarge(limit) => Status::request_entity_too_large(limit),
            PatchError::Invalid(why) => {
                Status::failure(StatusCode::UNPROCESSABLE_ENTITY, StatusReason::Invalid, why)
            }
            PatchError::NotMergeable => Status::internal_error(e),
            PatchError::Malformed(_)
            | PatchError::Yaml(_)
            | PatchError::TooDeep
            | PatchError::NotAList
            | PatchError::NotAnObject => Status::bad_request(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answers Kubernetes' clients read, code, reason and message, as they were when
    /// these layers answered `Status` themselves.
    #[test]
    fn each_error_is_the_status_it_was() {
        let json_patch = conneg::patch::apply_json_patch(
            serde_json::json!({}),
            &serde_json::json!([{"op": "remove", "path": "/a"}]),
        )
        .unwrap_err();
        let cases = [
            (PatchError::Malformed("invalid merge patch: x".into()), 400, "invalid merge patch: x"),
            (PatchError::Yaml("empty document".into()), 400, "error decoding YAML: empty document"),
            (PatchError::TooDeep, 400, "the patch is nested more than 100 levels deep"),
            (
                PatchError::NotAList,
                400,
                "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
            ),
            (PatchError::NotAnObject, 400, "the body of the patch must be a JSON or CBOR object"),
            (PatchError::Invalid("Unknown patch type: 1".into()), 422, "Unknown patch type: 1"),
            (PatchError::TooLarge(3), 413, "Request entity too large: limit is 3 bytes"),
            (
                PatchError::NotMergeable,
                500,
                "Internal error occurred: an apply patch is applied with field ownership, not merged",
            ),
        ];
        for (err, code, message) in cases {
            let shown = err.to_string();
            let status = Status::from(err);
            assert_eq!((status.code, status.message.as_str()), (code, message));
            assert!(message.ends_with(&shown), "{shown}");
        }
        let expected = Status::from(json_patch.clone());
        assert_eq!(Status::from(PatchError::JsonPatch(json_patch)), expected);
        let reasons = [
            (PatchError::NotAnObject, StatusReason::BadRequest),
            (PatchError::Invalid(String::new()), StatusReason::Invalid),
            (PatchError::TooLarge(1), StatusReason::RequestEntityTooLarge),
            (PatchError::NotMergeable, StatusReason::InternalError),
        ];
        for (err, reason) in reasons {
            assert_eq!(Status::from(err).reason, Some(reason));
        }
    }
}
