//! [`Profile`]: the conventions a service follows beyond the media types themselves — how errors
//! look, how CBOR writes strings, which query parameters negotiation reads, which PATCH bodies
//! a route takes by default.
//!
//! | | [`Profile::Standard`] (the default) | [`Profile::Kubernetes`] |
//! |---|---|---|
//! | errors (406, 415, 413, 400, a handler's [`Status`](crate::Status)) | RFC 9457 problem details ([`Problem`](crate::Problem)): `application/problem+json`, or the same members in CBOR | Kubernetes `Status` objects |
//! | CBOR strings | text strings, RFC 8949 preferred serialization, no self-described tag | byte strings after the self-described tag `d9 d9 f7` (KEP-4222, as Go's encoder writes them) |
//! | query parameters | none are read | `fieldValidation`, `pretty`, `watch` |
//! | unknown fields | ignored, as `axum::Json` and serde do | `Warning` headers (`fieldValidation=Warn`) |
//! | PATCH bodies | `application/merge-patch+json` | the six Kubernetes patch types |
//! | JSON decode errors | name the field path; a body in the wrong format says so | the decoder's message |
//!
//! Both profiles negotiate the same way (406/415/413 before the handler, `Accept` and
//! `Accept-Patch` on 415, q-values, `Vary: Accept`), and the route settings
//! ([`patch_types`](crate::NegotiateLayer::patch_types),
//! [`field_validation`](crate::NegotiateLayer::field_validation)) override the profile's
//! defaults whichever order they are called in.
//!
//! **Why Standard is the default.** A new axum service is an ordinary HTTP API: its clients
//! are browsers, `curl`, generated OpenAPI clients and generic CBOR libraries, which expect
//! problem details, text strings and no Kubernetes conventions. The Kubernetes profile exists
//! to be byte-compatible with `kubectl` and client-go, and an API server asks for it by name:
//!
//! ```
//! use conneg::{NegotiateLayer, Profile};
//!
//! let standard = NegotiateLayer::new();
//! assert_eq!(standard.negotiator().get_profile(), Profile::Standard);
//! let kubernetes = NegotiateLayer::new().profile(Profile::Kubernetes);
//! assert_eq!(kubernetes.negotiator().get_profile(), Profile::Kubernetes);
//! ```

use crate::field_validation::FieldValidation;
use crate::patch::PatchType;

/// Which conventions a [`NegotiateLayer`](crate::NegotiateLayer) follows; see the
/// [module docs](crate::profile) for the side-by-side table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Profile {
    /// Any HTTP API: RFC 9457 problem details, CBOR text strings, no Kubernetes query
    /// parameters, merge patch only.
    #[default]
    Standard,
    /// A Kubernetes API server (KEP-4222): `Status` errors, CBOR byte strings,
    /// `fieldValidation`/`pretty`/`watch`, every Kubernetes patch type.
    Kubernetes,
}

impl Profile {
    /// Whether negotiation reads Kubernetes' query parameters.
    pub(crate) fn reads_query(self) -> bool {
        self == Profile::Kubernetes
    }

    /// The PATCH bodies a route takes unless told otherwise.
    pub(crate) fn patch_types(self) -> &'static [PatchType] {
        match self {
            Profile::Standard => &[PatchType::MergePatch],
            Profile::Kubernetes => PatchType::all(),
        }
    }

    /// What unknown fields do unless told otherwise.
    pub(crate) fn field_validation(self) -> FieldValidation {
        match self {
            Profile::Standard => FieldValidation::Ignore,
            Profile::Kubernetes => FieldValidation::Warn,
        }
    }
}
