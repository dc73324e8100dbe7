//! JSON to CBOR and CBOR to JSON without an intermediate tree: a deserializer for one format
//! drives the serializer of the other, value by value.
//!
//! Integers stay integers and floats stay floats (a JSON `1.0` becomes `f9 3c00` and comes back
//! as `1.0`, never `1`). Going to CBOR, the usual encoding rules apply (deterministic key order,
//! byte strings, `d9 d9 f7`); going to JSON, the CBOR is held to the decoding profile (duplicate
//! keys, UTF-8, integer range, …) and byte strings under tag 21/22/23 become their text forms.
//!
//! ```
//! let cbor = conneg_cbor::transcode::json_to_cbor(br#"{"b":[1,1.0],"a":"x"}"#).unwrap();
//! assert_eq!(cbor, b"\xd9\xd9\xf7\xa2\x41a\x41x\x41b\x82\x01\xf9\x3c\x00");
//! let json = conneg_cbor::transcode::cbor_to_json(&cbor).unwrap();
//! assert_eq!(json, br#"{"a":"x","b":[1,1.0]}"#);
//! ```
//!
//! JSON with a key twice in one object is refused (`ErrorKind::DuplicateKey`, with the JSON
//! position): the profile has no duplicate keys, and keeping one value would lose the other.
//!
//! JSON may nest 10,000 arrays and objects deep, Kubernetes' JSON limit (serde_json's own limit
//! of 128 is lifted; the stack grows on the heap as the decoder's does). The CBOR decoder's limit
//! of 10,000 also counts tags, so self-described CBOR holds 9,999 levels of containers.

use crate::de::Deserializer as CborDeserializer;
use crate::error::{Error, ErrorKind, Result};
use crate::keys::display_key;
use crate::options::{DecodeOptions, EncodeOptions};
use crate::ser::Serializer as CborSerializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, Serialize, SerializeMap, SerializeSeq, Serializer};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::fmt;

/// Converts one JSON text to CBOR (deterministic, `d9 d9 f7` prefix).
pub fn json_to_cbor(json: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(json.len());
    json_to_cbor_with(json, &EncodeOptions::default(), &mut out)?;
    Ok(out)
}

/// Converts one JSON text to CBOR with `opts`, appending to `out` (restored on error).
pub fn json_to_cbor_with(json: &[u8], opts: &EncodeOptions, out: &mut Vec<u8>) -> Result<()> {
    let start = out.len();
    let r = (|| {
        if opts.self_described {
            out.extend_from_slice(&crate::SELF_DESCRIBED_PREFIX);
        }
        let mut de = serde_json::Deserializer::from_slice(json);
        de.disable_recursion_limit();
        let mut ser = CborSerializer::with_options(out, *opts);
        let r = (&mut de).deserialize_any(Pump {
            ser: &mut ser,
            levels: MAX_JSON_DEPTH,
        });
        ser.recycle();
        match r {
            Err(e) => return Err(from_json_error(e)),
            Ok(Err(e)) => return Err(e),
            Ok(Ok(())) => {}
        }
        de.end().map_err(from_json_error)
    })();
    if r.is_err() {
        out.truncate(start);
    }
    r
}

/// Converts one CBOR item (prefix optional) to compact JSON, with the default decode options.
pub fn cbor_to_json(cbor: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(cbor.len() * 5 / 4);
    cbor_to_json_writer(cbor, &DecodeOptions::default(), &mut out)?;
    Ok(out)
}

/// Converts one CBOR item to compact JSON written to `w`.
pub fn cbor_to_json_writer<W: std::io::Write>(
    cbor: &[u8],
    opts: &DecodeOptions,
    w: W,
) -> Result<()> {
    let mut de = CborDeserializer::with_options(cbor, *opts);
    if cbor.is_empty() {
        return Err(Error::at(ErrorKind::Eof, 0, "empty input"));
    }
    let mut ser = serde_json::Serializer::new(w);
    // The CBOR deserializer applies its own depth limit (`opts`).
    let r = match (&mut de).deserialize_any(Pump {
        ser: &mut ser,
        levels: usize::MAX,
    }) {
        Err(e) => Err(e),
        Ok(Err(e)) => Err(from_json_error(e)),
        Ok(Ok(())) => de.end(),
    };
    de.recycle();
    r
}

