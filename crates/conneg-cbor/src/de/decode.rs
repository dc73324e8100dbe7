//! Typed decoding without serde's visitors: [`Decode`], derived with
//! `#[derive(conneg_cbor::Decode)]`, read by [`decode`](crate::decode).
//!
//! Through serde, each field of a struct costs a key handed over as a string and matched by the
//! derived visitor (after this crate matched it against the field list for its duplicate check),
//! a `DeserializeSeed` call, and a value staged and moved. A derived [`Decode`] reads the map
//! itself: it matches each key to its field once, decodes the value in place, and knows its
//! duplicates by the fields already set.
//!
//! It handles the shapes the encoders of this crate and of Kubernetes produce (definite lengths,
//! string keys, no tags but the self-described prefix) and returns [`UseSerde`] on anything else:
//! unknown fields, tags, indefinite lengths, a missing required field, any error.
//! The input is then decoded again through serde, which gives the value or the error, with its
//! path, that `from_slice` gives. So on the shapes it takes it must accept exactly what the serde
//! path accepts and build the same value; it calls the same head, string and limit checks to do
//! so, and `tests/decode.rs` compares the two on valid, mutated and malformed input.

use super::{Check, Deserializer, short_string};
use crate::error::Result;
use crate::head::{
    Head, MAJOR_ARRAY, MAJOR_BYTES, MAJOR_MAP, MAJOR_NEGATIVE, MAJOR_SIMPLE, MAJOR_TEXT,
    MAJOR_UNSIGNED, check_float, check_int, float_value, read_head,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;

/// A type that conneg-cbor can decode without serde's visitors; derive it on a struct with
/// `#[derive(conneg_cbor::Decode)]` and read it with [`decode`](crate::decode).
///
/// The type must also implement serde's `Deserialize` (with the same serde attributes the derive
/// reads), which decodes whatever this does not take, and produces every error.
///
/// Implemented for `String`, `bool`, the integer types, `f64`, `Option`, `Box`, `Vec`,
/// `BTreeMap<String, _>` and `serde_json::Value`. A hand-written `decode` must read exactly one
/// item and return what the type's `Deserialize` gives for it, or [`UseSerde`]; the simplest,
/// for a type whose `Deserialize` is written by hand, hands the item to serde:
///
/// ```
/// use conneg_cbor::{Decode, Decoder, UseSerde};
///
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct Port(u16);
///
/// impl Decode for Port {
///     fn decode(d: &mut Decoder<'_, '_>) -> Result<Self, UseSerde> {
///         d.serde()
///     }
/// }
///
/// #[derive(conneg_cbor::Decode, serde::Deserialize, Debug, PartialEq)]
/// struct Service {
///     name: String,
///     port: Port,
///     #[serde(default)]
///     labels: Option<std::collections::BTreeMap<String, String>>,
/// }
///
/// let bytes = conneg_cbor::to_vec(&serde_json::json!({"name": "web", "port": 80})).unwrap();
/// let s: Service = conneg_cbor::decode(&bytes).unwrap();
/// assert_eq!(s, Service { name: "web".into(), port: Port(80), labels: None });
/// ```
pub trait Decode: Sized {
    /// Reads one item, or gives up with [`UseSerde`] (the serde path then decodes the input).
    fn decode(d: &mut Decoder<'_, '_>) -> std::result::Result<Self, UseSerde>;

    /// The value of a field of this type missing from its map, if it may be missing (serde's
    /// derive makes a missing `Option` field `None`).
    #[doc(hidden)]
    fn missing() -> Option<Self> {
        None
    }
}

/// "Decode this input through serde instead": what a [`Decode`] returns on anything it does not
/// take, errors included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UseSerde;

/// The input being decoded, as [`Decode`] implementations see it.
pub struct Decoder<'a, 'de> {
    de: &'a mut Deserializer<'de>,
}

type Step<T> = std::result::Result<T, UseSerde>;

impl<'de> Decoder<'_, 'de> {
    /// Decodes the next item through its serde `Deserialize`, with this crate's deserializer and
    /// its checks: the way to implement [`Decode`] for a type whose `Deserialize` is written by
    /// hand.
    pub fn serde<T: DeserializeOwned>(&mut self) -> Step<T> {
        decode_with(self, |de| T::deserialize(de))
    }

    /// The next head, if it is well formed.
    #[inline(always)]
    fn head(&mut self) -> Step<Head> {
        read_head(self.de.input, &mut self.de.pos).map_err(|_| UseSerde)
    }

    /// Enters a container whose head was read, as the serde path does: one level deeper (within
    /// `max_depth`), and with stack to spare.
    #[inline(always)]
    fn enter(&mut self) -> Step<()> {
        self.de.depth += 1;
        if self.de.depth > self.de.opts.max_depth || !crate::stack::has_room() {
            return Err(UseSerde);
        }
        Ok(())
    }

    /// Reads a definite-length map head: how many pairs follow. For derived impls.
    #[doc(hidden)]
    #[inline]
    pub fn map_begin(&mut self) -> Step<u64> {
        let h = self.head()?;
        if h.major != MAJOR_MAP || h.indefinite() || h.arg > self.de.opts.max_map_pairs {
            return Err(UseSerde);
        }
        self.enter()?;
        Ok(h.arg)
    }

    /// Leaves the map `map_begin` entered. For derived impls.
    #[doc(hidden)]
    #[inline]
    pub fn map_end(&mut self) {
        self.de.depth -= 1;
    }

    /// The bytes of the next map key, if it is a byte or text string of under 256 bytes (the
    /// derived impl matches them against its field names, which are UTF-8; Kubernetes writes
    /// strings as byte strings). For derived impls.
    #[doc(hidden)]
    #[inline(always)]
    pub fn key(&mut self) -> Step<&'de [u8]> {
        let input: &'de [u8] = self.de.input;
        let (s, n) = short_string(input, self.de.pos).ok_or(UseSerde)?;
        self.de.pos = s + n;
        Ok(&input[s..s + n])
    }

    /// The next item as text: a definite-length byte or text string that is valid UTF-8 (as the
    /// serde path takes a byte string where a string is expected, no tag 21-23 being in force).
    #[inline(always)]
    fn text(&mut self, check: Check) -> Step<&'de str> {
        let input: &'de [u8] = self.de.input;
        let (s, n) = match short_string(input, self.de.pos) {
            Some(sn) => sn,
            None => {
                let h = self.head()?;
                if !(h.major == MAJOR_TEXT || h.major == MAJOR_BYTES) || h.indefinite() {
                    return Err(UseSerde);
                }
                let s = self.de.pos;
                if h.arg > (input.len() - s) as u64 {
                    return Err(UseSerde);
                }
                (s, h.arg as usize)
            }
        };
        let t = self.de.text(s, s + n, check).ok_or(UseSerde)?;
        self.de.pos = s + n;
        Ok(t)
    }

    /// The next item as an integer within `i64`, as the profile requires.
    #[inline]
    fn int(&mut self) -> Step<i64> {
        let start = self.de.pos;
        let h = self.head()?;
        if h.major != MAJOR_UNSIGNED && h.major != MAJOR_NEGATIVE {
            return Err(UseSerde);
        }
        let v = check_int(&h, start).map_err(|_| UseSerde)?;
        i64::try_from(v).map_err(|_| UseSerde)
    }

    /// Whether the next item is `null` (consumed if so).
    #[inline(always)]
    fn null(&mut self) -> bool {
        let null = self.de.input.get(self.de.pos) == Some(&0xf6);
        if null {
            self.de.pos += 1;
        }
        null
    }
}

