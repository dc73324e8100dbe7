//! Codecs: how a negotiated media type turns values into bytes and back.
//!
//! [`Codec`] is an enum so the built-in formats are monomorphic: `Codec::Json` encodes with
//! `serde_json::to_writer` straight into the output buffer, `Codec::Cbor` with `conneg-cbor`'s
//! fast (unsorted) encoder, and decoding goes straight from the request bytes into `T`. Neither
//! path erases types. A [`CustomCodec`] (YAML, MessagePack, ...) plugs in as
//! `Codec::Custom(Arc<dyn CustomCodec>)`; it exchanges `serde_json::Value`s with conneg, which
//! costs one intermediate tree per message, a fair price for not forking the crate.
//!
//! Each built-in codec also has a stream form for watch: JSON's is newline-delimited objects
//! (`application/json;stream=watch`), CBOR's is a CBOR Sequence (`application/cbor-seq`,
//! RFC 8742) of self-described items.
//!
//! ```
//! use conneg::{Codec, FieldValidation};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Item { name: String }
//!
//! let mut out = Vec::new();
//! Codec::Json.encode(&Item { name: "a".into() }, &mut out).unwrap();
//! assert_eq!(out, br#"{"name":"a"}"#);
//!
//! let decoded = Codec::Json
//!     .decode::<Item>(br#"{"name":"a","extra":1}"#, FieldValidation::Warn)
//!     .unwrap();
//! assert_eq!(decoded.value, Item { name: "a".into() });
//! assert_eq!(decoded.warnings, [r#"unknown field "extra""#]);
//! ```

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use http::HeaderValue;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::cbor;
use crate::field_validation::FieldValidation;
use crate::headers::media_type::{
    APPLICATION_CBOR, APPLICATION_CBOR_SEQ, APPLICATION_JSON, APPLICATION_JSON_WATCH, MediaRange,
};
use crate::json_duplicates::json_duplicate_keys;
use crate::profile::Profile;

/// A boxed error from a [`CustomCodec`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A user-supplied codec for a media type conneg does not build in, added to a route with
/// [`NegotiateLayer::codec`](crate::NegotiateLayer::codec): negotiated like the built-in ones,
/// listed in 406 and 415 answers, and used for error bodies too. `examples/axum-notes/src/yaml.rs`
/// is a runnable YAML codec; MessagePack is the same shape.
///
/// ```
/// use conneg::{BoxError, CustomCodec};
///
/// /// `text/plain`: a JSON string value as its raw text.
/// struct PlainText;
///
/// impl CustomCodec for PlainText {
///     fn media_type(&self) -> &str { "text/plain" }
///     fn encode(&self, value: &serde_json::Value, out: &mut Vec<u8>) -> Result<(), BoxError> {
///         match value {
///             serde_json::Value::String(s) => out.extend_from_slice(s.as_bytes()),
///             other => out.extend_from_slice(other.to_string().as_bytes()),
///         }
///         Ok(())
///     }
///     fn decode(&self, body: &[u8]) -> Result<serde_json::Value, BoxError> {
///         Ok(serde_json::Value::String(std::str::from_utf8(body)?.to_owned()))
///     }
/// }
///
/// let codec = conneg::Codec::custom(PlainText);
/// let mut out = Vec::new();
/// codec.encode(&"hello", &mut out).unwrap();
/// assert_eq!(out, b"hello");
/// ```
pub trait CustomCodec: Send + Sync + 'static {
    /// The media type essence this codec produces and consumes, e.g. `application/yaml`.
    fn media_type(&self) -> &str;

    /// The stream (watch) media type, if the codec can frame a stream of values.
    fn stream_media_type(&self) -> Option<&str> {
        None
    }

    /// Encodes one value, appending to `out`.
    fn encode(&self, value: &serde_json::Value, out: &mut Vec<u8>) -> Result<(), BoxError>;

    /// Decodes one request body.
    fn decode(&self, body: &[u8]) -> Result<serde_json::Value, BoxError>;
}

