//! Content negotiation for API servers.
#![deny(missing_docs, unreachable_pub, unsafe_code)]

pub mod accept;
mod cbor;
pub mod codec;
pub mod content_type;
pub mod field_validation;
pub mod media_type;
pub mod params;
pub mod patch;
pub mod registry;
pub mod status;

pub use codec::{Codec, CustomCodec, Decoded};
pub use field_validation::FieldValidation;
pub use params::{Conversion, MediaTypeParams};
pub use patch::PatchType;
pub use registry::Codecs;
pub use status::{Status, StatusCause, StatusDetails, StatusReason};
