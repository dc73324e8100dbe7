//! [`RawExtension`]: an embedded object kept as raw bytes in a known format (Kubernetes'
//! `runtime.RawExtension`, KEP-4222 "RawExtension").
//!
//! * Encoding into CBOR with this crate's serializer, CBOR bytes are written **verbatim** (after
//!   checking they are one valid item) and JSON bytes are transcoded to CBOR.
//! * Encoding with any human-readable serializer (such as serde_json), the bytes are transcoded
//!   into it: CBOR raw becomes JSON, JSON raw is re-emitted.
//! * Decoding from CBOR with this crate's deserializer captures the item's bytes exactly, with
//!   the `d9 d9 f7` prefix added if it was missing (as Kubernetes does). Decoding from another
//!   format (JSON) captures the value re-serialized as compact JSON.
//! * An empty `RawExtension` encodes as `null`, and `null` decodes to an empty one.
//!
//! ```
//! use conneg_cbor::RawExtension;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Event {
//!     r#type: String,
//!     object: RawExtension,
//! }
//!
//! let ev = Event { r#type: "ADDED".into(), object: RawExtension::from_json(r#"{"kind":"Flunder"}"#) };
//! let cbor = conneg_cbor::to_vec(&ev).unwrap();
//! let back: Event = conneg_cbor::from_slice(&cbor).unwrap();
//! assert_eq!(back.object.format(), conneg_cbor::RawFormat::Cbor);
//! assert_eq!(back.object.as_bytes(), b"\xd9\xd9\xf7\xa1\x44kind\x47Flunder");
//! assert_eq!(serde_json::to_string(&back.object).unwrap(), r#"{"kind":"Flunder"}"#);
//! ```

use crate::de::Deserializer as CborDeserializer;
use crate::error::{Error, ErrorKind, Result};
use crate::transcode::Transcode;
use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, Visitor};
use serde::ser::{self, Serialize, Serializer};
use std::cell::RefCell;
use std::fmt;

/// Newtype-struct names that let this crate's serializer and deserializer recognise raw items.
pub(crate) const TOKEN_CBOR: &str = "$conneg_cbor::private::RawCbor";
pub(crate) const TOKEN_JSON: &str = "$conneg_cbor::private::RawJson";
pub(crate) const TOKEN: &str = "$conneg_cbor::private::RawExtension";

/// The format of a [`RawExtension`]'s bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RawFormat {
    /// `application/json`.
    #[default]
    Json,
    /// `application/cbor`.
    Cbor,
}

impl RawFormat {
    /// The media type.
    pub fn media_type(self) -> &'static str {
        match self {
            RawFormat::Json => "application/json",
            RawFormat::Cbor => "application/cbor",
        }
    }
}

/// Raw bytes of an embedded object, with their format.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RawExtension {
    bytes: Vec<u8>,
    format: RawFormat,
}

impl RawExtension {
    /// Wraps JSON text (not checked until it is used).
    pub fn from_json(bytes: impl Into<Vec<u8>>) -> Self {
        RawExtension {
            bytes: bytes.into(),
            format: RawFormat::Json,
        }
    }

    /// Wraps one CBOR item, adding the `d9 d9 f7` prefix if it is missing (not checked until it
    /// is used).
    pub fn from_cbor(bytes: impl Into<Vec<u8>>) -> Self {
        let mut bytes = bytes.into();
        if !crate::recognizes(&bytes) {
            bytes.splice(0..0, crate::SELF_DESCRIBED_PREFIX);
        }
        RawExtension {
            bytes,
            format: RawFormat::Cbor,
        }
    }

    /// Encodes `value` as CBOR (deterministic, with prefix).
    pub fn cbor_of<T: ?Sized + Serialize>(value: &T) -> Result<Self> {
        Ok(RawExtension {
            bytes: crate::to_vec(value)?,
            format: RawFormat::Cbor,
        })
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The raw bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The format of the bytes.
    pub fn format(&self) -> RawFormat {
        self.format
    }

    /// The media type of the bytes.
    pub fn media_type(&self) -> &'static str {
        self.format.media_type()
    }

    /// Whether there are no bytes (the object is absent or null).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Decodes the bytes in their own format.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T> {
        match self.format {
            RawFormat::Cbor => crate::from_slice(&self.bytes),
            RawFormat::Json => {
                serde_json::from_slice(&self.bytes).map_err(crate::transcode::from_json_error)
            }
        }
    }

    /// The bytes as JSON (transcoded if they are CBOR).
    pub fn to_json(&self) -> Result<Vec<u8>> {
        match self.format {
            RawFormat::Json => Ok(self.bytes.clone()),
            RawFormat::Cbor => crate::transcode::cbor_to_json(&self.bytes),
        }
    }

    /// The bytes as CBOR with the prefix (transcoded if they are JSON).
    pub fn to_cbor(&self) -> Result<Vec<u8>> {
        match self.format {
            RawFormat::Cbor => Ok(self.bytes.clone()),
            RawFormat::Json => crate::transcode::json_to_cbor(&self.bytes),
        }
    }
}