/// A codec: one of the built-in formats or a user-supplied one.
#[derive(Clone)]
#[non_exhaustive]
pub enum Codec {
    /// `application/json` (stream form `application/json;stream=watch`).
    Json,
    /// `application/cbor` with the Kubernetes profile (stream form `application/cbor-seq`).
    Cbor,
    /// A user-supplied codec.
    Custom(Arc<dyn CustomCodec>),
}

impl Codec {
    /// Wraps a [`CustomCodec`].
    pub fn custom(codec: impl CustomCodec) -> Self {
        Codec::Custom(Arc::new(codec))
    }

    /// The media type essence, e.g. `application/json`.
    pub fn media_type(&self) -> &str {
        match self {
            Codec::Json => APPLICATION_JSON,
            Codec::Cbor => APPLICATION_CBOR,
            Codec::Custom(c) => c.media_type(),
        }
    }

    /// The `Content-Type` for a single encoded value.
    pub fn content_type(&self) -> HeaderValue {
        match self {
            Codec::Json => HeaderValue::from_static(APPLICATION_JSON),
            Codec::Cbor => HeaderValue::from_static(APPLICATION_CBOR),
            Codec::Custom(c) => HeaderValue::from_str(c.media_type())
                .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream")),
        }
    }

    /// The media type of the stream form (`application/json;stream=watch`,
    /// `application/cbor-seq`), if there is one. Note that Kubernetes itself labels a JSON watch
    /// stream plain `application/json`; both are accepted by client-go.
    pub fn stream_media_type(&self) -> Option<&str> {
        match self {
            Codec::Json => Some(APPLICATION_JSON_WATCH),
            Codec::Cbor => Some(APPLICATION_CBOR_SEQ),
            Codec::Custom(c) => c.stream_media_type(),
        }
    }

    /// The `Content-Type` of the stream form, if there is one.
    pub fn stream_content_type(&self) -> Option<HeaderValue> {
        match self {
            Codec::Json => Some(HeaderValue::from_static(APPLICATION_JSON_WATCH)),
            Codec::Cbor => Some(HeaderValue::from_static(APPLICATION_CBOR_SEQ)),
            Codec::Custom(c) => c
                .stream_media_type()
                .and_then(|m| HeaderValue::from_str(m).ok()),
        }
    }

    /// Whether the media type essence of `range` names this codec exactly (no wildcards).
    pub fn is(&self, range: &MediaRange<'_>) -> bool {
        range.essence_eq(self.media_type())
    }

    /// Whether the codec is the named built-in or has the same media type (ASCII
    /// case-insensitive).
    pub fn same_as(&self, other: &Codec) -> bool {
        match (self, other) {
            (Codec::Json, Codec::Json) | (Codec::Cbor, Codec::Cbor) => true,
            _ => self.media_type().eq_ignore_ascii_case(other.media_type()),
        }
    }

    /// Encodes `value`, appending to `out`. CBOR output is self-described (`d9d9f7`) and in
    /// fast (unsorted) map order, as Kubernetes serves responses.
    pub fn encode<T: Serialize + ?Sized>(
        &self,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        match self {
            Codec::Json => {
                serde_json::to_writer(&mut *out, value).map_err(|e| EncodeError(e.to_string()))
            }
            Codec::Cbor => cbor::encode_fast(out, value).map_err(EncodeError),
            Codec::Custom(c) => {
                let tree = serde_json::to_value(value).map_err(|e| EncodeError(e.to_string()))?;
                c.encode(&tree, out).map_err(|e| EncodeError(e.to_string()))
            }
        }
    }

    /// Encodes `value` as `profile` writes this codec: the same as [`encode`](Self::encode)
    /// except CBOR under the standard profile (text strings, no self-described tag).
    pub(crate) fn encode_as<T: Serialize + ?Sized>(
        &self,
        profile: Profile,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        match self {
            Codec::Cbor => cbor::encode_as(profile, out, value).map_err(EncodeError),
            _ => self.encode(value, out),
        }
    }

