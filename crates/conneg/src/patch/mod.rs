//! PATCH: the body media types (Kubernetes' `types.PatchType` plus strategic merge in CBOR),
//! a PATCH body tagged with its type ([`Patch`]), and the two standard ways to apply a patch to
//! a JSON value: [`apply_merge_patch`] (RFC 7396) and [`apply_json_patch`] (RFC 6902, with
//! Kubernetes' differences).
//!
//! A PATCH route accepts only patch media types; anything else is 415 with `Accept-Patch`
//! listing them (RFC 5789 §3.1).
//!
//! ```
//! use conneg::PatchType;
//! use conneg::headers::MediaRange;
//!
//! let ct = MediaRange::parse("application/merge-patch+json; charset=utf-8").unwrap();
//! assert_eq!(PatchType::from_media_range(&ct), Some(PatchType::MergePatch));
//! assert!(PatchType::ApplyCbor.is_cbor());
//! assert_eq!(PatchType::all().len(), 6);
//! ```

mod body;
mod json;
mod merge;

use std::fmt;

use serde_json::Value;

use crate::headers::MediaRange;
use crate::status::Status;

pub use body::Patch;
pub use json::{
    JsonPatchError, MAX_JSON_PATCH_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS, apply_json_patch,
};
pub use merge::apply_merge_patch;

/// A patch document type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PatchType {
    /// `application/json-patch+json` (RFC 6902).
    JsonPatch,
    /// `application/merge-patch+json` (RFC 7386).
    MergePatch,
    /// `application/strategic-merge-patch+json` (Kubernetes).
    StrategicMergePatch,
    /// `application/apply-patch+yaml` (server-side apply; JSON is valid YAML).
    ApplyYaml,
    /// `application/apply-patch+cbor` (server-side apply in CBOR, KEP-4222).
    ApplyCbor,
    /// `application/strategic-merge-patch+cbor`.
    StrategicMergePatchCbor,
}

impl PatchType {
    /// Every patch type, in the order Kubernetes lists them (strategic merge in CBOR last).
    pub const fn all() -> &'static [PatchType] {
        &[
            PatchType::JsonPatch,
            PatchType::MergePatch,
            PatchType::StrategicMergePatch,
            PatchType::ApplyYaml,
            PatchType::ApplyCbor,
            PatchType::StrategicMergePatchCbor,
        ]
    }

    /// The types a Kubernetes custom resource accepts: no strategic merge patch.
    pub const fn custom_resource() -> &'static [PatchType] {
        &[
            PatchType::JsonPatch,
            PatchType::MergePatch,
            PatchType::ApplyYaml,
            PatchType::ApplyCbor,
        ]
    }

    /// The media type.
    pub const fn media_type(self) -> &'static str {
        match self {
            PatchType::JsonPatch => "application/json-patch+json",
            PatchType::MergePatch => "application/merge-patch+json",
            PatchType::StrategicMergePatch => "application/strategic-merge-patch+json",
            PatchType::ApplyYaml => "application/apply-patch+yaml",
            PatchType::ApplyCbor => "application/apply-patch+cbor",
            PatchType::StrategicMergePatchCbor => "application/strategic-merge-patch+cbor",
        }
    }

    /// The patch type a `Content-Type` names (parameters ignored, case-insensitive).
    pub fn from_media_range(range: &MediaRange<'_>) -> Option<PatchType> {
        PatchType::all()
            .iter()
            .copied()
            .find(|p| range.essence_eq(p.media_type()))
    }

    /// Whether the body is CBOR.
    pub const fn is_cbor(self) -> bool {
        matches!(
            self,
            PatchType::ApplyCbor | PatchType::StrategicMergePatchCbor
        )
    }

    /// Whether this is a server-side apply patch.
    pub const fn is_apply(self) -> bool {
        matches!(self, PatchType::ApplyYaml | PatchType::ApplyCbor)
    }
}

impl fmt::Display for PatchType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.media_type())
    }
}

/// Refuses a patched document whose compact JSON is over `limit` bytes with 413
/// `RequestEntityTooLarge`, the answer a request body of that size gets: whatever the patch
/// type, what a patch produces is bounded like what a client may send. (JSON patch also
/// bounds its copies while it applies; see [`apply_json_patch`].)
///
/// ```
/// use serde_json::json;
/// let doc = json!({"data": "x".repeat(100)});
/// assert!(conneg::patch::check_patched_size(&doc, 1024).is_ok());
/// assert_eq!(conneg::patch::check_patched_size(&doc, 64).unwrap_err().code(), 413);
/// ```
pub fn check_patched_size(doc: &Value, limit: usize) -> Result<(), Status> {
    if json_len(doc) > limit {
        return Err(Status::request_entity_too_large(limit));
    }
    Ok(())
}

/// The length of `v` as compact JSON, without writing it anywhere.
fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a Value into a sink that cannot fail cannot fail.
    let _ = serde_json::to_writer(&mut count, v);
    count.0
}