impl Deserializer<'_> {
    /// Decodes the whole input (one item, an optional self-described tag in front) into `T`:
    /// through [`Decode`] where it can, through serde for the value or error otherwise.
    pub(crate) fn decode_whole<T: Decode + DeserializeOwned>(&mut self) -> Result<T> {
        if let Ok(v) = crate::stack::guarded(|| self.decode_direct::<T>()) {
            return Ok(v);
        }
        self.restart();
        self.decode_root::<T>().and_then(|v| self.end().map(|()| v))
    }

    fn decode_direct<T: Decode>(&mut self) -> Step<T> {
        if self.input.starts_with(&crate::SELF_DESCRIBED_PREFIX) {
            // The tag is a level of nesting for what it wraps, as in the serde path.
            self.pos = crate::SELF_DESCRIBED_PREFIX.len();
            self.depth = 1;
        }
        let v = T::decode(&mut Decoder { de: self })?;
        if self.pos != self.input.len() {
            return Err(UseSerde);
        }
        Ok(v)
    }
}

impl Decode for String {
    #[inline]
    fn decode(d: &mut Decoder<'_, '_>) -> Step<Self> {
        d.text(Check::Alone).map(str::to_owned)
    }
}

impl Decode for bool {
    #[inline]
    fn decode(d: &mut Decoder<'_, '_>) -> Step<Self> {
        let b = match d.de.input.get(d.de.pos) {
            Some(0xf4) => false,
            Some(0xf5) => true,
            _ => return Err(UseSerde),
        };
        d.de.pos += 1;
        Ok(b)
    }
}

