//! Strict CBOR for API objects: the Kubernetes [KEP-4222] profile of RFC 8949, with a serde API
//! shaped like `serde_json`.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Meta {
//!     name: String,
//! }
//!
//! let bytes = conneg_cbor::to_vec(&Meta { name: "a".into() }).unwrap();
//! // Self-described prefix, a one-pair map, keys and strings as byte strings (like Kubernetes).
//! assert_eq!(bytes, b"\xd9\xd9\xf7\xa1\x44name\x41a");
//! let back: Meta = conneg_cbor::from_slice(&bytes).unwrap();
//! assert_eq!(back, Meta { name: "a".into() });
//!
//! // Unknown fields are errors, with the path to the offending map.
//! let err = conneg_cbor::from_slice::<Meta>(b"\xa2\x44name\x41a\x44Name\x41b").unwrap_err();
//! assert_eq!(err.to_string(), r#"unknown field "Name""#);
//! ```
//!
//! # Encoding
//!
//! * The top-level item is prefixed with the self-described CBOR tag (`d9 d9 f7`), unless
//!   [`EncodeOptions::self_described`] says otherwise.
//! * Definite lengths only, shortest integer heads, floats in the shortest width that is exact
//!   (`f16` included); NaN and ±Infinity are errors, as are integers outside `i64`/`u64`.
//! * Strings and map keys are byte strings by default, exactly as Kubernetes writes them
//!   ([`StringEncoding`]); `serialize_bytes` gives tag 22 + a byte string (Go's `[]byte`).
//! * `()`, `None` and unit structs are `null`; enums look as they do in `serde_json`.
//! * Deterministic mode (the default) sorts map entries by encoded key (RFC 8949 §4.2.1) and
//!   rejects duplicate keys; [`EncodeOptions::fast`] skips the sorting.
//!
//! # Decoding
//!
//! * The prefix is optional, and tag 55799 is dropped wherever it appears. Other unknown tags are
//!   skipped around their content. Tags 0 and 1 decoded into a string give RFC 3339 text; tags
//!   21/22/23 make byte strings read as base64url / base64 / hex text.
//! * Duplicate map keys are errors in every map (byte and text keys with the same bytes are
//!   equal); keys must be strings; text must be valid UTF-8; byte strings are accepted wherever
//!   text is; integers must fit `i64`; NaN, ±Infinity, `undefined`, simple values other than
//!   false/true/null, and bignums are errors; trailing bytes are errors.
//! * Keys naming no field of the target struct are [`ErrorKind::UnknownField`] errors unless
//!   [`UnknownFields::Ignore`] is chosen; [`DecodeOptions::from_slice_with_warnings`] collects
//!   them instead.
//! * Nesting depth, array length and map size are limited ([`DecodeOptions`]); no declared
//!   length makes the decoder allocate more than the input justifies, and deep nesting cannot
//!   overflow the stack.
//! * `is_human_readable()` is true on both sides: types keep the structure they have in JSON.
//! * **Into `serde_json::Value`, call [`value_from_slice`]**, not `from_slice::<Value>`: the same
//!   result and the same errors, built without serde's visitor (`from_slice` does 1.12-1.18x its
//!   instructions on the benchmark's objects, docs/benchmarks.md). `from_slice` cannot take that path by itself: telling that `T` is
//!   `Value` needs specialization or an `unsafe` cast, and this crate has neither.
//! * [`decode`](fn@decode) does the same for a typed struct that derives [`Decode`](trait@Decode):
//!   it reads the struct without serde's visitors (about 1.6-1.8x `from_slice` on the benchmark's
//!   Pod and custom resource), with `from_slice`'s result and errors.
//!
//! # Beyond single values
//!
//! * [`SeqEncoder`] / [`SeqDecoder`]: RFC 8742 CBOR Sequences (watch streams), decoded
//!   incrementally from chunks.
//! * [`transcode`]: JSON to CBOR and back without an intermediate tree.
//! * [`RawExtension`]: an embedded object kept as raw JSON or CBOR bytes (Kubernetes'
//!   `runtime.RawExtension`).
//! * [`diag`]: RFC 8949 diagnostic notation for debugging.
//!
//! # Notes
//!
//! * `#[serde(flatten)]` structs are decoded through `deserialize_map`, so keys that no flattened
//!   part claims are dropped silently, as with serde_json; unknown-field checks apply to plain
//!   structs (serde passes their field names, aliases included).
//! * `from_slice`, `to_vec` and friends reuse their bookkeeping buffers through a thread-local
//!   slot. `cargo run --release -p conneg-cbor --example perf` compares speed with serde_json.
//!
//! [KEP-4222]: https://github.com/kubernetes/enhancements/tree/master/keps/sig-api-machinery/4222-cbor-serializer