    /// [`encode_as`](Self::encode_as) of a value nested in a larger response: CBOR without the
    /// self-described tag.
    pub(crate) fn encode_nested_as<T: Serialize + ?Sized>(
        &self,
        profile: Profile,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        match self {
            Codec::Cbor => cbor::encode_nested(profile, out, value).map_err(EncodeError),
            _ => self.encode(value, out),
        }
    }

    /// Like [`encode`](Self::encode), indented with two spaces for JSON (the other codecs have
    /// no pretty form and encode normally).
    pub fn encode_pretty<T: Serialize + ?Sized>(
        &self,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        match self {
            Codec::Json => serde_json::to_writer_pretty(&mut *out, value)
                .map_err(|e| EncodeError(e.to_string())),
            _ => self.encode(value, out),
        }
    }

    /// Encodes `value` into a fresh buffer.
    pub fn to_bytes<T: Serialize + ?Sized>(&self, value: &T) -> Result<Bytes, EncodeError> {
        let mut out = Vec::with_capacity(128);
        self.encode(value, &mut out)?;
        Ok(Bytes::from(out))
    }

    /// Encodes one item of the stream form: JSON appends a newline after the compact object;
    /// CBOR appends one self-described data item (the CBOR Sequence needs no delimiter).
    pub fn encode_stream_item<T: Serialize + ?Sized>(
        &self,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        self.encode(value, out)?;
        if matches!(self, Codec::Json) {
            out.push(b'\n');
        }
        Ok(())
    }

    /// Decodes a request body into `T`.
    ///
    /// Unknown fields are handled as `validation` says: an error (`Strict`), a warning in
    /// [`Decoded::warnings`] (`Warn`), or nothing (`Ignore`). Malformed input, duplicate keys,
    /// invalid UTF-8 and (CBOR) NaN/Inf are always errors. A type with
    /// `#[serde(deny_unknown_fields)]` rejects unknown fields in every mode.
    pub fn decode<T: DeserializeOwned>(
        &self,
        body: &[u8],
        validation: FieldValidation,
    ) -> Result<Decoded<T>, DecodeError> {
        match self {
            Codec::Json => decode_json(body, validation),
            Codec::Cbor => cbor::decode(body, validation),
            Codec::Custom(c) => {
                let tree = c
                    .decode(body)
                    .map_err(|e| DecodeError::syntax(e.to_string()))?;
                decode_tree(tree, validation)
            }
        }
    }
}

impl fmt::Debug for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Codec::Json => f.write_str("Json"),
            Codec::Cbor => f.write_str("Cbor"),
            Codec::Custom(c) => write!(f, "Custom({})", c.media_type()),
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.media_type())
    }
}

impl PartialEq for Codec {
    fn eq(&self, other: &Self) -> bool {
        self.same_as(other)
    }
}

/// A decoded value and the warnings decoding produced (`FieldValidation::Warn`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded<T> {
    /// The value.
    pub value: T,
    /// Human-readable warnings in Kubernetes' wording, e.g. `unknown field "spec.x"`. Empty (and
    /// unallocated) in the common case.
    pub warnings: Vec<String>,
}

/// Encoding failed (a `Serialize` impl failed, a map key was not a string, a float was NaN...).
/// This is a server bug, reported as 500.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeError(pub(crate) String);

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EncodeError {}

/// What kind of problem a [`DecodeError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The bytes are not a valid document for the codec, or do not fit the target type.
    Invalid,
    /// Unknown fields under `FieldValidation::Strict`.
    Strict,
}

/// Decoding a request body failed; always the client's fault (400).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    kind: DecodeErrorKind,
    message: String,
}

impl DecodeError {
    /// Malformed input. Decoders quote the input they reject (serde's `invalid type: string
    /// "..."`), so the message is bounded as a `Status` message is.
    pub(crate) fn syntax(message: String) -> Self {
        DecodeError::new(DecodeErrorKind::Invalid, message)
    }

    pub(crate) fn strict(unknown: &[String]) -> Self {
        DecodeError::new(
            DecodeErrorKind::Strict,
            format!("strict decoding error: {}", unknown.join(", ")),
        )
    }

