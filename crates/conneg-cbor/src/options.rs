//! Encoder and decoder configuration.

use crate::de::Deserializer;
use crate::error::{Error, Result};
use crate::ser::Serializer;
use serde::Serialize;
use serde::de::{Deserialize, DeserializeOwned};

/// How strings and map keys are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StringEncoding {
    /// As CBOR byte strings (major type 2), exactly like Kubernetes does.
    #[default]
    Bytes,
    /// As CBOR text strings (major type 3).
    Text,
}

/// Encoding configuration. The default is [`EncodeOptions::deterministic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodeOptions {
    pub(crate) sort: bool,
    pub(crate) self_described: bool,
    pub(crate) strings: StringEncoding,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        Self::deterministic()
    }
}

impl EncodeOptions {
    /// Map entries sorted bytewise by encoded key (RFC 8949 §4.2.1): for storage, hashing, comparing.
    pub fn deterministic() -> Self {
        EncodeOptions {
            sort: true,
            self_described: true,
            strings: StringEncoding::Bytes,
        }
    }

    /// Map entries in the order the value produces them: for responses.
    pub fn fast() -> Self {
        EncodeOptions {
            sort: false,
            ..Self::deterministic()
        }
    }

    /// Whether the top-level item gets the self-described CBOR prefix `d9 d9 f7` (default true).
    pub fn self_described(mut self, yes: bool) -> Self {
        self.self_described = yes;
        self
    }

    /// How strings and map keys are written (default [`StringEncoding::Bytes`]).
    pub fn string_encoding(mut self, enc: StringEncoding) -> Self {
        self.strings = enc;
        self
    }

    /// Encodes `value` into a new buffer.
    pub fn to_vec<T: ?Sized + Serialize>(&self, value: &T) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(128);
        self.encode_into(&mut out, value)?;
        Ok(out)
    }

    /// Encodes `value` and writes it to `w`.
    pub fn to_writer<W: std::io::Write, T: ?Sized + Serialize>(
        &self,
        mut w: W,
        value: &T,
    ) -> Result<()> {
        let buf = self.to_vec(value)?;
        w.write_all(&buf).map_err(Error::io)
    }

    /// Appends the encoding of `value` to `out`; on error `out` is restored to its previous length.
    pub fn encode_into<T: ?Sized + Serialize>(&self, out: &mut Vec<u8>, value: &T) -> Result<()> {
        let start = out.len();
        if self.self_described {
            out.extend_from_slice(&crate::SELF_DESCRIBED_PREFIX);
        }
        let r = {
            let mut ser = Serializer::with_options(out, *self);
            let r = value.serialize(&mut ser);
            ser.recycle();
            r
        };
        if r.is_err() {
            out.truncate(start);
        }
        r
    }
}

/// What to do with a map key that names no field of the target struct.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnknownFields {
    /// It is an [`ErrorKind::UnknownField`](crate::ErrorKind::UnknownField) error (Kubernetes' strict decoding).
    #[default]
    Deny,
    /// It is skipped (after checking it is valid).
    Ignore,
}

/// Decoding configuration. Defaults are Kubernetes' values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeOptions {
    pub(crate) max_depth: usize,
    pub(crate) max_array_len: u64,
    pub(crate) max_map_pairs: u64,
    pub(crate) unknown_fields: UnknownFields,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_depth: 10_000,
            max_array_len: 2_147_483_647,
            max_map_pairs: 2_097_152,
            unknown_fields: UnknownFields::Deny,
        }
    }
}

impl DecodeOptions {
    /// Same as `DecodeOptions::default()`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Maximum nesting depth; arrays, maps and tags each count as a level (default 10000).
    pub fn max_depth(mut self, n: usize) -> Self {
        self.max_depth = n;
        self
    }

    /// Maximum number of array elements (default 2147483647).
    pub fn max_array_len(mut self, n: u64) -> Self {
        self.max_array_len = n;
        self
    }

    /// Maximum number of map pairs (default 2097152).
    pub fn max_map_pairs(mut self, n: u64) -> Self {
        self.max_map_pairs = n;
        self
    }

    /// What to do with unknown struct fields (default [`UnknownFields::Deny`]).
    pub fn unknown_fields(mut self, u: UnknownFields) -> Self {
        self.unknown_fields = u;
        self
    }

    /// Decodes exactly one item (an optional `d9 d9 f7` prefix included) from `bytes`.
    ///
    /// Into a `serde_json::Value`, [`value_from_slice`](Self::value_from_slice) is faster, with
    /// the same result and errors.
    pub fn from_slice<'de, T: Deserialize<'de>>(&self, bytes: &'de [u8]) -> Result<T> {
        let mut de = Deserializer::with_options(bytes, *self);
        let r = de.decode_root().and_then(|v| de.end().map(|()| v));
        de.recycle();
        r
    }

    /// Decodes exactly one item into `T`: the same value, or the same error, as `from_slice`,
    /// through `T`'s [`Decode`](crate::Decode) where the input allows (see
    /// [`decode`](crate::decode())).
    pub fn decode<T: crate::Decode + DeserializeOwned>(&self, bytes: &[u8]) -> Result<T> {
        let mut de = Deserializer::with_options(bytes, *self);
        let r = de.decode_whole();
        de.recycle();
        r
    }

    /// Decodes exactly one item into a [`serde_json::Value`]: the same value, or the same error,
    /// as `from_slice::<Value>`, built without serde's visitor (faster; see
    /// [`value_from_slice`](crate::value_from_slice)).
    pub fn value_from_slice(&self, bytes: &[u8]) -> Result<serde_json::Value> {
        let mut de = Deserializer::with_options(bytes, *self);
        let r = de.value_root();
        de.recycle();
        r
    }

    /// Decodes laxly, returning every unknown field as an [`ErrorKind::UnknownField`](crate::ErrorKind::UnknownField) error that
    /// names its path (the way a server implements `fieldValidation=Warn`).
    pub fn from_slice_with_warnings<'de, T: Deserialize<'de>>(
        &self,
        bytes: &'de [u8],
    ) -> Result<(T, Vec<Error>)> {
        let mut de = Deserializer::with_options(bytes, *self);
        de.collect_warnings();
        let r = de
            .decode_root()
            .and_then(|v| de.end().map(|()| (v, de.take_warnings())));
        de.recycle();
        r
    }

    /// Reads `r` to its end and decodes exactly one item from it.
    pub fn from_reader<R: std::io::Read, T: DeserializeOwned>(&self, mut r: R) -> Result<T> {
        let mut buf = Vec::new();
        r.read_to_end(&mut buf).map_err(Error::io)?;
        self.from_slice(&buf)
    }
}