#![forbid(unsafe_code)]

mod de;
pub mod diag;
mod error;
mod frame;
mod head;
mod keys;
mod options;
mod plan;
mod raw;
mod scan;
mod seq;
mod ser;
mod stack;
mod strenc;
mod time;
pub mod transcode;

pub use de::Deserializer;
pub use de::decode::{Decode, Decoder, UseSerde};
pub use error::{Error, ErrorKind, Result};
pub use options::{DecodeOptions, EncodeOptions, StringEncoding, UnknownFields};
pub use raw::{RawExtension, RawFormat};
pub use seq::{SeqDecoder, SeqEncoder};
pub use ser::{Compound, Serializer};

/// Derives serde's `Serialize` for a struct so that conneg-cbor's deterministic encoder gets its
/// fields already in canonical order (Go's encoder sorts each struct type's fields once, by
/// reflection; this sorts them at compile time).
///
/// A drop-in for `#[derive(serde::Serialize)]` on structs with named fields: JSON and every
/// other serializer see exactly what serde's derive gives them (the same keys, in declaration
/// order, with the same skipping). Only [deterministic](EncodeOptions::deterministic) CBOR
/// encoding sees the fields sorted by their encoded keys (shorter first, then bytewise), so it
/// writes each struct straight out instead of recording its fields and reordering them; the
/// bytes are the same either way (the encoder checks the order and still sorts anything that
/// comes out of it). docs/benchmarks.md has the figures.
///
/// Accepted serde attributes: `rename`, `rename_all`, `skip`, `skip_serializing`,
/// `skip_serializing_if`, `serialize_with`, `with`, and those that concern deserialization only
/// (`default`, `deserialize_with`, `alias`, `deny_unknown_fields`, ...). Any other (`flatten`,
/// `tag`, `untagged`, `transparent`, `bound`, ...) is a compile error: derive
/// `serde::Serialize` for that type. Type parameters get a `T: Serialize` bound. The expansion
/// names `::conneg_cbor`, so the crate must depend on `conneg-cbor` directly.
///
/// ```
/// use serde::Deserialize;
///
/// #[derive(conneg_cbor::Serialize, Deserialize, Debug, PartialEq)]
/// #[serde(rename_all = "camelCase")]
/// struct Meta {
///     resource_version: String,
///     #[serde(default, skip_serializing_if = "Option::is_none")]
///     labels: Option<std::collections::BTreeMap<String, String>>,
///     name: String,
/// }
///
/// let m = Meta { resource_version: "7".into(), labels: None, name: "a".into() };
/// // JSON keeps the declaration order...
/// assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"resourceVersion":"7","name":"a"}"#);
/// // ...CBOR gets the canonical one ("name" is shorter than "resourceVersion").
/// let bytes = conneg_cbor::to_vec(&m).unwrap();
/// assert_eq!(bytes, b"\xd9\xd9\xf7\xa2\x44name\x41a\x4fresourceVersion\x417");
/// assert_eq!(conneg_cbor::from_slice::<Meta>(&bytes).unwrap(), m);
/// ```
#[doc(inline)]
pub use conneg_cbor_derive::Serialize;

/// Derives [`Decode`](trait@Decode) for a struct with named fields: reads its map directly,
/// matching each key to its field once, instead of through serde's visitors. The struct must
/// also derive serde's `Deserialize`, with the same serde attributes: they are read the same
/// way (`rename`, `rename_all`, `default`, `skip`, `skip_deserializing`, `deserialize_with`,
/// `with`; `alias`, `deny_unknown_fields` and a container `default` are left to the serde path),
/// and whatever the derived `decode` does not take goes to `Deserialize` (see
/// [`decode`](fn@decode)). Field types must implement `Decode`; type parameters get a
/// `T: Decode` bound.
#[doc(inline)]
pub use conneg_cbor_derive::Decode;

