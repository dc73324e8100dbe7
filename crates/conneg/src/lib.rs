//! Content negotiation for API servers.
#![deny(missing_docs, unreachable_pub, unsafe_code)]
// `Status` (a Kubernetes object of ~300 bytes) is the error type of paths that are already
// error paths and allocate; the hot paths (negotiate, encode) return small errors.
#![allow(clippy::result_large_err)]

pub mod accept;
#[cfg(feature = "axum")]
pub mod axum;
mod cbor;
pub mod codec;
pub mod content_type;
pub mod field_validation;
pub mod media_type;
pub mod negotiate;
pub mod negotiated;
pub mod negotiator;
pub mod params;
pub mod patch;
pub mod registry;
pub mod status;

pub use codec::{Codec, CustomCodec, Decoded};
pub use field_validation::FieldValidation;
pub use negotiate::NegotiateLayer;
pub use negotiated::{Negotiated, Patch, RequestFormat, append_warnings, read_body};
pub use negotiator::{Negotiator, Rejection};
pub use params::{Conversion, MediaTypeParams};
pub use patch::PatchType;
pub use registry::Codecs;
pub use status::{Status, StatusCause, StatusDetails, StatusReason};
