//! Parsing the headers negotiation reads, without allocating: media types and media ranges
//! (RFC 9110 §8.3.1), `Accept` with its q-values (§12.5.1), the request's `Content-Type`, and
//! Kubernetes' response media-type parameters (`as`/`g`/`v` conversions, `stream`, `pretty`).
//!
//! ```
//! use conneg::headers::{Accept, MediaRange};
//!
//! let accept = Accept::from_value("application/json;q=0.5, application/cbor");
//! let cbor = MediaRange::parse("application/cbor").unwrap();
//! assert!(accept.quality(&cbor) > accept.quality(&MediaRange::parse("application/json").unwrap()));
//! ```

pub(crate) mod accept;
pub(crate) mod content_type;
pub(crate) mod media_type;
pub(crate) mod params;

pub use accept::{Accept, AcceptClause, Clauses, QValue};
pub use content_type::{ContentType, request_content_type};
pub use media_type::{
    APPLICATION_CBOR, APPLICATION_CBOR_SEQ, APPLICATION_JSON, APPLICATION_JSON_WATCH, MediaRange,
    ParamValue, Params, Specificity,
};
pub use params::{Conversion, MediaTypeParams};