    fn new(kind: DecodeErrorKind, message: String) -> Self {
        DecodeError {
            kind,
            message: crate::status::bounded_message(message),
        }
    }

    /// The kind of error.
    pub fn kind(&self) -> DecodeErrorKind {
        self.kind
    }

    /// The message, e.g. `strict decoding error: unknown field "spec.x"`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DecodeError {}

fn decode_json<T: DeserializeOwned>(
    body: &[u8],
    validation: FieldValidation,
) -> Result<Decoded<T>, DecodeError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let result = match validation {
        FieldValidation::Ignore => T::deserialize(&mut de).map(|value| Decoded {
            value,
            warnings: Vec::new(),
        }),
        FieldValidation::Warn | FieldValidation::Strict => with_unknown_fields(&mut de),
    };
    let mut decoded = match result {
        Ok(decoded) => decoded,
        Err(e) => return decode_json_with_duplicates(body, validation, e),
    };
    de.end().map_err(|e| DecodeError::syntax(e.to_string()))?;
    if validation != FieldValidation::Ignore {
        // Typed struct fields already fail on duplicates (see the slow path); maps (labels,
        // `Value`s) keep the last one silently, so Warn and Strict scan for them as Kubernetes'
        // strict JSON decoder does.
        decoded.warnings.splice(0..0, json_duplicate_keys(body));
    }
    finish(decoded, validation)
}

/// The slow path of [`decode_json`] after a failed decode: a typed struct field given twice
/// fails serde's derived decoder, where Kubernetes' lax JSON decoder keeps the last value and
/// its strict one reports `duplicate field "name"`. So when the body has duplicate keys, decode
/// it again through a `serde_json::Value` (where the last value wins) and report them as
/// Kubernetes does: a strict error, a warning each, or nothing (`Ignore`). Without duplicates,
/// the first error stands.
#[cold]
fn decode_json_with_duplicates<T: DeserializeOwned>(
    body: &[u8],
    validation: FieldValidation,
    first_error: serde_json::Error,
) -> Result<Decoded<T>, DecodeError> {
    let duplicates = json_duplicate_keys(body);
    if duplicates.is_empty() {
        return Err(DecodeError::syntax(first_error.to_string()));
    }
    let tree: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| DecodeError::syntax(e.to_string()))?;
    // Unknown fields are collected as warnings here; `finish` turns them into the strict error.
    let lax = match validation {
        FieldValidation::Ignore => FieldValidation::Ignore,
        FieldValidation::Warn | FieldValidation::Strict => FieldValidation::Warn,
    };
    let mut decoded = decode_tree::<T>(tree, lax)?;
    if validation != FieldValidation::Ignore {
        decoded.warnings.splice(0..0, duplicates);
    }
    finish(decoded, validation)
}

fn decode_tree<T: DeserializeOwned>(
    tree: serde_json::Value,
    validation: FieldValidation,
) -> Result<Decoded<T>, DecodeError> {
    let decoded = match validation {
        FieldValidation::Ignore => T::deserialize(tree).map(|value| Decoded {
            value,
            warnings: Vec::new(),
        }),
        FieldValidation::Warn | FieldValidation::Strict => with_unknown_fields(tree),
    };
    finish(
        decoded.map_err(|e| DecodeError::syntax(e.to_string()))?,
        validation,
    )
}

fn finish<T>(decoded: Decoded<T>, validation: FieldValidation) -> Result<Decoded<T>, DecodeError> {
    if validation == FieldValidation::Strict && !decoded.warnings.is_empty() {
        return Err(DecodeError::strict(&decoded.warnings));
    }
    Ok(decoded)
}

/// Deserializes while recording every field the target type ignored.
fn with_unknown_fields<'de, D, T>(de: D) -> Result<Decoded<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    let mut warnings = Vec::new();
    let value = serde_ignored::deserialize(de, |path| {
        let mut text = String::new();
        write_path(&path, &mut text);
        warnings.push(format!("unknown field \"{text}\""));
    })?;
    Ok(Decoded { value, warnings })
}