pub(crate) fn from_json_error(e: serde_json::Error) -> Error {
    use serde_json::error::Category;
    let msg = e.to_string();
    let kind = match e.classify() {
        Category::Io => ErrorKind::Io,
        Category::Syntax => ErrorKind::Syntax,
        Category::Eof => ErrorKind::Eof,
        // Our serializer's errors pass through serde_json's as text; keep the important kinds.
        Category::Data if msg.starts_with(DUPLICATE) => ErrorKind::DuplicateKey,
        Category::Data if msg.starts_with(TOO_DEEP) => ErrorKind::DepthLimit,
        Category::Data => ErrorKind::Message,
    };
    Error::new(kind, format!("JSON: {msg}"))
}

/// A value still inside its deserializer, serializable into any serializer. A deserializer error
/// can only cross the serializer as text, so the original is kept in `slot` for the caller.
pub(crate) struct Transcode<'s, 'de, D: Deserializer<'de>> {
    de: Cell<Option<D>>,
    slot: &'s RefCell<Option<D::Error>>,
    /// Arrays and objects that may still open inside this value.
    levels: usize,
}

impl<'s, 'de, D: Deserializer<'de>> Transcode<'s, 'de, D> {
    /// A whole value: nested at most [`MAX_JSON_DEPTH`] deep. A JSON deserializer should have
    /// its own recursion limit lifted (`disable_recursion_limit`), which this replaces.
    pub(crate) fn new(de: D, slot: &'s RefCell<Option<D::Error>>) -> Self {
        Self::nested(de, slot, MAX_JSON_DEPTH)
    }

    fn nested(de: D, slot: &'s RefCell<Option<D::Error>>, levels: usize) -> Self {
        Transcode {
            de: Cell::new(Some(de)),
            slot,
            levels,
        }
    }
}

/// The deepest JSON nesting transcoded, as Kubernetes' JSON decoder and the CBOR profile allow.
pub(crate) const MAX_JSON_DEPTH: usize = 10_000;

/// How a nesting error starts, so that it keeps its kind across serde_json.
const TOO_DEEP: &str = "exceeded max nesting depth";

impl<'de, D: Deserializer<'de>> Serialize for Transcode<'_, 'de, D> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let de = self
            .de
            .take()
            .ok_or_else(|| ser::Error::custom("value already transcoded"))?;
        match de.deserialize_any(Pump {
            ser,
            levels: self.levels,
        }) {
            Ok(r) => r,
            Err(e) => {
                let msg = e.to_string();
                *self.slot.borrow_mut() = Some(e);
                Err(ser::Error::custom(msg))
            }
        }
    }
}

/// The visitor that writes what it visits. Its value is the serializer's result, so serializer
/// errors come back untouched; deserializer errors travel as the visitor's error.
struct Pump<S> {
    ser: S,
    /// Arrays and objects that may still open (see [`MAX_JSON_DEPTH`]).
    levels: usize,
}

impl<S> Pump<S> {
    /// The budget for a container's contents, or the depth error.
    fn enter<E: de::Error>(&self) -> Result<usize, E> {
        self.levels
            .checked_sub(1)
            .ok_or_else(|| E::custom(format_args!("{TOO_DEEP} {MAX_JSON_DEPTH}")))
    }
}