/// What `#[derive(conneg_cbor::Serialize)]` expands to refers to; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::de::decode::decode_with;
    pub use crate::ser::canonical_order;
    pub use serde;
}

use serde::de::{Deserialize, DeserializeOwned};
use serde::ser::Serialize;

/// The self-described CBOR tag (55799) head that starts every encoded object.
pub const SELF_DESCRIBED_PREFIX: [u8; 3] = [0xd9, 0xd9, 0xf7];

/// Whether `data` starts with the self-described CBOR prefix (Kubernetes' `RecognizesData`).
pub fn recognizes(data: &[u8]) -> bool {
    data.starts_with(&SELF_DESCRIBED_PREFIX)
}

/// Encodes `value` deterministically, with the `d9 d9 f7` prefix.
pub fn to_vec<T: ?Sized + Serialize>(value: &T) -> Result<Vec<u8>> {
    EncodeOptions::default().to_vec(value)
}

/// Encodes `value` deterministically, with the `d9 d9 f7` prefix, into `w`.
pub fn to_writer<W: std::io::Write, T: ?Sized + Serialize>(w: W, value: &T) -> Result<()> {
    EncodeOptions::default().to_writer(w, value)
}

/// Decodes exactly one item with the default (strict) options.
///
/// For a `serde_json::Value`, [`value_from_slice`] gives the same value or error faster; for a
/// struct that derives [`Decode`](trait@Decode), [`decode`](fn@decode) does.
pub fn from_slice<'de, T: Deserialize<'de>>(bytes: &'de [u8]) -> Result<T> {
    DecodeOptions::default().from_slice(bytes)
}

/// Decodes exactly one item into `T` with the default (strict) options, through its
/// [`Decode`] where the input allows: the value, or the error, that `from_slice::<T>` gives,
/// faster.
///
/// ```
/// #[derive(conneg_cbor::Decode, serde::Deserialize, serde::Serialize, Debug, PartialEq)]
/// #[serde(rename_all = "camelCase")]
/// struct Meta {
///     name: String,
///     resource_version: String,
/// }
///
/// let m = Meta { name: "a".into(), resource_version: "7".into() };
/// let bytes = conneg_cbor::to_vec(&m).unwrap();
/// assert_eq!(conneg_cbor::decode::<Meta>(&bytes).unwrap(), m);
/// // Errors are serde's, path included.
/// let bad = conneg_cbor::to_vec(&serde_json::json!({"name": "a", "resourceVersion": 7})).unwrap();
/// assert_eq!(
///     conneg_cbor::decode::<Meta>(&bad).unwrap_err().to_string(),
///     conneg_cbor::from_slice::<Meta>(&bad).unwrap_err().to_string(),
/// );
/// ```
pub fn decode<T: Decode + DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    DecodeOptions::default().decode(bytes)
}

/// Decodes exactly one item into a [`serde_json::Value`] with the default (strict) options.
///
/// The result, value or error, is the one `from_slice::<serde_json::Value>` gives; this builds
/// the tree directly (arrays sized from their declared length, no serde visitor per item) and
/// is the faster way to decode unstructured objects.
///
/// ```
/// let bytes = conneg_cbor::to_vec(&serde_json::json!({"kind": "Pod", "items": [1, "a"]})).unwrap();
/// let v = conneg_cbor::value_from_slice(&bytes).unwrap();
/// assert_eq!(v, serde_json::json!({"kind": "Pod", "items": [1, "a"]}));
/// assert_eq!(
///     conneg_cbor::value_from_slice(b"\xa2\x41a\x01\x61a\x02").unwrap_err().to_string(),
///     conneg_cbor::from_slice::<serde_json::Value>(b"\xa2\x41a\x01\x61a\x02").unwrap_err().to_string(),
/// );
/// ```
pub fn value_from_slice(bytes: &[u8]) -> Result<serde_json::Value> {
    DecodeOptions::default().value_from_slice(bytes)
}

/// Reads `r` to its end and decodes exactly one item with the default (strict) options.
pub fn from_reader<R: std::io::Read, T: DeserializeOwned>(r: R) -> Result<T> {
    DecodeOptions::default().from_reader(r)
}

/// The README's examples, compiled and run as doc tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