impl Serialize for RawExtension {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.bytes.is_empty() {
            return s.serialize_unit();
        }
        match self.format {
            RawFormat::Cbor => s.serialize_newtype_struct(TOKEN_CBOR, &Raw(self)),
            RawFormat::Json => s.serialize_newtype_struct(TOKEN_JSON, &Raw(self)),
        }
    }
}

/// The inside of the newtype: plain bytes for this crate's capturing serializer (the only
/// non-human-readable serializer that sees these tokens in practice), transcoded content for
/// everything else.
struct Raw<'a>(&'a RawExtension);

impl Serialize for Raw<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if !s.is_human_readable() {
            return s.serialize_bytes(&self.0.bytes);
        }
        match self.0.format {
            RawFormat::Cbor => {
                let mut de = CborDeserializer::from_slice(&self.0.bytes);
                let slot = RefCell::new(None);
                let r = Transcode::new(&mut de, &slot).serialize(s);
                if let Some(e) = slot.into_inner() {
                    return Err(ser::Error::custom(format_args!("raw CBOR: {e}")));
                }
                let v = r?;
                de.end()
                    .map_err(|e| ser::Error::custom(format_args!("raw CBOR: {e}")))?;
                Ok(v)
            }
            RawFormat::Json => {
                let mut de = serde_json::Deserializer::from_slice(&self.0.bytes);
                de.disable_recursion_limit();
                let slot = RefCell::new(None);
                let r = Transcode::new(&mut de, &slot).serialize(s);
                if let Some(e) = slot.into_inner() {
                    return Err(ser::Error::custom(format_args!("raw JSON: {e}")));
                }
                let v = r?;
                de.end()
                    .map_err(|e| ser::Error::custom(format_args!("raw JSON: {e}")))?;
                Ok(v)
            }
        }
    }
}

/// Called by the CBOR serializer for the raw tokens: writes the item into `out`.
pub(crate) fn write_raw(
    ser: &mut crate::ser::Serializer<'_>,
    token: &str,
    bytes: &[u8],
) -> Result<()> {
    if token == TOKEN_CBOR {
        let end = crate::scan::scan(
            bytes,
            0,
            0,
            &crate::DecodeOptions::default(),
            &mut crate::keys::KeyTracker::default(),
            &mut crate::scan::Scanner::default(),
        )
        .map_err(|e| Error::new(e.kind(), format!("raw CBOR: {e}")))?;
        if end != bytes.len() {
            return Err(Error::new(
                ErrorKind::TrailingData,
                "raw CBOR holds more than one item",
            ));
        }
        ser.write_verbatim(bytes);
        return Ok(());
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let slot = RefCell::new(None);
    let r = Transcode::new(&mut de, &slot).serialize(&mut *ser);
    if let Some(e) = slot.into_inner() {
        return Err(crate::transcode::from_json_error(e));
    }
    r?;
    de.end().map_err(crate::transcode::from_json_error)
}

/// Called by the CBOR deserializer for [`TOKEN`]: `null` or the raw item.
pub(crate) fn deserialize_raw<'de, V: Visitor<'de>>(
    de: &mut CborDeserializer<'de>,
    visitor: V,
) -> Result<V::Value> {
    match de.take_raw_item()? {
        None => visitor.visit_unit(),
        Some(item) => visitor.visit_borrowed_bytes(item),
    }
}

impl<'de> Deserialize<'de> for RawExtension {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(TOKEN, RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawExtension;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an embedded object")
    }

    /// From this crate's deserializer: the item's CBOR bytes.
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<RawExtension, E> {
        Ok(RawExtension::from_cbor(v))
    }

    fn visit_unit<E>(self) -> Result<RawExtension, E> {
        Ok(RawExtension::default())
    }

    fn visit_none<E>(self) -> Result<RawExtension, E> {
        Ok(RawExtension::default())
    }

    /// From any other deserializer: the value, as compact JSON.
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<RawExtension, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        if v.is_null() {
            return Ok(RawExtension::default());
        }
        serde_json::to_vec(&v)
            .map(RawExtension::from_json)
            .map_err(de::Error::custom)
    }
}