impl<'de, S: Serializer> Visitor<'de> for Pump<S> {
    type Value = Result<S::Ok, S::Error>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(self.ser.serialize_bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(self.ser.serialize_i64(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(self.ser.serialize_u64(v))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Self::Value, E> {
        Ok(self.ser.serialize_i128(v))
    }
    fn visit_u128<E>(self, v: u128) -> Result<Self::Value, E> {
        Ok(self.ser.serialize_u128(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(self.ser.serialize_f64(v))
    }
    fn visit_char<E>(self, v: char) -> Result<Self::Value, E> {
        Ok(self.ser.serialize_char(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.ser.serialize_str(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        // Only CBOR produces bytes here, and only when they are not UTF-8: no JSON string holds
        // them.
        Err(de::Error::invalid_type(de::Unexpected::Bytes(v), &self))
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(self.ser.serialize_none())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(self.ser.serialize_unit())
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let levels = self.enter()?;
        let mut out = match self.ser.serialize_seq(None) {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        crate::stack::guarded(move || {
            while let Some(r) = seq.next_element_seed(Element(&mut out, levels))? {
                if let Err(e) = r {
                    return Ok(Err(e));
                }
            }
            Ok(out.end())
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let levels = self.enter()?;
        let mut out = match self.ser.serialize_map(None) {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        crate::stack::guarded(move || {
            if let Err(e) = Self::entries(&mut map, &mut out, levels)? {
                return Ok(Err(e));
            }
            Ok(out.end())
        })
    }
}

impl<S: Serializer> Pump<S> {
    /// A map's entries (a failed write ends them early; `Serializer::end` is not reached then).
    fn entries<'de, A: MapAccess<'de>>(
        map: &mut A,
        out: &mut S::SerializeMap,
        levels: usize,
    ) -> Result<Result<(), S::Error>, A::Error> {
        // JSON allows a key twice; the CBOR profile does not, and dropping one would lose data.
        let mut seen = SeenKeys::default();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if !seen.insert(key.clone()) {
                // A deserializer error: the input is at fault, and serde_json adds the position.
                return Err(de::Error::custom(format_args!(
                    "{DUPLICATE} {}",
                    display_key(key.as_bytes())
                )));
            }
            if let Err(e) = out.serialize_key(&*key) {
                return Ok(Err(e));
            }
            if let Err(e) = map.next_value_seed(Value(&mut *out, levels))? {
                return Ok(Err(e));
            }
        }
        Ok(Ok(()))
    }
}

/// How a duplicate key error starts, so that it keeps its kind across serde_json.
const DUPLICATE: &str = "duplicate map key";

/// A map key as text, borrowed from the input when it can be.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string map key")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// The keys of one map so far: a list while small, a hash set past that.
#[derive(Default)]
struct SeenKeys<'de> {
    few: Vec<Cow<'de, str>>,
    many: HashSet<Cow<'de, str>>,
}

impl<'de> SeenKeys<'de> {
    /// False if `key` was seen before.
    fn insert(&mut self, key: Cow<'de, str>) -> bool {
        const FEW: usize = 16;
        if self.many.is_empty() {
            if self.few.contains(&key) {
                return false;
            }
            if self.few.len() < FEW {
                self.few.push(key);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(key)
    }
}

/// An array element, with the nesting budget of its array's contents.
struct Element<'a, T>(&'a mut T, usize);

impl<'de, T: SerializeSeq> DeserializeSeed<'de> for Element<'_, T> {
    type Value = Result<(), T::Error>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        through(d, self.1, |v| self.0.serialize_element(v))
    }
}

/// A map value, with the nesting budget of its map's contents.
struct Value<'a, T>(&'a mut T, usize);

impl<'de, T: SerializeMap> DeserializeSeed<'de> for Value<'_, T> {
    type Value = Result<(), T::Error>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        through(d, self.1, |v| self.0.serialize_value(v))
    }
}

/// Serializes the value in `d` with `write`; a deserializer error that had to cross the
/// serializer as text is returned as itself.
fn through<'de, D: Deserializer<'de>, E>(
    d: D,
    levels: usize,
    write: impl FnOnce(&Transcode<'_, 'de, D>) -> Result<(), E>,
) -> Result<Result<(), E>, D::Error> {
    let slot = RefCell::new(None);
    let r = write(&Transcode::nested(d, &slot, levels));
    match slot.into_inner() {
        Some(e) => Err(e),
        None => Ok(r),
    }
}