macro_rules! decode_int {
    ($($t:ty)*) => {$(
        impl Decode for $t {
            #[inline]
            fn decode(d: &mut Decoder<'_, '_>) -> Step<Self> {
                <$t>::try_from(d.int()?).map_err(|_| UseSerde)
            }
        }
    )*};
}
decode_int!(i8 i16 i32 i64 u8 u16 u32 u64 usize isize);

impl Decode for f64 {
    /// A float item; an integer (which serde's `f64` also takes) goes to the serde path.
    fn decode(d: &mut Decoder<'_, '_>) -> Step<Self> {
        let start = d.de.pos;
        let h = d.head()?;
        if h.major != MAJOR_SIMPLE || !(25..=27).contains(&h.info) {
            return Err(UseSerde);
        }
        check_float(float_value(&h), start).map_err(|_| UseSerde)
    }
}

impl<T: Decode> Decode for Option<T> {
    #[inline]
    fn decode(d: &mut Decoder<'_, '_>) -> Step<Self> {
        if d.null() {
            return Ok(None);
        }
        T::decode(d).map(Some)
    }

    fn missing() -> Option<Self> {
        Some(None)
    }
}

impl<T: Decode> Decode for Box<T> {
    fn decode(d: &mut Decoder<'_, '_>) -> Step<Self> {
        T::decode(d).map(Box::new)
    }
}

impl<T: Decode> Decode for Vec<T> {
    fn decode(d: &mut Decoder<'_, '_>) -> Step<Self> {
        let h = d.head()?;
        if h.major != MAJOR_ARRAY || h.indefinite() || h.arg > d.de.opts.max_array_len {
            return Err(UseSerde);
        }
        d.enter()?;
        // Pre-allocated as the serde path does: at most one element per byte of input not
        // promised to an enclosing array (`reserve`), and at most 1 MiB.
        let hinted = d.de.reserve(Some(h.arg), 1);
        let mut v = Vec::with_capacity(hinted.min((1 << 20) / std::mem::size_of::<T>().max(1)));
        for i in 0..h.arg {
            if i < hinted as u64 {
                d.de.reserved -= 1;
            }
            v.push(T::decode(d)?);
        }
        d.de.depth -= 1;
        Ok(v)
    }
}

impl<T: Decode> Decode for BTreeMap<String, T> {
    fn decode(d: &mut Decoder<'_, '_>) -> Step<Self> {
        let n = d.map_begin()?;
        let mut m = BTreeMap::new();
        for _ in 0..n {
            let k = d.text(Check::Run)?.to_owned();
            let v = T::decode(d)?;
            // A duplicate key: the serde path reports it.
            if m.insert(k, v).is_some() {
                return Err(UseSerde);
            }
        }
        d.map_end();
        Ok(m)
    }
}

impl Decode for Value {
    /// Through the same direct tree building as `value_from_slice`.
    fn decode(d: &mut Decoder<'_, '_>) -> Step<Self> {
        d.de.value().map_err(|_| UseSerde)
    }
}

/// A field's value through its `deserialize_with` function `f`, for derived impls.
#[doc(hidden)]
pub fn decode_with<'de, T>(
    d: &mut Decoder<'_, 'de>,
    f: impl FnOnce(&mut Deserializer<'de>) -> Result<T>,
) -> Step<T> {
    f(&mut *d.de).map_err(|_| UseSerde)
}