/// Formats a path the way Kubernetes does: `spec.containers[0].name`.
fn write_path(path: &serde_ignored::Path<'_>, out: &mut String) {
    use serde_ignored::Path;
    match path {
        Path::Root => {}
        Path::Seq { parent, index } => {
            write_path(parent, out);
            out.push('[');
            out.push_str(&index.to_string());
            out.push(']');
        }
        Path::Map { parent, key } => {
            write_path(parent, out);
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(key);
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => write_path(parent, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Serialize, Debug, PartialEq)]
    struct Spec {
        size: u32,
    }

    #[derive(Deserialize, Serialize, Debug, PartialEq)]
    struct Obj {
        name: String,
        spec: Spec,
        #[serde(default)]
        items: Vec<Spec>,
    }

    const BODY: &[u8] =
        br#"{"name":"a","spec":{"size":1,"colour":"red"},"items":[{"size":2,"x":0}],"top":true}"#;

    #[test]
    fn json_field_validation_modes() {
        let d = Codec::Json
            .decode::<Obj>(BODY, FieldValidation::Ignore)
            .unwrap();
        assert!(d.warnings.is_empty());
        assert_eq!(d.value.spec.size, 1);

        let d = Codec::Json
            .decode::<Obj>(BODY, FieldValidation::Warn)
            .unwrap();
        assert_eq!(
            d.warnings,
            [
                r#"unknown field "spec.colour""#,
                r#"unknown field "items[0].x""#,
                r#"unknown field "top""#
            ]
        );

        let e = Codec::Json
            .decode::<Obj>(BODY, FieldValidation::Strict)
            .unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::Strict);
        assert_eq!(
            e.message(),
            r#"strict decoding error: unknown field "spec.colour", unknown field "items[0].x", unknown field "top""#
        );
    }

    /// serde quotes the string it rejects; a 3 MB one must not make a 3 MB error, in either
    /// codec, nor a 3 MB strict-decoding message.
    #[test]
    fn decode_errors_quoting_huge_input_are_bounded() {
        let huge = "s".repeat(3 << 20);
        let bad = serde_json::json!({"name": "a", "spec": {"size": huge}});
        let json = Codec::Json.to_bytes(&bad).unwrap();
        let cbor = Codec::Cbor.to_bytes(&bad).unwrap();
        let unknown = serde_json::to_vec(&serde_json::json!({
            "name": "a", "spec": {"size": 1}, huge.as_str(): 1
        }))
        .unwrap();
        for (what, codec, body, validation) in [
            ("json", Codec::Json, &json[..], FieldValidation::Ignore),
            ("cbor", Codec::Cbor, &cbor[..], FieldValidation::Ignore),
            ("strict", Codec::Json, &unknown[..], FieldValidation::Strict),
        ] {
            let e = codec.decode::<Obj>(body, validation).unwrap_err();
            assert!(
                e.message().len() <= crate::Status::MAX_MESSAGE_BYTES + 40,
                "{what}: {} bytes",
                e.message().len()
            );
            assert!(e.message().contains(" bytes omitted)..."), "{what}");
        }
    }

    #[test]
    fn json_strict_reports_duplicate_map_keys() {
        let body = br#"{"a":{"x":1,"x":2},"b":[{"y":1,"y":1}]}"#;
        let ok = Codec::Json
            .decode::<serde_json::Value>(body, FieldValidation::Ignore)
            .unwrap();
        assert_eq!(ok.value["a"]["x"], 2);
        let e = Codec::Json
            .decode::<serde_json::Value>(body, FieldValidation::Strict)
            .unwrap_err();
        assert_eq!(
            e.message(),
            r#"strict decoding error: duplicate field "a.x", duplicate field "b[0].y""#
        );
        let warned = Codec::Json
            .decode::<serde_json::Value>(body, FieldValidation::Warn)
            .unwrap();
        assert_eq!(warned.value, ok.value);
        assert_eq!(
            warned.warnings,
            [r#"duplicate field "a.x""#, r#"duplicate field "b[0].y""#]
        );
        // An escaped spelling of the same key is the same key.
        let escaped = Codec::Json
            .decode::<serde_json::Value>(br#"{"l":{"ab":1,"a\u0062":2}}"#, FieldValidation::Warn)
            .unwrap();
        assert_eq!(escaped.warnings, [r#"duplicate field "l.ab""#]);
    }

    #[test]
    fn json_duplicate_struct_fields_follow_field_validation() {
        // Kubernetes' lax JSON decoder keeps the last value; its strict one names the field.
        let body = br#"{"name":"a","spec":{"size":1,"size":2},"name":"b","x":0}"#;
        let d = Codec::Json
            .decode::<Obj>(body, FieldValidation::Ignore)
            .unwrap();
        assert_eq!((d.value.name.as_str(), d.value.spec.size), ("b", 2));
        assert!(d.warnings.is_empty());
        let d = Codec::Json
            .decode::<Obj>(body, FieldValidation::Warn)
            .unwrap();
        assert_eq!((d.value.name.as_str(), d.value.spec.size), ("b", 2));
        assert_eq!(
            d.warnings,
            [
                r#"duplicate field "spec.size""#,
                r#"duplicate field "name""#,
                r#"unknown field "x""#
            ]
        );
        let e = Codec::Json
            .decode::<Obj>(body, FieldValidation::Strict)
            .unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::Strict);
        assert_eq!(
            e.message(),
            r#"strict decoding error: duplicate field "spec.size", duplicate field "name", unknown field "x""#
        );
        // A body that is wrong for another reason keeps that error.
        let e = Codec::Json
            .decode::<Obj>(
                br#"{"name":1,"name":2,"spec":{"size":1}}"#,
                FieldValidation::Warn,
            )
            .unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::Invalid);
    }

    #[test]
    fn a_map_with_many_keys_is_checked_for_duplicates_in_linear_time() {
        // 50,000 keys: a list of seen keys (as this scan used to keep) makes that 1.25 billion
        // comparisons, minutes in a debug build; the hash set keeps it well under a second.
        let mut body = String::from(r#"{"m":{"#);
        for i in 0..50_000 {
            body.push_str(&format!(r#""key-{i}":{i},"#));
        }
        body.push_str(r#""key-7":0}}"#);
        let d = Codec::Json
            .decode::<serde_json::Value>(body.as_bytes(), FieldValidation::Warn)
            .unwrap();
        assert_eq!(d.warnings, [r#"duplicate field "m.key-7""#]);
        assert_eq!(d.value["m"]["key-7"], 0);
    }

    #[test]
    fn json_rejects_bad_input() {
        for bad in [
            &b"{\"name\":\"\xff\",\"spec\":{\"size\":1}}"[..], // bad UTF-8
            br#"{"name":"a","spec":{"size":NaN}}"#,            // NaN is not JSON
            br#"{"name":"a","spec":{"size":1}} trailing"#,
            b"",
        ] {
            let e = Codec::Json
                .decode::<Obj>(bad, FieldValidation::Ignore)
                .unwrap_err();
            assert_eq!(
                e.kind(),
                DecodeErrorKind::Invalid,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn json_stream_items_are_newline_delimited() {
        let mut out = Vec::new();
        Codec::Json
            .encode_stream_item(&Spec { size: 1 }, &mut out)
            .unwrap();
        Codec::Json
            .encode_stream_item(&Spec { size: 2 }, &mut out)
            .unwrap();
        assert_eq!(out, b"{\"size\":1}\n{\"size\":2}\n");
        assert_eq!(
            Codec::Json.stream_media_type(),
            Some("application/json;stream=watch")
        );
        assert_eq!(
            Codec::Cbor.stream_media_type(),
            Some("application/cbor-seq")
        );
    }

    #[test]
    fn pretty_json_is_indented() {
        let mut out = Vec::new();
        Codec::Json
            .encode_pretty(&Spec { size: 1 }, &mut out)
            .unwrap();
        assert_eq!(out, b"{\n  \"size\": 1\n}");
    }
}
